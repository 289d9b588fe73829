//! The inbox (F4) pinned at 100x30 and 60x20: the requests waiting elsewhere on this machine,
//! one open whole, and the status bar's count; answering one goes through the source, only once
//! it has been in sight for the arm delay.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::app::App;
use super::snapshots::{app, both_sizes, conversation, press};
use crate::protocol::{InboxEntry, InboxSource};

/// An inbox that answers from memory and remembers what it was asked.
#[derive(Default)]
struct Remembered {
    entries: Mutex<Vec<InboxEntry>>,
    answers: Mutex<Vec<(i64, bool)>>,
}

impl InboxSource for Remembered {
    fn list(&self) -> Result<Vec<InboxEntry>, String> {
        Ok(self.entries.lock().unwrap().clone())
    }

    fn answer(&self, id: i64, allow: bool, _reason: Option<String>) -> Result<String, String> {
        self.answers.lock().unwrap().push((id, allow));
        self.entries.lock().unwrap().retain(|e| e.id != id);
        Ok(format!(
            "{} {id}",
            if allow { "approved" } else { "denied" }
        ))
    }

    fn changes(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(std::future::pending())
    }
}

fn entries(now_ms: u64) -> Vec<InboxEntry> {
    vec![
        InboxEntry {
            id: 7,
            session: "exec-1796104174000-18445".into(),
            call_id: "c3".into(),
            tool: "bash".into(),
            agent: None,
            risk: "mutating".into(),
            reasons: vec!["ask: `make install` — runs project or toolchain code".into()],
            preview: vec!["$ make install".into()],
            created_ms: now_ms - 300_000,
            expires_ms: now_ms + 3_600_000,
            parked: true,
        },
        InboxEntry {
            id: 9,
            session: "cockpit-1796104999000-2211".into(),
            call_id: "a2-c1".into(),
            tool: "write_file".into(),
            agent: Some("a2 (fix the docs)".into()),
            risk: "mutating".into(),
            reasons: vec!["ask: writes README.md in the workspace".into()],
            preview: vec![
                "--- a/README.md".into(),
                "+++ b/README.md".into(),
                "@@ -1,2 +1,2 @@".into(),
                "-# Calc".into(),
                "+# Calc: a tiny calculator".into(),
                " Adds numbers.".into(),
            ],
            created_ms: now_ms - 40_000,
            expires_ms: now_ms + 600_000,
            parked: false,
        },
    ]
}

fn with_inbox(t0: Instant) -> (App, Arc<Remembered>) {
    let mut app = app(t0);
    conversation(&mut app);
    app.wall_ms = 1_796_105_000_000;
    app.screen = (100, 30);
    let source = Arc::new(Remembered::default());
    *source.entries.lock().unwrap() = entries(app.wall_ms);
    app.inbox_source = Some(source.clone());
    app.refresh_inbox();
    (app, source)
}

#[test]
fn the_inbox_lists_what_waits_elsewhere_and_the_status_bar_counts_it() {
    let t0 = Instant::now();
    let (mut app, _) = with_inbox(t0);
    both_sizes("inbox_status_bar", &app);
    press(&mut app, KeyCode::F(4), t0);
    both_sizes("inbox_list", &app);
}

#[test]
fn an_inbox_request_opens_whole_and_is_answered_only_once_armed() {
    let t0 = Instant::now();
    let (mut app, source) = with_inbox(t0);
    press(&mut app, KeyCode::F(4), t0);
    press(&mut app, KeyCode::Down, t0);
    press(&mut app, KeyCode::Enter, t0);
    app.now = t0;
    both_sizes("inbox_open_arming", &app);
    // Too soon: no answer, and the countdown starts again.
    press(
        &mut app,
        KeyCode::Char('y'),
        t0 + Duration::from_millis(100),
    );
    assert!(source.answers.lock().unwrap().is_empty());
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    both_sizes("inbox_open_armed", &app);
    press(&mut app, KeyCode::Char('y'), later);
    assert_eq!(*source.answers.lock().unwrap(), vec![(9, true)]);
    assert_eq!(app.inbox.len(), 1, "the answered one left the inbox");
    assert!(
        app.entries
            .iter()
            .any(|e| format!("{e:?}").contains("inbox: approved 9")),
        "{:?}",
        app.entries
    );
    // Back on the list; `n` there answers nothing.
    press(&mut app, KeyCode::Char('n'), later);
    assert_eq!(source.answers.lock().unwrap().len(), 1);
}

#[test]
fn a_long_inbox_request_is_answered_only_once_its_end_has_been_in_sight() {
    let t0 = Instant::now();
    let (mut app, source) = with_inbox(t0);
    app.screen = (60, 20);
    {
        let mut entries = source.entries.lock().unwrap();
        entries[0].preview = (1..=40).map(|i| format!("+line {i}")).collect();
    }
    app.refresh_inbox();
    press(&mut app, KeyCode::F(4), t0);
    press(&mut app, KeyCode::Enter, t0);
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    let screen = super::snapshots::draw(&app, 60, 20);
    assert!(screen.contains("more rows below"), "{screen}");
    press(&mut app, KeyCode::Char('y'), later);
    assert!(source.answers.lock().unwrap().is_empty(), "answered unread");
    for _ in 0..60 {
        press(&mut app, KeyCode::Char('j'), later);
    }
    let screen = super::snapshots::draw(&app, 60, 20);
    assert!(screen.contains("+line 40"), "{screen}");
    press(&mut app, KeyCode::Char('y'), later);
    assert_eq!(*source.answers.lock().unwrap(), vec![(7, true)]);
}
