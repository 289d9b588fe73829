//! What undoing calls would do (`plan`), and doing it (`apply`). Each path goes back to what
//! it was before the first undone call that changed it, but only if it is still what the last
//! undone call left: anything else (a later call, the user in their editor) is a conflict,
//! shown, and overwritten only when the person chooses to. Nothing is written through a link:
//! a path whose parent became a link is refused.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::objects::Objects;
use super::scan::Entry;
use super::{Change, History, Record, State};
use crate::protocol::{FileUndo, UndoAction, UndoPlan};

/// Lines of diff shown per file.
const DIFF_LINES: usize = 400;
/// Contents larger than this are not diffed line by line.
const DIFF_BYTES: usize = 2 << 20;

/// One path of a plan, with what undo writes there and what it found there.
struct Target {
    path: String,
    entry: Option<Entry>,
    /// What is there now (a file's content hashed, not kept).
    now: Option<Entry>,
    conflict: bool,
    not_kept: bool,
}

pub(super) fn plan(
    history: &History,
    records: &[Record],
    call_id: &str,
    and_later: bool,
) -> Result<UndoPlan, String> {
    compute(history, records, call_id, and_later).map(|(plan, _)| plan)
}

fn compute(
    history: &History,
    records: &[Record],
    call_id: &str,
    and_later: bool,
) -> Result<(UndoPlan, Vec<Target>), String> {
    let Some(at) = records.iter().rposition(|r| r.call_id == call_id) else {
        return Err(format!(
            "{call_id} changed nothing in the workspace that was kept, so there is nothing to undo"
        ));
    };
    let undone = if and_later {
        &records[at..]
    } else {
        &records[at..=at]
    };
    // Each path: what it was before the first undone change, and what the last one left.
    let mut paths: BTreeMap<&str, (Option<&Entry>, Option<&Entry>)> = BTreeMap::new();
    for record in undone {
        for change in &record.changes {
            paths
                .entry(change.path.as_str())
                .and_modify(|(_, left)| *left = change.after.as_ref())
                .or_insert((change.before.as_ref(), change.after.as_ref()));
        }
    }
    let workspace = history.workspace();
    let mut files = Vec::new();
    let mut targets = Vec::new();
    let mut not_kept = 0;
    for (path, (was, left)) in paths {
        if was == left {
            continue;
        }
        let now = entry_now(workspace, path);
        let conflict = match unsafe_parent(workspace, path) {
            Some(why) => Some(why),
            None if !same(now.as_ref(), left) => Some(match later_change(records, at, path) {
                Some(later) if !and_later => format!(
                    "changed again later by {} ({}); undo it too, or overwrite",
                    later.call_id, later.title
                ),
                _ => "changed since by someone else (not by a call airlock ran)".to_string(),
            }),
            None => None,
        };
        let lost = matches!(was, Some(Entry::File { hash: None, .. }));
        not_kept += usize::from(lost);
        let action = match (was, left) {
            (None, _) => UndoAction::Delete,
            (Some(_), None) => UndoAction::BringBack,
            _ => UndoAction::Restore,
        };
        files.push(FileUndo {
            path: path.to_string(),
            action,
            diff: diff_lines(&history.objects, workspace, path, now.as_ref(), was),
            conflict: conflict.clone(),
            not_kept: lost,
        });
        targets.push(Target {
            path: path.to_string(),
            entry: was.cloned(),
            now,
            conflict: conflict.is_some(),
            not_kept: lost,
        });
    }
    let mut notes = Vec::new();
    for record in undone {
        if !record.overlapped.is_empty() {
            notes.push(format!(
                "{} ran at the same time as {}: what it changed may include their changes",
                record.call_id,
                record.overlapped.join(", ")
            ));
        }
    }
    if not_kept > 0 {
        notes.push(format!(
            "{not_kept} file(s) were not kept (a large file, or a bulky build or ignored \
             directory): they cannot be brought back, and are left as they are"
        ));
    }
    notes.push(
        "writes to temp, network effects and anything outside the workspace are not undone".into(),
    );
    let calls: Vec<(String, String)> = undone
        .iter()
        .map(|r| (r.call_id.clone(), r.title.clone()))
        .collect();
    let digest = {
        let json = serde_json::to_vec(&(call_id, and_later, &calls, &files)).unwrap_or_default();
        crate::digest::hex(&Sha256::digest(&json))
    };
    Ok((
        UndoPlan {
            call_id: call_id.to_string(),
            and_later,
            calls,
            files,
            notes,
            digest,
        },
        targets,
    ))
}

/// The first record after `at` that changed `path`.
fn later_change<'a>(records: &'a [Record], at: usize, path: &str) -> Option<&'a Record> {
    records[at + 1..]
        .iter()
        .find(|r| r.changes.iter().any(|c| c.path == path))
}

/// Whether what is there now is what the undone calls left (a file kept by size only is
/// compared by size and mode).
fn same(now: Option<&Entry>, left: Option<&Entry>) -> bool {
    match (now, left) {
        (
            Some(Entry::File {
                mode: m1, size: s1, ..
            }),
            Some(Entry::File {
                mode: m2,
                size: s2,
                hash: None,
            }),
        ) => m1 == m2 && s1 == s2,
        (a, b) => a == b,
    }
}

/// What is at `rel` now: a file with its content's hash (read, not kept).
fn entry_now(workspace: &Path, rel: &str) -> Option<Entry> {
    let path = workspace.join(rel);
    let meta = fs::symlink_metadata(&path).ok()?;
    let kind = meta.file_type();
    let mode = meta.permissions().mode() & 0o7777;
    if kind.is_symlink() {
        let target = fs::read_link(&path).ok()?;
        Some(Entry::Link {
            target: target.to_string_lossy().into_owned(),
        })
    } else if kind.is_dir() {
        Some(Entry::Dir { mode })
    } else if kind.is_file() {
        Some(Entry::File {
            mode,
            size: meta.len(),
            hash: Objects::hash_of(&path).ok(),
        })
    } else {
        None
    }
}

/// Why `rel` may not be written: a part of it leaves the workspace, or a directory above it
/// is a link now (writing through it could land outside the workspace).
fn unsafe_parent(workspace: &Path, rel: &str) -> Option<String> {
    let path = Path::new(rel);
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Some("its path leaves the workspace; it is not touched".into());
    }
    let mut at = workspace.to_path_buf();
    let parts: Vec<_> = path.components().collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        if let Ok(meta) = fs::symlink_metadata(&at)
            && meta.file_type().is_symlink()
        {
            return Some(format!(
                "{} is a link now; undo does not write through links",
                at.strip_prefix(workspace).unwrap_or(&at).display()
            ));
        }
    }
    None
}

fn content_of(
    objects: &Objects,
    workspace: &Path,
    rel: &str,
    entry: Option<&Entry>,
) -> Option<Vec<u8>> {
    match entry {
        Some(Entry::File { hash: Some(h), .. }) => objects
            .read(h)
            .ok()
            .or_else(|| fs::read(workspace.join(rel)).ok()),
        _ => None,
    }
}

/// The change undo makes at one path, as lines: a unified diff for text, a line otherwise.
fn diff_lines(
    objects: &Objects,
    workspace: &Path,
    rel: &str,
    now: Option<&Entry>,
    was: Option<&Entry>,
) -> Vec<String> {
    let describe = |e: Option<&Entry>| match e {
        None => "nothing".to_string(),
        Some(Entry::Dir { .. }) => "a directory".into(),
        Some(Entry::Link { target }) => format!("a link to {target}"),
        Some(Entry::File { size, mode, .. }) => format!("a file of {size} bytes (mode {mode:o})"),
    };
    let now_text = match now {
        Some(Entry::File { size, .. }) if (*size as usize) <= DIFF_BYTES => {
            fs::read(workspace.join(rel)).ok()
        }
        Some(Entry::File { .. }) => None,
        _ => Some(Vec::new()),
    };
    let was_text = match was {
        Some(Entry::File { size, .. }) if (*size as usize) <= DIFF_BYTES => {
            content_of(objects, workspace, rel, was)
        }
        Some(Entry::File { .. }) => None,
        _ => Some(Vec::new()),
    };
    let texts = match (now_text, was_text) {
        (Some(a), Some(b)) => String::from_utf8(a).ok().zip(String::from_utf8(b).ok()),
        _ => None,
    };
    let both_files_or_nothing = |e: Option<&Entry>| matches!(e, None | Some(Entry::File { .. }));
    if let Some((a, b)) = texts
        && both_files_or_nothing(now)
        && both_files_or_nothing(was)
    {
        let mut lines: Vec<String> = Vec::new();
        if let (Some(Entry::File { mode: m1, .. }), Some(Entry::File { mode: m2, .. })) = (now, was)
            && m1 != m2
        {
            lines.push(format!("mode {m1:o} -> {m2:o}"));
        }
        let diff = similar::TextDiff::from_lines(&a, &b);
        let unified = diff
            .unified_diff()
            .context_radius(3)
            .header(&format!("{rel} (now)"), &format!("{rel} (after undo)"))
            .to_string();
        let total = unified.lines().count();
        lines.extend(unified.lines().take(DIFF_LINES).map(str::to_string));
        if total > DIFF_LINES {
            lines.push(format!("… {} more lines", total - DIFF_LINES));
        }
        if lines.is_empty() {
            lines.push("same content".into());
        }
        return lines;
    }
    vec![format!(
        "now {}; after undo {}",
        describe(now),
        describe(was)
    )]
}

pub(super) fn apply(
    history: &History,
    state: &mut State,
    shown: &UndoPlan,
    overwrite: bool,
) -> Result<String, String> {
    let (plan, targets) = compute(history, &state.records, &shown.call_id, shown.and_later)?;
    if plan.digest != shown.digest {
        return Err(
            "the workspace changed since this undo was shown; nothing was changed: look at it again"
                .into(),
        );
    }
    let workspace = history.workspace().to_path_buf();
    let mut changes = Vec::new();
    let (mut restored, mut deleted, mut brought, mut kept) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // Deepest first: what was in a directory the undone calls created goes before it.
    let mut order: Vec<&Target> = targets.iter().collect();
    order.sort_by_key(|t| std::cmp::Reverse(t.path.matches('/').count()));
    // Directories to bring back are made first, shallowest first.
    let mut dirs: Vec<&Target> = targets
        .iter()
        .filter(|t| matches!(t.entry, Some(Entry::Dir { .. })))
        .collect();
    dirs.sort_by_key(|t| t.path.matches('/').count());
    for t in dirs {
        if t.conflict && !overwrite {
            continue;
        }
        let path = workspace.join(&t.path);
        if let Some(Entry::Dir { mode }) = &t.entry {
            if !matches!(t.now, Some(Entry::Dir { .. })) {
                if t.now.is_some() {
                    remove_path(&path);
                }
                if fs::create_dir_all(&path).is_ok() {
                    changes.push(Change {
                        path: t.path.clone(),
                        before: t.now.clone(),
                        after: t.entry.clone(),
                    });
                }
            }
            let _ = fs::set_permissions(&path, fs::Permissions::from_mode(*mode));
        }
    }
    for t in order {
        if matches!(t.entry, Some(Entry::Dir { .. })) {
            continue;
        }
        if (t.conflict && !overwrite) || (t.not_kept && t.entry.is_some()) {
            kept.push(t.path.clone());
            continue;
        }
        if unsafe_parent(&workspace, &t.path).is_some() {
            kept.push(t.path.clone());
            continue;
        }
        let path = workspace.join(&t.path);
        // What is there now is kept first, so this undo can be undone.
        let now = match &t.now {
            Some(Entry::File { mode, size, .. }) => match history.objects.put(&path, *size) {
                Ok(hash) => Some(Entry::File {
                    mode: *mode,
                    size: *size,
                    hash: Some(hash),
                }),
                Err(e) => {
                    return Err(format!(
                        "{}: could not be kept before undo ({e}); stopped",
                        t.path
                    ));
                }
            },
            other => other.clone(),
        };
        let done = match &t.entry {
            None => {
                if matches!(t.now, Some(Entry::Dir { .. })) {
                    // Removed only once empty: what someone else put in it stays.
                    fs::remove_dir(&path).is_ok()
                } else {
                    remove_path(&path);
                    true
                }
            }
            Some(Entry::File {
                mode,
                hash: Some(hash),
                ..
            }) => {
                write_file(&history.objects, &path, hash, *mode)
                    .map_err(|e| format!("{}: {e}", t.path))?;
                true
            }
            Some(Entry::Link { target }) => {
                remove_path(&path);
                symlink(target, &path).map_err(|e| format!("{}: {e}", t.path))?;
                true
            }
            _ => false,
        };
        if !done {
            kept.push(t.path.clone());
            continue;
        }
        match (&t.entry, &t.now) {
            (None, _) => deleted.push(t.path.clone()),
            (Some(_), None) => brought.push(t.path.clone()),
            _ => restored.push(t.path.clone()),
        }
        changes.push(Change {
            path: t.path.clone(),
            before: now,
            after: t.entry.clone(),
        });
    }
    let ids: Vec<String> = plan.calls.iter().map(|(id, _)| id.clone()).collect();
    let titles: Vec<String> = plan
        .calls
        .iter()
        .map(|(id, title)| format!("{id} ({title})"))
        .collect();
    if !changes.is_empty() {
        history.append(
            state,
            Record {
                seq: 0,
                call_id: format!("undo-{}", state.records.last().map_or(1, |r| r.seq + 1)),
                title: format!("undo of {}", ids.join(", ")),
                at_ms: crate::clock::now_ms(),
                changes,
                overlapped: Vec::new(),
                undoes: ids.clone(),
            },
        )?;
    }
    history.read_now(state);
    let list = |paths: &[String]| paths.join(", ");
    let mut news = format!(
        "The user undid {}: the workspace no longer holds what {} did.",
        titles.join(", "),
        if ids.len() == 1 {
            "that call"
        } else {
            "those calls"
        }
    );
    if !restored.is_empty() {
        news.push_str(&format!(" Back as they were before: {}.", list(&restored)));
    }
    if !brought.is_empty() {
        news.push_str(&format!(" Brought back: {}.", list(&brought)));
    }
    if !deleted.is_empty() {
        news.push_str(&format!(
            " Deleted (the undone calls created them): {}.",
            list(&deleted)
        ));
    }
    if !kept.is_empty() {
        news.push_str(&format!(" Left as they are now: {}.", list(&kept)));
    }
    news.push_str(" Read a file again before relying on what you saw of it.");
    history.tell_model(&news);
    let mut said = format!(
        "undid {}: {} restored, {} brought back, {} deleted",
        ids.join(", "),
        restored.len(),
        brought.len(),
        deleted.len()
    );
    if !kept.is_empty() {
        said.push_str(&format!(
            "; {} left as they are ({})",
            kept.len(),
            list(&kept)
        ));
    }
    Ok(said)
}

/// Removes a file, a link or a directory tree at `path` (not following links).
fn remove_path(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Writes kept content `hash` at `path` with `mode`: through a temporary file beside it and a
/// rename, so the file is never half written.
fn write_file(objects: &Objects, path: &Path, hash: &str, mode: u32) -> std::io::Result<()> {
    let bytes = objects.read(hash)?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp: PathBuf = path.with_file_name(format!(".{name}.airlock-undo"));
    let _ = fs::remove_file(&temp);
    fs::write(&temp, &bytes)?;
    fs::set_permissions(&temp, fs::Permissions::from_mode(mode))?;
    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(path)?;
    }
    fs::rename(&temp, path)
}
