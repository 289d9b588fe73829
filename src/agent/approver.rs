//! The approver that asks whoever drives the agent: the request goes out as
//! `AgentEvent::ApprovalRequested`, the answer comes back as `Op::Decide` for the same call id.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::{Control, lock};
use crate::approval::approver::{ApprovalRequest, Approver, ApproverError, BoxFuture, Decision};
use crate::protocol::AgentEvent;

pub struct ChannelApprover {
    control: Arc<Control>,
    events: mpsc::UnboundedSender<AgentEvent>,
}

impl ChannelApprover {
    pub(crate) fn new(control: Arc<Control>, events: mpsc::UnboundedSender<AgentEvent>) -> Self {
        ChannelApprover { control, events }
    }
}

impl Approver for ChannelApprover {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let call_id = request.call_id.clone();
            lock(&self.control.pending).insert(call_id.clone(), reply);
            if self
                .events
                .send(AgentEvent::ApprovalRequested {
                    request: Box::new(request),
                })
                .is_err()
            {
                lock(&self.control.pending).remove(&call_id);
                return Err(ApproverError::ChannelClosed);
            }
            let answer = answer.await;
            lock(&self.control.pending).remove(&call_id);
            answer.map_err(|_| ApproverError::NoAnswer)
        })
    }
}
