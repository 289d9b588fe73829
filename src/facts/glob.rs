//! Shell-style glob patterns: the one dialect that rule patterns (`src/**`, `cargo test *`) and
//! the judging of shell words (what `appr*ve` or `?` can expand to) are written in.
//!
//! - `*` is any run of characters; over paths it stops at `/`.
//! - `**` is any run, `/` included; `**/` also matches no directory at all.
//! - `?` is one character (not `/` over paths), however many bytes it takes.
//! - `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`, `[[:alpha:]]`: one character of a class. A `]` first
//!   in the class is a member, a reversed range holds nothing, and a `[` that never closes is a
//!   plain `[`. A class may match `/`.
//! - Every other character, `{`, `}` and `\` included, stands for itself.
//!
//! Words follow the same dialect, so a word pattern matches a little more than bash would
//! (`a**/b` matches `ab`), never less: what it can expand to is judged on the wider set.
//!
//! A pattern is translated into a regular expression and matched by the `regex` crate, whose
//! automata take time linear in the text: no pattern, however it is built, backtracks. The only
//! way a pattern fails is by being too large to compile; what that means (match or not) is the
//! caller's decision, taken where it knows which answer is the safe one.
//!
//! Not `globset`, although `ignore` brings it in: it matches bytes, so `?` and `[!a]` never match
//! one non-ASCII character (`?` misses `é`, `??` matches it), it treats `**` inside a name as `*`,
//! and it has no `[:alpha:]`. Each of those would let a deny rule or a glob expansion miss.

use regex::Regex;

/// A compiled glob.
#[derive(Debug, Clone)]
pub struct Glob {
    regex: Regex,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a glob pattern of {length} characters is too large to match ({reason}); split it into smaller patterns"
)]
pub struct GlobError {
    length: usize,
    reason: String,
}

impl Glob {
    /// A glob over paths: `*` and `?` stop at `/`, `**` crosses it.
    pub fn path(pattern: &str) -> Result<Glob, GlobError> {
        Self::compile(pattern, true)
    }

    /// A glob over words (program names, arguments): `/` is an ordinary character.
    pub fn word(pattern: &str) -> Result<Glob, GlobError> {
        Self::compile(pattern, false)
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    fn compile(pattern: &str, paths: bool) -> Result<Glob, GlobError> {
        Regex::new(&to_regex(pattern, paths))
            .map(|regex| Glob { regex })
            .map_err(|e| GlobError {
                length: pattern.chars().count(),
                reason: e.to_string(),
            })
    }
}

/// Whether `pattern` matches the whole of `text` (over paths when `paths`). A pattern too large
/// to compile matches everything: a glob that matches more is judged on more. Callers for whom
/// matching is the unsafe answer compile a [`Glob`] and decide for themselves.
/// A pattern tested against many texts is compiled once as a [`Glob`] instead.
pub fn glob_match(pattern: &str, text: &str, paths: bool) -> bool {
    Glob::compile(pattern, paths).map_or(true, |glob| glob.is_match(text))
}

fn to_regex(pattern: &str, paths: bool) -> String {
    let p: Vec<char> = pattern.chars().collect();
    let one = if paths { "[^/]" } else { "." };
    let mut re = String::from("^(?s:");
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' if p.get(i + 1) == Some(&'*') => {
                if p.get(i + 2) == Some(&'/') {
                    re.push_str("(?:.*/)?");
                    i += 3;
                } else {
                    re.push_str(".*");
                    i += 2;
                }
            }
            '*' => {
                re.push_str(one);
                re.push('*');
                i += 1;
            }
            '?' => {
                re.push_str(one);
                i += 1;
            }
            '[' => match class_end(&p[i..]) {
                Some(close) => {
                    push_class(&mut re, &p[i + 1..i + close]);
                    i += close + 1;
                }
                None => {
                    re.push_str(r"\[");
                    i += 1;
                }
            },
            c => {
                push_literal(&mut re, c);
                i += 1;
            }
        }
    }
    re.push_str(")$");
    re
}

/// The index of the `]` closing the bracket expression at `p[0]`: a leading `]` (after `!` or
/// `^`) is a member, and a `[:name:]` inside is skipped whole. `None` when it never closes.
fn class_end(p: &[char]) -> Option<usize> {
    let mut j = 1;
    if matches!(p.get(j), Some('!' | '^')) {
        j += 1;
    }
    if p.get(j) == Some(&']') {
        j += 1;
    }
    while j < p.len() {
        if p[j] == '[' && p.get(j + 1) == Some(&':') {
            let name_end = p[j + 2..].windows(2).position(|w| w == [':', ']'])?;
            j += name_end + 4;
            continue;
        }
        if p[j] == ']' {
            return Some(j);
        }
        j += 1;
    }
    None
}

/// `class` is what stands between the brackets.
fn push_class(re: &mut String, class: &[char]) {
    let (negated, class) = match class.first() {
        Some('!' | '^') => (true, &class[1..]),
        _ => (false, class),
    };
    let mut members = String::new();
    let mut i = 0;
    while i < class.len() {
        if class[i] == '[' && class.get(i + 1) == Some(&':') {
            let name: String = class[i + 2..].iter().take_while(|c| **c != ':').collect();
            members.push_str(posix_class(&name));
            i += name.chars().count() + 4;
        } else if i + 2 < class.len() && class[i + 1] == '-' {
            if class[i] <= class[i + 2] {
                push_literal(&mut members, class[i]);
                members.push('-');
                push_literal(&mut members, class[i + 2]);
            }
            i += 3;
        } else {
            push_literal(&mut members, class[i]);
            i += 1;
        }
    }
    // A regex class needs a member: with none, it holds nothing (or, negated, everything).
    let (negated, members) = if members.is_empty() {
        (!negated, r"\x{0}-\x{10FFFF}")
    } else {
        (negated, members.as_str())
    };
    re.push('[');
    if negated {
        re.push('^');
    }
    re.push_str(members);
    re.push(']');
}

/// The members of `[:name:]`, as Rust's `char::is_*` reads them (Unicode where those are).
fn posix_class(name: &str) -> &'static str {
    match name {
        "alpha" => r"\p{Alphabetic}",
        "digit" => "0-9",
        "alnum" => r"\p{Alphabetic}\p{N}",
        "upper" => r"\p{Uppercase}",
        "lower" => r"\p{Lowercase}",
        "space" => r"\p{White_Space}",
        "blank" => r"\x20\t",
        "punct" => r"\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E",
        "xdigit" => "0-9A-Fa-f",
        "cntrl" => r"\p{Cc}",
        "print" => r"\P{Cc}",
        "graph" => r"[^\p{Cc}\p{White_Space}]",
        "word" => r"\p{Alphabetic}\p{N}_",
        // An unknown class holds everything: a glob that matches more is judged on more.
        _ => r"\x{0}-\x{10FFFF}",
    }
}

fn push_literal(re: &mut String, c: char) {
    re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(pattern: &str, text: &str) -> bool {
        Glob::path(pattern).unwrap().is_match(text)
    }

    fn word(pattern: &str, text: &str) -> bool {
        Glob::word(pattern).unwrap().is_match(text)
    }

    /// So large that the regex crate refuses to compile it.
    fn too_large() -> String {
        "[[:alpha:]]".repeat(1000)
    }

    #[test]
    fn a_star_stays_in_its_directory_and_a_double_star_crosses_them() {
        assert!(path("src/*.rs", "src/a.rs"));
        assert!(!path("src/*.rs", "src/a/b.rs"));
        assert!(path("src/**", "src/a/b.rs"));
        assert!(path("src/**", "src/"));
        assert!(!path("src/**", "src"));
        assert!(!path("src/**", "srcx/a"));
        assert!(path("a**b", "a/x/b"));
        assert!(path("**", "/etc/passwd"));
    }

    #[test]
    fn a_double_star_slash_also_matches_no_directory_at_all() {
        assert!(path("**/*.md", "README.md"));
        assert!(path("**/*.md", "docs/x/y.md"));
        assert!(path("src/**/mod.rs", "src/mod.rs"));
        assert!(path("src/**/mod.rs", "src/a/b/mod.rs"));
        assert!(!path("src/**/mod.rs", "srcmod.rs"));
    }

    #[test]
    fn over_words_a_slash_is_an_ordinary_character() {
        assert!(word("*", "a/b"));
        assert!(word("a?b", "a/b"));
        assert!(!path("a?b", "a/b"));
        assert!(!path("*", "a/b"));
    }

    #[test]
    fn a_question_mark_or_a_class_is_one_character_however_many_bytes_it_takes() {
        assert!(path("?", "é"));
        assert!(!path("??", "é"));
        assert!(path("[é]", "é"));
        assert!(path("[!a]", "é"));
        assert!(path("[à-ü]", "é"));
        assert!(path("secret?.txt", "secret字.txt"));
        assert!(word("?", "\n"));
    }

    #[test]
    fn classes_take_ranges_negation_posix_names_and_a_leading_bracket() {
        assert!(word("[a-c]pprove", "approve"));
        assert!(word("[!x]pprove", "approve"));
        assert!(word("[^x]pprove", "approve"));
        assert!(!word("[!a]pprove", "approve"));
        assert!(word("[]x]", "]"));
        assert!(word("[!]x]", "a"));
        assert!(!word("[!]x]", "]"));
        assert!(word("[a-]", "-"));
        assert!(word("[[:alpha:]]pprove", "approve"));
        assert!(word("[[:alpha:]]", "é"));
        assert!(!word("[[:digit:]]", "x"));
        assert!(word("[[:punct:]]", "]"));
        assert!(word("[[:graph:]]", "~"));
        assert!(!word("[[:graph:]]", " "));
        assert!(word("[![:space:]]", "a"));
        assert!(path("[!a]", "/"));
    }

    #[test]
    fn a_reversed_range_holds_nothing_instead_of_failing() {
        assert!(!word("[z-a]", "m"));
        assert!(word("[!z-a]", "m"));
        assert!(word("[z-ab]", "b"));
    }

    #[test]
    fn a_bracket_that_never_closes_is_a_plain_bracket() {
        assert!(word("[x", "[x"));
        assert!(word("[", "["));
        assert!(word("[]", "[]"));
        assert!(word("[!]", "[!]"));
        assert!(word("[[:x]", "[x"));
        assert!(path("a[b/*", "a[b/c"));
    }

    #[test]
    fn braces_and_backslashes_are_plain_characters() {
        assert!(word("{a,b}", "{a,b}"));
        assert!(!word("{a,b}", "a"));
        assert!(word(r"\*", r"\x"));
        assert!(!word(r"\*", "*"));
        assert!(word("a.b$^(|)+", "a.b$^(|)+"));
        assert!(!word("a.b", "axb"));
    }

    #[test]
    fn patterns_built_to_make_a_backtracker_explode_are_answered_at_once() {
        let many_a = "a".repeat(40);
        assert!(!word("a*a*a*a*a*a*a*b", &many_a));
        assert!(!path("a*a*a*a*a*a*a*b", &many_a));
        assert!(!path("**a**a**a**a**a**a**a**b", &many_a));
        assert!(word("a*a*a*a*a*a*a*a", &many_a));
        let long = format!("{}b", "a/".repeat(50_000));
        assert!(path("**/b", &long));
        assert!(!path("**/*a*a*a*a*c", &long));
    }

    #[test]
    fn a_pattern_too_large_to_compile_is_an_error_and_matches_everything_in_glob_match() {
        let err = Glob::path(&too_large()).unwrap_err().to_string();
        assert!(err.contains("11000 characters"), "{err}");
        assert!(Glob::word(&too_large()).is_err());
        assert!(glob_match(&too_large(), "anything", true));
        assert!(glob_match(&too_large(), "", false));
    }

    #[test]
    fn glob_match_answers_for_the_pattern_it_is_given_not_the_last_one() {
        assert!(glob_match("*.rs", "a.rs", true));
        assert!(!glob_match("*.md", "a.rs", true));
        assert!(glob_match("*", "a/b", false));
        assert!(!glob_match("*", "a/b", true));
    }
}
