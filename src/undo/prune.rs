//! Keeping the history within bounds, by the run logs' rules: a session's history goes when it
//! was last written more than `MAX_AGE` ago, then the oldest others until the rest holds at
//! most `BUDGET` bytes (never one written in the last `RECENT`, never the running one); within a
//! session, its oldest records go first once it holds more than `SESSION_BUDGET`. A content no
//! history names any more goes last, unless it was written in the last `GRACE` (a process may
//! be reading it in, not yet named).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::objects::Objects;
use super::scan::{Entry, Manifest};
use super::{Record, read_records, write_atomic};

pub const MAX_AGE: Duration = Duration::from_secs(14 * 24 * 3600);
pub const BUDGET: u64 = 2 << 30;
pub const SESSION_BUDGET: u64 = 1 << 30;
pub const RECENT: Duration = Duration::from_secs(24 * 3600);
pub const GRACE: Duration = Duration::from_secs(3600);

/// How far the history may grow.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_age: Duration,
    pub budget: u64,
    pub session_budget: u64,
    pub recent: Duration,
    pub grace: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_age: MAX_AGE,
            budget: BUDGET,
            session_budget: SESSION_BUDGET,
            recent: RECENT,
            grace: GRACE,
        }
    }
}

/// What a prune removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub sessions: usize,
    pub records: usize,
    pub contents: usize,
    pub bytes: u64,
}

struct Session {
    dir: PathBuf,
    newest: SystemTime,
    records: Vec<Record>,
    index: Manifest,
}

fn hashes_of_entry(entry: Option<&Entry>, out: &mut HashSet<String>) {
    if let Some(Entry::File { hash: Some(h), .. }) = entry {
        out.insert(h.clone());
    }
}

fn record_hashes(record: &Record, out: &mut HashSet<String>) {
    for change in &record.changes {
        hashes_of_entry(change.before.as_ref(), out);
        hashes_of_entry(change.after.as_ref(), out);
    }
}

impl Session {
    fn hashes(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for record in &self.records {
            record_hashes(record, &mut out);
        }
        for item in self.index.values() {
            hashes_of_entry(Some(&item.entry), &mut out);
        }
        out
    }
}

fn bytes(hashes: &HashSet<String>, sizes: &HashMap<String, u64>) -> u64 {
    hashes.iter().filter_map(|h| sizes.get(h)).sum()
}

fn read_session(dir: PathBuf) -> Session {
    let mut newest = SystemTime::UNIX_EPOCH;
    for name in ["records.jsonl", "index.json", "session.json"] {
        if let Ok(modified) = fs::metadata(dir.join(name)).and_then(|m| m.modified()) {
            newest = newest.max(modified);
        }
    }
    Session {
        records: read_records(&dir.join("records.jsonl")),
        index: fs::read(dir.join("index.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default(),
        dir,
        newest,
    }
}

/// `prune`, at most once an hour (it reads every session's history): a session start that
/// comes soon after another one does nothing.
pub fn prune_now_and_then(state: &Path, keep: &str, now: SystemTime, bounds: Bounds) -> Pruned {
    let mark = state.join("undo").join(".pruned");
    let last = fs::metadata(&mark).and_then(|m| m.modified()).ok();
    if last.is_some_and(|t| now.duration_since(t).unwrap_or_default() < Duration::from_secs(3600)) {
        return Pruned::default();
    }
    let pruned = prune(state, keep, now, bounds);
    let _ = fs::write(&mark, b"");
    pruned
}

/// Prunes the history kept under `state` (`state/undo`), never session `keep` (the running
/// one).
pub fn prune(state: &Path, keep: &str, now: SystemTime, bounds: Bounds) -> Pruned {
    let root = state.join("undo");
    let objects = Objects::new(root.join("objects"));
    let mut pruned = Pruned::default();
    let Ok(entries) = fs::read_dir(&root) else {
        return pruned;
    };
    let sizes: HashMap<String, u64> = objects.all().into_iter().collect();
    let mut kept: Vec<Session> = Vec::new();
    let mut others: Vec<Session> = Vec::new();
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || entry.file_name() == "objects" || entry.file_name() == ".pruned" {
            continue;
        }
        let session = read_session(entry.path());
        if entry.file_name() == keep {
            kept.push(session);
        } else {
            others.push(session);
        }
    }
    // Within a session: its oldest records first, down to its budget.
    for session in &mut others {
        let mut hashes = session.hashes();
        let before = session.records.len();
        while bytes(&hashes, &sizes) > bounds.session_budget && !session.records.is_empty() {
            session.records.remove(0);
            let mut now_named = HashSet::new();
            for record in &session.records {
                record_hashes(record, &mut now_named);
            }
            for item in session.index.values() {
                hashes_of_entry(Some(&item.entry), &mut now_named);
            }
            hashes = now_named;
        }
        if session.records.len() < before {
            let text: String = session
                .records
                .iter()
                .filter_map(|r| serde_json::to_string(r).ok())
                .map(|l| l + "\n")
                .collect();
            if write_atomic(&session.dir.join("records.jsonl"), text.as_bytes()).is_ok() {
                pruned.records += before - session.records.len();
            }
        }
    }
    // Whole sessions: too old, then the oldest until the rest fits.
    others.sort_by_key(|s| s.newest);
    let oldest_kept = now
        .checked_sub(bounds.max_age)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let recent = now
        .checked_sub(bounds.recent)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut total: u64 = others
        .iter()
        .chain(&kept)
        .map(|s| bytes(&s.hashes(), &sizes))
        .sum();
    let mut remaining = Vec::new();
    for session in others {
        let size = bytes(&session.hashes(), &sizes);
        let too_old = session.newest < oldest_kept;
        let over = total > bounds.budget && session.newest < recent;
        if (too_old || over) && fs::remove_dir_all(&session.dir).is_ok() {
            pruned.sessions += 1;
            total = total.saturating_sub(size);
        } else {
            remaining.push(session);
        }
    }
    // Contents no history names, unless just written.
    let mut named: HashSet<String> = HashSet::new();
    for session in remaining.iter().chain(&kept) {
        named.extend(session.hashes());
    }
    let settled = now
        .checked_sub(bounds.grace)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    for (hash, size) in sizes {
        if named.contains(&hash) {
            continue;
        }
        let written = fs::metadata(objects.path(&hash))
            .and_then(|m| m.modified())
            .unwrap_or(now);
        if written < settled {
            objects.remove(&hash);
            pruned.contents += 1;
            pruned.bytes += size;
        }
    }
    pruned
}
