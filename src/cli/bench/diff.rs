//! `bench-cockpit diff`: the diff of a `write_file` and its approval modal's frame, timed
//! in-process (S4 without cargo).

use std::time::Instant;

use anyhow::{Context, Result, bail};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use super::BenchArgs;
use super::measure::{median_min, millis};
use crate::protocol::{AgentEvent, ApprovalRequest, FrozenCall, Risk, Ruling, Verdict};
use crate::ui::app::{App, Status};

/// The approval request the gate makes for `write_file` of `new` over `old` (the file
/// `big.txt`): its preview is the diff. benches/cockpit.rs times the same request.
pub fn write_request(old: &str, new: &str) -> ApprovalRequest {
    let args = json!({"path": "big.txt", "content": new});
    ApprovalRequest {
        call_id: "c1".into(),
        session: "bench".into(),
        tool: "write_file".into(),
        title: crate::tools::registry::title("write_file", &args),
        risk: Risk::Mutating,
        frozen: FrozenCall::freeze("write_file", &args),
        verdict: Verdict {
            ruling: Ruling::Ask,
            risk: Risk::Mutating,
            reasons: Vec::new(),
            parts: Vec::new(),
            no_session_grant: None,
        },
        session_scopes: None,
        no_session_grant: None,
        directory_scope: None,
        preview: Some(crate::facts::diff::unified("big.txt", old, new)),
        deadline_ms: None,
        code: None,
        sandbox: None,
        amended: None,
        notice: None,
        hooks: Vec::new(),
        agent: None,
    }
}

/// `diff`: the diff alone, and the request (with its diff) taken in by a fresh cockpit state
/// and drawn as the approval modal, each `--repeat` times, in-process; the files are read
/// once, before. A test backend of `--width` x `--height`, as benches/cockpit.rs draws.
pub(super) fn diff_and_modal_frame(args: &BenchArgs) -> Result<Value> {
    let (Some(old), Some(new)) = (&args.old, &args.new) else {
        bail!("bench-cockpit diff needs --old FILE and --new FILE");
    };
    let read = |path: &std::path::Path| {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let (old, new) = (read(old)?, read(new)?);
    let mut terminal = Terminal::new(TestBackend::new(args.width, args.height))?;
    let (mut diff, mut whole, mut toggle) = (Vec::new(), Vec::new(), Vec::new());
    let mut hunks = (0, 0);
    let (mut added, mut removed, mut approximate, mut modal) = (0, 0, false, false);
    for _ in 0..args.repeat.max(1) {
        let t = Instant::now();
        let preview = std::hint::black_box(crate::facts::diff::unified("big.txt", &old, &new));
        diff.push(millis(t.elapsed()));
        if let crate::protocol::Preview::Diff {
            added: a,
            removed: r,
            approximate: x,
            ..
        } = &preview
        {
            (added, removed, approximate) = (*a, *r, *x);
        }
        drop(preview);
        let t = Instant::now();
        {
            let request = write_request(&old, &new);
            let mut app = App::new(Status::default(), Instant::now());
            app.on_agent_event(AgentEvent::ApprovalRequested {
                request: Box::new(request),
            });
            terminal.draw(|frame| {
                crate::ui::render::render(&app, frame);
            })?;
            modal = app.pending_approvals() == 1;
            whole.push(millis(t.elapsed()));
            // Reviewing it: once the keys are live, the next hunk and Space (drop it), each
            // key and the frame that shows it timed together.
            let armed = Instant::now() + std::time::Duration::from_secs(1);
            for key in [']', ' '] {
                let t = Instant::now();
                let event = crossterm::event::KeyEvent::new(
                    crossterm::event::KeyCode::Char(key),
                    crossterm::event::KeyModifiers::NONE,
                );
                app.on_key(event, armed);
                terminal.draw(|frame| {
                    crate::ui::render::render(&app, frame);
                })?;
                if key == ' ' {
                    toggle.push(millis(t.elapsed()));
                }
            }
            hunks = app.approval_hunks();
        }
    }
    Ok(json!({
        "diff_ms": median_min(diff),
        "diff_and_modal_frame_ms": median_min(whole),
        "old_lines": old.lines().count(),
        "new_lines": new.lines().count(),
        "added": added,
        "removed": removed,
        "approximate": approximate,
        "modal_drawn": modal,
        "hunks": hunks.0,
        "hunks_kept_after_the_toggle": hunks.1,
        "hunk_toggle_frame_ms": median_min(toggle),
    }))
}
