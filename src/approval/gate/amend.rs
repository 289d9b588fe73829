//! A proposal changed before it is answered: a person keeps some hunks of a diff, edits a
//! command, or edits a file change. The changed call is made by the tool (`Previewer::amend`),
//! then frozen and judged again through the whole policy, exactly as a call from the model is:
//! a changed call is a new call, with its own digest, and only that digest can be approved.
//!
//! A change that cannot be made (the file changed since the diff was shown, an empty command), or
//! whose call the policy denies outright, changes nothing: the proposal stays as it was, still
//! waiting for its answer, and the question says why.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::{Gate, Judged, ToolCall, comes_back_exactly, judged_definition, judged_path, record};
use crate::approval::approver::AmendRequest;
use crate::protocol::{
    AmendedCall, Amendment, DecisionSource, FrozenCall, Preview, Ruling, Verdict,
};

/// The call a question is about: the model's, or the call as a person changed it.
pub(super) struct Standing<'a> {
    pub call: Cow<'a, ToolCall>,
    /// The arguments frozen (the call's, with the sandbox profile written in).
    pub frozen_args: Cow<'a, Value>,
    /// The arguments judged: the frozen text parsed back (`frozen_args` when it is the same).
    pub args: Cow<'a, Value>,
    pub verdict: Verdict,
    pub judged: Judged,
    pub digest: String,
    pub amended: Option<AmendedCall>,
}

/// Why a change was not made: said in the question, which stays answerable.
pub(super) struct NotChanged(pub String);

impl Gate {
    /// `standing` as `amendment` changes it, frozen and judged again. `proposed` is the call as
    /// the model proposed it, `shown` the preview the person saw.
    pub(super) fn amended<'a>(
        &self,
        standing: &Standing<'_>,
        proposed: &ToolCall,
        amendment: &Amendment,
        shown: Option<&Preview>,
        by: &DecisionSource,
    ) -> Result<Standing<'a>, NotChanged> {
        let Some(previewer) = &self.previewer else {
            return Err(NotChanged(
                "this session cannot change a proposal before approving it".into(),
            ));
        };
        let made = previewer
            .amend(AmendRequest {
                tool: &standing.call.tool,
                args: &standing.call.args,
                proposed: &proposed.args,
                judged: standing.judged.path.as_deref(),
                amendment,
                shown,
            })
            .map_err(NotChanged)?;
        let call = ToolCall {
            id: standing.call.id.clone(),
            tool: standing.call.tool.clone(),
            args: made.args,
        };
        let frozen_args = self.fill_profile(&call.tool, &call.args).into_owned();
        let frozen = FrozenCall::freeze(&call.tool, &frozen_args);
        let args = if comes_back_exactly(&frozen_args) {
            frozen_args.clone()
        } else {
            frozen
                .verified_args()
                .map_err(|e| NotChanged(format!("the changed call cannot be frozen: {e}")))?
        };
        let verdict = self.assess(&call.tool, &args).verdict;
        let judged = Judged {
            path: judged_path(&verdict),
            mcp_definition: judged_definition(&verdict),
            read_only: verdict.risk == crate::protocol::Risk::Safe,
        };
        // A change is to this call: it may not land on another file.
        if judged.path != standing.judged.path {
            return Err(NotChanged(
                "the change would write another file than the one proposed; nothing was changed"
                    .into(),
            ));
        }
        let original_digest = match &standing.amended {
            Some(earlier) => earlier.original_digest.clone(),
            None => standing.digest.clone(),
        };
        let _ = self.stage(
            "request",
            record::request(&call, &frozen, &verdict, self.agent.as_ref()),
        );
        let _ = self.stage(
            "amendment",
            json!({
                "call_id": call.id, "tool": call.tool,
                "original_digest": original_digest, "from_digest": standing.digest,
                "digest": frozen.digest, "change": made.change,
                "ruling": verdict.ruling, "by": by,
            }),
        );
        if verdict.ruling == Ruling::Deny {
            let why = verdict
                .deciding_reasons()
                .iter()
                .map(|r| r.message.as_str())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(NotChanged(format!(
                "your change was refused, the proposal is as it was: {why}"
            )));
        }
        Ok(Standing {
            call: Cow::Owned(call),
            frozen_args: Cow::Owned(frozen_args),
            args: Cow::Owned(args),
            verdict,
            judged,
            digest: frozen.digest,
            amended: Some(AmendedCall {
                original_digest,
                change: made.change,
                told: made.told,
                amendment: Some(amendment.clone()),
            }),
        })
    }
}
