//! A reopened session (`airlock --resume`) shown again: the conversation, one line per tool call
//! with how it ended, and the runs' results as the model got them. Calls of an unfinished batch
//! that were never decided get their lines from the gate's events when the turn goes on; a call
//! that was running when the process stopped is shown as interrupted (it never runs again).

use super::{App, Entry, Run, RunStatus, ToolLine};
use crate::protocol::{
    RestoredCall, RestoredEntry, RestoredSession, SandboxLabel, Stream, ToolStatus,
};

impl App {
    /// Shows a reopened session as it stood, and remembers that a turn under way goes on (its
    /// next `TurnStarted` is not a prompt of the person's).
    pub fn restore(&mut self, session: &RestoredSession) {
        for entry in &session.entries {
            match entry {
                RestoredEntry::User { text } => self.entries.push(Entry::User(text.clone())),
                RestoredEntry::Assistant { text } => {
                    self.entries.push(Entry::Assistant(text.clone()))
                }
                RestoredEntry::Settled {
                    call_id,
                    title,
                    result,
                    content,
                } => self.restore_result(call_id, title, *result, content),
                RestoredEntry::Interrupted { call_id, title } => {
                    let note = "it was running when airlock stopped: its result is unknown, the model is told it was interrupted, and it does not run again";
                    self.restore_run(call_id, title, RunStatus::Interrupted, note);
                    let shown = self.ids.note(call_id);
                    self.entries.push(Entry::Notice(format!(
                        "{shown} was running when airlock stopped: the model is told it was interrupted; it does not run again"
                    )));
                }
            }
        }
        self.resumed_turn = session.turn_goes_on;
    }

    fn restore_result(&mut self, call_id: &str, title: &str, result: RestoredCall, content: &str) {
        if result == RestoredCall::Denied {
            let why = content.lines().next().unwrap_or("denied").to_string();
            self.ensure_tool_line(call_id, title.to_string(), ToolLine::Denied(why));
            return;
        }
        self.restore_run(call_id, title, ended_as(result, content), content);
    }

    /// A settled or interrupted call of a reopened session: its line in the conversation, and
    /// its run in the results pane with what the model was told as its output.
    fn restore_run(&mut self, call_id: &str, title: &str, status: RunStatus, content: &str) {
        let refused = super::refused::find(content);
        let line = ToolLine::ended(status, refused.as_ref());
        self.ensure_tool_line(call_id, title.to_string(), line);
        let short_id = self.ids.note(call_id);
        let mut run = Run::new(call_id.to_string(), short_id, title.to_string(), self.now);
        run.status = status;
        run.ended = Some(self.now);
        run.earlier = true;
        run.output.push(Stream::Stdout, content.as_bytes());
        if !content.ends_with('\n') {
            run.output.push(Stream::Stdout, b"\n");
        }
        run.output.finish();
        run.output.shrink_to_fit();
        run.refused = refused;
        if let Some(note) = &run.refused {
            run.sandbox = Some(SandboxLabel {
                text: format!("sandbox {}", note.profile),
                unconfined: false,
            });
        }
        self.runs.push(run);
        self.selected_run = self.runs.len() - 1;
    }
}

/// How a settled call ended, from the first line of what the model was told (as the tools
/// write it: `exit code 2`, `cancelled: …`, `timed out after …`, `interrupted: …`).
fn ended_as(result: RestoredCall, content: &str) -> RunStatus {
    let first = content.lines().next().unwrap_or("");
    let fallback = match result {
        RestoredCall::Ok => ToolStatus::Ok,
        _ => ToolStatus::Failed,
    };
    if first.starts_with("interrupted") {
        RunStatus::Interrupted
    } else if first.starts_with("cancelled") {
        RunStatus::Done(ToolStatus::Cancelled, None)
    } else if first.starts_with("timed out") {
        RunStatus::Done(ToolStatus::TimedOut, None)
    } else if let Some(code) = first
        .strip_prefix("exit code ")
        .and_then(|c| c.trim().parse::<i32>().ok())
    {
        let status = if code == 0 {
            ToolStatus::Ok
        } else {
            ToolStatus::Failed
        };
        RunStatus::Done(status, Some(code))
    } else {
        RunStatus::Done(fallback, None)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::agent::Checkpoint;
    use crate::model::{CallResult, Message};
    use crate::protocol::ToolCall;
    use crate::ui::app::Status;

    fn call(id: &str, command: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            tool: "bash".into(),
            args: serde_json::json!({ "command": command }),
        }
    }

    fn tool(id: &str, result: CallResult, content: &str) -> Message {
        Message::Tool {
            call_id: id.into(),
            tool: "bash".into(),
            result,
            content: content.into(),
        }
    }

    fn checkpoint(idle: bool) -> Checkpoint {
        let calls = vec![call("c2", "make"), call("c3", "sleep 60"), call("c4", "ls")];
        Checkpoint {
            conversation: vec![
                Message::User {
                    text: "fix the test".into(),
                },
                Message::Assistant {
                    text: "Looking.".into(),
                    calls: vec![call("c1", "cat a.py")],
                },
                tool("c1", CallResult::Ok, "print(1)\n"),
                Message::Assistant {
                    text: "Now three things.".into(),
                    calls: calls.clone(),
                },
            ],
            results: vec![
                Some(tool("c2", CallResult::Denied, "denied: by you")),
                None,
                None,
            ],
            calls,
            parked: 2,
            model: serde_json::Value::Null,
            turn: 1,
            started: vec![1],
            idle,
            agents: Vec::new(),
            sub_agents: 0,
        }
    }

    #[test]
    fn a_reopened_session_shows_its_conversation_calls_and_results_again() {
        let mut app = App::new(Status::default(), Instant::now());
        app.restore(&checkpoint(false).restored_session());
        assert_eq!(app.entries[0], Entry::User("fix the test".into()));
        assert_eq!(app.entries[1], Entry::Assistant("Looking.".into()));
        assert_eq!(
            app.entries[2],
            Entry::Tool {
                call_id: "c1".into(),
                short_id: "c1".into(),
                title: "$ cat a.py".into(),
                state: ToolLine::Finished(ToolStatus::Ok, None)
            }
        );
        // c1 finished; c3 was running when airlock stopped (c2 was denied and never ran).
        assert_eq!(app.runs.len(), 2);
        assert_eq!(app.runs[0].output.lines()[0].0, "print(1)");
        assert_eq!(app.runs[1].status, RunStatus::Interrupted);
        assert!(matches!(
            &app.entries[4],
            Entry::Tool { call_id, state: ToolLine::Denied(why), .. } if call_id == "c2" && why == "denied: by you"
        ));
    }

    #[test]
    fn a_call_running_when_airlock_stopped_is_shown_interrupted_and_the_undecided_one_waits_for_the_gate()
     {
        let mut app = App::new(Status::default(), Instant::now());
        app.restore(&checkpoint(false).restored_session());
        assert!(app.entries.iter().any(|e| matches!(
            e,
            Entry::Tool { call_id, state: ToolLine::Interrupted, .. } if call_id == "c3"
        )));
        let run = app
            .runs
            .iter()
            .find(|r| r.call_id == "c3")
            .expect("a run for c3");
        assert_eq!(run.status, RunStatus::Interrupted);
        assert!(app.entries.iter().any(
            |e| matches!(e, Entry::Notice(n) if n.contains("c3 was running when airlock stopped"))
        ));
        assert!(
            !app.entries
                .iter()
                .any(|e| matches!(e, Entry::Tool { call_id, .. } if call_id == "c4")),
            "the gate decides c4 again; it has no line until then"
        );
        assert!(app.resumed_turn);
    }

    #[test]
    fn a_session_reopened_between_turns_shows_only_its_conversation() {
        let mut app = App::new(Status::default(), Instant::now());
        app.restore(&checkpoint(true).restored_session());
        assert!(!app.resumed_turn);
        assert!(
            !app.entries
                .iter()
                .any(|e| matches!(e, Entry::Tool { call_id, .. } if call_id == "c2"))
        );
    }
}
