//! Undo on screen, pinned at 100x30 and 60x20: a finished run says what it changed, `u` shows
//! what undoing it would do file by file (a real workspace history behind it), `y` does it once
//! the plan was read and armed, and the conversation says what went back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::app::{App, Focus};
use super::overlay::Overlay;
use super::snapshots::{app, both_sizes, conversation, frame, press, run};
use crate::protocol::{AgentEvent, ToolStatus, WorkspaceHistory};

/// A workspace where call `c1` ran `rm -rf src`, kept in a real history.
fn removed_src() -> (tempfile::TempDir, Arc<crate::undo::History>) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(ws.join("src/test_calc.py"), "from calc import add\n").unwrap();
    let history =
        Arc::new(crate::undo::History::open(&dir.path().join("state"), "s1", &ws).unwrap());
    history.before("c1", "$ rm -rf src").unwrap();
    std::fs::remove_dir_all(ws.join("src")).unwrap();
    history.after("c1").unwrap();
    (dir, history)
}

/// The cockpit after `c1` finished, the results pane focused on it.
fn finished_run(t0: Instant, history: &Arc<crate::undo::History>) -> App {
    let mut app = app(t0);
    conversation(&mut app);
    run(&mut app, "c1", "$ rm -rf src", &[]);
    app.on_agent_event(AgentEvent::WorkspaceChanged {
        call_id: "c1".into(),
        changes: history.records()[0].count(),
    });
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c1".into(),
        status: ToolStatus::Ok,
        exit_code: Some(0),
        lines: 0,
        error: None,
        log: None,
    });
    app.undo_source = Some(history.clone());
    app.focus = Focus::Results;
    app.selected_run = 0;
    app.screen = (100, 30);
    app
}

#[test]
fn u_on_a_finished_run_shows_what_undoing_it_would_do_and_y_does_it_once_read_and_armed() {
    let (dir, history) = removed_src();
    let t0 = Instant::now();
    let mut app = finished_run(t0, &history);
    assert!(frame(&mut app, 100, 30).contains("deleted 2"));
    both_sizes("undo_run_line", &app);
    press(&mut app, KeyCode::Char('u'), t0);
    assert!(matches!(app.overlays.last(), Some(Overlay::Undo(_))));
    both_sizes("undo_plan", &app);
    // Not armed yet: `y` undoes nothing.
    press(&mut app, KeyCode::Char('y'), t0);
    assert!(!dir.path().join("ws/src/calc.py").exists());
    // `l`: it and every later call (there are none): the plan is shown again for that.
    press(&mut app, KeyCode::Char('l'), t0);
    let Some(Overlay::Undo(undo)) = app.overlays.last() else {
        panic!("the undo window is open again");
    };
    assert!(undo.plan.and_later);
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    frame(&mut app, 100, 30);
    press(&mut app, KeyCode::Char('y'), later);
    assert!(app.overlays.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/src/calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
    let said: Vec<String> = app.entries.iter().map(|e| format!("{e:?}")).collect();
    assert!(
        said.iter()
            .any(|e| e.contains("undid c1") && e.contains("the model is told")),
        "{said:?}"
    );
    both_sizes("undo_done", &app);
}

#[test]
fn u_on_a_run_that_changed_nothing_says_so_in_the_conversation() {
    let (_dir, history) = removed_src();
    let t0 = Instant::now();
    let mut app = finished_run(t0, &history);
    run(&mut app, "c2", "$ ls", &[]);
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c2".into(),
        status: ToolStatus::Ok,
        exit_code: Some(0),
        lines: 0,
        error: None,
        log: None,
    });
    app.selected_run = 1;
    press(&mut app, KeyCode::Char('u'), t0);
    assert!(app.overlays.is_empty());
    let said: Vec<String> = app.entries.iter().map(|e| format!("{e:?}")).collect();
    assert!(
        said.iter().any(|e| e.contains("c2 changed nothing")),
        "{said:?}"
    );
}
