//! A damaged state database is never a dead end. `check` asks SQLite whether the database is
//! whole (`PRAGMA integrity_check`) and counts what it holds; `repair` (with no other airlock
//! process using the state directory, see `store::users`) moves the damaged files aside under a
//! name of their own, makes an empty database in their place, and says what went with the old one.
//! Nothing here opens a database file except through SQLite, and the connections that look at a
//! damaged database never checkpoint it on close, so the copy kept aside is as it was found.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

use super::{Store, StoreError};

/// What `integrity_check` said: nothing when the database is whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub problems: Vec<String>,
    pub held: Held,
}

impl Health {
    pub fn whole(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What a state database holds that a person would miss, each `None` where the damage hides it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    pub waiting_approvals: Option<u64>,
    pub parked_runs: Option<u64>,
    pub sessions: Option<u64>,
    pub grant_sets: Option<u64>,
    pub audit_anchors: Option<u64>,
    pub mcp_servers: Option<u64>,
}

impl Held {
    /// One line per kind, for a person: how many there are.
    pub fn counts(&self) -> Vec<String> {
        let count = |n: Option<u64>| n.map_or("unreadable".into(), |n| n.to_string());
        vec![
            format!(
                "approvals waiting for a decision: {}",
                count(self.waiting_approvals)
            ),
            format!("parked runs: {}", count(self.parked_runs)),
            format!("cockpit sessions: {}", count(self.sessions)),
            format!("sessions' grants: {}", count(self.grant_sets)),
            format!("audit anchors: {}", count(self.audit_anchors)),
            format!(
                "MCP servers' accepted tool definitions: {}",
                count(self.mcp_servers)
            ),
        ]
    }

    /// One line per kind, for a person: what it is and what losing it means.
    pub fn lines(&self) -> Vec<String> {
        let count =
            |n: Option<u64>| n.map_or("an unknown number (unreadable)".into(), |n| n.to_string());
        vec![
            format!(
                "approvals waiting for a decision: {} (their one-time codes no longer work; the calls are asked again when their runs start again)",
                count(self.waiting_approvals)
            ),
            format!(
                "parked runs: {} (`airlock resume` no longer finds them)",
                count(self.parked_runs)
            ),
            format!(
                "cockpit sessions: {} (`airlock --resume` no longer reopens them)",
                count(self.sessions)
            ),
            format!(
                "sessions' grants: {} (what was allowed for a session is asked again)",
                count(self.grant_sets)
            ),
            format!(
                "audit anchors: {} (the audit logs themselves are still on disk and verify by their hash chain and head file, no longer against an anchor)",
                count(self.audit_anchors)
            ),
            format!(
                "MCP servers' accepted tool definitions: {} (pinned again when the servers are next listed)",
                count(self.mcp_servers)
            ),
        ]
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    // Closing must leave a damaged database (and its WAL) exactly as found.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    Ok(conn)
}

fn count(conn: &Connection, sql: &str) -> Option<u64> {
    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
        .ok()
        .map(|n| n.max(0) as u64)
}

fn held(conn: &Connection) -> Held {
    Held {
        waiting_approvals: count(
            conn,
            "SELECT count(*) FROM approvals WHERE state = 'pending'",
        ),
        parked_runs: count(conn, "SELECT count(*) FROM runs WHERE state = 'parked'"),
        sessions: count(conn, "SELECT count(*) FROM sessions"),
        grant_sets: count(conn, "SELECT count(*) FROM session_grants"),
        audit_anchors: count(conn, "SELECT count(*) FROM audit_anchors"),
        mcp_servers: count(conn, "SELECT count(*) FROM mcp_servers"),
    }
}

/// Whether the database at `path` is whole, and what it holds; `None` when there is none.
pub fn check(path: &Path) -> Option<Health> {
    std::fs::symlink_metadata(path).ok()?;
    let conn = match open(path) {
        Ok(conn) => conn,
        Err(e) => {
            return Some(Health {
                problems: vec![format!("SQLite cannot open it: {e}")],
                held: Held::default(),
            });
        }
    };
    let problems = match integrity(&conn) {
        Ok(lines) if lines == ["ok"] => Vec::new(),
        Ok(lines) => lines,
        Err(e) => vec![e.to_string()],
    };
    Some(Health {
        problems,
        held: held(&conn),
    })
}

fn integrity(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut statement = conn.prepare("PRAGMA integrity_check(20)")?;
    let lines = statement
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(lines)
}

/// What a repair did.
#[derive(Debug)]
pub enum Repair {
    /// The database was whole (or absent): nothing was moved.
    NothingToDo,
    /// The damaged files now sit at `kept` (and `kept-wal`, `kept-shm`); an empty database took
    /// their place. `lost` is what the damaged one held.
    Rebuilt { kept: PathBuf, lost: Held },
}

#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    #[error(
        "other airlock processes use the state directory {} ({}): quit them (cockpits, headless runs, `approve --resume`) and run `airlock state repair` again",
        .dir.display(),
        describe_pids(.pids)
    )]
    InUse { dir: PathBuf, pids: Vec<u32> },
    #[error("cannot move the damaged {} aside to {}: {source}; nothing was changed", .from.display(), .to.display())]
    Move {
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn describe_pids(pids: &[u32]) -> String {
    match pids {
        [] => "which ones cannot be told".into(),
        [pid] => format!("process {pid}"),
        _ => format!(
            "processes {}",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Keeps a damaged database at `path` aside as `<path>.damaged-<stamp>` and makes an empty one;
/// refused while another airlock process uses its directory. A whole database is left alone.
pub fn repair(path: &Path, stamp: &str) -> Result<Repair, RepairError> {
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    super::super::private_dir(&dir).map_err(|source| RepairError::Move {
        from: dir.clone(),
        to: dir.clone(),
        source,
    })?;
    // A whole database is left alone, whoever uses it; a damaged one is moved only with no
    // other airlock process using the directory, and checked again once that holds.
    if check(path).is_none_or(|health| health.whole()) {
        return Ok(Repair::NothingToDo);
    }
    let _alone = super::super::users::alone(&dir).map_err(|pids| RepairError::InUse {
        dir: dir.clone(),
        pids,
    })?;
    let health = match check(path) {
        Some(health) if !health.whole() => health,
        _ => return Ok(Repair::NothingToDo),
    };
    let kept = PathBuf::from(format!("{}.damaged-{stamp}", path.display()));
    // The WAL and SHM first, so a crash between moves never pairs the old WAL with a new
    // database; the database last.
    for suffix in ["-shm", "-wal", ""] {
        let from = PathBuf::from(format!("{}{suffix}", path.display()));
        let to = PathBuf::from(format!("{}{suffix}", kept.display()));
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !suffix.is_empty() => {}
            Err(source) => return Err(RepairError::Move { from, to, source }),
        }
    }
    drop(Store::open(path)?);
    Ok(Repair::Rebuilt {
        kept,
        lost: health.held,
    })
}

#[cfg(test)]
mod tests;
