//! Shell builtins and the wrappers that run another command: most do nothing by themselves
//! (the wrapped command is judged on its own), a few change how the shell reads what follows
//! (`shopt`, `alias`, `hash -p`) or run code airlock cannot see (`eval`, `source`).

use super::{Args, Effect, reads};

/// Builtins and wrappers, or `None` for another program.
pub(super) fn shell_builtins(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "env" | "printenv" => {
            let names = args.positional();
            let all_harmless = names.iter().all(|w| {
                w.as_lit()
                    .is_some_and(crate::facts::envvars::harmless_to_print)
            });
            if name == "printenv" && !names.is_empty() && all_harmless {
                vec![]
            } else if name == "printenv" && !names.is_empty() {
                vec![Effect::EnvironmentDump(format!(
                    "prints environment variables {}",
                    args.positional()
                        .iter()
                        .map(|w| w.display())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))]
            } else {
                vec![Effect::EnvironmentDump(format!(
                    "`{name}` prints the whole environment"
                ))]
            }
        }
        "export" | "declare" | "typeset" | "readonly" => vec![],
        "command" => vec![],
        "exec" => vec![],
        "builtin" | "nohup" | "time" | "nice" | "timeout" | "stdbuf" | "setsid" | "ionice" => {
            vec![]
        }
        "sudo" | "doas" | "su" => vec![
            Effect::Privileged(format!("`{name}` changes user")),
            Effect::Opaque(format!("`{name}` without a command to run")),
        ],
        "xargs" => vec![],
        "eval" => vec![Effect::Opaque("`eval` runs a string as shell code".into())],
        "source" | "." => {
            let mut e = vec![Effect::RunsCode(format!(
                "`{name}` runs a shell file in this shell"
            ))];
            e.extend(reads(args.positional().into_iter().take(1).cloned()));
            e
        }
        "trap" => vec![],
        "shopt" | "alias" | "unalias" | "enable" => {
            if name == "shopt"
                && (args.words.is_empty() || args.has(&['p', 'q'], &[]))
                && !args.has(&['s', 'u'], &[])
            {
                vec![]
            } else {
                vec![Effect::ShellBehaviour(format!(
                    "`{name}` changes how the shell reads the commands that follow"
                ))]
            }
        }
        "umask" => vec![],
        "hash" => {
            if args.has(&['p'], &[]) {
                vec![Effect::ShellBehaviour(
                    "`hash -p` makes a command name run another program".into(),
                )]
            } else {
                vec![]
            }
        }
        _ => return None,
    })
}
