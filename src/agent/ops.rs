//! Ops that arrive while the agent runs: decisions, cancels, interrupts, grant and audit
//! questions. Answered at once, whatever the turn is doing; what stops the turn is the
//! `Control` it shares with the turn.

use tokio::sync::mpsc;

use super::{Control, decisions, lock};
use crate::approval::gate::Gate;
use crate::protocol::{AgentEvent, GrantSummary, Op};

/// What an op handled during a turn asks the loop to do.
pub(super) enum Next {
    Continue,
    Shutdown,
}

/// The session's live grants, for `AgentEvent::Grants`.
fn grants_event(gate: &Gate) -> AgentEvent {
    let now = crate::clock::now_ms();
    let grants = gate
        .grants()
        .list(gate.session(), now)
        .into_iter()
        .map(|g| GrantSummary {
            id: g.id,
            tool: g.tool.clone(),
            scope: g.scope.describe(),
            expires_in_ms: g.expires_ms.map(|e| e.saturating_sub(now)),
            uses: g.uses,
        })
        .collect();
    AgentEvent::Grants { grants }
}

/// Answers grant ops (at any time, in a turn or not); false for every other op.
pub(super) fn handle_grant_op(
    gate: &Gate,
    events: &mpsc::UnboundedSender<AgentEvent>,
    op: &Op,
) -> bool {
    match op {
        Op::ListAudit => {
            let _ = events.send(AgentEvent::Audit {
                lines: gate.audit_lines(),
            });
            return true;
        }
        Op::ListGrants => {}
        Op::RevokeGrant { id } => {
            if !gate.revoke_grant(*id) {
                let _ = events.send(AgentEvent::Error {
                    message: format!("grant {id} does not exist (expired or already revoked)"),
                });
            }
        }
        _ => return false,
    }
    let _ = events.send(grants_event(gate));
    true
}

pub(super) fn handle_op_during_turn(
    control: &Control,
    events: &mpsc::UnboundedSender<AgentEvent>,
    op: Op,
) -> Next {
    match op {
        Op::ListGrants | Op::RevokeGrant { .. } | Op::ListAudit => {}
        Op::Submit { .. } => {
            let _ = events.send(AgentEvent::Error {
                message: "a turn is already running; wait for it to finish or interrupt it".into(),
            });
        }
        Op::Decide { call_id, decision } => {
            let message = match control.decisions.answer(&call_id, decision) {
                Ok(()) => None,
                Err(decisions::Unanswered::AlreadySettled) => {
                    Some(format!("the approval for {call_id} was already settled"))
                }
                Err(decisions::Unanswered::NotWaiting) => Some(format!(
                    "no approval is waiting for {call_id}; it may already be decided"
                )),
            };
            if let Some(message) = message {
                let _ = events.send(AgentEvent::Error { message });
            }
        }
        Op::CancelTool { call_id } => match lock(&control.running).get(&call_id) {
            Some(token) => token.cancel(),
            None => {
                let _ = events.send(AgentEvent::Error {
                    message: format!("{call_id} is not running"),
                });
            }
        },
        Op::Interrupt => control.interrupt(),
        Op::Shutdown => {
            control.close();
            return Next::Shutdown;
        }
        Op::Notice { message } => {
            let _ = events.send(AgentEvent::Error { message });
        }
    }
    Next::Continue
}

impl Control {
    /// Shutting down: stop journaling, then interrupt.
    pub(super) fn close(&self) {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.interrupt();
    }

    pub(super) fn interrupt(&self) {
        if let Some(token) = lock(&self.turn).as_ref() {
            token.cancel();
        }
        self.decisions.drop_all();
    }
}
