//! The audit writer's anchors: for each session, where its audit log ends (confirmed) and where
//! it is about to end (pending). The rules for writing and matching them live in
//! `approval::audit::anchor`; this file stores them, with every change one conditional
//! statement, so a writer whose view of the log is stale cannot move the anchor.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};
use crate::approval::audit::{Anchor, ChainAnchor, ChainEnd};

/// A session's anchor, read and written through the state database.
pub struct DbAnchor {
    store: Store,
    path: PathBuf,
}

impl DbAnchor {
    /// Opens (creating if needed) the state database at `path`: for the audit writer.
    pub fn open(path: &Path) -> Result<DbAnchor, StoreError> {
        Ok(DbAnchor {
            store: Store::open(path)?,
            path: path.to_path_buf(),
        })
    }

    /// Opens the state database at `path` only if it exists: for verification, which must not
    /// make an empty database and then report that it holds no anchor.
    pub fn open_existing(path: &Path) -> Result<Option<DbAnchor>, StoreError> {
        if !path.exists() {
            return Ok(None);
        }
        DbAnchor::open(path).map(Some)
    }
}

impl ChainAnchor for DbAnchor {
    fn place(&self) -> String {
        format!("the state database {}", self.path.display())
    }

    fn load(&mut self, session: &str) -> Result<Option<Anchor>, String> {
        self.store.audit_anchor(session).map_err(|e| e.to_string())
    }

    fn intend(&mut self, session: &str, now: &ChainEnd, next: &ChainEnd) -> Result<(), String> {
        self.store
            .anchor_intend(session, now, next, crate::approval::gate::now_ms())
            .map_err(|e| e.to_string())
    }

    fn confirm(&mut self, session: &str, end: &ChainEnd) -> Result<(), String> {
        self.store
            .anchor_confirm(session, end, crate::approval::gate::now_ms())
            .map_err(|e| e.to_string())
    }
}

impl Store {
    /// The session's audit anchor, `None` if its log was never anchored.
    pub fn audit_anchor(&self, session: &str) -> Result<Option<Anchor>, StoreError> {
        type Row = (i64, Option<String>, Option<i64>, Option<String>);
        let row: Option<Row> = self
            .conn
            .query_row(
                "SELECT records, last_hash, pending_records, pending_hash
                 FROM audit_anchors WHERE session = ?1",
                params![session],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let Some((records, last_hash, pending_records, pending_hash)) = row else {
            return Ok(None);
        };
        let corrupt = |what: &str| {
            StoreError::Corrupt(format!(
                "{}: the audit anchor of session {session:?} is not valid ({what}); it was edited outside airlock",
                self.path.display()
            ))
        };
        let end = |records: i64, hash: Option<String>| -> Result<ChainEnd, StoreError> {
            let records = u64::try_from(records).map_err(|_| corrupt("a negative count"))?;
            match (&hash, records) {
                (None, 0) => {}
                (Some(h), 1..) if is_hash(h) => {}
                _ => return Err(corrupt("a count that does not fit its hash")),
            }
            Ok(ChainEnd {
                records,
                last_hash: hash,
            })
        };
        let pending = match (pending_records, pending_hash) {
            (None, None) => None,
            (Some(n), hash @ Some(_)) => Some(end(n, hash)?),
            _ => return Err(corrupt("half a pending end")),
        };
        Ok(Some(Anchor {
            confirmed: end(records, last_hash)?,
            pending,
        }))
    }

    /// Anchors `next` as pending and `now` as confirmed, only if the stored anchor is at `now`
    /// (confirmed, or pending and never confirmed), or there is none yet.
    pub fn anchor_intend(
        &self,
        session: &str,
        now: &ChainEnd,
        next: &ChainEnd,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "INSERT INTO audit_anchors
                     (session, records, last_hash, pending_records, pending_hash, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(session) DO UPDATE SET
                     records = excluded.records, last_hash = excluded.last_hash,
                     pending_records = excluded.pending_records,
                     pending_hash = excluded.pending_hash, updated_ms = excluded.updated_ms
                 WHERE (audit_anchors.records = excluded.records
                        AND audit_anchors.last_hash IS excluded.last_hash)
                    OR (audit_anchors.pending_records = excluded.records
                        AND audit_anchors.pending_hash IS excluded.last_hash)",
                params![
                    session,
                    count(now.records)?,
                    now.last_hash,
                    count(next.records)?,
                    next.last_hash,
                    at_ms as i64
                ],
            )
            .map_err(|e| self.sqlite(e))?;
        if n == 1 {
            return Ok(());
        }
        Err(StoreError::Refused(format!(
            "the anchor of session {session:?} does not end where this writer's log does ({} records): another process is writing this session, or its log changed since it was opened",
            now.records
        )))
    }

    /// Turns the pending end `end` into the confirmed one; refused when `end` is not pending.
    pub fn anchor_confirm(
        &self,
        session: &str,
        end: &ChainEnd,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE audit_anchors SET records = pending_records, last_hash = pending_hash,
                     pending_records = NULL, pending_hash = NULL, updated_ms = ?4
                 WHERE session = ?1 AND pending_records = ?2 AND pending_hash IS ?3",
                params![session, count(end.records)?, end.last_hash, at_ms as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        if n == 1 {
            return Ok(());
        }
        Err(StoreError::Refused(format!(
            "the anchor of session {session:?} has no pending end at {} records to confirm: another process is writing this session",
            end.records
        )))
    }
}

fn count(records: u64) -> Result<i64, StoreError> {
    i64::try_from(records)
        .map_err(|_| StoreError::Corrupt(format!("{records} audit records do not fit a count")))
}

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests;
