//! Settling a parked call later, by one-time code (`airlock approve CODE`, then `resume`): the
//! frozen text is checked against its digest again, a file call must still land on the path it
//! was judged on when it parked, and the decision is audited with source `remote_code`.

use serde_json::json;

use std::borrow::Cow;

use super::amend::{NotChanged, Standing};
use super::{DecisionSource, Denial, Gate, GateOutcome, Judged, ToolCall, judged};
use crate::approval::grants::NewGrant;
use crate::clock::Millis;
use crate::protocol::FrozenCall;
use crate::protocol::{Amendment, Decision, Preview};

impl Gate {
    /// Settles a parked call with the decision taken later by one-time code. The frozen text must
    /// still match its digest (a tampered approval is refused). Audited with source `remote_code`.
    ///
    /// `judged` is what the call was judged on when it parked (what the human saw): an allowed
    /// file call runs only if its path still lands there, and only there; an MCP call only
    /// against the tool definition it was judged on.
    ///
    /// `change` is a change given with the code (`airlock approve CODE --hunks 1,3` or
    /// `--command '...'`) and the preview the code showed: the changed call is made, frozen and
    /// judged again, and only it can run; a change that cannot be made, or whose call the policy
    /// denies, denies the call.
    pub fn settle_parked(
        &self,
        call_id: &str,
        frozen: FrozenCall,
        answer: ParkedDecision,
        judged: Judged,
    ) -> GateOutcome {
        let ParkedDecision {
            allow,
            session_grant,
            reason,
            change,
        } = answer;
        let call = ToolCall {
            id: call_id.to_string(),
            tool: frozen.tool.clone(),
            args: serde_json::Value::Null,
        };
        let args = match frozen.verified_args() {
            Ok(args) => args,
            Err(e) => {
                return self.deny_early(
                    &call,
                    &frozen.digest,
                    DecisionSource::Error,
                    format!("the parked call was tampered with: {e}"),
                );
            }
        };
        if let (true, Some((amendment, shown))) = (allow, change) {
            return self.settle_changed(
                call,
                frozen,
                args,
                judged,
                (amendment, shown),
                session_grant,
            );
        }
        if allow {
            if let Some(why) =
                judged::moved_since(&self.policy, &frozen.tool, &args, judged.path.as_deref())
            {
                return self.deny_early(&call, &frozen.digest, DecisionSource::Policy, why);
            }
            // Allowed for the session: the same scopes the modal would have offered.
            let mut granted = Vec::new();
            if session_grant {
                let verdict = self.assess(&frozen.tool, &args).verdict;
                let now = (self.clock)();
                for scope in verdict.session_scopes().unwrap_or_default() {
                    let grant = self.grants.add(
                        NewGrant {
                            session: self.config.session.clone(),
                            workspace: self.workspace(),
                            tool: crate::sandbox::grant_tool(&frozen.tool, &args),
                            scope,
                            ttl_ms: self.config.grant_ttl.map(|d| d.as_millis() as Millis),
                            max_uses: None,
                        },
                        now,
                    );
                    granted.push(grant.id);
                }
                self.log_grants();
            }
            let decision = if session_grant {
                "allow_session"
            } else {
                "allow_once"
            };
            self.approve(
                &call,
                frozen,
                DecisionSource::RemoteCode,
                json!({"decision": decision, "granted": granted}),
                judged,
            )
        } else {
            let message = match reason.as_deref().map(str::trim) {
                Some(r) if !r.is_empty() => format!("denied by the user: {r}"),
                _ => "denied by the user".to_string(),
            };
            let record = json!({"call_id": call_id, "tool": frozen.tool, "digest": frozen.digest, "decision": "deny", "source": DecisionSource::RemoteCode, "message": message});
            let _ = self.audit("decision", record);
            GateOutcome::Denied(Denial {
                call_id: call_id.to_string(),
                tool: frozen.tool.clone(),
                source: DecisionSource::RemoteCode,
                message,
                reasons: Vec::new(),
            })
        }
    }
}

/// The answer given to a parked call by its code.
#[derive(Debug, Clone, Default)]
pub struct ParkedDecision {
    pub allow: bool,
    /// Allowed for the session: the call's scopes become session grants.
    pub session_grant: bool,
    pub reason: Option<String>,
    /// A change given with the answer, and the preview the code showed.
    pub change: Option<(Amendment, Option<Preview>)>,
}

impl Gate {
    /// A parked call allowed by its code with a change: the changed call, judged again, settled
    /// with the code's answer; refused when the change cannot be made or is denied.
    fn settle_changed(
        &self,
        call: ToolCall,
        frozen: FrozenCall,
        args: serde_json::Value,
        judged: Judged,
        (amendment, shown): (Amendment, Option<Preview>),
        session_grant: bool,
    ) -> GateOutcome {
        let verdict = self.assess(&frozen.tool, &args).verdict;
        let proposed = ToolCall {
            args: args.clone(),
            ..call
        };
        let standing = Standing {
            call: Cow::Borrowed(&proposed),
            frozen_args: Cow::Borrowed(&args),
            args: Cow::Borrowed(&args),
            verdict,
            judged,
            digest: frozen.digest.clone(),
            amended: None,
        };
        if let Amendment::Hunks { keep } = &amendment
            && keep.is_empty()
        {
            return self.deny_early(
                &proposed,
                &frozen.digest,
                DecisionSource::RemoteCode,
                "every hunk of the change was dropped".into(),
            );
        }
        match self.amended(
            &standing,
            &proposed,
            &amendment,
            shown.as_ref(),
            &DecisionSource::RemoteCode,
        ) {
            Err(NotChanged(why)) => self.deny_early(
                &proposed,
                &frozen.digest,
                DecisionSource::RemoteCode,
                format!("the change given with the code was not made, so nothing ran: {why}"),
            ),
            Ok(changed) => {
                let decision = if session_grant {
                    Decision::AllowSession { directory: false }
                } else {
                    Decision::AllowOnce
                };
                self.settle_answer(
                    &changed,
                    decision,
                    DecisionSource::RemoteCode,
                    &self.workspace(),
                )
            }
        }
    }
}
