//! The inbox: every request waiting on this machine, listed by `airlock inbox` (never with its
//! code) and answered from another cockpit through the code the state database keeps sealed,
//! with the real binary and the real state database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock::protocol::InboxSource;
use common::World;

const TOUCH: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "done", "expect": ["ok"]}
]}"#;

fn inbox(w: &World, except: Option<&str>) -> airlock::cli::inbox::StateInbox {
    airlock::cli::inbox::StateInbox::new(w.path("state/airlock.db"), except.map(str::to_string))
}

#[test]
fn airlock_inbox_lists_a_parked_run_with_what_it_would_run_and_never_its_code() {
    let w = World::new(TOUCH);
    let empty = w.airlock(&["inbox"], &[]);
    assert!(empty.status.success());
    assert!(String::from_utf8_lossy(&empty.stdout).contains("nothing waits"));
    let (run, code) = w.park(&[]);
    let out = w.airlock(&["inbox"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for shown in [
        "1 request waits",
        run.as_str(),
        "(parked run)",
        "main",
        "bash",
        "$ echo ran >> made.txt",
    ] {
        assert!(text.contains(shown), "{shown}:\n{text}");
    }
    assert!(!text.contains(&code), "the code was printed:\n{text}");
}

#[test]
fn an_answer_from_the_inbox_is_the_codes_answer_and_the_first_answer_wins() {
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    let entries = inbox(&w, None).list().unwrap();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(
        (entry.session.as_str(), entry.tool.as_str()),
        (run.as_str(), "bash")
    );
    assert!(entry.parked);
    assert_eq!(entry.preview, vec!["$ echo ran >> made.txt".to_string()]);
    // The session reading the inbox does not see its own requests (they are in its modal).
    assert!(inbox(&w, Some(&run)).list().unwrap().is_empty());
    let said = inbox(&w, None).answer(entry.id, true, None).unwrap();
    assert!(said.contains("approved"), "{said}");
    // Answered: it leaves the inbox, and neither the inbox nor the code answers it again.
    assert!(inbox(&w, None).list().unwrap().is_empty());
    let again = inbox(&w, None).answer(entry.id, false, None).unwrap_err();
    assert!(again.contains("answered meanwhile"), "{again}");
    assert!(!w.airlock(&["deny", &code], &[]).status.success());
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
}

#[test]
fn a_denial_from_the_inbox_reaches_the_model_and_nothing_runs() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
            {"say": "understood", "expect": ["denied"], "expect_seen": ["another airlock's inbox"]}
        ]}"#,
    );
    let (run, _code) = w.park(&[]);
    let id = inbox(&w, None).list().unwrap()[0].id;
    inbox(&w, None)
        .answer(
            id,
            false,
            Some("denied from another airlock's inbox".into()),
        )
        .unwrap();
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stdout)
    );
    assert!(!w.path("ws/made.txt").exists());
}

/// Reading the inbox must not write to the state directory: the cockpit re-reads it when that
/// directory changes, so a read that wrote would wake it again and again, idle or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_the_inbox_again_does_not_wake_its_own_watch() {
    let w = World::new(TOUCH);
    let _ = w.park(&[]);
    let inbox = inbox(&w, None);
    assert_eq!(inbox.list().unwrap().len(), 1);
    // What opening the database wrote, as the cockpit's first look does.
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), inbox.changes()).await;
    let changed = inbox.changes();
    for _ in 0..5 {
        assert_eq!(inbox.list().unwrap().len(), 1);
    }
    let woke = tokio::time::timeout(std::time::Duration::from_millis(500), changed).await;
    assert!(woke.is_err(), "reading the inbox woke its own watch");
    // A real change does wake it.
    let changed = inbox.changes();
    let _ = w.park(&[]);
    tokio::time::timeout(std::time::Duration::from_secs(10), changed)
        .await
        .expect("a new parked request wakes the inbox");
}

/// A sealed code copied from one request's row into another's (by a program with write access
/// to the state database) must not let the inbox answer the first request while showing the
/// second.
#[test]
fn a_code_copied_into_another_requests_row_answers_neither() {
    let w = World::new(TOUCH);
    let (_first, _) = w.park(&[]);
    let (_second, _) = w.park(&[]);
    let ids: Vec<i64> = inbox(&w, None)
        .list()
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids.len(), 2);
    let (a, b) = (ids[0], ids[1]);
    // The second row is given the first's sealed code (hashes are unique, so only the sealed
    // code can be copied): answering the second must not answer the first.
    w.sql(&format!(
        "UPDATE approvals SET sealed_code = (SELECT sealed_code FROM approvals WHERE id = {a}) \
         WHERE id = {b}"
    ));
    let refused = inbox(&w, None).answer(b, true, None).unwrap_err();
    assert!(refused.contains("nothing was decided"), "{refused}");
    // Both still wait, unanswered.
    let left: Vec<i64> = inbox(&w, None)
        .list()
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(left, vec![a, b]);
}
