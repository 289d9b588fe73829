//! Path facts for the approval gate.
//!
//! Every tool call that names a file goes through [`resolve`], which turns the
//! raw argument into the place the call would actually touch: `~` expanded,
//! relative paths anchored at the call's working directory, `.`/`..` handled
//! the way the kernel handles them (physically, following symlinks), and the
//! result classified by [`Location`] and by every [`Sensitivity`] that applies.
//!
//! This module owns those facts so that policy code never compares path
//! strings itself: string prefixes, `..` tricks, case variants and symlinks
//! planted in the workspace are exactly how an agent would slip a write past
//! a gate, so they are handled once, here, and tested here.
//!
//! Two readings of a path exist in practice: the kernel's (a `..` after a
//! symlink climbs out of the link's *target*) and that of tools which
//! normalise lexically before opening (a `..` cancels the link's *name*).
//! When the two land in different places, [`resolve`] reports the less
//! trusted landing spot and the union of both sets of sensitivities, so
//! neither reading can be used to get a path approved that the other would
//! have flagged.

mod active;
mod pattern;
pub mod planned;
mod sensitivity;
mod unreadable;
mod walk;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use serde::{Serialize, Serializer};

pub use active::ActiveFile;
pub use sensitivity::{Sensitivity, looks_like_private_key};
use sensitivity::{classify, sniff};
pub use unreadable::{Listed, UNREADABLE, unreadable_places, unreadable_places_and_listed};
use walk::{Walk, expand, lexical_normalize, physical_or_lexical, walk};

/// Character devices that are harmless to read or write.
const SAFE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
];

/// The user's home directory (`$HOME`, or `/` if unset).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The fixed places a path is judged against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathContext {
    /// The agent's workspace root, canonical.
    pub workspace: PathBuf,
    /// The user's home directory (physical where it exists).
    pub home: PathBuf,
    /// Scratch directories (physical where they exist).
    pub temp_dirs: Vec<PathBuf>,
    /// airlock's own state directory (physical where it exists).
    pub state_dir: PathBuf,
    /// The config and rules files in force, physical (see [`PathContext::with_protected_files`]).
    pub protected_files: Vec<PathBuf>,
    /// Where commands named without a slash are looked up, in order (`$PATH` as the commands
    /// inherit it; relative entries are taken from the workspace, where commands start).
    pub program_dirs: Vec<PathBuf>,
}

impl PathContext {
    /// Builds a context. The workspace must exist (it is canonicalized);
    /// home and the state directory are resolved physically as far as they
    /// exist. Temp dirs are `/tmp`, `/var/tmp` and `$TMPDIR` when it is set
    /// to an absolute path.
    pub fn new(workspace: &Path, home: &Path, state_dir: &Path) -> std::io::Result<PathContext> {
        let workspace = fs::canonicalize(workspace)?;
        let anchor = |p: &Path| -> PathBuf {
            let absolute = if p.is_absolute() {
                p.to_path_buf()
            } else {
                workspace.join(p)
            };
            physical_or_lexical(&absolute)
        };
        let home = anchor(home);
        let state_dir = anchor(state_dir);

        let mut candidates = vec![PathBuf::from("/tmp"), PathBuf::from("/var/tmp")];
        if let Some(tmpdir) = std::env::var_os("TMPDIR") {
            let tmpdir = PathBuf::from(tmpdir);
            if tmpdir.is_absolute() {
                candidates.push(tmpdir);
            }
        }
        let mut temp_dirs: Vec<PathBuf> = Vec::new();
        for candidate in candidates {
            let resolved = physical_or_lexical(&candidate);
            // A temp dir of `/` would make every path "Temp".
            if depth(&resolved) > 0 && !temp_dirs.contains(&resolved) {
                temp_dirs.push(resolved);
            }
        }

        // A workspace inside /tmp has other projects for neighbours: that temp dir is not scratch
        // space to it, so writing next to the workspace is judged as writing outside it.
        temp_dirs.retain(|t| !workspace.starts_with(t));

        let program_dirs = std::env::var_os("PATH")
            .map(|path| {
                std::env::split_paths(&path)
                    .map(|dir| {
                        if dir.is_absolute() {
                            dir
                        } else {
                            // An empty entry means the current directory, as `.` does.
                            workspace.join(dir)
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(PathContext {
            workspace,
            home,
            temp_dirs,
            state_dir,
            protected_files: Vec::new(),
            program_dirs,
        })
    }

    /// The same context, with `files` (the active config and rules files; relative ones are
    /// taken relative to the workspace) as files the agent may never change. Each is kept in its
    /// physical forms: through its symlinks, and the last link itself.
    pub fn with_protected_files(mut self, files: &[PathBuf]) -> PathContext {
        let absolute: Vec<PathBuf> = files
            .iter()
            .map(|f| {
                if f.is_absolute() {
                    f.clone()
                } else {
                    self.workspace.join(f)
                }
            })
            .collect();
        for form in active::physical_forms(&absolute) {
            if !self.protected_files.contains(&form) {
                self.protected_files.push(form);
            }
        }
        self
    }
}

impl PathContext {
    /// Where a command named `name` (no slash) would be found, if the first match on the search
    /// path is a place the agent can write: the workspace or a temp dir. Planting `bin/rg` and
    /// running `rg` would otherwise run the agent's program under a read-only name.
    pub fn program_in_writable_place(&self, name: &str) -> Option<PathBuf> {
        for dir in &self.program_dirs {
            let candidate = dir.join(name);
            let Ok(meta) = fs::metadata(&candidate) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let physical = physical_or_lexical(&candidate);
            return match locate(self, &physical) {
                Location::Workspace | Location::Temp => Some(physical),
                _ => None,
            };
        }
        None
    }
}

/// True when the table (by name and place, not content) marks `path` as something a sandboxed
/// command may never read: see [`UNREADABLE`].
pub fn unreadable_by_name(ctx: &PathContext, path: &Path) -> bool {
    let mut found = BTreeSet::new();
    // None of the unreadable kinds depends on what the file is, only on its name and place.
    sensitivity::classify_by_name(ctx, path, &mut found);
    found.iter().any(|s| UNREADABLE.contains(s))
}

/// Where a tool call's path argument really points, and what that means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedPath {
    /// The argument as the agent wrote it.
    pub raw: String,
    /// The absolute, physically resolved landing spot.
    #[serde(serialize_with = "serialize_lossy")]
    pub path: PathBuf,
    pub location: Location,
    /// Every category that applies, sorted, without duplicates.
    pub sensitivity: Vec<Sensitivity>,
    /// The path reads as inside the workspace but lands outside it.
    pub is_symlink_escape: bool,
    pub exists: bool,
    /// The active config or rules file this path is or holds, in any reading of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_file: Option<ActiveFile>,
}

/// Coarse trust zone of a resolved path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    Workspace,
    Temp,
    /// `/dev/null`, `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/dev/zero`,
    /// `/dev/urandom`, `/dev/random` (never a terminal: see `Sensitivity::Terminal`).
    Device,
    AirlockState,
    Outside,
}

impl Location {
    /// Higher is less trusted; used to pick between two readings of a path.
    fn distrust(self) -> u8 {
        match self {
            Location::Device => 0,
            Location::Workspace => 1,
            Location::Temp => 2,
            Location::Outside => 3,
            Location::AirlockState => 4,
        }
    }
}

/// Resolves `raw` (as written in a tool call) against `cwd` (the call's
/// working directory; a relative `cwd` is taken relative to the workspace).
pub fn resolve(ctx: &PathContext, cwd: &Path, raw: &str) -> ResolvedPath {
    resolve_as(ctx, cwd, raw, Reading::Name)
}

/// Resolves `raw` as a shell glob (`~/.ssh/id_*`): as far as it names real directories it is
/// resolved like any path, and what its glob could name is judged too (see the `pattern`
/// module), so it carries the sensitivity and the place of a credential it may match, wherever
/// one exists.
pub fn resolve_pattern(ctx: &PathContext, cwd: &Path, raw: &str) -> ResolvedPath {
    resolve_as(ctx, cwd, raw, Reading::Pattern)
}

/// How the names in a path are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// As the names they are.
    Name,
    /// As a shell glob: for every name it could match.
    Pattern,
}

fn resolve_as(ctx: &PathContext, cwd: &Path, raw: &str, reading: Reading) -> ResolvedPath {
    let classify = |path: &Path, out: &mut BTreeSet<Sensitivity>| {
        classify(ctx, path, out);
        if reading == Reading::Pattern {
            pattern::classify(ctx, path, out);
        }
    };
    let cwd = if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        ctx.workspace.join(cwd)
    };
    let cwd = physical_or_lexical(&cwd);
    let expanded = expand(ctx, &cwd, raw);
    let lexical = lexical_normalize(&expanded);

    // The kernel's reading, and the reading of tools that normalise first.
    let kernel = walk(&expanded, Some(&cwd));
    let normalised = walk(&lexical, Some(&cwd));

    let mut sensitivity = BTreeSet::new();
    classify(&lexical, &mut sensitivity);

    let lexically_inside = lexical.starts_with(&ctx.workspace);
    let mut readings = vec![lexical.clone()];
    for reading in [&kernel, &normalised] {
        if let Walk::Resolved(p) = reading {
            readings.push(p.clone());
        }
    }
    let active_file = active::touched(
        &ctx.protected_files,
        &readings.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
    );
    let (path, location, exists, is_symlink_escape) = match (kernel, normalised) {
        (Walk::Resolved(kernel), Walk::Resolved(normalised)) => {
            classify(&kernel, &mut sensitivity);
            sniff(&kernel, &mut sensitivity);
            if normalised != kernel {
                classify(&normalised, &mut sensitivity);
                sniff(&normalised, &mut sensitivity);
            }
            let escapes = lexically_inside
                && !(kernel.starts_with(&ctx.workspace) && normalised.starts_with(&ctx.workspace));
            let kernel_location = locate_as(ctx, &kernel, reading);
            let normalised_location = locate_as(ctx, &normalised, reading);
            let (path, location) = if normalised_location.distrust() > kernel_location.distrust() {
                (normalised, normalised_location)
            } else {
                (kernel, kernel_location)
            };
            let exists = fs::symlink_metadata(&path).is_ok();
            (path, location, exists, escapes)
        }
        (kernel, normalised) => {
            // Too many symlinks: the call would fail with ELOOP, or worse,
            // be retargeted between approval and execution. Trust nothing.
            for reading in [kernel, normalised] {
                if let Walk::Resolved(p) = reading {
                    classify(&p, &mut sensitivity);
                }
            }
            (lexical, Location::Outside, false, lexically_inside)
        }
    };

    ResolvedPath {
        raw: raw.to_string(),
        path,
        location,
        sensitivity: sensitivity.into_iter().collect(),
        is_symlink_escape,
        exists,
        active_file,
    }
}

/// Where `path` lands; a glob that could name airlock's state is taken to be there.
fn locate_as(ctx: &PathContext, path: &Path, reading: Reading) -> Location {
    match locate(ctx, path) {
        Location::Outside | Location::Temp | Location::Workspace
            if reading == Reading::Pattern
                && ctx.state_dir.is_absolute()
                && pattern::may_be_inside(path, &ctx.state_dir) =>
        {
            Location::AirlockState
        }
        location => location,
    }
}

fn locate(ctx: &PathContext, path: &Path) -> Location {
    if is_safe_device(path) {
        Location::Device
    } else if ctx.state_dir.is_absolute() && starts_with_ci(path, &ctx.state_dir) {
        // Case-insensitive: on macOS `~/.../AIRLOCK` is the state dir.
        Location::AirlockState
    } else if ctx.workspace.is_absolute() && path.starts_with(&ctx.workspace) {
        Location::Workspace
    } else if ctx
        .temp_dirs
        .iter()
        .any(|t| t.is_absolute() && depth(t) > 0 && path.starts_with(t))
    {
        Location::Temp
    } else {
        Location::Outside
    }
}

fn is_safe_device(path: &Path) -> bool {
    let Some(s) = path.to_str() else {
        return false;
    };
    SAFE_DEVICES.contains(&s)
        || s.strip_prefix("/dev/fd/")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Lowercased normal components (no root).
fn lower_components(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect()
}

fn starts_with_ci(path: &Path, prefix: &Path) -> bool {
    lower_components(path).starts_with(&lower_components(prefix))
}

fn depth(path: &Path) -> usize {
    path.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
}

fn serialize_lossy<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

#[cfg(test)]
mod tests;
