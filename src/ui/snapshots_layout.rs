//! How the screen is shared, pinned at 100x30 and 60x20: the approval modal sized to what it
//! shows under the conversation that asked for it, the footer's remote code surviving narrow
//! screens, and the results pane's summary of each run.

use std::time::{Duration, Instant};

use super::app::Overlay;
use super::snapshots::{LONG_ANSWER, app, ask, both_sizes, conversation, draw, frame, press};
use super::testing::{command_request, edit_request};
use crate::protocol::{AgentEvent, Op};

/// The screen's rows, without the quotes the test backend puts around them.
fn rows(screen: &str) -> Vec<&str> {
    screen.lines().map(|r| r.trim_matches('"')).collect()
}

/// The row the modal's top border is on.
fn modal_top(screen: &str) -> usize {
    rows(screen)
        .iter()
        .position(|r| r.contains("┌ approval"))
        .unwrap_or_else(|| panic!("no modal on screen:\n{screen}"))
}

/// A conversation long enough to fill the pane, ending with the call that asks.
fn long_conversation(app: &mut super::app::App) {
    for turn in 1..=6 {
        app.on_agent_event(AgentEvent::TurnStarted {
            turn,
            prompt: format!("question {turn}: why do the tests fail?"),
        });
        app.on_agent_event(AgentEvent::TextDelta {
            text: format!("answer {turn}: {LONG_ANSWER}"),
        });
    }
    app.on_agent_event(AgentEvent::TextDelta {
        text: " Now I will run the tests once more.".into(),
    });
}

#[test]
fn a_one_line_command_gets_a_small_modal_under_the_conversation_that_asked_for_it() {
    let t0 = Instant::now();
    let mut app = app(t0);
    long_conversation(&mut app);
    ask(&mut app, command_request("c6", "cargo test"));
    app.now = t0 + Duration::from_secs(2);
    for (width, height) in [(100, 30), (60, 20)] {
        let screen = draw(&app, width, height);
        let top = modal_top(&screen);
        assert!(
            top >= 5,
            "{width}x{height}: the modal starts at row {top}\n{screen}"
        );
        let above = rows(&screen)[..top].join("\n");
        // The conversation's latest lines, what explains the call, are the ones left in sight.
        assert!(above.contains("cargo test — waiting"), "{screen}");
        if height == 30 {
            assert!(above.contains("run the tests once more"), "{screen}");
        }
        assert!(!above.contains("question 1:"), "{screen}");
        // The status bar stays.
        assert!(
            rows(&screen)[height as usize - 1].contains("1 waiting"),
            "{screen}"
        );
    }
    both_sizes("small_modal", &app);
}

#[test]
fn a_long_diff_takes_every_row_but_the_status_bar() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    let old: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("0\n", "0 changed\n");
    let mut request = edit_request();
    request.preview = Some(crate::tools::diff::unified("big.txt", &old, &new));
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    for (width, height) in [(100, 30), (60, 20)] {
        let screen = draw(&app, width, height);
        assert_eq!(modal_top(&screen), 0, "{screen}");
        assert!(
            rows(&screen)[height as usize - 2].starts_with('└'),
            "{screen}"
        );
    }
}

#[test]
fn a_small_modal_counts_what_it_drew_as_seen_so_y_answers_it() {
    let t0 = Instant::now();
    let mut app = app(t0);
    long_conversation(&mut app);
    ask(&mut app, command_request("c6", "cargo test"));
    for (width, height) in [(100, 30), (60, 20)] {
        frame(&mut app, width, height);
        let Some(Overlay::Approval(overlay)) = app.overlays.last() else {
            panic!("no modal");
        };
        assert!(overlay.unseen().is_empty(), "{width}x{height}");
    }
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    let ops = press(&mut app, crossterm::event::KeyCode::Char('y'), later);
    assert!(
        matches!(ops.as_slice(), [Op::Decide { call_id, .. }] if call_id == "c6"),
        "{ops:?}"
    );
}

#[test]
fn a_modal_that_fits_keeps_its_size_when_its_keys_go_live() {
    let t0 = Instant::now();
    let mut app = app(t0);
    long_conversation(&mut app);
    ask(&mut app, command_request("c6", "cargo test"));
    for (width, height) in [(100, 30), (60, 20)] {
        app.now = t0;
        let arming = draw(&app, width, height);
        assert!(arming.contains("keys are live in"), "{arming}");
        app.now = t0 + Duration::from_secs(2);
        let armed = draw(&app, width, height);
        assert!(!armed.contains("keys are live in"), "{armed}");
        assert_eq!(modal_top(&arming), modal_top(&armed), "{arming}\n{armed}");
    }
}

/// The edit modal with a code for answering from another terminal, armed.
fn remote_code_app() -> super::app::App {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    let mut request = edit_request();
    request.code = Some("J74G-N2P8".into());
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    app
}

#[test]
fn the_remote_code_stays_whole_on_one_row_as_the_modal_narrows() {
    let app = remote_code_app();
    for width in [120, 100, 80, 60, 45, 32] {
        let screen = draw(&app, width, 30);
        let row = rows(&screen)
            .into_iter()
            .find(|r| r.contains("J74G-N2P8"))
            .unwrap_or_else(|| panic!("{width}: no code\n{screen}"));
        assert!(row.contains("airlock approve J74G-N2P8"), "{width}: {row}");
    }
    let wide = draw(&app, 120, 30);
    assert!(
        wide.contains("(or airlock deny J74G-N2P8); the first answer wins"),
        "{wide}"
    );
    both_sizes("remote_code", &app);
}

#[test]
fn option_labels_shorten_before_a_scope_is_broken_across_rows() {
    let app = remote_code_app();
    let wide = draw(&app, 100, 30);
    assert!(
        wide.contains("a allow the file calc.py in this workspace for this session"),
        "{wide}"
    );
    assert!(
        wide.contains("N deny with a reason for the model"),
        "{wide}"
    );
    let narrow = draw(&app, 60, 20);
    assert!(
        narrow.contains("a allow the file calc.py for this session"),
        "{narrow}"
    );
    assert!(
        narrow.contains("d allow anything under src/ for the session"),
        "{narrow}"
    );
    let narrower = draw(&app, 44, 20);
    assert!(
        narrower.contains("a for the session: the file calc.py"),
        "{narrower}"
    );
}

#[test]
fn footer_lines_wrap_between_words_not_inside_them() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    ask(&mut app, command_request("c2", "rm -rf build"));
    app.now = t0 + Duration::from_millis(100);
    let screen = draw(&app, 60, 20);
    assert!(
        screen.contains("dangerous calls are approved one at a  "),
        "{screen}"
    );
    assert!(
        screen.contains("│  time, never for the session"),
        "{screen}"
    );
    assert!(screen.contains("keys are live in 0.3s "), "{screen}");
}
