//! What a `git` invocation does. Git is the most used multi-purpose program an agent runs, so it
//! gets its own table: read-only subcommands (with their writing flags excluded), network use,
//! history rewriting, destruction of uncommitted work, and configuration injection (`-c`).

use super::Effect;
use crate::approval::shell::Word;

/// Global options that take a separate value.
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
    "--config-env",
    "--super-prefix",
];

pub fn effects(args: &[Word]) -> Vec<Effect> {
    let mut e = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let Some(w) = args[i].as_lit() else {
            e.push(Effect::Opaque("a `git` option computed at run time".into()));
            return e;
        };
        if !w.starts_with('-') {
            break;
        }
        let (name, inline_value) = match w.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (w, None),
        };
        match name {
            "-c" | "--config-env" => e.push(Effect::ConfigInjection(
                "`git -c` sets configuration that can run programs (pager, hooks, ssh)".into(),
            )),
            "--exec-path" if inline_value.is_some() || GLOBAL_WITH_VALUE.contains(&w) => e.push(
                Effect::ConfigInjection("`git --exec-path` points git at other programs".into()),
            ),
            "--git-dir" | "--work-tree" => {
                let value = inline_value
                    .map(Word::lit)
                    .or_else(|| args.get(i + 1).cloned());
                if let Some(v) = value {
                    e.push(Effect::Read(v));
                }
                e.push(Effect::ConfigInjection(format!(
                    "`git {name}` points git at another repository"
                )));
            }
            "-C" => {
                if let Some(v) = args.get(i + 1) {
                    e.push(Effect::Read(v.clone()));
                }
            }
            _ => {}
        }
        i += if GLOBAL_WITH_VALUE.contains(&w) { 2 } else { 1 };
    }
    let Some(sub) = args.get(i).and_then(Word::as_lit) else {
        if i < args.len() {
            e.push(Effect::Opaque(
                "a `git` subcommand computed at run time".into(),
            ));
        }
        return e;
    };
    let rest = &args[i + 1..];
    let has = |names: &[&str]| {
        rest.iter().filter_map(Word::as_lit).any(|a| {
            let a = a.split('=').next().unwrap_or(a);
            names.contains(&a)
        })
    };
    let positional: Vec<&Word> = rest
        .iter()
        .take_while(|w| w.as_lit() != Some("--"))
        .filter(|w| !w.as_lit().is_some_and(|s| s.starts_with('-')))
        .collect();
    let output_files = || {
        rest.iter()
            .filter_map(Word::as_lit)
            .filter_map(|a| a.strip_prefix("--output="))
            .map(|f| Effect::Write(Word::lit(f)))
            .collect::<Vec<_>>()
    };
    match sub {
        "status" | "show" | "shortlog" | "describe" | "rev-parse" | "ls-files" | "ls-tree"
        | "cat-file" | "blame" | "annotate" | "merge-base" | "name-rev" | "rev-list"
        | "count-objects" | "check-ignore" | "check-attr" | "show-ref" | "for-each-ref"
        | "whatchanged" | "help" | "version" | "var" | "cherry" | "range-diff" | "grep" | "log"
        | "diff" | "show-branch" | "verify-commit" | "verify-tag" | "fsck" => {
            if has(&["--output"]) {
                e.extend(output_files());
            }
            if sub == "grep" && has(&["-O", "--open-files-in-pager"]) {
                e.push(Effect::RunsCode(
                    "`git grep -O` runs a pager program".into(),
                ));
            }
            if has(&["--ext-diff", "--textconv"]) && !has(&["--no-ext-diff"]) {
                e.push(Effect::RunsCode(format!(
                    "`git {sub} --ext-diff` runs the configured diff program"
                )));
            }
        }
        "branch" => {
            if has(&[
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
            ]) || (!positional.is_empty()
                && !has(&[
                    "-l",
                    "--list",
                    "--contains",
                    "--merged",
                    "--no-merged",
                    "--points-at",
                ]))
            {
                e.push(Effect::Write(Word::lit(".git")));
                if has(&["-D"]) || has(&["-d", "--delete"]) && has(&["-f", "--force"]) {
                    e.push(Effect::DestroysWork(
                        "`git branch -D` deletes a branch with unmerged work".into(),
                    ));
                }
            }
        }
        "tag" => {
            if !positional.is_empty()
                && !has(&[
                    "-l",
                    "--list",
                    "--contains",
                    "--points-at",
                    "-v",
                    "--verify",
                ])
                || has(&["-d", "--delete", "-f", "--force"])
            {
                e.push(Effect::Write(Word::lit(".git")));
            }
        }
        "remote" => match positional.first().and_then(|w| w.as_lit()) {
            None | Some("-v") => {}
            Some("get-url") => {}
            Some("show" | "update" | "prune") => e.push(Effect::Network(format!(
                "`git remote {}` contacts the remote",
                positional[0].display()
            ))),
            Some(_) => e.push(Effect::Write(Word::lit(".git/config"))),
        },
        "stash" => match positional.first().and_then(|w| w.as_lit()) {
            Some("list" | "show") => {}
            Some("drop" | "clear") => e.push(Effect::DestroysWork(format!(
                "`git stash {}` throws away stashed work",
                positional[0].display()
            ))),
            _ => e.push(Effect::Write(Word::lit("."))),
        },
        "reflog" => match positional.first().and_then(|w| w.as_lit()) {
            None | Some("show") => {}
            Some(_) => e.push(Effect::DestroysWork(
                "`git reflog expire/delete` removes recovery points".into(),
            )),
        },
        "worktree" => match positional.first().and_then(|w| w.as_lit()) {
            Some("list") => {}
            _ => e.push(Effect::Write(Word::lit("."))),
        },
        "config" => config(rest, &mut e),
        "clone" => {
            e.push(Effect::Network("`git clone` downloads a repository".into()));
            let dest = positional
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
            if has(&[
                "-f",
                "--force",
                "--force-with-lease",
                "--mirror",
                "--delete",
                "-d",
            ]) || positional.iter().any(|w| {
                w.as_lit()
                    .is_some_and(|s| s.starts_with('+') || s.starts_with(':'))
            }) {
                e.push(Effect::DestroysWork(
                    "`git push --force` can overwrite history on the remote".into(),
                ));
            }
        }
        "reset" => {
            e.push(Effect::Write(Word::lit(".")));
            if has(&["--hard", "--merge", "--keep"]) {
                e.push(Effect::DestroysWork(
                    "`git reset --hard` throws away uncommitted changes".into(),
                ));
            }
        }
        "clean" => {
            e.push(Effect::Delete(Word::lit(".")));
            if !has(&["-n", "--dry-run"]) {
                e.push(Effect::DestroysWork(
                    "`git clean` deletes untracked files for good".into(),
                ));
            }
        }
        "checkout" | "restore" | "switch" => {
            e.push(Effect::Write(Word::lit(".")));
            let discards = has(&["-f", "--force", "--discard-changes", "--worktree", "-W"])
                || rest.iter().any(|w| w.as_lit() == Some("--"))
                || (sub == "restore" && !has(&["--staged", "-S"]))
                || (sub == "checkout" && positional.iter().any(|w| w.as_lit() == Some(".")));
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
            if sub == "prune" || has(&["--prune"]) {
                e.push(Effect::DestroysWork(format!(
                    "`git {sub}` removes unreachable objects"
                )));
            }
        }
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
                e.extend(positional.iter().map(|w| Effect::Delete((*w).clone())));
            }
        }
        "credential" | "credential-store" | "credential-cache" => e.push(Effect::CredentialAccess(
            "`git credential` reads stored passwords".into(),
        )),
        "daemon" | "instaweb" | "send-email" | "request-pull" | "http-backend" | "upload-pack"
        | "receive-pack" => e.push(Effect::Network(format!("`git {sub}` talks to the network"))),
        other => e.push(Effect::Unknown(format!(
            "`git {other}` is not a git command airlock knows"
        ))),
    }
    e
}

fn config(rest: &[Word], e: &mut Vec<Effect>) {
    let words: Vec<&str> = rest.iter().filter_map(Word::as_lit).collect();
    let flags: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| w.starts_with('-'))
        .collect();
    let positional: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect();
    let global = flags.iter().any(|f| matches!(*f, "--global" | "--system"));
    let file = flags.iter().any(|f| f.starts_with("--file") || *f == "-f");
    let reading = flags.iter().any(|f| {
        matches!(
            *f,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--list"
                | "-l"
                | "--get-urlmatch"
                | "--show-origin"
                | "--show-scope"
                | "--name-only"
        )
    }) || matches!(positional.first(), Some(&"get" | &"list"))
        || (positional.len() == 1
            && !flags.iter().any(|f| {
                matches!(
                    *f,
                    "--unset"
                        | "--unset-all"
                        | "--remove-section"
                        | "--rename-section"
                        | "--add"
                        | "--replace-all"
                        | "--edit"
                        | "-e"
                )
            }));
    if reading {
        if positional.iter().any(|p| {
            p.to_ascii_lowercase().contains("credential")
                || p.to_ascii_lowercase().contains("token")
                || p.to_ascii_lowercase().contains("password")
        }) {
            e.push(Effect::CredentialAccess(
                "`git config` reads a credential setting".into(),
            ));
        }
        return;
    }
    if global {
        e.push(Effect::SystemChange(
            "`git config --global` changes git for every repository of this user".into(),
        ));
    } else if file {
        e.push(Effect::Write(Word::lit(".git/config")));
        e.push(Effect::Opaque(
            "`git config --file` writes a file airlock did not resolve".into(),
        ));
    } else {
        e.push(Effect::Write(Word::lit(".git/config")));
    }
}
