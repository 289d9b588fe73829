//! Sub-agents: started by an `agent` call, each runs its own turn on its own task while its
//! parent and siblings go on; their calls pass the same gate (one queue of requests, naming the
//! asking agent), never under a wider mode than their parent's; the final answer is the call's
//! result; limits and cancellation hold for the whole tree.

use super::*;
use crate::protocol::AgentStatus;

fn spawn(task: &str) -> serde_json::Value {
    json!({"tool": "agent", "args": {"task": task, "prompt": format!("please {task}")}})
}

fn spawn_with(task: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut call = spawn(task);
    for (k, v) in extra.as_object().unwrap() {
        call["args"][k] = v.clone();
    }
    call
}

/// A sub-agent's script: write `file` with a command (which asks), then say `done`.
fn writes(file: &str, done: &str) -> serde_json::Value {
    json!({"steps": [
        {"say": format!("writing {file}"), "calls": [bash(&format!("echo {file} > {file}"))]},
        {"say": done, "expect": ["ok"]}
    ]})
}

/// The events a sub-agent sent, unwrapped.
fn of_agent<'a>(events: &'a [AgentEvent], id: &str) -> Vec<&'a AgentEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Agent { agent, event } if agent == id => Some(&**event),
            _ => None,
        })
        .collect()
}

fn finished(events: &[AgentEvent]) -> Vec<(String, AgentStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AgentFinished {
                agent,
                status,
                summary,
            } => Some((agent.clone(), *status, summary.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_sub_agents_wait_in_the_one_queue_at_once_and_the_parent_gets_both_answers_in_order() {
    let mut rig = rig(
        json!({"name": "t",
            "steps": [
                {"say": "splitting", "calls": [spawn("left"), spawn("right")]},
                {"say": "both done", "expect": ["ok", "ok"], "expect_seen": ["left is done", "right is done"]}
            ],
            "agents": {"left": writes("left.txt", "left is done"), "right": writes("right.txt", "right is done")}
        }),
        Approvals::Driver,
    );
    rig.submit();
    // Both sub-agents ask before either is answered: they run at the same time.
    let mut waiting = Vec::new();
    let mut events = Vec::new();
    while waiting.len() < 2 {
        let event = rig.next().await;
        if let AgentEvent::ApprovalRequested { request } = &event {
            waiting.push((**request).clone());
        }
        events.push(event);
    }
    let mut agents: Vec<_> = waiting
        .iter()
        .map(|r| {
            let a = r.agent.clone().expect("a sub-agent's request names it");
            let prefixed = r.call_id.starts_with(&format!("{}-", a.id));
            (a.task, a.id, a.parent, prefixed)
        })
        .collect();
    agents.sort();
    assert_eq!(
        agents,
        // Numbered in the order the model asked for them, whichever started first.
        vec![
            ("left".into(), "a1".into(), "main".into(), true),
            ("right".into(), "a2".into(), "main".into(), true)
        ]
    );
    for request in &waiting {
        rig.op(Op::Decide {
            call_id: request.call_id.clone(),
            decision: Decision::AllowOnce,
        });
    }
    let (rest, outcome) = rig.until_turn_finished().await;
    events.extend(rest);
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(exists(&rig.workspace, "left.txt") && exists(&rig.workspace, "right.txt"));
    // The parent's results are the sub-agents' answers, in the order it asked.
    let results = rig.last_results();
    assert_eq!(results.len(), 2);
    assert!(results[0].2.contains("left is done"), "{results:?}");
    assert!(results[1].2.contains("right is done"), "{results:?}");
    let ends = finished(&events);
    assert_eq!(
        ends.iter().map(|(_, s, _)| *s).collect::<Vec<_>>(),
        vec![AgentStatus::Done, AgentStatus::Done]
    );
    // Each sub-agent's text and calls come wrapped with its id, its own conversation.
    for (id, _, summary) in &ends {
        let own = of_agent(&events, id);
        assert!(
            own.iter().any(|e| matches!(e, AgentEvent::ToolStarted { call_id, .. } if call_id.starts_with(&format!("{id}-")))),
            "{id}: {own:?}"
        );
        assert!(summary.ends_with("is done"));
    }
}

#[tokio::test]
async fn a_sub_agent_asked_for_a_wider_mode_than_its_parent_is_refused_with_the_reason() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [spawn_with("wide", json!({"mode": "auto-edit"}))]},
            {"say": "refused", "expect": ["denied"], "expect_seen": ["wider mode"]}
        ], "agents": {"wide": {"steps": [{"say": "never"}]}}}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::AgentStarted { .. })),
        "no sub-agent started"
    );
}

#[tokio::test]
async fn a_read_only_sub_agent_has_its_writes_denied_without_asking_and_cannot_start_a_wider_one() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [spawn_with("look", json!({"mode": "read-only"}))]},
            {"say": "ok", "expect": ["ok"], "expect_seen": ["looked"]}
        ], "agents": {"look": {"steps": [
            {"calls": [
                {"tool": "write_file", "args": {"path": "x.txt", "content": "x"}},
                spawn_with("deeper", json!({"mode": "default"}))
            ]},
            {"say": "looked", "expect": ["denied", "denied"], "expect_seen": ["read-only mode denies it", "wider mode"]}
        ], "agents": {"deeper": {"steps": [{"say": "never"}]}}}}}),
        Approvals::Driver,
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })),
        "nothing asked"
    );
    assert!(!exists(&rig.workspace, "x.txt"));
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AgentStarted { agent, mode, .. } => Some((agent.id.clone(), mode.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(started, vec![("a1".to_string(), "read-only".to_string())]);
}

#[tokio::test]
async fn a_spawn_past_the_depth_limit_fails_with_a_message_that_names_the_limit_and_takes_no_number()
 {
    let mut rig = rig_with(
        json!({"name": "t", "steps": [
            {"calls": [spawn("outer")]},
            {"say": "ok", "expect": ["ok"], "expect_seen": ["could not nest"], "calls": [spawn("after")]},
            {"say": "done", "expect": ["ok"]}
        ], "agents": {"outer": {"steps": [
            {"calls": [spawn("inner")]},
            {"say": "could not nest", "expect": ["failed"], "expect_seen": ["nest at most 1 deep", "max_depth"]}
        ], "agents": {"inner": {"steps": [{"say": "never"}]}}},
        "after": {"steps": [{"say": "after done"}]}}}),
        Approvals::AllowAll,
        Extras {
            sub_agents: Some(SubAgentLimits {
                max_depth: 1,
                max_running: 8,
            }),
            ..Extras::default()
        },
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    // The refused spawn gave its number back: the next sub-agent is a2, not a3.
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AgentStarted { agent, .. } => Some((agent.id.clone(), agent.task.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        vec![
            ("a1".to_string(), "outer".to_string()),
            ("a2".to_string(), "after".to_string())
        ]
    );
}

#[tokio::test]
async fn a_spawn_past_the_running_limit_fails_and_its_sibling_still_finishes() {
    let mut rig = rig_with(
        json!({"name": "t", "steps": [
            {"calls": [spawn("one"), spawn("two")]},
            {"say": "ok", "expect": ["any", "any"]}
        ], "agents": {
            "one": {"steps": [{"say": "one done"}]},
            "two": {"steps": [{"say": "two done"}]}
        }}),
        Approvals::AllowAll,
        Extras {
            sub_agents: Some(SubAgentLimits {
                max_depth: 2,
                max_running: 1,
            }),
            ..Extras::default()
        },
    );
    rig.submit();
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let results = rig.last_results();
    let failed: Vec<_> = results
        .iter()
        .filter(|(_, r, _)| *r == CallResult::Failed)
        .collect();
    let done: Vec<_> = results
        .iter()
        .filter(|(_, r, c)| *r == CallResult::Ok && c.ends_with("done"))
        .collect();
    assert_eq!((failed.len(), done.len()), (1, 1), "{results:?}");
    assert!(failed[0].2.contains("at most 1 sub-agents run at once"));
    assert!(failed[0].2.contains("max_running"));
}

#[tokio::test]
async fn a_sub_agent_that_fails_gives_its_parent_the_error_and_its_sibling_goes_on() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [spawn("broken"), spawn("fine"), spawn("unscripted")]},
            {"say": "ok", "expect": ["failed", "ok", "failed"],
             "expect_seen": ["the sub-agent failed", "fine is done", "no script for a sub-agent"]}
        ], "agents": {
            // Its step expects a result its previous step never had: the model errs.
            "broken": {"steps": [{"say": "x", "expect": ["ok"]}]},
            "fine": {"steps": [{"say": "fine is done"}]}
        }}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let mut ends: Vec<_> = finished(&events).into_iter().map(|(_, s, _)| s).collect();
    ends.sort_by_key(|s| s.as_str());
    assert_eq!(ends, vec![AgentStatus::Done, AgentStatus::Failed]);
}

#[tokio::test]
async fn interrupting_the_turn_cancels_a_sub_agent_and_its_running_command() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [spawn("wait")]},
            {"say": "never"}
        ], "agents": {"wait": {"steps": [
            {"calls": [bash("sleep 30 && echo late > late.txt")]},
            {"say": "never"}
        ]}}}),
        Approvals::Driver,
    );
    rig.submit();
    loop {
        if let AgentEvent::ApprovalRequested { request } = rig.next().await {
            rig.op(Op::Decide {
                call_id: request.call_id.clone(),
                decision: Decision::AllowOnce,
            });
            break;
        }
    }
    loop {
        if let AgentEvent::Agent { event, .. } = rig.next().await
            && matches!(*event, AgentEvent::ToolStarted { .. })
        {
            break;
        }
    }
    rig.op(Op::Interrupt);
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    let ends = finished(&events);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].1, AgentStatus::Cancelled);
    assert!(!exists(&rig.workspace, "late.txt"));
}

#[tokio::test]
async fn a_sub_agent_request_is_denied_when_the_person_cancels_its_agent_call() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [spawn("ask")]},
            {"say": "ok", "expect": ["any"]}
        ], "agents": {"ask": {"steps": [
            {"calls": [bash("echo x > x.txt")]},
            {"say": "never", "expect": ["ok"]}
        ]}}}),
        Approvals::Driver,
    );
    rig.submit();
    let spawned = loop {
        if let AgentEvent::ApprovalRequested { request } = rig.next().await {
            let agent = request.agent.expect("names its agent");
            break agent.id;
        }
    };
    // The `agent` call that started it is the parent's first call.
    let _ = spawned;
    rig.op(Op::CancelTool {
        call_id: "c1".into(),
    });
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(!exists(&rig.workspace, "x.txt"));
    assert_eq!(finished(&events)[0].1, AgentStatus::Cancelled);
}

#[tokio::test]
async fn a_sub_agents_request_gets_a_code_that_answers_it_from_another_terminal_and_the_inbox_names_it()
 {
    let mut rig = rig_with_remote(
        json!({"name": "t", "steps": [
            {"calls": [spawn("remote")]},
            {"say": "ok", "expect": ["ok"], "expect_seen": ["remote is done"]}
        ], "agents": {"remote": writes("remote.txt", "remote is done")}}),
        Approvals::Driver,
        true,
    );
    let db = rig.dir.path().join("state/airlock.db");
    rig.submit();
    let mut settled = None;
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => {
                let code = request.code.clone().expect("a code for other terminals");
                // What waits names the sub-agent for any other airlock that lists it.
                let store = crate::store::db::Store::open(&db).unwrap();
                let pending = store.pending(crate::clock::now_ms()).unwrap();
                assert_eq!(pending.len(), 1);
                let summary: serde_json::Value = serde_json::from_str(&pending[0].summary).unwrap();
                assert_eq!(summary["agent"]["id"], "a1");
                assert_eq!(summary["agent"]["task"], "remote");
                store
                    .decide(
                        &code,
                        r#"{"decision":"allow_once"}"#,
                        crate::clock::now_ms(),
                    )
                    .unwrap();
            }
            AgentEvent::ApprovalSettled { call_id, .. } => settled = Some(call_id),
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(settled.as_deref(), Some("a1-c1"));
    assert!(exists(&rig.workspace, "remote.txt"));
}

#[tokio::test]
async fn a_call_id_of_the_sessions_agent_shaped_like_a_sub_agents_is_renamed_so_no_two_calls_share_one()
 {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [
                {"id": "a1-c1", "tool": "bash", "args": {"command": "echo main > main.txt"}},
                spawn("clash")
            ]},
            {"say": "ok", "expect": ["ok", "ok"]}
        ], "agents": {"clash": {"steps": [
            {"calls": [{"id": "c1", "tool": "bash", "args": {"command": "echo sub > sub.txt"}}]},
            {"say": "sub done", "expect": ["ok"]}
        ]}}}),
        Approvals::Driver,
    );
    rig.submit();
    let mut asked = Vec::new();
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => {
                asked.push(request.call_id.clone());
                rig.op(Op::Decide {
                    call_id: request.call_id.clone(),
                    decision: Decision::AllowOnce,
                });
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    asked.sort();
    assert_eq!(asked, vec!["a1-c1", "main-a1-c1"]);
    assert!(exists(&rig.workspace, "main.txt") && exists(&rig.workspace, "sub.txt"));
}
