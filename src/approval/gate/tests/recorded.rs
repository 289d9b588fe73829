//! An approved call runs only once its decision is durable: the gate stages the records, the
//! executor waits for their commit, and a log that cannot take them fails the call closed.

use super::*;
use crate::approval::audit::{ChainAnchor, ChainEnd};
use crate::store::db::DbAnchor;
use crate::tools::ToolRegistry;

/// The real state database's anchor, refusing every commit once `refuse` is set.
struct Refusing {
    inner: DbAnchor,
    refuse: Arc<std::sync::atomic::AtomicBool>,
}

impl ChainAnchor for Refusing {
    fn place(&self) -> String {
        self.inner.place()
    }
    fn load(&mut self, session: &str) -> Result<Option<audit::Anchor>, String> {
        self.inner.load(session)
    }
    fn intend(&mut self, session: &str, now: &ChainEnd, next: &ChainEnd) -> Result<(), String> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err("the database refused the write".into());
        }
        self.inner.intend(session, now, next)
    }
    fn confirm(&mut self, session: &str, end: &ChainEnd) -> Result<(), String> {
        self.inner.confirm(session, end)
    }
}

struct Recorded {
    rig: Rig,
    log: Arc<AuditLog>,
    refuse: Arc<std::sync::atomic::AtomicBool>,
    tools: ToolRegistry,
    _dir: tempfile::TempDir,
}

fn recorded(approver: Arc<dyn Approver>) -> Recorded {
    let dir = tempfile::tempdir().unwrap();
    let refuse = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let anchor = Refusing {
        inner: DbAnchor::open(&dir.path().join("airlock.db")).unwrap(),
        refuse: refuse.clone(),
    };
    let log = Arc::new(
        AuditLog::open_anchored(&dir.path().join("audit"), "s1", Box::new(anchor)).unwrap(),
    );
    let rig = rig_with(approver, None, None, Some(log.clone()));
    let paths = &rig.world.policy.paths;
    let tools = ToolRegistry::new(paths.workspace.clone(), paths.home.clone(), None);
    Recorded {
        rig,
        log,
        refuse,
        tools,
        _dir: dir,
    }
}

fn lines(log: &AuditLog) -> usize {
    std::fs::read_to_string(log.path()).unwrap().lines().count()
}

async fn run(r: &Recorded, approved: Approved) -> Result<crate::output::ToolOutcome, String> {
    r.tools
        .execute(
            approved,
            CancellationToken::new(),
            crate::output::OutputSink::discard(),
        )
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn an_allowed_call_is_staged_by_the_gate_and_on_disk_before_it_runs() {
    let r = recorded(Arc::new(Silent));
    let approved = approval(check(&r.rig, bash("c1", "ls")).await);
    assert_eq!(lines(&r.log), 0, "the gate only staged its records");
    let outcome = run(&r, approved).await.unwrap();
    assert_eq!(outcome.status, crate::protocol::ToolStatus::Ok);
    assert_eq!(
        lines(&r.log),
        2,
        "request and decision were committed first"
    );
    assert_eq!(audit::verify(r.log.path()).unwrap().records, 2);
}

#[tokio::test]
async fn a_call_whose_decision_cannot_be_made_durable_does_not_run_and_says_why() {
    let r = recorded(Arc::new(Silent));
    std::fs::write(r.rig.world.policy.paths.workspace.join("kept"), "").unwrap();
    let call = ToolCall {
        id: "c1".into(),
        tool: "read_file".into(),
        args: json!({"path": "kept"}),
    };
    let approved = approval(check(&r.rig, call).await);
    r.refuse.store(true, Ordering::SeqCst);
    let error = run(&r, approved).await.unwrap_err();
    assert!(
        error.contains("the audit log could not record the decision")
            && error.contains("nothing ran"),
        "{error}"
    );
    assert_eq!(lines(&r.log), 0);
    // The log refuses everything after: the next call is denied at the gate.
    let denied = denial(check(&r.rig, bash("c2", "ls")).await);
    assert!(denied.message.contains("audit log"), "{}", denied.message);
}

#[tokio::test]
async fn a_request_is_on_disk_before_a_person_is_asked_and_one_that_cannot_be_is_never_shown() {
    let shown = Scripted::answering(vec![Ok(Decision::AllowOnce)]);
    let r = recorded(shown.clone());
    let approved = approval(check(&r.rig, bash("c1", "cargo build")).await);
    drop(approved);
    assert!(
        lines(&r.log) >= 1,
        "the request was committed before asking"
    );

    let shown = Scripted::answering(vec![Ok(Decision::AllowOnce)]);
    let r = recorded(shown.clone());
    r.refuse.store(true, Ordering::SeqCst);
    let denied = denial(check(&r.rig, bash("c1", "cargo build")).await);
    assert!(
        denied.message.contains("nothing runs without a record"),
        "{}",
        denied.message
    );
    assert_eq!(shown.asked(), 0, "nobody was asked");
}
