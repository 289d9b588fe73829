//! The contract between the agent and whoever drives it (the cockpit, `airlock exec`, tests):
//! `Op` in, `AgentEvent` out. Nothing else crosses. Every variant says what happens next.
//!
//! A leaf: it imports nothing of the crate (only its own submodules), so the agent, the gate, the
//! tools and the drivers may all speak it without importing each other. What a driver shows of a
//! call (the gate's verdict, the grant scopes, the frozen arguments, a preview) is defined here;
//! what those types *do* (judging, matching scopes, freezing) is implemented where it is decided,
//! in `approval`. The agent's own checkpoint crosses sealed (`SavedCheckpoint`): only the agent
//! reads it, and a driver that must show a reopened session gets `RestoredSession` instead.
//!
//! Must never import anything of the crate: its imports name only external crates and its own
//! submodules.

mod approval;
mod call;
mod hooks;
mod inbox;
mod remote;
mod restored;
mod scope;
mod undo;
mod verdict;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

pub use approval::{
    AgentLabel, AmendedCall, Amendment, ApprovalRequest, Decision, DecisionSource, FrozenCall,
    Preview, SandboxLabel,
};
pub use call::{CallId, Stream, ToolCall, ToolStatus};
pub use hooks::{HookEvent, HookInput, HookOutcome, HookSay, HookSpec, Hooks, claude_tool_name};
pub use inbox::{InboxEntry, InboxSource};
pub use remote::{PairedDevice, PairingOffer, RemotePairing};
pub use restored::{RestoredCall, RestoredEntry, RestoredSession};
pub use scope::{GrantScope, Subject};
pub use undo::{ChangeCount, FileUndo, UndoAction, UndoPlan, UndoSource, WorkspaceHistory};
pub use verdict::{Part, PartKind, Reason, ReasonCode, ReasonSource, Risk, Ruling, Verdict};

/// The driver's end of a running agent: send ops, receive events, and the task to wait for.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub task: tokio::task::JoinHandle<()>,
}

/// A checkpoint as the agent serialized it (`agent::Checkpoint`): where a turn stands, enough
/// for another process to go on. Sealed for everyone but the agent: a driver stores its JSON
/// and hands it back, and reads nothing in it. Kept as the JSON text itself, so storing it or
/// printing it as part of an event writes exactly what the agent wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SavedCheckpoint(Box<serde_json::value::RawValue>);

impl SavedCheckpoint {
    /// Seals a checkpoint.
    pub fn of(checkpoint: &impl Serialize) -> Result<SavedCheckpoint, serde_json::Error> {
        serde_json::value::to_raw_value(checkpoint).map(SavedCheckpoint)
    }

    /// `null`: a checkpoint that refuses to reopen.
    pub fn null() -> SavedCheckpoint {
        SavedCheckpoint(serde_json::value::RawValue::NULL.to_owned())
    }

    /// Wraps checkpoint JSON as it was stored; an error when `json` is not one JSON value.
    pub fn from_json(json: String) -> Result<SavedCheckpoint, serde_json::Error> {
        serde_json::value::RawValue::from_string(json).map(SavedCheckpoint)
    }

    pub fn json(&self) -> &str {
        self.0.get()
    }
}

/// What the driver asks of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn with this prompt. If a turn is already running, the agent answers with
    /// `AgentEvent::Error` and keeps running the current one.
    Submit { prompt: String },
    /// Answer the approval request for `call_id`. The gate continues with that call; an answer
    /// for an unknown or already-decided call is reported as `AgentEvent::Error`.
    Decide { call_id: CallId, decision: Decision },
    /// Cancel one running tool: its process group is killed, it finishes as `cancelled`, and the
    /// other tools keep running.
    CancelTool { call_id: CallId },
    /// Stop the current turn: pending approvals resolve as denied (nothing they ask for runs),
    /// running tools are killed, and the turn finishes as `interrupted`.
    Interrupt,
    /// Interrupt, then end the agent task. `AgentEvent::ShutdownComplete` is the last event.
    Shutdown,
    /// Ask for the session's live grants; answered by `AgentEvent::Grants`.
    ListGrants,
    /// Revoke one grant; answered by `AgentEvent::Grants` with what is left.
    RevokeGrant { id: u64 },
    /// Ask for this session's audit trail; answered by `AgentEvent::Audit`.
    ListAudit,
    /// Something the driver learned outside the agent that a person should see (an MCP server
    /// that failed to start): passed on, in order with the agent's own events, as
    /// `AgentEvent::Error`.
    Notice { message: String },
}

/// A session grant as the driver shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantSummary {
    pub id: u64,
    pub tool: String,
    /// What it covers, e.g. "`cargo test *`".
    pub scope: String,
    /// Milliseconds left, `None` for the rest of the session.
    pub expires_in_ms: Option<u64>,
    pub uses: u32,
}

/// One call of a batch, as `AgentEvent::BatchQueued` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuedCall {
    pub call_id: CallId,
    pub tool: String,
    /// One line, as the results pane titles the call. Model text: shown through `visible_line`.
    pub title: String,
    /// The gate expects to ask for a decision (the policy says ask and no session grant covers
    /// it). A forecast only: a grant given for an earlier call of the batch may settle it
    /// without asking, and `ApprovalRequested` is what counts.
    pub needs_decision: bool,
    /// For a command, the sandbox it would run in (as `ApprovalRequest::sandbox`), so two calls
    /// that differ only in their profile are told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxLabel>,
}

/// How a turn ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model answered without asking for more tools.
    Completed,
    /// Stopped by `Op::Interrupt` or `Op::Shutdown`.
    Interrupted,
    /// The model kept asking for tools past the step limit.
    StepLimit,
    /// The model or the engine failed; the message says why.
    Failed { message: String },
    /// A call needs a person and none is here (`--approvals park`): the turn stopped with a
    /// checkpoint; nothing of the parked call ran.
    Parked {
        checkpoint: Box<SavedCheckpoint>,
        request: Box<ApprovalRequest>,
    },
}

impl PartialEq for TurnOutcome {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TurnOutcome::Completed, TurnOutcome::Completed)
            | (TurnOutcome::Interrupted, TurnOutcome::Interrupted)
            | (TurnOutcome::StepLimit, TurnOutcome::StepLimit) => true,
            (TurnOutcome::Failed { message: a }, TurnOutcome::Failed { message: b }) => a == b,
            (TurnOutcome::Parked { request: a, .. }, TurnOutcome::Parked { request: b, .. }) => {
                a.call_id == b.call_id
            }
            _ => false,
        }
    }
}

/// What the agent tells the driver, in the order it happens.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A turn began. Text, tool events and finally `TurnFinished` follow.
    TurnStarted { turn: u64, prompt: String },
    /// Model text, streamed. More deltas may follow; the turn is not over.
    TextDelta { text: String },
    /// The model asked for these calls in one step. The gate takes them one at a time in this
    /// order, starting now; each is then decided (`ApprovalRequested` first when it asks, then
    /// `ToolStarted` or `ToolDenied`). Lets a driver show how many questions are coming.
    BatchQueued { calls: Vec<QueuedCall> },
    /// The gate needs a human. The request carries everything to show (tool, risk, every reason,
    /// the frozen arguments and digest, a diff or command preview, the grant scope). Nothing
    /// runs until an `Op::Decide` for this call id, an interrupt, or a timeout.
    ApprovalRequested { request: Box<ApprovalRequest> },
    /// A request was answered somewhere else (its one-time code); the driver drops it from view.
    /// `by` says how, as words that follow "answered": `by a one-time code from another
    /// terminal`, `on paired device NAME`.
    ApprovalSettled { call_id: CallId, by: String },
    /// The gate refused the call; the model will see `message` as the call's result.
    ToolDenied {
        call_id: CallId,
        tool: String,
        /// What was refused: a command whole, all its lines (a driver shows it on one line
        /// through `visible_line`), cut after `tools::bash::tool::REFUSED_TITLE_CHARS` characters; for other
        /// tools the call's usual title. Model text.
        title: String,
        source: DecisionSource,
        message: String,
    },
    /// An approved call started running; `ToolOutput` chunks and one `ToolFinished` follow.
    ToolStarted {
        call_id: CallId,
        tool: String,
        title: String,
    },
    /// The change a file call makes, as a unified diff, when no approval showed it first (the
    /// policy, a rule, the mode, a grant or a headless stand-in allowed it): sent right after its
    /// `ToolStarted`, so a driver can show what it changed. Small calls only (see the agent).
    ToolChange { call_id: CallId, diff: String },
    /// Live output of a running call, as it came, thinned by the tools' output sink for a viewer that keeps `OUTPUT_HEAD_LINES` and
    /// `OUTPUT_TAIL_LINES`:
    /// the first lines whole, then from each read only what a head-and-tail view can still show,
    /// with the count of lines left out before `text`. The full output is in the run's log file
    /// (`ToolFinished::log`).
    ToolOutput {
        call_id: CallId,
        stream: Stream,
        text: String,
        /// Lines left out just before `text` (they were never going to be shown).
        #[serde(default, skip_serializing_if = "is_zero")]
        skipped: u64,
    },
    /// What a finished call changed in the workspace (kept, so it can be undone).
    WorkspaceChanged {
        call_id: CallId,
        changes: ChangeCount,
    },
    /// The call is over; its result goes back to the model in the order the model asked.
    ToolFinished {
        call_id: CallId,
        status: ToolStatus,
        exit_code: Option<i32>,
        lines: u64,
        /// Why it failed, when it failed before producing output.
        error: Option<String>,
        /// Where the full output was written, when it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<std::path::PathBuf>,
    },
    /// The turn is over; the agent waits for the next `Op::Submit`.
    TurnFinished { turn: u64, outcome: TurnOutcome },
    /// Something the driver should show; the agent keeps going unless a `TurnFinished` says not.
    Error { message: String },
    /// The session's live grants (after `Op::ListGrants`, `Op::RevokeGrant`, or a new grant).
    Grants { grants: Vec<GrantSummary> },
    /// Where the turn stands (only when the driver asked for checkpoints): enough to go on in
    /// another process if this one dies. Nothing for a person to see.
    Checkpoint { checkpoint: Box<SavedCheckpoint> },
    /// A session was reopened (`airlock --resume`): the conversation so far, and where its turn
    /// stood (calls already settled, calls that were running, `idle` between turns), for the
    /// driver to show again. Sent first; a turn that was under way then goes on.
    Restored { session: Box<RestoredSession> },
    /// This session's decisions, one readable line each, with their source (after `Op::ListAudit`).
    Audit { lines: Vec<String> },
    /// The agent task has ended after `Op::Shutdown`; no more events follow.
    ShutdownComplete,
    /// A sub-agent started (a call of the `agent` tool, `call_id`, was approved): its events
    /// follow as `Agent`, then one `AgentFinished`. Its final answer is that call's result.
    AgentStarted {
        #[serde(rename = "sub_agent")]
        agent: AgentLabel,
        call_id: CallId,
        /// 1 for a sub-agent of the session's agent, 2 for one of its sub-agents, ...
        depth: usize,
        /// The mode and sandbox profile its calls are judged under.
        mode: String,
        sandbox: Option<String>,
    },
    /// One event of a sub-agent (`agent` is its id): its text, its calls, its errors, in the
    /// order it happened. Its approval requests come as `ApprovalRequested` like any other,
    /// naming the agent in the request.
    Agent {
        agent: String,
        #[serde(rename = "inner")]
        event: Box<AgentEvent>,
    },
    /// A sub-agent's turn is over (it answered, failed, was cancelled or parked).
    AgentFinished {
        #[serde(rename = "sub_agent")]
        agent: String,
        status: AgentStatus,
        /// Its final answer, or why it failed (one line, model text).
        summary: String,
    },
}

/// The session's own agent, as a sub-agent's parent and an event's agent are named.
pub const MAIN_AGENT: &str = "main";

/// How a sub-agent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    Done,
    Failed,
    Cancelled,
    /// A call of it waits for a person and nobody is here (`airlock exec --approvals park`):
    /// the whole tree parked with it, and `airlock resume` brings it back.
    Parked,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Done => "done",
            AgentStatus::Failed => "failed",
            AgentStatus::Cancelled => "cancelled",
            AgentStatus::Parked => "parked",
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
