//! One batch of calls as the driver sees it: what is reported while a later call still waits
//! for its answer, and what the model gets back.

use super::*;
use crate::protocol::DecisionSource;

/// Events until `done` says stop, failing the test if it takes longer than `within`.
async fn events_until(
    rig: &mut Rig,
    within: Duration,
    mut done: impl FnMut(&AgentEvent) -> bool,
) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let waited = tokio::time::timeout(within, async {
        loop {
            let event = rig.next().await;
            let stop = done(&event);
            events.push(event);
            if stop {
                return;
            }
        }
    })
    .await;
    assert!(waited.is_ok(), "gave up waiting; events so far: {events:?}");
    events
}

#[tokio::test]
async fn calls_finish_on_screen_while_a_later_call_of_their_batch_still_waits_for_approval() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [
                {"tool": "read_file", "args": {"path": "notes.txt"}},
                {"tool": "write_file", "args": {"path": "new.txt", "content": "x\n"}},
                bash("touch held")
            ]},
            {"say": "ok", "expect": ["ok", "ok", "ok"]}
        ]}),
        Approvals::Driver,
    );
    rig.submit();
    // c1 is a read (allowed by policy); c2 asks and is approved at once.
    let events = events_until(
        &mut rig,
        Duration::from_secs(10),
        |e| matches!(e, AgentEvent::ApprovalRequested { request } if request.call_id == "c2"),
    )
    .await;
    assert_eq!(started(&events), vec!["c1"]);
    rig.op(Op::Decide {
        call_id: "c2".into(),
        decision: Decision::AllowOnce,
    });
    // c3's approval is held back: c1 and c2 still end, and say so, before anyone answers it.
    let mut ended = Vec::new();
    let mut asked = false;
    let events = events_until(&mut rig, Duration::from_secs(10), |e| {
        match e {
            AgentEvent::ToolFinished { call_id, .. } => ended.push(call_id.clone()),
            AgentEvent::ApprovalRequested { request } if request.call_id == "c3" => asked = true,
            _ => {}
        }
        asked && ended.len() == 2
    })
    .await;
    ended.sort();
    assert_eq!(ended, vec!["c1", "c2"], "{events:?}");
    assert!(
        finished(&events)
            .iter()
            .all(|(_, status)| *status == ToolStatus::Ok),
        "{events:?}"
    );
    assert!(exists(&rig.workspace, "new.txt"));
    assert!(!exists(&rig.workspace, "held"));
    rig.op(Op::Decide {
        call_id: "c3".into(),
        decision: Decision::AllowOnce,
    });
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(exists(&rig.workspace, "held"));
    // The model gets the results in the order it asked, not the order they ended.
    let results = rig.last_results();
    let ids: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["c1", "c2", "c3"]);
    assert!(results[0].2.contains("hello"), "{results:?}");
}

#[tokio::test]
async fn the_driver_hears_of_the_whole_batch_before_any_call_of_it_is_decided() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [
                {"tool": "read_file", "args": {"path": "notes.txt"}},
                {"tool": "write_file", "args": {"path": "new.txt", "content": "x\n"}},
                bash("touch one\ntouch two")
            ]},
            {"say": "ok"}
        ]}),
        Approvals::DenyAll,
    );
    rig.submit();
    let (events, _) = rig.until_turn_finished().await;
    let queued = events
        .iter()
        .position(|e| matches!(e, AgentEvent::BatchQueued { .. }))
        .expect("a batch_queued event");
    let first_decided = events
        .iter()
        .position(|e| {
            matches!(
                e,
                AgentEvent::ToolStarted { .. } | AgentEvent::ToolDenied { .. }
            )
        })
        .unwrap();
    assert!(queued < first_decided, "{events:?}");
    let AgentEvent::BatchQueued { calls } = &events[queued] else {
        unreachable!()
    };
    let listed: Vec<(&str, &str, bool)> = calls
        .iter()
        .map(|c| (c.call_id.as_str(), c.title.as_str(), c.needs_decision))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("c1", "read notes.txt", false),
            ("c2", "write new.txt", true),
            ("c3", "$ touch one … (+1 more line)", true),
        ]
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::BatchQueued { .. }))
            .count(),
        1
    );
}

#[tokio::test]
async fn a_call_refused_by_policy_is_reported_with_the_whole_command_it_refused() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("echo fine\nrm -rf ~/.cache/pip")]},
            {"say": "ok", "expect": ["denied"]}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (events, _) = rig.until_turn_finished().await;
    let denied: Vec<(&str, &str, &DecisionSource)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolDenied {
                call_id,
                title,
                source,
                ..
            } => Some((call_id.as_str(), title.as_str(), source)),
            _ => None,
        })
        .collect();
    assert_eq!(
        denied,
        vec![(
            "c1",
            "$ echo fine\nrm -rf ~/.cache/pip",
            &DecisionSource::Policy
        )]
    );
}

/// The state database's anchor, noting where each commit ends (`intend` comes once a commit).
struct CommitEnds {
    inner: crate::store::db::DbAnchor,
    ends: Arc<Mutex<Vec<u64>>>,
}

impl crate::approval::audit::ChainAnchor for CommitEnds {
    fn place(&self) -> String {
        self.inner.place()
    }
    fn load(&mut self, session: &str) -> Result<Option<crate::approval::audit::Anchor>, String> {
        self.inner.load(session)
    }
    fn intend(
        &mut self,
        session: &str,
        now: &crate::approval::audit::ChainEnd,
        next: &crate::approval::audit::ChainEnd,
    ) -> Result<(), String> {
        lock(&self.ends).push(next.records);
        self.inner.intend(session, now, next)
    }
    fn confirm(
        &mut self,
        session: &str,
        end: &crate::approval::audit::ChainEnd,
    ) -> Result<(), String> {
        self.inner.confirm(session, end)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calls_a_turn_approves_at_once_have_their_decisions_made_durable_by_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let ends = Arc::new(Mutex::new(Vec::new()));
    let anchor = CommitEnds {
        inner: crate::store::db::DbAnchor::open(&dir.path().join("airlock.db")).unwrap(),
        ends: ends.clone(),
    };
    let audit = Arc::new(
        crate::approval::audit::AuditLog::open_anchored(
            &dir.path().join("audit"),
            "t",
            Box::new(anchor),
        )
        .unwrap(),
    );
    let read = json!({"tool": "read_file", "args": {"path": "notes.txt"}});
    let mut rig = rig_with(
        json!({"name": "t", "steps": [
            {"calls": [read.clone(), read.clone(), read.clone(), read.clone(), read]},
            {"say": "done"}
        ]}),
        Approvals::DenyAll,
        Extras {
            audit: Some(audit.clone()),
            ..Extras::default()
        },
    );
    rig.submit();
    let (events, _) = rig.until_turn_finished().await;
    assert_eq!(finished(&events).len(), 5);
    // Which commit made each decision durable: the first commit whose end is past it.
    let log = std::fs::read_to_string(audit.path()).unwrap();
    let decisions: Vec<u64> = log
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|record| record["kind"] == "decision")
        .map(|record| record["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(decisions.len(), 5);
    let ends = lock(&ends).clone();
    let commit_of = |seq: u64| ends.iter().position(|end| *end > seq).unwrap();
    let commits: std::collections::BTreeSet<usize> =
        decisions.iter().map(|seq| commit_of(*seq)).collect();
    assert_eq!(
        commits.len(),
        1,
        "decisions {decisions:?}, commit ends {ends:?}"
    );
}
