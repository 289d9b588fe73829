//! A reopened session (`airlock --resume`) shown again: the conversation, one line per tool call
//! with how it ended, and the runs' results as the model got them. Calls of an unfinished batch
//! that were never decided get their lines from the gate's events when the turn goes on; a call
//! that was running when the process stopped is shown as interrupted (it never runs again).

use super::{App, Entry, Run, RunStatus, ToolLine};
use crate::protocol::{RestoredCall, RestoredEntry, RestoredSession, Stream, ToolStatus};
use crate::ui::output::BoundedOutput;

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
                    self.entries.push(Entry::Tool {
                        call_id: call_id.clone(),
                        title: title.clone(),
                        state: ToolLine::Finished(ToolStatus::Cancelled, None),
                    });
                    self.entries.push(Entry::Notice(format!(
                        "{call_id} was running when airlock stopped: the model is told it was interrupted; it does not run again"
                    )));
                }
            }
        }
        self.resumed_turn = session.turn_goes_on;
    }

    fn restore_result(&mut self, call_id: &str, title: &str, result: RestoredCall, content: &str) {
        let state = match result {
            RestoredCall::Ok => ToolLine::Finished(ToolStatus::Ok, None),
            RestoredCall::Failed => ToolLine::Finished(ToolStatus::Failed, None),
            RestoredCall::Denied => {
                ToolLine::Denied(content.lines().next().unwrap_or("denied").to_string())
            }
        };
        self.entries.push(Entry::Tool {
            call_id: call_id.to_string(),
            title: title.to_string(),
            state: state.clone(),
        });
        let ToolLine::Finished(status, code) = state else {
            return;
        };
        let mut output = BoundedOutput::new();
        output.push(Stream::Stdout, content.as_bytes());
        output.finish();
        output.shrink_to_fit();
        self.runs.push(Run {
            call_id: call_id.to_string(),
            title: title.to_string(),
            status: RunStatus::Done(status, code),
            started: self.now,
            ended: Some(self.now),
            output,
            log: None,
            trimmed: false,
            earlier: true,
        });
        self.selected_run = self.runs.len() - 1;
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
                title: "$ cat a.py".into(),
                state: ToolLine::Finished(ToolStatus::Ok, None)
            }
        );
        assert_eq!(app.runs.len(), 1);
        assert_eq!(app.runs[0].output.lines()[0].0, "print(1)");
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
            Entry::Tool { call_id, state: ToolLine::Finished(ToolStatus::Cancelled, None), .. } if call_id == "c3"
        )));
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
