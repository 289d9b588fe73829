//! Where the person's hooks stand in the gate. After the policy judged a call, its PreToolUse
//! hooks (and, if it would still ask, its PermissionRequest hooks) may:
//! - **deny** it, whatever the policy said (short of nothing: a hard deny is already final);
//! - **ask** about it, even if the policy allowed it;
//! - **allow** it, but only where the policy would have asked, and never a call that would run
//!   without a sandbox (a command with `sandbox: off` or on a machine with no sandbox, a tool of
//!   an MCP server configured with `sandbox = "off"`): that stays a person's call.
//!
//! A hook that timed out, crashed or answered garbage has no say, and the call asks, the modal
//! saying which hook failed and how. A decision a hook made is audited with the hook's name and
//! the digest of its program, and is for the frozen call it was shown (its digest).

use serde_json::{Value, json};

use super::Gate;
use crate::protocol::{HookEvent, HookInput, HookOutcome, HookSay, Ruling, ToolCall};

/// What the hooks of a call came to.
#[derive(Debug, Default)]
pub(super) struct HookVerdict {
    /// The first hook that denied: name, digest, reason.
    pub deny: Option<(String, String, String)>,
    /// A hook that allowed (none denied, asked or failed): name, digest, reason.
    pub allow: Option<(String, String, Option<String>)>,
    /// Lines for the modal: a hook that asks, one that failed, an allow not taken.
    pub lines: Vec<String>,
    /// Some hook wants a person to look (asked, or failed).
    pub ask: bool,
}

impl HookVerdict {
    fn add(&mut self, outcomes: Vec<HookOutcome>) {
        for o in outcomes {
            if let Some(failure) = &o.failure {
                self.ask = true;
                self.lines
                    .push(format!("hook {} has no say: {failure}", o.hook));
                continue;
            }
            let reason = o.reason.clone();
            let because = reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            match o.say {
                Some(HookSay::Deny) if self.deny.is_none() => {
                    let reason = reason.unwrap_or_else(|| "no reason given".into());
                    self.deny = Some((o.hook, o.digest, reason));
                }
                Some(HookSay::Deny) => {}
                Some(HookSay::Ask) => {
                    self.ask = true;
                    self.lines.push(format!("hook {} asks{because}", o.hook));
                }
                Some(HookSay::Allow) if self.allow.is_none() => {
                    self.allow = Some((o.hook, o.digest, reason));
                }
                Some(HookSay::Allow) | None => {}
            }
        }
    }

    /// The hook that allows the call, if one does and nothing else stands in the way.
    pub fn allowed_by(&self) -> Option<&(String, String, Option<String>)> {
        if self.deny.is_some() || self.ask {
            return None;
        }
        self.allow.as_ref()
    }
}

impl Gate {
    /// The input hooks get about `call` (judged as `args`).
    fn hook_input(
        &self,
        call: &ToolCall,
        args: &Value,
        path: Option<&std::path::Path>,
    ) -> HookInput {
        HookInput {
            session_id: self.config.session.clone(),
            cwd: self.workspace().display().to_string(),
            call_id: Some(call.id.clone()),
            tool: Some(call.tool.clone()),
            args: Some(args.clone()),
            path: path.map(|p| p.display().to_string()),
            ..HookInput::default()
        }
    }

    /// Runs the hooks of `event` on `call` (landing on `path`, for a file tool), adding what
    /// they said to `verdict`.
    pub(super) async fn run_hooks(
        &self,
        event: HookEvent,
        call: &ToolCall,
        (args, path, parts): (&Value, Option<&std::path::Path>, &[crate::protocol::Part]),
        verdict: &mut HookVerdict,
    ) {
        let Some(hooks) = &self.hooks else {
            return;
        };
        if !hooks.any(event) {
            return;
        }
        let mut input = self.hook_input(call, args, path);
        if call.tool == "bash" {
            input.commands = Some(simple_commands(parts));
        }
        let outcomes = hooks.run(event, input).await;
        if !outcomes.is_empty() {
            let record = json!({"call_id": call.id, "event": event.as_str(), "hooks": outcomes});
            let _ = self.stage("hooks", record);
        }
        verdict.add(outcomes);
    }

    /// Whether a hook's allow may stand for a call the policy judged `ruling`: only a call it
    /// would have asked about, and never a command without a sandbox.
    pub(super) fn hook_may_allow(&self, ruling: Ruling, call: &ToolCall, args: &Value) -> bool {
        if ruling != Ruling::Ask {
            return false;
        }
        // An MCP server whose config runs it with no sandbox: its calls are a person's too.
        if let Some(tool) = self.policy.mcp.as_ref().and_then(|m| m.lookup(&call.tool)) {
            return !tool
                .confinement
                .as_deref()
                .is_some_and(|c| c.starts_with("NO SANDBOX"));
        }
        if !self.policy.runs_commands(&call.tool) {
            return true;
        }
        let Some(sandbox) = &self.policy.sandbox else {
            return false;
        };
        // No sandbox on this machine: every command would run with all of the user's rights.
        if sandbox.support.missing().is_some() {
            return false;
        }
        match sandbox.profile_of(args) {
            Ok(profile) => profile != crate::sandbox::Profile::Off,
            Err(_) => false,
        }
    }

    /// Tells the Notification hooks that `call` waits for the person (they run on their own;
    /// nothing waits for them).
    pub(super) fn notify_hooks(&self, call: &ToolCall) {
        let Some(hooks) = self.hooks.clone() else {
            return;
        };
        if !hooks.any(HookEvent::Notification) {
            return;
        }
        let input = HookInput {
            session_id: self.config.session.clone(),
            cwd: self.workspace().display().to_string(),
            call_id: Some(call.id.clone()),
            message: Some(format!(
                "airlock needs your permission to use {}",
                crate::protocol::claude_tool_name(&call.tool)
            )),
            ..HookInput::default()
        };
        tokio::spawn(async move {
            hooks.run(HookEvent::Notification, input).await;
        });
    }
}

/// The argv of each simple command the policy judged in a bash line (`None` where it cannot
/// be known before the line runs).
fn simple_commands(parts: &[crate::protocol::Part]) -> Vec<Option<Vec<String>>> {
    use crate::protocol::{PartKind, Subject};
    parts
        .iter()
        .filter(|p| p.kind == PartKind::Command)
        .map(|p| match &p.subject {
            Some(Subject::Command(argv)) => Some(argv.clone()),
            _ => None,
        })
        .collect()
}

/// The PostToolUse hooks of a session, to run after a call finished (on the call's own task).
#[derive(Clone)]
pub struct AfterCall {
    hooks: std::sync::Arc<dyn crate::protocol::Hooks>,
    session: String,
    cwd: String,
}

impl AfterCall {
    /// Runs them on a finished call; what they have for the model, one line each (`None`:
    /// nothing).
    pub async fn run(
        &self,
        call_id: &str,
        tool: &str,
        args: Value,
        response: Value,
    ) -> Option<String> {
        let input = HookInput {
            session_id: self.session.clone(),
            cwd: self.cwd.clone(),
            call_id: Some(call_id.to_string()),
            tool: Some(tool.to_string()),
            args: Some(args),
            response: Some(response),
            ..HookInput::default()
        };
        let notes: Vec<String> = self
            .hooks
            .run(HookEvent::PostToolUse, input)
            .await
            .into_iter()
            .filter_map(|o| o.note.map(|note| format!("[hook {}] {note}", o.hook)))
            .collect();
        (!notes.is_empty()).then(|| notes.join("\n"))
    }
}

impl Gate {
    /// The session's PostToolUse hooks, when it has any.
    pub fn after_call(&self) -> Option<AfterCall> {
        let hooks = self.hooks.clone()?;
        hooks.any(HookEvent::PostToolUse).then(|| AfterCall {
            hooks,
            session: self.config.session.clone(),
            cwd: self.workspace().display().to_string(),
        })
    }
}
