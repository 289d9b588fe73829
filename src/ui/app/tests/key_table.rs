//! The key tables are the dispatchers (checked both ways in `both_ways`), and the conversation's
//! scroll keys move only the conversation.

use super::*;
use crate::protocol::GrantSummary;
use crate::ui::conversation::View;
use crate::ui::keys::{self, Place};

/// Draws a frame of `width` x `height` and records the geometry, as the loop does.
fn frame(app: &mut App, width: u16, height: u16) {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("a test backend");
    let mut shown = None;
    let mut areas = None;
    terminal
        .draw(|f| {
            let a = crate::ui::render::layout(f.area(), app.prompt.lines().len());
            areas = Some((a.conversation, a.results));
            shown = crate::ui::render::render(app, f);
        })
        .expect("a test backend draws");
    if let Some((conversation, results)) = areas {
        app.conversation_area = (
            conversation.x,
            conversation.y,
            conversation.width,
            conversation.height,
        );
        app.results_area = (results.x, results.y, results.width, results.height);
    }
    app.screen = (width, height);
    app.approval_drawn(shown);
}

/// A conversation far longer than the pane: forty turns of a prompt and an answer.
fn long_conversation(app: &mut App) {
    for turn in 0..40 {
        app.on_agent_event(AgentEvent::TurnStarted {
            turn,
            prompt: format!("question {turn}"),
        });
        app.on_agent_event(AgentEvent::TextDelta {
            text: format!("answer {turn}: the tests fail because add() subtracts."),
        });
        app.on_agent_event(AgentEvent::TurnFinished {
            turn,
            outcome: crate::protocol::TurnOutcome::Completed,
        });
    }
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn scrolled_app() -> App {
    let mut app = App::new(Status::default(), Instant::now());
    long_conversation(&mut app);
    frame(&mut app, 100, 30);
    app
}

#[test]
fn page_up_and_shift_arrows_scroll_the_conversation_and_never_touch_the_draft() {
    let mut app = scrolled_app();
    let t = Instant::now();
    for c in "half a sentence".chars() {
        app.on_key(key(c), t);
    }
    app.on_key(with(KeyCode::Left, KeyModifiers::NONE), t);
    let (draft, cursor) = (app.draft(), app.prompt.cursor());

    app.on_key(with(KeyCode::PageUp, KeyModifiers::NONE), t);
    let View::Anchored(after_page) = app.conversation else {
        panic!("PgUp left the view at the bottom");
    };
    app.on_key(with(KeyCode::Up, KeyModifiers::SHIFT), t);
    let View::Anchored(after_line) = app.conversation else {
        panic!("Shift-Up left the view at the bottom");
    };
    assert_ne!(after_line, after_page);
    app.on_key(with(KeyCode::Down, KeyModifiers::SHIFT), t);
    assert_eq!(app.conversation, View::Anchored(after_page));
    app.on_key(with(KeyCode::PageDown, KeyModifiers::NONE), t);
    assert_eq!(app.conversation, View::Bottom);
    app.on_key(with(KeyCode::Home, KeyModifiers::SHIFT), t);
    let View::Anchored(first) = app.conversation else {
        panic!("Shift-Home did not scroll");
    };
    assert_eq!((first.entry, first.row), (0, 0));
    app.on_key(with(KeyCode::End, KeyModifiers::SHIFT), t);
    assert_eq!(app.conversation, View::Bottom);

    assert_eq!(app.draft(), draft);
    assert_eq!(app.prompt.cursor(), cursor);
    assert!(app.overlays.is_empty());
}

#[test]
fn a_page_up_shows_older_lines_on_screen() {
    let mut app = scrolled_app();
    let screen = |app: &mut App| {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
        terminal
            .draw(|f| {
                crate::ui::render::render(app, f);
            })
            .unwrap();
        terminal.backend().to_string()
    };
    assert!(screen(&mut app).contains("answer 39"));
    app.on_key(with(KeyCode::PageUp, KeyModifiers::NONE), Instant::now());
    let up = screen(&mut app);
    assert!(!up.contains("answer 39"), "{up}");
    assert!(up.contains("answer 33"), "{up}");
    assert!(up.contains("more below · Shift-End: latest"), "{up}");
}

#[test]
fn the_scroll_keys_work_from_the_results_pane_too() {
    let mut app = scrolled_app();
    app.on_key(with(KeyCode::Tab, KeyModifiers::NONE), Instant::now());
    assert_eq!(app.focus, Focus::Results);
    app.on_key(with(KeyCode::PageUp, KeyModifiers::NONE), Instant::now());
    assert!(matches!(app.conversation, View::Anchored(_)));
}

#[test]
fn output_arriving_while_scrolled_back_does_not_move_the_view() {
    let mut app = scrolled_app();
    app.on_key(with(KeyCode::PageUp, KeyModifiers::NONE), Instant::now());
    let view = app.conversation;
    app.on_agent_event(AgentEvent::TurnStarted {
        turn: 41,
        prompt: "another".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta {
        text: "streaming...".into(),
    });
    assert_eq!(app.conversation, view);
}

#[test]
fn sending_a_prompt_returns_the_conversation_to_its_latest_line() {
    let mut app = scrolled_app();
    app.on_key(with(KeyCode::PageUp, KeyModifiers::NONE), Instant::now());
    for c in "next".chars() {
        app.on_key(key(c), Instant::now());
    }
    let ops = app.on_key(with(KeyCode::Enter, KeyModifiers::NONE), Instant::now());
    assert_eq!(ops.len(), 1);
    assert_eq!(app.conversation, View::Bottom);
}

#[test]
fn the_mouse_wheel_scrolls_the_conversation_under_it() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let mut app = scrolled_app();
    let (x, y, _, _) = app.conversation_area;
    let wheel = |kind| MouseEvent {
        kind,
        column: x + 2,
        row: y + 2,
        modifiers: KeyModifiers::NONE,
    };
    app.on_mouse(wheel(MouseEventKind::ScrollUp));
    assert!(matches!(app.conversation, View::Anchored(_)));
    app.on_mouse(wheel(MouseEventKind::ScrollDown));
    assert_eq!(app.conversation, View::Bottom);
}

#[test]
fn the_help_scrolls_and_stops_at_its_last_line() {
    let mut app = App::new(Status::default(), Instant::now());
    frame(&mut app, 60, 20);
    app.on_key(with(KeyCode::F(1), KeyModifiers::NONE), Instant::now());
    let (rows, page) = crate::ui::overlay::help::size(app.screen);
    assert!(rows > page, "the help fits 60x20 without scrolling?");
    let scroll = |app: &App| match app.overlays.last() {
        Some(Overlay::Help(help)) => help.scroll,
        other => panic!("help is not open: {other:?}"),
    };
    app.on_key(with(KeyCode::PageDown, KeyModifiers::NONE), Instant::now());
    assert_eq!(scroll(&app), page.min(rows - page));
    for _ in 0..300 {
        app.on_key(with(KeyCode::Down, KeyModifiers::NONE), Instant::now());
    }
    assert_eq!(scroll(&app), rows - page);
    // One step up from the end moves at once (no hidden overshoot to climb back from).
    app.on_key(with(KeyCode::Up, KeyModifiers::NONE), Instant::now());
    assert_eq!(scroll(&app), rows - page - 1);
    app.on_key(with(KeyCode::Home, KeyModifiers::NONE), Instant::now());
    assert_eq!(scroll(&app), 0);
    app.on_key(with(KeyCode::Esc, KeyModifiers::NONE), Instant::now());
    assert!(app.overlays.is_empty());
}

mod both_ways;
