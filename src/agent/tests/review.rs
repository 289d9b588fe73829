//! Reviewing a proposal before it runs: keeping some hunks of a diff, editing a command,
//! approving with a word for the model. Each change is a new call, judged again; what runs is
//! exactly that call, and the model is told what it proposed next to what ran.

use super::*;
use crate::facts::diff::hunks::three_hunk_change;
use crate::protocol::{Amendment, ApprovalRequest};

/// An answer given the request it answers.
type Answer = Box<dyn FnMut(&ApprovalRequest) -> Decision + Send>;

/// Runs the turn, answering each request with the next of `answers`, and returns every request
/// asked.
async fn answering(rig: &mut Rig, mut answers: Vec<Answer>) -> Vec<ApprovalRequest> {
    rig.submit();
    answers.reverse();
    let mut asked = Vec::new();
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => {
                let mut answer = answers.pop().expect("an answer for every request");
                let decision = answer(&request);
                rig.op(Op::Decide {
                    call_id: request.call_id.clone(),
                    decision,
                });
                asked.push(*request);
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                return asked;
            }
            _ => {}
        }
    }
}

/// The command changed to `command`, to be judged again and asked about again.
fn edited(command: &str) -> Decision {
    Decision::Amend {
        amendment: Amendment::Command {
            command: command.into(),
        },
        answer: None,
    }
}

fn keep(hunks: &[usize]) -> Decision {
    Decision::Amend {
        amendment: Amendment::Hunks {
            keep: hunks.to_vec(),
        },
        answer: Some(Box::new(Decision::AllowOnce)),
    }
}

#[tokio::test]
async fn a_three_hunk_write_with_hunk_2_dropped_writes_exactly_hunks_1_and_3_and_the_model_hears_of_hunk_2()
 {
    let (old, new) = three_hunk_change();
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    std::fs::write(rig.workspace.join("f.txt"), &old).unwrap();
    let asked = answering(&mut rig, vec![Box::new(|_| keep(&[1, 3]))]).await;
    assert_eq!(asked.len(), 1, "keeping hunks answers the question");
    let written = std::fs::read_to_string(rig.workspace.join("f.txt")).unwrap();
    let expected = old
        .replace("line 2\n", "LINE 2\n")
        .replace("line 18\n", "LINE 18\n");
    assert_eq!(written, expected);
    let told = &rig.last_results()[0].2;
    assert!(
        told.contains("hunks 1 and 3 of 3 applied, hunk 2 dropped"),
        "{told}"
    );
    assert!(
        told.contains("-line 10\n+LINE 10\n"),
        "the dropped hunk's text: {told}"
    );
    assert!(
        told.contains("replaced f.txt"),
        "and the result itself: {told}"
    );
}

#[tokio::test]
async fn an_edit_file_call_can_be_reviewed_hunk_by_hunk_too() {
    let (old, new) = three_hunk_change();
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "edit_file", "args": {"path": "f.txt", "old": old, "new": new}}]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    std::fs::write(rig.workspace.join("f.txt"), &old).unwrap();
    answering(&mut rig, vec![Box::new(|_| keep(&[2]))]).await;
    let written = std::fs::read_to_string(rig.workspace.join("f.txt")).unwrap();
    assert_eq!(written, old.replace("line 10\n", "LINE 10\n"));
}

#[tokio::test]
async fn dropping_every_hunk_is_a_denial() {
    let (old, new) = three_hunk_change();
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
            {"say": "ok", "expect": ["denied"]}
        ]}),
        Approvals::Driver,
    );
    std::fs::write(rig.workspace.join("f.txt"), &old).unwrap();
    answering(&mut rig, vec![Box::new(|_| keep(&[]))]).await;
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("f.txt")).unwrap(),
        old
    );
    assert!(
        rig.last_results()[0]
            .2
            .contains("every hunk of the change was dropped")
    );
}

#[tokio::test]
async fn hunks_of_a_file_changed_since_the_diff_was_shown_are_refused_and_the_new_diff_is_shown() {
    let (old, new) = three_hunk_change();
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
            {"say": "ok", "expect": ["denied"]}
        ]}),
        Approvals::Driver,
    );
    let file = rig.workspace.join("f.txt");
    std::fs::write(&file, &old).unwrap();
    let changed = file.clone();
    let asked = answering(
        &mut rig,
        vec![
            Box::new(move |_| {
                std::fs::write(&changed, "line 1\nsomething else\n").unwrap();
                keep(&[1])
            }),
            Box::new(|_| Decision::Deny { reason: None }),
        ],
    )
    .await;
    assert_eq!(asked.len(), 2, "asked again after the refused change");
    let notice = asked[1].notice.as_deref().unwrap_or_default();
    assert!(
        notice.contains("the file changed since the diff was shown"),
        "{notice}"
    );
    let diff = asked[1].preview.as_ref().unwrap().unified_diff().unwrap();
    assert!(
        diff.contains("-something else"),
        "the diff against the file now: {diff}"
    );
    assert_eq!(asked[1].frozen.digest, asked[0].frozen.digest);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "line 1\nsomething else\n"
    );
}

#[tokio::test]
async fn an_edited_command_is_asked_about_again_marked_and_runs_as_edited() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("touch edited")),
            Box::new(|_| Decision::AllowOnce),
        ],
    )
    .await;
    assert_eq!(asked.len(), 2);
    let again = &asked[1];
    let amended = again.amended.as_ref().expect("marked as changed");
    assert_eq!(amended.original_digest, asked[0].frozen.digest);
    assert_ne!(
        again.frozen.digest, asked[0].frozen.digest,
        "a new call, a new digest"
    );
    assert!(again.frozen.canonical.contains("touch edited"));
    assert!(matches!(
        &again.preview,
        Some(crate::protocol::Preview::Command { command, .. }) if command == "touch edited"
    ));
    assert!(exists(&rig.workspace, "edited"));
    assert!(!exists(&rig.workspace, "proposed"));
    let told = &rig.last_results()[0].2;
    assert!(
        told.contains("You proposed the command:\ntouch proposed\n")
            && told.contains("touch edited"),
        "{told}"
    );
}

#[tokio::test]
async fn an_edit_that_turns_the_command_into_a_hard_deny_is_refused_and_the_proposal_stays() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("cat ~/.ssh/id_rsa")),
            Box::new(|_| Decision::AllowOnce),
        ],
    )
    .await;
    assert_eq!(asked.len(), 2);
    let notice = asked[1].notice.as_deref().unwrap_or_default();
    assert!(notice.starts_with("your change was refused"), "{notice}");
    assert!(asked[1].amended.is_none());
    assert_eq!(
        asked[1].frozen.digest, asked[0].frozen.digest,
        "the proposal as it was"
    );
    assert!(exists(&rig.workspace, "proposed"));
}

#[tokio::test]
async fn an_empty_edited_command_is_refused_with_a_clear_message() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"say": "ok", "expect": ["denied"]}
        ]}),
        Approvals::Driver,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("   ")),
            Box::new(|_| Decision::Deny { reason: None }),
        ],
    )
    .await;
    let notice = asked[1].notice.as_deref().unwrap_or_default();
    assert!(notice.contains("the edited command is empty"), "{notice}");
    assert!(!exists(&rig.workspace, "proposed"));
}

#[tokio::test]
async fn a_yes_with_a_word_reaches_the_model_with_the_result() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch noted")]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    answering(
        &mut rig,
        vec![Box::new(|_| Decision::AllowNoted {
            note: "yes, but use --locked next time".into(),
        })],
    )
    .await;
    assert!(exists(&rig.workspace, "noted"));
    let told = &rig.last_results()[0].2;
    assert!(
        told.contains("a note for you: yes, but use --locked next time"),
        "{told}"
    );
}

#[tokio::test]
async fn a_code_for_the_original_answers_nothing_once_the_call_was_changed() {
    let mut rig = rig_with_remote(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"say": "ok", "expect": ["denied"]}
        ]}),
        Approvals::Driver,
        true,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("touch edited")),
            Box::new(|_| Decision::Deny { reason: None }),
        ],
    )
    .await;
    let (first, second) = (
        asked[0].code.clone().unwrap(),
        asked[1].code.clone().unwrap(),
    );
    assert_ne!(
        first, second,
        "the changed call is bound to a code of its own"
    );
    let store = crate::store::db::Store::open(&rig.dir.path().join("state/airlock.db")).unwrap();
    assert!(
        store
            .decide(
                &first,
                r#"{"decision":"allow_once"}"#,
                crate::clock::now_ms()
            )
            .is_err(),
        "an answer for the original is refused once it was changed"
    );
    assert!(!exists(&rig.workspace, "proposed") && !exists(&rig.workspace, "edited"));
}

#[tokio::test]
async fn the_audit_keeps_both_digests_what_was_changed_and_who_changed_it() {
    let dir = tempfile::tempdir().unwrap();
    let audit =
        Arc::new(crate::approval::audit::AuditLog::open(&dir.path().join("audit"), "t").unwrap());
    let log = audit.path().to_path_buf();
    let mut rig = rig_with(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
        Extras {
            audit: Some(audit.clone()),
            ..Extras::default()
        },
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("touch edited")),
            // On record before the person is asked again.
            Box::new(move |_| {
                let kept = crate::approval::audit::read_records(&log).unwrap();
                assert!(kept.iter().any(|r| r["kind"] == "amendment"), "{kept:?}");
                Decision::AllowOnce
            }),
        ],
    )
    .await;
    let records = crate::approval::audit::read_records(audit.path()).unwrap();
    let amendment = records
        .iter()
        .find(|r| r["kind"] == "amendment")
        .expect("an amendment record");
    let body = &amendment["body"];
    assert_eq!(body["original_digest"], asked[0].frozen.digest.as_str());
    assert_eq!(body["digest"], asked[1].frozen.digest.as_str());
    assert_eq!(body["change"], "command edited by the user");
    assert_eq!(body["by"], "user");
    let allowed = records
        .iter()
        .find(|r| r["kind"] == "decision" && r["body"]["decision"] == "allow")
        .expect("the decision");
    assert_eq!(allowed["body"]["digest"], asked[1].frozen.digest.as_str());
    assert_eq!(
        allowed["body"]["detail"]["amended"]["original_digest"],
        asked[0].frozen.digest.as_str()
    );
    let line = crate::approval::audit::summary_line(amendment).unwrap();
    assert!(
        line.contains("changed by user before approving: command edited by the user"),
        "{line}"
    );
}

#[tokio::test]
async fn a_code_answer_with_kept_hunks_from_another_terminal_writes_only_those() {
    let (old, new) = three_hunk_change();
    let mut rig = rig_with_remote(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
            {"say": "ok", "expect": ["ok"], "expect_seen": ["hunk 2 dropped"]}
        ]}),
        Approvals::Driver,
        true,
    );
    std::fs::write(rig.workspace.join("f.txt"), &old).unwrap();
    let db = rig.dir.path().join("state/airlock.db");
    rig.submit();
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => {
                let code = request.code.clone().expect("a code");
                crate::store::db::Store::open(&db)
                    .unwrap()
                    .decide(
                        &code,
                        r#"{"decision":"allow_once","amend":{"kind":"hunks","keep":[1,3]}}"#,
                        crate::clock::now_ms(),
                    )
                    .unwrap();
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("f.txt")).unwrap(),
        old.replace("line 2\n", "LINE 2\n")
            .replace("line 18\n", "LINE 18\n")
    );
}

#[tokio::test]
async fn a_write_with_hunks_dropped_is_shown_on_its_run_as_it_is_written() {
    let (old, new) = three_hunk_change();
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
            {"say": "ok"}
        ]}),
        Approvals::Driver,
    );
    std::fs::write(rig.workspace.join("f.txt"), &old).unwrap();
    rig.submit();
    let mut change = None;
    loop {
        match rig.next().await {
            AgentEvent::ApprovalRequested { request } => rig.op(Op::Decide {
                call_id: request.call_id.clone(),
                decision: keep(&[2]),
            }),
            AgentEvent::ToolChange { diff, .. } => change = Some(diff),
            AgentEvent::TurnFinished { .. } => break,
            _ => {}
        }
    }
    let change = change.expect("the change as written");
    assert!(change.contains("+LINE 10"), "{change}");
    assert!(
        !change.contains("+LINE 2\n") && !change.contains("+LINE 18"),
        "{change}"
    );
}

#[tokio::test]
async fn a_write_edited_in_the_editor_writes_the_persons_text_after_it_is_judged_again() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": "theirs\n"}}]},
            {"say": "ok", "expect": ["ok"], "expect_seen": ["the file was written with their version"]}
        ]}),
        Approvals::Driver,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| Decision::Amend {
                amendment: Amendment::Content {
                    content: "mine\n".into(),
                },
                answer: None,
            }),
            Box::new(|_| Decision::AllowOnce),
        ],
    )
    .await;
    let diff = asked[1].preview.as_ref().unwrap().unified_diff().unwrap();
    assert!(diff.contains("+mine"), "the new diff is shown: {diff}");
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("f.txt")).unwrap(),
        "mine\n"
    );
}

#[tokio::test]
async fn an_edit_files_replacement_edited_in_the_editor_replaces_the_same_text() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "edit_file", "args": {"path": "notes.txt", "old": "hello", "new": "goodbye"}}]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    answering(
        &mut rig,
        vec![
            Box::new(|_| Decision::Amend {
                amendment: Amendment::Content {
                    content: "welcome".into(),
                },
                answer: None,
            }),
            Box::new(|_| Decision::AllowOnce),
        ],
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(rig.workspace.join("notes.txt")).unwrap(),
        "welcome\n"
    );
}

#[tokio::test]
async fn an_edited_command_that_no_longer_parses_is_refused_and_the_proposal_stays() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"say": "ok", "expect": ["ok"]}
        ]}),
        Approvals::Driver,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("echo \"unterminated")),
            Box::new(|_| Decision::AllowOnce),
        ],
    )
    .await;
    let notice = asked[1].notice.as_deref().unwrap_or_default();
    assert!(notice.contains("cannot be parsed"), "{notice}");
    assert_eq!(asked[1].frozen.digest, asked[0].frozen.digest);
    assert!(exists(&rig.workspace, "proposed"));
}

#[tokio::test]
async fn a_session_grant_given_with_an_edited_command_covers_the_edited_command_not_the_proposed_one()
 {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("touch proposed")]},
            {"calls": [bash("touch edited"), bash("touch proposed")]},
            {"say": "ok", "expect": ["ok", "denied"]}
        ]}),
        Approvals::Driver,
    );
    let asked = answering(
        &mut rig,
        vec![
            Box::new(|_| edited("touch edited")),
            Box::new(|_| Decision::AllowSession { directory: false }),
            // Only `touch proposed` asks in the second step: the grant covers `touch edited`.
            Box::new(|request| {
                assert!(
                    request.frozen.canonical.contains("touch proposed"),
                    "{request:?}"
                );
                Decision::Deny { reason: None }
            }),
        ],
    )
    .await;
    assert_eq!(asked.len(), 3, "{asked:#?}");
    assert!(exists(&rig.workspace, "edited"));
    assert!(!exists(&rig.workspace, "proposed"));
}
