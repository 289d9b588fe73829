//! Shell words as airlock sees them: the characters a word will have after quote removal, each
//! marked quoted or not, or `Dynamic` when its value is only known at run time.
//!
//! Keeping the quoting per character is what lets brace expansion and globbing (which only act on
//! unquoted characters) be done the way bash does them, so `cat {/etc/shadow,x}` is read as two
//! paths and `echo '*'` as a literal star.

use std::collections::HashMap;

/// One argument of a simple command, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// Known before the command runs. `glob` is true when unquoted `*`, `?` or `[` remain, so bash
    /// may replace the word with matching file names.
    Lit {
        value: String,
        glob: bool,
        /// Any character of the word was quoted or backslash-escaped.
        quoted: bool,
    },
    /// Depends on a variable, a substitution or arithmetic: its value is unknown to airlock.
    Dynamic { text: String, vars: Vec<String> },
}

impl Word {
    pub fn lit(value: &str) -> Word {
        Word::Lit {
            value: value.to_string(),
            glob: false,
            quoted: false,
        }
    }

    pub fn as_lit(&self) -> Option<&str> {
        match self {
            Word::Lit { value, .. } => Some(value),
            Word::Dynamic { .. } => None,
        }
    }

    /// The word as it would be shown to a human: its value, or its source text if dynamic.
    pub fn display(&self) -> &str {
        match self {
            Word::Lit { value, .. } => value,
            Word::Dynamic { text, .. } => text,
        }
    }

    pub fn is_dynamic(&self) -> bool {
        matches!(self, Word::Dynamic { .. })
    }
}

/// A character after quote removal, and whether quoting protected it from expansion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QChar {
    pub c: char,
    pub quoted: bool,
    /// From a `for` loop's pattern (`for f in *.rs`): stays a glob or brace character inside
    /// double quotes too, because the loop's value is one of the names the pattern matches.
    pub pattern: bool,
}

/// A word while it is being evaluated: characters, or unknown.
#[derive(Debug, Clone, Default)]
pub struct Pieces {
    pub chars: Vec<QChar>,
    pub dynamic: bool,
    pub vars: Vec<String>,
    pub ansi_c: bool,
    /// Quotes appeared, even ones that produced no characters (`r""m`).
    pub had_quotes: bool,
    /// Some characters came from a variable's value.
    pub from_var: bool,
}

impl Pieces {
    pub fn push_str(&mut self, s: &str, quoted: bool) {
        self.had_quotes |= quoted;
        self.chars.extend(s.chars().map(|c| QChar {
            c,
            quoted,
            pattern: false,
        }));
    }

    pub fn append(&mut self, other: Pieces) {
        self.chars.extend(other.chars);
        self.dynamic |= other.dynamic;
        self.vars.extend(other.vars);
        self.ansi_c |= other.ansi_c;
        self.had_quotes |= other.had_quotes;
        self.from_var |= other.from_var;
    }

    pub fn any_quoted(&self) -> bool {
        self.had_quotes || self.chars.iter().any(|q| q.quoted)
    }

    /// Brace-expands (bash order: before globbing) and turns the result into words.
    pub fn into_words(self, source: &str) -> Vec<Word> {
        if self.dynamic {
            return vec![Word::Dynamic {
                text: source.to_string(),
                vars: self.vars,
            }];
        }
        let quoted = self.any_quoted();
        let Some(expanded) = brace_expand(&self.chars, 0) else {
            return vec![Word::Dynamic {
                text: source.to_string(),
                vars: self.vars,
            }];
        };
        let mut words = Vec::new();
        for chars in expanded {
            // Word splitting: unquoted blanks can only come from an expansion's value.
            let fields = chars.split(|q| !q.quoted && matches!(q.c, ' ' | '\t' | '\n'));
            let split = chars
                .iter()
                .any(|q| !q.quoted && matches!(q.c, ' ' | '\t' | '\n'));
            for field in fields {
                if split && field.is_empty() {
                    continue;
                }
                words.push(Word::Lit {
                    glob: field
                        .iter()
                        .any(|q| !q.quoted && matches!(q.c, '*' | '?' | '[')),
                    value: field.iter().map(|q| q.c).collect(),
                    quoted,
                });
            }
        }
        words
    }
}

/// Most words a single brace expression may turn into before airlock stops expanding and treats
/// the word as unknown.
const MAX_BRACE_WORDS: usize = 256;

/// Bash brace expansion over unquoted `{a,b}` groups (nested groups included). Sequence
/// expressions (`{1..3}`) are left as they are; the parser reports them as their own node.
pub fn brace_expand(chars: &[QChar], depth: usize) -> Option<Vec<Vec<QChar>>> {
    if depth > 64 {
        return None;
    }
    // Find the first unquoted `{` that has a matching `}` with a top-level unquoted comma.
    for open in 0..chars.len() {
        if chars[open].quoted || chars[open].c != '{' {
            continue;
        }
        let mut level = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, q) in chars.iter().enumerate().skip(open) {
            if q.quoted {
                continue;
            }
            match q.c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        close = Some(i);
                        break;
                    }
                }
                ',' if level == 1 => commas.push(i),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if commas.is_empty() {
            continue;
        }
        let prefix = &chars[..open];
        let suffix = &chars[close + 1..];
        let mut bounds = vec![open];
        bounds.extend(&commas);
        bounds.push(close);
        let mut out = Vec::new();
        for pair in bounds.windows(2) {
            let alt = &chars[pair[0] + 1..pair[1]];
            let mut joined = prefix.to_vec();
            joined.extend_from_slice(alt);
            joined.extend_from_slice(suffix);
            for expanded in brace_expand(&joined, depth + 1)? {
                if out.contains(&expanded) {
                    continue;
                }
                out.push(expanded);
                // Too many words to check one by one: the word is unknown, never truncated.
                if out.len() > MAX_BRACE_WORDS {
                    return None;
                }
            }
        }
        return Some(out);
    }
    Some(vec![chars.to_vec()])
}

/// Unescapes the body of an ANSI-C string (`$'...'` without the `$'` and `'`), as bash does.
pub fn decode_ansi_c(body: &str) -> String {
    let mut out = String::new();
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' => {
                let digits = take_digits(&mut it, 2, 16);
                push_code(&mut out, digits, "\\x");
            }
            'u' => {
                let digits = take_digits(&mut it, 4, 16);
                push_code(&mut out, digits, "\\u");
            }
            'U' => {
                let digits = take_digits(&mut it, 8, 16);
                push_code(&mut out, digits, "\\U");
            }
            'c' => {
                if let Some(ctl) = it.next() {
                    out.push(char::from((ctl as u32 as u8) & 0x1f));
                }
            }
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value & 0xff).unwrap_or('\u{fffd}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

fn take_digits(
    it: &mut std::iter::Peekable<std::str::Chars<'_>>,
    max: usize,
    radix: u32,
) -> String {
    let mut digits = String::new();
    while digits.len() < max {
        match it.peek() {
            Some(d) if d.is_digit(radix) => {
                digits.push(*d);
                it.next();
            }
            _ => break,
        }
    }
    digits
}

fn push_code(out: &mut String, digits: String, escape: &str) {
    match u32::from_str_radix(&digits, 16)
        .ok()
        .and_then(char::from_u32)
    {
        Some(c) if !digits.is_empty() => out.push(c),
        _ => {
            out.push_str(escape);
            out.push_str(&digits);
        }
    }
}

/// Removes backslash escapes from an unquoted word: `\x` becomes a quoted `x`.
pub fn unquoted_word(text: &str) -> Pieces {
    let mut pieces = Pieces::default();
    let mut it = text.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('\n') => {}
                Some(e) => pieces.push_str(e.encode_utf8(&mut [0; 4]), true),
                None => pieces.push_str("\\", true),
            }
        } else {
            pieces.chars.push(QChar {
                c,
                quoted: false,
                pattern: false,
            });
        }
    }
    pieces
}

/// Removes the escapes bash honours inside double quotes: `\$`, `` \` ``, `\"`, `\\`, `\newline`.
pub fn double_quoted_content(text: &str) -> String {
    let mut out = String::new();
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(e) = it.next() {
                        out.push(e);
                    }
                }
                Some('\n') => {
                    it.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The variables a script assigns, in the order airlock reads them. A variable assigned once, at
/// the top level, with a literal value, is known; anything else is unknown.
#[derive(Debug, Clone, Default)]
pub struct ScriptVars {
    vars: HashMap<String, Option<String>>,
    /// `for` loop variables whose values are the names a literal list or pattern gives, as the
    /// pattern that stands for all of them (see [`ScriptVars::assign_loop`]).
    loops: HashMap<String, Vec<QChar>>,
}

impl ScriptVars {
    /// `for name in LIST`: every value is one of the words LIST expands to, which `pattern`
    /// (its glob and brace characters active) expands to as well.
    pub fn assign_loop(&mut self, name: &str, pattern: Option<Vec<QChar>>) {
        self.assign(name, None);
        if let Some(p) = pattern {
            self.loops.insert(name.to_string(), p);
        }
    }

    /// The pattern a loop variable's values match, while nothing else assigned it.
    pub fn loop_pattern(&self, name: &str) -> Option<&[QChar]> {
        self.loops.get(name).map(Vec::as_slice)
    }

    pub fn assign(&mut self, name: &str, value: Option<String>) {
        use std::collections::hash_map::Entry;
        self.loops.remove(name);
        match self.vars.entry(name.to_string()) {
            Entry::Vacant(v) => {
                v.insert(value);
            }
            Entry::Occupied(mut o) => {
                o.insert(None);
            }
        }
    }

    /// `Some(Some(v))`: assigned, known. `Some(None)`: assigned, unknown. `None`: not assigned by
    /// the script, so it comes from the environment.
    pub fn get(&self, name: &str) -> Option<Option<&str>> {
        self.vars.get(name).map(|v| v.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        let mut p = unquoted_word(s);
        p.dynamic = false;
        p.into_words(s)
            .iter()
            .map(|w| w.display().to_string())
            .collect()
    }

    #[test]
    fn brace_expansion_splits_alternatives_like_bash() {
        assert_eq!(words("{/etc/shadow,x}"), vec!["/etc/shadow", "x"]);
        assert_eq!(words("src/{a,b}.rs"), vec!["src/a.rs", "src/b.rs"]);
        assert_eq!(words("{a,{b,c}}d"), vec!["ad", "bd", "cd"]);
        assert_eq!(words("{a}"), vec!["{a}"]);
        assert_eq!(words("\\{a,b}"), vec!["{a,b}"]);
    }

    #[test]
    fn ansi_c_strings_decode_hex_octal_and_unicode_escapes() {
        assert_eq!(decode_ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072m"), "rm");
        assert_eq!(decode_ansi_c(r"a\tb\'"), "a\tb'");
    }

    #[test]
    fn globs_only_count_when_unquoted() {
        let mut star = Pieces::default();
        star.push_str("*", true);
        assert_eq!(
            star.into_words("'*'"),
            vec![Word::Lit {
                value: "*".into(),
                glob: false,
                quoted: true
            }]
        );
        let w = unquoted_word("*.rs").into_words("*.rs");
        assert!(matches!(&w[0], Word::Lit { glob: true, .. }));
    }
}
