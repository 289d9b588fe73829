//! Reading a log back and checking it: the chain (every line, seq, prev and hash) and the head
//! file. Owned by `audit`; comparing with the state database's anchor is in `anchor`.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::{Map, Value};

use super::{AuditError, GENESIS_PREV, Head, RECORD_FIELDS, hash_hex, head_path_for, io_err};

/// What a full verification learned, including the session for `open`.
pub(super) struct Checked {
    pub(super) records: u64,
    pub(super) last_hash: Option<String>,
    pub(super) session: Option<String>,
    /// Set when the log holds one record more than its head file names (see `check_head`).
    pub(super) past_head: bool,
}

/// A raw line of the log, without its trailing newline.
pub(super) struct Line {
    pub(super) bytes: Vec<u8>,
    terminated: bool,
}

pub(super) fn verify_full(path: &Path) -> Result<Checked, AuditError> {
    let mut records: u64 = 0;
    let mut last_seq: Option<u64> = None;
    let mut last_hash: Option<String> = None;
    let mut session: Option<String> = None;
    // The record the head file names, found on the way: records past it must follow from it.
    let head_seq = read_head(path).ok().and_then(|head| head.seq);
    let mut hash_at_head: Option<String> = None;

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
        if head_seq == Some(seq) {
            hash_at_head = Some(hash.to_owned());
        }
        last_hash = Some(hash.to_owned());
        Ok(())
    })?;

    let past_head = check_head(
        path,
        records,
        last_seq,
        last_hash.as_deref(),
        hash_at_head.as_deref(),
    )?;
    Ok(Checked {
        records,
        last_hash,
        session,
        past_head,
    })
}

/// Compares the end of the log with the head file. The writer updates the head after a commit's
/// lines are durable, so a crash in between leaves the records of that commit past the head,
/// following from the record the head names: that is accepted (returns `true`) rather than
/// making an honest log fail. It concedes nothing: the head file sits next to the log and can be rewritten as easily;
/// the state database's anchor (see `anchor`) is what a forger cannot reach.
fn check_head(
    path: &Path,
    records: u64,
    last_seq: Option<u64>,
    last_hash: Option<&str>,
    hash_at_head: Option<&str>,
) -> Result<bool, AuditError> {
    let head_path = head_path_for(path);
    let line = usize::try_from(records)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    let tampered = |problem: String| AuditError::Tampered { line, problem };

    let text = match fs::read(&head_path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return match records {
                0 => Ok(false),
                // The first record was written, the process stopped before the head was.
                1 => Ok(true),
                _ => Err(tampered(format!(
                    "cannot confirm the log is complete: head file {} is missing",
                    head_path.display()
                ))),
            };
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
        (None, None) => Ok(false),
        (None, Some(want)) => Err(tampered(format!(
            "log is empty but head file says seq {want} (log truncated?)"
        ))),
        // A first commit that stopped before its head update (a new log starts with this head).
        (Some(_), None) => Ok(true),
        (Some(got), Some(want)) if got < want => Err(tampered(format!(
            "log ends at seq {got} but head file says seq {want} (log truncated?)"
        ))),
        (Some(got), Some(want))
            if got > want && head.hash.is_some() && head.hash.as_deref() == hash_at_head =>
        {
            Ok(true)
        }
        (Some(got), Some(want)) if got > want => Err(tampered(format!(
            "log ends at seq {got} but head file says seq {want} (records appended outside airlock?)"
        ))),
        (Some(got), Some(_)) => {
            if head.hash.as_deref() == last_hash {
                Ok(false)
            } else {
                Err(tampered(format!(
                    "last record (seq {got}) has a different hash than the head file records (last record replaced?)"
                )))
            }
        }
    }
}

/// Calls `f` with each line (1-based number, bytes without the newline) of the file.
pub(super) fn for_each_line(
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

pub(super) fn parse_line(line_no: usize, bytes: &[u8]) -> Result<Value, AuditError> {
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

/// The head file, parsed (for finding the record it names while the log is read; errors are
/// reported by `check_head`).
fn read_head(path: &Path) -> Result<Head, ()> {
    let text = fs::read(head_path_for(path)).map_err(|_| ())?;
    serde_json::from_slice(&text).map_err(|_| ())
}
