//! The journal a cockpit session is kept in: what it holds at each point of a turn, and what a
//! process that goes on from it (after a crash, `kill -9` or a quit) does and never does.

use super::*;

/// Keeps every checkpoint, as a state database would keep the latest.
#[derive(Default)]
struct Memory(Mutex<Vec<Checkpoint>>);

impl Journal for Memory {
    fn save(&self, conversation: &[Message], standing: &Standing<'_>) -> Result<(), String> {
        lock(&self.0).push(standing.checkpoint(conversation));
        Ok(())
    }
}

impl Memory {
    fn last(&self) -> Checkpoint {
        lock(&self.0)
            .last()
            .cloned()
            .expect("something was journaled")
    }
}

fn journaled(scenario: serde_json::Value, approvals: Approvals) -> (Rig, Arc<Memory>) {
    let memory = Arc::new(Memory::default());
    let rig = rig_with(
        scenario,
        approvals,
        Extras {
            journal: Some(memory.clone()),
            ..Extras::default()
        },
    );
    (rig, memory)
}

fn resumed(scenario: serde_json::Value, from: &Rig, checkpoint: Checkpoint) -> Rig {
    resumed_asking(scenario, from, checkpoint, Approvals::AllowAll)
}

fn resumed_asking(
    scenario: serde_json::Value,
    from: &Rig,
    checkpoint: Checkpoint,
    approvals: Approvals,
) -> Rig {
    rig_with(
        scenario,
        approvals,
        Extras {
            resume: Some((from.dir.clone(), checkpoint)),
            ..Extras::default()
        },
    )
}

#[tokio::test]
async fn a_call_running_when_the_process_died_is_reported_interrupted_and_never_run_again() {
    let scenario = json!({"name": "t", "steps": [
        {"calls": [bash("echo ran >> marker; sleep 2")]},
        {"say": "noted", "expect": ["failed"]}
    ]});
    let (mut rig, memory) = journaled(scenario.clone(), Approvals::AllowAll);
    rig.submit();
    loop {
        if let AgentEvent::ToolStarted { .. } = rig.next().await {
            break;
        }
    }
    // On record as started before it started.
    let at_death = memory.last();
    assert_eq!(at_death.started, vec![0]);
    assert!(!at_death.idle);
    wait_for_file(&rig.workspace.join("marker")).await;
    // The process dies (kill -9): nothing more is written.
    rig.handle.task.abort();
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("marker")).unwrap(),
        "ran\n"
    );
    let mut again = resumed(scenario, &rig, at_death);
    assert!(matches!(again.next().await, AgentEvent::Restored { .. }));
    let (events, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(started(&events).is_empty(), "{events:?}");
    let results = again.last_results();
    assert_eq!(results[0].1, CallResult::Failed);
    assert!(results[0].2.starts_with("interrupted"), "{results:?}");
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("marker")).unwrap(),
        "ran\n",
        "the interrupted call ran again"
    );
}

#[tokio::test]
async fn quitting_while_a_request_waits_keeps_the_session_where_it_stood_and_it_is_asked_again() {
    let scenario = json!({"name": "t", "steps": [
        {"calls": [bash("touch made")]},
        {"say": "done", "expect": ["ok"]}
    ]});
    let (mut rig, memory) = journaled(scenario.clone(), Approvals::Driver);
    rig.submit();
    loop {
        if let AgentEvent::ApprovalRequested { .. } = rig.next().await {
            break;
        }
    }
    rig.op(Op::Shutdown);
    loop {
        if let AgentEvent::ShutdownComplete = rig.next().await {
            break;
        }
    }
    // The shutdown's denial of the waiting request is not the person's answer: not kept.
    let kept = memory.last();
    assert!(!kept.idle);
    assert_eq!((kept.parked, kept.results.clone()), (0, vec![None]));
    assert!(kept.started.is_empty());
    // Reopened: the request is asked again, and the answer given then is taken.
    let mut again = resumed_asking(scenario, &rig, kept, Approvals::Driver);
    loop {
        if let AgentEvent::ApprovalRequested { request } = again.next().await {
            assert_eq!(request.call_id, "c1");
            break;
        }
    }
    assert!(!exists(&again.workspace, "made"));
    again.op(Op::Decide {
        call_id: "c1".into(),
        decision: Decision::AllowOnce,
    });
    let (_, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(exists(&again.workspace, "made"));
}

#[tokio::test]
async fn a_batch_waiting_for_its_second_call_is_kept_waiting_there_with_the_first_on_record_as_started()
 {
    let scenario = json!({"name": "t", "steps": [
        {"calls": [
            {"tool": "read_file", "args": {"path": "notes.txt"}},
            bash("touch held")
        ]},
        {"say": "done", "expect": ["ok", "ok"]}
    ]});
    let (mut rig, memory) = journaled(scenario.clone(), Approvals::Driver);
    rig.submit();
    loop {
        if let AgentEvent::ApprovalRequested { request } = rig.next().await {
            assert_eq!(request.call_id, "c2");
            break;
        }
    }
    // The read was decided at once and kept no checkpoint of its own; the wait for the second
    // call does (written as the gate starts waiting, on the agent's task).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let waiting = loop {
        let first = lock(&memory.0).iter().find(|c| c.parked == 1).cloned();
        if let Some(kept) = first {
            break kept;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing kept the wait"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    // (Kept before the read was launched, on record as started.)
    assert_eq!(waiting.started, vec![0]);
    assert_eq!(waiting.results, vec![None, None]);
    rig.op(Op::Shutdown);
    loop {
        if let AgentEvent::ShutdownComplete = rig.next().await {
            break;
        }
    }
    // Reopened: the second call is asked again; the first, on record as started, is not run.
    let kept = memory.last();
    let mut again = resumed_asking(scenario, &rig, kept, Approvals::Driver);
    loop {
        if let AgentEvent::ApprovalRequested { request } = again.next().await {
            assert_eq!(request.call_id, "c2");
            break;
        }
    }
    assert!(!exists(&again.workspace, "held"));
}

#[tokio::test]
async fn a_session_reopened_between_turns_goes_on_from_its_conversation() {
    let scenario = json!({"name": "t", "steps": [
        {"say": "first answer"},
        {"say": "second answer"}
    ]});
    let (mut rig, memory) = journaled(scenario.clone(), Approvals::AllowAll);
    rig.submit();
    rig.until_turn_finished().await;
    let between = memory.last();
    assert!(between.idle);
    assert!(matches!(
        between.conversation.last(),
        Some(Message::Assistant { text, .. }) if text == "first answer"
    ));
    let mut again = resumed(scenario, &rig, between);
    assert!(matches!(again.next().await, AgentEvent::Restored { .. }));
    again.op(Op::Submit {
        prompt: "and then?".into(),
    });
    let (events, _) = again.until_turn_finished().await;
    let said: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said, "second answer");
    let shown = lock(&again.seen).last().cloned().unwrap();
    assert_eq!(
        shown.len(),
        3,
        "the earlier turn is in the conversation: {shown:?}"
    );
}

#[tokio::test]
async fn the_journal_is_only_ever_shown_a_conversation_that_grew_from_the_one_before() {
    // A journal writes only the messages past those it has (the cockpit's keeps them as rows):
    // every save must extend the conversation of the save before it, never rewrite it.
    let scenario = json!({"name": "t", "steps": [
        {"say": "looking", "calls": [bash("echo one"), bash("echo two")]},
        {"calls": [bash("echo three")]},
        {"say": "done"}
    ]});
    let (mut rig, memory) = journaled(scenario.clone(), Approvals::AllowAll);
    rig.submit();
    rig.until_turn_finished().await;
    let saves = lock(&memory.0).clone();
    assert!(saves.len() > 5, "{} saves", saves.len());
    for pair in saves.windows(2) {
        let (before, after) = (&pair[0].conversation, &pair[1].conversation);
        assert!(after.len() >= before.len());
        assert_eq!(
            serde_json::to_string(before).unwrap(),
            serde_json::to_string(&after[..before.len()]).unwrap()
        );
    }
    // Resumed between turns from the last save, the next turn's saves extend it too.
    let last = memory.last();
    let (memory_again, conversation) = (Arc::new(Memory::default()), last.conversation.clone());
    let mut again = rig_with(
        scenario,
        Approvals::AllowAll,
        Extras {
            resume: Some((rig.dir.clone(), last)),
            journal: Some(memory_again.clone()),
            ..Extras::default()
        },
    );
    assert!(matches!(again.next().await, AgentEvent::Restored { .. }));
    again.op(Op::Submit {
        prompt: "more".into(),
    });
    again.until_turn_finished().await;
    let first = lock(&memory_again.0).first().cloned().unwrap();
    assert_eq!(
        serde_json::to_string(&conversation).unwrap(),
        serde_json::to_string(&first.conversation[..conversation.len()]).unwrap()
    );
}
