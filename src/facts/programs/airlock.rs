//! airlock run from a command: answering a request (the agent approving itself), trusting a
//! project config, accepting changed MCP tools, going on with a parked run or session, or a
//! nested agent that approves everything. Each is a hard deny whatever spells the word: a
//! literal, a brace expansion (already split into words), a file name pattern that can expand to
//! it, a variable or a substitution. A program name that is computed may be airlock too.

use super::{Args, Effect};
use crate::facts::shell::Word;

/// The words that, anywhere in airlock's arguments, make it answer or lift its own checks
/// (options with values may come before the subcommand, so any position counts).
const DENIED_WORDS: &[(&str, &str)] = &[
    (
        "approve",
        "`airlock approve` answers airlock's own requests",
    ),
    ("deny", "`airlock deny` answers airlock's own requests"),
    ("resume", "`airlock resume` goes on with a parked run"),
    (
        "trust",
        "`airlock trust` trusts a project's airlock configuration",
    ),
    (
        "accept",
        "`airlock mcp accept` accepts changed MCP tool definitions",
    ),
    (
        "--resume",
        "`airlock --resume` reopens a session, with its waiting requests",
    ),
    (
        "dangerously-allow-all",
        "a nested airlock with `--approvals dangerously-allow-all` allows whatever would ask",
    ),
    (
        "--approvals=dangerously-allow-all",
        "a nested airlock with `--approvals dangerously-allow-all` allows whatever would ask",
    ),
];

/// The effects of running airlock with `args`. Other subcommands are left to the ordinary rules.
pub(super) fn airlock_effects(args: &Args) -> Vec<Effect> {
    let mut e = denied_words(args, "");
    if args.iter().any(Word::is_dynamic) {
        e.push(Effect::TampersWithAirlock(
            "airlock run with words computed at run time could be `airlock approve`; only a person runs it"
                .into(),
        ));
    }
    e
}

/// A program name computed at run time (`$(which airlock)`), or a pattern that can name airlock
/// (`air*ck`): refused when the words after it name what airlock refuses.
pub(super) fn maybe_airlock(name: &Word, args: &Args) -> Vec<Effect> {
    let could_be = match name {
        Word::Dynamic { .. } => true,
        Word::Lit { value, glob, .. } => {
            *glob && glob_matches(value.rsplit('/').next().unwrap_or(value), "airlock")
        }
    };
    if !could_be {
        return Vec::new();
    }
    let why = format!("the command name `{}` could be airlock; ", name.display());
    denied_words(args, &why)
}

/// One effect for each word of `args` that is, or can expand to, a word airlock refuses.
fn denied_words(args: &Args, lead: &str) -> Vec<Effect> {
    let mut e = Vec::new();
    for word in args.iter() {
        let Word::Lit { value, glob, .. } = word else {
            continue;
        };
        // `--resume=SESSION` is `--resume SESSION`.
        let value = match value.split_once('=') {
            Some((option, _)) if option == "--resume" => option,
            _ => value.as_str(),
        };
        let found = DENIED_WORDS.iter().find(|(denied, _)| {
            if *glob {
                glob_matches(value, denied)
            } else {
                value == *denied
            }
        });
        let Some((denied, what)) = found else {
            continue;
        };
        let spelled = if *glob {
            format!("`{value}` can expand to `{denied}`: ")
        } else {
            String::new()
        };
        e.push(Effect::TampersWithAirlock(format!(
            "{lead}{spelled}{what}; only a person runs it"
        )));
    }
    e
}

/// Whether the shell pattern `pattern` (`*`, `?`, `[...]` with `!` or `^` and ranges) matches
/// the whole of `text`. A bracket that does not close is read as a plain `[`, as bash does.
pub(crate) fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    matches_from(&p, &t)
}

fn matches_from(p: &[char], t: &[char]) -> bool {
    // Iterative with one backtrack point for the last `*`, as fnmatch does.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match bracket(&p[pi..], t[ti]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                None => (t[ti] == '[').then_some(1),
            },
            Some(c) => (*c == t[ti]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                pi += len;
                ti += 1;
            }
            None => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|c| *c == '*')
}

/// A bracket expression at the start of `p` against `c`: whether it matches and its length, or
/// `None` when it does not close.
fn bracket(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while let Some(&x) = p.get(i) {
        if x == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            if (x..=p[i + 2]).contains(&c) {
                matched = true;
            }
            i += 3;
        } else {
            matched |= x == c;
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_the_way_bash_globs_do() {
        assert!(glob_matches("t?ust", "trust"));
        assert!(glob_matches("appr*", "approve"));
        assert!(glob_matches("*", "deny"));
        assert!(glob_matches("[a-c]pprove", "approve"));
        assert!(glob_matches("[!x]pprove", "approve"));
        assert!(!glob_matches("[!a]pprove", "approve"));
        assert!(glob_matches("air*ck", "airlock"));
        assert!(!glob_matches("*.jsonl", "approve"));
        assert!(!glob_matches("t?ust", "trusty"));
        assert!(glob_matches("[x", "[x"));
    }
}
