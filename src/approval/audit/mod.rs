//! Tamper-evident audit trail for approval decisions: one append-only JSONL file per session.
//!
//! Every record carries the SHA-256 of the record before it, so editing, removing or
//! reordering a record breaks the chain, and `verify` reports where. A small head file next
//! to the log remembers the last record, which is what lets `verify` notice whole records cut
//! off the end. This module owns the on-disk format, appending, verification and reading.

use crate::approval::gate::now_ms;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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

/// Contents of the head file: the seq and hash of the last record, both `None` when the log
/// holds no records.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    seq: Option<u64>,
    hash: Option<String>,
}

/// Mutable state behind the lock.
struct State {
    file: File,
    next_seq: u64,
    last_hash: String,
    /// Set when a failed write may have left a partial line behind.
    broken: Option<String>,
}

/// An open, append-only audit log for one session. Share it between threads by reference or
/// `Arc`; appends are serialised by an internal lock. Only one `AuditLog` (in one process)
/// should write a given session's file at a time.
pub struct AuditLog {
    path: PathBuf,
    head_path: PathBuf,
    session: String,
    state: Mutex<State>,
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
    /// Opens (creating if needed) the log `<dir>/<session_id>.jsonl`. An existing log is
    /// verified first, and appends continue its chain; a log that does not verify is refused.
    pub fn open(dir: &Path, session_id: &str) -> Result<AuditLog, AuditError> {
        validate_session_id(session_id)?;
        fs::create_dir_all(dir).map_err(|source| io_err(dir, source))?;
        let path = dir.join(format!("{session_id}.jsonl"));
        let head_path = head_path_for(&path);

        let (next_seq, last_hash) = if path.exists() || head_path.exists() {
            let checked = verify_full(&path).map_err(|source| AuditError::BrokenChain {
                path: path.clone(),
                source: Box::new(source),
            })?;
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
            .open(&path)
            .map_err(|source| io_err(&path, source))?;

        Ok(AuditLog {
            path,
            head_path,
            session: session_id.to_owned(),
            state: Mutex::new(State {
                file,
                next_seq,
                last_hash,
                broken: None,
            }),
        })
    }

    /// Path of the JSONL log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record and updates the head file. Returns the record's seq and hash.
    ///
    /// If the line is written but the head update fails, the record stays in the log (and the
    /// chain continues from it) but the error is returned: `verify` will report the log as
    /// not matching its head until the next successful append rewrites the head.
    pub fn append(&self, kind: &str, body: Value) -> Result<AuditEntry, AuditError> {
        // Encode the body before taking the lock; only the chain fields need the lock held.
        let body_text = canonical_json(&body).map_err(|e| encode_err(kind, e))?;
        let mut state = self.state.lock().map_err(|_| AuditError::Unusable {
            path: self.path.clone(),
            reason: "a thread panicked while appending".to_owned(),
        })?;
        if let Some(reason) = &state.broken {
            return Err(AuditError::Unusable {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }

        let seq = state.next_seq;
        let mut rest = Map::new();
        rest.insert("kind".to_owned(), Value::from(kind));
        rest.insert("prev".to_owned(), Value::from(state.last_hash.as_str()));
        rest.insert("seq".to_owned(), Value::from(seq));
        rest.insert("session".to_owned(), Value::from(self.session.as_str()));
        rest.insert("ts_ms".to_owned(), Value::from(now_ms()));
        let rest_text = canonical_json(&Value::Object(rest)).map_err(|e| encode_err(kind, e))?;
        // `rest_text` is `{"kind":...}`; keys sort as body < hash < kind, so splicing the
        // body in front (and later the hash between them) keeps the line canonical.
        let rest_members = rest_text.strip_prefix('{').unwrap_or(&rest_text);
        let unhashed = format!("{{\"body\":{body_text},{rest_members}");
        let hash = hash_hex(&unhashed);
        let line = format!("{{\"body\":{body_text},\"hash\":\"{hash}\",{rest_members}\n");

        if let Err(source) = state
            .file
            .write_all(line.as_bytes())
            .and_then(|()| state.file.flush())
        {
            state.broken = Some(format!(
                "writing record seq {seq} failed ({source}), so the log may end in a partial line"
            ));
            return Err(io_err(&self.path, source));
        }
        // The line is complete in the file; the chain continues from it whatever happens next.
        state.next_seq = seq + 1;
        state.last_hash = hash.clone();
        state
            .file
            .sync_data()
            .map_err(|source| io_err(&self.path, source))?;

        write_head(
            &self.head_path,
            &Head {
                seq: Some(seq),
                hash: Some(hash.clone()),
            },
        )?;
        Ok(AuditEntry { seq, hash })
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
    Ok(crate::approval::frozen::canonical_json(value))
}

// ---------------------------------------------------------------------------------------------

/// What a full verification learned, including the session for `open`.
struct Checked {
    records: u64,
    last_hash: Option<String>,
    session: Option<String>,
}

/// A raw line of the log, without its trailing newline.
struct Line {
    bytes: Vec<u8>,
    terminated: bool,
}

fn verify_full(path: &Path) -> Result<Checked, AuditError> {
    let mut records: u64 = 0;
    let mut last_seq: Option<u64> = None;
    let mut last_hash: Option<String> = None;
    let mut session: Option<String> = None;

    for_each_line(path, |line_no, line| {
        let tampered = |problem: String| AuditError::Tampered {
            line: line_no,
            problem,
        };
        let value = parse_line(line_no, &line.bytes)?;
        if !line.terminated {
            return Err(tampered(
                "last line has no trailing newline (partial write or edit)".to_owned(),
            ));
        }
        let Value::Object(map) = &value else {
            return Err(tampered("not a JSON object".to_owned()));
        };
        if let Some(extra) = map.keys().find(|k| !RECORD_FIELDS.contains(&k.as_str())) {
            return Err(tampered(format!(
                "unexpected field {extra:?} (record edited?)"
            )));
        }
        let seq = field_u64(map, "seq").map_err(&tampered)?;
        field_u64(map, "ts_ms").map_err(&tampered)?;
        let rec_session = field_str(map, "session").map_err(&tampered)?;
        field_str(map, "kind").map_err(&tampered)?;
        if !map.contains_key("body") {
            return Err(tampered("missing field \"body\"".to_owned()));
        }
        let prev = field_str(map, "prev").map_err(&tampered)?;
        let hash = field_str(map, "hash").map_err(&tampered)?;

        if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(tampered(
                "field \"hash\" is not 64 lowercase hex digits (record edited?)".to_owned(),
            ));
        }
        match unhashed_text(&line.bytes, hash) {
            None => {
                return Err(tampered(
                    "record is not laid out the way airlock writes it (edited or reformatted?)"
                        .to_owned(),
                ));
            }
            Some(text) if hash_hex(&text) != hash => {
                return Err(tampered(
                    "hash does not match its contents (record edited?)".to_owned(),
                ));
            }
            Some(_) => {}
        }

        if seq != records {
            return Err(tampered(match last_seq {
                None => format!(
                    "first record has seq {seq}, expected 0 (records removed from the start?)"
                ),
                Some(before) => {
                    format!("seq {seq} follows seq {before} (record removed or reordered?)")
                }
            }));
        }
        let expected_prev = last_hash.as_deref().unwrap_or(GENESIS_PREV);
        if prev != expected_prev {
            return Err(tampered(if line_no == 1 {
                "first record's prev is not 64 zeros (records removed from the start?)".to_owned()
            } else {
                format!(
                    "prev does not match the hash of line {} (record removed, inserted or reordered?)",
                    line_no - 1
                )
            }));
        }
        match &session {
            None => session = Some(rec_session.to_owned()),
            Some(first) if first != rec_session => {
                return Err(tampered(format!(
                    "session {rec_session:?} differs from {first:?} on line 1 (records from another log spliced in?)"
                )));
            }
            Some(_) => {}
        }

        records += 1;
        last_seq = Some(seq);
        last_hash = Some(hash.to_owned());
        Ok(())
    })?;

    check_head(path, records, last_seq, last_hash.as_deref())?;
    Ok(Checked {
        records,
        last_hash,
        session,
    })
}

/// Compares the end of the log with the head file.
fn check_head(
    path: &Path,
    records: u64,
    last_seq: Option<u64>,
    last_hash: Option<&str>,
) -> Result<(), AuditError> {
    let head_path = head_path_for(path);
    let line = usize::try_from(records)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    let tampered = |problem: String| AuditError::Tampered { line, problem };

    let text = match fs::read(&head_path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if records == 0 {
                return Ok(());
            }
            return Err(tampered(format!(
                "cannot confirm the log is complete: head file {} is missing",
                head_path.display()
            )));
        }
        Err(source) => return Err(io_err(&head_path, source)),
    };
    let head: Head = serde_json::from_slice(&text).map_err(|e| {
        tampered(format!(
            "head file {} is not valid ({e}), so the log cannot be confirmed complete",
            head_path.display()
        ))
    })?;

    match (last_seq, head.seq) {
        (None, None) => Ok(()),
        (None, Some(want)) => Err(tampered(format!(
            "log is empty but head file says seq {want} (log truncated?)"
        ))),
        (Some(got), None) => Err(tampered(format!(
            "log ends at seq {got} but head file says the log is empty (head file replaced?)"
        ))),
        (Some(got), Some(want)) if got < want => Err(tampered(format!(
            "log ends at seq {got} but head file says seq {want} (log truncated?)"
        ))),
        (Some(got), Some(want)) if got > want => Err(tampered(format!(
            "log ends at seq {got} but head file says seq {want} (records appended outside airlock, or a crash before the head was updated?)"
        ))),
        (Some(got), Some(_)) => {
            if head.hash.as_deref() == last_hash {
                Ok(())
            } else {
                Err(tampered(format!(
                    "last record (seq {got}) has a different hash than the head file records (last record replaced?)"
                )))
            }
        }
    }
}

/// Calls `f` with each line (1-based number, bytes without the newline) of the file.
fn for_each_line(
    path: &Path,
    mut f: impl FnMut(usize, Line) -> Result<(), AuditError>,
) -> Result<(), AuditError> {
    let file = File::open(path).map_err(|source| io_err(path, source))?;
    let mut reader = BufReader::new(file);
    let mut line_no = 0usize;
    loop {
        let mut bytes = Vec::new();
        let read = reader
            .read_until(b'\n', &mut bytes)
            .map_err(|source| io_err(path, source))?;
        if read == 0 {
            return Ok(());
        }
        line_no += 1;
        let terminated = bytes.last() == Some(&b'\n');
        if terminated {
            bytes.pop();
        }
        f(line_no, Line { bytes, terminated })?;
    }
}

fn parse_line(line_no: usize, bytes: &[u8]) -> Result<Value, AuditError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(AuditError::Tampered {
            line: line_no,
            problem: "empty line (log edited?)".to_owned(),
        });
    }
    serde_json::from_slice(bytes).map_err(|e| AuditError::Tampered {
        line: line_no,
        problem: format!("not valid JSON (partial write or edit): {e}"),
    })
}

fn field_u64(map: &Map<String, Value>, name: &str) -> Result<u64, String> {
    match map.get(name) {
        None => Err(format!("missing field {name:?}")),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("field {name:?} is not an unsigned integer")),
    }
}

fn field_str<'a>(map: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match map.get(name) {
        None => Err(format!("missing field {name:?}")),
        Some(v) => v
            .as_str()
            .ok_or_else(|| format!("field {name:?} is not a string")),
    }
}

/// A copy of `value` with every object's keys inserted in sorted order, so it serialises
/// sorted whether serde_json's map is a BTreeMap or (with `preserve_order`) an IndexMap.
/// The line's text with its top-level `,"hash":"<hash>"` member cut out: exactly the canonical
/// JSON that was hashed when the record was appended. The hash is checked against these bytes,
/// not against a re-encoding of the parsed record, because serde_json's default float parsing
/// can be one ulp off, so a re-encoded float might not match what was hashed. Hashing the
/// bytes also means any change at all to a line (even whitespace) counts as an edit.
///
/// The member is found by its last occurrence: after the top-level `hash` come only the
/// strings and integers of `kind`..`ts_ms`, and inside a JSON string a `"` is always escaped,
/// so `,"hash":"` cannot occur there.
fn unhashed_text(line: &[u8], hash: &str) -> Option<String> {
    let text = std::str::from_utf8(line).ok()?;
    let member = format!(",\"hash\":\"{hash}\"");
    let at = text.rfind(&member)?;
    let mut out = String::with_capacity(text.len() - member.len());
    out.push_str(&text[..at]);
    out.push_str(&text[at + member.len()..]);
    Some(out)
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
        let mut tmp = File::create(&tmp_path)?;
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

fn hash_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
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
        "outcome" => format!(
            "#{:<4} {call:<8} {:<10} ran: {} {}",
            record["seq"].as_u64().unwrap_or(0),
            "",
            body["outcome"].as_str().unwrap_or("?"),
            body["detail"]
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
