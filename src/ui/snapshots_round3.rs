//! The cockpit telling the truth on every line (issue 28), pinned at 100x30 and 60x20: help over
//! the modal, what `d` grants, status-bar hints that work, words instead of debug text, how
//! each earlier call of a reopened session ended, the quit question, `Ctrl-C` twice, narrow
//! screens and short call ids, the diff's one number column, a finished edit's diff, and what
//! the sandbox refused.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Overlay};
use super::snapshots::{app, ask, both_sizes, conversation, draw, frame, press, run};
use super::testing::{command_request, edit_request};
use crate::protocol::{
    AgentEvent, QueuedCall, RestoredCall, RestoredEntry, RestoredSession, Stream, ToolStatus,
    TurnOutcome,
};

/// The screen's last row (the status bar), without the test backend's quotes.
fn status_bar(screen: &str) -> String {
    screen
        .lines()
        .last()
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

#[test]
fn the_help_opens_over_the_modal_and_esc_leaves_the_modal_waiting() {
    for (width, height) in [(100, 30), (60, 20)] {
        let t0 = Instant::now();
        let mut app = app(t0);
        conversation(&mut app);
        ask(&mut app, edit_request());
        let later = t0 + Duration::from_secs(2);
        app.now = later;
        app.screen = (width, height);
        press(&mut app, KeyCode::F(1), later);
        let screen = draw(&app, width, height);
        assert!(screen.contains("every key, mouse too"), "{screen}");
        // It opens at the modal's own keys.
        assert!(screen.contains("│approval "), "{screen}");
        assert!(screen.contains("allow once (after all"), "{screen}");
        insta::assert_snapshot!(format!("help_over_the_modal_{width}x{height}"), screen);
        let ops = press(&mut app, KeyCode::Esc, later);
        assert!(ops.is_empty(), "{ops:?}");
        let screen = draw(&app, width, height);
        assert!(screen.contains("c5 wants to run edit_file"), "{screen}");
        assert!(screen.contains("keys are live in"), "{screen}");
    }
}

#[test]
fn d_names_the_tool_and_the_directory_it_grants() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    ask(&mut app, edit_request());
    app.now = t0 + Duration::from_secs(2);
    let screen = draw(&app, 100, 30);
    assert!(
        screen.contains("d allow edit_file on any file under src/ for this session"),
        "{screen}"
    );
    assert!(!screen.contains("anything in the workspace"), "{screen}");
    // The workspace itself: said as such, still for that tool only.
    let mut request = edit_request();
    request.call_id = "c6".into();
    request.directory_scope = Some(crate::protocol::GrantScope::Directory {
        path: super::testing::WS.into(),
    });
    let mut app = super::snapshots::app(t0);
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    let screen = draw(&app, 100, 30);
    assert!(
        screen.contains("d allow edit_file on any file in the workspace for this session"),
        "{screen}"
    );
}

#[test]
fn the_status_bar_offers_only_the_keys_the_modal_takes() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    // A command no session grant is offered for, with no code: no `a`, `d` or `p`.
    let mut request = command_request("c6", "cargo test");
    request.session_scopes = None;
    request.no_session_grant = Some("the policy offers none for this call".into());
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    for width in [200, 160, 120, 100, 80, 60] {
        let status = status_bar(&draw(&app, width, 30));
        assert!(status.trim_end().ends_with("? help"), "{width}: {status}");
        for absent in ["· a ", "· d ", "· p "] {
            assert!(!status.contains(absent), "{width}: {status}");
        }
    }
    let wide = status_bar(&draw(&app, 200, 30));
    assert!(
        wide.contains(
            "· y allow once · n deny · N deny with a reason · Y allow + note · e edit · Ctrl-C deny all · ? help"
        ),
        "{wide}"
    );
    both_sizes("hints_without_a_session_grant", &app);
}

#[test]
fn the_grant_count_follows_the_grants_the_agent_sends() {
    let t0 = Instant::now();
    let mut app = app(t0);
    assert!(status_bar(&draw(&app, 100, 30)).contains("grants 0"));
    app.on_agent_event(AgentEvent::Grants {
        grants: vec![crate::protocol::GrantSummary {
            id: 1,
            tool: "bash".into(),
            scope: "`cargo test *`".into(),
            expires_in_ms: None,
            uses: 0,
        }],
    });
    assert!(status_bar(&draw(&app, 100, 30)).contains("grants 1"));
}

#[test]
fn ctrl_c_on_an_empty_idle_prompt_says_a_second_one_quits() {
    let t0 = Instant::now();
    let mut app = app(t0);
    let ops = app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL), t0);
    assert!(ops.is_empty());
    let screen = draw(&app, 100, 30);
    assert!(
        status_bar(&screen).contains("Ctrl-C again to quit"),
        "{screen}"
    );
    both_sizes("ctrl_c_once", &app);
    // Two seconds later the hint is gone (the loop redraws when it goes).
    assert!(app.next_clock_change(t0, 0).is_some());
    app.now = t0 + Duration::from_millis(2100);
    assert!(!status_bar(&draw(&app, 100, 30)).contains("again to quit"));
}

#[test]
fn the_audit_trail_says_outcomes_in_words_with_short_ids() {
    let mut app = app(Instant::now());
    app.on_agent_event(AgentEvent::BatchQueued {
        calls: vec![QueuedCall {
            call_id: "call_ZyWW5zNsxFTvjZt_8kq2".into(),
            tool: "bash".into(),
            title: "$ cargo test".into(),
            needs_decision: true,
            sandbox: None,
        }],
    });
    press(&mut app, KeyCode::F(2), Instant::now());
    app.on_agent_event(AgentEvent::Audit {
        lines: vec![
            "#0    call_ZyWW5zNsxFTvjZt_8kq2 bash       asked: ask (ask: runs `cargo test`)".into(),
            "#1    call_ZyWW5zNsxFTvjZt_8kq2 bash       allow by user".into(),
            "#2    call_ZyWW5zNsxFTvjZt_8kq2            ran: ok {\"exit_code\":0}".into(),
            "#3    c4                  ran: ok {\"exit_code\":null}".into(),
            "#4    c5                  ran: timed_out {\"exit_code\":null}".into(),
        ],
    });
    let screen = draw(&app, 100, 30);
    for debug in ["{", "exit_code", "null", "call_ZyWW", "timed_out"] {
        assert!(!screen.contains(debug), "{debug}:\n{screen}");
    }
    assert!(screen.contains("ran: ok, exit 0"), "{screen}");
    assert!(screen.contains("c4                  ran: ok "), "{screen}");
    assert!(screen.contains("ran: timed out"), "{screen}");
    both_sizes("audit_in_words", &app);
}

/// A reopened session whose earlier calls ended every way there is.
fn reopened() -> App {
    let mut app = app(Instant::now());
    let settled = |id: &str, title: &str, result, content: &str| RestoredEntry::Settled {
        call_id: id.into(),
        title: title.into(),
        result,
        content: content.into(),
    };
    app.on_agent_event(AgentEvent::Restored {
        session: Box::new(RestoredSession {
            messages: 8,
            entries: vec![
                RestoredEntry::User {
                    text: "run the checks".into(),
                },
                settled("c1", "$ make", RestoredCall::Ok, "exit code 0\nbuilt\n"),
                settled(
                    "c2",
                    "$ make test",
                    RestoredCall::Failed,
                    "exit code 2\n1 test failed\n",
                ),
                settled(
                    "c3",
                    "$ sleep 300",
                    RestoredCall::Failed,
                    "cancelled: the process group was killed\n",
                ),
                settled(
                    "c4",
                    "$ cargo bench",
                    RestoredCall::Failed,
                    "timed out after 120s: the process group was killed\n",
                ),
                settled(
                    "c5",
                    "$ rm -rf ~/.cache",
                    RestoredCall::Denied,
                    "denied by the user",
                ),
                settled("c6", "read README.md", RestoredCall::Ok, "# readme\n"),
                RestoredEntry::Interrupted {
                    call_id: "c7".into(),
                    title: "$ npm run lint".into(),
                },
            ],
            turn_goes_on: false,
        }),
    });
    app
}

#[test]
fn a_reopened_session_says_how_each_earlier_call_ended() {
    let app = reopened();
    let screen = draw(&app, 100, 30);
    for ended in [
        "c1 $ make  earlier  exit 0",
        "c2 $ make test  earlier  exit 2",
        "c3 $ sleep 300  earlier  cancelled",
        "c4 $ cargo bench  earlier  timed out",
        "c6 read README.md  earlier  done",
        "c7 $ npm run lint  earlier  interrupted",
    ] {
        assert!(screen.contains(ended), "{ended}:\n{screen}");
    }
    assert!(
        screen.contains("c5 $ rm -rf ~/.cache — denied by the user"),
        "{screen}"
    );
    assert!(
        !screen.contains("earlier  done\n") || !screen.contains("c3 $ sleep 300  earlier  done")
    );
    both_sizes("reopened_endings", &app);
}

#[test]
fn the_quit_question_says_what_quitting_stops_in_words_that_match() {
    use super::overlay::confirm_quit::what_quitting_stops;
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    // A turn runs, no tool does: no "0 tool(s) running".
    assert_eq!(
        what_quitting_stops(&app),
        "The turn is still in progress (no tool is running). Quitting stops it; the conversation is kept (`airlock --resume`)."
    );
    ask(&mut app, command_request("c6", "cargo test"));
    assert!(
        what_quitting_stops(&app).contains("no tool is running), and 1 call waits for your answer"),
        "{}",
        what_quitting_stops(&app)
    );
    run(&mut app, "c7", "$ sleep 300", &[]);
    assert!(what_quitting_stops(&app).starts_with("1 tool is running"));
    run(&mut app, "c8", "$ sleep 300", &[]);
    assert!(what_quitting_stops(&app).starts_with("2 tools are running"));
    let mut idle = super::snapshots::app(t0);
    conversation(&mut idle);
    press(&mut idle, KeyCode::Char('x'), t0);
    idle.on_key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL), t0);
    let screen = draw(&idle, 100, 30);
    assert!(!screen.contains("tool(s)"), "{screen}");
    assert!(!screen.contains("0 tool"), "{screen}");
    both_sizes("quit_turn_only", &idle);
}

#[test]
fn at_80x24_the_first_modal_leaves_the_conversation_in_sight() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.on_agent_event(AgentEvent::TurnStarted {
        turn: 1,
        prompt: "The tests of this project fail. Find out why and fix it.".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta {
        text: "Found it: `add` subtracts instead of adding. Here is the fix.".into(),
    });
    let mut request = edit_request();
    request.code = Some("G7QN-JGUP".into());
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    let screen = frame(&mut app, 80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows
        .iter()
        .position(|r| r.contains("┌ approval"))
        .unwrap_or(0);
    let above = rows[..top].join("\n");
    assert!(top >= 6, "{screen}");
    assert!(above.contains("Here is the fix."), "{screen}");
    assert!(above.contains("edit calc.py — waiting"), "{screen}");
    insta::assert_snapshot!("first_modal_80x24", screen);
}

#[test]
fn provider_call_ids_are_shown_as_short_session_ids() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    let long = ["call_ZyWW5zNsxFTvjZt_8kq2", "toolu_01A09q90qw90lq917835lq9"];
    app.on_agent_event(AgentEvent::BatchQueued {
        calls: long
            .iter()
            .map(|id| QueuedCall {
                call_id: (*id).into(),
                tool: "bash".into(),
                title: "$ cargo test".into(),
                needs_decision: true,
                sandbox: None,
            })
            .collect(),
    });
    run(&mut app, long[0], "$ cargo build", &["Compiling airlock"]);
    ask(&mut app, command_request(long[1], "cargo test"));
    app.now = t0 + Duration::from_secs(2);
    let screen = draw(&app, 100, 30);
    assert!(!screen.contains("call_ZyWW"), "{screen}");
    assert!(!screen.contains("toolu_"), "{screen}");
    assert!(screen.contains("c1 $ cargo build"), "{screen}");
    assert!(screen.contains("c2 wants to run bash"), "{screen}");
    both_sizes("short_ids", &app);
    // Only the display changes: the answer names the provider's id.
    let later = t0 + Duration::from_secs(3);
    let ops = press(&mut app, KeyCode::Char('n'), later);
    assert!(
        matches!(ops.as_slice(), [crate::protocol::Op::Decide { call_id, .. }] if call_id == long[1]),
        "{ops:?}"
    );
}

#[test]
fn removed_lines_have_no_number_and_the_others_their_new_number() {
    let t0 = Instant::now();
    let mut app = app(t0);
    let old = "a\nb\nc\nd\n";
    let new = "a\nB1\nB2\nc\nd\n";
    let mut request = edit_request();
    request.preview = Some(crate::facts::diff::unified("f.txt", old, new));
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    let screen = draw(&app, 100, 30);
    for row in [
        "│    1  a",
        "│      -b",
        "│    2 +B1",
        "│    3 +B2",
        "│    4  c",
    ] {
        assert!(screen.contains(row), "{row}:\n{screen}");
    }
}

/// A file change approved in the modal, finished: it printed nothing.
fn finished_edit(app: &mut App, t0: Instant) {
    conversation(app);
    ask(app, edit_request());
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    frame(app, 100, 30);
    press(app, KeyCode::Char('y'), later);
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c5".into(),
        tool: "edit_file".into(),
        title: "edit calc.py".into(),
    });
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c5".into(),
        status: ToolStatus::Ok,
        exit_code: None,
        lines: 0,
        error: None,
        log: None,
    });
}

#[test]
fn an_edit_that_ran_without_asking_shows_on_its_run_the_diff_the_agent_sent() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c5".into(),
        tool: "edit_file".into(),
        title: "edit calc.py".into(),
    });
    let diff = crate::facts::diff::unified(
        "calc.py",
        "def add(a, b):\n    return a - b\n",
        "def add(a, b):\n    return a + b\n",
    );
    app.on_agent_event(AgentEvent::ToolChange {
        call_id: "c5".into(),
        diff: diff.unified_diff().unwrap().to_string(),
    });
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c5".into(),
        status: ToolStatus::Ok,
        exit_code: None,
        lines: 0,
        error: None,
        log: None,
    });
    press(&mut app, KeyCode::Tab, t0);
    press(&mut app, KeyCode::Enter, t0);
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("-    return a - b"), "{screen}");
    assert!(screen.contains("+    return a + b"), "{screen}");
    both_sizes("unasked_edit_on_its_run", &app);
}

#[test]
fn enter_on_a_finished_edit_shows_its_diff() {
    let t0 = Instant::now();
    let mut app = app(t0);
    finished_edit(&mut app, t0);
    press(&mut app, KeyCode::Tab, t0);
    press(&mut app, KeyCode::Enter, t0);
    assert!(app.expanded);
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("-    return a - b"), "{screen}");
    assert!(screen.contains("+    return a + b"), "{screen}");
    both_sizes("finished_edit_expanded", &app);
}

#[test]
fn a_sandbox_refusal_shows_on_its_run_with_the_profile() {
    let t0 = Instant::now();
    let mut app = app(t0);
    let note = "exit code 1\n[stderr] touch: cannot touch '/etc/x': Permission denied\n\
        [sandbox] this command ran in the sandbox `workspace-write` (writes only the workspace and temp, no network), which refused:\n  \
        - writing /etc/x: outside what `workspace-write` may write\n\
        If the task needs this, you may call bash again with \"sandbox\": \"network\" (adds the network) or \"off\" (no sandbox); that is a new request.\n";
    app.on_agent_event(AgentEvent::Restored {
        session: Box::new(RestoredSession {
            messages: 3,
            entries: vec![
                RestoredEntry::User {
                    text: "touch /etc/x".into(),
                },
                RestoredEntry::Settled {
                    call_id: "c1".into(),
                    title: "$ touch /etc/x".into(),
                    result: RestoredCall::Failed,
                    content: note.into(),
                },
            ],
            turn_goes_on: false,
        }),
    });
    // A live run asked for in the modal names the sandbox it ran in, and its note when the
    // output carries it.
    let args = serde_json::json!({"command": "curl https://example.com", "sandbox": "network"});
    let mut request = command_request("c2", "curl https://example.com");
    request.frozen = crate::protocol::FrozenCall::freeze("bash", &args);
    // As the gate sets it.
    request.sandbox = crate::sandbox::title_label("bash", &request.frozen, &request.verdict);
    ask(&mut app, request);
    let later = t0 + Duration::from_secs(2);
    app.now = later;
    frame(&mut app, 100, 30);
    app.overlays.clear();
    run(&mut app, "c2", "$ curl https://example.com", &["<html>"]);
    app.on_agent_event(AgentEvent::ToolOutput {
        call_id: "c2".into(),
        stream: Stream::Stdout,
        text: "[sandbox] this command ran in the sandbox `network` (…), which refused:\n  - reading /root/.ssh/id_rsa: a protected place\n".into(),
        skipped: 0,
    });
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c2".into(),
        status: ToolStatus::Ok,
        exit_code: Some(0),
        lines: 3,
        error: None,
        log: None,
    });
    app.on_agent_event(AgentEvent::TurnFinished {
        turn: 1,
        outcome: TurnOutcome::Completed,
    });
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("  exit 1 · sandbox refused 1│"), "{screen}");
    assert!(screen.contains("  exit 0 · sandbox refused 1│"), "{screen}");
    assert!(
        screen.contains("✗ c1 $ touch /etc/x — exit 1 · sandbox refused 1"),
        "{screen}"
    );
    // Where the header has room, it names the sandbox each run ran in.
    let wide = draw(&app, 200, 30);
    assert!(
        wide.contains(
            "c1 $ touch /etc/x  sandbox workspace-write  earlier  exit 1 · sandbox refused 1"
        ),
        "{wide}"
    );
    assert!(
        wide.contains("c2 $ curl https://example.com  sandbox network  "),
        "{wide}"
    );
    both_sizes("sandbox_refused", &app);
    assert!(matches!(app.overlays.last(), None | Some(Overlay::Help(_))));
}

#[test]
fn the_session_option_of_a_command_names_the_sandbox_the_grant_holds_in() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    let mut request = command_request("c2", "cargo test");
    request.sandbox = Some(crate::protocol::SandboxLabel {
        text: "sandbox network".into(),
        unconfined: false,
    });
    assert!(
        request.session_scopes.is_some(),
        "the policy offers a session grant"
    );
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("(sandbox network)"), "{screen}");
    both_sizes("session_option_names_its_sandbox", &app);
}
