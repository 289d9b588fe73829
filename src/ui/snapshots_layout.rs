//! How the screen is shared, pinned at 100x30 and 60x20: the approval modal sized to what it
//! shows under the conversation that asked for it, the footer's remote code surviving narrow
//! screens, and the results pane's summary of each run.

use std::time::{Duration, Instant};

use super::app::Overlay;
use super::snapshots::{LONG_ANSWER, app, ask, both_sizes, conversation, draw, frame, press, run};
use super::testing::{command_request, edit_request};
use crate::protocol::ToolStatus;
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
fn a_long_diff_scrolls_under_the_conversations_latest_lines_or_takes_the_screen_when_too_short() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    let old: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("0\n", "0 changed\n");
    let mut request = edit_request();
    request.preview = Some(crate::facts::diff::unified("big.txt", &old, &new));
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    for (width, height, top) in [(100, 30, 7), (80, 24, 7), (60, 20, 0)] {
        let screen = draw(&app, width, height);
        // Where there is room for both, the conversation keeps five lines above the modal (the
        // call's own line among them); at 60x20 the preview needs every row.
        assert_eq!(modal_top(&screen), top, "{screen}");
        if top > 0 {
            let above = rows(&screen)[..top].join("\n");
            assert!(above.contains("edit calc.py — waiting"), "{screen}");
        }
        assert!(
            rows(&screen)[height as usize - 2].starts_with('└'),
            "{screen}"
        );
        // The preview keeps a window worth reading: eight rows or more, its marker row included.
        let all = rows(&screen);
        let border = all.iter().position(|r| r.starts_with("│──")).unwrap_or(0);
        let marker = all
            .iter()
            .position(|r| r.contains("more lines below"))
            .unwrap_or(0);
        assert!(
            marker >= border + 8,
            "{width}x{height}: {} rows\n{screen}",
            marker.saturating_sub(border)
        );
    }
    let screen = draw(&app, 60, 20);
    insta::assert_snapshot!("long_diff_60x20", screen);
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
    let narrow = draw(&app, 60, 40);
    assert!(
        narrow.contains("a allow the file calc.py for this session"),
        "{narrow}"
    );
    assert!(
        narrow.contains("d allow edit_file under src/ for the session"),
        "{narrow}"
    );
    // Where the preview has to scroll, the options take their shortest labels at once.
    let short = draw(&app, 60, 20);
    assert!(
        short.contains("a for the session: the file calc.py"),
        "{short}"
    );
    assert!(
        short.contains("d for the session: edit_file under src/"),
        "{short}"
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
    assert!(screen.contains("└ keys are live in 0.3s"), "{screen}");
}

const UNITTEST: &[&str] = &[
    "test_add (test_calc.TestCalc.test_add) ... ok",
    "test_multiply (test_calc.TestCalc.test_multiply) ... ok",
    "test_subtract (test_calc.TestCalc.test_subtract) ... ok",
    "",
    "----------------------------------------------------------------------",
    "Ran 3 tests in 0.001s",
    "",
    "OK",
];

fn finish(app: &mut super::app::App, id: &str, lines: u64) {
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: id.into(),
        status: ToolStatus::Ok,
        exit_code: Some(0),
        lines,
        error: None,
        log: None,
    });
}

/// The demo's runs, all finished: four reads and an edit with no output, the test run, then two
/// slower checks.
fn demo_runs() -> super::app::App {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    for (id, title) in [
        ("c1", "list ."),
        ("c2", "read README.md"),
        ("c3", "read calc.py"),
        ("c4", "read test_calc.py"),
        ("c5", "edit calc.py"),
    ] {
        run(&mut app, id, title, &[]);
        finish(&mut app, id, 0);
    }
    run(&mut app, "c6", "$ python3 -m unittest -v 2>&1", UNITTEST);
    finish(&mut app, "c6", UNITTEST.len() as u64);
    let lint: Vec<String> = (1..=15)
        .map(|i| format!("lint: checked module {i} of 15"))
        .collect();
    let lint: Vec<&str> = lint.iter().map(String::as_str).collect();
    let title = |what: &str, n: u32| {
        format!("$ for i in $(seq 1 {n}); do echo \"{what} $i of {n}\"; sleep 0.2; done")
    };
    run(&mut app, "c8", &title("lint: checked module", 15), &lint);
    let docs: Vec<String> = (1..=10)
        .map(|i| format!("docs: rendered page {i} of 10"))
        .collect();
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    run(&mut app, "c9", &title("docs: rendered page", 10), &docs);
    app.now = t0 + Duration::from_millis(3000);
    finish(&mut app, "c8", 15);
    finish(&mut app, "c9", 10);
    app
}

#[test]
fn a_finished_test_run_shows_a_summary_not_just_its_last_line() {
    let app = demo_runs();
    let screen = draw(&app, 100, 30);
    for shown in [
        "Ran 3 tests in 0.001s",
        "│  OK ",
        "⋮ 5 earlier lines",
        "⋮ 12 earlier lines",
        "lint: checked module 15 of 15",
        "docs: rendered page 10 of 10",
        "c1 list .",
        "Tab, then Enter: a run in full",
    ] {
        assert!(screen.contains(shown), "{shown}:\n{screen}");
    }
    both_sizes("results_summary", &app);
}

#[test]
fn the_selected_run_gets_the_rows_the_others_leave_and_the_hint_names_its_key() {
    let mut app = demo_runs();
    let now = app.now;
    press(&mut app, crossterm::event::KeyCode::Tab, now);
    for _ in 0..2 {
        press(&mut app, crossterm::event::KeyCode::Char('k'), now);
    }
    assert_eq!(app.selected_run, 5);
    let screen = draw(&app, 100, 30);
    // The whole test run, while the others get their summaries.
    assert!(screen.contains("⋮ 12 earlier lines"), "{screen}");
    for line in UNITTEST.iter().filter(|l| !l.is_empty()) {
        let line = &line[..line.len().min(40)];
        assert!(screen.contains(line), "{line}:\n{screen}");
    }
    assert!(
        screen.contains("Enter: the selected run in full"),
        "{screen}"
    );
    let narrow = draw(&app, 60, 20);
    assert!(narrow.contains("›✓ c6 $ python3"), "{narrow}");
    assert!(narrow.contains("Ran 3 tests in 0.001s"), "{narrow}");
    both_sizes("results_selected", &app);
}

#[test]
fn a_run_header_keeps_its_exit_status_on_a_narrow_pane() {
    let app = demo_runs();
    for (width, height) in [(60, 20), (80, 24), (100, 30)] {
        let screen = draw(&app, width, height);
        let header = rows(&screen)
            .into_iter()
            .find(|r| r.contains("c9 $ for i") && r.contains("s  exit 0"))
            .unwrap_or_else(|| panic!("{width}x{height}:\n{screen}"));
        let header = header.trim_end_matches('│').trim_end();
        assert!(
            header.ends_with("…  3.0s  exit 0"),
            "{width}x{height}: {header}"
        );
    }
}
