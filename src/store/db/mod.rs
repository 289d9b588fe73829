//! The state database (SQLite in WAL mode): runs with their checkpoints, pending approvals with
//! their one-time codes, sessions' live grants, refused answers and resumes, cockpit sessions
//! (`sessions`), the audit logs' anchors (`anchors`), and the MCP servers' pinned tool
//! definitions (`mcp_pins`). Safe for several processes at once (the cockpit, a headless run,
//! `airlock approve` from another terminal): every decision is one conditional UPDATE, never a
//! read followed by a write.
//!
//! Every run, approval and grant list is signed with the state key (`super::key`) when written,
//! and checked when read: rows come back with `signed`, and the callers that act on them (approve,
//! deny, resume, the cockpit's remote answers) refuse what does not verify. The database, its
//! WAL and SHM files and the key are 0600, the state directory 0700.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::key::StateKey;
use crate::digest::hex;

mod approvals;

pub use approvals::{ApprovalRow, Refusal, code_hash, new_code};

mod anchors;
pub use anchors::DbAnchor;

mod sessions;
pub use sessions::{SessionRow, SessionSave};

mod session_messages;
pub use session_messages::MessageChain;

mod mcp_pins;
pub use mcp_pins::StatePins;

pub mod devices;
pub use devices::{DeviceRow, new_secret, random_bytes};

pub mod health;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the state database {}: {source}{}", .path.display(), damage_hint(.source))]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Corrupt(String),
    #[error("the state key {path}: {why}")]
    Key { path: PathBuf, why: String },
    #[error("{0}")]
    Tampered(String),
}

/// What to do about an error that says the database is damaged; nothing for other errors.
fn damage_hint(error: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match error.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => {
            "; the database is damaged: nothing is approved until it is repaired. \
             `airlock state check` says what is damaged; `airlock state repair` keeps a copy \
             of it, makes an empty one and says what was lost (audit logs stay on disk)"
        }
        _ => "",
    }
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
    // 5: signatures (HMAC under the state key) on runs, approvals and grants; which process owns
    // a running or resuming run ("pid:start time"); the run spec an approval was made for.
    "ALTER TABLE runs ADD COLUMN mac TEXT;
    ALTER TABLE runs ADD COLUMN owner TEXT;
    ALTER TABLE approvals ADD COLUMN spec_hash TEXT;
    ALTER TABLE approvals ADD COLUMN mac TEXT;
    ALTER TABLE session_grants ADD COLUMN mac TEXT;",
    // 6: cockpit sessions (their conversation and where their turn stands, to reopen them), and
    // each one-time code sealed under the state key, so a reopened cockpit shows the same code.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        workspace TEXT NOT NULL,
        state TEXT NOT NULL,
        owner TEXT,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL,
        title TEXT NOT NULL,
        turns INTEGER NOT NULL,
        spec TEXT,
        mac TEXT
    );
    ALTER TABLE approvals ADD COLUMN sealed_code TEXT;",
    // 7: MCP tool pins (see `mcp_pins`): every server whose tools were ever listed, and per tool
    // the definition the user accepted and the one last seen when it differs.
    "CREATE TABLE mcp_servers (
        server TEXT PRIMARY KEY,
        first_seen_ms INTEGER NOT NULL
    );
    CREATE TABLE mcp_pins (
        server TEXT NOT NULL REFERENCES mcp_servers(server),
        tool TEXT NOT NULL,
        digest TEXT,
        definition TEXT,
        mac TEXT,
        seen_digest TEXT,
        seen_definition TEXT,
        updated_ms INTEGER NOT NULL,
        PRIMARY KEY (server, tool)
    );",
    // 8: a cockpit session's conversation as one row per message (see `session_messages`), so a
    // checkpoint writes only the messages added since the last one; the session's signed row
    // names how many there are and the hash chain over them. Rows written before keep their
    // whole conversation in `spec` (`messages` NULL) and are read as before. (A rowid table,
    // not WITHOUT ROWID: a message can be kilobytes.)
    "CREATE TABLE session_messages (
        session TEXT NOT NULL,
        idx INTEGER NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (session, idx)
    );
    ALTER TABLE sessions ADD COLUMN messages INTEGER;
    ALTER TABLE sessions ADD COLUMN chain TEXT;",
    // 9: a signature (HMAC under the state key) on each audit anchor, so an anchor rewritten or
    // copied from another session with sqlite3 is refused. Rows written before stay unsigned
    // (NULL) until their session next writes its log; verify does not take one as proof (see
    // `anchors`).
    "ALTER TABLE audit_anchors ADD COLUMN mac TEXT;",
    // 10: devices paired with the approval page (see `devices`): only a hash of each device's
    // session cookie is kept, the row signed under the state key.
    "CREATE TABLE paired_devices (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        cookie_hash TEXT NOT NULL UNIQUE,
        created_ms INTEGER NOT NULL,
        last_seen_ms INTEGER NOT NULL,
        revoked_ms INTEGER,
        mac TEXT
    );",
];

/// The page size of a database made from now on.
pub const PAGE_SIZE: i64 = 64 * 1024;

pub struct Store {
    conn: Connection,
    path: PathBuf,
    key: StateKey,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    pub session: String,
    pub workspace: PathBuf,
    pub state: String,
    pub checkpoint: Option<String>,
    /// The process running or resuming it, as `pid:start time` (see `cli::park::owner`).
    pub owner: Option<String>,
    /// Its signature verifies: id, session, workspace and checkpoint are as airlock wrote them.
    pub signed: bool,
}

/// The SHA-256 of a run's checkpoint as stored, which an approval made for it is bound to.
pub fn spec_hash(checkpoint: Option<&str>) -> String {
    match checkpoint {
        Some(text) => hex(&Sha256::digest(text.as_bytes())),
        None => "none".into(),
    }
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let private = |what: &Path, e: std::io::Error| {
            StoreError::Corrupt(format!(
                "cannot make {} private to you: {e}; check its owner and permissions",
                what.display()
            ))
        };
        super::private_dir(dir).map_err(|e| private(dir, e))?;
        // Never through a descriptor of our own: see `private_db_files`.
        super::private_db_files(path).map_err(|e| private(path, e))?;
        super::users::join(dir).map_err(|e| {
            StoreError::Corrupt(format!(
                "cannot hold {} (which tells a repair this process uses the state): {e}; check its owner and permissions",
                dir.join(super::users::LOCK_FILE).display()
            ))
        })?;
        let key = StateKey::load_or_create(dir)?;
        let mut conn = Connection::open(path).map_err(sqlite)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(sqlite)?;
        // A new database gets 64 KiB pages (an existing one keeps its own: SQLite sets the
        // page size only when it makes the file). A cockpit session keeps a large write_file
        // twice (its message, its approval's frozen call): with 4 KiB pages a 3 MB call was
        // 700 overflow pages, each a WAL frame written with its own system calls and copied
        // again by the checkpoint.
        conn.pragma_update(None, "page_size", PAGE_SIZE)
            .map_err(sqlite)?;
        // Made WAL once, by whichever process comes first. Two processes switching a new
        // database at the same moment can each hold a read lock the other must wait out: SQLite
        // then says "locked" at once instead of waiting, so the switch is tried again.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            match conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
            {
                Ok(_) => break,
                Err(e)
                    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(sqlite(e)),
            }
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sqlite)?;
        let known = MIGRATIONS.len() as i64;
        let version = |conn: &Connection| -> Result<i64, StoreError> {
            conn.pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(sqlite)
        };
        if version(&conn)? != known {
            // Read again under the write lock: processes opening a new database together
            // migrate it once, one after the other.
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sqlite)?;
            let found = version(&tx)?;
            if found > known {
                return Err(StoreError::Corrupt(format!(
                    "{} has schema version {found}, newer than this airlock knows ({known}); update airlock",
                    path.display()
                )));
            }
            for (i, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
                tx.execute_batch(migration).map_err(sqlite)?;
                tx.pragma_update(None, "user_version", i as i64 + 1)
                    .map_err(sqlite)?;
            }
            tx.commit().map_err(sqlite)?;
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            key,
        })
    }

    /// A transaction that takes the write lock as it begins (`BEGIN IMMEDIATE`), waiting its
    /// turn behind other processes' writers. A deferred one that reads first and writes later
    /// fails with "database is locked" when another process wrote in between (SQLite cannot
    /// upgrade a stale read, and gives up at once rather than wait into a deadlock).
    fn write_transaction(&self) -> Result<rusqlite::Transaction<'_>, StoreError> {
        rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self.sqlite(e))
    }

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn run_mac(
        &self,
        id: &str,
        session: &str,
        workspace: &str,
        checkpoint: Option<&str>,
    ) -> String {
        self.key
            .mac("run", &run_fields(id, session, workspace, checkpoint))
    }

    /// Stores a run in `state` with its checkpoint, signed; no process owns it.
    pub fn save_run(
        &self,
        id: &str,
        session: &str,
        workspace: &Path,
        state: &str,
        checkpoint: Option<&str>,
        now: u64,
    ) -> Result<(), StoreError> {
        let workspace = workspace.display().to_string();
        let mac = self.run_mac(id, session, &workspace, checkpoint);
        self.conn
            .execute(
                "INSERT INTO runs (id, session, workspace, state, created_ms, updated_ms, checkpoint, mac)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)
                 ON CONFLICT(id) DO UPDATE SET session = ?2, workspace = ?3, state = ?4,
                    updated_ms = ?5, checkpoint = ?6, mac = ?7, owner = NULL",
                params![id, session, workspace, state, now as i64, checkpoint, mac],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// Stores the latest checkpoint of a run that `owner` is running: a new run is `running`; a
    /// run being resumed stays `resuming` (so a resume killed mid-turn is seen as one).
    pub fn save_checkpoint(
        &self,
        id: &str,
        session: &str,
        workspace: &Path,
        checkpoint: &str,
        owner: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        let workspace = workspace.display().to_string();
        let mac = self.run_mac(id, session, &workspace, Some(checkpoint));
        self.conn
            .execute(
                "INSERT INTO runs (id, session, workspace, state, created_ms, updated_ms, checkpoint, mac, owner)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?4, ?5, ?6, ?7)
                 ON CONFLICT(id) DO UPDATE SET session = ?2, workspace = ?3,
                    state = CASE WHEN runs.state = 'resuming' THEN 'resuming' ELSE 'running' END,
                    updated_ms = ?4, checkpoint = ?5, mac = ?6, owner = ?7",
                params![id, session, workspace, now as i64, checkpoint, mac, owner],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    pub fn run(&self, id: &str) -> Result<Option<RunRow>, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT session, workspace, state, checkpoint, owner, mac FROM runs WHERE id = ?1",
                params![id],
                |r| {
                    Ok((
                        RunRow {
                            session: r.get(0)?,
                            workspace: PathBuf::from(r.get::<_, String>(1)?),
                            state: r.get(2)?,
                            checkpoint: r.get(3)?,
                            owner: r.get(4)?,
                            signed: false,
                        },
                        r.get::<_, Option<String>>(5)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        Ok(row.map(|(mut row, mac)| {
            let workspace = row.workspace.display().to_string();
            row.signed = self.key.verify(
                "run",
                &run_fields(id, &row.session, &workspace, row.checkpoint.as_deref()),
                mac.as_deref(),
            );
            row
        }))
    }

    /// Sets a run's state whatever it was (the run's own process finishing it); nobody owns it
    /// any more.
    pub fn set_run_state(&self, id: &str, state: &str, now: u64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET state = ?2, updated_ms = ?3, owner = NULL WHERE id = ?1",
                params![id, state, now as i64],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// Moves a run from one state to another, only if it is in the first, and gives it to
    /// `owner`: `false` if it was not in `from`.
    pub fn transition_run(
        &self,
        id: &str,
        from: &str,
        to: &str,
        owner: Option<&str>,
        now: u64,
    ) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET state = ?3, updated_ms = ?4, owner = ?5 WHERE id = ?1 AND state = ?2",
                params![id, from, to, now as i64, owner],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(n == 1)
    }

    /// Takes a run in `state` over from `dead` (its owner, whose process is gone): only one
    /// caller wins; `false` for the others, or if the run moved on meanwhile.
    pub fn take_over(
        &self,
        id: &str,
        state: &str,
        dead: Option<&str>,
        owner: &str,
        now: u64,
    ) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET owner = ?4, updated_ms = ?5
                 WHERE id = ?1 AND state = ?2 AND owner IS ?3",
                params![id, state, dead, owner, now as i64],
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
        let mac = self
            .key
            .mac("grants", &[session.as_bytes(), grants_json.as_bytes()]);
        self.conn
            .execute(
                "INSERT INTO session_grants (session, grants, updated_ms, mac) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(session) DO UPDATE SET grants = ?2, updated_ms = ?3, mac = ?4",
                params![session, grants_json, now as i64, mac],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// A session's stored grants; refused as tampered when their signature does not verify.
    pub fn grants(&self, session: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(String, Option<String>)> = self
            .conn
            .query_row(
                "SELECT grants, mac FROM session_grants WHERE session = ?1",
                params![session],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let Some((grants, mac)) = row else {
            return Ok(None);
        };
        if !self.key.verify(
            "grants",
            &[session.as_bytes(), grants.as_bytes()],
            mac.as_deref(),
        ) {
            return Err(StoreError::Tampered(format!(
                "the stored session grants of {session} were changed outside airlock (tampered): their signature does not verify, so none of them is used"
            )));
        }
        Ok(Some(grants))
    }
}

fn run_fields<'a>(
    id: &'a str,
    session: &'a str,
    workspace: &'a str,
    checkpoint: Option<&'a str>,
) -> [&'a [u8]; 5] {
    [
        id.as_bytes(),
        session.as_bytes(),
        workspace.as_bytes(),
        if checkpoint.is_some() { b"1" } else { b"0" },
        checkpoint.unwrap_or("").as_bytes(),
    ]
}

#[cfg(test)]
mod tests;

/// For tests: a store in a database of its own, in a directory removed when the guard drops.
#[cfg(test)]
pub(crate) fn scratch_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("airlock.db")).unwrap();
    (dir, store)
}
