//! The approver that asks whoever drives the agent: the request goes out as
//! `AgentEvent::ApprovalRequested`, the answer comes back as `Op::Decide` for the same call id.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::Control;
use crate::approval::approver::{ApprovalRequest, Approver, ApproverError, BoxFuture, Decision};
use crate::protocol::AgentEvent;

pub struct ChannelApprover {
    control: Arc<Control>,
    events: mpsc::UnboundedSender<AgentEvent>,
    /// When set, every request also gets a one-time code in the state database, so it can be
    /// answered from another terminal (`airlock approve CODE`); the first answer wins.
    remote: Option<RemoteCodes>,
}

/// Where remote answers are looked for.
#[derive(Clone, Debug)]
pub struct RemoteCodes {
    pub db: PathBuf,
    pub session: String,
    pub workspace: PathBuf,
}

impl ChannelApprover {
    pub(crate) fn new(control: Arc<Control>, events: mpsc::UnboundedSender<AgentEvent>) -> Self {
        ChannelApprover {
            control,
            events,
            remote: None,
        }
    }

    pub(crate) fn with_remote(mut self, remote: Option<RemoteCodes>) -> Self {
        self.remote = remote;
        self
    }
}

/// The decision a stored answer stands for.
fn stored_decision(state: &str, json: Option<&str>) -> Option<Decision> {
    let value: serde_json::Value = serde_json::from_str(json.unwrap_or("{}")).unwrap_or_default();
    match state {
        "approved" => Some(if value["decision"] == "allow_session" {
            Decision::AllowSession { directory: false }
        } else {
            Decision::AllowOnce
        }),
        "denied" => Some(Decision::Deny {
            reason: value["reason"].as_str().map(str::to_string),
        }),
        _ => None,
    }
}

fn decision_json(decision: &Decision) -> String {
    match decision {
        Decision::AllowOnce => r#"{"decision":"allow_once"}"#.to_string(),
        Decision::AllowSession { .. } => r#"{"decision":"allow_session"}"#.to_string(),
        Decision::Deny { reason } => {
            serde_json::json!({"decision": "deny", "reason": reason}).to_string()
        }
    }
}

impl Approver for ChannelApprover {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        Box::pin(async move {
            let call_id = request.call_id.clone();
            let mut request = request;
            request.title = super::title_of_canonical(&request.tool, &request.frozen.canonical);
            // A code for answering from another terminal, when the state database is at hand.
            let remote = self.remote.as_ref().and_then(|r| {
                let store = crate::store::db::Store::open(&r.db).ok()?;
                let now = crate::approval::gate::now_ms();
                store.save_run(&r.session, &r.session, &r.workspace, "live", None, now).ok()?;
                let ttl = request.deadline_ms.map(|d| d.saturating_sub(now)).unwrap_or(24 * 3600 * 1000);
                let summary = serde_json::json!({"risk": request.risk, "reasons": request.verdict.reason_lines(), "preview": request.preview}).to_string();
                // Asked before for exactly this call (a reopened session): the same code, so the
                // one printed then still answers it, and an answer given with it meanwhile counts.
                let code = match store.reusable_code(&r.session, &call_id, &request.frozen.digest, now) {
                    Ok(Some(code)) => code,
                    _ => store.add_approval(&r.session, &r.session, &call_id, &request.frozen, &summary, now, ttl).ok()?,
                };
                request.code = Some(code.clone());
                Some((store, code))
            });
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
            let Some((store, code)) = remote else {
                let answer = answer.await;
                self.control.decisions.forget(&call_id);
                return answer.map_err(|_| ApproverError::NoAnswer);
            };
            // Whichever answer comes first wins: a key in this cockpit, or the code elsewhere.
            let mut answer = answer;
            // The code may already be answered (from another terminal while no cockpit ran).
            let mut wait = Duration::ZERO;
            loop {
                tokio::select! {
                    local = &mut answer => {
                        self.control.decisions.forget(&call_id);
                        let decision = local.map_err(|_| ApproverError::NoAnswer)?;
                        let now = crate::approval::gate::now_ms();
                        return match store.decide(&code, &decision_json(&decision), now) {
                            Ok(_) => Ok(decision),
                            Err(_) => match store.approval_by_code(&code).ok().flatten().filter(|row| row.signed).and_then(|row| stored_decision(&row.state, row.decision.as_deref())) {
                                Some(remote) => {
                                    let _ = self.events.send(AgentEvent::Error {
                                        message: format!("{call_id} was already decided from another terminal; that answer stands"),
                                    });
                                    Ok(remote)
                                }
                                None => Ok(decision),
                            },
                        };
                    }
                    _ = tokio::time::sleep(wait) => {
                        wait = Duration::from_millis(300);
                        // Only an answer airlock signed counts: a row set to approved with
                        // sqlite3 is not one.
                        let row = store.approval_by_code(&code).ok().flatten().filter(|row| row.signed);
                        if let Some(decision) = row.and_then(|row| stored_decision(&row.state, row.decision.as_deref())) {
                            self.control.decisions.forget(&call_id);
                            let _ = self.events.send(AgentEvent::ApprovalSettled {
                                call_id: call_id.clone(),
                                by: "a one-time code from another terminal".into(),
                            });
                            return Ok(decision);
                        }
                    }
                }
            }
        })
    }
}
