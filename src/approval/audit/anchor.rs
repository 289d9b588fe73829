//! The chain's end kept outside the log, in the state database. The log and its head file sit
//! in one directory, so whoever can cut records off the log, drop some and recompute the chain,
//! or empty it, can make the head file agree; the anchor is what they cannot quietly rewrite.
//!
//! Order of operations, so that a crash never makes an honest log fail: before a record is
//! written the writer anchors `confirmed` = the end the log has now and `pending` = the end it
//! will have with the record; once the line is durable it confirms (`confirmed` = `pending`).
//! A log must therefore end exactly at `confirmed`, or exactly at `pending` (the writer stopped
//! between writing and confirming). Anything else was not written by airlock. What a crash can
//! leave open is the one record the writer was about to write: that record may be missing, and
//! verify says so. (Anchoring after the append would let a forged record follow the anchored
//! end; anchoring only before it would let the last record be dropped at any time.)
//!
//! The anchor is only worth what it costs to rewrite, and the database is as writable as the
//! log, so the store signs every anchor under the state key and refuses one whose signature does
//! not verify. Two cases are left to `audit verify`, which judges them with what the store can
//! tell: an anchor with no signature at all (written before anchors were signed, or stripped of
//! it), which the writer still compares with and signs again, but which proves nothing; and no
//! anchor for a session the database otherwise knows, which was deleted.
//!
//! The store implements [`ChainAnchor`]; this module owns the rule for what matches.

use std::path::Path;

use super::{AuditError, short_hash};

/// Where a chain ends: how many records, and the last one's hash (`None` when there are none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainEnd {
    pub records: u64,
    pub last_hash: Option<String>,
}

/// A session's anchor as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub confirmed: ChainEnd,
    /// The end the log was about to reach when the writer last anchored without confirming.
    pub pending: Option<ChainEnd>,
    /// Its signature verified. `false`: it has none (written before anchors were signed, or
    /// its signature was removed); the ends are compared all the same, but it proves nothing.
    /// An anchor whose signature does not verify is never loaded.
    pub signed: bool,
}

/// Somewhere a log's end is recorded as the log grows. Errors are the store's own messages,
/// naming the database.
pub trait ChainAnchor: Send {
    /// What a person is told the log was checked against, e.g. "the state database /x/airlock.db".
    fn place(&self) -> String;
    /// The session's anchor, `None` if it never had one. An anchor changed outside airlock
    /// (its signature does not verify) is an error, never returned.
    fn load(&mut self, session: &str) -> Result<Option<Anchor>, String>;
    /// Before a record is written: the log ends at `now` and will end at `next`. Refuses when
    /// the stored anchor is at neither `now` nor a pending `now` (another writer, or the log
    /// changed since it was opened).
    fn intend(&mut self, session: &str, now: &ChainEnd, next: &ChainEnd) -> Result<(), String>;
    /// After the record is durable in the log.
    fn confirm(&mut self, session: &str, end: &ChainEnd) -> Result<(), String>;
}

/// How a log's end matched its anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorMatch {
    /// The log ends where the anchor says.
    Confirmed,
    /// The log's last record was anchored as about to be written but never confirmed: the
    /// writer stopped between the two.
    PendingWritten,
    /// A record was about to be written when the writer stopped, and never reached the log.
    PendingLost,
}

impl AnchorMatch {
    /// A clause for verify's output.
    pub fn describe(self) -> &'static str {
        match self {
            AnchorMatch::Confirmed => "matches",
            AnchorMatch::PendingWritten => {
                "matches (its last record was written but not yet confirmed when the writer stopped)"
            }
            AnchorMatch::PendingLost => {
                "matches (a record the writer was about to append when it stopped never reached the log)"
            }
        }
    }
}

/// Compares a log's end (`None`: the log file does not exist) with its anchor. The error names
/// what differs and the lines involved.
pub fn compare(
    log: Option<&ChainEnd>,
    anchor: &Anchor,
    place: &str,
) -> Result<AnchorMatch, AuditError> {
    let mismatch = |problem: String| AuditError::AnchorMismatch {
        place: place.to_owned(),
        problem,
    };
    let Some(log) = log else {
        let want = anchor.pending.as_ref().unwrap_or(&anchor.confirmed);
        return Err(mismatch(format!(
            "the log file is missing, but the anchor records {} (log deleted?)",
            describe_end(want)
        )));
    };
    if log == &anchor.confirmed {
        return Ok(if anchor.pending.is_some() {
            AnchorMatch::PendingLost
        } else {
            AnchorMatch::Confirmed
        });
    }
    if anchor.pending.as_ref() == Some(log) {
        return Ok(AnchorMatch::PendingWritten);
    }
    // Compare with the end the log's length points at.
    let want = match &anchor.pending {
        Some(p) if p.records == log.records => p,
        _ => &anchor.confirmed,
    };
    let (got, expected) = (log.records, want.records);
    Err(mismatch(if got == 0 {
        format!(
            "the log is empty, but the anchor records {} (log emptied?)",
            describe_end(want)
        )
    } else if got < expected {
        format!(
            "the log has {got} records, but the anchor records {}; missing: {} (log truncated, or records dropped and the chain recomputed?)",
            describe_end(want),
            lines(got + 1, expected)
        )
    } else if got > expected {
        format!(
            "the log has {got} records, but the anchor records {}; not written by airlock: {} (records appended outside airlock?)",
            describe_end(want),
            lines(expected + 1, got)
        )
    } else {
        format!(
            "line {got} (the last record) has hash {}, but the anchor records {} (records replaced, or dropped and the chain recomputed?)",
            short_hash(log.last_hash.as_deref().unwrap_or("")),
            describe_end(want)
        )
    }))
}

fn lines(first: u64, last: u64) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

fn describe_end(end: &ChainEnd) -> String {
    match &end.last_hash {
        None => "an empty log".to_owned(),
        Some(hash) => format!(
            "{} record{} ending at {}",
            end.records,
            if end.records == 1 { "" } else { "s" },
            short_hash(hash)
        ),
    }
}

/// The session a log file is named for: `<session>.jsonl`.
pub fn session_of(path: &Path) -> Option<String> {
    path.file_name()?
        .to_str()?
        .strip_suffix(".jsonl")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests;
