//! `bash` as a tool: its schema, its titles (a command's first line while it runs, the whole
//! command when it is refused), its preview (the exact command), and how an approved call runs:
//! in the sandbox under the profile frozen into its arguments, or unconfined only when a person
//! approved it.

use std::borrow::Cow;
use std::time::Duration;

use serde_json::{Value, json};

use super::{BashRun, DEFAULT_TIMEOUT, MAX_TIMEOUT, SandboxedRun, run};
use crate::approval::approver::{AmendRequest, Amended};
use crate::approval::gate::Approved;
use crate::output::ToolError;
use crate::protocol::Amendment;
use crate::protocol::Preview;
use crate::protocol::Risk;
use crate::sandbox::{Profile, Sandbox};
use crate::tools::files::string;
use crate::tools::runlog::LogLimits;
use crate::tools::tool::{ArgText, PreviewAt, Tool, ToolFuture, ToolRun, object_schema};

const NAME: &str = "bash";

/// The most of a refused command a title carries; the rest is counted.
pub const REFUSED_TITLE_CHARS: usize = 400;

pub struct Bash;

impl Tool for Bash {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'_, str> {
        "Run a bash command in the workspace, in an OS sandbox. `sandbox` picks \
         what it may touch: `workspace-write` (the usual: reads all but keys and \
         credentials, writes only the workspace and temp, no network), \
         `read-only`, `network` (adds the network) or `off` (no sandbox; always \
         asks the user). Ask for a wider one only when a run shows the sandbox \
         refused something the task needs."
            .into()
    }

    fn schema(&self) -> Value {
        object_schema(
            &[
                ("command", json!({"type": "string"})),
                (
                    "timeout_ms",
                    json!({"type": "integer", "minimum": 1, "maximum": 1_800_000}),
                ),
                (
                    "sandbox",
                    json!({"type": "string", "enum": Profile::ALL.map(Profile::as_str)}),
                ),
            ],
            &["command"],
        )
    }

    fn risk(&self) -> Risk {
        Risk::Dangerous
    }

    fn command(&self) -> Option<&'static str> {
        Some("command")
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["command"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        command_title(args.get("command"))
    }

    /// A refusal may be about any part of a command, so it is shown whole (not only its first
    /// line), up to a bound.
    fn refused_title(&self, args: &ArgText<'_>) -> String {
        let command = args.get("command");
        let total = command.chars().count();
        if total <= REFUSED_TITLE_CHARS {
            return format!("$ {command}");
        }
        let kept: String = command.chars().take(REFUSED_TITLE_CHARS).collect();
        format!(
            "$ {kept}… ({} more characters)",
            total - REFUSED_TITLE_CHARS
        )
    }

    fn preview(&self, args: &Value, at: PreviewAt<'_>) -> Option<Preview> {
        Some(Preview::Command {
            command: args.get("command").and_then(Value::as_str)?.to_string(),
            cwd: at.workspace.display().to_string(),
        })
    }

    fn amend(&self, change: AmendRequest<'_>, _at: PreviewAt<'_>) -> Result<Amended, String> {
        let Amendment::Command { command } = change.amendment else {
            return Err(
                "a command has no hunks or file content to change; edit the command".into(),
            );
        };
        if command.trim().is_empty() {
            return Err(
                "the edited command is empty; type a command, or keep the one proposed".into(),
            );
        }
        let mut args = change.args.clone();
        args["command"] = Value::String(command.clone());
        let proposed = change
            .proposed
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Ok(Amended {
            args,
            change: "command edited by the user".into(),
            told: format!(
                "You proposed the command:\n{proposed}\nThe user changed it before approving; \
                 what ran is their command:\n{command}\n"
            ),
        })
    }

    fn execute<'a>(&'a self, call: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move {
            let command = string(&call.args, "command", NAME)?.to_string();
            let (timeout, note) = bash_timeout(&call.args);
            let tools = call.tools;
            let sandbox = sandbox_for(tools.sandbox.as_deref(), &call.approved, &call.args)?;
            let log = tools
                .log_dir
                .as_ref()
                .map(|d| d.join(format!("{}.log", safe_file_name(call.approved.call_id()))));
            run(BashRun {
                command,
                workspace: tools.workspace.clone(),
                timeout,
                cancel: call.cancel,
                sink: call.sink,
                log,
                log_limits: LogLimits::DEFAULT,
                hidden_env: tools.hidden_env.clone(),
                note,
                sandbox,
            })
            .await
        })
    }
}

/// A command's first line, and how many more it has: a title is one row, but it must not pass
/// off `echo fine\nrm -rf x` as `echo fine`. Split on `\n` alone, so a carriage return stays in
/// the line for the driver to show (`str::lines` would drop one before the break); lines with
/// nothing in them (a trailing newline) are not counted.
fn command_title(command: &str) -> String {
    let mut lines = command.split('\n');
    let first = lines.next().unwrap_or("");
    match lines.filter(|l| !l.is_empty()).count() {
        0 => format!("$ {first}"),
        1 => format!("$ {first} … (+1 more line)"),
        more => format!("$ {first} … (+{more} more lines)"),
    }
}

/// How an approved call runs: in the sandbox under its profile, or unconfined when its profile
/// is `off` or there is no sandbox, which only a person's approval allows (the policy always
/// asks for those, and never grants them for the session).
fn sandbox_for(
    sandbox: Option<&Sandbox>,
    approved: &Approved,
    args: &Value,
) -> Result<Option<SandboxedRun>, ToolError> {
    let Some(sandbox) = sandbox else {
        return Ok(None);
    };
    let profile = sandbox
        .policy
        .profile_of(args)
        .map_err(ToolError::InvalidArguments)?;
    let unconfined = profile == Profile::Off || !sandbox.policy.support.available();
    if unconfined {
        use crate::protocol::DecisionSource as S;
        // `off` named by the model, where the person chose a sandbox: only a person may let
        // that run, never a headless stand-in (`--approvals dangerously-allow-all`).
        let asked_by_model = profile == Profile::Off && sandbox.policy.default != Profile::Off;
        if asked_by_model && *approved.source() == S::Headless {
            return Err(ToolError::Failed(
                "the call asks to run without the sandbox (`\"sandbox\": \"off\"`), which only a \
                 person can approve; a headless run never does, not even with \
                 `--approvals dangerously-allow-all`. Nothing ran. (To run every command \
                 unconfined, start airlock with `--sandbox off`.)"
                    .into(),
            ));
        }
        // Unconfined still goes through the launcher: a session of its own, no terminal.
        return match approved.source() {
            S::User | S::Headless | S::Parked | S::RemoteCode => Ok(Some(SandboxedRun {
                launcher: sandbox.launcher.clone(),
                plan: None,
            })),
            other => Err(ToolError::Tampered(format!(
                "this command would run without the sandbox, which needs a person's \
                 approval, but it was allowed by {other:?}; nothing ran"
            ))),
        };
    }
    let plan = sandbox.plan(profile).map_err(ToolError::Failed)?;
    Ok(Some(SandboxedRun {
        launcher: sandbox.launcher.clone(),
        plan: Some(plan),
    }))
}

/// The timeout a call runs with: its `timeout_ms`, at most [`MAX_TIMEOUT`] (with a note saying
/// it was lowered), or [`DEFAULT_TIMEOUT`] when it names none.
fn bash_timeout(args: &Value) -> (Duration, Option<String>) {
    match args.get("timeout_ms").and_then(Value::as_u64) {
        None => (DEFAULT_TIMEOUT, None),
        Some(ms) if Duration::from_millis(ms) > MAX_TIMEOUT => (
            MAX_TIMEOUT,
            Some(format!(
                "timeout_ms {ms} is above airlock's cap of {} minutes; the command ran with {} minutes",
                MAX_TIMEOUT.as_secs() / 60,
                MAX_TIMEOUT.as_secs() / 60
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_chosen_timeout_above_the_cap_runs_with_the_cap_and_says_so() {
        let (timeout, note) = bash_timeout(&json!({"command": "yes", "timeout_ms": 86_400_000u64}));
        assert_eq!(timeout, MAX_TIMEOUT);
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
            (DEFAULT_TIMEOUT, None)
        );
    }
}
