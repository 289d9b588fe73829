//! Active airlock files: the user config, the project config and every rules file the session is
//! judged by. The agent must never change them (a rules file it could edit would let it approve
//! its own commands), wherever they live: inside `.airlock/`, elsewhere in the workspace, outside
//! it.
//!
//! This module owns the question "does this path land on an active file?" so that it is asked of
//! every reading of the path that [`super::resolve`] makes (the kernel's and the normalising
//! tools'), of the file the path points to through symlinks, of the link itself, and of a hard
//! link that shares the active file's inode.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::lower_components;
use super::walk::physical_or_lexical;

/// How a path touches an active airlock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "relation", content = "file", rename_all = "snake_case")]
pub enum ActiveFile {
    /// The path is the file (by name, through symlinks, or as a hard link to it).
    Is(PathBuf),
    /// The path is a directory the file lies under.
    Holds(PathBuf),
}

/// The physical forms of `files` (absolute paths): where each one's symlinks lead, and, when its
/// last component is a symlink, the link itself (replacing the link replaces the file).
pub(super) fn physical_forms(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for file in files {
        add(physical_or_lexical(file));
        if let (Some(parent), Some(name)) = (file.parent(), file.file_name()) {
            add(physical_or_lexical(parent).join(name));
        }
    }
    out
}

fn same_ci(a: &Path, b: &Path) -> bool {
    lower_components(a) == lower_components(b)
}

/// The active file any of `readings` (physical landing spots of one path) touches, if any.
/// Names are compared case-insensitively: on a case-insensitive filesystem `RULES.toml` is
/// `rules.toml`.
pub(super) fn touched(protected: &[PathBuf], readings: &[&Path]) -> Option<ActiveFile> {
    if protected.is_empty() {
        return None;
    }
    for reading in readings {
        if let Some(file) = protected.iter().find(|f| same_ci(reading, f)) {
            return Some(ActiveFile::Is(file.clone()));
        }
    }
    for reading in readings {
        let Ok(meta) = fs::metadata(reading) else {
            continue;
        };
        if !meta.is_file() || meta.nlink() < 2 {
            continue;
        }
        let hard_link = protected.iter().find(|f| {
            fs::metadata(f).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        });
        if let Some(file) = hard_link {
            return Some(ActiveFile::Is(file.clone()));
        }
    }
    for reading in readings {
        let reading = lower_components(reading);
        let holds = protected
            .iter()
            .find(|f| lower_components(f).starts_with(&reading) && fs::symlink_metadata(f).is_ok());
        if let Some(file) = holds {
            return Some(ActiveFile::Holds(file.clone()));
        }
    }
    None
}
