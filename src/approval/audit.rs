//! Tamper-evident audit trail for approval decisions: one append-only JSONL file per session.
//!
//! Every record carries the SHA-256 of the record before it, so editing, removing or
//! reordering a record breaks the chain, and `verify` reports where. A small head file next
//! to the log remembers the last record, which is what lets `verify` notice whole records cut
//! off the end. This module owns the on-disk format, appending, verification and reading.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

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
    serde_json::to_string(&sorted(value))
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
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                if let Some(v) = map.get(key) {
                    out.insert(key.clone(), sorted(v));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

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

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// A log in a fresh temp dir with `n` records of kind "decision".
    fn log_with(n: u64) -> (tempfile::TempDir, AuditLog) {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(dir.path(), "s1").unwrap();
        for i in 0..n {
            log.append(
                "decision",
                json!({"tool": "bash", "n": i, "allow": i % 2 == 0}),
            )
            .unwrap();
        }
        (dir, log)
    }

    fn read_lines(path: &Path) -> Vec<String> {
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn write_lines(path: &Path, lines: &[String]) {
        let mut text = lines.join("\n");
        text.push('\n');
        fs::write(path, text).unwrap();
    }

    /// Asserts `verify` fails with `Tampered` at `line` with a problem containing `needle`.
    fn assert_tampered(path: &Path, line: usize, needle: &str) {
        match verify(path) {
            Err(AuditError::Tampered { line: got, problem }) => {
                assert_eq!(got, line, "wrong line for problem {problem:?}");
                assert!(
                    problem.contains(needle),
                    "problem {problem:?} does not mention {needle:?}"
                );
            }
            other => panic!("expected Tampered at line {line}, got {other:?}"),
        }
    }

    #[test]
    fn audit_log_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<AuditLog>();
    }

    #[test]
    fn a_fresh_log_of_several_appends_verifies() {
        let (dir, log) = log_with(5);
        assert_eq!(log.path(), dir.path().join("s1.jsonl"));
        let report = verify(log.path()).unwrap();
        assert_eq!(report.records, 5);

        let records = read_records(log.path()).unwrap();
        assert_eq!(records.len(), 5);
        for (i, rec) in records.iter().enumerate() {
            assert_eq!(rec["seq"], json!(i));
            assert_eq!(rec["session"], json!("s1"));
            assert_eq!(rec["kind"], json!("decision"));
            assert_eq!(rec["body"]["n"], json!(i));
            assert!(rec["ts_ms"].as_u64().unwrap() > 0);
        }
        assert_eq!(records[0]["prev"], json!(GENESIS_PREV));
        for pair in records.windows(2) {
            assert_eq!(pair[1]["prev"], pair[0]["hash"]);
        }
        assert_eq!(report.last_hash.as_deref(), records[4]["hash"].as_str());
    }

    #[test]
    fn append_returns_the_seq_and_hash_written_to_the_log() {
        let (_dir, log) = log_with(2);
        let entry = log.append("note", json!({"x": 1})).unwrap();
        assert_eq!(entry.seq, 2);
        assert_eq!(entry.hash.len(), 64);
        assert!(
            entry
                .hash
                .chars()
                .all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        );
        let records = read_records(log.path()).unwrap();
        assert_eq!(records[2]["hash"], json!(entry.hash));
    }

    #[test]
    fn the_stored_hash_is_sha256_of_the_canonical_record_without_hash() {
        let (_dir, log) = log_with(1);
        let mut rec = read_records(log.path()).unwrap().remove(0);
        let stored = rec["hash"].as_str().unwrap().to_owned();
        rec.as_object_mut().unwrap().remove("hash");
        let text = canonical_json(&rec).unwrap();
        assert!(text.starts_with("{\"body\":"));
        let expected: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(stored, expected);
    }

    #[test]
    fn reopening_a_log_continues_the_chain_and_still_verifies() {
        let (dir, log) = log_with(3);
        let last = verify(log.path()).unwrap().last_hash.unwrap();
        drop(log);

        let log = AuditLog::open(dir.path(), "s1").unwrap();
        let entry = log.append("decision", json!({"after": "reopen"})).unwrap();
        assert_eq!(entry.seq, 3);
        let records = read_records(log.path()).unwrap();
        assert_eq!(records.len(), 4);
        assert_eq!(records[3]["prev"], json!(last));
        let report = verify(log.path()).unwrap();
        assert_eq!(report.records, 4);
        assert_eq!(report.last_hash, Some(entry.hash));
    }

    #[test]
    fn open_creates_missing_parent_directories() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a").join("b");
        let log = AuditLog::open(&nested, "s1").unwrap();
        log.append("k", json!({})).unwrap();
        assert!(nested.join("s1.jsonl").is_file());
        assert!(nested.join("s1.jsonl.head").is_file());
    }

    #[test]
    fn verify_detects_an_edited_body_value() {
        let (_dir, log) = log_with(4);
        let mut lines = read_lines(log.path());
        let mut rec: Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(rec["body"]["allow"], json!(false));
        rec["body"]["allow"] = json!(true);
        lines[1] = canonical_json(&rec).unwrap();
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 2, "hash does not match its contents");
    }

    #[test]
    fn verify_detects_an_edited_hash() {
        let (_dir, log) = log_with(4);
        let mut lines = read_lines(log.path());
        let mut rec: Value = serde_json::from_str(&lines[2]).unwrap();
        rec["hash"] = json!("ab".repeat(32));
        lines[2] = canonical_json(&rec).unwrap();
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 3, "hash does not match its contents");
    }

    #[test]
    fn verify_detects_an_edited_record_whose_hash_was_recomputed() {
        let (_dir, log) = log_with(4);
        let mut lines = read_lines(log.path());
        let mut rec: Value = serde_json::from_str(&lines[1]).unwrap();
        rec["body"]["tool"] = json!("rm -rf /");
        rec.as_object_mut().unwrap().remove("hash");
        let hash = hash_hex(&canonical_json(&rec).unwrap());
        rec["hash"] = json!(hash);
        lines[1] = canonical_json(&rec).unwrap();
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 3, "prev does not match the hash of line 2");
    }

    #[test]
    fn verify_detects_two_records_swapped() {
        let (_dir, log) = log_with(5);
        let mut lines = read_lines(log.path());
        lines.swap(1, 2);
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 2, "seq 2 follows seq 0");
    }

    #[test]
    fn verify_detects_a_record_removed_from_the_middle() {
        let (_dir, log) = log_with(5);
        let mut lines = read_lines(log.path());
        lines.remove(2);
        write_lines(log.path(), &lines);
        assert_tampered(
            log.path(),
            3,
            "seq 3 follows seq 1 (record removed or reordered?)",
        );
    }

    #[test]
    fn verify_detects_the_first_record_removed() {
        let (_dir, log) = log_with(3);
        let mut lines = read_lines(log.path());
        lines.remove(0);
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 1, "first record has seq 1");
    }

    #[test]
    fn verify_detects_whole_trailing_records_removed_via_the_head_file() {
        let (_dir, log) = log_with(5);
        let mut lines = read_lines(log.path());
        lines.truncate(3);
        write_lines(log.path(), &lines);
        assert_tampered(
            log.path(),
            4,
            "log ends at seq 2 but head file says seq 4 (log truncated?)",
        );
    }

    #[test]
    fn verify_detects_all_records_removed_via_the_head_file() {
        let (_dir, log) = log_with(2);
        fs::write(log.path(), "").unwrap();
        assert_tampered(log.path(), 1, "log is empty but head file says seq 1");
    }

    #[test]
    fn verify_detects_a_replaced_last_record_via_the_head_file() {
        let (_dir, log) = log_with(3);
        let mut lines = read_lines(log.path());
        // Rebuild a self-consistent last record with different contents.
        let mut rec: Value = serde_json::from_str(&lines[2]).unwrap();
        rec["body"]["allow"] = json!(false);
        rec.as_object_mut().unwrap().remove("hash");
        let hash = hash_hex(&canonical_json(&rec).unwrap());
        rec["hash"] = json!(hash);
        lines[2] = canonical_json(&rec).unwrap();
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 4, "different hash than the head file");
    }

    #[test]
    fn verify_detects_a_partially_written_last_line() {
        let (_dir, log) = log_with(3);
        let text = fs::read_to_string(log.path()).unwrap();
        let cut = text.len() - 20;
        fs::write(log.path(), &text[..cut]).unwrap();
        assert_tampered(log.path(), 3, "not valid JSON (partial write or edit)");
    }

    #[test]
    fn verify_detects_a_last_line_missing_its_newline() {
        let (_dir, log) = log_with(3);
        let text = fs::read_to_string(log.path()).unwrap();
        fs::write(log.path(), text.trim_end_matches('\n')).unwrap();
        assert_tampered(log.path(), 3, "no trailing newline");
    }

    #[test]
    fn verify_detects_a_missing_head_file() {
        let (_dir, log) = log_with(3);
        let head = head_path_for(log.path());
        fs::remove_file(&head).unwrap();
        assert_tampered(
            log.path(),
            4,
            "cannot confirm the log is complete: head file",
        );
        let Err(err) = verify(log.path()) else {
            panic!("expected an error")
        };
        assert!(err.to_string().contains(&head.display().to_string()));
        assert!(err.to_string().contains("is missing"));
    }

    #[test]
    fn verify_detects_a_record_from_another_session() {
        let (_dir, log) = log_with(3);
        let mut lines = read_lines(log.path());
        let mut rec: Value = serde_json::from_str(&lines[1]).unwrap();
        rec["session"] = json!("other");
        rec.as_object_mut().unwrap().remove("hash");
        let hash = hash_hex(&canonical_json(&rec).unwrap());
        rec["hash"] = json!(hash);
        lines[1] = canonical_json(&rec).unwrap();
        write_lines(log.path(), &lines);
        // The line itself is self-consistent; its session is the first thing that is wrong.
        assert_tampered(log.path(), 2, "session \"other\" differs from \"s1\"");
    }

    #[test]
    fn an_empty_log_verifies_only_without_a_head_or_with_an_empty_head() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(dir.path(), "s1").unwrap();
        let report = verify(log.path()).unwrap();
        assert_eq!(
            report,
            VerifyReport {
                records: 0,
                last_hash: None
            }
        );

        let head = head_path_for(log.path());
        fs::write(&head, "{\"seq\":null,\"hash\":null}\n").unwrap();
        assert_eq!(verify(log.path()).unwrap().records, 0);

        fs::write(&head, "{\"seq\":0,\"hash\":\"00\"}\n").unwrap();
        assert_tampered(log.path(), 1, "log is empty but head file says seq 0");
    }

    #[test]
    fn verify_of_a_missing_log_reports_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope.jsonl");
        let err = verify(&path).unwrap_err();
        assert!(matches!(err, AuditError::Io { .. }));
        assert!(err.to_string().contains(&path.display().to_string()));
    }

    #[test]
    fn open_refuses_to_append_to_a_log_that_does_not_verify() {
        let (dir, log) = log_with(4);
        let path = log.path().to_path_buf();
        drop(log);
        let mut lines = read_lines(&path);
        lines.remove(1);
        write_lines(&path, &lines);
        let before = fs::read(&path).unwrap();

        let err = AuditLog::open(dir.path(), "s1").unwrap_err();
        match &err {
            AuditError::BrokenChain { source, .. } => {
                assert!(matches!(**source, AuditError::Tampered { line: 2, .. }));
            }
            other => panic!("expected BrokenChain, got {other:?}"),
        }
        assert!(err.to_string().contains(&path.display().to_string()));
        assert_eq!(
            fs::read(&path).unwrap(),
            before,
            "log must be left untouched"
        );
    }

    #[test]
    fn open_refuses_a_deleted_log_whose_head_remains() {
        let (dir, log) = log_with(2);
        let path = log.path().to_path_buf();
        drop(log);
        fs::remove_file(&path).unwrap();
        let err = AuditLog::open(dir.path(), "s1").unwrap_err();
        assert!(matches!(err, AuditError::BrokenChain { .. }), "{err:?}");
        assert!(!path.exists());
    }

    #[test]
    fn open_refuses_a_log_written_for_another_session() {
        let (dir, log) = log_with(2);
        let path = log.path().to_path_buf();
        drop(log);
        fs::rename(&path, dir.path().join("s2.jsonl")).unwrap();
        fs::rename(head_path_for(&path), dir.path().join("s2.jsonl.head")).unwrap();
        let err = AuditLog::open(dir.path(), "s2").unwrap_err();
        assert!(
            matches!(&err, AuditError::SessionMismatch { expected, found, .. } if expected == "s2" && found == "s1"),
            "{err:?}"
        );
    }

    #[test]
    fn open_rejects_session_ids_that_are_not_plain_file_names() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            "",
            "../x",
            "a/b",
            "a\\b",
            ".hidden",
            "x y",
            &"a".repeat(201),
        ] {
            let err = AuditLog::open(dir.path(), bad).unwrap_err();
            assert!(
                matches!(err, AuditError::InvalidSessionId { .. }),
                "{bad:?}: {err:?}"
            );
        }
        assert!(AuditLog::open(dir.path(), "2024-05-01T12.00_abc-9").is_ok());
    }

    #[test]
    fn concurrent_appends_from_8_threads_of_50_records_all_land_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(AuditLog::open(dir.path(), "s1").unwrap());
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    (0..50)
                        .map(|i| {
                            log.append("decision", json!({"thread": t, "i": i}))
                                .unwrap()
                                .seq
                        })
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        let mut seqs: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..400).collect::<Vec<u64>>());

        let report = verify(log.path()).unwrap();
        assert_eq!(report.records, 400);
        let records = read_records(log.path()).unwrap();
        for (i, rec) in records.iter().enumerate() {
            assert_eq!(rec["seq"], json!(i));
        }
        let mut seen: Vec<(u64, u64)> = records
            .iter()
            .map(|r| {
                (
                    r["body"]["thread"].as_u64().unwrap(),
                    r["body"]["i"].as_u64().unwrap(),
                )
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 400, "every (thread, i) pair lands exactly once");
    }

    #[test]
    fn canonical_json_sorts_keys_recursively_without_whitespace() {
        let mut inner = Map::new();
        inner.insert("zeta".to_owned(), json!(1));
        inner.insert("alpha".to_owned(), json!([{"y": 1, "x": 2}]));
        let mut outer = Map::new();
        outer.insert("b".to_owned(), Value::Object(inner));
        outer.insert("a".to_owned(), json!("s p a c e"));
        outer.insert("C".to_owned(), json!(null));
        let text = canonical_json(&Value::Object(outer)).unwrap();
        assert_eq!(
            text,
            r#"{"C":null,"a":"s p a c e","b":{"alpha":[{"x":2,"y":1}],"zeta":1}}"#
        );
    }

    #[test]
    fn log_lines_are_written_in_canonical_form() {
        let (_dir, log) = log_with(2);
        for line in read_lines(log.path()) {
            let value: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(canonical_json(&value).unwrap(), line);
        }
    }

    #[test]
    fn bodies_with_awkward_floats_and_unicode_still_verify() {
        let (_dir, log) = log_with(0);
        let floats = [
            0.1,
            1.0 / 3.0,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            -0.0,
            123456.789e-200,
            9007199254740993.0,
            5e-324,
            // serde_json's default (non-`float_roundtrip`) parser reads these back one ulp off.
            1.0715660391465826e-75,
            -1.81996730402717e-179,
            -1.603964615428183e143,
            -9.643915712060552e-234,
        ];
        for (i, f) in floats.iter().enumerate() {
            log.append("f", json!({"v": f, "i": i, "s": "é \"q\" \n\t\u{1}"}))
                .unwrap();
        }
        assert_eq!(verify(log.path()).unwrap().records, floats.len() as u64);
    }

    #[test]
    fn a_body_of_many_arbitrary_floats_still_verifies() {
        let (_dir, log) = log_with(0);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut floats = Vec::new();
        while floats.len() < 2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = f64::from_bits(x);
            if f.is_finite() {
                floats.push(f);
            }
        }
        log.append("floats", json!({ "v": floats })).unwrap();
        assert_eq!(verify(log.path()).unwrap().records, 1);
    }

    #[test]
    fn bodies_that_contain_a_hash_key_of_their_own_still_verify() {
        let (_dir, log) = log_with(0);
        let fake = "0".repeat(64);
        log.append(
            "k",
            json!({"hash": fake, "nested": {"a": 1, "hash": "x"}, "s": ",\"hash\":\""}),
        )
        .unwrap();
        log.append("k", json!([{"z": 1, "hash": fake}])).unwrap();
        assert_eq!(verify(log.path()).unwrap().records, 2);
    }

    #[test]
    fn verify_detects_a_record_reformatted_without_changing_its_meaning() {
        let (_dir, log) = log_with(3);
        let mut lines = read_lines(log.path());
        lines[1] = lines[1].replacen("{\"body\":", "{ \"body\": ", 1);
        write_lines(log.path(), &lines);
        assert_tampered(log.path(), 2, "hash does not match its contents");
    }

    #[test]
    fn read_records_reports_the_line_that_is_not_json() {
        let (_dir, log) = log_with(2);
        let mut lines = read_lines(log.path());
        lines.insert(1, "{not json".to_owned());
        write_lines(log.path(), &lines);
        match read_records(log.path()) {
            Err(AuditError::Tampered { line: 2, problem }) => {
                assert!(problem.contains("not valid JSON"));
            }
            other => panic!("expected Tampered at line 2, got {other:?}"),
        }
    }

    #[test]
    fn tampered_errors_say_what_and_where() {
        let err = AuditError::Tampered {
            line: 3,
            problem: "hash does not match its contents (record edited?)".to_owned(),
        };
        assert_eq!(
            err.to_string(),
            "audit log does not verify: line 3: hash does not match its contents (record edited?)"
        );
    }
}
