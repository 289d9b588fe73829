//! How a decision becomes an outcome: staged in the audit log first, then an `Approved` (the
//! value only the gate makes, carrying what the call was judged on) or a `Denial` with every
//! reason. A decision that cannot be put on record allows nothing.

use serde_json::{Value, json};

use super::{Approved, DecisionSource, Denial, Gate, GateOutcome, Judged, ToolCall};
use crate::protocol::FrozenCall;
use crate::protocol::Verdict;

impl Gate {
    pub(super) fn approve(
        &self,
        call: &ToolCall,
        frozen: FrozenCall,
        source: DecisionSource,
        detail: Value,
        judged: Judged,
    ) -> GateOutcome {
        let mut record = json!({
            "call_id": call.id, "tool": call.tool, "digest": frozen.digest,
            "decision": "allow", "source": source, "detail": detail,
        });
        // The one place a file call may touch, on the record with the decision that allowed it.
        if let Some(path) = &judged.path {
            record["path"] = Value::String(path.to_string_lossy().into_owned());
        }
        // And the definition an MCP call was judged on.
        if let Some(definition) = &judged.mcp_definition {
            record["definition"] = Value::String(definition.clone());
        }
        let recorded = match self.stage("decision", record) {
            Ok(recorded) => recorded,
            Err(e) => {
                return GateOutcome::Denied(Denial {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    source: DecisionSource::Error,
                    message: format!("denied: {e}"),
                    reasons: vec![e],
                });
            }
        };
        GateOutcome::Approved(Approved {
            call_id: call.id.clone(),
            frozen,
            source,
            judged_path: judged.path,
            mcp_definition: judged.mcp_definition,
            read_only: judged.read_only,
            recorded,
            said: None,
        })
    }

    pub(super) fn refuse(
        &self,
        call: &ToolCall,
        digest: &str,
        source: DecisionSource,
        message: String,
        verdict: &Verdict,
        audit: bool,
    ) -> GateOutcome {
        let reasons = verdict.reason_lines();
        if audit {
            let record = json!({
                "call_id": call.id, "tool": call.tool, "digest": digest,
                "decision": "deny", "source": source, "message": message,
            });
            // A failed audit write cannot make a deny any more denied. Staged: the batch's
            // end (or the log's close) makes it durable.
            let _ = self.stage("decision", record);
        }
        GateOutcome::Denied(Denial {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            source,
            message,
            reasons,
        })
    }

    pub(super) fn deny_early(
        &self,
        call: &ToolCall,
        digest: &str,
        source: DecisionSource,
        message: String,
    ) -> GateOutcome {
        let _ = self.stage(
            "decision",
            json!({"call_id": call.id, "tool": call.tool, "digest": digest, "decision": "deny", "source": source, "message": message}),
        );
        GateOutcome::Denied(Denial {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            source,
            message: format!("denied: {message}"),
            reasons: Vec::new(),
        })
    }
}
