//! Hooks: the user's own programs run around tool calls (`hooks` runs them; the gate, the agent
//! and the driver say when). What a hook is (from the config), what it is given, and what it
//! said, as every part of airlock sees them.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

/// When a hook runs (named as Claude Code names them, so existing scripts read the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before a call is decided (after the policy judged it, before anyone is asked).
    PreToolUse,
    /// A request is about to be shown to the person.
    PermissionRequest,
    /// A call finished; what the hook says can reach the model with the result.
    PostToolUse,
    /// A request started waiting for the person.
    Notification,
    SessionStart,
    /// The session ends.
    Stop,
}

impl HookEvent {
    pub const ALL: [HookEvent; 6] = [
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::Notification,
        HookEvent::SessionStart,
        HookEvent::Stop,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Notification => "Notification",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Stop => "Stop",
        }
    }

    pub fn parse(text: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == text)
    }

    /// Whether a hook of this event can say allow, deny or ask about a call.
    pub fn decides(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PermissionRequest)
    }
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    /// Its name (given, or made from its program): what the audit and the modal call it.
    pub name: String,
    pub event: HookEvent,
    /// A regular expression matched against the whole tool name, airlock's or the one Claude
    /// Code scripts expect (`bash` or `Bash`); `None` matches every tool.
    pub matcher: Option<String>,
    /// For `bash`: only commands that start with this.
    pub command_prefix: Option<String>,
    /// The program and its arguments, paths made absolute.
    pub argv: Vec<String>,
    /// SHA-256 over the argv and the content of every file it names (the program, a script).
    pub digest: String,
    pub timeout_ms: u64,
    /// The config file it comes from.
    pub source: String,
}

/// What a hook said, or why it has no say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookSay {
    Allow,
    Deny,
    Ask,
}

/// One hook's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookOutcome {
    pub hook: String,
    pub digest: String,
    /// Its decision, if it made one (decision events only).
    pub say: Option<HookSay>,
    pub reason: Option<String>,
    /// A note for the model (PostToolUse), or context it added.
    pub note: Option<String>,
    /// Why it has no say: timed out, crashed, printed something that is not its protocol.
    pub failure: Option<String>,
}

/// What a hook is given about the call or the moment (made into Claude Code's fields by
/// `hooks`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    pub session_id: String,
    pub cwd: String,
    pub call_id: Option<String>,
    /// airlock's tool name and arguments.
    pub tool: Option<String>,
    pub args: Option<serde_json::Value>,
    /// For a file tool: the path the call lands on, as the gate judged it (links and `..`
    /// resolved), which a hook is shown as `file_path` instead of the call's spelling.
    pub path: Option<String>,
    /// For `bash`: each simple command of the line as the gate parsed it, its argv (`None`
    /// where a word is computed and cannot be known before it runs). `command_prefix` is
    /// matched against these, not against the line's text.
    pub commands: Option<Vec<Option<Vec<String>>>>,
    /// PostToolUse: what the call returned.
    pub response: Option<serde_json::Value>,
    /// Notification: what the person is told.
    pub message: Option<String>,
}

/// The name a Claude Code script knows an airlock tool by (`bash` → `Bash`, `write_file` →
/// `Write`, `server__tool` → `mcp__server__tool`, …).
pub fn claude_tool_name(tool: &str) -> String {
    match tool {
        "bash" => "Bash".into(),
        "write_file" => "Write".into(),
        "edit_file" => "Edit".into(),
        "read_file" => "Read".into(),
        "list_dir" => "LS".into(),
        "search" => "Grep".into(),
        "agent" => "Task".into(),
        other => match other.split_once("__") {
            Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
                format!("mcp__{server}__{tool}")
            }
            _ => other.into(),
        },
    }
}

/// Runs the hooks of an event.
pub trait Hooks: Send + Sync {
    /// Whether any hook of `event` is configured (nothing is prepared when none is).
    fn any(&self, event: HookEvent) -> bool;

    /// Runs every hook of `event` that matches `input`, at once; each one's outcome, in
    /// configured order.
    fn run(
        &self,
        event: HookEvent,
        input: HookInput,
    ) -> Pin<Box<dyn Future<Output = Vec<HookOutcome>> + Send + '_>>;
}
