//! Paths written as literals inside code airlock does not otherwise analyse: an interpreter's
//! inline program (`python3 -c 'open("/home/me/.ssh/id_rsa")'`, `perl -e`, `node -e`,
//! `ruby -e`) or an awk program that reads files itself (`getline < "…"`).
//!
//! Such code asks anyway, but a person approving a one-liner may not spot the key file in it,
//! and a private key or credential store must be refused however it is read. Every literal that
//! looks like a path is judged as a read, so a credential named anywhere in the code denies the
//! call; other paths add a reason a person can read. This cannot find a path the code builds at
//! run time (`"~/.s" + "sh"`): that code still asks, as all inline code does.

use crate::facts::shell::Word;

/// Characters that end a path inside code: quotes, whitespace, and the punctuation code puts
/// around a string or an argument.
fn ends_path(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\''
                | '`'
                | ';'
                | ','
                | ')'
                | '('
                | '<'
                | '>'
                | '|'
                | '&'
                | '{'
                | '}'
                | '['
                | ']'
                | '\\'
        )
}

/// Every literal in `code` that starts like a path (`/`, `~/`, `./`, `../`, `$HOME/`,
/// `${HOME}/`), as it would be opened.
pub(super) fn literal_paths(code: &str) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let starts_token = i == 0 || ends_path(chars[i - 1].1) || chars[i - 1].1 == '=';
        let rest = &code[at..];
        let prefix = ["$HOME/", "${HOME}/", "~/", "../", "./", "/"]
            .into_iter()
            .find(|p| rest.starts_with(p));
        if let (true, Some(prefix)) = (starts_token, prefix) {
            let end = rest.find(ends_path).unwrap_or(rest.len());
            let path = &rest[..end];
            // A lone `/` is division or a regex delimiter; `//` a comment.
            if path.len() > prefix.len() && !path.starts_with("//") {
                let path = path
                    .strip_prefix("$HOME/")
                    .or_else(|| path.strip_prefix("${HOME}/"))
                    .map(|p| format!("~/{p}"))
                    .unwrap_or_else(|| path.to_string());
                let word = Word::lit(&path);
                if !out.contains(&word) {
                    out.push(word);
                }
            }
            i += path_chars(rest, end);
            continue;
        }
        let _ = c;
        i += 1;
    }
    out
}

/// Like [`literal_paths`], but only inside `"…"` strings: for awk, where `/…/` is a regex.
pub(super) fn string_paths(code: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for (i, piece) in code.split('"').enumerate() {
        if i % 2 == 1 {
            for word in literal_paths(piece) {
                if !out.contains(&word) {
                    out.push(word);
                }
            }
        }
    }
    out
}

fn path_chars(rest: &str, end: usize) -> usize {
    rest[..end].chars().count().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(code: &str) -> Vec<String> {
        literal_paths(code)
            .iter()
            .map(|w| w.as_lit().unwrap().to_string())
            .collect()
    }

    #[test]
    fn paths_in_strings_of_every_common_interpreter_are_found() {
        assert_eq!(
            paths(r#"print(open("/root/.ssh/id_rsa").read())"#),
            ["/root/.ssh/id_rsa"]
        );
        assert_eq!(paths(r#"open F,"/etc/shadow"; print <F>"#), ["/etc/shadow"]);
        assert_eq!(
            paths(r#"require("fs").readFileSync('~/.aws/credentials')"#),
            ["~/.aws/credentials"]
        );
        assert_eq!(
            paths(r#"BEGIN{while((getline l < "$HOME/.ssh/id_ed25519")>0) print l}"#),
            ["~/.ssh/id_ed25519"]
        );
        assert_eq!(paths("File.read('../other/.env')"), ["../other/.env"]);
    }

    #[test]
    fn in_awk_only_strings_hold_paths_not_regexes() {
        let found: Vec<String> = string_paths(r#"/usr/ {print} END{getline x < "/etc/shadow"}"#)
            .iter()
            .map(|w| w.as_lit().unwrap().to_string())
            .collect();
        assert_eq!(found, ["/etc/shadow"]);
    }

    #[test]
    fn division_comments_and_words_with_slashes_are_not_paths() {
        assert!(paths("print(6 / 3)").is_empty());
        assert!(paths("x = a/b // comment").is_empty());
        assert!(paths("print('and/or')").is_empty());
    }
}
