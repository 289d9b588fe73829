//! Answers whose calls could not be read: nothing of them runs, and the turn goes on.

use super::*;

#[tokio::test]
async fn a_malformed_call_runs_nothing_of_its_answer_the_model_is_told_why_and_the_next_call_runs()
{
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"say": "Two calls.", "calls": [
                {"tool": "write_file", "args": {"path": "kept.txt", "content": "x"}},
                {"tool": "bash", "raw_args": "{\"command\": \"echo hi"},
            ]},
            {"say": "Again, well-formed.", "expect": ["denied", "denied"],
             "expect_seen": ["not valid JSON", "call `bash` (c2) of the same answer could not be read"],
             "calls": [{"tool": "bash", "args": {"command": "echo again > again.txt"}}]},
            {"say": "Done.", "expect": ["ok"]}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed, "{events:?}");
    assert!(
        !rig.workspace.join("kept.txt").exists(),
        "a call of the malformed answer ran"
    );
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("again.txt")).unwrap(),
        "again\n"
    );
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolDenied {
                call_id, source, ..
            } => Some((call_id.clone(), source.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        refused,
        vec![
            ("c1".to_string(), crate::protocol::DecisionSource::Error),
            ("c2".to_string(), crate::protocol::DecisionSource::Error)
        ]
    );
}

#[tokio::test]
async fn a_model_that_keeps_sending_malformed_calls_meets_the_step_limit_and_is_told_so() {
    let step = json!({"say": "Try.", "calls": [{"tool": "bash", "raw_args": "{"}]});
    let steps: Vec<_> = std::iter::repeat_n(step, DEFAULT_MAX_STEPS + 2).collect();
    let mut rig = rig(json!({"name": "t", "steps": steps}), Approvals::AllowAll);
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::StepLimit, "{events:?}");
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::Error { message } if message.contains("kept sending tool calls whose arguments were not valid JSON")
    )));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolStarted { .. }))
    );
}
