//! Group commits: staged records reach the log only with a commit, one commit takes everything
//! staged before it, and a commit that fails leaves nothing to run on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use serde_json::json;

use super::{AnchorMatch, AuditError, AuditLog, ChainAnchor, ChainEnd, verify, verify_against};
use crate::store::db::DbAnchor;

/// The real database anchor, counting its commits (`intend` is called once per commit), or
/// refusing them.
struct Counting {
    inner: DbAnchor,
    intends: Arc<AtomicUsize>,
    refuse: bool,
}

impl ChainAnchor for Counting {
    fn place(&self) -> String {
        self.inner.place()
    }
    fn load(&mut self, session: &str) -> Result<Option<super::Anchor>, String> {
        self.inner.load(session)
    }
    fn intend(&mut self, session: &str, now: &ChainEnd, next: &ChainEnd) -> Result<(), String> {
        self.intends.fetch_add(1, Ordering::SeqCst);
        if self.refuse {
            return Err("the database is read-only".into());
        }
        self.inner.intend(session, now, next)
    }
    fn confirm(&mut self, session: &str, end: &ChainEnd) -> Result<(), String> {
        self.inner.confirm(session, end)
    }
}

fn open(dir: &tempfile::TempDir, refuse: bool) -> (Arc<AuditLog>, Arc<AtomicUsize>) {
    let intends = Arc::new(AtomicUsize::new(0));
    let anchor = Counting {
        inner: DbAnchor::open(&dir.path().join("airlock.db")).unwrap(),
        intends: intends.clone(),
        refuse,
    };
    let log = AuditLog::open_anchored(&dir.path().join("audit"), "s1", Box::new(anchor)).unwrap();
    (Arc::new(log), intends)
}

fn lines(log: &AuditLog) -> usize {
    std::fs::read_to_string(log.path()).unwrap().lines().count()
}

fn anchored(dir: &tempfile::TempDir, log: &AuditLog) -> AnchorMatch {
    let mut anchor = DbAnchor::open(&dir.path().join("airlock.db")).unwrap();
    verify_against(log.path(), Some(&mut anchor as &mut dyn ChainAnchor))
        .unwrap()
        .anchor
        .unwrap()
        .1
}

#[test]
fn staged_records_reach_the_log_only_when_a_receipt_is_waited_for_and_then_all_of_them_in_one_commit()
 {
    let dir = tempfile::tempdir().unwrap();
    let (log, intends) = open(&dir, false);
    let receipts: Vec<_> = (0..8)
        .map(|i| {
            log.stage_shared("decision", json!({"call_id": format!("c{i}")}))
                .unwrap()
        })
        .collect();
    assert_eq!(lines(&log), 0, "nothing is written before a commit");
    receipts[2].wait().unwrap();
    assert_eq!(
        lines(&log),
        8,
        "the commit took everything staged before it"
    );
    assert_eq!(
        intends.load(Ordering::SeqCst),
        1,
        "one commit for eight records"
    );
    for receipt in &receipts {
        receipt.wait().unwrap();
    }
    assert_eq!(
        intends.load(Ordering::SeqCst),
        1,
        "a durable record needs no second commit"
    );
    assert_eq!(verify(log.path()).unwrap().records, 8);
    assert_eq!(anchored(&dir, &log), AnchorMatch::Confirmed);
}

#[test]
fn a_record_staged_after_a_commit_waits_for_a_commit_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (log, intends) = open(&dir, false);
    log.stage_shared("request", json!({"n": 0}))
        .unwrap()
        .wait()
        .unwrap();
    let later = log.stage_shared("decision", json!({"n": 1})).unwrap();
    assert_eq!(lines(&log), 1);
    later.wait().unwrap();
    assert_eq!(lines(&log), 2);
    assert_eq!(intends.load(Ordering::SeqCst), 2);
}

#[test]
fn records_staged_and_never_waited_for_are_committed_when_the_log_closes() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = open(&dir, false);
    let path = log.path().to_path_buf();
    log.append("request", json!({"n": 0})).unwrap();
    drop(log.stage_shared("outcome", json!({"n": 1})).unwrap());
    drop(log);
    assert_eq!(verify(&path).unwrap().records, 2);
}

#[test]
fn threads_appending_at_once_all_get_durable_records_in_one_verifying_chain() {
    let dir = tempfile::tempdir().unwrap();
    let (log, intends) = open(&dir, false);
    let start = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (log, start) = (log.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..10 {
                    log.append("decision", json!({"thread": t, "i": i}))
                        .unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(verify(log.path()).unwrap().records, 80);
    assert_eq!(anchored(&dir, &log), AnchorMatch::Confirmed);
    assert!(intends.load(Ordering::SeqCst) <= 80);
}

#[test]
fn a_commit_the_anchor_refuses_writes_nothing_and_no_record_staged_with_or_after_it_is_durable() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = open(&dir, true);
    let first = log.stage_shared("request", json!({"n": 0})).unwrap();
    let second = log.stage_shared("decision", json!({"n": 1})).unwrap();
    assert!(matches!(first.wait(), Err(AuditError::Anchor { .. })));
    assert!(matches!(second.wait(), Err(AuditError::Unusable { .. })));
    assert!(matches!(
        log.append("decision", json!({"n": 2})),
        Err(AuditError::Unusable { .. })
    ));
    assert_eq!(lines(&log), 0, "nothing was written");
}
