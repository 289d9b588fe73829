//! `agent`: starts a sub-agent, another agent with its own conversation and its own turn loop,
//! working on one task concurrently with the agent that called it. Its calls pass the same gate
//! (rules, session grants, the one queue of requests) under a mode and sandbox no wider than its
//! caller's; its final answer is this call's result.
//!
//! The tool declares the call and reads its arguments; the agent loop runs the sub-agent
//! (through [`SubAgents`], which `agent` implements: `tools` never imports `agent`).

use std::borrow::Cow;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::approval::policy::{AGENT_TOOL, Mode};
use crate::output::{OutputSink, ToolError};
use crate::protocol::Risk;
use crate::sandbox::Profile;
use crate::tools::tool::{ArgText, Tool, ToolFuture, ToolRun, object_schema};

/// The longest task line kept (characters); the rest is cut with `…`.
pub const TASK_CHARS: usize = 80;

pub struct SpawnAgent;

/// A sub-agent to start, as its call asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawn {
    /// One line: what it is for, as the cockpit names it.
    pub task: String,
    /// What it is asked, whole: it sees nothing else of its caller's conversation.
    pub prompt: String,
    /// A narrower mode than its caller's, if asked.
    pub mode: Option<Mode>,
    /// A narrower sandbox profile than its caller's, if asked.
    pub sandbox: Option<Profile>,
}

/// Runs sub-agents: the agent loop, for the call of `agent` it approved (`call_id`).
pub trait SubAgents: Send + Sync {
    fn run<'a>(
        &'a self,
        spawn: Spawn,
        call_id: &'a str,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> ToolFuture<'a>;
}

impl Spawn {
    /// Reads a call's arguments; `Err` says which one is wrong and how.
    pub fn from_args(args: &Value) -> Result<Spawn, String> {
        let text = |key: &str| -> Result<String, String> {
            match args.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
                Some(Value::String(_)) | None => {
                    Err(format!("`{key}` is required and must not be empty"))
                }
                Some(other) => Err(format!("`{key}` must be a string, got {other}")),
            }
        };
        let task = one_line(&text("task")?);
        let prompt = text("prompt")?;
        let mode = match args.get("mode") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Mode::parse(s).ok_or_else(|| {
                format!("`mode` must be one of default, auto-edit, read-only, got {s:?}")
            })?),
            Some(other) => return Err(format!("`mode` must be a string, got {other}")),
        };
        let sandbox = crate::sandbox::profile_arg(args)?;
        Ok(Spawn {
            task,
            prompt,
            mode,
            sandbox,
        })
    }
}

/// The first line of `text`, trimmed and cut to [`TASK_CHARS`].
pub fn one_line(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    match line.char_indices().nth(TASK_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

impl Tool for SpawnAgent {
    fn name(&self) -> &str {
        AGENT_TOOL
    }

    fn description(&self) -> Cow<'_, str> {
        "Start a sub-agent: another agent with its own conversation that works on one task \
         while you go on. It sees only the prompt you give it. Its tool calls pass the same \
         approval gate as yours. Its final answer comes back as this call's result. Several \
         `agent` calls in one answer run at the same time. A sub-agent may be given a narrower \
         `mode` or `sandbox` than yours, never a wider one."
            .into()
    }

    fn schema(&self) -> Value {
        object_schema(
            &[
                (
                    "task",
                    json!({"type": "string", "description": "a short title of its job, one line"}),
                ),
                (
                    "prompt",
                    json!({"type": "string", "description": "everything it needs to know: it sees nothing of this conversation"}),
                ),
                (
                    "mode",
                    json!({"type": "string", "enum": ["default", "auto-edit", "read-only"], "description": "a narrower approval mode than yours (optional)"}),
                ),
                (
                    "sandbox",
                    json!({"type": "string", "enum": ["read-only", "workspace-write", "network", "off"], "description": "a narrower sandbox for its commands than yours (optional)"}),
                ),
            ],
            &["task", "prompt"],
        )
    }

    /// Starting one does nothing by itself: each of its calls is judged on its own.
    fn risk(&self) -> Risk {
        Risk::Safe
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["task"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        format!("agent: {}", one_line(args.get("task")))
    }

    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move {
            let spawn = Spawn::from_args(&run.args).map_err(ToolError::InvalidArguments)?;
            let Some(agents) = run.agents else {
                return Err(ToolError::Failed(
                    "a sub-agent can only be started from an agent's turn; nothing was started"
                        .into(),
                ));
            };
            agents
                .run(spawn, run.approved.call_id(), run.cancel, run.sink)
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawn_reads_its_task_prompt_mode_and_sandbox() {
        let spawn = Spawn::from_args(&json!({
            "task": "  run the tests\nand more", "prompt": "cargo test", "mode": "read-only",
            "sandbox": "read-only"
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spawn.task, "run the tests");
        assert_eq!(spawn.mode, Some(Mode::ReadOnly));
        assert_eq!(spawn.sandbox, Some(Profile::ReadOnly));
    }

    #[test]
    fn a_spawn_without_a_prompt_or_with_an_unknown_mode_says_which_argument_is_wrong() {
        let missing = Spawn::from_args(&json!({"task": "t", "prompt": " "}));
        assert_eq!(
            missing,
            Err("`prompt` is required and must not be empty".into())
        );
        let mode = Spawn::from_args(&json!({"task": "t", "prompt": "p", "mode": "yolo"}));
        assert!(matches!(mode, Err(e) if e.contains("`mode` must be one of")));
    }

    #[test]
    fn a_long_task_is_cut_to_one_short_line() {
        let long = "x".repeat(200);
        let line = one_line(&long);
        assert_eq!(line.chars().count(), TASK_CHARS + 1);
        assert!(line.ends_with('…'));
    }
}
