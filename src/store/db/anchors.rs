//! The audit writer's anchors: for each session, where its audit log ends (confirmed) and where
//! it is about to end (pending). The rules for writing and matching them live in
//! `approval::audit::anchor`; this file stores them, with every change one conditional
//! statement, so a writer whose view of the log is stale cannot move the anchor.
//!
//! Whoever can edit the log can usually edit this database too, so every row is signed under
//! the state key (see `store::key`): the session and all four columns that say where its log
//! ends. A row whose signature does not verify (rewritten to match a forged log, or another
//! session's row copied in) is an error, never an anchor. A row with no signature at all was
//! written before anchors were signed (or had its signature removed: the two look the same). It
//! is read as unsigned: the writer still compares its log with it and signs it with its next
//! write, and `audit verify` does not take it as proof. Accepting it in the writer gives an
//! attacker nothing a deleted row would not: a missing anchor is written afresh too.
//!
//! A deleted row cannot be told from a log that never had one by the row alone, so
//! [`Store::knows_session`] says whether the database holds anything else of the session.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};
use crate::approval::audit::{Anchor, ChainAnchor, ChainEnd};
use crate::store::key::StateKey;

/// What an anchor's signature is made under, so it can never pass for another record's.
const MAC_LABEL: &str = "audit_anchor";

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

    /// The session's anchor, with the store's own error (a tampered anchor is `Tampered`).
    pub fn anchor(&self, session: &str) -> Result<Option<Anchor>, StoreError> {
        self.store.audit_anchor(session)
    }

    /// See [`Store::knows_session`].
    pub fn knows_session(&self, session: &str) -> Result<bool, StoreError> {
        self.store.knows_session(session)
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
            .anchor_intend(session, now, next, crate::clock::now_ms())
            .map_err(|e| e.to_string())
    }

    fn confirm(&mut self, session: &str, end: &ChainEnd) -> Result<(), String> {
        self.store
            .anchor_confirm(session, end, crate::clock::now_ms())
            .map_err(|e| e.to_string())
    }
}

/// An anchor row's columns as stored: what its signature covers, with the session.
struct Columns {
    records: i64,
    last_hash: Option<String>,
    pending_records: Option<i64>,
    pending_hash: Option<String>,
}

impl Columns {
    fn of(confirmed: &ChainEnd, pending: Option<&ChainEnd>) -> Result<Columns, StoreError> {
        Ok(Columns {
            records: count(confirmed.records)?,
            last_hash: confirmed.last_hash.clone(),
            pending_records: pending.map(|p| count(p.records)).transpose()?,
            pending_hash: pending.and_then(|p| p.last_hash.clone()),
        })
    }

    /// Each column as text, a missing one as a flag with nothing after it, so no two rows
    /// give the same message.
    fn fields(&self, session: &str) -> Vec<Vec<u8>> {
        let optional = |value: Option<String>| match value {
            Some(v) => [b"1".to_vec(), v.into_bytes()],
            None => [b"0".to_vec(), Vec::new()],
        };
        let mut fields = vec![
            session.as_bytes().to_vec(),
            self.records.to_string().into_bytes(),
        ];
        fields.extend(optional(self.last_hash.clone()));
        fields.extend(optional(self.pending_records.map(|n| n.to_string())));
        fields.extend(optional(self.pending_hash.clone()));
        fields
    }

    fn mac(&self, key: &StateKey, session: &str) -> String {
        let fields = self.fields(session);
        let fields: Vec<&[u8]> = fields.iter().map(Vec::as_slice).collect();
        key.mac(MAC_LABEL, &fields)
    }

    fn signed_by(&self, key: &StateKey, session: &str, mac: &str) -> bool {
        let fields = self.fields(session);
        let fields: Vec<&[u8]> = fields.iter().map(Vec::as_slice).collect();
        key.verify(MAC_LABEL, &fields, Some(mac))
    }
}

impl Store {
    /// The session's audit anchor, `None` if its log was never anchored. An anchor whose
    /// signature does not verify is refused as tampered; one with no signature (written before
    /// anchors were signed) comes back with `signed: false`.
    pub fn audit_anchor(&self, session: &str) -> Result<Option<Anchor>, StoreError> {
        let row: Option<(Columns, Option<String>)> = self
            .conn
            .query_row(
                "SELECT records, last_hash, pending_records, pending_hash, mac
                 FROM audit_anchors WHERE session = ?1",
                params![session],
                |r| {
                    Ok((
                        Columns {
                            records: r.get(0)?,
                            last_hash: r.get(1)?,
                            pending_records: r.get(2)?,
                            pending_hash: r.get(3)?,
                        },
                        r.get(4)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let Some((columns, mac)) = row else {
            return Ok(None);
        };
        // The signature first: a signed row is never judged by what an editor put in it.
        let signed = match mac {
            None => false,
            Some(mac) if columns.signed_by(&self.key, session, &mac) => true,
            Some(_) => {
                return Err(StoreError::Tampered(format!(
                    "{}: the audit anchor of session {session:?} was changed outside airlock (tampered): its signature does not verify, so it is not used and the log cannot be checked against it; keep the database and the log as evidence",
                    self.path.display()
                )));
            }
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
        let pending = match (columns.pending_records, columns.pending_hash) {
            (None, None) => None,
            (Some(n), hash @ Some(_)) => Some(end(n, hash)?),
            _ => return Err(corrupt("half a pending end")),
        };
        Ok(Some(Anchor {
            confirmed: end(columns.records, columns.last_hash)?,
            pending,
            signed,
        }))
    }

    /// Anchors `next` as pending and `now` as confirmed, signed, only if the stored anchor is at
    /// `now` (confirmed, or pending and never confirmed), or there is none yet.
    pub fn anchor_intend(
        &self,
        session: &str,
        now: &ChainEnd,
        next: &ChainEnd,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        let columns = Columns::of(now, Some(next))?;
        let n = self
            .conn
            .execute(
                "INSERT INTO audit_anchors
                     (session, records, last_hash, pending_records, pending_hash, updated_ms, mac)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(session) DO UPDATE SET
                     records = excluded.records, last_hash = excluded.last_hash,
                     pending_records = excluded.pending_records,
                     pending_hash = excluded.pending_hash, updated_ms = excluded.updated_ms,
                     mac = excluded.mac
                 WHERE (audit_anchors.records = excluded.records
                        AND audit_anchors.last_hash IS excluded.last_hash)
                    OR (audit_anchors.pending_records = excluded.records
                        AND audit_anchors.pending_hash IS excluded.last_hash)",
                params![
                    session,
                    columns.records,
                    columns.last_hash,
                    columns.pending_records,
                    columns.pending_hash,
                    at_ms as i64,
                    columns.mac(&self.key, session),
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

    /// Turns the pending end `end` into the confirmed one, signed; refused when `end` is not
    /// pending.
    pub fn anchor_confirm(
        &self,
        session: &str,
        end: &ChainEnd,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        let columns = Columns::of(end, None)?;
        let n = self
            .conn
            .execute(
                "UPDATE audit_anchors SET records = pending_records, last_hash = pending_hash,
                     pending_records = NULL, pending_hash = NULL, updated_ms = ?4, mac = ?5
                 WHERE session = ?1 AND pending_records = ?2 AND pending_hash IS ?3",
                params![
                    session,
                    columns.records,
                    columns.last_hash,
                    at_ms as i64,
                    columns.mac(&self.key, session),
                ],
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

    /// Whether the database holds anything of `session` besides its anchor: a cockpit session,
    /// a run (by its id or its session), an approval or the session's grants. A session airlock
    /// ran whose log holds a record also has an anchor, so for such a session a missing anchor
    /// was deleted.
    pub fn knows_session(&self, session: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)
                     OR EXISTS (SELECT 1 FROM runs WHERE id = ?1 OR session = ?1)
                     OR EXISTS (SELECT 1 FROM approvals WHERE session = ?1 OR run_id = ?1)
                     OR EXISTS (SELECT 1 FROM session_grants WHERE session = ?1)",
                params![session],
                |r| r.get(0),
            )
            .map_err(|e| self.sqlite(e))
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
