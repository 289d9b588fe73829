//! Tamper-evident audit trail for approval decisions: one append-only JSONL file per session.
//!
//! Every record carries the SHA-256 of the record before it, so editing, removing or
//! reordering a record breaks the chain, and `verify` reports where. A small head file next
//! to the log remembers the last record, which is what lets `verify` notice whole records cut
//! off the end. Both sit in one directory, so a writer opened with [`AuditLog::open_anchored`]
//! also records the chain's end in the state database as it appends (see `anchor`), and
//! [`verify_against`] compares the log with that anchor. This module owns the on-disk format
//! and appending; `verify` reads and checks the chain, `anchor` the comparison with the database.

mod anchor;
mod commit;
mod verify;

pub use anchor::{Anchor, AnchorMatch, ChainAnchor, ChainEnd, session_of};
use commit::Chain;
pub use commit::Receipt;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use verify::{for_each_line, parse_line, verify_full};

use crate::clock::now_ms;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prev` value of the first record in a log: 64 zeros.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The fields every record has, in canonical (sorted) order.
const RECORD_FIELDS: [&str; 7] = ["body", "hash", "kind", "prev", "seq", "session", "ts_ms"];

/// Everything that can go wrong while opening, appending to, verifying or reading a log.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A file-system operation failed.
    #[error(
        "audit I/O failed on {}: {source} (check that the path exists, is writable and the disk is not full)",
        path.display()
    )]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The log does not verify. `line` is 1-based; for problems found by comparing the log
    /// with its head file, it is the line just past the last record.
    #[error("audit log does not verify: line {line}: {problem}")]
    Tampered { line: usize, problem: String },

    /// `AuditLog::open` found an existing log that does not verify (or could not be read), and
    /// will not extend a broken chain.
    #[error(
        "refusing to append to audit log {}: {source}; keep it as evidence and move it (and its .head file) aside to start a fresh log",
        path.display()
    )]
    BrokenChain {
        path: PathBuf,
        #[source]
        source: Box<AuditError>,
    },

    /// The existing log was written for a different session.
    #[error(
        "audit log {} belongs to session {found:?}, not {expected:?}; open it with its own session id",
        path.display()
    )]
    SessionMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },

    /// The session id cannot be used as a file name.
    #[error(
        "invalid audit session id {session_id:?}: {reason} (use 1-200 ASCII letters, digits, '-', '_' or '.', not starting with '.')"
    )]
    InvalidSessionId { session_id: String, reason: String },

    /// An earlier failure left this handle in an unknown state; it refuses further appends.
    #[error(
        "audit log {} can no longer be appended to: {reason}; reopen it with AuditLog::open, which verifies it first",
        path.display()
    )]
    Unusable { path: PathBuf, reason: String },

    /// The log does not end where the state database's anchor says it must.
    #[error("audit log does not match its anchor in {place}: {problem}")]
    AnchorMismatch { place: String, problem: String },

    /// The anchor could not be read or written (when appending: nothing was appended).
    #[error(
        "the audit anchor in {place}: {reason} (check that the state database is readable and writable, and that no other airlock writes this session)"
    )]
    Anchor { place: String, reason: String },

    /// A record could not be encoded as JSON.
    #[error("could not encode audit record of kind {kind:?} as JSON: {reason}")]
    Encode { kind: String, reason: String },
}

/// Where an appended record landed in the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub seq: u64,
    pub hash: String,
}

/// The result of a successful `verify`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// How many records the log holds.
    pub records: u64,
    /// Hash of the last record, `None` for an empty log.
    pub last_hash: Option<String>,
}

/// The result of [`verify_against`]: the chain, the head file and what the anchor said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchoredReport {
    pub records: u64,
    pub last_hash: Option<String>,
    /// The log holds one record more than its head file names (a crash between the two writes).
    pub past_head: bool,
    /// Where the anchor was looked for, and how the log matched it; `None`: no anchor found.
    pub anchor: Option<(String, AnchorMatch)>,
}

/// Contents of the head file: the seq and hash of the last record, both `None` when the log
/// holds no records.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    seq: Option<u64>,
    hash: Option<String>,
}

/// An open, append-only audit log for one session. Share it between threads by reference or
/// `Arc`; appends are serialised by an internal lock. Only one `AuditLog` (in one process)
/// should write a given session's file at a time.
pub struct AuditLog {
    path: PathBuf,
    head_path: PathBuf,
    session: String,
    /// Opened for appending; written only by the commit that holds `Chain::committing`.
    file: File,
    chain: Mutex<Chain>,
    /// Signalled when a commit ends.
    committed: Condvar,
    /// Used only by the commit that holds `Chain::committing`.
    anchor: Mutex<Option<Box<dyn ChainAnchor>>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens (creating if needed) the log `<dir>/<session_id>.jsonl`, without an anchor: for
    /// tests and tools. Every airlock session writes through [`AuditLog::open_anchored`].
    /// An existing log is verified first, and appends continue its chain; a log that does not
    /// verify is refused.
    pub fn open(dir: &Path, session_id: &str) -> Result<AuditLog, AuditError> {
        Self::open_with(dir, session_id, None)
    }

    /// Like [`AuditLog::open`], and every append is anchored in `anchor` (the state database)
    /// first. An existing log must also match its anchor; a log file that is gone while its
    /// anchor remains is refused.
    pub fn open_anchored(
        dir: &Path,
        session_id: &str,
        anchor: Box<dyn ChainAnchor>,
    ) -> Result<AuditLog, AuditError> {
        Self::open_with(dir, session_id, Some(anchor))
    }

    fn open_with(
        dir: &Path,
        session_id: &str,
        mut anchor: Option<Box<dyn ChainAnchor>>,
    ) -> Result<AuditLog, AuditError> {
        validate_session_id(session_id)?;
        // What the agent asked for and what was decided: for this user's eyes only.
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| io_err(dir, source))?;
        let path = dir.join(format!("{session_id}.jsonl"));
        let head_path = head_path_for(&path);
        let broken = |source: AuditError| AuditError::BrokenChain {
            path: path.clone(),
            source: Box::new(source),
        };
        let anchored = match anchor.as_mut() {
            Some(a) => a
                .load(session_id)
                .map_err(|reason| AuditError::Anchor {
                    place: a.place(),
                    reason,
                })?
                .map(|found| (found, a.place())),
            None => None,
        };

        let (next_seq, last_hash) = if path.exists() || head_path.exists() || anchored.is_some() {
            let checked = if path.exists() || head_path.exists() {
                Some(verify_full(&path).map_err(broken)?)
            } else {
                None
            };
            if let Some((found, place)) = &anchored {
                let end = checked.as_ref().map(|c| ChainEnd {
                    records: c.records,
                    last_hash: c.last_hash.clone(),
                });
                anchor::compare(end.as_ref(), found, place).map_err(broken)?;
            }
            let checked = checked.unwrap_or(verify::Checked {
                records: 0,
                last_hash: None,
                session: None,
                past_head: false,
            });
            if let Some(found) = checked.session
                && found != session_id
            {
                return Err(AuditError::SessionMismatch {
                    path,
                    expected: session_id.to_owned(),
                    found,
                });
            }
            (
                checked.records,
                checked.last_hash.unwrap_or_else(|| GENESIS_PREV.to_owned()),
            )
        } else {
            (0, GENESIS_PREV.to_owned())
        };

        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| io_err(&path, source))?;
        let loose = file
            .metadata()
            .map_err(|source| io_err(&path, source))?
            .permissions()
            .mode()
            & 0o077;
        if loose != 0 {
            file.set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(|source| io_err(&path, source))?;
        }

        if next_seq == 0 && !head_path.exists() {
            // A new log starts with a head that says "empty", so a first commit of several
            // records that stops before its head update leaves records past a head, which
            // verify accepts, rather than a log with no head, which it does not. Not synced:
            // it says nothing a lost write would make false.
            private_file(&head_path)
                .and_then(|mut f| f.write_all(b"{\"seq\":null,\"hash\":null}\n"))
                .map_err(|source| io_err(&head_path, source))?;
        }

        Ok(AuditLog {
            path,
            head_path,
            session: session_id.to_owned(),
            file,
            chain: Mutex::new(Chain {
                next_seq,
                last_hash: last_hash.clone(),
                pending: Vec::new(),
                durable: next_seq,
                durable_hash: last_hash,
                committing: false,
                broken: None,
            }),
            committed: Condvar::new(),
            anchor: Mutex::new(anchor),
        })
    }

    /// Path of the JSONL log file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Verifies the log at `path` against its head file (`<path>.head`): every line parses, seqs
/// run 0,1,2,... without gaps, each `prev` is the previous record's hash, each `hash`
/// recomputes, all records name the same session, and the last record is the one the head
/// file names. An empty log verifies if the head file is absent or says there are no records.
/// Hashes are checked over the bytes as stored, so any change to a line, even whitespace,
/// counts as an edit.
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    let checked = verify_full(path)?;
    Ok(VerifyReport {
        records: checked.records,
        last_hash: checked.last_hash,
    })
}

/// Verifies the log at `path` as [`verify`] does, and compares its end with the session's
/// anchor in `anchor` (the session is the file's name, `<session>.jsonl`, and every record
/// must name it). Fewer records, a different last hash, records past the anchor, an emptied or
/// deleted log all fail, naming what differs. With no anchor (`anchor` is `None`, or holds
/// nothing for the session) only the chain and the head file are checked, and the report
/// says so.
pub fn verify_against(
    path: &Path,
    anchor: Option<&mut dyn ChainAnchor>,
) -> Result<AnchoredReport, AuditError> {
    let named = session_of(path);
    let found = match (anchor, &named) {
        (Some(a), Some(session)) => a
            .load(session)
            .map_err(|reason| AuditError::Anchor {
                place: a.place(),
                reason,
            })?
            .map(|found| (found, a.place())),
        _ => None,
    };
    if !path.exists()
        && let Some((found, place)) = &found
    {
        anchor::compare(None, found, place)?;
    }
    let checked = verify_full(path)?;
    if let (Some(found), Some(named)) = (&checked.session, &named)
        && found != named
    {
        return Err(AuditError::Tampered {
            line: 1,
            problem: format!(
                "the file is named for session {named:?} but its records belong to {found:?} (another session's log put in its place? a copy must keep its name, <session>.jsonl)"
            ),
        });
    }
    let anchor = match &found {
        Some((found, place)) => {
            let end = ChainEnd {
                records: checked.records,
                last_hash: checked.last_hash.clone(),
            };
            Some((place.clone(), anchor::compare(Some(&end), found, place)?))
        }
        None => None,
    };
    Ok(AnchoredReport {
        records: checked.records,
        last_hash: checked.last_hash,
        past_head: checked.past_head,
        anchor,
    })
}

/// Reads every record of the log as JSON, in file order, without checking the chain (call
/// `verify` for that). Fails on a line that is not valid JSON. Floats in bodies are read with
/// serde_json's default parser, which can be one ulp off; fine for display.
pub fn read_records(path: &Path) -> Result<Vec<Value>, AuditError> {
    let mut records = Vec::new();
    for_each_line(path, |line_no, line| {
        let value = parse_line(line_no, &line.bytes)?;
        records.push(value);
        Ok(())
    })?;
    Ok(records)
}

/// Canonical JSON: object keys sorted (recursively), no insignificant whitespace. Keys are
/// sorted here explicitly, so the result does not depend on serde_json's `preserve_order`.
pub fn canonical_json(value: &Value) -> Result<String, serde_json::Error> {
    // The same canonical form as frozen calls: one implementation, no sorted copy of the record.
    Ok(crate::digest::canonical_json(value))
}

/// Creates (or truncates) `path` for writing, mode 0600 when made.
fn private_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

fn write_head(head_path: &Path, head: &Head) -> Result<(), AuditError> {
    let mut text = serde_json::to_string(head).map_err(|e| AuditError::Encode {
        kind: "head".to_owned(),
        reason: e.to_string(),
    })?;
    text.push('\n');
    let mut tmp_name = head_path.as_os_str().to_owned();
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp_path = PathBuf::from(tmp_name);
    let result = (|| {
        let mut tmp = private_file(&tmp_path)?;
        tmp.write_all(text.as_bytes())?;
        tmp.sync_all()?;
        fs::rename(&tmp_path, head_path)
    })();
    result.map_err(|source| {
        // Best effort: do not leave the temp file behind; the original error matters more.
        let _ = fs::remove_file(&tmp_path);
        io_err(head_path, source)
    })
}

fn validate_session_id(session_id: &str) -> Result<(), AuditError> {
    let reason = if session_id.is_empty() {
        Some("it is empty")
    } else if session_id.len() > 200 {
        Some("it is longer than 200 bytes")
    } else if session_id.starts_with('.') {
        Some("it starts with '.'")
    } else if !session_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        Some("it contains a character that is not safe in a file name")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(AuditError::InvalidSessionId {
            session_id: session_id.to_owned(),
            reason: reason.to_owned(),
        }),
    }
}

fn head_path_for(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".head");
    PathBuf::from(name)
}

/// The first 16 hex digits of a hash, for messages.
fn short_hash(hash: &str) -> String {
    match hash.get(..16) {
        Some(head) if hash.len() > 16 => format!("{head}…"),
        _ => hash.to_owned(),
    }
}

fn hash_hex(text: &str) -> String {
    hex_of(&Sha256::digest(text.as_bytes()))
}

fn hex_of(digest: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn io_err(path: &Path, source: io::Error) -> AuditError {
    AuditError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn encode_err(kind: &str, e: serde_json::Error) -> AuditError {
    AuditError::Encode {
        kind: kind.to_owned(),
        reason: e.to_string(),
    }
}

/// One line per record that says something: requests with their verdict, decisions with their
/// source, outcomes.
pub fn summary_line(record: &serde_json::Value) -> Option<String> {
    let body = &record["body"];
    let call = body["call_id"].as_str().unwrap_or("?");
    let tool = body["tool"].as_str().unwrap_or("");
    Some(match record["kind"].as_str()? {
        "request" => format!(
            "#{:<4} {call:<8} {tool:<10} asked: {} ({})",
            record["seq"].as_u64().unwrap_or(0),
            body["ruling"].as_str().unwrap_or("?"),
            body["reasons"]
                .as_array()
                .map(|r| r
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .collect::<Vec<_>>()
                    .join("; "))
                .unwrap_or_default()
        ),
        "decision" => format!(
            "#{:<4} {call:<8} {tool:<10} {} by {}{}",
            record["seq"].as_u64().unwrap_or(0),
            body["decision"].as_str().unwrap_or("?"),
            body["source"].as_str().unwrap_or("?"),
            body["message"]
                .as_str()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ),
        "amendment" => format!(
            "#{:<4} {call:<8} {tool:<10} changed by {} before approving: {} ({} -> {}, {})",
            record["seq"].as_u64().unwrap_or(0),
            body["by"].as_str().unwrap_or("?"),
            body["change"].as_str().unwrap_or("?"),
            short(body["from_digest"].as_str()),
            short(body["digest"].as_str()),
            body["ruling"].as_str().unwrap_or("?"),
        ),
        "outcome" => format!(
            "#{:<4} {call:<8} {:<10} ran: {}{}",
            record["seq"].as_u64().unwrap_or(0),
            "",
            body["outcome"].as_str().unwrap_or("?"),
            outcome_detail(&body["detail"])
        ),
        _ => return None,
    })
}

/// The first 12 characters of a digest.
fn short(digest: Option<&str>) -> &str {
    let digest = digest.unwrap_or("?");
    &digest[..digest.len().min(12)]
}

/// An outcome's detail in words: `, exit 2`, `: the error`, or nothing (never raw JSON).
fn outcome_detail(detail: &Value) -> String {
    let mut out = String::new();
    if let Some(code) = detail.get("exit_code").and_then(Value::as_i64) {
        out.push_str(&format!(", exit {code}"));
    }
    for key in ["error", "message", "reason"] {
        if let Some(text) = detail.get(key).and_then(Value::as_str) {
            out.push_str(&format!(": {text}"));
        }
    }
    if let Some(text) = detail.as_str() {
        out.push_str(&format!(": {text}"));
    }
    out
}

#[cfg(test)]
mod outcome_words {
    use super::*;

    #[test]
    fn an_outcome_detail_reads_as_words_never_as_json() {
        assert_eq!(
            outcome_detail(&serde_json::json!({"exit_code": 2})),
            ", exit 2"
        );
        assert_eq!(outcome_detail(&serde_json::json!({"exit_code": null})), "");
        assert_eq!(
            outcome_detail(&serde_json::json!({"error": "no such file"})),
            ": no such file"
        );
    }
}

#[cfg(test)]
mod commit_tests;
#[cfg(test)]
mod tests;
