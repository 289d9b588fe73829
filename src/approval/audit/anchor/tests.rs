//! The red-team's attacks on a log whose head file sits next to it, against the real state
//! database anchor; and the crashes an honest writer can have, which must still verify.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::{
    AnchorMatch, AuditError, AuditLog, ChainAnchor, ChainEnd, GENESIS_PREV, canonical_json,
    hash_hex, head_path_for, verify, verify_against,
};
use crate::store::db::DbAnchor;

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
    fn audit(&self) -> PathBuf {
        self.dir.path().join("audit")
    }
    fn anchor(&self) -> DbAnchor {
        DbAnchor::open(&self.db()).unwrap()
    }
    fn open(&self) -> AuditLog {
        AuditLog::open_anchored(&self.audit(), "s1", Box::new(self.anchor())).unwrap()
    }
    /// An anchored log of `n` records; returns its path.
    fn log_with(&self, n: u64) -> PathBuf {
        let log = self.open();
        for i in 0..n {
            log.append("decision", json!({"call_id": format!("c{i}"), "n": i}))
                .unwrap();
        }
        log.path().to_path_buf()
    }
    fn verify(&self, path: &Path) -> Result<super::super::AnchoredReport, AuditError> {
        let mut anchor = self.anchor();
        verify_against(path, Some(&mut anchor as &mut dyn ChainAnchor))
    }
}

fn records(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes `records` as a log whose chain and head file are recomputed from scratch: what a
/// forger with write access to the audit directory can do.
fn write_recomputed(path: &Path, records: &[Value]) {
    let mut prev = GENESIS_PREV.to_owned();
    let mut text = String::new();
    for (seq, rec) in records.iter().enumerate() {
        let mut rec = rec.clone();
        let map = rec.as_object_mut().unwrap();
        map.remove("hash");
        map.insert("seq".into(), json!(seq));
        map.insert("prev".into(), json!(prev));
        let hash = hash_hex(&canonical_json(&rec).unwrap());
        rec["hash"] = json!(hash);
        text.push_str(&canonical_json(&rec).unwrap());
        text.push('\n');
        prev = hash;
    }
    fs::write(path, text).unwrap();
    let head = match records.len() {
        0 => "{\"seq\":null,\"hash\":null}\n".to_owned(),
        n => format!("{{\"seq\":{},\"hash\":\"{prev}\"}}\n", n - 1),
    };
    fs::write(head_path_for(path), head).unwrap();
}

fn assert_mismatch(result: Result<super::super::AnchoredReport, AuditError>, needles: &[&str]) {
    match result {
        Err(err @ AuditError::AnchorMismatch { .. }) => {
            let text = err.to_string();
            assert!(text.contains("airlock.db"), "names the database: {text}");
            for needle in needles {
                assert!(text.contains(needle), "{text:?} does not say {needle:?}");
            }
        }
        other => panic!("expected an anchor mismatch, got {other:?}"),
    }
}

#[test]
fn a_truncated_log_with_a_rewritten_head_file_fails_against_the_anchor() {
    let w = World::new();
    let path = w.log_with(5);
    let kept = records(&path)[..3].to_vec();
    write_recomputed(&path, &kept);
    // The attack gets past the chain and the head file...
    assert_eq!(verify(&path).unwrap().records, 3);
    // ...but not past the anchor.
    assert_mismatch(
        w.verify(&path),
        &[
            "the log has 3 records",
            "5 records ending at",
            "missing: lines 4-5",
        ],
    );
}

#[test]
fn records_dropped_from_the_middle_with_a_recomputed_chain_fail_against_the_anchor() {
    let w = World::new();
    let path = w.log_with(5);
    let mut kept = records(&path);
    kept.remove(1);
    write_recomputed(&path, &kept);
    assert_eq!(verify(&path).unwrap().records, 4);
    assert_mismatch(
        w.verify(&path),
        &["the log has 4 records", "missing: line 5"],
    );
}

#[test]
fn a_record_dropped_and_one_forged_to_keep_the_count_fails_naming_the_last_line() {
    let w = World::new();
    let path = w.log_with(4);
    let mut forged = records(&path);
    forged.remove(1);
    let mut extra = forged[2].clone();
    extra["body"] = json!({"call_id": "c9", "decision": "allow"});
    forged.push(extra);
    write_recomputed(&path, &forged);
    assert_eq!(verify(&path).unwrap().records, 4);
    assert_mismatch(
        w.verify(&path),
        &["line 4 (the last record) has hash", "4 records ending at"],
    );
}

#[test]
fn an_emptied_log_with_an_emptied_head_fails_against_the_anchor() {
    let w = World::new();
    let path = w.log_with(3);
    write_recomputed(&path, &[]);
    assert_eq!(verify(&path).unwrap().records, 0);
    assert_mismatch(w.verify(&path), &["the log is empty", "3 records"]);
}

#[test]
fn a_deleted_log_and_head_fail_against_the_anchor() {
    let w = World::new();
    let path = w.log_with(2);
    fs::remove_file(&path).unwrap();
    fs::remove_file(head_path_for(&path)).unwrap();
    assert_mismatch(w.verify(&path), &["log file is missing", "2 records"]);
}

#[test]
fn a_record_forged_past_the_anchor_fails() {
    let w = World::new();
    let path = w.log_with(3);
    let mut more = records(&path);
    more.push(more[2].clone());
    write_recomputed(&path, &more);
    assert_mismatch(
        w.verify(&path),
        &["the log has 4 records", "not written by airlock: line 4"],
    );
}

#[test]
fn an_untouched_anchored_log_verifies_and_says_it_matched_the_database() {
    let w = World::new();
    let path = w.log_with(3);
    let report = w.verify(&path).unwrap();
    assert_eq!(report.records, 3);
    let (place, matched) = report.anchor.unwrap();
    assert!(place.contains(&w.db().display().to_string()), "{place}");
    assert_eq!(matched, AnchorMatch::Confirmed);
}

#[test]
fn without_a_database_or_an_anchor_only_the_chain_is_checked() {
    let w = World::new();
    let log = AuditLog::open(&w.audit(), "s1").unwrap();
    log.append("k", json!({})).unwrap();
    // No anchor given.
    assert_eq!(verify_against(log.path(), None).unwrap().anchor, None);
    // A database that holds nothing for this session.
    assert_eq!(w.verify(log.path()).unwrap().anchor, None);
}

/// An anchor that refuses to confirm: the writer stops between writing a line and confirming it.
struct StopsBeforeConfirming(DbAnchor);

impl ChainAnchor for StopsBeforeConfirming {
    fn place(&self) -> String {
        self.0.place()
    }
    fn load(&mut self, session: &str) -> Result<Option<super::Anchor>, String> {
        self.0.load(session)
    }
    fn intend(&mut self, session: &str, now: &ChainEnd, next: &ChainEnd) -> Result<(), String> {
        self.0.intend(session, now, next)
    }
    fn confirm(&mut self, _: &str, _: &ChainEnd) -> Result<(), String> {
        Err("stopped".into())
    }
}

#[test]
fn a_writer_stopped_between_writing_a_record_and_confirming_it_leaves_a_log_that_verifies() {
    let w = World::new();
    let path = w.log_with(2);
    let log = AuditLog::open_anchored(
        &w.audit(),
        "s1",
        Box::new(StopsBeforeConfirming(w.anchor())),
    )
    .unwrap();
    let err = log.append("k", json!({"last": true})).unwrap_err();
    assert!(matches!(err, AuditError::Anchor { .. }), "{err:?}");
    drop(log);
    assert_eq!(records(&path).len(), 3, "the line itself was written");

    let report = w.verify(&path).unwrap();
    assert_eq!(report.records, 3);
    assert_eq!(report.anchor.unwrap().1, AnchorMatch::PendingWritten);
    assert!(report.past_head, "the head was never updated either");

    // A writer reopening the session goes on from there, and the anchor catches up.
    let log = w.open();
    log.append("k", json!({"after": "restart"})).unwrap();
    let report = w.verify(&path).unwrap();
    assert_eq!(report.records, 4);
    assert_eq!(report.anchor.unwrap().1, AnchorMatch::Confirmed);
    assert!(!report.past_head);
}

#[test]
fn a_writer_stopped_between_anchoring_a_record_and_writing_it_leaves_a_log_that_verifies() {
    let w = World::new();
    let path = w.log_with(2);
    let end = verify(&path).unwrap();
    let now = ChainEnd {
        records: 2,
        last_hash: end.last_hash,
    };
    let next = ChainEnd {
        records: 3,
        last_hash: Some("ab".repeat(32)),
    };
    w.anchor().intend("s1", &now, &next).unwrap();

    let report = w.verify(&path).unwrap();
    assert_eq!(report.anchor.unwrap().1, AnchorMatch::PendingLost);
    let log = w.open();
    log.append("k", json!({})).unwrap();
    assert_eq!(
        w.verify(&path).unwrap().anchor.unwrap().1,
        AnchorMatch::Confirmed
    );
}

#[test]
fn opening_a_truncated_anchored_log_for_appending_is_refused() {
    let w = World::new();
    let path = w.log_with(4);
    let kept = records(&path)[..2].to_vec();
    write_recomputed(&path, &kept);
    let err = AuditLog::open_anchored(&w.audit(), "s1", Box::new(w.anchor())).unwrap_err();
    match &err {
        AuditError::BrokenChain { source, .. } => {
            assert!(
                matches!(**source, AuditError::AnchorMismatch { .. }),
                "{source:?}"
            );
        }
        other => panic!("expected BrokenChain, got {other:?}"),
    }
}

#[test]
fn opening_a_deleted_anchored_log_for_appending_is_refused() {
    let w = World::new();
    let path = w.log_with(2);
    fs::remove_file(&path).unwrap();
    fs::remove_file(head_path_for(&path)).unwrap();
    let err = AuditLog::open_anchored(&w.audit(), "s1", Box::new(w.anchor())).unwrap_err();
    assert!(matches!(err, AuditError::BrokenChain { .. }), "{err:?}");
    assert!(!path.exists(), "nothing was recreated");
}

#[test]
fn a_second_writer_with_a_stale_view_of_the_log_cannot_append_or_move_the_anchor() {
    let w = World::new();
    let path = w.log_with(1);
    let first = w.open();
    let second = w.open();
    first.append("k", json!({"from": "first"})).unwrap();
    let err = second.append("k", json!({"from": "second"})).unwrap_err();
    assert!(matches!(err, AuditError::Anchor { .. }), "{err:?}");
    assert_eq!(
        records(&path).len(),
        2,
        "the refused record was not written"
    );
    assert_eq!(
        w.verify(&path).unwrap().anchor.unwrap().1,
        AnchorMatch::Confirmed
    );
}

#[test]
fn another_sessions_log_put_in_place_of_this_one_fails() {
    let w = World::new();
    let ours = w.log_with(2);
    let theirs = AuditLog::open_anchored(&w.audit(), "s2", Box::new(w.anchor())).unwrap();
    theirs.append("k", json!({})).unwrap();
    fs::copy(theirs.path(), &ours).unwrap();
    fs::copy(head_path_for(theirs.path()), head_path_for(&ours)).unwrap();
    match w.verify(&ours) {
        Err(AuditError::Tampered { line: 1, problem }) => {
            assert!(problem.contains("named for session \"s1\""), "{problem}");
        }
        other => panic!("expected a session mismatch, got {other:?}"),
    }
}

#[test]
fn records_past_the_head_verify_only_when_the_head_names_a_record_of_the_log() {
    let w = World::new();
    let path = w.log_with(3);
    let recs = records(&path);
    let head = head_path_for(&path);
    // A commit of two records that stopped before its head update: both follow the head's.
    for at in [0, 1] {
        fs::write(
            &head,
            format!("{{\"seq\":{at},\"hash\":{}}}\n", recs[at]["hash"]),
        )
        .unwrap();
        assert!(w.verify(&path).unwrap().past_head, "head at seq {at}");
    }
    // A head naming seq 1 with another record's hash: refused.
    fs::write(
        &head,
        format!("{{\"seq\":1,\"hash\":{}}}\n", recs[0]["hash"]),
    )
    .unwrap();
    assert!(matches!(verify(&path), Err(AuditError::Tampered { .. })));
    // A head naming a record the log does not have (seq 5 of 3): refused.
    fs::write(
        &head,
        format!("{{\"seq\":5,\"hash\":{}}}\n", recs[2]["hash"]),
    )
    .unwrap();
    assert!(matches!(verify(&path), Err(AuditError::Tampered { .. })));
}

/// Runs `statement` on the state database, as someone with sqlite3 would.
fn sql(w: &World, statement: &str, params: impl rusqlite::Params) {
    let conn = rusqlite::Connection::open(w.db()).unwrap();
    assert_eq!(conn.execute(statement, params).unwrap(), 1, "{statement}");
}

fn assert_refused_as_tampered(result: Result<super::super::AnchoredReport, AuditError>) {
    match result {
        Err(AuditError::Anchor { reason, .. }) => {
            assert!(reason.contains("changed outside airlock"), "{reason}");
        }
        other => panic!("expected the anchor refused as tampered, got {other:?}"),
    }
}

#[test]
fn a_forged_record_with_the_anchor_rewritten_to_match_fails_as_tampered() {
    let w = World::new();
    let path = w.log_with(3);
    let mut forged = records(&path);
    forged[1]["body"] = json!({"call_id": "c1", "decision": "allow"});
    write_recomputed(&path, &forged);
    let end = verify(&path).unwrap();
    // The attack: the anchor moved to the forged log's end, as `UPDATE audit_anchors` would.
    sql(
        &w,
        "UPDATE audit_anchors SET records = ?1, last_hash = ?2 WHERE session = 's1'",
        rusqlite::params![end.records as i64, end.last_hash],
    );
    assert_refused_as_tampered(w.verify(&path));
    // Nor does a writer go on from it.
    let err = AuditLog::open_anchored(&w.audit(), "s1", Box::new(w.anchor())).unwrap_err();
    assert!(matches!(err, AuditError::Anchor { .. }), "{err:?}");
}

#[test]
fn a_truncated_log_with_the_anchor_rewound_to_match_fails_as_tampered() {
    let w = World::new();
    let path = w.log_with(4);
    let kept = records(&path)[..2].to_vec();
    write_recomputed(&path, &kept);
    sql(
        &w,
        "UPDATE audit_anchors SET records = 2, last_hash = ?1 WHERE session = 's1'",
        [kept[1]["hash"].as_str().unwrap()],
    );
    assert_refused_as_tampered(w.verify(&path));
}

#[test]
fn an_unsigned_anchor_that_matches_its_log_is_taken_by_the_writer_and_signed_again() {
    let w = World::new();
    let path = w.log_with(2);
    // An anchor written before anchors were signed.
    sql(
        &w,
        "UPDATE audit_anchors SET mac = NULL WHERE session = 's1'",
        [],
    );
    assert!(!w.anchor().load("s1").unwrap().unwrap().signed);
    // Its ends are still compared: a log that does not match it fails as before.
    let kept = records(&path)[..1].to_vec();
    let full = fs::read(&path).unwrap();
    let head = fs::read(head_path_for(&path)).unwrap();
    write_recomputed(&path, &kept);
    assert_mismatch(
        w.verify(&path),
        &["the log has 1 records", "missing: line 2"],
    );
    fs::write(&path, full).unwrap();
    fs::write(head_path_for(&path), head).unwrap();
    // One that matches: the writer goes on, and its first write signs the anchor.
    let log = w.open();
    log.append("k", json!({"after": "upgrade"})).unwrap();
    let anchor = w.anchor().load("s1").unwrap().unwrap();
    assert!(anchor.signed);
    assert_eq!(anchor.confirmed.records, 3);
    assert_eq!(
        w.verify(&path).unwrap().anchor.unwrap().1,
        AnchorMatch::Confirmed
    );
}
