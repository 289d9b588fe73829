//! A sub-agent's request with nobody to answer it (`airlock exec --approvals park`): the whole
//! tree parks, each agent's checkpoint kept in its caller's, and resuming with the request's
//! decision brings every agent back where it stood.

use super::*;
use crate::protocol::{AgentStatus, ApprovalRequest};

fn spawn(task: &str) -> serde_json::Value {
    json!({"tool": "agent", "args": {"task": task, "prompt": format!("please {task}")}})
}

/// A sub-agent's script: write `file` with a command (which asks), then say `done`.
fn writes(file: &str, done: &str) -> serde_json::Value {
    json!({"steps": [
        {"say": format!("writing {file}"), "calls": [bash(&format!("echo {file} > {file}"))]},
        {"say": done, "expect": ["ok"]}
    ]})
}

fn started_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AgentStarted { agent, .. } => Some(agent.id.clone()),
            _ => None,
        })
        .collect()
}

fn ends(events: &[AgentEvent]) -> Vec<(String, AgentStatus)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AgentFinished { agent, status, .. } => Some((agent.clone(), *status)),
            _ => None,
        })
        .collect()
}

/// Runs until the turn parks; returns its checkpoint, opened, and the request.
async fn parks(rig: &mut Rig) -> (Vec<AgentEvent>, Checkpoint, ApprovalRequest) {
    let (events, outcome) = rig.until_turn_finished().await;
    let TurnOutcome::Parked {
        checkpoint,
        request,
    } = outcome
    else {
        panic!("expected the run to park, got {outcome:?}");
    };
    (
        events,
        Checkpoint::from_saved(&checkpoint).unwrap(),
        *request,
    )
}

fn allowed(request: &ApprovalRequest) -> ParkedAnswer {
    ParkedAnswer {
        call_id: request.call_id.clone(),
        judged_path: crate::approval::gate::judged_path(&request.verdict),
        frozen: request.frozen.clone(),
        allow: true,
        session_grant: false,
        reason: None,
        mcp_definition: None,
        change: None,
    }
}

/// Goes on with `parked` in `rig`'s world, with `answer`.
fn resumed(
    scenario: &serde_json::Value,
    rig: &Rig,
    parked: Checkpoint,
    answer: ParkedAnswer,
) -> Rig {
    rig_with(
        scenario.clone(),
        Approvals::Park,
        Extras {
            resume: Some((rig.dir.clone(), parked)),
            answer: Some(answer),
            ..Extras::default()
        },
    )
}

#[tokio::test]
async fn a_sub_agents_request_parks_the_whole_tree_and_its_decision_brings_the_tree_back() {
    let scenario = json!({"name": "t",
        "steps": [
            {"say": "delegating", "calls": [spawn("left")]},
            {"say": "all done", "expect": ["ok"], "expect_seen": ["left is done"]}
        ],
        "agents": {"left": writes("left.txt", "left is done")}
    });
    let mut rig = rig(scenario.clone(), Approvals::Park);
    rig.submit();
    let (events, parked, request) = parks(&mut rig).await;
    // The run parked on the sub-agent's request, which names it; nothing of it ran.
    let agent = request.agent.clone().expect("the request names its agent");
    assert_eq!((agent.id.as_str(), agent.task.as_str()), ("a1", "left"));
    assert!(request.call_id.starts_with("a1-"), "{}", request.call_id);
    assert!(!exists(&rig.workspace, "left.txt"));
    assert_eq!(ends(&events), vec![("a1".to_string(), AgentStatus::Parked)]);
    // The sub-agent's checkpoint is kept in its caller's, at the call that started it.
    assert_eq!(parked.agents.len(), 1);
    assert_eq!((parked.agents[0].call, parked.sub_agents), (0, 1));
    let asking = parked
        .asking(&request.call_id)
        .expect("the tree holds the call");
    assert_eq!(asking.agent.map(|a| a.label.id.as_str()), Some("a1"));
    assert!(
        parked.started.is_empty(),
        "a parked sub-agent is not running"
    );

    let mut again = resumed(&scenario, &rig, parked, allowed(&request));
    let (events, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(exists(&again.workspace, "left.txt"));
    assert_eq!(started_ids(&events), vec!["a1"]);
    assert_eq!(ends(&events), vec![("a1".to_string(), AgentStatus::Done)]);
    // The sub-agent's answer is the parent's result, as if nothing had parked.
    let results = again.last_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, CallResult::Ok);
    assert!(results[0].2.contains("left is done"), "{results:?}");
}

#[tokio::test]
async fn two_parked_sub_agents_are_answered_one_resume_at_a_time_in_the_order_the_model_asked() {
    let scenario = json!({"name": "t",
        "steps": [
            {"say": "splitting", "calls": [spawn("left"), spawn("right")]},
            {"say": "one more", "expect": ["ok", "ok"], "expect_seen": ["left is done", "right is done"],
             "calls": [spawn("late")]},
            {"say": "all done", "expect": ["ok"], "expect_seen": ["late one"]}
        ],
        "agents": {
            "left": writes("left.txt", "left is done"),
            "right": writes("right.txt", "right is done"),
            "late": {"steps": [{"say": "late one"}]}
        }
    });
    let mut rig = rig(scenario.clone(), Approvals::Park);
    rig.submit();
    let (_, parked, request) = parks(&mut rig).await;
    // Both parked; the run waits on the first the model asked for.
    assert_eq!(request.agent.as_ref().unwrap().id, "a1");
    let kept: Vec<_> = parked
        .agents
        .iter()
        .map(|a| (a.call, a.label.id.clone()))
        .collect();
    assert_eq!(kept, vec![(0, "a1".to_string()), (1, "a2".to_string())]);

    // Resumed with a1's decision: a1 finishes, a2 asks again and the run parks on it.
    let mut again = resumed(&scenario, &rig, parked, allowed(&request));
    let (events, parked, request) = parks(&mut again).await;
    assert!(exists(&again.workspace, "left.txt") && !exists(&again.workspace, "right.txt"));
    assert_eq!(request.agent.as_ref().unwrap().id, "a2");
    let mut ended = ends(&events);
    ended.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        ended,
        vec![
            ("a1".to_string(), AgentStatus::Done),
            ("a2".to_string(), AgentStatus::Parked)
        ]
    );
    let kept: Vec<_> = parked.agents.iter().map(|a| a.label.id.clone()).collect();
    assert_eq!(kept, vec!["a2"]);
    assert!(parked.results[0].is_some(), "a1's answer is kept");

    // Resumed with a2's: both answers reach the parent, in its order, and a sub-agent started
    // after the resumes takes the next number.
    let mut last = resumed(&scenario, &again, parked, allowed(&request));
    let (events, outcome) = last.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(exists(&last.workspace, "right.txt"));
    assert_eq!(started_ids(&events), vec!["a2", "a3"]);
}

#[tokio::test]
async fn a_call_parked_two_agents_deep_is_found_and_run_in_the_agent_that_asked() {
    let scenario = json!({"name": "t",
        "steps": [
            {"calls": [spawn("outer")]},
            {"say": "done", "expect": ["ok"], "expect_seen": ["outer heard: inner wrote"]}
        ],
        "agents": {"outer": {"steps": [
            {"calls": [spawn("inner")]},
            {"say": "outer heard: inner wrote", "expect": ["ok"], "expect_seen": ["inner wrote"]}
        ], "agents": {"inner": writes("deep.txt", "inner wrote")}}}
    });
    let mut rig = rig(scenario.clone(), Approvals::Park);
    rig.submit();
    let (_, parked, request) = parks(&mut rig).await;
    assert_eq!(request.agent.as_ref().unwrap().id, "a2");
    assert_eq!(request.agent.as_ref().unwrap().parent, "a1");
    let outer = &parked.agents[0];
    assert_eq!((outer.label.id.as_str(), outer.depth), ("a1", 1));
    let inner = &outer.checkpoint.agents[0];
    assert_eq!((inner.label.id.as_str(), inner.depth), ("a2", 2));

    let mut again = resumed(&scenario, &rig, parked, allowed(&request));
    let (events, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(exists(&again.workspace, "deep.txt"));
    // The command ran as a2's call, under a2's id.
    let ran_in_a2 = events.iter().any(|e| {
        matches!(e, AgentEvent::Agent { agent, event } if agent == "a2"
            && matches!(&**event, AgentEvent::ToolFinished { call_id, status: ToolStatus::Ok, .. } if *call_id == request.call_id))
    });
    assert!(ran_in_a2, "{events:?}");
}

#[tokio::test]
async fn a_denied_parked_request_reaches_the_sub_agent_that_asked_as_a_denial() {
    let scenario = json!({"name": "t",
        "steps": [
            {"calls": [spawn("left")]},
            {"say": "done", "expect": ["ok"], "expect_seen": ["left was refused"]}
        ],
        "agents": {"left": {"steps": [
            {"calls": [bash("echo x > left.txt")]},
            {"say": "left was refused", "expect": ["denied"], "expect_seen": ["not today"]}
        ]}}
    });
    let mut rig = rig(scenario.clone(), Approvals::Park);
    rig.submit();
    let (_, parked, request) = parks(&mut rig).await;
    let answer = ParkedAnswer {
        allow: false,
        reason: Some("not today".into()),
        ..allowed(&request)
    };
    let mut again = resumed(&scenario, &rig, parked, answer);
    let (_, outcome) = again.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(!exists(&again.workspace, "left.txt"));
}
