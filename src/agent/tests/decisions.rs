//! Approvals answered by the driver: through `Op::Decide`, by an interrupt, or by a one-time
//! code from another terminal.

use super::*;

#[tokio::test]
async fn the_driver_answers_approvals_through_ops() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch one"), bash("touch two")]},
            {"say": "ok", "expect": ["ok", "denied"]}
        ]}),
        Approvals::Driver,
    );
    rig.submit();
    let mut answered = 0;
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => {
                let wanted = ["$ touch one", "$ touch two"][answered];
                assert_eq!(request.title, wanted, "the agent titles what it asks about");
                let decision = if answered == 0 {
                    Decision::AllowOnce
                } else {
                    Decision::Deny {
                        reason: Some("not that one".into()),
                    }
                };
                answered += 1;
                rig.op(Op::Decide {
                    call_id: request.call_id.clone(),
                    decision,
                });
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(exists(&rig.workspace, "one"));
    assert!(!exists(&rig.workspace, "two"));
    assert!(
        rig.last_results()[1]
            .2
            .contains("denied by the user: not that one")
    );
}

#[tokio::test]
async fn an_interrupt_while_awaiting_approval_runs_nothing() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch first"), bash("touch second")]},
            {"say": "never reached"}
        ]}),
        Approvals::Driver,
    );
    rig.submit();
    let mut events = Vec::new();
    loop {
        let event = rig.next().await;
        if let AgentEvent::ApprovalRequested { .. } = &event {
            rig.op(Op::Interrupt);
        }
        if let AgentEvent::TurnFinished { outcome, .. } = &event {
            assert_eq!(*outcome, TurnOutcome::Interrupted);
            events.push(event);
            break;
        }
        events.push(event);
    }
    assert!(started(&events).is_empty(), "{events:?}");
    let denied: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolDenied { .. }))
        .collect();
    assert_eq!(denied.len(), 2, "both calls are denied: {events:?}");
    assert!(!exists(&rig.workspace, "first"));
    assert!(!exists(&rig.workspace, "second"));
    // The agent is ready for the next turn.
    rig.op(Op::Shutdown);
    assert!(matches!(rig.next().await, AgentEvent::ShutdownComplete));
}

#[tokio::test]
async fn an_approval_answered_by_its_code_from_another_terminal_wins_and_the_modal_is_told() {
    let mut rig = rig_with_remote(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch remote")]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
        true,
    );
    let db = rig.dir.path().join("state/airlock.db");
    rig.submit();
    let mut settled = false;
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => {
                let code = request.code.clone().expect("a code for other terminals");
                crate::store::db::Store::open(&db)
                    .unwrap()
                    .decide(
                        &code,
                        r#"{"decision":"allow_once"}"#,
                        crate::clock::now_ms(),
                    )
                    .unwrap();
            }
            AgentEvent::ApprovalSettled { call_id, .. } => {
                assert_eq!(call_id, "c1");
                settled = true;
                // A late key in the cockpit changes nothing now.
                rig.op(Op::Decide {
                    call_id,
                    decision: Decision::Deny { reason: None },
                });
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(settled);
    assert!(exists(&rig.workspace, "remote"));
}

#[tokio::test]
async fn an_approval_set_to_approved_behind_airlocks_back_is_not_taken_as_an_answer() {
    let (looks, mut looked) = Looks::new();
    let mut rig = rig_with(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch remote")]},
            {"say": "ok", "expect": ["denied"]}
        ]}),
        Approvals::Driver,
        Extras {
            remote: true,
            looks: Some(looks.clone()),
            ..Extras::default()
        },
    );
    let db = rig.dir.path().join("state/airlock.db");
    rig.submit();
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { .. } => {
                let changed = rusqlite::Connection::open(&db)
                    .unwrap()
                    .execute(
                        r#"UPDATE approvals SET state = 'approved', decision = '{"decision":"allow_once"}'"#,
                        [],
                    )
                    .unwrap();
                assert_eq!(changed, 1);
                looks.set_mark(1);
                // The agent looks again once the database changed: a look that began after the
                // forged answer was in must not take it.
                let found = tokio::time::timeout(Duration::from_secs(20), async {
                    loop {
                        match looked.recv().await {
                            Some((1, found)) => return found,
                            Some(_) => {}
                            None => panic!("the code book is gone"),
                        }
                    }
                })
                .await
                .expect("the agent never looked at the code after the forged answer");
                assert_eq!(found, None, "the forged answer was taken");
                rig.op(Op::Decide {
                    call_id: "c1".into(),
                    decision: Decision::Deny { reason: None },
                });
            }
            AgentEvent::ApprovalSettled { .. } => panic!("a forged answer settled the request"),
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(!exists(&rig.workspace, "remote"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_sent_right_behind_the_prompt_ends_the_session_before_anything_runs() {
    // The agent may see the ops before the turn has taken its first step: the interrupt must
    // still reach the turn, or the turn goes on to ask a human nobody is there to be.
    for attempt in 0..40 {
        let rig = rig(
            json!({"name": "t", "steps": [
                {"calls": [bash("echo hi > touched.txt")]},
                {"say": "done"}
            ]}),
            Approvals::Driver,
        );
        rig.submit();
        rig.op(Op::Interrupt);
        rig.op(Op::Shutdown);
        let Rig {
            mut handle,
            workspace,
            dir: _dir,
            ..
        } = rig;
        let ended = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(event) = handle.events.recv().await {
                if matches!(event, AgentEvent::ShutdownComplete) {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(
            ended,
            Ok(true),
            "attempt {attempt}: the agent did not shut down"
        );
        assert!(!exists(&workspace, "touched.txt"), "attempt {attempt}");
    }
}
