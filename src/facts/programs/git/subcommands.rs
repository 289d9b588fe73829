//! The git subcommands by family: what each one reads, writes, destroys or sends. Each family
//! answers `false` for a subcommand that is not its own; `effects_in_repo` asks them in turn.

use super::config::config;
use super::{Subcommand, given};
use crate::facts::programs::Effect;
use crate::facts::shell::Word;

/// Subcommands that only look at the repository, unless told to write a file or run a program.
pub(super) fn read_only(s: &Subcommand, e: &mut Vec<Effect>) -> bool {
    let sub = s.name;
    match sub {
        "status" | "show" | "shortlog" | "describe" | "rev-parse" | "ls-files" | "ls-tree"
        | "cat-file" | "blame" | "annotate" | "merge-base" | "name-rev" | "rev-list"
        | "count-objects" | "check-ignore" | "check-attr" | "show-ref" | "for-each-ref"
        | "whatchanged" | "help" | "version" | "var" | "cherry" | "range-diff" | "grep" | "log"
        | "diff" | "show-branch" | "verify-commit" | "verify-tag" | "fsck" => {
            e.extend(s.output_files());
            if !matches!(sub, "help" | "version" | "var" | "count-objects") {
                e.extend(s.operand_reads());
            }
            if sub == "grep" && s.has(&["-O", "--open-files-in-pager"]) {
                e.push(Effect::RunsCode(
                    "`git grep -O` runs a pager program".into(),
                ));
            }
            if s.has(&["--ext-diff", "--textconv"]) && !s.has(&["--no-ext-diff"]) {
                e.push(Effect::RunsCode(format!(
                    "`git {sub} --ext-diff` runs the configured diff program"
                )));
            }
        }
        _ => return false,
    }
    true
}

/// Branches, tags, remotes, stashes, the reflog, worktrees and settings: listing them reads,
/// changing them writes `.git` (or throws work away).
pub(super) fn refs_and_settings(s: &Subcommand, e: &mut Vec<Effect>) -> bool {
    let sub = s.name;
    match sub {
        "branch" => {
            if s.has(&[
                "-d",
                "-D",
                "--delete",
                "-m",
                "-M",
                "--move",
                "-c",
                "-C",
                "--copy",
                "-f",
                "--force",
                "--set-upstream-to",
                "-u",
                "--unset-upstream",
                "--edit-description",
            ]) || (!s.positional.is_empty()
                && !s.has(&[
                    "-l",
                    "--list",
                    "--contains",
                    "--merged",
                    "--no-merged",
                    "--points-at",
                ]))
            {
                e.push(Effect::Write(Word::lit(".git")));
                if s.has(&["-D"]) || s.has(&["-d", "--delete"]) && s.has(&["-f", "--force"]) {
                    e.push(Effect::DestroysWork(
                        "`git branch -D` deletes a branch with unmerged work".into(),
                    ));
                }
            }
        }
        "tag" => {
            if !s.positional.is_empty()
                && !s.has(&[
                    "-l",
                    "--list",
                    "--contains",
                    "--points-at",
                    "-v",
                    "--verify",
                ])
                || s.has(&["-d", "--delete", "-f", "--force"])
            {
                e.push(Effect::Write(Word::lit(".git")));
            }
        }
        "remote" => match s.positional.first().and_then(|w| w.as_lit()) {
            None | Some("-v") => {}
            Some("get-url") => {}
            Some("show" | "update" | "prune") => e.push(Effect::Network(format!(
                "`git remote {}` contacts the remote",
                s.positional[0].display()
            ))),
            Some(_) => e.push(Effect::Write(Word::lit(".git/config"))),
        },
        "stash" => match s.positional.first().and_then(|w| w.as_lit()) {
            Some("list" | "show") => {}
            Some("drop" | "clear") => e.push(Effect::DestroysWork(format!(
                "`git stash {}` throws away stashed work",
                s.positional[0].display()
            ))),
            _ => e.push(Effect::Write(Word::lit("."))),
        },
        "reflog" => match s.positional.first().and_then(|w| w.as_lit()) {
            None | Some("show") => {}
            Some(_) => e.push(Effect::DestroysWork(
                "`git reflog expire/delete` removes recovery points".into(),
            )),
        },
        "worktree" => match s.positional.first().and_then(|w| w.as_lit()) {
            Some("list") => {}
            _ => e.push(Effect::Write(Word::lit("."))),
        },
        "config" => config(s.rest, e),
        _ => return false,
    }
    true
}

/// Subcommands that talk to another machine or read stored credentials.
pub(super) fn remotes(s: &Subcommand, e: &mut Vec<Effect>) -> bool {
    let sub = s.name;
    match sub {
        "clone" => {
            e.push(Effect::Network("`git clone` downloads a repository".into()));
            let dest = s
                .positional
                .get(1)
                .map(|w| (*w).clone())
                .unwrap_or_else(|| Word::lit("."));
            e.push(Effect::Write(dest));
        }
        "fetch" | "pull" | "ls-remote" | "submodule" => {
            e.push(Effect::Network(format!("`git {sub}` contacts a remote")));
            if sub != "ls-remote" && sub != "fetch" {
                e.push(Effect::Write(Word::lit(".")));
            } else if sub == "fetch" {
                e.push(Effect::Write(Word::lit(".git")));
            }
        }
        "push" => {
            e.push(Effect::Network("`git push` uploads commits".into()));
            e.push(Effect::Publishes(
                "`git push` publishes commits to a remote".into(),
            ));
            if s.has(&[
                "-f",
                "--force",
                "--force-with-lease",
                "--mirror",
                "--delete",
                "-d",
            ]) || s.positional.iter().any(|w| {
                w.as_lit()
                    .is_some_and(|s| s.starts_with('+') || s.starts_with(':'))
            }) {
                e.push(Effect::DestroysWork(
                    "`git push --force` can overwrite history on the remote".into(),
                ));
            }
        }
        "credential" | "credential-store" | "credential-cache" => e.push(Effect::CredentialAccess(
            "`git credential` reads stored passwords".into(),
        )),
        "daemon" | "instaweb" | "send-email" | "request-pull" | "http-backend" | "upload-pack"
        | "receive-pack" => e.push(Effect::Network(format!("`git {sub}` talks to the network"))),
        _ => return false,
    }
    true
}

/// Subcommands that rewrite the worktree or history and can throw away work git cannot give
/// back.
pub(super) fn rewrites(s: &Subcommand, e: &mut Vec<Effect>) -> bool {
    let sub = s.name;
    match sub {
        "reset" => {
            e.push(Effect::Write(Word::lit(".")));
            if s.has(&["--hard", "--merge", "--keep"]) {
                e.push(Effect::DestroysWork(
                    "`git reset --hard` throws away uncommitted changes".into(),
                ));
            }
        }
        "clean" => {
            // `-n` anywhere in a cluster (`-nd`, `-dn`) only lists what would go.
            let dry_run = s
                .rest
                .iter()
                .filter_map(Word::as_lit)
                .take_while(|a| *a != "--")
                .any(|a| {
                    given(a, "--dry-run")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('n'))
                });
            if dry_run {
                e.push(Effect::Read(Word::lit(".")));
            } else {
                e.push(Effect::Delete(Word::lit(".")));
                e.push(Effect::DestroysWork(
                    "`git clean` deletes untracked files for good".into(),
                ));
            }
        }
        "checkout" | "restore" | "switch" => {
            e.push(Effect::Write(Word::lit(".")));
            let discards = s.has(&["-f", "--force", "--discard-changes", "--worktree", "-W"])
                || s.rest.iter().any(|w| w.as_lit() == Some("--"))
                || (sub == "restore" && !s.has(&["--staged", "-S"]))
                || (sub == "checkout" && s.positional.iter().any(|w| w.as_lit() == Some(".")));
            if discards {
                e.push(Effect::DestroysWork(format!(
                    "`git {sub}` can overwrite uncommitted changes"
                )));
            }
        }
        "rebase" | "filter-branch" | "filter-repo" | "replace" => {
            e.push(Effect::Write(Word::lit(".")));
            e.push(Effect::RunsCode(format!(
                "`git {sub}` rewrites history and may run hooks or commands"
            )));
        }
        "gc" | "prune" | "repack" => {
            e.push(Effect::Write(Word::lit(".git")));
            if sub == "prune" || s.has(&["--prune"]) {
                e.push(Effect::DestroysWork(format!(
                    "`git {sub}` removes unreachable objects"
                )));
            }
        }
        _ => return false,
    }
    true
}

/// Subcommands that record work in the repository (and may run its hooks).
pub(super) fn records_work(s: &Subcommand, e: &mut Vec<Effect>) -> bool {
    let sub = s.name;
    match sub {
        "add" | "rm" | "mv" | "commit" | "merge" | "cherry-pick" | "revert" | "apply" | "am"
        | "init" | "notes" | "update-index" | "update-ref" | "symbolic-ref" | "sparse-checkout"
        | "mergetool" | "format-patch" | "bisect" | "restore-staged" => {
            e.push(Effect::Write(Word::lit(".")));
            if matches!(
                sub,
                "commit"
                    | "merge"
                    | "cherry-pick"
                    | "revert"
                    | "am"
                    | "rebase"
                    | "mergetool"
                    | "bisect"
            ) {
                e.push(Effect::RunsCode(format!(
                    "`git {sub}` runs the repository's hooks"
                )));
            }
            if sub == "rm" {
                e.extend(s.positional.iter().map(|w| Effect::Delete((*w).clone())));
            }
        }
        _ => return false,
    }
    true
}
