//! The words after a program's name, read the way GNU getopt reads them: options, their values
//! (`--opt=value`, `-ovalue`, clusters), operands, and the URLs and paths among them. Every
//! program's table reads its arguments through [`Args`], so an option spelled another way cannot
//! slip past one table and not another.

use super::lit;
use crate::facts::shell::Word;

/// Arguments after the program name.
pub(super) struct Args<'a> {
    pub(super) words: &'a [Word],
}

impl<'a> Args<'a> {
    pub(super) fn iter(&self) -> impl Iterator<Item = &'a Word> {
        self.words.iter()
    }

    /// True when a long option is present (`--name`, `--name=value`, or any unambiguous-looking
    /// prefix such as `--compress-prog`, which GNU getopt accepts) or a short option letter appears
    /// in a cluster (`-i`, `-ni`) before `--`.
    pub(super) fn has(&self, short: &[char], long: &[&str]) -> bool {
        for w in self.words {
            let Some(s) = lit(w) else { continue };
            if s == "--" {
                break;
            }
            if let Some(name) = s.strip_prefix("--") {
                let name = name.split('=').next().unwrap_or(name);
                if long.iter().any(|l| long_matches(name, l)) {
                    return true;
                }
            } else if let Some(cluster) = s.strip_prefix('-')
                && cluster.chars().any(|c| short.contains(&c))
            {
                return true;
            }
        }
        false
    }

    /// Non-option words (every word after `--`). Dynamic words count as non-options.
    pub(super) fn positional(&self) -> Vec<&'a Word> {
        let mut out = Vec::new();
        let mut after_dashdash = false;
        for w in self.words {
            match lit(w) {
                Some("--") if !after_dashdash => after_dashdash = true,
                Some(s) if !after_dashdash && s.starts_with('-') && s != "-" => {}
                _ => out.push(w),
            }
        }
        out
    }

    /// Values given as `--opt=value`, `--opt value` (long names may be abbreviated), `-o value`,
    /// `-ovalue`, or inside a cluster (`-mo value`, `-mofile`) for the listed options.
    pub(super) fn values_of(&self, short: &[&str], long: &[&str]) -> Vec<Word> {
        let letters: Vec<char> = short
            .iter()
            .filter_map(|o| o.strip_prefix('-'))
            .filter_map(|o| o.chars().next())
            .collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.words.len() {
            let Some(s) = lit(&self.words[i]) else {
                i += 1;
                continue;
            };
            if s == "--" {
                break;
            }
            if let Some(name) = s.strip_prefix("--") {
                match name.split_once('=') {
                    Some((name, value)) => {
                        if long.iter().any(|l| long_matches(name, l)) {
                            out.push(Word::lit(value));
                        }
                    }
                    None => {
                        if long.iter().any(|l| long_matches(name, l))
                            && let Some(v) = self.words.get(i + 1)
                        {
                            out.push(v.clone());
                            i += 1;
                        }
                    }
                }
            } else if let Some(cluster) = s.strip_prefix('-').filter(|c| !c.is_empty())
                && let Some(at) = cluster.char_indices().find(|(_, c)| letters.contains(c))
            {
                let rest = &cluster[at.0 + at.1.len_utf8()..];
                if rest.is_empty() {
                    if let Some(v) = self.words.get(i + 1) {
                        out.push(v.clone());
                        i += 1;
                    }
                } else {
                    out.push(Word::lit(rest));
                }
            }
            i += 1;
        }
        out
    }

    /// Every word that looks like a path, including `--opt=/a/path` values.
    pub(super) fn path_like(&self) -> Vec<Word> {
        let mut out = Vec::new();
        for w in self.words {
            match w {
                Word::Lit { value, .. } => {
                    if let Some((_, v)) = value.strip_prefix("--").and_then(|n| n.split_once('=')) {
                        if looks_like_path(v) {
                            out.push(Word::lit(v));
                        }
                    } else if (!value.starts_with('-') || value == "-") && !is_url(value) {
                        out.push(w.clone());
                    }
                }
                Word::Dynamic { .. } => out.push(w.clone()),
            }
        }
        out
    }
}

/// GNU getopt_long takes any prefix of a long option that is not ambiguous; airlock treats every
/// prefix as a match, which can only make it more careful.
pub(super) fn long_matches(given: &str, option: &str) -> bool {
    !given.is_empty() && option.starts_with(given) && (given.len() >= 2 || given == option)
}

/// The local path a `file:` URL names (`file:///etc/x`, `file://localhost/etc/x`, `file:/etc/x`),
/// with `%XX` escapes decoded; also inside an option (`--url=file:///x`).
pub(super) fn file_url_path(word: &str) -> Option<String> {
    let at = word.to_ascii_lowercase().find("file:")?;
    let rest = &word[at + "file:".len()..];
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let slash = after.find('/')?;
            let host = &after[..slash];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return None;
            }
            &after[slash..]
        }
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = path.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// A URL with a scheme (`https://…`) names no local file; `file:` URLs are handled on their own.
fn is_url(s: &str) -> bool {
    match s.split_once("://") {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

fn looks_like_path(s: &str) -> bool {
    s.starts_with('/') || s.starts_with('~') || s.starts_with('.') || s.contains('/')
}
