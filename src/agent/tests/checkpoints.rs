//! The checkpoints a headless run keeps as its turn moves, and a parked batch going on from
//! what was sealed.

use super::*;

/// Keeps checkpoints as `airlock exec` would: the latest running one, and what it sealed.
#[derive(Default)]
struct Keeper {
    kept: Mutex<Vec<String>>,
    sealed: Mutex<Vec<String>>,
    /// Keep only the latest running checkpoint (a large batch makes hundreds).
    latest_only: bool,
}

impl Checkpoints for Keeper {
    fn keep(&self, checkpoint: &CheckpointRef<'_>) -> Result<(), String> {
        let json = serde_json::to_string(checkpoint).map_err(|e| e.to_string())?;
        let mut kept = lock(&self.kept);
        if self.latest_only {
            kept.clear();
        }
        kept.push(json);
        Ok(())
    }

    fn seal(&self, checkpoint: &CheckpointRef<'_>) -> Result<SavedCheckpoint, String> {
        let sealed = checkpoint.saved();
        lock(&self.sealed).push(sealed.json().to_string());
        Ok(sealed)
    }
}

use crate::protocol::SavedCheckpoint;

#[tokio::test]
async fn a_headless_run_keeps_each_checkpoint_before_its_step_goes_on_with_its_calls_written_once()
{
    let scenario = json!({"name": "t", "steps": [
        {"calls": [bash("echo ran >> marker; sleep 2")]},
        {"say": "noted", "expect": ["failed"]}
    ]});
    let keeper = Arc::new(Keeper::default());
    let mut rig = rig_with(
        scenario.clone(),
        Approvals::AllowAll,
        Extras {
            checkpoints: Some(keeper.clone()),
            ..Extras::default()
        },
    );
    rig.submit();
    loop {
        if let AgentEvent::ToolStarted { .. } = rig.next().await {
            break;
        }
    }
    let at_death = lock(&keeper.kept).last().cloned().unwrap();
    // The call is in the conversation's last message, and only there.
    assert_eq!(
        at_death.matches("echo ran >> marker").count(),
        1,
        "{at_death}"
    );
    assert!(
        at_death.contains(r#""calls_in_conversation":true"#),
        "{at_death}"
    );
    let at_death: Checkpoint = serde_json::from_str(&at_death).unwrap();
    // On record as started before it started.
    assert_eq!(at_death.started, vec![0]);
    assert_eq!(at_death.calls.len(), 1);
    wait_for_file(&rig.workspace.join("marker")).await;
    // The process dies (kill -9): nothing more is kept.
    rig.handle.task.abort();
    let mut again = rig_with(
        scenario,
        Approvals::AllowAll,
        Extras {
            resume: Some((rig.dir.clone(), at_death)),
            ..Extras::default()
        },
    );
    assert!(matches!(again.next().await, AgentEvent::Restored { .. }));
    let (events, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(started(&events).is_empty(), "{events:?}");
    assert!(again.last_results()[0].2.starts_with("interrupted"));
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("marker")).unwrap(),
        "ran\n",
        "the interrupted call ran again"
    );
}

#[tokio::test]
async fn calls_approved_together_go_on_record_once_before_any_starts_and_their_ends_are_kept_together()
 {
    let calls: Vec<_> = (0..8).map(|i| bash(&format!("echo {i} > f{i}"))).collect();
    let scenario = json!({"name": "t", "steps": [{"calls": calls}, {"say": "done"}]});
    let keeper = Arc::new(Keeper::default());
    let mut rig = rig_with(
        scenario,
        Approvals::AllowAll,
        Extras {
            checkpoints: Some(keeper.clone()),
            ..Extras::default()
        },
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert_eq!(started(&events).len(), 8);
    let kept: Vec<Checkpoint> = lock(&keeper.kept)
        .iter()
        .map(|json| serde_json::from_str(json).unwrap())
        .collect();
    // All eight on record as started, with every decision taken and none ended yet: the
    // checkpoint kept before they were launched together.
    assert!(
        kept.iter()
            .any(|c| c.started == (0..8).collect::<Vec<_>>()
                && c.results.iter().all(Option::is_none)),
        "no checkpoint put the batch on record before it started"
    );
    // None for each decision taken at once, one for them all before they start, at most one
    // per call that ended: 9. (16 when each decision but the first kept one; 24 before that.)
    let in_batch = kept.iter().filter(|c| c.calls.len() == 8).count();
    assert!(in_batch <= 1 + 8, "{in_batch} checkpoints for 8 calls");
}

#[tokio::test]
async fn a_parked_batch_of_a_hundred_calls_with_a_large_write_goes_on_from_what_the_keeper_sealed()
{
    let content: String = (0..60_000)
        .map(|i| format!("line {i:06} of big.txt\n"))
        .collect();
    let read = json!({"tool": "read_file", "args": {"path": "notes.txt"}});
    let mut calls = vec![read.clone(); 50];
    calls.push(json!({"tool": "write_file", "args": {"path": "big.txt", "content": content}}));
    calls.extend(std::iter::repeat_n(read, 49));
    let scenario = json!({"name": "t", "steps": [{"calls": calls}, {"say": "done"}]});
    let keeper = Arc::new(Keeper {
        latest_only: true,
        ..Keeper::default()
    });
    let mut rig = rig_with(
        scenario.clone(),
        Approvals::Park,
        Extras {
            checkpoints: Some(keeper.clone()),
            ..Extras::default()
        },
    );
    rig.submit();
    let (_, outcome) = rig.until_turn_finished().await;
    let TurnOutcome::Parked {
        checkpoint,
        request,
    } = outcome
    else {
        panic!("expected the batch to park, got {outcome:?}");
    };
    assert_eq!(request.call_id, "c51");
    assert_eq!(lock(&keeper.sealed).as_slice(), [checkpoint.json()]);
    // The large write is in the sealed checkpoint once: in the conversation, not again as a call.
    assert_eq!(
        checkpoint.json().matches("line 059999 of big.txt").count(),
        1
    );
    assert!(!exists(&rig.workspace, "big.txt"));
    let parked = Checkpoint::from_saved(&checkpoint).unwrap();
    assert_eq!((parked.parked, parked.calls.len()), (50, 100));
    assert_eq!(parked.results.iter().flatten().count(), 50);
    let answer = ParkedAnswer {
        call_id: request.call_id.clone(),
        judged_path: crate::approval::gate::judged_path(&request.verdict),
        frozen: request.frozen.clone(),
        allow: true,
        session_grant: false,
        reason: None,
        mcp_definition: None,
        change: None,
    };
    let mut again = rig_with(
        scenario,
        Approvals::Park,
        Extras {
            resume: Some((rig.dir.clone(), parked)),
            answer: Some(answer),
            ..Extras::default()
        },
    );
    let (_, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(again.workspace.join("big.txt")).unwrap(),
        content
    );
    let results = again.last_results();
    assert_eq!(results.len(), 100);
    assert!(
        results
            .iter()
            .all(|(_, result, _)| *result == CallResult::Ok),
        "{results:?}"
    );
    let ids: Vec<String> = results.into_iter().map(|(id, _, _)| id).collect();
    let expected: Vec<String> = (1..=100).map(|i| format!("c{i}")).collect();
    assert_eq!(ids, expected);
}
