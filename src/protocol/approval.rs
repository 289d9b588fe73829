//! What crosses when the gate asks: the request a human (or a headless stand-in) sees, the
//! preview of what would run, the frozen arguments it is about, the answer, and who settled it.

use serde::{Deserialize, Serialize};

use super::scope::GrantScope;
use super::verdict::{Risk, Verdict};

/// Everything a human needs to decide, before any key is live.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub session: String,
    pub tool: String,
    /// One line, as the results pane titles the call (from the tool's own declaration, set by
    /// the agent before the request is shown). Model text: shown through `visible_line`.
    #[serde(default)]
    pub title: String,
    pub risk: Risk,
    /// The exact arguments that will run, canonical, with their digest.
    pub frozen: FrozenCall,
    /// Every reason and every part (simple command, redirect, path) with its own ruling.
    pub verdict: Verdict,
    /// What `allow for session` would store; `None` when the gate does not offer it.
    pub session_scopes: Option<Vec<GrantScope>>,
    /// Why `allow for session` is not offered, when it is not.
    pub no_session_grant: Option<String>,
    /// For file tools: the directory a session grant may be widened to, if the human chooses.
    pub directory_scope: Option<GrantScope>,
    /// What the call would change or run, as the human should see it (a diff, a command).
    pub preview: Option<Preview>,
    /// When the request times out (unix milliseconds) and is denied as "timed out", if it does.
    pub deadline_ms: Option<u64>,
    /// A one-time code that answers this request from another terminal, when there is one.
    pub code: Option<String>,
    /// Where a command will run, as the modal's title says it (set by the gate): `None` for a
    /// call that runs no command.
    pub sandbox: Option<SandboxLabel>,
    /// The proposal as a person changed it before answering (`None`: as the model proposed it).
    pub amended: Option<AmendedCall>,
    /// Why the last change a person made to this proposal was refused: the proposal is as it
    /// was, and still waits for an answer.
    pub notice: Option<String>,
    /// What the person's hooks said about this call, one line each (a hook that asks, or one
    /// that failed and so has no say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// The sub-agent that asks (`None`: the session's own agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentLabel>,
}

/// A sub-agent as a person is shown it: its id in the session (`a1`, `a2`, ...), the agent
/// that started it, and its one-line task (model text: shown through `visible_line`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentLabel {
    pub id: String,
    /// `main` for the session's own agent, else a sub-agent's id.
    pub parent: String,
    pub task: String,
}

/// A change a person makes to a proposal before answering it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Amendment {
    /// Keep only these hunks of the diff shown (numbered from 1); the others are not written.
    Hunks { keep: Vec<usize> },
    /// Run this command instead of the one proposed (`bash`).
    Command { command: String },
    /// Write this content instead (a file change edited in an editor).
    Content { content: String },
}

/// A call as a person changed it before approving: shown in the modal ("modified by you"),
/// told to the model with the call's result, and kept in the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AmendedCall {
    /// The digest of the call as the model proposed it.
    pub original_digest: String,
    /// One line: what was changed ("kept hunks 1 and 3 of 3", "command edited").
    pub change: String,
    /// What the model is told with the result: what it proposed, and what ran instead.
    pub told: String,
    /// The change itself, from the call as the model proposed it (an edited command or
    /// content is whole, so a chain of edits is its last), so a session reopened later can
    /// make it again.
    #[serde(default)]
    pub amendment: Option<Amendment>,
}

/// Where a command will run, in the words the modal's title uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxLabel {
    /// `sandbox workspace-write`, or `NO SANDBOX (off)`.
    pub text: String,
    /// It runs without a sandbox: shown as a warning.
    pub unconfined: bool,
}

/// What a call would do, rendered for a human before any key is live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// A file change as a unified diff (`---`/`+++` headers, `@@` hunks).
    Diff {
        path: String,
        unified: String,
        added: usize,
        removed: usize,
        /// The diff hit its deadline and is approximate, or was cut to stay readable.
        approximate: bool,
    },
    /// A shell command exactly as it will run, and where.
    Command { command: String, cwd: String },
    /// The change cannot be applied (e.g. the text to replace is not in the file).
    Error { message: String },
    /// A call of an MCP server's tool: its annotations (as the server gave them) and the
    /// arguments pretty-printed, one line each (server text: shown through `visible_line`).
    Mcp {
        server: String,
        tool: String,
        annotations: Vec<String>,
        arguments: Vec<String>,
        /// The pinned digest of the tool's definition.
        definition_digest: String,
        /// For a tool known to change a file (`mcp::file_tools`): the change as a diff against
        /// the file on disk, or why none can be shown.
        #[serde(skip_serializing_if = "Option::is_none")]
        change: Option<Box<Preview>>,
        /// Where its server runs: its sandbox, `NO SANDBOX`, or remote.
        #[serde(skip_serializing_if = "Option::is_none")]
        confinement: Option<String>,
        /// Its change is a whole-file write, so it can be answered hunk by hunk.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        whole_file: bool,
    },
}

impl Preview {
    /// A diff preview as it was stored (serialized) with a parked call's code, read back; only
    /// a diff (a file tool's, or an MCP call's change) is read back: what kept hunks are
    /// numbered in.
    pub fn from_stored(value: &serde_json::Value) -> Option<Preview> {
        // An MCP call's change is the diff its hunks are numbered in.
        if value["kind"] == "mcp" {
            return Preview::from_stored(&value["change"]);
        }
        if value["kind"] != "diff" {
            return None;
        }
        Some(Preview::Diff {
            path: value["path"].as_str()?.to_string(),
            unified: value["unified"].as_str()?.to_string(),
            added: value["added"].as_u64()? as usize,
            removed: value["removed"].as_u64()? as usize,
            approximate: value["approximate"].as_bool()?,
        })
    }

    /// The unified diff it shows, its own or its MCP call's change.
    pub fn unified_diff(&self) -> Option<&str> {
        match self {
            Preview::Diff { unified, .. } => Some(unified),
            Preview::Mcp {
                change: Some(change),
                ..
            } => change.unified_diff(),
            _ => None,
        }
    }
}

/// A human's (or a headless stand-in's) answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    /// Allow, and store the request's session scopes (or its directory scope when
    /// `directory` is true) so later calls inside them run without asking.
    AllowSession {
        #[serde(default)]
        directory: bool,
    },
    Deny {
        #[serde(default)]
        reason: Option<String>,
    },
    /// Allow once, with a word for the model: it reaches the model with the call's result.
    AllowNoted {
        note: String,
    },
    /// Change the proposal first (see [`Amendment`]). With `answer`, the changed call is settled
    /// with it at once, unless the gate refuses the change; without one, the changed call is
    /// asked about again.
    Amend {
        amendment: Amendment,
        #[serde(default)]
        answer: Option<Box<Decision>>,
    },
}

/// Who or what settled a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    Policy,
    Rule,
    Mode,
    Grant,
    User,
    /// A headless stand-in answered (`airlock exec --approvals ...`).
    Headless,
    /// Parked for later; decided with a one-time code (`airlock approve` / `deny`).
    Parked,
    RemoteCode,
    /// One of the person's hooks (`[[hooks]]`) decided.
    Hook,
    Timeout,
    Error,
    Cancelled,
}

/// The arguments a human approves, frozen: canonical JSON plus its SHA-256 digest (made and
/// checked by `approval::frozen`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrozenCall {
    pub tool: String,
    /// The arguments as canonical JSON: keys sorted at every level, no insignificant whitespace.
    pub canonical: String,
    /// Lowercase hex SHA-256 of `tool`, a NUL byte, and `canonical`.
    pub digest: String,
}
