//! `env [OPTIONS] [NAME=VALUE...] CMD`: the settings it gives the command, the directory it runs
//! it in (`-C`), and the `-S` string it splits into words (options, settings and the command
//! itself), which airlock splits the same way and reads in place of the string.

use super::{Unwrapped, cluster_value, is_name, lit};
use crate::facts::shell::words::Word;

/// Most `-S` strings one `env` may split (each split may hold another `-S`).
const MAX_SPLITS: usize = 16;

/// Reads `env`'s options into `out`; returns where its settings start. A `-S STRING` is
/// replaced in `out.argv` by the words it splits into, which are read on from there.
pub(super) fn options(out: &mut Unwrapped) -> usize {
    let mut i = 1;
    let mut splits = 0;
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]).map(str::to_string) else {
            break;
        };
        if w == "--" {
            i += 1;
            break;
        }
        if let Some(split) = split_option(&out.argv, i, &w) {
            splits += 1;
            if splits > MAX_SPLITS {
                out.problems.push(format!(
                    "`env -S` nested more than {MAX_SPLITS} times; airlock stopped splitting"
                ));
                return out.argv.len();
            }
            match split.words {
                Ok(words) => {
                    let replaced: Vec<Word> = split.kept.into_iter().chain(words).collect();
                    out.argv.splice(i..split.end, replaced);
                }
                Err(why) => {
                    out.problems.push(format!(
                        "`env -S` splits a string airlock cannot split the same way: {why}"
                    ));
                    return out.argv.len();
                }
            }
            continue;
        }
        if matches!(w.as_str(), "-u" | "--unset") {
            i += 2;
        } else if matches!(w.as_str(), "-C" | "--chdir") {
            let dir = out.argv.get(i + 1).cloned();
            change_dir(out, dir);
            i += 2;
        } else if let Some(dir) = w.strip_prefix("--chdir=") {
            change_dir(out, Some(Word::lit(dir)));
            i += 1;
        } else if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 {
            // A cluster such as `-iC/dir` or `-iu NAME`: the first of C and u takes the rest
            // of the cluster, or the next word, as its value.
            if let Some(('C', value)) =
                cluster_value(&out.argv, &mut i, &w[1..], |c| matches!(c, 'C' | 'u'))
            {
                change_dir(out, value);
            }
            i += 1;
        } else if w.starts_with('-') && w != "-" {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// A `-S` found at `argv[i]`: the options of its cluster that stay (`-i` of `-iS STRING`), the
/// words of its string, and the end of what it replaces.
struct Split {
    kept: Vec<Word>,
    words: Result<Vec<Word>, String>,
    end: usize,
}

/// `-S STRING`, `-SSTRING`, `--split-string=STRING`, `--split-string STRING` (or an
/// abbreviation), and `-S` inside a cluster (`-iS STRING`, `-vSSTRING`).
fn split_option(argv: &[Word], i: usize, w: &str) -> Option<Split> {
    let next = |end: usize| argv.get(i + 1).map(|s| (s.clone(), end));
    let (kept, string) = if let Some(long) = w.strip_prefix("--") {
        let (name, value) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        if name.is_empty() || !"split-string".starts_with(name) {
            return None;
        }
        match value {
            Some(v) => (Vec::new(), Some((Word::lit(v), i + 1))),
            None => (Vec::new(), next(i + 2)),
        }
    } else {
        let cluster = w.strip_prefix('-').filter(|c| !c.is_empty())?;
        // Letters before the first of C, u, S are flags; C and u take the rest as their value.
        let (at, letter) = cluster
            .char_indices()
            .find(|(_, c)| matches!(c, 'C' | 'u' | 'S'))?;
        if letter != 'S' {
            return None;
        }
        let kept = if at == 0 {
            Vec::new()
        } else {
            vec![Word::lit(&format!("-{}", &cluster[..at]))]
        };
        let rest = &cluster[at + 1..];
        let string = if rest.is_empty() {
            next(i + 2)
        } else {
            Some((Word::lit(rest), i + 1))
        };
        (kept, string)
    };
    let Some((string, end)) = string else {
        return Some(Split {
            kept,
            words: Err("`-S` without a string".into()),
            end: argv.len(),
        });
    };
    let words = match &string {
        Word::Lit { value, .. } => split_string(value),
        Word::Dynamic { text, .. } => Err(format!("the string `{text}` is built at run time")),
    };
    Some(Split { kept, words, end })
}

/// Splits an `env -S` string as GNU env does: blanks separate words; `'...'` quotes (only `\\`
/// and `\'` escaped inside); `"..."` quotes with escapes; `\_` is a blank (a separator outside
/// double quotes); `\c` ends the string; `#` starting a word starts a comment; `${NAME}` is a
/// variable's value, unknown here. Anything else with a backslash is an error, as in env.
fn split_string(s: &str) -> Result<Vec<Word>, String> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut dynamic = false;
    let mut vars = Vec::new();
    let mut quote = Quote::None;
    let mut chars = s.chars().peekable();
    let finish = |current: &mut String, dynamic: &mut bool, vars: &mut Vec<String>| {
        let word = if *dynamic {
            Word::Dynamic {
                text: std::mem::take(current),
                vars: std::mem::take(vars),
            }
        } else {
            Word::Lit {
                value: std::mem::take(current),
                glob: false,
                quoted: true,
            }
        };
        *dynamic = false;
        word
    };
    while let Some(c) = chars.next() {
        match (&quote, c) {
            (Quote::None, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r') => {
                if in_word {
                    words.push(finish(&mut current, &mut dynamic, &mut vars));
                    in_word = false;
                }
            }
            (Quote::None, '#') if !in_word => break,
            (Quote::None, '\'') => {
                quote = Quote::Single;
                in_word = true;
            }
            (Quote::None, '"') => {
                quote = Quote::Double;
                in_word = true;
            }
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::Single, '\\') => match chars.peek() {
                Some(&e @ ('\\' | '\'')) => {
                    chars.next();
                    current.push(e);
                }
                _ => current.push('\\'),
            },
            (_, '\\') => {
                let Some(e) = chars.next() else {
                    return Err("a backslash ends the string".into());
                };
                in_word = true;
                match e {
                    'c' => break,
                    '_' if quote == Quote::None => {
                        words.push(finish(&mut current, &mut dynamic, &mut vars));
                        in_word = false;
                    }
                    '_' => current.push(' '),
                    'f' => current.push('\x0c'),
                    'n' => current.push('\n'),
                    'r' => current.push('\r'),
                    't' => current.push('\t'),
                    'v' => current.push('\x0b'),
                    '#' | '$' | '\\' | '"' | '\'' => current.push(e),
                    other => return Err(format!("`\\{other}` is not an escape env knows")),
                }
            }
            (Quote::None | Quote::Double, '$') => {
                if chars.peek() != Some(&'{') {
                    return Err("only `${NAME}` is expanded".into());
                }
                chars.next();
                let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                current.push_str(&format!("${{{name}}}"));
                vars.push(name);
                dynamic = true;
                in_word = true;
            }
            (_, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if quote != Quote::None {
        return Err("a quote is not closed".into());
    }
    if in_word {
        words.push(finish(&mut current, &mut dynamic, &mut vars));
    }
    Ok(words)
}

/// Reads the `NAME=VALUE` settings from `i` into `out`; returns where the command starts.
pub(super) fn settings(out: &mut Unwrapped, mut i: usize) -> usize {
    while i < out.argv.len() {
        match lit(&out.argv[i]).and_then(|w| w.split_once('=')) {
            Some((k, v)) if is_name(k) => {
                let value = match &out.argv[i] {
                    Word::Lit { glob, quoted, .. } => Word::Lit {
                        value: v.to_string(),
                        glob: *glob,
                        quoted: *quoted,
                    },
                    d => d.clone(),
                };
                out.env.push((k.to_string(), value));
                i += 1;
            }
            _ => break,
        }
    }
    i
}

/// Records a directory change (`env -C DIR`). After an earlier one, a relative `DIR` is taken
/// from there, as the second `env` does (`env -C /etc env -C . rm passwd` runs in `/etc`); when
/// either is not a plain literal, where the command runs is unknown. A `-C` without a value
/// keeps the earlier directory.
pub(super) fn change_dir(out: &mut Unwrapped, dir: Option<Word>) {
    let Some(dir) = dir else {
        return;
    };
    let absolute = dir
        .as_lit()
        .is_some_and(|d| d.starts_with('/') || d.starts_with('~'));
    out.chdir = match out.chdir.take() {
        None => Some(dir),
        Some(_) if absolute => Some(dir),
        Some(Word::Lit {
            value: earlier,
            glob: false,
            ..
        }) if matches!(dir, Word::Lit { glob: false, .. }) => {
            Some(Word::lit(&format!("{earlier}/{}", dir.display())))
        }
        Some(earlier) => Some(Word::Dynamic {
            text: format!("{}/{}", earlier.display(), dir.display()),
            vars: Vec::new(),
        }),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(s: &str) -> Vec<String> {
        split_string(s)
            .unwrap()
            .iter()
            .map(|w| w.display().to_string())
            .collect()
    }

    #[test]
    fn a_split_string_is_cut_into_words_the_way_env_cuts_it() {
        assert_eq!(
            shown(r#"sh -c "echo >> ~/.bashrc""#),
            vec!["sh", "-c", "echo >> ~/.bashrc"]
        );
        assert_eq!(shown(r"a\_b 'c d' #rest"), vec!["a", "b", "c d"]);
        assert_eq!(shown(r#""x\_y" z\cgone"#), vec!["x y", "z"]);
        assert!(split_string("${HOME}/x").unwrap()[0].is_dynamic());
        assert!(split_string("$HOME").is_err());
        assert!(split_string("'open").is_err());
    }
}
