//! Making hidden characters visible in everything a person reads: the cockpit, `approvals list`,
//! `audit show`, error messages that quote a path or a command. A terminal obeys control
//! characters (ESC sequences can redraw what is already on screen), reorders text around bidi
//! controls and shows nothing for zero-width characters, so any text that came from a model, a
//! file name or the state database goes through [`visible`] (or [`visible_line`]) before it is
//! printed. This module imports nothing of the crate: the UI and the CLI both use it.

/// Shows what a terminal would hide or obey: tabs, C0 and C1 control characters, DEL, and
/// invisible, bidi and line-separating Unicode. Newlines are kept (the caller lays out lines).
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_visible(&mut out, c, true);
    }
    out
}

/// Like [`visible`], but a newline is shown as `⏎` too: for text that must stay on one line
/// (a listing, a title, a path).
pub fn visible_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_visible(&mut out, c, false);
    }
    out
}

/// A line of program output as a person reads it: a tab moves to the next multiple of 8
/// columns, as a terminal would show it, and everything else hidden is made visible as in
/// [`visible_line`]. Fast path: a line with nothing hidden is returned as it is.
pub fn visible_output(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.chars().any(is_hidden) {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = 8 - column % 8;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            let before = out.len();
            push_visible(&mut out, c, false);
            column += out[before..].chars().count();
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `c` would be hidden, obeyed or reordered by a terminal.
pub fn is_hidden(c: char) -> bool {
    c == '\t' || (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c) || invisible_unicode(c)
}

fn invisible_unicode(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

fn push_visible(out: &mut String, c: char, keep_newline: bool) {
    match c {
        '\n' if keep_newline => out.push('\n'),
        '\n' => out.push('⏎'),
        '\t' => out.push('⇥'),
        // The C0 controls have their own visible pictures: U+2400 + code.
        c if (c as u32) < 0x20 => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('�')),
        '\u{7f}' => out.push('␡'),
        c if is_hidden(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lays_tabs_out_as_a_terminal_would_and_shows_what_else_hides() {
        assert_eq!(visible_output("a\tb"), "a       b");
        assert_eq!(visible_output("abcdefgh\tx"), "abcdefgh        x");
        assert_eq!(visible_output("plain"), "plain");
        let shown = visible_output("x\u{1b}[2Jy\u{200b}z");
        assert!(!shown.chars().any(is_hidden), "{shown}");
    }

    #[test]
    fn escape_sequences_cannot_reach_the_terminal() {
        assert_eq!(visible("cargo test\u{1b}[2K\r"), "cargo test␛[2K␍");
        assert!(!visible("\u{1b}]0;title\u{7}").contains('\u{1b}'));
    }

    #[test]
    fn c1_controls_are_shown_by_code() {
        assert_eq!(visible("a\u{9b}2Jb"), "a<U+009B>2Jb");
        assert_eq!(visible("next\u{85}line"), "next<U+0085>line");
    }

    #[test]
    fn bidi_and_zero_width_characters_are_shown_by_code() {
        assert_eq!(
            visible("ls\u{200b} \u{202e}fdp.exe"),
            "ls<U+200B> <U+202E>fdp.exe"
        );
        assert_eq!(visible("a\u{2066}b\u{2069}"), "a<U+2066>b<U+2069>");
        assert_eq!(visible("tag\u{e0041}"), "tag<U+E0041>");
        assert_eq!(visible("x\u{2028}y\u{2029}"), "x<U+2028>y<U+2029>");
    }

    #[test]
    fn tabs_and_delete_have_pictures_and_newlines_stay_unless_one_line_is_asked_for() {
        assert_eq!(visible("a\tb\u{7f}"), "a⇥b␡");
        assert_eq!(visible("one\ntwo"), "one\ntwo");
        assert_eq!(visible_line("one\ntwo"), "one⏎two");
    }

    #[test]
    fn ordinary_text_and_other_scripts_are_left_alone() {
        let text = "naïve café — 東京 🚀 ok";
        assert_eq!(visible(text), text);
    }
}
