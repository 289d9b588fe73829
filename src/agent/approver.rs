//! The approver that asks whoever drives the agent: the request goes out as
//! `AgentEvent::ApprovalRequested`, the answer comes back as `Op::Decide` for the same call id.
//! With a code book, the request also gets a one-time code, and an answer given with it from
//! another terminal counts too: whichever comes first wins.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::Control;
use super::codes::{CodeBook, IssuedCode};
use crate::approval::approver::{Approver, ApproverError, BoxFuture};
use crate::protocol::AgentEvent;
use crate::protocol::ApprovalRequest;
use crate::protocol::Decision;

pub struct ChannelApprover {
    control: Arc<Control>,
    events: mpsc::UnboundedSender<AgentEvent>,
    /// When set, every request also gets a one-time code, so it can be answered from another
    /// terminal (`airlock approve CODE`); the first answer wins.
    remote: Option<Arc<dyn CodeBook>>,
    /// How each call answered through its code was answered, until the gate takes it.
    via: std::sync::Mutex<std::collections::HashMap<String, serde_json::Value>>,
}

impl ChannelApprover {
    pub(crate) fn new(control: Arc<Control>, events: mpsc::UnboundedSender<AgentEvent>) -> Self {
        ChannelApprover {
            control,
            events,
            remote: None,
            via: Default::default(),
        }
    }

    pub(crate) fn with_remote(mut self, remote: Option<Arc<dyn CodeBook>>) -> Self {
        self.remote = remote;
        self
    }

    /// Waits for the driver's answer or the code's, whichever comes first.
    async fn first_answer(
        &self,
        call_id: &str,
        mut answer: oneshot::Receiver<Decision>,
        issued: Box<dyn IssuedCode>,
    ) -> Result<Decision, ApproverError> {
        // The code may already be answered (from another terminal while no cockpit ran).
        let mut first = true;
        loop {
            let look: crate::approval::approver::BoxFuture<'static, ()> = if first {
                Box::pin(std::future::ready(()))
            } else {
                issued.changes()
            };
            tokio::select! {
                local = &mut answer => {
                    self.control.decisions.forget(call_id);
                    let decision = local.map_err(|_| ApproverError::NoAnswer)?;
                    return Ok(match issued.settle(&decision) {
                        Some(remote) => {
                            let _ = self.events.send(AgentEvent::Error {
                                message: format!("{call_id} was already decided from another terminal; that answer stands"),
                            });
                            remote
                        }
                        None => decision,
                    });
                }
                () = look => {
                    first = false;
                    if let Some(decision) = issued.answered() {
                        self.control.decisions.forget(call_id);
                        let via = issued.via();
                        let by = match (via["channel"].as_str(), via["device"].as_str()) {
                            (Some("page"), Some(device)) => format!("on paired device {device}"),
                            _ => "by a one-time code from another terminal".to_string(),
                        };
                        self.via
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(call_id.to_string(), via);
                        let _ = self.events.send(AgentEvent::ApprovalSettled {
                            call_id: call_id.to_string(),
                            by,
                        });
                        return Ok(decision);
                    }
                }
            }
        }
    }
}

impl Approver for ChannelApprover {
    fn answered_via(&self, call_id: &str) -> Option<serde_json::Value> {
        self.via
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(call_id)
    }

    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        Box::pin(async move {
            let call_id = request.call_id.clone();
            let mut request = request;
            request.title = crate::tools::registry::title_of_canonical(
                &request.tool,
                &request.frozen.canonical,
            );
            let issued = self.remote.as_ref().and_then(|book| book.issue(&request));
            if let Some(issued) = &issued {
                request.code = Some(issued.code().to_string());
            }
            let answer = self.control.decisions.wait(&call_id);
            if self
                .events
                .send(AgentEvent::ApprovalRequested {
                    request: Box::new(request),
                })
                .is_err()
            {
                self.control.decisions.forget(&call_id);
                return Err(ApproverError::ChannelClosed);
            }
            match issued {
                Some(issued) => self.first_answer(&call_id, answer, issued).await,
                None => {
                    let answer = answer.await;
                    self.control.decisions.forget(&call_id);
                    answer.map_err(|_| ApproverError::NoAnswer)
                }
            }
        })
    }
}
