//! airlock run from a command: answering a request (the agent approving itself), trusting a
//! project config, accepting changed MCP tools, going on with a parked run or session, or a
//! nested agent that approves everything. Each is a hard deny whatever spells the word: a
//! literal, a brace expansion (already split into words), a file name pattern that can expand to
//! it, a variable or a substitution. A program name that is computed may be airlock too.

use super::{Args, Effect};
use crate::facts::glob::Glob;
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
        let pattern = glob.then(|| Glob::word(value));
        let found = DENIED_WORDS.iter().find(|(denied, _)| match &pattern {
            None => value == *denied,
            Some(Ok(pattern)) => pattern.is_match(denied),
            // A pattern too large to check can be any of them.
            Some(Err(_)) => true,
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

/// Whether the shell pattern `pattern` can expand to `word`. One too large to check can.
fn glob_matches(pattern: &str, word: &str) -> bool {
    Glob::word(pattern).map_or(true, |pattern| pattern.is_match(word))
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

    fn refusals(command: &str) -> Vec<String> {
        let ctx = crate::facts::shell::ShellContext {
            home: "/home/user".into(),
            cwd: "/workspace".into(),
        };
        crate::facts::shell::analyze(command, &ctx)
            .commands
            .iter()
            .flat_map(super::super::classify)
            .filter_map(|e| match e {
                Effect::TampersWithAirlock(why) => Some(why),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_posix_class_that_can_spell_a_denied_word_is_refused() {
        let refused = refusals("airlock [[:alpha:]]pprove ABCD-EFGH");
        assert!(
            refused
                .iter()
                .any(|r| r.contains("can expand to `approve`")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_pattern_too_large_to_check_is_refused_as_if_it_spelled_a_denied_word() {
        let huge = "[[:alpha:]]".repeat(1000);
        assert!(!refusals(&format!("airlock {huge}")).is_empty());
        // The shell parser cannot read `[[` in a command name; a long run of `?` is too large too.
        let huge = "?".repeat(100_000);
        assert!(!refusals(&format!("air{huge} approve ABCD-EFGH")).is_empty());
        assert!(refusals(&format!("air{huge} sessions")).is_empty());
    }
}
