//! A call whose arguments could not be read (the model's answer held text that is not valid
//! JSON where they should be): refused without being judged, and audited like any refusal.

use crate::approval::gate::{DecisionSource, Gate, GateOutcome};
use crate::protocol::FrozenCall;
use crate::protocol::ToolCall;

impl Gate {
    /// Refuses `call` without judging it: `why` says why it could not be read (or why its
    /// answer's other calls do not run). The refusal is staged in the audit log; the batch's end
    /// (`flush_audit`) makes it durable.
    pub fn refuse_unread(&self, call: &ToolCall, why: String) -> GateOutcome {
        let frozen = FrozenCall::freeze(&call.tool, &call.args);
        self.deny_early(call, &frozen.digest, DecisionSource::Error, why)
    }
}
