use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::*;
use crate::protocol::ApprovalRequest;
use crate::protocol::Decision;
use crate::protocol::FrozenCall;
use crate::protocol::GrantScope;
use crate::protocol::Preview;
use crate::protocol::Risk;
use crate::protocol::Ruling;
use crate::protocol::Verdict;

pub fn request(call_id: &str, command: &str, grantable: bool) -> ApprovalRequest {
    let args = json!({ "command": command });
    ApprovalRequest {
        call_id: call_id.into(),
        session: "s".into(),
        tool: "bash".into(),
        title: crate::tools::registry::title("bash", &args),
        risk: Risk::Mutating,
        frozen: FrozenCall::freeze("bash", &args),
        verdict: Verdict {
            ruling: Ruling::Ask,
            risk: Risk::Mutating,
            reasons: Vec::new(),
            parts: Vec::new(),
            no_session_grant: None,
        },
        session_scopes: grantable.then(|| {
            vec![GrantScope::Command {
                prefix: command
                    .split_whitespace()
                    .take(2)
                    .map(str::to_string)
                    .collect(),
            }]
        }),
        no_session_grant: (!grantable).then(|| "dangerous".to_string()),
        directory_scope: None,
        preview: Some(Preview::Command {
            command: command.into(),
            cwd: "/work/demo".into(),
        }),
        deadline_ms: None,
        code: None,
        sandbox: None,
        amended: None,
        notice: None,
        hooks: Vec::new(),
        agent: None,
    }
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

struct Rig {
    app: App,
    t0: Instant,
}

impl Rig {
    fn new() -> Rig {
        let t0 = Instant::now();
        Rig {
            app: App::new(Status::default(), t0),
            t0,
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.t0 + Duration::from_millis(ms)
    }

    /// Draws a 100x30 frame and records what the modal showed, as the loop does after every
    /// change.
    fn frame(&mut self) {
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30))
            .expect("a test backend");
        let mut shown = None;
        terminal
            .draw(|f| shown = crate::ui::render::render(&self.app, f))
            .expect("a test backend draws");
        self.app.approval_drawn(shown);
    }

    fn ask(&mut self, req: ApprovalRequest) {
        self.app.on_agent_event(AgentEvent::ApprovalRequested {
            request: Box::new(req),
        });
        self.frame();
    }

    fn press(&mut self, k: KeyEvent, ms: u64) -> Vec<Op> {
        let now = self.at(ms);
        let ops = self.app.on_key(k, now);
        self.frame();
        ops
    }

    fn type_text(&mut self, text: &str, ms: u64) {
        for c in text.chars() {
            self.press(key(c), ms);
        }
    }
}

fn decided(ops: &[Op]) -> Vec<(String, Decision)> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Decide { call_id, decision } => Some((call_id.clone(), decision.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn y_allows_once_a_allows_for_the_session_and_n_denies() {
    for (k, expected) in [
        ('y', Decision::AllowOnce),
        ('a', Decision::AllowSession { directory: false }),
        ('n', Decision::Deny { reason: None }),
    ] {
        let mut rig = Rig::new();
        rig.ask(request("c1", "cargo test", true));
        let ops = rig.press(key(k), 1000);
        assert_eq!(decided(&ops), vec![("c1".to_string(), expected)], "{k}");
        assert!(
            rig.app.overlays.is_empty(),
            "the modal closes after the last decision"
        );
    }
}

#[test]
fn escape_denies() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    let ops = rig.press(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), 1000);
    assert_eq!(
        decided(&ops),
        vec![("c1".into(), Decision::Deny { reason: None })]
    );
}

#[test]
fn capital_n_denies_with_the_reason_typed_for_the_model() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo build", true));
    assert!(rig.press(key('N'), 1000).is_empty());
    rig.type_text("use cargo check", 1100);
    let ops = rig.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), 1200);
    assert_eq!(
        decided(&ops),
        vec![(
            "c1".into(),
            Decision::Deny {
                reason: Some("use cargo check".into())
            }
        )]
    );
}

#[test]
fn allow_for_session_is_ignored_where_the_gate_does_not_offer_it() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "rm -rf build", false));
    assert!(rig.press(key('a'), 1000).is_empty());
    assert_eq!(rig.app.pending_approvals(), 1);
}

#[test]
fn requests_queue_first_in_first_out_inside_one_modal() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    rig.ask(request("c2", "cargo build", true));
    rig.ask(request("c3", "make", true));
    assert_eq!(rig.app.overlays.len(), 1, "never a modal on a modal");
    let first = rig.press(key('y'), 1000);
    assert_eq!(decided(&first)[0].0, "c1");
    // The next request arms anew: a key right after the previous answer is not taken.
    assert!(rig.press(key('y'), 1100).is_empty());
    let second = rig.press(key('n'), 1600);
    assert_eq!(decided(&second)[0].0, "c2");
    let third = rig.press(key('y'), 2100);
    assert_eq!(decided(&third)[0].0, "c3");
    assert!(rig.app.overlays.is_empty());
}

#[test]
fn keys_before_the_arm_delay_are_not_answers_and_keep_it_unarmed() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    assert!(rig.press(key('y'), 100).is_empty());
    // Still typing: each early key pushes arming later.
    assert!(rig.press(key('y'), 450).is_empty());
    assert!(rig.press(key('y'), 800).is_empty());
    let ops = rig.press(key('y'), 1300);
    assert_eq!(decided(&ops), vec![("c1".into(), Decision::AllowOnce)]);
}

#[test]
fn keys_typed_into_the_prompt_never_answer_a_modal_that_pops_up_nor_reach_the_hidden_draft() {
    let mut rig = Rig::new();
    rig.type_text("hello ", 0);
    rig.ask(request("c1", "cargo test", true));
    // The person keeps typing "yes" without looking: none of it answers the modal, and none of
    // it goes into the draft the modal hides (it would be sent unseen with the next prompt).
    for (i, c) in "yes".chars().enumerate() {
        assert!(rig.press(key(c), 50 + 100 * i as u64).is_empty());
    }
    assert_eq!(rig.app.pending_approvals(), 1);
    assert_eq!(rig.app.draft(), "hello ");
    let Some(Overlay::Approval(modal)) = rig.app.overlays.last() else {
        panic!("the modal closed");
    };
    assert_eq!(modal.ignored, 3);
}

#[test]
fn ctrl_u_deletes_to_the_start_of_the_line_as_readline_does_not_undo() {
    let mut rig = Rig::new();
    rig.type_text("first line", 0);
    rig.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT), 0);
    rig.type_text("second half", 0);
    for _ in 0.." half".len() {
        rig.press(KeyEvent::new(KeyCode::Left, KeyModifiers::NONE), 0);
    }
    rig.press(ctrl('u'), 0);
    assert_eq!(rig.app.draft(), "first line\n half");
    // Undo would have brought back what was typed last; the cursor stays where the cut was.
    rig.press(ctrl('u'), 0);
    assert_eq!(rig.app.draft(), "first line half");
}

#[test]
fn ctrl_c_on_an_empty_idle_prompt_says_how_to_quit_and_a_second_one_within_two_seconds_quits() {
    let mut rig = Rig::new();
    assert!(rig.press(ctrl('c'), 0).is_empty());
    assert!(!rig.app.should_quit);
    assert!(rig.app.quit_armed());
    // Too late: it only arms again.
    assert!(rig.press(ctrl('c'), 2500).is_empty());
    assert!(!rig.app.should_quit);
    // Another key in between disarms it.
    rig.press(key('x'), 2600);
    rig.press(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE), 2700);
    assert!(rig.press(ctrl('c'), 2800).is_empty());
    assert_eq!(rig.press(ctrl('c'), 3500), vec![Op::Shutdown]);
    assert!(rig.app.should_quit);
}

#[test]
fn a_second_ctrl_c_while_a_tool_runs_asks_first_as_ctrl_d_does() {
    let mut rig = Rig::new();
    rig.app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "$ sleep 100".into(),
    });
    assert!(rig.press(ctrl('c'), 0).is_empty());
    assert!(rig.press(ctrl('c'), 500).is_empty());
    assert!(matches!(
        rig.app.overlays.last(),
        Some(Overlay::ConfirmQuit(_))
    ));
    assert!(!rig.app.should_quit);
}

#[test]
fn ctrl_c_on_a_draft_clears_it_and_does_not_arm_quitting() {
    let mut rig = Rig::new();
    rig.type_text("half a thought", 0);
    rig.press(ctrl('c'), 0);
    assert_eq!(rig.app.draft(), "");
    assert!(!rig.app.quit_armed());
}

#[test]
fn the_grant_list_is_asked_for_again_once_a_call_answered_for_the_session_starts() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    let ops = rig.press(key('a'), 1000);
    assert_eq!(
        decided(&ops),
        vec![("c1".into(), Decision::AllowSession { directory: false })]
    );
    // The gate stores the grant when it takes the answer, after this list was sent: the list
    // comes again when the call starts.
    let ops = rig.app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "$ cargo test".into(),
    });
    assert_eq!(ops, vec![Op::ListGrants]);
    // Another call's start asks for nothing.
    let ops = rig.app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c2".into(),
        tool: "bash".into(),
        title: "$ ls".into(),
    });
    assert!(ops.is_empty(), "{ops:?}");
    // Every turn's end does (grants expire).
    let ops = rig.app.on_agent_event(AgentEvent::TurnFinished {
        turn: 1,
        outcome: crate::protocol::TurnOutcome::Completed,
    });
    assert_eq!(ops, vec![Op::ListGrants]);
}

#[test]
fn ctrl_c_denies_the_current_and_queued_requests_and_interrupts() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    rig.ask(request("c2", "cargo build", true));
    let ops = rig.press(ctrl('c'), 10);
    let denied: Vec<String> = decided(&ops)
        .into_iter()
        .map(|(id, d)| {
            assert!(matches!(d, Decision::Deny { .. }));
            id
        })
        .collect();
    assert_eq!(denied, vec!["c1", "c2"]);
    assert_eq!(ops.last(), Some(&Op::Interrupt));
    assert!(rig.app.overlays.is_empty());
}

#[test]
fn focus_returns_to_the_prompt_with_the_draft_intact_after_the_last_decision() {
    let mut rig = Rig::new();
    rig.type_text("fix the bug", 0);
    rig.ask(request("c1", "cargo test", true));
    rig.press(key('y'), 1000);
    assert!(rig.app.overlays.is_empty());
    assert_eq!(rig.app.focus, Focus::Prompt);
    assert_eq!(rig.app.draft(), "fix the bug");
    rig.type_text("!", 1100);
    assert_eq!(rig.app.draft(), "fix the bug!");
}

#[test]
fn enter_sends_the_prompt_and_shift_enter_adds_a_line() {
    let mut rig = Rig::new();
    rig.type_text("one", 0);
    rig.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT), 0);
    rig.type_text("two", 0);
    let ops = rig.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), 0);
    assert_eq!(
        ops,
        vec![Op::Submit {
            prompt: "one\ntwo".into()
        }]
    );
    assert_eq!(rig.app.draft(), "");
}

#[test]
fn a_request_the_agent_settles_itself_leaves_the_queue() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    rig.ask(request("c2", "cargo build", true));
    rig.app.on_agent_event(AgentEvent::ToolDenied {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "$ cargo test".into(),
        source: crate::protocol::DecisionSource::Timeout,
        message: "denied: timed out".into(),
    });
    rig.frame();
    assert_eq!(rig.app.pending_approvals(), 1);
    let ops = rig.press(key('y'), 1000);
    assert_eq!(decided(&ops)[0].0, "c2");
}

#[test]
fn x_in_the_results_pane_cancels_the_selected_running_tool() {
    let mut rig = Rig::new();
    rig.app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "$ sleep 100".into(),
    });
    rig.press(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), 0);
    let ops = rig.press(key('x'), 0);
    assert_eq!(
        ops,
        vec![Op::CancelTool {
            call_id: "c1".into()
        }]
    );
}

#[test]
fn quitting_while_tools_run_asks_first() {
    let mut rig = Rig::new();
    rig.app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "$ sleep 100".into(),
    });
    assert!(rig.press(ctrl('d'), 0).is_empty());
    assert!(matches!(
        rig.app.overlays.last(),
        Some(Overlay::ConfirmQuit(_))
    ));
    assert_eq!(rig.press(key('y'), 0), vec![Op::Shutdown]);
    assert!(rig.app.should_quit);
}

fn finished_run(app: &mut App, id: &str, log: Option<&str>) {
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: id.into(),
        tool: "bash".into(),
        title: format!("$ seq {id}"),
    });
    app.on_agent_event(AgentEvent::ToolOutput {
        call_id: id.into(),
        stream: Stream::Stdout,
        text: "1\n2\n3\n".into(),
        skipped: 0,
    });
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: id.into(),
        status: ToolStatus::Ok,
        exit_code: Some(0),
        lines: 3,
        error: None,
        log: log.map(std::path::PathBuf::from),
    });
}

#[test]
fn only_the_newest_finished_runs_keep_their_output_in_memory_and_older_ones_point_at_their_log() {
    let mut app = App::new(Status::default(), Instant::now());
    let total = KEPT_RUNS + 5;
    for i in 0..total {
        finished_run(
            &mut app,
            &format!("c{i}"),
            Some(&format!("/state/runs/c{i}.log")),
        );
    }
    let trimmed: Vec<&str> = app
        .runs
        .iter()
        .filter(|r| r.trimmed)
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(trimmed, ["c0", "c1", "c2", "c3", "c4"]);
    assert!(app.runs[0].output.is_empty());
    assert_eq!(
        app.runs[0].log.as_deref(),
        Some(std::path::Path::new("/state/runs/c0.log"))
    );
    assert_eq!(
        app.runs[5].output.total_lines(),
        3,
        "newer runs keep theirs"
    );
}

#[test]
fn a_run_without_a_log_file_keeps_its_output_however_old() {
    let mut app = App::new(Status::default(), Instant::now());
    finished_run(&mut app, "c0", None);
    for i in 1..=KEPT_RUNS + 3 {
        finished_run(&mut app, &format!("c{i}"), Some("/state/x.log"));
    }
    assert!(!app.runs[0].trimmed);
    assert_eq!(app.runs[0].output.total_lines(), 3);
}

#[test]
fn a_running_tool_is_never_trimmed_and_does_not_count_as_finished() {
    let mut app = App::new(Status::default(), Instant::now());
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "long".into(),
        tool: "bash".into(),
        title: "$ sleep 600".into(),
    });
    for i in 0..KEPT_RUNS {
        finished_run(&mut app, &format!("c{i}"), Some("/state/x.log"));
    }
    assert!(app.runs.iter().all(|r| !r.trimmed));
}

#[test]
fn the_clock_face_changes_when_the_modal_arms_even_from_a_countdown_that_shows_zero() {
    let t0 = Instant::now();
    let mut app = App::new(Status::default(), t0);
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(request("c1", "rm -rf build", true)),
    });
    // 30 ms before arming the modal says "keys are live in 0.0s"; once armed it says nothing.
    let almost = app.clock_face(t0 + ARM_DELAY - Duration::from_millis(30), 0);
    let armed = app.clock_face(t0 + ARM_DELAY, 0);
    assert_ne!(almost, armed);
    assert!(app.next_clock_change(t0, 0).is_some());
    // Armed, the modal waits without waking the loop: nothing on it moves.
    assert_eq!(app.next_clock_change(t0 + ARM_DELAY, 0), None);
}

#[test]
fn a_waiting_modal_with_a_time_out_wakes_the_loop_once_a_second_when_its_count_changes() {
    let t0 = Instant::now();
    let mut app = App::new(Status::default(), t0);
    let mut asked = request("c1", "rm -rf build", true);
    asked.deadline_ms = Some(10_000);
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(asked),
    });
    let armed = t0 + ARM_DELAY;
    // 4.5 s left shows "4s" until 4.0 s are left: the next change is 501 ms away.
    let next = app.next_clock_change(armed, 5_500).unwrap();
    assert_eq!(next - armed, Duration::from_millis(501));
    assert_ne!(
        app.clock_face(armed, 5_500),
        app.clock_face(next, 5_500 + 501)
    );
    assert_eq!(app.next_clock_change(armed, 10_000), None);
}

mod approval;
mod key_table;
