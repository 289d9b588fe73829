//! Who answers when the policy asks: the `Approver` trait, the request it sees, the decisions it
//! may give, and the approvers that need no UI (the fail-closed headless answers). The approver
//! that asks a driver is the agent's (`agent::ChannelApprover`).

use std::future::Future;
use std::pin::Pin;

use crate::protocol::{Amendment, ApprovalRequest, Decision, Preview};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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

    /// A call as a person changed it before approving: its new arguments (the tool's own, not
    /// frozen yet) and what to say of the change. `args` is the call as it stands (maybe changed
    /// already), `proposed` the call as the model proposed it, `shown` the preview the person
    /// saw. An error says why this change cannot be made; nothing is changed then.
    fn amend(&self, change: AmendRequest<'_>) -> Result<Amended, String> {
        Err(format!(
            "`{}` calls cannot be changed before approving; approve or deny this one as proposed",
            change.tool
        ))
    }
}

/// What [`Previewer::amend`] is asked to change.
#[derive(Debug, Clone, Copy)]
pub struct AmendRequest<'a> {
    pub tool: &'a str,
    pub args: &'a serde_json::Value,
    pub proposed: &'a serde_json::Value,
    pub judged: Option<&'a std::path::Path>,
    pub amendment: &'a Amendment,
    pub shown: Option<&'a Preview>,
}

/// A call as a person changed it: its arguments, one line saying what changed, and what the
/// model is told with the result.
#[derive(Debug, Clone, PartialEq)]
pub struct Amended {
    pub args: serde_json::Value,
    pub change: String,
    pub told: String,
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

    /// How the answer to `call_id` came, when not through this approver's own channel (a code
    /// answered from another terminal or a paired device): recorded with the decision. Taken
    /// once.
    fn answered_via(&self, _call_id: &str) -> Option<serde_json::Value> {
        None
    }

    /// Whether a person answers, or a headless stand-in (recorded as the decision's source).
    fn is_human(&self) -> bool {
        true
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
