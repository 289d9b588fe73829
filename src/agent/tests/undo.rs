//! Checkpoints around calls: a call that may change the workspace runs only once the workspace
//! before it is kept, what it changed is said before it is reported done, a call that only reads
//! keeps nothing, and after an undo the model's next request says what went back.

use super::*;
use crate::protocol::UndoSource;

fn rig_with_undo(scenario: serde_json::Value) -> Rig {
    rig_with(
        scenario,
        Approvals::AllowAll,
        Extras {
            undo: true,
            ..Extras::default()
        },
    )
}

fn changed(events: &[AgentEvent]) -> Vec<(String, crate::protocol::ChangeCount)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::WorkspaceChanged { call_id, changes } => {
                Some((call_id.clone(), changes.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_call_that_may_change_the_workspace_is_kept_and_one_that_only_reads_is_not() {
    let mut rig = rig_with_undo(json!({"name": "t", "steps": [
        {"calls": [bash("echo x > made.txt && rm notes.txt"), bash("cat notes.txt || true")]},
        {"say": "done", "expect": ["ok", "ok"]}
    ]}));
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let said = changed(&events);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].0, "c1");
    assert_eq!((said[0].1.created, said[0].1.deleted), (1, 1));
    // Said before the call is reported done.
    let at = |want: &dyn Fn(&AgentEvent) -> bool| events.iter().position(want).unwrap();
    assert!(
        at(&|e| matches!(e, AgentEvent::WorkspaceChanged { .. }))
            < at(&|e| matches!(e, AgentEvent::ToolFinished { call_id, .. } if call_id == "c1"))
    );
    let history = rig.history.clone().unwrap();
    let records = history.records();
    assert_eq!(records.len(), 1, "the reading call kept nothing");
    // And it can be undone: the deleted file is back, the made one gone.
    let plan = history.plan("c1", false).unwrap();
    history.apply(&plan, false).unwrap();
    assert!(exists(&rig.workspace, "notes.txt") && !exists(&rig.workspace, "made.txt"));
}

#[tokio::test]
async fn after_an_undo_the_models_next_request_says_which_calls_were_undone_and_what_went_back() {
    let mut rig = rig_with_undo(json!({"name": "t", "steps": [
        {"calls": [bash("echo changed > notes.txt")]},
        {"say": "changed it", "expect": ["ok"]},
        {"say": "noted"}
    ]}));
    rig.submit();
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let history = rig.history.clone().unwrap();
    let plan = history.plan("c1", false).unwrap();
    history.apply(&plan, false).unwrap();
    rig.submit();
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let seen = lock(&rig.seen);
    let told: Vec<&String> = seen
        .last()
        .unwrap()
        .iter()
        .filter_map(|m| match m {
            Message::User { text } if text.starts_with("[airlock]") => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains("undid c1") && told[0].contains("notes.txt"),
        "{told:?}"
    );
}
