//! Reviewing a proposal in the modal (issue 30), pinned at 100x30 and 60x20 and checked key by
//! key: hunks kept and dropped, the command editor, a yes with a note, and a proposal the person
//! changed coming back marked "modified by you".

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::snapshots::{app, ask, both_sizes, conversation, frame, press};
use super::testing::{command_request, edit_request};
use crate::protocol::{AmendedCall, Amendment, ApprovalRequest, Decision, Op};

/// A file change of three hunks (lines 2, 10 and 18 of twenty).
fn three_hunks() -> ApprovalRequest {
    let mut request = edit_request();
    let (old, new) = crate::facts::diff::hunks::three_hunk_change();
    request.preview = Some(crate::facts::diff::unified("notes.txt", &old, &new));
    request
}

/// The modal for `request`, armed, with every line of it drawn (so `y` answers).
fn armed(request: ApprovalRequest) -> (super::app::App, Instant) {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    ask(&mut app, request);
    let at = t0 + Duration::from_secs(2);
    app.now = at;
    app.screen = (100, 40);
    frame(&mut app, 100, 40);
    press(&mut app, KeyCode::End, at);
    frame(&mut app, 100, 40);
    (app, at)
}

fn typed(app: &mut super::app::App, text: &str, at: Instant) {
    for c in text.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), at);
    }
}

fn decision(ops: &[Op]) -> Decision {
    match ops.first() {
        Some(Op::Decide { decision, .. }) => decision.clone(),
        other => panic!("no decision: {other:?}"),
    }
}

#[test]
fn dropping_hunk_2_and_answering_y_allows_only_hunks_1_and_3() {
    let (mut app, at) = armed(three_hunks());
    press(&mut app, KeyCode::Char(']'), at);
    press(&mut app, KeyCode::Char(' '), at);
    frame(&mut app, 100, 40);
    let ops = press(&mut app, KeyCode::Char('y'), at);
    assert_eq!(
        decision(&ops),
        Decision::Amend {
            amendment: Amendment::Hunks { keep: vec![1, 3] },
            answer: Some(Box::new(Decision::AllowOnce)),
        }
    );
}

#[test]
fn with_every_hunk_kept_y_is_a_plain_yes_and_space_twice_keeps_a_hunk_again() {
    let (mut app, at) = armed(three_hunks());
    press(&mut app, KeyCode::Char(' '), at);
    press(&mut app, KeyCode::Char(' '), at);
    let ops = press(&mut app, KeyCode::Char('y'), at);
    assert_eq!(decision(&ops), Decision::AllowOnce);
}

#[test]
fn the_hunk_states_show_in_their_headers_and_the_summary_says_how_many_are_kept() {
    let (mut app, at) = armed(three_hunks());
    press(&mut app, KeyCode::Home, at);
    press(&mut app, KeyCode::Char(']'), at);
    press(&mut app, KeyCode::Char(' '), at);
    press(&mut app, KeyCode::Home, at);
    let screen = frame(&mut app, 100, 30);
    assert!(screen.contains("[hunk 2 of 3: DROPPED]"), "{screen}");
    assert!(screen.contains("[hunk 1 of 3: kept]"), "{screen}");
    assert!(screen.contains("2 of 3 hunks kept"), "{screen}");
    both_sizes("hunk_2_dropped", &app);
}

#[test]
fn e_opens_the_command_in_an_editor_and_enter_sends_it_to_be_judged_again() {
    let (mut app, at) = armed(command_request("c1", "cargo test"));
    press(&mut app, KeyCode::Char('e'), at);
    typed(&mut app, " --locked", at);
    both_sizes("command_editor", &app);
    let ops = press(&mut app, KeyCode::Enter, at);
    assert_eq!(
        decision(&ops),
        Decision::Amend {
            amendment: Amendment::Command {
                command: "cargo test --locked".into()
            },
            answer: None,
        }
    );
}

#[test]
fn esc_in_the_editor_drops_the_edit_and_the_proposal_still_waits() {
    let (mut app, at) = armed(command_request("c1", "cargo test"));
    press(&mut app, KeyCode::Char('e'), at);
    typed(&mut app, "x", at);
    assert!(press(&mut app, KeyCode::Esc, at).is_empty());
    let ops = press(&mut app, KeyCode::Char('y'), at);
    assert_eq!(decision(&ops), Decision::AllowOnce);
}

#[test]
fn capital_y_takes_a_note_and_enter_allows_with_it() {
    let (mut app, at) = armed(command_request("c1", "cargo test"));
    app.on_key(KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT), at);
    typed(&mut app, "use --locked next time", at);
    let screen = frame(&mut app, 100, 30);
    assert!(screen.contains("note for the model"), "{screen}");
    let ops = press(&mut app, KeyCode::Enter, at);
    assert_eq!(
        decision(&ops),
        Decision::AllowNoted {
            note: "use --locked next time".into()
        }
    );
}

#[test]
fn a_changed_proposal_comes_back_to_the_front_marked_modified_by_you_and_arms_again() {
    let (mut app, at) = armed(command_request("c1", "cargo test"));
    ask(&mut app, command_request("c2", "make"));
    press(&mut app, KeyCode::Char('e'), at);
    typed(&mut app, " --locked", at);
    press(&mut app, KeyCode::Enter, at);
    let mut again = command_request("c1", "cargo test --locked");
    again.amended = Some(AmendedCall {
        original_digest: "0123456789abcdef0123".into(),
        change: "command edited by the user".into(),
        told: String::new(),
        amendment: None,
    });
    ask(&mut app, again);
    let screen = frame(&mut app, 100, 30);
    assert!(screen.contains("MODIFIED BY YOU"), "{screen}");
    assert!(screen.contains("cargo test --locked"), "{screen}");
    // Armed again: a key right away is not an answer.
    assert!(press(&mut app, KeyCode::Char('y'), at).is_empty());
    both_sizes("modified_by_you", &app);
}

#[test]
fn a_refused_change_says_why_above_the_proposal() {
    let (mut app, at) = armed(command_request("c1", "cargo test"));
    press(&mut app, KeyCode::Char('e'), at);
    typed(&mut app, " ~/.ssh/id_rsa", at);
    press(&mut app, KeyCode::Enter, at);
    let mut again = command_request("c1", "cargo test");
    again.notice = Some(
        "your change was refused, the proposal is as it was: reads credential material".into(),
    );
    ask(&mut app, again);
    let screen = frame(&mut app, 100, 30);
    assert!(screen.contains("⚠ your change was refused"), "{screen}");
    both_sizes("change_refused", &app);
}

#[test]
fn a_changed_call_is_titled_as_it_runs_in_the_conversation_too() {
    let (mut app, at) = armed(command_request("c1", "echo proposed"));
    assert!(!press(&mut app, KeyCode::Char('y'), at).is_empty());
    app.on_agent_event(crate::protocol::AgentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "$ echo edited (changed by you)".into(),
    });
    let screen = frame(&mut app, 100, 30);
    assert!(
        screen.contains("c1 $ echo edited (changed by you)"),
        "{screen}"
    );
    assert!(!screen.contains("echo proposed"), "{screen}");
}

/// `e` on a file change: the job the loop opens in the person's editor.
fn editor_job_for(request: ApprovalRequest) -> (super::app::App, Instant, super::app::EditorJob) {
    let (mut app, at) = armed(request);
    assert!(press(&mut app, KeyCode::Char('e'), at).is_empty());
    let job = app
        .take_editor_job()
        .expect("a file change opens in the editor");
    (app, at, job)
}

#[test]
fn e_on_a_file_change_opens_its_text_in_the_editor_and_an_edit_is_judged_again() {
    let (mut app, _, job) = editor_job_for(edit_request());
    assert_eq!(job.call_id, "c5");
    assert_eq!(job.suffix, ".py");
    assert!(job.text.contains("a + b"), "{job:?}");
    let edited = job.text.replace("a + b", "b + a");
    let ops = app.editor_done(job, Ok(edited.clone()));
    assert_eq!(
        decision(&ops),
        Decision::Amend {
            amendment: Amendment::Content { content: edited },
            answer: None,
        }
    );
    assert_eq!(
        app.pending_approvals(),
        0,
        "it comes back once judged again"
    );
}

#[test]
fn an_editor_that_fails_or_changes_nothing_leaves_the_proposal_waiting_and_says_why() {
    let (mut app, at, job) = editor_job_for(edit_request());
    let ops = app.editor_done(
        job.clone(),
        Err("the editor `false` ended with exit status: 1; nothing changed".into()),
    );
    assert!(ops.is_empty());
    let screen = frame(&mut app, 100, 30);
    assert!(
        screen.contains("⚠ the editor `false` ended with exit status: 1"),
        "{screen}"
    );
    both_sizes("editor_failed", &app);
    let unchanged = job.text.clone();
    assert!(app.editor_done(job, Ok(unchanged)).is_empty());
    let screen = frame(&mut app, 100, 30);
    assert!(
        screen.contains("the editor left the change as it was"),
        "{screen}"
    );
    // Still answerable.
    press(&mut app, KeyCode::End, at);
    frame(&mut app, 100, 30);
    assert_eq!(
        decision(&press(&mut app, KeyCode::Char('y'), at)),
        Decision::AllowOnce
    );
}

/// An MCP call whose change is `diff`: a whole-file write, or an edit.
fn mcp_change(whole_file: bool) -> ApprovalRequest {
    let mut request = three_hunks();
    let diff = request.preview.take().unwrap();
    request.tool = "fs__write_file".into();
    request.preview = Some(crate::protocol::Preview::Mcp {
        server: "fs".into(),
        tool: "write_file".into(),
        annotations: Vec::new(),
        arguments: vec!["{".into(), "}".into()],
        definition_digest: "0123456789abcdef".into(),
        change: Some(Box::new(diff)),
        confinement: None,
        whole_file,
    });
    request
}

#[test]
fn an_mcp_whole_file_write_is_reviewed_hunk_by_hunk_and_an_mcp_edit_is_answered_whole() {
    let (mut app, at) = armed(mcp_change(true));
    press(&mut app, KeyCode::Char(' '), at);
    let screen = frame(&mut app, 100, 40);
    assert!(screen.contains("[hunk 1 of 3: DROPPED]"), "{screen}");
    assert_eq!(
        decision(&press(&mut app, KeyCode::Char('y'), at)),
        Decision::Amend {
            amendment: Amendment::Hunks { keep: vec![2, 3] },
            answer: Some(Box::new(Decision::AllowOnce)),
        }
    );
    let (mut app, at) = armed(mcp_change(false));
    press(&mut app, KeyCode::Char(' '), at);
    let screen = frame(&mut app, 100, 40);
    assert!(!screen.contains("DROPPED"), "{screen}");
    assert_eq!(
        decision(&press(&mut app, KeyCode::Char('y'), at)),
        Decision::AllowOnce
    );
}
