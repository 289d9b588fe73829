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

/// `--opt` matches an option when it is the option or a prefix of it (git, like GNU getopt, takes
/// unambiguous prefixes); `-O` also matches `-Ovalue`.
fn given(arg: &str, option: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    if option.starts_with("--") {
        name.len() > 3 && name.starts_with("--") && option.starts_with(name)
    } else {
        arg == option || (arg.starts_with(option) && !arg.starts_with("--"))
    }
}

/// Options of the read-only subcommands whose separate value is not a file: `git log -n 5`
/// reads no file named `5`.
const VALUE_OPTIONS: &[&str] = &[
    "-n",
    "--max-count",
    "--skip",
    "-S",
    "-G",
    "-L",
    "-e",
    "--author",
    "--committer",
    "--grep",
    "--since",
    "--until",
    "--after",
    "--before",
    "--format",
    "--pretty",
    "--date",
    "--diff-filter",
    "--abbrev",
    "-U",
    "--unified",
    "--max-depth",
    "--min-parents",
    "--max-parents",
];

/// The word is one command substitution running read-only git that prints nothing but
/// revisions (`$(git merge-base HEAD main)`, `$(git rev-parse --short HEAD)..main`), so it
/// names a commit, not a file. `rev-parse` can echo paths (`--show-toplevel`, plain arguments
/// after `--no-revs`), so only its revision-printing forms count.
fn prints_only_revisions(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("$(") else {
        return false;
    };
    let Some(close) = inner.find(')') else {
        return false;
    };
    let (command, after) = (&inner[..close], &inner[close + 1..]);
    // What follows may only be a range suffix (`..main`, `...HEAD`).
    let suffix_ok = after
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | '^' | '~'));
    if !suffix_ok || command.contains(['$', '`', '(', ';', '|', '&', '<', '>', '\\', '"', '\'']) {
        return false;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let revision = |w: &str| {
        !w.starts_with('-')
            && !w.starts_with('/')
            && !w.starts_with('~')
            && !w.contains("..")
            && w.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '.' | '-' | '_' | '/' | '^' | '~' | '@' | '{' | '}')
            })
    };
    match words.as_slice() {
        ["git", "merge-base", rest @ ..] => rest
            .iter()
            .all(|w| revision(w) || matches!(*w, "--fork-point" | "--all" | "--octopus")),
        ["git", "rev-parse", rest @ ..] => rest.iter().all(|w| {
            revision(w)
                || matches!(
                    *w,
                    "--verify"
                        | "-q"
                        | "--quiet"
                        | "--short"
                        | "--abbrev-ref"
                        | "--symbolic-full-name"
                )
                || w.strip_prefix("--short=")
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        }),
        ["git", "describe", rest @ ..] => rest
            .iter()
            .all(|w| revision(w) || matches!(*w, "--tags" | "--always" | "--abbrev=0" | "--long")),
        _ => false,
    }
}

pub fn effects(args: &[Word]) -> Vec<Effect> {
    let mut e = effects_in_repo(args);
    // `git -C DIR`: relative paths are relative to DIR.
    let mut dir: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_lit() {
            Some("-C") => {
                if let Some(d) = args.get(i + 1).and_then(Word::as_lit) {
                    dir = Some(match dir {
                        Some(prev) if !d.starts_with('/') && !d.starts_with('~') => {
                            format!("{prev}/{d}")
                        }
                        _ => d.to_string(),
                    });
                } else {
                    return vec![Effect::Opaque(
                        "`git -C` with a directory computed at run time".into(),
                    )];
                }
                i += 2;
            }
            Some(w) if w.starts_with('-') => {
                i += if GLOBAL_WITH_VALUE.contains(&w) { 2 } else { 1 }
            }
            _ => break,
        }
    }
    if let Some(dir) = dir {
        // Git reads the repository it is pointed at: `git -C ~ log -p` reads outside.
        e.push(Effect::Read(Word::lit(&dir)));
        let rebase = |w: &Word| match w.as_lit() {
            Some(p) if !p.starts_with('/') && !p.starts_with('~') => {
                Word::lit(&format!("{dir}/{p}"))
            }
            _ => w.clone(),
        };
        for effect in &mut e {
            match effect {
                Effect::Read(w) | Effect::Write(w) | Effect::Delete(w) | Effect::ReadTree(w) => {
                    *w = rebase(w);
                }
                _ => {}
            }
        }
    }
    e
}

fn effects_in_repo(args: &[Word]) -> Vec<Effect> {
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
            "-C" => {}
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
        rest.iter()
            .filter_map(Word::as_lit)
            .take_while(|a| *a != "--")
            .any(|a| names.iter().any(|n| given(a, n)))
    };
    let positional: Vec<&Word> = rest
        .iter()
        .take_while(|w| w.as_lit() != Some("--"))
        .filter(|w| !w.as_lit().is_some_and(|s| s.starts_with('-')))
        .collect();
    let output_files = || {
        let mut out = Vec::new();
        let mut words = rest.iter();
        while let Some(w) = words.next() {
            let Some(a) = w.as_lit() else { continue };
            if given(a, "--output") {
                match a.split_once('=') {
                    Some((_, f)) => out.push(Effect::Write(Word::lit(f))),
                    None => out.extend(words.next().cloned().map(Effect::Write)),
                }
            }
        }
        out
    };
    // Words that may name files: every operand (revisions resolve harmlessly inside the
    // workspace), the path half of `REV:PATH`, and the values of options that read files.
    let operand_reads = || {
        let mut out = Vec::new();
        let mut words = rest.iter();
        while let Some(w) = words.next() {
            match w.as_lit() {
                // Values that are counts, patterns, dates or formats, not files.
                Some(a) if VALUE_OPTIONS.contains(&a) => {
                    words.next();
                }
                Some(a)
                    if given(a, "--contents") || given(a, "--ignore-revs-file") || a == "-O" =>
                {
                    match a.split_once('=') {
                        Some((_, f)) => out.push(Effect::Read(Word::lit(f))),
                        None => out.extend(words.next().cloned().map(Effect::Read)),
                    }
                }
                Some(a) if a.starts_with("-O") && a.len() > 2 => {
                    out.push(Effect::Read(Word::lit(&a[2..])))
                }
                Some(a) if a.starts_with('-') => {}
                Some(a) => {
                    let path = match a.split_once(':') {
                        Some((_, p)) if !p.is_empty() => p,
                        _ => a,
                    };
                    out.push(Effect::Read(Word::lit(path)));
                }
                // `$(git merge-base HEAD main)`: a revision, computed by git that only reads.
                None if prints_only_revisions(w.display()) => {}
                None => out.push(Effect::Read(w.clone())),
            }
        }
        out
    };
    match sub {
        "status" | "show" | "shortlog" | "describe" | "rev-parse" | "ls-files" | "ls-tree"
        | "cat-file" | "blame" | "annotate" | "merge-base" | "name-rev" | "rev-list"
        | "count-objects" | "check-ignore" | "check-attr" | "show-ref" | "for-each-ref"
        | "whatchanged" | "help" | "version" | "var" | "cherry" | "range-diff" | "grep" | "log"
        | "diff" | "show-branch" | "verify-commit" | "verify-tag" | "fsck" => {
            e.extend(output_files());
            if !matches!(sub, "help" | "version" | "var" | "count-objects") {
                e.extend(operand_reads());
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
            // `-n` anywhere in a cluster (`-nd`, `-dn`) only lists what would go.
            let dry_run = rest
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
    if words.len() != rest.len() {
        e.push(Effect::Opaque(
            "`git config` with words computed at run time".into(),
        ));
        return;
    }
    let flag = |names: &[&str]| words.iter().any(|w| names.iter().any(|n| given(w, n)));
    // Option values are not keys: `--file F`, `--blob B`, `--type T`, `--default D`.
    let mut positional: Vec<&str> = Vec::new();
    let mut file: Option<&str> = None;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if given(w, "--file") || w == "-f" {
            file = match w.split_once('=') {
                Some((_, f)) => Some(f),
                None => {
                    i += 1;
                    words.get(i).copied()
                }
            };
        } else if ["--blob", "--type", "--default", "--comment"]
            .iter()
            .any(|o| given(w, o))
            && !w.contains('=')
        {
            i += 1;
        } else if !w.starts_with('-') {
            positional.push(w);
        }
        i += 1;
    }
    let global = flag(&["--global", "--system"]);
    let listing = flag(&[
        "--list",
        "--get-regexp",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-l",
    ]) || positional.first() == Some(&"list");
    let reading = listing
        || flag(&["--get", "--get-all", "--get-urlmatch"])
        || positional.first() == Some(&"get")
        || (positional.len() == 1
            && !flag(&[
                "--unset",
                "--unset-all",
                "--remove-section",
                "--rename-section",
                "--add",
                "--replace-all",
                "--edit",
                "-e",
            ]));
    if reading {
        let secret = positional.iter().any(|p| {
            let p = p.to_ascii_lowercase();
            p.contains("credential")
                || p.contains("token")
                || p.contains("password")
                || p.contains("extraheader")
        });
        if secret {
            e.push(Effect::CredentialAccess(
                "`git config` reads a credential setting".into(),
            ));
        } else if listing {
            e.push(Effect::EnvironmentDump(
                "`git config --list` prints every setting, which may include tokens in remote URLs or headers".into(),
            ));
        }
        if let Some(f) = file {
            e.push(Effect::Read(Word::lit(f)));
        }
        return;
    }
    if flag(&["--edit", "-e"]) {
        e.push(Effect::RunsCode(
            "`git config --edit` opens an editor".into(),
        ));
    }
    match (global, file) {
        (_, Some(f)) => e.push(Effect::Write(Word::lit(f))),
        (true, None) => e.push(Effect::SystemChange(
            "`git config --global` changes git for every repository of this user".into(),
        )),
        (false, None) => e.push(Effect::Write(Word::lit(".git/config"))),
    }
}
