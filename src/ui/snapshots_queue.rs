//! The modal's queue, pinned at 100x30 and 60x20: where a question stands among the calls of
//! its batch ("2 of 5"), the calls still to decide, and the rows the queue may never take from
//! what the current call must show.

use std::time::{Duration, Instant};

use super::app::App;
use super::snapshots::{app, ask, both_sizes, conversation, draw, frame, press, run};
use super::testing::{command_request, edit_request, forty_parts_then_curl, hidden_payload_edit};
use crate::protocol::AgentEvent;

#[test]
fn queue_two_of_three_while_still_arming() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    ask(&mut app, command_request("c1", "make test"));
    ask(&mut app, command_request("c2", "rm -rf build"));
    ask(&mut app, command_request("c3", "npm run lint"));
    frame(&mut app, 100, 30);
    let ops = app.on_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('y'),
            crossterm::event::KeyModifiers::NONE,
        ),
        t0 + Duration::from_secs(1),
    );
    assert_eq!(ops.len(), 1);
    app.now = t0 + Duration::from_millis(1100);
    both_sizes("queue_2_of_3", &app);
}

/// The model's step asks for these calls: (id, command, forecast to ask).
pub(super) fn batch(app: &mut App, calls: &[(&str, &str, bool)]) {
    app.on_agent_event(AgentEvent::BatchQueued {
        calls: calls
            .iter()
            .map(|(id, command, asks)| crate::protocol::QueuedCall {
                call_id: id.to_string(),
                tool: "bash".into(),
                title: format!("$ {command}"),
                needs_decision: *asks,
                sandbox: None,
            })
            .collect(),
    });
}

/// Six calls of which five ask (`ls src` is a read), answered up to (not including) `front`,
/// whose modal is then on screen, armed.
fn batch_of_five_at(front: &str) -> App {
    let calls = [
        ("c1", "make test", true),
        ("c2", "rm -rf build", true),
        ("c3", "npm run lint", true),
        ("c4", "ls src", false),
        ("c5", "git push origin main", true),
        ("c6", "cargo publish", true),
    ];
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    batch(&mut app, &calls);
    for (id, command, asks) in calls {
        if asks {
            ask(&mut app, command_request(id, command));
        }
        if id == front {
            break;
        }
        if asks {
            let later = app.now + Duration::from_secs(1);
            app.now = later;
            frame(&mut app, 100, 30);
            let ops = press(&mut app, crossterm::event::KeyCode::Char('y'), later);
            assert_eq!(ops.len(), 1, "{id}: {ops:?}");
        }
        run(&mut app, id, &format!("$ {command}"), &[]);
    }
    app.now += Duration::from_secs(1);
    app
}

#[test]
fn a_lone_question_has_no_count_and_no_queue() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    // The read next to it runs without asking: it is not a question.
    batch(
        &mut app,
        &[("c1", "ls src", false), ("c2", "rm -rf build", true)],
    );
    run(&mut app, "c1", "$ ls src", &[]);
    ask(&mut app, command_request("c2", "rm -rf build"));
    app.now = t0 + Duration::from_secs(2);
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("┌ approval ─"), "{screen}");
    assert!(!screen.contains("to decide after this one"), "{screen}");
    both_sizes("batch_1_of_1", &app);
}

#[test]
fn the_second_of_five_questions_counts_and_names_the_ones_after_it() {
    let app = batch_of_five_at("c2");
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("approval 2 of 5"), "{screen}");
    assert!(
        screen.contains("3 more of this batch to decide after this one"),
        "{screen}"
    );
    for title in [
        "$ npm run lint",
        "$ git push origin main",
        "$ cargo publish",
    ] {
        assert!(screen.contains(title), "{title}: {screen}");
    }
    assert!(!screen.contains("$ ls src"), "{screen}");
    both_sizes("batch_2_of_5", &app);
}

#[test]
fn a_call_refused_by_policy_shows_what_it_refused_with_hidden_characters_made_visible() {
    let mut app = app(Instant::now());
    conversation(&mut app);
    app.on_agent_event(AgentEvent::ToolDenied {
        call_id: "c7".into(),
        tool: "bash".into(),
        title: "$ echo ok\trm -rf ~/.cache/pip\u{200b}\nls".into(),
        source: crate::protocol::DecisionSource::Policy,
        message: "denied: destroys data outside the workspace: ~/.cache/pip".into(),
    });
    // Wide enough that the line is not wrapped: this is about what it says.
    let screen = draw(&app, 260, 12);
    assert!(
        screen.contains("✗ c7 $ echo ok⇥rm -rf ~/.cache/pip<U+200B>⏎ls — denied: destroys"),
        "{screen}"
    );
}

#[test]
fn the_queue_never_takes_a_row_the_current_calls_must_see_parts_need() {
    let requests = [
        command_request("c2", "rm -rf build"),
        command_request("c2", "cargo publish"),
        command_request("c2", &forty_parts_then_curl()),
        {
            let mut r = edit_request();
            r.call_id = "c2".into();
            r
        },
        {
            let mut r = hidden_payload_edit();
            r.call_id = "c2".into();
            r
        },
    ];
    let calls: Vec<(String, String)> = (1..=9)
        .map(|i| (format!("c{i}"), format!("touch f{i}")))
        .collect();
    let calls: Vec<(&str, &str, bool)> = calls
        .iter()
        .map(|(id, command)| (id.as_str(), command.as_str(), true))
        .collect();
    for request in requests {
        for (width, height) in [(100, 30), (60, 20), (60, 16), (40, 14)] {
            let unseen = |with_batch: bool| {
                let t0 = Instant::now();
                let mut app = app(t0);
                if with_batch {
                    batch(&mut app, &calls);
                    app.batch.asked("c1");
                    app.batch.settled("c1");
                }
                ask(&mut app, request.clone());
                app.now = t0 + Duration::from_secs(2);
                let screen = frame(&mut app, width, height);
                let unseen = match &app.overlays[0] {
                    super::app::Overlay::Approval(a) => a.unseen(),
                    other => panic!("{other:?}"),
                };
                (unseen, screen)
            };
            let (alone, _) = unseen(false);
            let (queued, screen) = unseen(true);
            assert!(screen.contains("approval 2 of 9"), "{screen}");
            assert_eq!(
                alone, queued,
                "{width}x{height}: the queue hid what the preview showed\n{screen}"
            );
        }
    }
}

#[test]
fn the_last_of_five_questions_says_so_and_lists_nothing() {
    let app = batch_of_five_at("c6");
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("approval 5 of 5"), "{screen}");
    assert!(!screen.contains("to decide after this one"), "{screen}");
    both_sizes("batch_5_of_5", &app);
}
