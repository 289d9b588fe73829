//! Sub-agents on screen, pinned at 100x30 and 60x20: a modal naming the sub-agent that asks and
//! where it stands in the one queue, the agent list with each agent's state, a sub-agent's own
//! conversation, and the results pane tagging (and filtering) runs by agent.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::App;
use super::snapshots::{app, ask, both_sizes, conversation, frame, press, run};
use super::testing::command_request;
use crate::protocol::{AgentEvent, AgentLabel, AgentStatus, ApprovalRequest, Op, Stream};

fn label(id: &str, task: &str) -> AgentLabel {
    AgentLabel {
        id: id.into(),
        parent: "main".into(),
        task: task.into(),
    }
}

/// The session's agent started two sub-agents (`c1`, `c2`), each said something and started
/// a command.
fn two_sub_agents(t0: Instant) -> App {
    let mut app = app(t0);
    conversation(&mut app);
    run(&mut app, "c1", "agent: run the unit tests", &[]);
    run(&mut app, "c2", "agent: check the docs build", &[]);
    for (id, call, task, said, command) in [
        (
            "a1",
            "c1",
            "run the unit tests",
            "Running the unit tests.",
            "cargo test",
        ),
        (
            "a2",
            "c2",
            "check the docs build",
            "Building the docs.",
            "cargo doc",
        ),
    ] {
        app.on_agent_event(AgentEvent::AgentStarted {
            agent: label(id, task),
            call_id: call.into(),
            depth: 1,
            mode: "default".into(),
            sandbox: Some("workspace-write".into()),
        });
        let inner = [
            AgentEvent::TurnStarted {
                turn: 1,
                prompt: format!("please {task}"),
            },
            AgentEvent::TextDelta { text: said.into() },
            AgentEvent::ToolStarted {
                call_id: format!("{id}-c1"),
                tool: "bash".into(),
                title: format!("$ {command}"),
            },
            AgentEvent::ToolOutput {
                call_id: format!("{id}-c1"),
                stream: Stream::Stdout,
                text: format!("{command}: compiling\n"),
                skipped: 0,
            },
        ];
        for event in inner {
            app.on_agent_event(AgentEvent::Agent {
                agent: id.into(),
                event: Box::new(event),
            });
        }
    }
    app
}

fn sub_agent_request(id: &str, task: &str, call: &str, command: &str) -> ApprovalRequest {
    ApprovalRequest {
        agent: Some(label(id, task)),
        ..command_request(call, command)
    }
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

#[test]
fn a_sub_agents_request_names_its_agent_and_its_place_in_the_whole_queue() {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    ask(
        &mut app,
        sub_agent_request("a1", "run the unit tests", "a1-c2", "rm -rf target"),
    );
    ask(
        &mut app,
        sub_agent_request("a2", "check the docs build", "a2-c2", "npm run docs"),
    );
    ask(&mut app, command_request("c3", "git status"));
    app.now = t0 + Duration::from_secs(1);
    frame(&mut app, 100, 30);
    both_sizes("agents_modal_names_its_agent", &app);
    let screen = frame(&mut app, 100, 30);
    assert!(screen.contains("a1 (run the unit tests)"), "{screen}");
    assert!(screen.contains("1 of 3 waiting"), "{screen}");
    assert!(
        screen.contains("[a2]") && screen.contains("[main]"),
        "{screen}"
    );
    assert!(
        screen.contains("3 waiting (a1 1, a2 1, main 1)"),
        "{screen}"
    );
    // The request shows in its agent's own conversation, not the session's.
    assert!(
        !app.entries
            .iter()
            .any(|e| format!("{e:?}").contains("a1-c2")),
        "{:?}",
        app.entries
    );
}

#[test]
fn the_agent_list_shows_each_agent_with_its_state_and_enter_shows_its_conversation() {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    ask(
        &mut app,
        sub_agent_request("a2", "check the docs build", "a2-c2", "npm run docs"),
    );
    app.on_agent_event(AgentEvent::AgentFinished {
        agent: "a1".into(),
        status: AgentStatus::Failed,
        summary: "the sub-agent failed: cargo test exited 101".into(),
    });
    // Answer the modal first, so the list opens over the panes.
    let later = t0 + Duration::from_secs(1);
    app.now = later;
    frame(&mut app, 100, 30);
    let ops = press(&mut app, KeyCode::Char('y'), later);
    assert!(matches!(&ops[..], [Op::Decide { .. }]), "{ops:?}");
    app.on_key(key(KeyCode::F(3), KeyModifiers::NONE), later);
    press(&mut app, KeyCode::Down, later);
    press(&mut app, KeyCode::Down, later);
    both_sizes("agents_list", &app);
    let ops = press(&mut app, KeyCode::Char('x'), later);
    assert_eq!(
        ops,
        vec![Op::CancelTool {
            call_id: "c2".into()
        }]
    );
    press(&mut app, KeyCode::Enter, later);
    assert_eq!(app.agents.viewing, Some(1));
    both_sizes("agents_conversation_of_a2", &app);
}

#[test]
fn alt_arrows_walk_the_conversations_and_events_land_in_their_own() {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    let alt_right = key(KeyCode::Right, KeyModifiers::ALT);
    app.on_key(alt_right, t0);
    assert_eq!(
        app.viewing_name().as_deref(),
        Some("a1 · run the unit tests")
    );
    assert!(
        app.entries
            .iter()
            .any(|e| format!("{e:?}").contains("Running the unit tests"))
    );
    // The session's agent goes on while a1's conversation is on screen: its text stays its own.
    app.on_agent_event(AgentEvent::TextDelta {
        text: " Still reading.".into(),
    });
    assert!(
        !app.entries
            .iter()
            .any(|e| format!("{e:?}").contains("Still reading"))
    );
    app.on_key(alt_right, t0);
    app.on_key(alt_right, t0);
    assert_eq!(app.viewing_name(), None);
    assert!(
        app.entries
            .iter()
            .any(|e| format!("{e:?}").contains("Still reading"))
    );
    app.on_key(key(KeyCode::Left, KeyModifiers::ALT), t0);
    assert_eq!(
        app.viewing_name().as_deref(),
        Some("a2 · check the docs build")
    );
}

#[test]
fn the_results_pane_tags_runs_with_their_agent_and_filters_to_the_agent_on_screen() {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    app.now = t0 + Duration::from_secs(2);
    both_sizes("agents_results_tagged", &app);
    app.on_key(key(KeyCode::Right, KeyModifiers::ALT), t0);
    app.on_key(key(KeyCode::Tab, KeyModifiers::NONE), t0);
    press(&mut app, KeyCode::Char('a'), t0);
    assert_eq!(app.run_filter.as_deref(), Some("a1"));
    let shown: Vec<_> = (0..app.runs.len())
        .filter(|i| app.run_shown(*i))
        .map(|i| app.runs[i].call_id.clone())
        .collect();
    assert_eq!(shown, vec!["a1-c1"]);
    both_sizes("agents_results_filtered", &app);
    // A run the filter hides is never the one `x` cancels.
    app.selected_run = 0;
    assert!(!app.run_shown(0));
    assert!(press(&mut app, KeyCode::Char('x'), t0).is_empty());
    press(&mut app, KeyCode::Char('a'), t0);
    assert_eq!(app.run_filter, None);
}

#[test]
fn parking_a_sub_agents_request_says_in_its_conversation_that_it_waits_only_while_this_cockpit_runs()
 {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    let mut request = sub_agent_request("a1", "run the unit tests", "a1-c2", "rm -rf target");
    request.code = Some("K22U-J8R5".into());
    ask(&mut app, request);
    let later = t0 + Duration::from_secs(1);
    app.now = later;
    frame(&mut app, 100, 30);
    press(&mut app, KeyCode::Char('p'), later);
    // Said in a1's conversation, not in the one on screen (the session's own).
    let on_screen: Vec<String> = app.entries.iter().map(|e| format!("{e:?}")).collect();
    assert!(
        !on_screen.iter().any(|e| e.contains("of sub-agent a1")),
        "{on_screen:?}"
    );
    app.view_agent(Some(0));
    let said: Vec<String> = app.entries.iter().map(|e| format!("{e:?}")).collect();
    assert!(
        said.iter()
            .any(|e| e.contains("of sub-agent a1") && e.contains("not kept when it quits")),
        "{said:?}"
    );
    assert!(!said.iter().any(|e| e.contains("--resume")), "{said:?}");
}

#[test]
fn the_agent_list_is_the_tree_a_sub_agent_under_its_own_parent_when_a_sibling_started_between() {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    // a1's own sub-agent starts after a2: it is listed under a1, not after a2.
    app.on_agent_event(AgentEvent::AgentStarted {
        agent: AgentLabel {
            id: "a3".into(),
            parent: "a1".into(),
            task: "bisect the failing test".into(),
        },
        call_id: "a1-c2".into(),
        depth: 2,
        mode: "read-only".into(),
        sandbox: Some("read-only".into()),
    });
    let order: Vec<&str> = app
        .agents
        .list
        .iter()
        .map(|a| a.label.id.as_str())
        .collect();
    assert_eq!(order, vec!["a1", "a3", "a2"]);
    app.on_key(key(KeyCode::F(3), KeyModifiers::NONE), t0);
    both_sizes("agents_list_tree", &app);
}

#[test]
fn the_waiting_count_adds_each_sub_agents_calls_still_to_ask_to_the_sessions_own() {
    let t0 = Instant::now();
    let mut app = two_sub_agents(t0);
    let queued = |id: &str| crate::protocol::QueuedCall {
        call_id: id.into(),
        tool: "bash".into(),
        title: format!("$ step {id}"),
        needs_decision: true,
        sandbox: None,
    };
    // a1's next step has two calls that will ask; none has asked yet.
    app.on_agent_event(AgentEvent::Agent {
        agent: "a1".into(),
        event: Box::new(AgentEvent::BatchQueued {
            calls: vec![queued("a1-c2"), queued("a1-c3")],
        }),
    });
    assert_eq!(app.waiting_calls(), 2);
    // The first asks: still two (one in the queue, one to come); a2 asks too: three.
    ask(
        &mut app,
        sub_agent_request("a1", "run the unit tests", "a1-c2", "make a"),
    );
    assert_eq!(app.waiting_calls(), 2);
    ask(
        &mut app,
        sub_agent_request("a2", "check the docs build", "a2-c2", "npm run docs"),
    );
    assert_eq!(app.waiting_calls(), 3);
    app.now = t0;
    assert!(
        frame(&mut app, 100, 30).contains("3 waiting"),
        "{}",
        frame(&mut app, 100, 30)
    );
}
