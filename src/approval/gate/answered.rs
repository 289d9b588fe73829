//! A person's answer, and what the gate does with it: the question asked (and asked again while
//! the person changes the proposal, or is told why a change was refused), then the answer
//! settled against the call as it stands: moved since, allowed once, with a note, for the
//! session (scopes from the call as it stands), denied. See `amend` for how a change is made.

use std::borrow::Cow;
use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::amend::{NotChanged, Standing};
use super::{Gate, GateOutcome, Judged, Said, asking, judged};
use crate::protocol::{Amendment, Decision, DecisionSource, FrozenCall, ToolCall, Verdict};

impl Gate {
    pub(super) async fn ask(
        &self,
        asked: Asked<'_>,
        frozen: FrozenCall,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let Asked {
            call,
            frozen_args,
            args,
            verdict,
            judged,
            hooks,
            hook_asks,
        } = asked;
        let workspace = self.workspace();
        let granted = if hook_asks {
            None
        } else {
            self.covering_grants(&call.tool, args, &verdict, &workspace)
        };
        if let Some(ids) = granted {
            return self.approve(
                call,
                frozen,
                DecisionSource::Grant,
                json!({"grants": ids}),
                judged,
            );
        }
        let mut standing = Standing {
            call: Cow::Borrowed(call),
            frozen_args: Cow::Borrowed(frozen_args),
            args: Cow::Borrowed(args),
            digest: frozen.digest.clone(),
            verdict,
            judged,
            amended: None,
        };
        // The question takes the frozen call: a person may take minutes, and a 100 MB write is
        // not held twice meanwhile. What needs the frozen text after the answer (the approval,
        // a parked request, the question asked again) freezes the same arguments again, and
        // only with the digest asked about.
        let mut request = self.question(
            call,
            frozen,
            &standing.args,
            &standing.verdict,
            &standing.judged,
        );
        // A person may take minutes: the request is on record before they are asked.
        if let Err(e) = self.flush_audit() {
            let message = format!("denied: {e}; nothing runs without a record");
            return self.refuse_standing(&standing, DecisionSource::Error, message, false);
        }
        request.hooks = hooks.clone();
        let answered_by = self.answered_by();
        self.notify_hooks(call);
        loop {
            // Kept for parking and for a change refused: the request without its frozen text.
            let canonical = std::mem::take(&mut request.frozen.canonical);
            let mut kept = request.clone();
            request.frozen.canonical = canonical;
            let answer = self.wait_for_answer(request, cancel).await;
            if let Err((DecisionSource::Parked, _)) = &answer {
                let record = json!({"call_id": call.id, "tool": call.tool, "digest": standing.digest, "decision": "parked", "source": DecisionSource::Parked});
                if let Err(e) = self.audit("decision", record) {
                    return self.refuse_standing(&standing, DecisionSource::Error, e, false);
                }
                return match refrozen(&standing) {
                    Ok(frozen) => {
                        kept.frozen = frozen;
                        GateOutcome::Parked(Box::new(kept))
                    }
                    Err(message) => {
                        self.refuse_standing(&standing, DecisionSource::Error, message, true)
                    }
                };
            }
            let decision = match answer {
                Ok(decision) => decision,
                Err((source, message)) => {
                    return self.refuse_standing(&standing, source, message, true);
                }
            };
            let notice = match decision {
                Decision::Amend {
                    amendment: Amendment::Hunks { keep },
                    ..
                } if keep.is_empty() => {
                    let reason = Some("every hunk of the change was dropped".to_string());
                    return self.settle_answer(
                        &standing,
                        Decision::Deny { reason },
                        answered_by,
                        &workspace,
                    );
                }
                Decision::Amend { amendment, answer } => {
                    let shown = kept.preview.as_ref();
                    match self.amended(&standing, call, &amendment, shown, &answered_by) {
                        Err(NotChanged(why)) => Some(why),
                        Ok(next) => {
                            standing = next;
                            match answer.map(|a| *a) {
                                None => None,
                                Some(Decision::Amend { .. }) => {
                                    let message = "denied: a change may not carry another change; nothing ran".to_string();
                                    return self.refuse_standing(
                                        &standing,
                                        DecisionSource::Error,
                                        message,
                                        true,
                                    );
                                }
                                Some(answer) => {
                                    return self.settle_answer(
                                        &standing,
                                        answer,
                                        answered_by,
                                        &workspace,
                                    );
                                }
                            }
                        }
                    }
                }
                decision => {
                    return self.settle_answer(&standing, decision, answered_by, &workspace);
                }
            };
            // Asked again: the call as it stands now (changed, or as it was with why the change
            // was refused), its preview made again from the file as it is now.
            let frozen = match refrozen(&standing) {
                Ok(frozen) => frozen,
                Err(message) => {
                    return self.refuse_standing(&standing, DecisionSource::Error, message, true);
                }
            };
            request = self.question(
                &standing.call,
                frozen,
                &standing.args,
                &standing.verdict,
                &standing.judged,
            );
            request.hooks = hooks.clone();
            request.amended = standing.amended.clone();
            request.notice = notice;
            // The change (and its request) is on record before the person is asked again.
            if let Err(e) = self.flush_audit() {
                let message = format!("denied: {e}; nothing runs without a record");
                return self.refuse_standing(&standing, DecisionSource::Error, message, false);
            }
        }
    }

    /// Who answers this gate's questions, as the audit names them.
    pub(super) fn answered_by(&self) -> DecisionSource {
        if self.approver.is_human() {
            DecisionSource::User
        } else {
            DecisionSource::Headless
        }
    }

    /// Acts on the answer to the question about `standing`.
    pub(super) fn settle_answer(
        &self,
        standing: &Standing<'_>,
        decision: Decision,
        answered_by: DecisionSource,
        workspace: &Path,
    ) -> GateOutcome {
        let call: &ToolCall = &standing.call;
        let args: &Value = &standing.args;
        // The answer may have taken minutes: a yes is for the path as it was judged.
        if !matches!(decision, Decision::Deny { .. })
            && let Some(why) = judged::moved_since(
                &self.policy,
                &call.tool,
                args,
                standing.judged.path.as_deref(),
            )
        {
            let message = format!("denied: {why}");
            return self.refuse_standing(standing, DecisionSource::Policy, message, true);
        }
        let mut note = None;
        let via = self.approver.answered_via(&call.id);
        let (source, mut detail) = match decision {
            Decision::AllowOnce => (answered_by, json!({"decision": "allow_once"})),
            Decision::AllowNoted { note: said } => {
                let said = said.trim().to_string();
                let detail = json!({"decision": "allow_once", "note": said});
                note = (!said.is_empty()).then_some(said);
                (answered_by, detail)
            }
            Decision::AllowSession { directory } => {
                let session_scopes = standing.verdict.session_scopes();
                let directory_scope =
                    self.directory_scope(&call.tool, &standing.verdict, session_scopes.is_some());
                let scopes = match (directory, directory_scope, session_scopes) {
                    (true, Some(dir), _) => Some(vec![dir]),
                    (_, _, scopes) => scopes,
                };
                match scopes {
                    // Not offered: the human still said yes, to this call only.
                    None => (
                        answered_by,
                        json!({"decision": "allow_once", "note": "a session grant was not offered for this call"}),
                    ),
                    Some(scopes) => {
                        let ids = self.grant_for_session(&call.tool, args, scopes, workspace);
                        self.log_grants();
                        (
                            answered_by,
                            json!({"decision": "allow_session", "granted": ids}),
                        )
                    }
                }
            }
            Decision::Deny { reason } => {
                let message = asking::denied_by(&answered_by, reason.as_deref());
                let Some(via) = via else {
                    return self.refuse_standing(standing, answered_by, message, true);
                };
                let record = json!({
                    "call_id": call.id, "tool": call.tool, "digest": standing.digest,
                    "decision": "deny", "source": answered_by, "message": message, "via": via,
                });
                let _ = self.stage("decision", record);
                return self.refuse_standing(standing, answered_by, message, false);
            }
            Decision::Amend { .. } => {
                let message =
                    "denied: a change to the call came where an answer was expected; nothing ran"
                        .to_string();
                return self.refuse_standing(standing, DecisionSource::Error, message, true);
            }
        };
        if let Some(via) = via {
            detail["via"] = via;
        }
        if let Some(amended) = &standing.amended {
            detail["amended"] = json!({
                "original_digest": amended.original_digest,
                "change": amended.change,
            });
        }
        match refrozen(standing) {
            Ok(frozen) => {
                let mut outcome =
                    self.approve(call, frozen, source, detail, standing.judged.clone());
                if let GateOutcome::Approved(approved) = &mut outcome
                    && (standing.amended.is_some() || note.is_some())
                {
                    approved.said = Some(Box::new(Said {
                        amended: standing.amended.clone(),
                        note,
                    }));
                }
                outcome
            }
            Err(message) => self.refuse_standing(standing, DecisionSource::Error, message, true),
        }
    }

    /// Refuses the call as it stands (see `refuse`).
    pub(super) fn refuse_standing(
        &self,
        standing: &Standing<'_>,
        source: DecisionSource,
        message: String,
        audit: bool,
    ) -> GateOutcome {
        self.refuse(
            &standing.call,
            &standing.digest,
            source,
            message,
            &standing.verdict,
            audit,
        )
    }
}

/// A call the gate asks about, with what it was judged on.
pub(super) struct Asked<'a> {
    pub call: &'a ToolCall,
    /// The arguments frozen (the call's, with the sandbox profile written in).
    pub frozen_args: &'a Value,
    /// The arguments judged: the frozen text parsed back (`frozen_args` when it is the same).
    pub args: &'a Value,
    pub verdict: Verdict,
    pub judged: Judged,
    /// What the person's hooks said about it, for the modal.
    pub hooks: Vec<String>,
    /// A hook asked for a person (or failed): no session grant answers in their place.
    pub hook_asks: bool,
}

/// The call frozen again, after its question took the first frozen text: the same arguments,
/// so the same digest; anything else allows nothing.
fn refrozen(standing: &Standing<'_>) -> Result<FrozenCall, String> {
    let frozen = FrozenCall::freeze(&standing.call.tool, &standing.frozen_args);
    if frozen.digest == standing.digest {
        Ok(frozen)
    } else {
        Err("denied: the call's arguments are not the ones asked about (their digest changed); nothing ran".into())
    }
}
