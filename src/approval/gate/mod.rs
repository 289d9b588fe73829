//! The one gate every tool call passes: freeze the arguments, assess them, consult session grants,
//! ask a human if needed, and audit every step. An allowed call comes out as `Approved`, a value
//! only this module can make, which the tool registry requires before it runs anything.
//!
//! Every failure is a deny with a reason that says which: approver error, timeout, dropped
//! channel, cancellation, an audit log that cannot be written.
//!
//! A file call's `Approved` also carries the physical path it was judged on (`judged`), so the
//! tool touches what was judged, not what its argument leads to by the time it runs; an MCP
//! call's carries the digest of the tool definition it was judged on, so it runs only against
//! that definition (a server that lists another one by then gets nothing).

mod amend;
mod answered;
use answered::Asked;
mod asking;
mod forecast;
mod hooks;
pub use hooks::AfterCall;
mod judged;
mod outcome;
mod record;
mod settle;
mod unread;

use std::borrow::Borrow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::approval::approver::{Approver, Previewer};
use crate::approval::audit::AuditLog;
use crate::approval::frozen::FrozenError;
use crate::approval::grants::GrantStore;
use crate::approval::policy::{Limits, Policy};

pub use judged::{Judged, judged_definition, judged_path, shown as shown_path};
pub use settle::ParkedDecision;

use crate::clock::Millis;
use crate::clock::now_ms;
use crate::protocol::AgentLabel;
use crate::protocol::AmendedCall;
use crate::protocol::ApprovalRequest;
use crate::protocol::FrozenCall;
use crate::protocol::HookEvent;
use crate::protocol::ReasonSource;
use crate::protocol::Ruling;
use crate::protocol::Verdict;
use crate::protocol::{DecisionSource, ToolCall};

/// A call the gate let through. Not `Clone`, not constructible outside this module: holding one
/// is proof the gate allowed exactly these frozen arguments.
#[derive(Debug)]
pub struct Approved {
    call_id: String,
    frozen: FrozenCall,
    source: DecisionSource,
    judged_path: Option<PathBuf>,
    mcp_definition: Option<String>,
    read_only: bool,
    /// The staged audit record of the decision; `None` for a gate without an audit log.
    recorded: Option<crate::approval::audit::Receipt>,
    /// What the person who approved it changed or said, when they did (boxed: most calls
    /// carry neither).
    said: Option<Box<Said>>,
}

/// What a person changed or said when approving a call.
#[derive(Debug, Default)]
struct Said {
    /// The call as they changed it before approving.
    amended: Option<AmendedCall>,
    /// Their word for the model.
    note: Option<String>,
}

impl Approved {
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    pub fn tool(&self) -> &str {
        &self.frozen.tool
    }

    pub fn frozen(&self) -> &FrozenCall {
        &self.frozen
    }

    pub fn source(&self) -> &DecisionSource {
        &self.source
    }

    /// For a file tool: the physical path the policy judged, the one place the tool may touch.
    pub fn judged_path(&self) -> Option<&Path> {
        self.judged_path.as_deref()
    }

    /// For an MCP tool: the digest of the definition the policy judged the call on, the only
    /// one it may run against.
    pub fn mcp_definition(&self) -> Option<&str> {
        self.mcp_definition.as_deref()
    }

    /// The policy found the call only reads: it cannot change the workspace.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The call as a person changed it before approving (what the model is told of it), if
    /// they did: what runs is this call, frozen as `frozen`.
    pub fn amended(&self) -> Option<&AmendedCall> {
        self.said.as_ref()?.amended.as_ref()
    }

    /// The word for the model the person approved it with, if any.
    pub fn note(&self) -> Option<&str> {
        self.said.as_ref()?.note.as_deref()
    }

    /// The arguments to run, after re-checking the digest the human approved.
    pub fn args(&self) -> Result<Value, FrozenError> {
        self.frozen.verified_args()
    }

    /// Waits until the decision that allowed this call is durable in the audit log (the gate
    /// stages it; a group commit writes it). Executing a tool calls this first: nothing runs
    /// without a record, and a log that could not take it fails the call closed.
    pub async fn recorded(&self) -> Result<(), String> {
        let Some(receipt) = self.recorded.clone() else {
            return Ok(());
        };
        let waited = tokio::task::spawn_blocking(move || receipt.wait()).await;
        match waited {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!(
                "the audit log could not record the decision ({e}); nothing ran"
            )),
            Err(e) => Err(format!(
                "waiting for the audit log failed ({e}); nothing ran"
            )),
        }
    }
}

/// A call the gate refused, with the reasons to give back to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Denial {
    pub call_id: String,
    pub tool: String,
    pub source: DecisionSource,
    /// One sentence for the model, e.g. "denied by the user: use cargo check instead".
    pub message: String,
    pub reasons: Vec<String>,
}

#[derive(Debug)]
pub enum GateOutcome {
    Approved(Approved),
    Denied(Denial),
    /// Nobody could answer now; the request is to be kept and decided later. Nothing ran.
    Parked(Box<ApprovalRequest>),
}

impl GateOutcome {
    pub fn is_approved(&self) -> bool {
        matches!(self, GateOutcome::Approved(_))
    }
}

pub type Clock = Arc<dyn Fn() -> Millis + Send + Sync>;

pub fn system_clock() -> Clock {
    Arc::new(now_ms)
}

#[derive(Clone)]
pub struct GateConfig {
    pub session: String,
    /// How long a human has to answer; `None` waits until cancelled.
    pub approval_timeout: Option<Duration>,
    /// A shorter (or longer) wait for dangerous calls; `None` uses `approval_timeout`.
    pub dangerous_timeout: Option<Duration>,
    /// How long a session grant lives; `None` for the rest of the session.
    pub grant_ttl: Option<Duration>,
}

pub struct Gate {
    policy: Arc<Policy>,
    grants: Arc<GrantStore>,
    approver: Arc<dyn Approver>,
    audit: Option<Arc<AuditLog>>,
    config: GateConfig,
    clock: Clock,
    previewer: Option<Arc<dyn Previewer>>,
    grant_log: Option<GrantLog>,
    /// For a sub-agent's view of the gate: the agent its requests name, and the mode and
    /// sandbox its calls are judged under (see [`Gate::for_agent`]).
    agent: Option<AgentLabel>,
    limits: Option<Limits>,
    /// The person's hooks (`[[hooks]]`), when there are any.
    hooks: Option<Arc<dyn crate::protocol::Hooks>>,
}

/// Called with a session's live grants whenever they change, to keep them beyond this process.
pub type GrantLog = Arc<dyn Fn(&[crate::approval::grants::Grant]) + Send + Sync>;

impl Gate {
    pub fn new(
        policy: Arc<Policy>,
        grants: Arc<GrantStore>,
        approver: Arc<dyn Approver>,
        audit: Option<Arc<AuditLog>>,
        config: GateConfig,
    ) -> Gate {
        Gate {
            policy,
            grants,
            approver,
            audit,
            config,
            clock: system_clock(),
            previewer: None,
            grant_log: None,
            agent: None,
            limits: None,
            hooks: None,
        }
    }

    /// The gate as a sub-agent passes it: the same rules, session grants, audit log and
    /// approver (so its requests join the one queue), its calls judged under `limits`, and
    /// every request and record naming `agent`. `Err` says why, when `limits` would let the
    /// sub-agent do more than the agent starting it (the gate refused such a spawn already;
    /// this holds even if it did not).
    pub fn for_agent(&self, agent: AgentLabel, limits: Limits) -> Result<Gate, String> {
        let parent_mode = self.policy.mode_within(self.limits.as_ref());
        if limits.mode.strictness() < parent_mode.strictness() {
            return Err(format!(
                "a sub-agent cannot run in a wider mode than the agent starting it: `{}` lets more through than `{}`",
                limits.mode.as_str(),
                parent_mode.as_str()
            ));
        }
        let parent_profile = self.policy.profile_within(self.limits.as_ref());
        let profile = limits.profile.or(parent_profile);
        if let (Some(asked), Some(parent)) = (profile, parent_profile)
            && asked.wider_than(parent)
        {
            return Err(format!(
                "a sub-agent cannot run in a wider sandbox than the agent starting it: `{}` lets more through than `{}`",
                asked.as_str(),
                parent.as_str()
            ));
        }
        Ok(Gate {
            policy: self.policy.clone(),
            grants: self.grants.clone(),
            approver: self.approver.clone(),
            audit: self.audit.clone(),
            config: self.config.clone(),
            clock: self.clock.clone(),
            previewer: self.previewer.clone(),
            grant_log: self.grant_log.clone(),
            hooks: self.hooks.clone(),
            agent: Some(agent),
            limits: Some(Limits {
                mode: limits.mode,
                profile,
            }),
        })
    }

    /// The sub-agent this view of the gate judges for (`None`: the session's own agent).
    pub fn agent(&self) -> Option<&AgentLabel> {
        self.agent.as_ref()
    }

    /// The mode and sandbox this gate's calls are judged under.
    pub fn limits(&self) -> Limits {
        Limits {
            mode: self.policy.mode_within(self.limits.as_ref()),
            profile: self.policy.profile_within(self.limits.as_ref()),
        }
    }

    /// Judges a call under this gate's limits.
    fn assess(&self, tool: &str, args: &Value) -> crate::approval::policy::Assessment {
        self.policy.assess_within(tool, args, self.limits.as_ref())
    }

    /// A call's arguments with the sandbox profile it will run under written in.
    fn fill_profile<'a>(&self, tool: &str, args: &'a Value) -> std::borrow::Cow<'a, Value> {
        self.policy
            .with_profile_within(tool, args, self.limits.as_ref())
    }

    /// Runs the person's hooks around each call (see `hooks`).
    pub fn with_hooks(mut self, hooks: Option<Arc<dyn crate::protocol::Hooks>>) -> Gate {
        self.hooks = hooks;
        self
    }

    pub fn with_grant_log(mut self, log: GrantLog) -> Gate {
        self.grant_log = Some(log);
        self
    }

    fn log_grants(&self) {
        if let Some(log) = &self.grant_log {
            log(&self.grants.list(&self.config.session, (self.clock)()));
        }
    }

    /// Revokes a grant (and records that the session no longer has it).
    pub fn revoke_grant(&self, id: u64) -> bool {
        let revoked = self.grants.revoke(id);
        self.log_grants();
        revoked
    }

    pub fn with_previewer(mut self, previewer: Arc<dyn Previewer>) -> Gate {
        self.previewer = Some(previewer);
        self
    }

    pub fn with_clock(mut self, clock: Clock) -> Gate {
        self.clock = clock;
        self
    }

    pub fn grants(&self) -> &GrantStore {
        &self.grants
    }

    pub fn session(&self) -> &str {
        &self.config.session
    }

    /// This session's audit records as readable lines (empty without an audit log).
    pub fn audit_lines(&self) -> Vec<String> {
        match &self.audit {
            Some(log) => crate::approval::audit::read_records(log.path())
                .map(|records| {
                    records
                        .iter()
                        .filter_map(crate::approval::audit::summary_line)
                        .collect()
                })
                .unwrap_or_else(|e| vec![format!("cannot read the audit log: {e}")]),
            None => vec!["this session keeps no audit log".into()],
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    fn workspace(&self) -> PathBuf {
        self.policy.paths.workspace.clone()
    }

    /// Appends a record and waits until it is durable (with everything staged before it).
    fn audit(&self, kind: &str, body: Value) -> Result<(), String> {
        match &self.audit {
            Some(log) => log.append(kind, body).map(|_| ()).map_err(|e| {
                format!("the audit log cannot be written ({e}); nothing runs without a record")
            }),
            None => Ok(()),
        }
    }

    /// Stages a record for the next group commit. What waits for it: the call its decision
    /// allows (`Approved::recorded`), the end of the batch (`flush_audit`), the log's close.
    fn stage(
        &self,
        kind: &str,
        body: Value,
    ) -> Result<Option<crate::approval::audit::Receipt>, String> {
        match &self.audit {
            Some(log) => log.stage_shared(kind, body).map(Some).map_err(|e| {
                format!("the audit log cannot be written ({e}); nothing runs without a record")
            }),
            None => Ok(None),
        }
    }

    /// Makes every record staged so far durable. Blocks while a commit runs (call it where a
    /// few milliseconds of blocking are fine, or through `spawn_blocking`).
    pub fn flush_audit(&self) -> Result<(), String> {
        match &self.audit {
            Some(log) => log
                .flush()
                .map_err(|e| format!("the audit log cannot be written ({e})")),
            None => Ok(()),
        }
    }

    /// Makes every record staged so far durable, off the async runtime's threads.
    pub async fn flush_audit_async(&self) -> Result<(), String> {
        let Some(log) = self.audit.clone() else {
            return Ok(());
        };
        match tokio::task::spawn_blocking(move || log.flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("the audit log cannot be written ({e})")),
            Err(e) => Err(format!("waiting for the audit log failed ({e})")),
        }
    }

    /// Records what happened when an approved call ran (or failed to).
    pub fn record_outcome(
        &self,
        call_id: &str,
        outcome: &str,
        detail: Value,
    ) -> Result<(), String> {
        // Staged: the batch makes its outcomes durable together before its results go back.
        self.stage(
            "outcome",
            json!({"call_id": call_id, "outcome": outcome, "detail": detail}),
        )
        .map(|_| ())
    }

    /// Decides one call. Never panics, never runs anything, always audits. Takes the call or a
    /// borrow of it: nothing of it is copied (the agent lends the calls its conversation holds).
    pub async fn check(
        &self,
        call: impl Borrow<ToolCall>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let call = call.borrow();
        // An MCP tool whose server is still starting is judged once it has listed its tools.
        if let Some(mcp) = &self.policy.mcp {
            let limit = crate::mcp::config::DEFAULT_STARTUP_TIMEOUT;
            tokio::select! {
                _ = mcp.settle(&call.tool, limit) => {}
                _ = cancel.cancelled() => {}
            }
        }
        // A `bash` call is frozen with the sandbox profile it will run under, so the profile is
        // part of what the human approves, of the digest, and of a parked call.
        let frozen_args = self.fill_profile(&call.tool, &call.args);
        let frozen = FrozenCall::freeze(&call.tool, &frozen_args);
        // The policy judges the call that will run: the frozen text parsed back. That is the
        // value just frozen whenever it holds no float (strings, integers, booleans and null come
        // back exactly), so a 100 MB write is not parsed back to be judged; a float may come
        // back a unit off, so then the text is parsed.
        let parsed;
        let args: &Value = if comes_back_exactly(&frozen_args) {
            &frozen_args
        } else {
            parsed = match frozen.verified_args() {
                Ok(args) => args,
                Err(e) => {
                    return self.deny_early(
                        call,
                        &frozen.digest,
                        DecisionSource::Error,
                        e.to_string(),
                    );
                }
            };
            &parsed
        };
        let verdict = self.assess(&call.tool, args).verdict;
        let judged = Judged {
            path: judged_path(&verdict),
            mcp_definition: judged_definition(&verdict),
            read_only: verdict.risk == crate::protocol::Risk::Safe,
        };
        if let Err(e) = self.stage(
            "request",
            record::request(call, &frozen, &verdict, self.agent.as_ref()),
        ) {
            return self.refuse(
                call,
                &frozen.digest,
                DecisionSource::Error,
                e,
                &verdict,
                false,
            );
        }
        // The person's hooks: never over a hard deny.
        let mut hooked = hooks::HookVerdict::default();
        if verdict.ruling != Ruling::Deny {
            let on = (args, judged.path.as_deref(), verdict.parts.as_slice());
            self.run_hooks(HookEvent::PreToolUse, call, on, &mut hooked)
                .await;
            if verdict.ruling == Ruling::Ask || hooked.ask {
                self.run_hooks(HookEvent::PermissionRequest, call, on, &mut hooked)
                    .await;
            }
        }
        if let Some((hook, digest, reason)) = &hooked.deny {
            let message = format!("denied by hook {hook}: {reason}");
            let record = json!({
                "call_id": call.id, "tool": call.tool, "digest": frozen.digest,
                "decision": "deny", "source": DecisionSource::Hook, "message": message,
                "hook": hook, "hook_digest": digest,
            });
            let _ = self.stage("decision", record);
            return self.refuse(
                call,
                &frozen.digest,
                DecisionSource::Hook,
                message,
                &verdict,
                false,
            );
        }
        if let Some((hook, digest, reason)) = hooked.allowed_by().cloned() {
            if self.hook_may_allow(verdict.ruling, call, args) {
                let detail = json!({"hook": hook, "hook_digest": digest, "reason": reason});
                return self.approve(call, frozen, DecisionSource::Hook, detail, judged);
            }
            if verdict.ruling == Ruling::Ask {
                hooked.lines.push(format!(
                    "hook {hook} allows it, but a call that would run without a sandbox is a person's call"
                ));
            }
        }
        match verdict.ruling {
            Ruling::Deny => {
                let source = source_of(&verdict, Ruling::Deny);
                let message = format!(
                    "denied: {}",
                    verdict
                        .deciding_reasons()
                        .iter()
                        .map(|r| r.message.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                self.refuse(call, &frozen.digest, source, message, &verdict, true)
            }
            Ruling::Allow if !hooked.ask => {
                let source = source_of(&verdict, Ruling::Allow);
                self.approve(call, frozen, source, json!({}), judged)
            }
            // Asked about: by the policy, or by a hook (one that asks, or one that failed).
            Ruling::Allow | Ruling::Ask => {
                let asked = Asked {
                    call,
                    frozen_args: &frozen_args,
                    args,
                    verdict,
                    judged,
                    hooks: hooked.lines,
                    hook_asks: hooked.ask,
                };
                self.ask(asked, frozen, cancel).await
            }
        }
    }
}

/// Whether the canonical text of `value` parses back to exactly `value`: true unless it holds a
/// float (serde_json reads a float's shortest text back to the nearest value it finds, which
/// may be a unit off).
fn comes_back_exactly(value: &Value) -> bool {
    match value {
        Value::Number(n) => !n.is_f64(),
        Value::Array(items) => items.iter().all(comes_back_exactly),
        Value::Object(map) => map.values().all(comes_back_exactly),
        Value::Null | Value::Bool(_) | Value::String(_) => true,
    }
}

/// Who decided a verdict that needed no human: a rule or the mode if one of them set the ruling.
fn source_of(verdict: &Verdict, ruling: Ruling) -> DecisionSource {
    let deciding: Vec<_> = verdict
        .reasons
        .iter()
        .filter(|r| r.ruling == ruling)
        .collect();
    if deciding
        .iter()
        .any(|r| matches!(r.source, ReasonSource::Rule { .. }))
    {
        DecisionSource::Rule
    } else if deciding
        .iter()
        .any(|r| matches!(r.source, ReasonSource::Mode { .. }))
    {
        DecisionSource::Mode
    } else {
        DecisionSource::Policy
    }
}

#[cfg(test)]
mod tests;
