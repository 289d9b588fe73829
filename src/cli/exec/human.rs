//! `airlock exec --human`: each agent event as a line a person reads. Everything from a model,
//! a file or a tool goes through `visible`/`visible_line`, so a transcript cannot redraw the
//! terminal it is printed on.

use crate::protocol::{AgentEvent, ToolStatus, TurnOutcome};
use crate::visible::{visible, visible_line};

/// One event as `exec` prints it in JSON: the event's own fields, and `agent`, the agent it
/// belongs to (`main`, or a sub-agent's id; a sub-agent's start and end are its own, and name
/// it as `sub_agent` too).
pub fn event_json(event: &AgentEvent) -> serde_json::Value {
    let (agent, event) = match event {
        AgentEvent::Agent { agent, event } => (agent.as_str(), &**event),
        AgentEvent::AgentStarted { agent, .. } => (agent.id.as_str(), event),
        AgentEvent::AgentFinished { agent, .. } => (agent.as_str(), event),
        event => (crate::agent::MAIN, event),
    };
    let mut value = serde_json::to_value(event).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("agent".into(), agent.into());
    }
    value
}

/// One event as a person would want to read it, or nothing for events that add no news.
pub fn human_line(event: &AgentEvent) -> Option<String> {
    Some(match event {
        AgentEvent::Agent { agent, event } => {
            // A sub-agent's lines are its own: each starts with its id.
            let inner = human_line(event)?;
            let id = visible_line(agent);
            return Some(prefixed(&inner, &format!("[{id}] ")));
        }
        AgentEvent::AgentStarted {
            agent,
            mode,
            sandbox,
            ..
        } => format!(
            "\n⧉ {} started by {}: {} (mode {}{})",
            visible_line(&agent.id),
            visible_line(&agent.parent),
            visible_line(&agent.task),
            visible_line(mode),
            sandbox
                .as_ref()
                .map(|s| format!(", sandbox {}", visible_line(s)))
                .unwrap_or_default()
        ),
        AgentEvent::AgentFinished {
            agent,
            status,
            summary,
        } => format!(
            "\n⧉ {} {}: {}",
            visible_line(agent),
            status.as_str(),
            visible_line(summary)
        ),
        AgentEvent::TurnStarted { prompt, .. } => format!("\n> {}\n", visible(prompt)),
        AgentEvent::WorkspaceChanged { call_id, changes } => format!(
            "\n↶ {} {} (airlock undo can put it back)",
            visible_line(call_id),
            changes.words()
        ),
        AgentEvent::TextDelta { text } => return Some(visible(text)),
        AgentEvent::Restored { session } => {
            format!("\n(reopened: {} messages so far)", session.messages)
        }
        AgentEvent::BatchQueued { calls } => {
            // Worth a line only for several calls, some of which will ask.
            let asking: Vec<String> = calls
                .iter()
                .filter(|c| c.needs_decision)
                .map(|c| format!("{} {}", visible_line(&c.call_id), visible_line(&c.title)))
                .collect();
            if calls.len() < 2 || asking.is_empty() {
                return None;
            }
            format!(
                "\n≡ {} of {} calls will ask: {}",
                asking.len(),
                calls.len(),
                asking.join("; ")
            )
        }
        AgentEvent::ApprovalRequested { request } => format!(
            "\n? {}{} {} asks: {}",
            request
                .agent
                .as_ref()
                .map(|a| format!("[{}] ", visible_line(&a.id)))
                .unwrap_or_default(),
            visible_line(&request.call_id),
            visible_line(&request.tool),
            visible_line(&request.verdict.reason_lines().join("; "))
        ),
        AgentEvent::ApprovalSettled { call_id, by } => {
            format!(
                "\n✓ {} was answered {}",
                visible_line(call_id),
                visible_line(&by.to_string())
            )
        }
        AgentEvent::ToolDenied {
            call_id,
            tool,
            title,
            message,
            ..
        } => format!(
            "\n✗ {} {}: {}",
            visible_line(call_id),
            visible_line(if title.is_empty() { tool } else { title }),
            visible_line(message)
        ),
        AgentEvent::ToolStarted { call_id, title, .. } => {
            format!("\n▶ {} {}", visible_line(call_id), visible_line(title))
        }
        AgentEvent::ToolOutput {
            call_id,
            text,
            skipped,
            ..
        } => {
            let call_id = visible_line(call_id);
            let mut lines: Vec<String> = Vec::new();
            if *skipped > 0 {
                lines.push(format!(
                    "\n  {call_id} │ … {skipped} lines not shown (all of them are in the run's log) …"
                ));
            }
            lines.extend(
                text.lines()
                    .map(|l| format!("\n  {call_id} │ {}", visible_line(l))),
            );
            return Some(lines.concat());
        }
        AgentEvent::ToolFinished {
            call_id,
            status,
            exit_code,
            error,
            ..
        } => {
            let code = exit_code.map(|c| format!(", exit {c}")).unwrap_or_default();
            let error = error
                .as_ref()
                .map(|e| format!(": {}", visible_line(e)))
                .unwrap_or_default();
            let status = match status {
                ToolStatus::Ok => "done",
                ToolStatus::Failed => "failed",
                ToolStatus::Cancelled => "cancelled",
                ToolStatus::TimedOut => "timed out",
            };
            format!("\n■ {} {status}{code}{error}", visible_line(call_id))
        }
        AgentEvent::TurnFinished { outcome, .. } => format!("\n\n({})\n", turn_words(outcome)),
        AgentEvent::Error { message } => format!("\n! {}", visible_line(message)),
        AgentEvent::ShutdownComplete
        | AgentEvent::ToolChange { .. }
        | AgentEvent::Grants { .. }
        | AgentEvent::Audit { .. }
        | AgentEvent::Checkpoint { .. } => {
            return None;
        }
    })
}

/// `text` with `prefix` at the start of each of its lines (after their leading newlines).
pub fn prefixed(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len() + prefix.len());
    let mut at_start = true;
    for c in text.chars() {
        if at_start && c != '\n' {
            out.push_str(prefix);
            at_start = false;
        }
        out.push(c);
        if c == '\n' {
            at_start = true;
        }
    }
    out
}

/// A parked call as a person reads it: what waits, and the commands that answer it.
pub fn parked_lines(parked: &serde_json::Value) -> String {
    let text = |key: &str| visible_line(parked[key].as_str().unwrap_or("?"));
    let hours = parked["expires_in_ms"].as_u64().unwrap_or(0) / 3_600_000;
    // A sub-agent's call parks its whole tree: the line says whose call it is.
    let whose = match parked["agent"].as_str() {
        Some(agent) if agent != crate::protocol::MAIN_AGENT => {
            format!(
                " (sub-agent {}; the agents above it wait with it)",
                visible_line(agent)
            )
        }
        _ => String::new(),
    };
    format!(
        "\n‖ {} {}{whose} is parked: nothing of it ran, and the run waits for a decision.\n  \
         airlock approve {code}   (or: airlock deny {code}), then: airlock resume {run}\n  \
         (the code answers for {hours} h; it is stored only as a hash)\n",
        text("call_id"),
        text("tool"),
        code = text("code"),
        run = text("run"),
    )
}

/// How a turn ended, in words.
fn turn_words(outcome: &TurnOutcome) -> String {
    match outcome {
        TurnOutcome::Completed => "the turn is done".into(),
        TurnOutcome::Interrupted => "the turn was interrupted".into(),
        TurnOutcome::StepLimit => "the turn stopped at its step limit".into(),
        TurnOutcome::Failed { message } => format!("the turn failed: {}", visible_line(message)),
        TurnOutcome::Parked { .. } => "the turn is parked until its call is answered".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Stream;

    #[test]
    fn the_readable_transcript_shows_escape_sequences_instead_of_obeying_them() {
        let events = [
            AgentEvent::TextDelta {
                text: "fine\u{1b}[2J\u{1b}[Hcargo test\n".into(),
            },
            AgentEvent::ToolOutput {
                call_id: "c1\u{1b}[1A".into(),
                stream: Stream::Stdout,
                text: "ok\u{1b}]0;title\u{7}\nsecond \u{202e}line\n".into(),
                skipped: 0,
            },
            AgentEvent::Error {
                message: "bad\u{1b}[31m path".into(),
            },
            AgentEvent::BatchQueued {
                calls: ["c1", "c2\u{202e}"]
                    .into_iter()
                    .map(|id| crate::protocol::QueuedCall {
                        call_id: id.into(),
                        tool: "bash".into(),
                        title: "$ echo \u{1b}[2J\u{7}".into(),
                        needs_decision: true,
                        sandbox: None,
                    })
                    .collect(),
            },
        ];
        for event in &events {
            let line = human_line(event).unwrap();
            assert!(
                !line
                    .chars()
                    .any(|c| c == '\u{1b}' || c == '\u{7}' || c == '\u{202e}'),
                "{line:?}"
            );
        }
        let output = human_line(&events[1]).unwrap();
        assert_eq!(output.lines().filter(|l| !l.is_empty()).count(), 2);
    }

    #[test]
    fn a_finished_call_and_a_finished_turn_read_as_words_not_rust_names() {
        let finished = human_line(&AgentEvent::ToolFinished {
            call_id: "c3".into(),
            status: ToolStatus::TimedOut,
            exit_code: None,
            error: None,
            lines: 0,
            log: None,
        })
        .unwrap();
        assert_eq!(finished, "\n■ c3 timed out");
        let turn = human_line(&AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        })
        .unwrap();
        assert_eq!(turn, "\n\n(the turn is done)\n");
    }
}
