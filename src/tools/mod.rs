//! The tools an agent can call, and the registry that runs them. The registry executes only
//! `Approved` calls (a value only the gate makes) and takes their arguments from the frozen,
//! digest-checked text, so what runs is exactly what was shown. A file tool runs on the path the
//! gate judged (carried by `Approved`), not on its argument resolved again. A `bash` call runs in
//! the OS sandbox under the profile frozen into its arguments (`crate::sandbox`); one that runs
//! without it (profile `off`, or a kernel without Landlock) runs only if a person approved it.

pub mod bash;
pub mod diff;
pub mod files;
pub mod output;
pub mod runlog;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::approver::{Preview, Previewer};
use crate::approval::gate::Approved;
use crate::approval::risk::ToolCatalog;

pub use output::Stream;

/// Where live output goes while a tool runs.
pub type OutputSink = Arc<dyn Fn(Stream, &[u8]) + Send + Sync>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Failed,
    Cancelled,
    TimedOut,
}

/// What a finished tool gives back: the observation for the model, and facts for the UI.
#[derive(Debug, Clone, Serialize)]
pub struct ToolOutcome {
    pub status: ToolStatus,
    pub exit_code: Option<i32>,
    pub content: String,
    pub lines: u64,
    /// The full output, when it was written to a file.
    pub log: Option<PathBuf>,
}

impl ToolOutcome {
    pub fn text(content: String) -> Self {
        ToolOutcome {
            status: ToolStatus::Ok,
            exit_code: None,
            lines: content.lines().count() as u64,
            content,
            log: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    InvalidArguments(String),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Failed(String),
    #[error("refused to run: {0}")]
    Tampered(String),
    #[error("`{0}` is not a tool airlock can run")]
    Unknown(String),
}

/// Runs tools in one workspace.
pub struct ToolRegistry {
    pub workspace: PathBuf,
    pub home: PathBuf,
    /// Where full outputs of runs are written (`<dir>/<call id>.log`), if anywhere.
    pub log_dir: Option<PathBuf>,
    /// Environment variables kept from commands besides [`bash::HIDDEN_ENV`]: the key variables
    /// the configuration names (`api_key_env`).
    pub hidden_env: Vec<String>,
    /// The configured MCP servers, whose tools run here too once approved.
    pub mcp: Option<Arc<crate::mcp::McpHub>>,
    /// The sandbox `bash` runs in; `None` runs commands unconfined (tests of other things).
    pub sandbox: Option<Arc<crate::sandbox::Sandbox>>,
}

impl ToolRegistry {
    pub fn new(workspace: PathBuf, home: PathBuf, log_dir: Option<PathBuf>) -> Self {
        ToolRegistry {
            workspace,
            home,
            log_dir,
            hidden_env: Vec::new(),
            mcp: None,
            sandbox: None,
        }
    }

    /// Runs every `bash` call in this sandbox.
    pub fn sandboxed(mut self, sandbox: crate::sandbox::Sandbox) -> Self {
        self.sandbox = Some(Arc::new(sandbox));
        self
    }

    /// How an approved `bash` call runs: in the sandbox under its profile, or unconfined when
    /// its profile is `off` or there is no sandbox, which only a person's approval allows (the
    /// policy always asks for those, and never grants them for the session).
    fn bash_sandbox(
        &self,
        approved: &Approved,
        args: &Value,
    ) -> Result<Option<bash::SandboxedRun>, ToolError> {
        let Some(sandbox) = &self.sandbox else {
            return Ok(None);
        };
        let profile = sandbox
            .policy
            .profile_of(args)
            .map_err(ToolError::InvalidArguments)?;
        let unconfined =
            profile == crate::sandbox::Profile::Off || !sandbox.policy.support.available();
        if unconfined {
            use crate::approval::gate::DecisionSource as S;
            return match approved.source() {
                S::User | S::Headless | S::Parked | S::RemoteCode => Ok(None),
                other => Err(ToolError::Tampered(format!(
                    "this command would run without the sandbox, which needs a person's \
                     approval, but it was allowed by {other:?}; nothing ran"
                ))),
            };
        }
        let plan = sandbox.plan(profile).map_err(ToolError::Failed)?;
        Ok(Some(bash::SandboxedRun {
            launcher: sandbox.launcher.clone(),
            plan,
        }))
    }

    /// Also runs the tools of these MCP servers.
    pub fn with_mcp(mut self, hub: Arc<crate::mcp::McpHub>) -> Self {
        self.mcp = Some(hub);
        self
    }

    /// Also keeps these variables from every command (a configured `api_key_env`).
    pub fn hiding_env(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.hidden_env.extend(names);
        self
    }

    pub fn catalog(&self) -> ToolCatalog {
        ToolCatalog::builtin()
    }

    /// Runs an approved call, once the decision that allowed it is durable in the audit log.
    /// Its arguments come from the frozen text, re-checked against the digest that was
    /// approved; a mismatch runs nothing.
    pub async fn execute(
        &self,
        approved: Approved,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        // Nothing runs before the decision that allowed it is durable in the audit log.
        approved.recorded().await.map_err(ToolError::Failed)?;
        let args = approved
            .args()
            .map_err(|e| ToolError::Tampered(e.to_string()))?;
        let tool = approved.tool();
        let place = || -> Result<files::Place<'_>, ToolError> {
            let judged = approved.judged_path().ok_or_else(|| {
                ToolError::Tampered(format!(
                    "`{tool}` was approved without the path it was judged on; nothing ran"
                ))
            })?;
            Ok(files::Place {
                workspace: &self.workspace,
                judged,
            })
        };
        match tool {
            "read_file" => files::read_file(place()?, &args),
            "list_dir" => files::list_dir(place()?, &args),
            "search" => {
                let place = place()?;
                let (workspace, judged) =
                    (place.workspace.to_path_buf(), place.judged.to_path_buf());
                tokio::task::spawn_blocking(move || {
                    let place = files::Place {
                        workspace: &workspace,
                        judged: &judged,
                    };
                    files::search(place, &args)
                })
                .await
                .map_err(|e| ToolError::Failed(format!("search stopped: {e}")))?
            }
            "write_file" => files::write_file(place()?, &args),
            "edit_file" => files::edit_file(place()?, &args),
            "bash" => {
                let command = files::string(&args, "command", "bash")?.to_string();
                let (timeout, note) = bash_timeout(&args);
                let sandbox = self.bash_sandbox(&approved, &args)?;
                let log = self
                    .log_dir
                    .as_ref()
                    .map(|d| d.join(format!("{}.log", safe_file_name(approved.call_id()))));
                bash::run(bash::BashRun {
                    command,
                    workspace: self.workspace.clone(),
                    timeout,
                    cancel,
                    sink,
                    log,
                    log_limits: runlog::LogLimits::DEFAULT,
                    hidden_env: self.hidden_env.clone(),
                    note,
                    sandbox,
                })
                .await
            }
            other => match (&self.mcp, approved.mcp_definition()) {
                (Some(hub), Some(definition)) if hub.serves(other) => {
                    hub.call(other, args, definition, cancel, sink).await
                }
                (Some(hub), None) if hub.serves(other) => Err(ToolError::Tampered(format!(
                    "`{other}` was not judged on an MCP tool definition, so airlock cannot tell what it would run; nothing was sent"
                ))),
                _ => Err(ToolError::Unknown(other.to_string())),
            },
        }
    }
}

/// The timeout a `bash` call runs with: its `timeout_ms`, at most [`bash::MAX_TIMEOUT`] (with a
/// note saying it was lowered), or [`bash::DEFAULT_TIMEOUT`] when it names none.
fn bash_timeout(args: &Value) -> (Duration, Option<String>) {
    match args.get("timeout_ms").and_then(Value::as_u64) {
        None => (bash::DEFAULT_TIMEOUT, None),
        Some(ms) if Duration::from_millis(ms) > bash::MAX_TIMEOUT => (
            bash::MAX_TIMEOUT,
            Some(format!(
                "timeout_ms {ms} is above airlock's cap of {} minutes; the command ran with {} minutes",
                bash::MAX_TIMEOUT.as_secs() / 60,
                bash::MAX_TIMEOUT.as_secs() / 60
            )),
        ),
        Some(ms) => (Duration::from_millis(ms), None),
    }
}

fn safe_file_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Previewer for ToolRegistry {
    fn preview(&self, tool: &str, args: &Value, judged: Option<&Path>) -> Option<Preview> {
        let text = |key: &str| args.get(key).and_then(Value::as_str);
        let unjudged = || Preview::Error {
            message: format!("`{tool}` was not judged on a path, so there is nothing to preview"),
        };
        match tool {
            "bash" => Some(Preview::Command {
                command: text("command")?.to_string(),
                cwd: self.workspace.display().to_string(),
            }),
            "write_file" => {
                let raw = text("path")?;
                let Some(path) = judged else {
                    return Some(unjudged());
                };
                Some(diff::write_preview(raw, path, text("content")?))
            }
            "edit_file" => {
                let raw = text("path")?;
                let Some(path) = judged else {
                    return Some(unjudged());
                };
                // The file the edit would change, opened as the tool opens it (no link followed),
                // if it is a regular file of a size a preview can hold.
                let place = files::Place {
                    workspace: &self.workspace,
                    judged: path,
                };
                let current = files::current_text(place, raw, diff::MAX_READ);
                let current = match current {
                    Ok(c) => c,
                    Err(message) => return Some(Preview::Error { message }),
                };
                let replace_all = args
                    .get("replace_all")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                match files::apply_edit(&current, text("old")?, text("new")?, replace_all) {
                    Ok(updated) => Some(diff::file_change(raw, Some(current.as_bytes()), &updated)),
                    Err(message) => Some(Preview::Error { message }),
                }
            }
            other => self.mcp.as_ref().and_then(|hub| hub.preview(other, args)),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod timeout_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_model_chosen_timeout_above_the_cap_runs_with_the_cap_and_says_so() {
        let (timeout, note) = bash_timeout(&json!({"command": "yes", "timeout_ms": 86_400_000u64}));
        assert_eq!(timeout, bash::MAX_TIMEOUT);
        assert!(note.unwrap().contains("above airlock's cap of 30 minutes"));
    }

    #[test]
    fn a_timeout_within_the_cap_or_none_at_all_is_kept_as_is() {
        assert_eq!(
            bash_timeout(&json!({"command": "ls", "timeout_ms": 5000})),
            (Duration::from_millis(5000), None)
        );
        assert_eq!(
            bash_timeout(&json!({"command": "ls"})),
            (bash::DEFAULT_TIMEOUT, None)
        );
    }
}
