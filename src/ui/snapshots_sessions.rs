//! A reopened session (`airlock --resume`), pinned at 100x30 and 60x20: the conversation and
//! results shown again, the call that was running marked interrupted, the turn going on.

use super::snapshots::{app, both_sizes};
use crate::agent::Checkpoint;
use crate::model::{CallResult, Message};
use crate::protocol::AgentEvent;
use crate::protocol::ToolCall;

fn bash(id: &str, command: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: "bash".into(),
        args: serde_json::json!({ "command": command }),
    }
}

#[test]
fn a_session_reopened_mid_turn() {
    let mut app = app(std::time::Instant::now());
    let calls = vec![bash("c2", "cargo build"), bash("c3", "cargo test")];
    app.on_agent_event(AgentEvent::Restored {
        session: Box::new(
            Checkpoint {
                conversation: vec![
                    Message::User {
                        text: "fix the failing test".into(),
                    },
                    Message::Assistant {
                        text: "I'll look at the code first.".into(),
                        calls: vec![bash("c1", "cat src/lib.rs")],
                    },
                    Message::Tool {
                        call_id: "c1".into(),
                        tool: "bash".into(),
                        result: CallResult::Ok,
                        content: "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n".into(),
                    },
                    Message::Assistant {
                        text: "Found it. Building, then testing.".into(),
                        calls: calls.clone(),
                    },
                ],
                calls,
                results: vec![None, None],
                parked: 1,
                model: serde_json::Value::Null,
                turn: 1,
                started: vec![0],
                idle: false,
                agents: Vec::new(),
                sub_agents: 0,
            }
            .restored_session(),
        ),
    });
    app.on_agent_event(AgentEvent::TurnStarted {
        turn: 1,
        prompt: "(resumed after the process running it stopped)".into(),
    });
    both_sizes("reopened_mid_turn", &app);
}
