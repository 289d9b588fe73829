//! Who answers when the policy asks: the `Approver` trait, the request it sees, the decisions it
//! may give, and the approvers that need no UI (a channel to whoever listens, and the fail-closed
//! headless answers).

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::approval::frozen::FrozenCall;
use crate::approval::grants::GrantScope;
use crate::approval::risk::Risk;
use crate::approval::verdict::Verdict;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Everything a human needs to decide, before any key is live.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub session: String,
    pub tool: String,
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
    },
}

/// Computes previews; the tool registry implements it, so the gate never knows how tools work.
/// `judged` is the physical path the policy judged for a file call: the preview shows the file
/// the tool would change, the same one the tool opens.
pub trait Previewer: Send + Sync {
    fn preview(
        &self,
        tool: &str,
        args: &serde_json::Value,
        judged: Option<&std::path::Path>,
    ) -> Option<Preview>;
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
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApproverError {
    #[error("nobody is there to answer: the approval channel is closed")]
    ChannelClosed,
    #[error("the approver went away without answering")]
    NoAnswer,
    #[error("the approver failed: {0}")]
    Failed(String),
    /// Nobody is here now: keep the request for later (`airlock exec --approvals park`).
    #[error("parked for a later decision")]
    Park,
}

pub trait Approver: Send + Sync {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>>;

    /// Whether a person answers, or a headless stand-in (recorded as the decision's source).
    fn is_human(&self) -> bool {
        true
    }
}

/// A request waiting on a channel, with the place to send its answer.
#[derive(Debug)]
pub struct PendingApproval {
    pub request: ApprovalRequest,
    pub reply: oneshot::Sender<Decision>,
}

/// Sends each request over a channel to whoever decides (the TUI, a test) and waits for the answer.
#[derive(Clone)]
pub struct ChannelApprover {
    tx: mpsc::Sender<PendingApproval>,
}

impl ChannelApprover {
    pub fn new(capacity: usize) -> (ChannelApprover, mpsc::Receiver<PendingApproval>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (ChannelApprover { tx }, rx)
    }
}

impl Approver for ChannelApprover {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.tx
                .send(PendingApproval { request, reply })
                .await
                .map_err(|_| ApproverError::ChannelClosed)?;
            answer.await.map_err(|_| ApproverError::NoAnswer)
        })
    }
}

/// Headless, fail closed: whatever would ask is denied, with a reason that says why.
pub struct DenyAll {
    pub reason: String,
}

impl Approver for DenyAll {
    fn is_human(&self) -> bool {
        false
    }

    fn ask(&self, _request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        let reason = self.reason.clone();
        Box::pin(async move {
            Ok(Decision::Deny {
                reason: Some(reason),
            })
        })
    }
}

/// For benchmarks and scripted runs: answers every ask with allow-once. Hard denies never reach
/// an approver, so this cannot lift them.
pub struct AllowAllOnce;

impl Approver for AllowAllOnce {
    fn is_human(&self) -> bool {
        false
    }

    fn ask(&self, _request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        Box::pin(async { Ok(Decision::AllowOnce) })
    }
}

/// Headless, for later: every ask is parked (checkpointed with a one-time code), nothing runs now.
pub struct ParkAll;

impl Approver for ParkAll {
    fn is_human(&self) -> bool {
        false
    }

    fn ask(&self, _request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        Box::pin(async { Err(ApproverError::Park) })
    }
}
