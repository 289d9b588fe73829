//! Expanding a glob in a shell word against the real filesystem, as bash would, with bounds on
//! how much it may look at: past them the word is unknown, which asks.

use std::path::{Path, PathBuf};

use crate::facts::glob::Glob;
use crate::facts::paths::PathContext;

/// Most names a glob may expand to before airlock gives up and treats it as unknown.
const MAX_GLOB_MATCHES: usize = 4096;

/// Most directory entries one glob may look at; a glob over a huge tree is treated as unknown.
const MAX_GLOB_SCAN: usize = 10_000;

/// What a glob names: the names bash would give the command now, and the glob itself from each
/// directory it reaches (`~/.ssh/id_*` from `~/.ssh`, `keys/*` from the directory a `ke*` matched),
/// which are judged for every name they could match there, now or by the time the command runs.
pub(super) struct Expansion {
    pub(super) names: Vec<String>,
    pub(super) patterns: Vec<String>,
}

/// Expands a glob the way bash would, against the filesystem. A component that starts with `.`
/// may match `..` in bash, so it also yields `.` and `..`. No match leaves the word as it is.
pub(super) fn expand_glob(ctx: &PathContext, base: &Path, pattern: &str) -> Option<Expansion> {
    let (mut prefix, rest) = if let Some(rest) = pattern.strip_prefix("~/") {
        (format!("{}/", ctx.home.display()), rest)
    } else if let Some(rest) = pattern.strip_prefix('/') {
        ("/".to_string(), rest)
    } else {
        (String::new(), pattern)
    };
    if pattern.starts_with('~') && !pattern.starts_with("~/") {
        return Some(Expansion {
            names: vec![pattern.to_string()],
            patterns: Vec::new(),
        });
    }
    if prefix.ends_with("//") {
        prefix.pop();
    }
    let mut candidates = vec![prefix];
    let mut patterns = Vec::new();
    let mut scanned = 0usize;
    let components: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
    for (at, component) in components.iter().copied().enumerate() {
        let has_glob = component.contains(['*', '?', '[']);
        // Compiled once for every directory and name it is tested against. One too large to
        // compile matches every name: a glob that matches more is judged on more.
        let glob = has_glob.then(|| Glob::path(component).ok()).flatten();
        let matches = |name: &str| glob.as_ref().is_none_or(|g| g.is_match(name));
        if has_glob {
            let tail = components[at..].join("/");
            patterns.extend(candidates.iter().map(|c| format!("{c}{tail}")));
        }
        let mut next = Vec::new();
        for candidate in &candidates {
            if !has_glob {
                next.push(format!("{candidate}{component}/"));
                continue;
            }
            let dir: PathBuf = if candidate.is_empty() {
                base.to_path_buf()
            } else if candidate.starts_with('/') {
                PathBuf::from(candidate)
            } else {
                base.join(candidate)
            };
            if component.starts_with('.') {
                for special in [".", ".."] {
                    if matches(special) {
                        next.push(format!("{candidate}{special}/"));
                    }
                }
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                scanned += 1;
                if scanned > MAX_GLOB_SCAN {
                    return None;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !component.starts_with('.') {
                    continue;
                }
                if matches(&name) {
                    next.push(format!("{candidate}{name}/"));
                    if next.len() > MAX_GLOB_MATCHES {
                        return None;
                    }
                }
            }
        }
        candidates = next;
    }
    let matched: Vec<String> = candidates
        .into_iter()
        .map(|c| {
            let trimmed = c.trim_end_matches('/');
            if trimmed.is_empty() {
                "/".to_string()
            } else {
                trimmed.to_string()
            }
        })
        .collect();
    let names = if matched.is_empty() {
        vec![pattern.to_string()]
    } else {
        matched
    };
    Some(Expansion { names, patterns })
}
