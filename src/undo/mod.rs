//! Undo of a call's changes to the workspace, shell effects included. Every approved command
//! runs in a sandbox that can write only the workspace and temp, so the workspace kept before a
//! call holds every lasting effect the call can have there. Before each call that may change
//! it, the workspace is read into a manifest (incremental: only files whose stamp moved are
//! read; each content kept once, by hash); after, the difference is recorded as the call's
//! changes. Undoing a call puts its paths back as they were before it, never silently over a
//! change made since; the undo is itself recorded, and can be undone.
//!
//! Everything lives in the state directory (`undo/objects` shared, `undo/<session>` per
//! session), out of the agent's reach like the rest of it. Never touches a repository's `.git`.
//!
//! Imports only `protocol`, `clock`, `digest` and `visible`.

mod objects;
mod plan;
pub mod prune;
mod scan;

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::protocol::{ChangeCount, UndoPlan, UndoSource, WorkspaceHistory};
pub use objects::Objects;
pub use scan::{Entry, Item, Limits, Manifest};

/// What one call (or one undo) changed at one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    pub before: Option<Entry>,
    pub after: Option<Entry>,
}

/// One call's changes, as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub seq: u64,
    pub call_id: String,
    pub title: String,
    pub at_ms: u64,
    pub changes: Vec<Change>,
    /// Calls that ran at the same time: their changes may be in this record too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlapped: Vec<String>,
    /// For an undo: the calls it undid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes: Vec<String>,
}

impl Record {
    pub fn count(&self) -> ChangeCount {
        let mut count = ChangeCount::default();
        for change in &self.changes {
            if matches!(change.before, Some(Entry::Dir { .. }))
                || matches!(change.after, Some(Entry::Dir { .. }))
            {
                continue;
            }
            match (&change.before, &change.after) {
                (None, Some(_)) => count.created += 1,
                (Some(_), None) => count.deleted += 1,
                _ => count.modified += 1,
            }
            if matches!(change.after, Some(Entry::File { hash: None, .. }))
                || matches!(change.before, Some(Entry::File { hash: None, .. }))
            {
                count.not_kept += 1;
            }
        }
        count
    }
}

/// The workspace's history for one session.
pub struct History {
    workspace: PathBuf,
    dir: PathBuf,
    objects: Objects,
    limits: Limits,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The workspace as last read (`None` until the first read).
    manifest: Option<Arc<Manifest>>,
    /// Calls started and not finished: the manifest before each, and the calls it overlapped.
    open: HashMap<String, Open>,
    records: Vec<Record>,
}

struct Open {
    before: Arc<Manifest>,
    title: String,
    overlapped: BTreeSet<String>,
}

/// Where a session's history is kept under the state directory.
pub fn session_dir(state: &Path, session: &str) -> PathBuf {
    state.join("undo").join(session)
}

impl History {
    /// The history of `session` on `workspace`, kept under `state`: what an earlier process of
    /// the same session recorded is read back (a resumed session keeps its checkpoints).
    pub fn open(state: &Path, session: &str, workspace: &Path) -> Result<History, String> {
        let dir = session_dir(state, session);
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let workspace = fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let meta = serde_json::json!({ "workspace": workspace }).to_string();
        // Written once per session (every start reads the state directory; it writes as
        // little as it can).
        if fs::read_to_string(dir.join("session.json")).ok().as_deref() != Some(meta.as_str()) {
            fs::write(dir.join("session.json"), meta)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let records = read_records(&dir.join("records.jsonl"));
        let manifest = fs::read(dir.join("index.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok())
            .map(Arc::new);
        Ok(History {
            workspace,
            objects: Objects::new(state.join("undo").join("objects")),
            dir,
            limits: Limits::default(),
            state: Mutex::new(State {
                manifest,
                open: HashMap::new(),
                records,
            }),
        })
    }

    /// The workspace of a session kept under `state`, as its history names it.
    pub fn workspace_of(state: &Path, session: &str) -> Option<PathBuf> {
        let text = fs::read_to_string(session_dir(state, session).join("session.json")).ok()?;
        let meta: serde_json::Value = serde_json::from_str(&text).ok()?;
        meta["workspace"].as_str().map(PathBuf::from)
    }

    /// This history, keeping by size and time only what passes `limits`.
    pub fn with_limits(mut self, limits: Limits) -> History {
        self.limits = limits;
        self
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The records kept, oldest first.
    pub fn records(&self) -> Vec<Record> {
        self.lock().records.clone()
    }

    /// Reads the workspace now (incremental from the last read) and keeps it as the last read.
    fn read_now(&self, state: &mut State) -> Arc<Manifest> {
        let empty = Manifest::new();
        let previous = state.manifest.as_deref().unwrap_or(&empty);
        let scanned = scan::scan(&self.workspace, previous, &self.objects, self.limits);
        let changed = state.manifest.as_deref() != Some(&scanned.manifest);
        // Unchanged: the manifest read before is kept (a call that changed nothing compares
        // the same manifest with itself, at no cost).
        if let (false, Some(same)) = (changed, &state.manifest) {
            return same.clone();
        }
        let manifest = Arc::new(scanned.manifest);
        if changed {
            // Kept so a later process reads incrementally from here; a failed write only costs
            // that process a full read.
            if let Ok(json) = serde_json::to_vec(&*manifest) {
                let _ = write_atomic(&self.dir.join("index.json"), &json);
            }
        }
        state.manifest = Some(manifest.clone());
        manifest
    }

    fn append(&self, state: &mut State, mut record: Record) -> Result<Record, String> {
        record.seq = state.records.last().map_or(1, |r| r.seq + 1);
        let line = serde_json::to_string(&record).map_err(|e| e.to_string())?;
        let path = self.dir.join("records.jsonl");
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        writeln!(file, "{line}").map_err(|e| format!("{}: {e}", path.display()))?;
        state.records.push(record.clone());
        Ok(record)
    }

    /// Keeps a line for the model's next request.
    fn tell_model(&self, text: &str) {
        if let Ok(mut file) = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("news.jsonl"))
        {
            let _ = writeln!(file, "{}", serde_json::Value::String(text.to_string()));
        }
    }
}

/// The changes from `before` to `after`, by path.
pub fn changes(before: &Manifest, after: &Manifest) -> Vec<Change> {
    let paths: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let (b, a) = (before.get(path), after.get(path));
            let differs = match (b, a) {
                (Some(b), Some(a)) => scan::differ(b, a),
                (None, None) => false,
                _ => true,
            };
            differs.then(|| Change {
                path: path.clone(),
                before: b.map(|i| i.entry.clone()),
                after: a.map(|i| i.entry.clone()),
            })
        })
        .collect()
}

impl WorkspaceHistory for History {
    fn before(&self, call_id: &str, title: &str) -> Result<(), String> {
        let mut state = self.lock();
        let before = self.read_now(&mut state);
        let others: Vec<String> = state.open.keys().cloned().collect();
        for other in &others {
            if let Some(open) = state.open.get_mut(other) {
                open.overlapped.insert(call_id.to_string());
            }
        }
        state.open.insert(
            call_id.to_string(),
            Open {
                before,
                title: title.to_string(),
                overlapped: others.into_iter().collect(),
            },
        );
        Ok(())
    }

    fn after(&self, call_id: &str) -> Result<ChangeCount, String> {
        let mut state = self.lock();
        let Some(open) = state.open.remove(call_id) else {
            return Err(format!("no checkpoint was taken before {call_id}"));
        };
        let after = self.read_now(&mut state);
        let changes = if Arc::ptr_eq(&open.before, &after) {
            Vec::new()
        } else {
            changes(&open.before, &after)
        };
        if changes.is_empty() {
            return Ok(ChangeCount::default());
        }
        let record = self.append(
            &mut state,
            Record {
                seq: 0,
                call_id: call_id.to_string(),
                title: open.title,
                at_ms: crate::clock::now_ms(),
                changes,
                overlapped: open.overlapped.into_iter().collect(),
                undoes: Vec::new(),
            },
        )?;
        Ok(record.count())
    }

    fn take_news(&self) -> Vec<String> {
        let path = self.dir.join("news.jsonl");
        // One look when there is nothing (the common case): no read, no write.
        if !path.exists() {
            return Vec::new();
        }
        let taken = self.dir.join(format!("news.{}.taken", std::process::id()));
        if fs::rename(&path, &taken).is_err() {
            return Vec::new();
        }
        let text = fs::read_to_string(&taken).unwrap_or_default();
        let _ = fs::remove_file(&taken);
        text.lines()
            .filter_map(|l| serde_json::from_str::<String>(l).ok())
            .collect()
    }
}

impl UndoSource for History {
    fn plan(&self, call_id: &str, and_later: bool) -> Result<UndoPlan, String> {
        let state = self.lock();
        plan::plan(self, &state.records, call_id, and_later)
    }

    fn apply(&self, shown: &UndoPlan, overwrite: bool) -> Result<String, String> {
        let mut state = self.lock();
        plan::apply(self, &mut state, shown, overwrite)
    }
}

fn read_records(path: &Path) -> Vec<Record> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = path.with_extension(format!("tmp{}", std::process::id()));
    fs::write(&temp, bytes)?;
    fs::rename(&temp, path)
}

#[cfg(test)]
mod tests;
