//! An answer with calls whose arguments could not be read (not valid JSON): none of its calls
//! runs, and the turn goes on. Each call gets a result saying why: the malformed ones what was
//! wrong, the others that they were held back with them. The model may send them again; one
//! that keeps sending malformed calls meets the step limit, and the turn says so.

use crate::agent::Agent;
use crate::agent::batch::{refused_title, tool_message};
use crate::approval::gate::GateOutcome;
use crate::model::{CallResult, Message};
use crate::protocol::AgentEvent;
use crate::protocol::ToolCall;

impl Agent {
    /// The results of `calls`, none of which runs: `malformed` names the ones that could not be
    /// read (their place in `calls`) and why. Every refusal is audited and shown to the driver.
    pub(super) fn refuse_unread(
        &self,
        calls: &[ToolCall],
        malformed: &[(usize, String)],
    ) -> Vec<Message> {
        let Some((first, _)) = malformed.first() else {
            return Vec::new();
        };
        let culprit = &calls[*first];
        let results = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let why = match malformed.iter().find(|(at, _)| *at == index) {
                    Some((_, why)) => format!(
                        "the call was not run: {why}. Nothing of this answer ran; send the call \
                         again with its arguments as one valid JSON object."
                    ),
                    None => format!(
                        "the call was not run: call `{}` ({}) of the same answer could not be \
                         read, so none of that answer's calls ran. Send this one again if it is \
                         still needed.",
                        culprit.tool, culprit.id
                    ),
                };
                let (source, message) = match self.gate.refuse_unread(call, why) {
                    GateOutcome::Denied(denial) => (denial.source, denial.message),
                    // `refuse_unread` only refuses; anything else would be a bug, and it still
                    // runs nothing.
                    _ => (
                        crate::protocol::DecisionSource::Error,
                        "denied: the call's arguments could not be read".to_string(),
                    ),
                };
                self.emit(AgentEvent::ToolDenied {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    title: refused_title(call),
                    source,
                    message: message.clone(),
                });
                tool_message(call, CallResult::Denied, message)
            })
            .collect();
        if let Err(e) = self.gate.flush_audit() {
            self.emit(AgentEvent::Error {
                message: format!("the refusals of an unreadable answer could not be audited ({e})"),
            });
        }
        results
    }
}
