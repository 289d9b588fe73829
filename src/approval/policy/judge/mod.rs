//! Judging paths: what reading, writing or deleting a resolved path calls for, and how a shell
//! word becomes the paths it names (tilde, globs expanded against the real filesystem).

use std::path::Path;

use crate::facts::paths::{self, Location, PathContext, ResolvedPath, Sensitivity};
use crate::facts::shell::{Cwd, Word};
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;

mod glob;

use glob::{Expansion, expand_glob};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Names and metadata only (`stat`, `ls`): a raw disk it names is not read.
    Inspect,
    Write,
    Delete,
}

/// One finding about a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub ruling: Ruling,
    pub code: ReasonCode,
    pub risk: Risk,
    pub message: String,
}

fn finding(ruling: Ruling, code: ReasonCode, risk: Risk, message: String) -> Finding {
    Finding {
        ruling,
        code,
        risk,
        message,
    }
}

/// A shell word turned into the paths it names, or why that is not possible.
pub enum Target {
    Paths(Vec<ResolvedPath>),
    Unknown(String),
}

pub fn target(ctx: &PathContext, cwd: &Cwd, word: &Word) -> Target {
    let (value, glob) = match word {
        Word::Lit { value, glob, .. } => (value.as_str(), *glob),
        // `<(cmd)` is a pipe (`/dev/fd/N`); the command inside is judged where it stands.
        Word::Dynamic { text, .. } if is_process_substitution(text) => {
            return Target::Paths(vec![paths::resolve(ctx, &ctx.workspace, "/dev/fd/63")]);
        }
        Word::Dynamic { text, .. } => {
            return Target::Unknown(format!("`{text}` is only known when the command runs"));
        }
    };
    let absolute = value.starts_with('/') || value.starts_with('~');
    let base = match cwd {
        Cwd::Known(dir) => dir.clone(),
        Cwd::Unknown if absolute => ctx.workspace.clone(),
        Cwd::Unknown => {
            return Target::Unknown(format!(
                "`{value}` is relative to a directory airlock could not follow (a `cd` to a computed or conditional place)"
            ));
        }
    };
    if !glob {
        return Target::Paths(vec![paths::resolve(ctx, &base, value)]);
    }
    match expand_glob(ctx, &base, value) {
        Some(expansion) => Target::Paths(glob_paths(ctx, &base, value, expansion)),
        None => Target::Unknown(format!("`{value}` matches too many files to check")),
    }
}

/// The paths a glob names: what it matches now (or itself, matching nothing), and itself from
/// each directory it reaches where it could name something a sandboxed command may never read
/// (or airlock's state) that no match already shows in the same place. `cat ~/.ssh/id_*` is a
/// read of a private key whether `~/.ssh` holds one, only `id_rsa.pub`, or nothing.
fn glob_paths(
    ctx: &PathContext,
    base: &Path,
    value: &str,
    expansion: Expansion,
) -> Vec<ResolvedPath> {
    let guarded = |p: &ResolvedPath| -> Vec<Sensitivity> {
        p.sensitivity
            .iter()
            .copied()
            .filter(|s| paths::UNREADABLE.contains(s))
            .collect()
    };
    let mut found: Vec<ResolvedPath> = expansion
        .names
        .iter()
        .map(|n| {
            if n == value {
                paths::resolve_pattern(ctx, base, n)
            } else {
                paths::resolve(ctx, base, n)
            }
        })
        .collect();
    for pattern in &expansion.patterns {
        let p = paths::resolve_pattern(ctx, base, pattern);
        let wanted = guarded(&p);
        if wanted.is_empty() && p.location != Location::AirlockState {
            continue;
        }
        let shown = found
            .iter()
            .any(|f| f.location == p.location && wanted.iter().all(|s| f.sensitivity.contains(s)));
        if !shown {
            found.push(p);
        }
    }
    found
}

/// The whole word is one process substitution: `<(` or `>(`, and the parenthesis it opens
/// closes at the word's last character (anything else, or any doubt, is not).
fn is_process_substitution(text: &str) -> bool {
    let Some(body) = text.strip_prefix("<(").or_else(|| text.strip_prefix(">(")) else {
        return false;
    };
    let mut depth = 1usize;
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1 == body.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// How a path is shown in reasons: relative inside the workspace, `~/...` under home.
pub fn show(ctx: &PathContext, path: &ResolvedPath) -> String {
    if let Ok(rel) = path.path.strip_prefix(&ctx.workspace) {
        let rel = rel.display().to_string();
        return if rel.is_empty() { ".".into() } else { rel };
    }
    if let Ok(rel) = path.path.strip_prefix(&ctx.home) {
        return format!("~/{}", rel.display());
    }
    path.path.display().to_string()
}

fn describe_all(sens: &[Sensitivity]) -> String {
    let words: Vec<&str> = sens.iter().map(Sensitivity::describe).collect();
    words.join(", ")
}

fn has(path: &ResolvedPath, any: &[Sensitivity]) -> bool {
    path.sensitivity.iter().any(|s| any.contains(s))
}

/// `/proc/<pid>/{environ,mem,root,cwd,fd,...}` of a process other than airlock's own tool: its
/// environment, memory, or its view of the filesystem. `pid` may be unknown (`/proc/$$/environ`).
fn other_process_entry(text: &str) -> bool {
    let mut parts = text.trim_start_matches('/').split('/');
    if parts.next() != Some("proc") {
        return false;
    }
    let Some(pid) = parts.next() else {
        return false;
    };
    if matches!(pid, "self" | "thread-self") {
        return false;
    }
    let pid_like = !pid.is_empty()
        && (pid.chars().all(|c| c.is_ascii_digit())
            || pid.contains(['$', '*', '?', '[', '{', '`']));
    let entry = parts.next().unwrap_or("");
    // The directory itself counts: `cd /proc/$PPID && cat environ` reads through it.
    pid_like
        && matches!(
            entry,
            "" | "environ"
                | "mem"
                | "root"
                | "cwd"
                | "fd"
                | "map_files"
                | "maps"
                | "auxv"
                | "task"
                | "cmdline"
                | "*"
        )
}

/// A path that is only known at run time but is clearly inside another process's `/proc` entry.
pub fn judge_dynamic(text: &str) -> Option<Finding> {
    other_process_entry(text).then(|| {
        finding(
            Ruling::Deny,
            ReasonCode::CredentialMaterial,
            Risk::Dangerous,
            format!("reads another process's environment, memory or files: {text}"),
        )
    })
}

/// What touching one resolved path calls for.
pub fn judge(ctx: &PathContext, access: Access, path: &ResolvedPath) -> Finding {
    if let Some(tampers) = super::active::tampering(ctx, access, path) {
        return tampers;
    }
    let shown = show(ctx, path);
    if other_process_entry(&path.raw) || other_process_entry(&path.path.to_string_lossy()) {
        return finding(
            Ruling::Deny,
            ReasonCode::CredentialMaterial,
            Risk::Dangerous,
            format!(
                "touches another process's environment, memory or files: {}",
                path.raw
            ),
        );
    }
    let via = if path.is_symlink_escape {
        format!(" (`{}` leads there through a symlink)", path.raw)
    } else {
        String::new()
    };
    if let Some(f) = credential_material(access, path, &shown, &via) {
        return f;
    }
    // Looking at a disk's device node (`stat -c %t /dev/sda`, `ls -l /dev/sda`: its name, type,
    // numbers and owner) reads nothing of what the disk holds.
    if access == Access::Inspect && has(path, &[Sensitivity::DiskDevice]) {
        return finding(
            Ruling::Allow,
            ReasonCode::ReadOnly,
            Risk::Safe,
            format!("looks at the device node {shown}, not at what it holds"),
        );
    }
    match access {
        Access::Read | Access::Inspect => judge_read(path, &shown, &via),
        Access::Write | Access::Delete => judge_change(ctx, access, path, &shown, &via),
    }
}

/// Private keys, credential stores and other processes' environments are refused whatever the
/// access; a raw disk is refused for reading (its contents are everyone's files).
fn credential_material(
    access: Access,
    path: &ResolvedPath,
    shown: &str,
    via: &str,
) -> Option<Finding> {
    use Sensitivity::*;
    let credential = [PrivateKey, CredentialStore, OtherProcessEnvironment];
    if has(path, &credential) || (access == Access::Read && has(path, &[DiskDevice])) {
        let what = describe_all(
            &path
                .sensitivity
                .iter()
                .copied()
                .filter(|s| credential.contains(s) || *s == DiskDevice)
                .collect::<Vec<_>>(),
        );
        let verb = match access {
            Access::Read | Access::Inspect => "reads",
            Access::Write => "writes",
            Access::Delete => "deletes",
        };
        return Some(finding(
            Ruling::Deny,
            ReasonCode::CredentialMaterial,
            Risk::Dangerous,
            format!("{verb} {what}: {shown}{via}"),
        ));
    }
    None
}

/// A terminal device, read or written: asks, whatever the mode or the rules say elsewhere
/// (the sandbox refuses it too; unconfined, it would reach the screen a decision is made on).
fn touches_terminal(
    access: Access,
    path: &ResolvedPath,
    shown: &str,
    via: &str,
) -> Option<Finding> {
    if !has(path, &[Sensitivity::Terminal]) {
        return None;
    }
    let verb = match access {
        Access::Read | Access::Inspect => "reads from",
        Access::Write => "writes to",
        Access::Delete => "deletes",
    };
    Some(finding(
        Ruling::Ask,
        ReasonCode::TouchesTerminal,
        Risk::Dangerous,
        format!(
            "{verb} a terminal: {shown}{via} (it could draw on or type into the screen you approve on)"
        ),
    ))
}

/// Reading (or inspecting) a path that is not credential material.
fn judge_read(path: &ResolvedPath, shown: &str, via: &str) -> Finding {
    use Sensitivity::*;
    if let Some(terminal) = touches_terminal(Access::Read, path, shown, via) {
        return terminal;
    }
    match path.location {
        Location::Device => finding(
            Ruling::Allow,
            ReasonCode::ReadOnly,
            Risk::Safe,
            format!("reads {shown}"),
        ),
        _ if has(path, &[ProcessEnvironment]) => finding(
            Ruling::Ask,
            ReasonCode::ReadsEnvironment,
            Risk::Mutating,
            format!("reads the process environment: {shown}{via}"),
        ),
        // Another project's (or the home's) `.env` holds that project's live keys: this
        // agent has no business reading them. Inside the workspace it is the user's own
        // project, so it asks.
        Location::Temp | Location::Outside if has(path, &[EnvFile]) => finding(
            Ruling::Deny,
            ReasonCode::CredentialMaterial,
            Risk::Dangerous,
            format!("reads an environment file outside the workspace: {shown}{via}"),
        ),
        _ if has(path, &[SecretFile, EnvFile]) => finding(
            Ruling::Ask,
            ReasonCode::ReadsSecret,
            Risk::Mutating,
            format!("reads {}: {shown}{via}", describe_all(&path.sensitivity)),
        ),
        Location::Workspace => finding(
            Ruling::Allow,
            ReasonCode::ReadOnly,
            Risk::Safe,
            format!("reads {shown} inside the workspace"),
        ),
        // The state database, its signing key, run logs and audit log: reading them is
        // how an agent would learn what to forge, so it is never asked, only refused.
        Location::AirlockState => finding(
            Ruling::Deny,
            ReasonCode::TampersWithAirlock,
            Risk::Dangerous,
            format!("reads airlock's own state (approvals, keys, logs): {shown}{via}"),
        ),
        Location::Temp | Location::Outside => finding(
            Ruling::Ask,
            ReasonCode::ReadsOutsideWorkspace,
            Risk::Mutating,
            format!("reads outside the workspace: {shown}{via}"),
        ),
    }
}

/// Writing or deleting a path that is not credential material, by where it is.
fn judge_change(
    ctx: &PathContext,
    access: Access,
    path: &ResolvedPath,
    shown: &str,
    via: &str,
) -> Finding {
    if let Some(terminal) = touches_terminal(access, path, shown, via) {
        return terminal;
    }
    let verb = if access == Access::Write {
        "writes"
    } else {
        "deletes"
    };
    match path.location {
        Location::Device => change_device(access, verb, path, shown),
        Location::AirlockState => finding(
            Ruling::Deny,
            ReasonCode::TampersWithAirlock,
            Risk::Dangerous,
            format!("{verb} airlock's own state (grants, audit log): {shown}{via}"),
        ),
        Location::Workspace => change_in_workspace(ctx, access, verb, path, shown),
        Location::Temp => change_in_temp(ctx, access, verb, path, shown, via),
        Location::Outside => change_outside(access, path, shown, via),
    }
}

/// A device: writing a terminal or `/dev/null` is nothing; a raw disk, or deleting a device
/// file, is refused.
fn change_device(access: Access, verb: &str, path: &ResolvedPath, shown: &str) -> Finding {
    use Sensitivity::*;
    match path.location {
        Location::Device if has(path, &[DiskDevice]) => finding(
            Ruling::Deny,
            ReasonCode::DestroysOutsideWorkspace,
            Risk::Dangerous,
            format!("{verb} a raw disk or memory device: {shown}"),
        ),
        Location::Device if access == Access::Write => finding(
            Ruling::Allow,
            ReasonCode::ReadOnly,
            Risk::Safe,
            format!("writes to {shown}"),
        ),
        _ => finding(
            Ruling::Deny,
            ReasonCode::DestroysOutsideWorkspace,
            Risk::Dangerous,
            format!("deletes a device file: {shown}"),
        ),
    }
}

/// Inside the workspace every change asks, louder for the files that run code or hold secrets;
/// airlock's own project configuration is refused.
fn change_in_workspace(
    ctx: &PathContext,
    access: Access,
    verb: &str,
    path: &ResolvedPath,
    shown: &str,
) -> Finding {
    use Sensitivity::*;
    match path.location {
        Location::Workspace if has(path, &[AirlockConfig]) => finding(
            Ruling::Deny,
            ReasonCode::TampersWithAirlock,
            Risk::Dangerous,
            format!(
                "{verb} airlock's project configuration ({shown}); only the user changes airlock's rules"
            ),
        ),
        Location::Workspace if path.path == ctx.workspace => finding(
            Ruling::Ask,
            if access == Access::Write {
                ReasonCode::WritesWorkspace
            } else {
                ReasonCode::DeletesInWorkspace
            },
            Risk::Dangerous,
            format!("{verb} the whole workspace"),
        ),
        Location::Workspace
            if has(
                path,
                &[
                    GitInternals,
                    CiConfig,
                    Manifest,
                    CodeRunningConfig,
                    EnvFile,
                    SecretFile,
                    PrivateKey,
                ],
            ) =>
        {
            finding(
                Ruling::Ask,
                ReasonCode::WritesSensitiveFile,
                Risk::Mutating,
                format!("{verb} {}: {shown}", describe_all(&path.sensitivity)),
            )
        }
        Location::Workspace if access == Access::Delete => finding(
            Ruling::Ask,
            ReasonCode::DeletesInWorkspace,
            Risk::Dangerous,
            format!("deletes {shown} in the workspace"),
        ),
        _ => finding(
            Ruling::Ask,
            ReasonCode::WritesWorkspace,
            Risk::Mutating,
            format!("writes {shown} in the workspace"),
        ),
    }
}

/// A temporary directory: an ordinary file asks; a shell startup file, a system directory, a
/// credential store, git internals or the home itself found there is refused.
fn change_in_temp(
    ctx: &PathContext,
    access: Access,
    verb: &str,
    path: &ResolvedPath,
    shown: &str,
    via: &str,
) -> Finding {
    use Sensitivity::*;
    match path.location {
        Location::Temp
            if has(
                path,
                &[ShellStartup, SystemDir, CredentialStore, GitInternals],
            ) || path.path == ctx.home =>
        {
            finding(
                Ruling::Deny,
                if access == Access::Delete {
                    ReasonCode::DestroysOutsideWorkspace
                } else {
                    ReasonCode::WritesOutsideWorkspace
                },
                Risk::Dangerous,
                format!(
                    "{verb} {} outside the workspace: {shown}{via}",
                    describe_all(&path.sensitivity)
                ),
            )
        }
        _ => finding(
            Ruling::Ask,
            ReasonCode::WritesTemp,
            Risk::Mutating,
            format!("{verb} {shown} in a temporary directory, outside the workspace"),
        ),
    }
}

/// Anywhere else outside the workspace: refused.
fn change_outside(access: Access, path: &ResolvedPath, shown: &str, via: &str) -> Finding {
    let what = if path.sensitivity.is_empty() {
        String::new()
    } else {
        format!(", in {}", describe_all(&path.sensitivity))
    };
    let (code, lead) = if access == Access::Delete {
        (
            ReasonCode::DestroysOutsideWorkspace,
            "destroys data outside the workspace",
        )
    } else {
        (
            ReasonCode::WritesOutsideWorkspace,
            "writes outside the workspace",
        )
    };
    finding(
        Ruling::Deny,
        code,
        Risk::Dangerous,
        format!("{lead}{what}: {shown}{via}"),
    )
}

/// A path whose value is unknown: reading asks; writing or deleting asks and cannot be granted.
pub fn judge_unknown(access: Access, why: &str) -> Finding {
    match access {
        Access::Read | Access::Inspect => finding(
            Ruling::Ask,
            ReasonCode::UnknownPath,
            Risk::Mutating,
            format!("reads a path airlock cannot check: {why}"),
        ),
        Access::Write => finding(
            Ruling::Ask,
            ReasonCode::UnknownPath,
            Risk::Dangerous,
            format!("writes a path airlock cannot check: {why}"),
        ),
        Access::Delete => finding(
            Ruling::Ask,
            ReasonCode::UnknownPath,
            Risk::Dangerous,
            format!("deletes a path airlock cannot check: {why}"),
        ),
    }
}

/// Most directory entries a symlink scan looks at before it gives up.
const MAX_TREE_ENTRIES: usize = 20_000;

/// For a program that follows symlinks while it walks `root`: every symlink under it whose target
/// lies outside the workspace, resolved. `Err` when the tree is too large to check.
pub fn escaping_links(ctx: &PathContext, root: &ResolvedPath) -> Result<Vec<ResolvedPath>, String> {
    let mut found = Vec::new();
    if !root.path.is_dir() {
        return Ok(found);
    }
    let mut seen = std::collections::HashSet::new();
    let mut queue = vec![root.path.clone()];
    let mut entries = 0usize;
    while let Some(dir) = queue.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let Ok(list) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in list.flatten() {
            entries += 1;
            if entries > MAX_TREE_ENTRIES {
                return Err(format!(
                    "more than {MAX_TREE_ENTRIES} entries under {} to check for symlinks",
                    show(ctx, root)
                ));
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                let target = paths::resolve(ctx, &dir, &path.to_string_lossy());
                if target.location == Location::Workspace {
                    if target.path.is_dir() {
                        queue.push(target.path.clone());
                    }
                } else {
                    found.push(target);
                }
            } else if kind.is_dir() {
                queue.push(path);
            }
        }
    }
    Ok(found)
}
