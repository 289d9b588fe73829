//! A file change nobody was asked about is still shown: the agent sends its diff with the run.

use super::*;

#[tokio::test]
async fn an_edit_allowed_without_asking_sends_its_diff_and_a_command_sends_none() {
    let mut rig = rig(
        json!({"name": "change", "steps": [
            {"calls": [
                {"tool": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}},
                bash("echo hi")
            ]},
            {"say": "ok"}
        ]}),
        Approvals::AllowAll,
    );
    std::fs::write(
        rig.dir.path().join("ws/calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let changes: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolChange { call_id, diff } => Some((call_id.as_str(), diff.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let (id, diff) = changes[0];
    assert_eq!(id, "c1");
    assert!(diff.contains("-    return a - b"), "{diff}");
    assert!(diff.contains("+    return a + b"), "{diff}");
    // Sent right after its start, so a driver has the run to put it on.
    let started = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolStarted { call_id, .. } if call_id == "c1"))
        .unwrap();
    assert!(matches!(
        &events[started + 1],
        AgentEvent::ToolChange { .. }
    ));
}

#[tokio::test]
async fn a_change_a_person_approved_in_the_modal_is_not_sent_again() {
    let mut rig = rig(
        json!({"name": "change", "steps": [
            {"calls": [
                {"tool": "write_file", "args": {"path": "new.txt", "content": "hello\n"}}
            ]},
            {"say": "ok"}
        ]}),
        Approvals::Driver,
    );
    rig.submit();
    let mut events = Vec::new();
    loop {
        let event = rig.next().await;
        if let AgentEvent::ApprovalRequested { request } = &event {
            rig.op(Op::Decide {
                call_id: request.call_id.clone(),
                decision: Decision::AllowOnce,
            });
        }
        let done = matches!(event, AgentEvent::TurnFinished { .. });
        events.push(event);
        if done {
            break;
        }
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolStarted { .. }))
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolChange { .. })),
        "{events:?}"
    );
}
