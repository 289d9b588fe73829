//! The state database (SQLite in WAL mode): runs with their checkpoints, and pending approvals
//! with their one-time codes. Safe for several processes at once (the cockpit, a headless run,
//! `airlock approve` from another terminal): every decision is one conditional UPDATE, never a
//! read followed by a write.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::approval::frozen::{FrozenCall, hex};

mod anchors;
pub use anchors::DbAnchor;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the state database {path}: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Corrupt(String),
}

/// Schema versions, applied in order; `PRAGMA user_version` says how far a database is.
const MIGRATIONS: &[&str] = &[
    // 1: runs and approvals.
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        session TEXT NOT NULL,
        workspace TEXT NOT NULL,
        state TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL,
        checkpoint TEXT
    );
    CREATE TABLE approvals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs(id),
        session TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        digest TEXT NOT NULL,
        frozen TEXT NOT NULL,
        summary TEXT NOT NULL,
        code_hash TEXT NOT NULL UNIQUE,
        created_ms INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        decision TEXT,
        decided_ms INTEGER
    );
    CREATE INDEX approvals_run ON approvals(run_id);",
    // 2: a session's live grants, so a resumed run keeps what was allowed for the session.
    "CREATE TABLE session_grants (
        session TEXT PRIMARY KEY,
        grants TEXT NOT NULL,
        updated_ms INTEGER NOT NULL
    );",
    // 3: answers and resumes that were refused (replayed, expired, unknown code, tampered...), so
    // an attempt that changed nothing is still on record.
    "CREATE TABLE refusals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at_ms INTEGER NOT NULL,
        run_id TEXT,
        call_id TEXT,
        action TEXT NOT NULL,
        reason TEXT NOT NULL
    );
    CREATE INDEX refusals_run ON refusals(run_id);",
    // 4 (audit anchors, kept apart from the other tables): where each session's audit log
    // ends, written by the audit writer around every append (see `anchors`), so a log cut,
    // emptied or recomputed next to its head file no longer verifies.
    "CREATE TABLE audit_anchors (
        session TEXT PRIMARY KEY,
        records INTEGER NOT NULL,
        last_hash TEXT,
        pending_records INTEGER,
        pending_hash TEXT,
        updated_ms INTEGER NOT NULL
    );",
];

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    pub session: String,
    pub workspace: PathBuf,
    pub state: String,
    pub checkpoint: Option<String>,
}

/// An answer or resume that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub at_ms: u64,
    pub call_id: Option<String>,
    pub action: String,
    pub reason: String,
}

/// A pending (or decided) approval as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    pub id: i64,
    pub run_id: String,
    pub session: String,
    pub call_id: String,
    pub tool: String,
    pub digest: String,
    pub frozen: FrozenCall,
    /// What a person reads: risk, reasons, preview (JSON).
    pub summary: String,
    pub created_ms: u64,
    pub expires_ms: u64,
    pub state: String,
    pub decision: Option<String>,
}

pub fn code_hash(code: &str) -> String {
    let normal: String = code
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase();
    hex(&Sha256::digest(normal.as_bytes()))
}

/// A fresh one-time code, `XXXX-XXXX` from an alphabet without look-alikes.
pub fn new_code() -> Result<String, StoreError> {
    use std::io::Read;
    const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| {
            StoreError::Refused(format!("cannot read /dev/urandom for a one-time code: {e}"))
        })?;
    let chars: String = bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    Ok(format!("{}-{}", &chars[..4], &chars[4..]))
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut conn = Connection::open(path).map_err(sqlite)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(sqlite)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sqlite)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sqlite)?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(StoreError::Corrupt(format!(
                "{} has schema version {version}, newer than this airlock knows ({known}); update airlock",
                path.display()
            )));
        }
        for (i, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = conn.transaction().map_err(sqlite)?;
            tx.execute_batch(migration).map_err(sqlite)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(sqlite)?;
            tx.commit().map_err(sqlite)?;
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub fn save_run(
        &self,
        id: &str,
        session: &str,
        workspace: &Path,
        state: &str,
        checkpoint: Option<&str>,
        now: u64,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO runs (id, session, workspace, state, created_ms, updated_ms, checkpoint)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
                 ON CONFLICT(id) DO UPDATE SET state = ?4, updated_ms = ?5, checkpoint = ?6",
                params![id, session, workspace.display().to_string(), state, now as i64, checkpoint],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    pub fn run(&self, id: &str) -> Result<Option<RunRow>, StoreError> {
        self.conn
            .query_row(
                "SELECT session, workspace, state, checkpoint FROM runs WHERE id = ?1",
                params![id],
                |r| {
                    Ok(RunRow {
                        session: r.get(0)?,
                        workspace: PathBuf::from(r.get::<_, String>(1)?),
                        state: r.get(2)?,
                        checkpoint: r.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Sets a run's state whatever it was (the run's own process finishing it).
    pub fn set_run_state(&self, id: &str, state: &str, now: u64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET state = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id, state, now as i64],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// Moves a run from one state to another, only if it is in the first: `false` if it was not.
    pub fn transition_run(
        &self,
        id: &str,
        from: &str,
        to: &str,
        now: u64,
    ) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET state = ?3, updated_ms = ?4 WHERE id = ?1 AND state = ?2",
                params![id, from, to, now as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(n == 1)
    }

    /// Replaces a session's stored grants (JSON list of `Grant`).
    pub fn save_grants(
        &self,
        session: &str,
        grants_json: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO session_grants (session, grants, updated_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session) DO UPDATE SET grants = ?2, updated_ms = ?3",
                params![session, grants_json, now as i64],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    pub fn grants(&self, session: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT grants FROM session_grants WHERE session = ?1",
                params![session],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Records a pending approval; returns its one-time code (only its hash is stored).
    #[allow(clippy::too_many_arguments)]
    pub fn add_approval(
        &self,
        run_id: &str,
        session: &str,
        call_id: &str,
        frozen: &FrozenCall,
        summary: &str,
        now: u64,
        ttl_ms: u64,
    ) -> Result<String, StoreError> {
        let code = new_code()?;
        let frozen_json =
            serde_json::to_string(frozen).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.conn
            .execute(
                "INSERT INTO approvals (run_id, session, call_id, tool, digest, frozen, summary, code_hash, created_ms, expires_ms, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending')",
                params![run_id, session, call_id, frozen.tool, frozen.digest, frozen_json, summary, code_hash(&code), now as i64, (now + ttl_ms) as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(code)
    }

    fn row(r: &rusqlite::Row) -> rusqlite::Result<ApprovalRow> {
        let frozen: String = r.get(6)?;
        Ok(ApprovalRow {
            id: r.get(0)?,
            run_id: r.get(1)?,
            session: r.get(2)?,
            call_id: r.get(3)?,
            tool: r.get(4)?,
            digest: r.get(5)?,
            frozen: serde_json::from_str(&frozen).unwrap_or(FrozenCall {
                tool: String::new(),
                canonical: frozen,
                digest: String::new(),
            }),
            summary: r.get(7)?,
            created_ms: r.get::<_, i64>(8)? as u64,
            expires_ms: r.get::<_, i64>(9)? as u64,
            state: r.get(10)?,
            decision: r.get(11)?,
        })
    }

    const COLUMNS: &'static str = "id, run_id, session, call_id, tool, digest, frozen, summary, created_ms, expires_ms, state, decision";

    pub fn pending(&self, now: u64) -> Result<Vec<ApprovalRow>, StoreError> {
        let sql = format!(
            "SELECT {} FROM approvals WHERE state = 'pending' AND expires_ms > ?1 ORDER BY id",
            Self::COLUMNS
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map(params![now as i64], Self::row)
            .map_err(|e| self.sqlite(e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sqlite(e))
    }

    pub fn approval_for_run(&self, run_id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        let sql = format!(
            "SELECT {} FROM approvals WHERE run_id = ?1 ORDER BY id DESC LIMIT 1",
            Self::COLUMNS
        );
        self.conn
            .query_row(&sql, params![run_id], Self::row)
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    pub fn approval_by_code(&self, code: &str) -> Result<Option<ApprovalRow>, StoreError> {
        let sql = format!(
            "SELECT {} FROM approvals WHERE code_hash = ?1",
            Self::COLUMNS
        );
        self.conn
            .query_row(&sql, params![code_hash(code)], Self::row)
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Decides a pending approval by its code, in one conditional UPDATE: only one caller can ever
    /// win. A refusal says why (unknown, expired, already decided).
    pub fn decide(&self, code: &str, decision: &str, now: u64) -> Result<ApprovalRow, StoreError> {
        let state = if decision.contains("\"deny\"") {
            "denied"
        } else {
            "approved"
        };
        let n = self
            .conn
            .execute(
                "UPDATE approvals SET state = ?2, decision = ?3, decided_ms = ?4
                 WHERE code_hash = ?1 AND state = 'pending' AND expires_ms > ?4",
                params![code_hash(code), state, decision, now as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        let row = self.approval_by_code(code)?;
        let action = if state == "denied" { "deny" } else { "approve" };
        let (row, why) = match (n, row) {
            (1, Some(row)) => return Ok(row),
            (_, None) => (
                None,
                "no approval has this code; check it and try again".to_string(),
            ),
            (_, Some(row)) if row.state == "pending" => {
                let why = format!(
                    "the approval for {} expired; nothing was decided",
                    row.call_id
                );
                (Some(row), why)
            }
            (_, Some(row)) => {
                let why = format!(
                    "the approval for {} was already decided ({}); this answer changes nothing",
                    row.call_id, row.state
                );
                (Some(row), why)
            }
        };
        self.record_refusal(
            row.as_ref().map(|r| r.run_id.as_str()),
            row.as_ref().map(|r| r.call_id.as_str()),
            action,
            &why,
            now,
        )?;
        Err(StoreError::Refused(why))
    }

    /// Puts an attempt that was refused on record.
    pub fn record_refusal(
        &self,
        run_id: Option<&str>,
        call_id: Option<&str>,
        action: &str,
        reason: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO refusals (at_ms, run_id, call_id, action, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![now as i64, run_id, call_id, action, reason],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// The refusals on record for a run, oldest first.
    pub fn refusals(&self, run_id: &str) -> Result<Vec<Refusal>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT at_ms, call_id, action, reason FROM refusals WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map(params![run_id], |r| {
                Ok(Refusal {
                    at_ms: r.get::<_, i64>(0)? as u64,
                    call_id: r.get(1)?,
                    action: r.get(2)?,
                    reason: r.get(3)?,
                })
            })
            .map_err(|e| self.sqlite(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite(e))
    }

    /// Takes a decided approval for execution, exactly once.
    pub fn consume(&self, id: i64, now: u64) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE approvals SET state = state || '+consumed', decided_ms = COALESCE(decided_ms, ?2)
                 WHERE id = ?1 AND state IN ('approved', 'denied')",
                params![id, now as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        if n == 1 {
            Ok(())
        } else {
            Err(StoreError::Refused(
                "this approval was already used; nothing runs twice".into(),
            ))
        }
    }
}

#[cfg(test)]
mod tests;
