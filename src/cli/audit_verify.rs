//! `airlock audit verify FILE`: checks a session log's hash chain, its head file, and its end
//! against the anchor the writer kept in the state database. Says what it checked against.
//!
//! The anchor is read once, here, and handed to `verify_against`, so the verdict knows what
//! the end was matched with. Only a signed anchor makes it "ok". An unsigned one (from before
//! anchors were signed) is what an editor who strips the signature leaves too, so a log that
//! matches it fails, saying why. A log of a session the database knows but holds no anchor for
//! fails too: every record airlock writes is anchored, so the anchor was deleted. (An empty log
//! is the one case an honest session can leave without an anchor, but so does a log emptied
//! with its anchor deleted; it fails, saying that nothing tells the two apart.) With no
//! database, or for a session it knows nothing of (a log copied from another machine), only the
//! chain is checked, and the output says so.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use crate::approval::audit::{self, Anchor, AnchoredReport, ChainAnchor, ChainEnd};
use crate::store::db::DbAnchor;
use crate::visible::{visible, visible_line};

/// Verifies `file` against the state database of this machine's state directory.
pub fn run(file: &Path) -> Result<String> {
    run_with_db(file, &super::runs::db_path())
}

/// Verifies `file` against the anchors in the database at `db` (which may be missing).
pub fn run_with_db(file: &Path, db: &Path) -> Result<String> {
    let shown_db = visible_line(&db.display().to_string());
    let shown_file = visible_line(&file.display().to_string());
    let database = DbAnchor::open_existing(db).with_context(|| {
        format!("cannot read the audit anchors in {shown_db}; the log was not verified")
    })?;
    let session = audit::session_of(file);
    let found = match (&database, &session) {
        // A tampered anchor is the store's error as it stands, not a hint about permissions.
        (Some(database), Some(session)) => database.anchor(session).map_err(|e| {
            anyhow!(
                "{}; the log {shown_file} was not verified",
                visible(&e.to_string())
            )
        })?,
        _ => None,
    };
    let mut loaded = match (&database, &found) {
        (Some(database), Some(anchor)) => Some(Loaded {
            place: database.place(),
            anchor: anchor.clone(),
        }),
        _ => None,
    };
    // The problem may quote text from the log (a session name): shown, never obeyed.
    let report = audit::verify_against(file, loaded.as_mut().map(|a| a as &mut dyn ChainAnchor))
        .map_err(|e| anyhow!(visible(&e.to_string())))?;
    let against = match &report.anchor {
        Some((place, matched)) => {
            if !found.as_ref().is_some_and(|a| a.signed) {
                bail!(
                    "{shown_file}: hash chain intact ({} records), and the end {} the anchor in {}, but that anchor is unsigned: airlock signs every anchor it writes, and one without a signature was written before anchors were signed or had its signature removed outside airlock, so it proves nothing about this log. It is signed again the next time airlock appends to this session's log",
                    report.records,
                    matched.describe(),
                    visible_line(place)
                );
            }
            format!(
                "the end {} the anchor in {}",
                matched.describe(),
                visible_line(place)
            )
        }
        None => without_anchor(
            database.as_ref(),
            session.as_deref(),
            &report,
            &shown_file,
            &shown_db,
        )?,
    };
    let head = if report.past_head {
        "head file one record behind (the writer stopped before updating it)"
    } else {
        "head file agrees"
    };
    Ok(format!(
        "ok: {shown_file} — {} records, hash chain intact, ends at {}; {head}; {against}",
        report.records,
        report.last_hash.as_deref().unwrap_or("(empty log)")
    ))
}

/// What verify says when the database holds no anchor for the log: fine for a log it knows
/// nothing of, a failure for a session it knows.
fn without_anchor(
    database: Option<&DbAnchor>,
    session: Option<&str>,
    report: &AnchoredReport,
    shown_file: &str,
    shown_db: &str,
) -> Result<String> {
    let Some(database) = database else {
        return Ok(format!(
            "no anchor found: only the chain was checked (no state database at {shown_db})"
        ));
    };
    let knows = |session: &str| {
        database.knows_session(session).with_context(|| {
            format!("cannot read the sessions in {shown_db}; the log {shown_file} was not verified")
        })
    };
    let session = match session {
        Some(session) if knows(session)? => visible_line(session),
        _ => {
            return Ok(format!(
                "no anchor found: only the chain was checked ({shown_db} holds none for this log)"
            ));
        }
    };
    if report.records > 0 {
        bail!(
            "{shown_file}: hash chain intact ({} records), but its anchor is missing: the state database {shown_db} has records of session {session:?} and no anchor for its log, and airlock anchors every record it writes, so the anchor was deleted outside airlock. The log cannot be trusted; keep it and the database as evidence",
            report.records
        );
    }
    bail!(
        "{shown_file}: the log is empty and its anchor is missing: the state database {shown_db} has records of session {session:?} and no anchor for its log. A session that never recorded a decision has none, but neither has a log that was emptied and its anchor deleted outside airlock, and nothing tells the two apart"
    )
}

/// The anchor verify read, handed to `verify_against` as it was read.
struct Loaded {
    place: String,
    anchor: Anchor,
}

impl ChainAnchor for Loaded {
    fn place(&self) -> String {
        self.place.clone()
    }

    fn load(&mut self, _: &str) -> Result<Option<Anchor>, String> {
        Ok(Some(self.anchor.clone()))
    }

    fn intend(&mut self, _: &str, _: &ChainEnd, _: &ChainEnd) -> Result<(), String> {
        Err("audit verify only reads anchors".into())
    }

    fn confirm(&mut self, _: &str, _: &ChainEnd) -> Result<(), String> {
        Err("audit verify only reads anchors".into())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::approval::audit::AuditLog;
    use crate::store::db::Store;

    struct World {
        dir: tempfile::TempDir,
    }

    impl World {
        fn new() -> World {
            World {
                dir: tempfile::tempdir().unwrap(),
            }
        }
        fn db(&self) -> PathBuf {
            self.dir.path().join("airlock.db")
        }
        /// The log of `session` with `n` records, written and anchored as a session writes it.
        fn log(&self, session: &str, n: u64) -> PathBuf {
            let anchor = DbAnchor::open(&self.db()).unwrap();
            let log =
                AuditLog::open_anchored(&self.dir.path().join("audit"), session, Box::new(anchor))
                    .unwrap();
            for i in 0..n {
                log.append("decision", json!({"call_id": format!("c{i}")}))
                    .unwrap();
            }
            log.path().to_path_buf()
        }
        /// The database learns of `session`, as a run of it would leave it.
        fn know(&self, session: &str) {
            Store::open(&self.db())
                .unwrap()
                .save_run(session, session, Path::new("/w"), "live", None, 1)
                .unwrap();
        }
        fn sql(&self, statement: &str) {
            let conn = rusqlite::Connection::open(self.db()).unwrap();
            assert_eq!(conn.execute(statement, []).unwrap(), 1, "{statement}");
        }
        fn verify(&self, log: &Path) -> Result<String> {
            run_with_db(log, &self.db())
        }
    }

    fn failure(result: Result<String>) -> String {
        match result {
            Ok(ok) => panic!("expected verify to fail, it said {ok:?}"),
            Err(err) => format!("{err:#}"),
        }
    }

    #[test]
    fn a_log_that_ends_at_its_signed_anchor_is_ok() {
        let w = World::new();
        let log = w.log("s1", 2);
        w.know("s1");
        let ok = w.verify(&log).unwrap();
        assert!(
            ok.starts_with("ok: ") && ok.contains("the end matches the anchor"),
            "{ok}"
        );
    }

    #[test]
    fn a_deleted_anchor_of_a_session_the_database_knows_fails_as_missing() {
        let w = World::new();
        let log = w.log("s1", 2);
        w.know("s1");
        w.sql("DELETE FROM audit_anchors WHERE session = 's1'");
        let text = failure(w.verify(&log));
        assert!(
            text.contains("anchor is missing") && text.contains("deleted outside airlock"),
            "{text}"
        );
    }

    #[test]
    fn an_empty_log_of_a_known_session_without_an_anchor_fails_as_unprovable() {
        let w = World::new();
        let log = w.log("s1", 0);
        w.know("s1");
        let text = failure(w.verify(&log));
        assert!(
            text.contains("the log is empty and its anchor is missing"),
            "{text}"
        );
    }

    #[test]
    fn a_log_of_a_session_the_database_does_not_know_is_checked_by_its_chain_only() {
        let w = World::new();
        let log = w.log("s1", 2);
        w.sql("DELETE FROM audit_anchors WHERE session = 's1'");
        let ok = w.verify(&log).unwrap();
        assert!(
            ok.contains("no anchor found: only the chain was checked"),
            "{ok}"
        );
    }

    #[test]
    fn an_anchor_rewritten_outside_airlock_fails_as_tampered() {
        let w = World::new();
        let log = w.log("s1", 2);
        w.sql("UPDATE audit_anchors SET records = 1 WHERE session = 's1'");
        let text = failure(w.verify(&log));
        assert!(
            text.contains("changed outside airlock") && text.contains("was not verified"),
            "{text}"
        );
    }

    #[test]
    fn an_unsigned_anchor_fails_even_when_the_log_matches_it() {
        let w = World::new();
        let log = w.log("s1", 2);
        w.sql("UPDATE audit_anchors SET mac = NULL WHERE session = 's1'");
        let text = failure(w.verify(&log));
        assert!(
            text.contains("the end matches the anchor") && text.contains("that anchor is unsigned"),
            "{text}"
        );
        // The session's next record signs it again.
        w.log("s1", 1);
        assert!(w.verify(&log).unwrap().starts_with("ok: "));
    }
}
