//! Checks of one simple command that need more than its program's effects: what the filesystem
//! around it says. A `cd` into another process's `/proc` entry, a git command in a repository
//! whose own config runs programs, and a program name that PATH finds in a place the agent can
//! write, and a link made to credential material. Each returns findings; the bash assessment
//! files them under the command's part.

use crate::facts::paths::{self, PathContext};
use crate::facts::programs::links::{NewLink, Placement, Source, link_targets};
use crate::facts::shell::{Cwd, SimpleCommand, Word};

use super::judge::{self, Access, Finding, Target};
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;

/// Every finding these checks have about `cmd`.
pub fn findings(ctx: &PathContext, cmd: &SimpleCommand) -> Vec<Finding> {
    let mut out = enters_other_process(ctx, cmd);
    out.extend(repository_runs_programs(ctx, cmd));
    out.extend(found_in_writable_place(ctx, cmd));
    out.extend(links_to_credentials(ctx, cmd));
    out
}

/// Names bash runs itself, whatever PATH holds.
const BASH_BUILTINS: &[&str] = &[
    ":", ".", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
    "complete", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
    "local", "logout", "popd", "printf", "pushd", "pwd", "read", "readonly", "return", "set",
    "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset",
    "ulimit", "umask", "unalias", "unset", "wait",
];

/// `cd` reads nothing itself, but `cd /proc/$PPID && cat environ` reads another process's
/// environment through where it lands, and what follows is relative to a place airlock only
/// knows as "computed". A change of directory into another process's `/proc` entry is refused
/// like the read it prepares.
fn enters_other_process(ctx: &PathContext, cmd: &SimpleCommand) -> Vec<Finding> {
    if !matches!(
        cmd.argv.first().and_then(Word::as_lit),
        Some("cd" | "pushd")
    ) {
        return Vec::new();
    }
    cmd.argv[1..]
        .iter()
        .filter_map(|word| match judge::target(ctx, &cmd.cwd, word) {
            Target::Paths(paths) => paths
                .iter()
                .map(|p| judge::judge(ctx, Access::Read, p))
                .find(|f| f.code == ReasonCode::CredentialMaterial),
            Target::Unknown(_) => judge::judge_dynamic(word.display()),
        })
        .collect()
}

/// A git command in a repository whose own config makes git run programs (see
/// [`super::gitconfig`]) asks, naming each setting.
fn repository_runs_programs(ctx: &PathContext, cmd: &SimpleCommand) -> Vec<Finding> {
    if cmd.argv.first().and_then(Word::as_lit) != Some("git") {
        return Vec::new();
    }
    let Cwd::Known(cwd) = &cmd.cwd else {
        return Vec::new();
    };
    // `git -C DIR` runs in DIR (relative ones add up); a computed one is judged elsewhere.
    let mut dir = cwd.clone();
    let mut words = cmd.argv[1..].iter();
    while let Some(w) = words.next() {
        match w.as_lit() {
            Some("-C") => match words.next().and_then(Word::as_lit) {
                Some(d) => dir = paths::resolve(ctx, &dir, d).path,
                None => return Vec::new(),
            },
            Some(o) if o.starts_with('-') => {}
            _ => break,
        }
    }
    let found = super::gitconfig::program_settings(&dir);
    let ask = |message: String| Finding {
        ruling: Ruling::Ask,
        code: ReasonCode::ConfigInjection,
        risk: Risk::Dangerous,
        message,
    };
    let mut out: Vec<Finding> = found
        .settings
        .iter()
        .map(|setting| {
            let shown = paths::resolve(ctx, &ctx.workspace, &setting.file.to_string_lossy());
            ask(format!(
                "the repository's git config ({}) sets `{}` to `{}`: git runs that program",
                judge::show(ctx, &shown),
                setting.key,
                setting.value
            ))
        })
        .collect();
    if let Some(why) = &found.unreadable {
        out.push(ask(format!(
            "the repository's git config cannot be checked for programs git would run: {why}"
        )));
    }
    out
}

/// A bare program name that PATH finds first in the workspace or a temp dir runs a file the
/// agent can write (a planted `bin/rg`).
fn found_in_writable_place(ctx: &PathContext, cmd: &SimpleCommand) -> Option<Finding> {
    let name = cmd.argv.first().and_then(Word::as_lit)?;
    if name.contains('/') || BASH_BUILTINS.contains(&name) {
        return None;
    }
    let found = ctx.program_in_writable_place(name)?;
    let shown = paths::resolve(ctx, &ctx.workspace, &found.to_string_lossy());
    Some(Finding {
        ruling: Ruling::Ask,
        code: ReasonCode::RunsCode,
        risk: Risk::Dangerous,
        message: format!(
            "`{name}` is found first at {} (through PATH), a place the agent can write: it runs that file",
            judge::show(ctx, &shown)
        ),
    })
}

/// A link to credential material is judged as reading it: `ln -s ~/.ssh/id_rsa key` leaves the
/// key one `cat key` away, so the deny `cat ~/.ssh/id_rsa` gets carries over, naming the link.
/// Nothing else does: making a link reads nothing, and a later path through the link is judged
/// where it is used. A symbolic link's relative content is read from the link's own directory.
fn links_to_credentials(ctx: &PathContext, cmd: &SimpleCommand) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for link in link_targets(cmd) {
        let (target, from_link_dir) = match &link.source {
            Source::Symlink(w) => (w, true),
            Source::Same(w) => (w, false),
            Source::Moved(_) | Source::CopiedLinks(_) => continue,
        };
        let relative = target.as_lit().is_some_and(|v| !v.starts_with(['/', '~']));
        let bases = if from_link_dir && relative {
            link_dirs(ctx, &cmd.cwd, &link)
        } else {
            vec![cmd.cwd.clone()]
        };
        let at = link.at.display();
        // The first place the link may be made in that gives a deny speaks for the link.
        for base in &bases {
            let findings: Vec<Finding> = match judge::target(ctx, base, target) {
                Target::Paths(paths) => paths
                    .iter()
                    .map(|p| judge::judge(ctx, Access::Read, p))
                    .filter(|f| f.ruling == Ruling::Deny)
                    .collect(),
                Target::Unknown(_) => judge::judge_dynamic(target.display()).into_iter().collect(),
            };
            for mut f in findings.iter().cloned() {
                f.message = format!("{} (the command makes a link to it at `{at}`)", f.message);
                if !out.contains(&f) {
                    out.push(f);
                }
            }
            if !findings.is_empty() {
                break;
            }
        }
    }
    out
}

/// The directories a new symbolic link may be made in: inside `at`, or beside it as `at`, as
/// its placement allows, the likelier first (inside an existing directory, else beside). Empty
/// when they are only known at run time.
fn link_dirs(ctx: &PathContext, cwd: &Cwd, link: &NewLink) -> Vec<Cwd> {
    let (Cwd::Known(cwd), Some(at)) = (cwd, link.at.as_lit()) else {
        return Vec::new();
    };
    let inside = || Cwd::Known(paths::resolve(ctx, cwd, at).path);
    let beside = || {
        let dir = match at.trim_end_matches('/').rsplit_once('/') {
            Some(("", _)) => "/",
            Some((dir, _)) => dir,
            None => ".",
        };
        Cwd::Known(paths::resolve(ctx, cwd, dir).path)
    };
    match link.placement {
        Placement::Inside => vec![inside()],
        Placement::EitherOrInside if at.ends_with('/') => vec![inside()],
        Placement::Exactly => vec![beside()],
        Placement::EitherOrInside => match inside() {
            Cwd::Known(dir) if dir.is_dir() => vec![Cwd::Known(dir), beside()],
            inside => vec![beside(), inside],
        },
    }
}
