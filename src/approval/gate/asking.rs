//! Asking: how long a question may wait, which scopes the modal offers for the session, the
//! wait for the answer, and the grants an "allow for the session" stores. Which tools may be
//! granted a whole directory is the tool's own declaration (`ToolDescriptor`), not a list here.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{DecisionSource, Gate, Judged, ToolCall};
use crate::approval::approver::ApproverError;
use crate::approval::grants::NewGrant;
use crate::clock::Millis;
use crate::protocol::ApprovalRequest;
use crate::protocol::Decision;
use crate::protocol::FrozenCall;
use crate::protocol::GrantScope;
use crate::protocol::Risk;
use crate::protocol::Subject;
use crate::protocol::Verdict;

impl Gate {
    /// How long a question about a call of this risk may wait for its answer, if bounded.
    pub(super) fn time_limit(&self, risk: Risk) -> Option<Duration> {
        match risk {
            Risk::Dangerous => self
                .config
                .dangerous_timeout
                .or(self.config.approval_timeout),
            _ => self.config.approval_timeout,
        }
    }

    /// The question put to the approver: the call (its frozen text, which the question takes),
    /// its verdict, what a session grant would cover, the preview, and when the question lapses.
    pub(super) fn question(
        &self,
        call: &ToolCall,
        frozen: FrozenCall,
        args: &Value,
        verdict: &Verdict,
        judged: &Judged,
    ) -> ApprovalRequest {
        let session_scopes = verdict.session_scopes();
        let directory_scope = self.directory_scope(&call.tool, verdict, session_scopes.is_some());
        let preview = self
            .previewer
            .as_ref()
            .and_then(|p| p.preview(&call.tool, args, judged.path.as_deref()));
        ApprovalRequest {
            deadline_ms: self
                .time_limit(verdict.risk)
                .map(|l| (self.clock)() + l.as_millis() as Millis),
            code: None,
            preview,
            sandbox: crate::sandbox::title_label(&call.tool, &frozen, verdict),
            amended: None,
            notice: None,
            hooks: Vec::new(),
            agent: self.agent.clone(),
            call_id: call.id.clone(),
            session: self.config.session.clone(),
            tool: call.tool.clone(),
            // The gate knows no tool's title; the agent sets it before the request is shown.
            title: String::new(),
            risk: verdict.risk,
            frozen,
            no_session_grant: verdict.no_session_grant.clone(),
            session_scopes,
            directory_scope,
            verdict: verdict.clone(),
        }
    }

    /// The session grants that already cover every part of this call that asks, if any do. A
    /// call that could not be granted for the session cannot be covered by a grant either:
    /// `sudo cargo test` runs the same argv as `cargo test`, but it is not the same request.
    pub(super) fn covering_grants(
        &self,
        tool: &str,
        args: &Value,
        verdict: &Verdict,
        workspace: &Path,
    ) -> Option<Vec<u64>> {
        if verdict.no_session_grant.is_some() {
            return None;
        }
        let subjects = verdict.asking_subjects()?;
        self.grants.cover(
            &self.config.session,
            workspace,
            &crate::sandbox::grant_tool(tool, args),
            &subjects,
            (self.clock)(),
        )
    }

    /// The directory a session grant may cover instead of one file: offered for a call of a tool
    /// that names one file (as its catalog entry declares), judged on that one path, when the
    /// call may be granted for the session at all.
    pub(super) fn directory_scope(
        &self,
        tool: &str,
        verdict: &Verdict,
        grantable: bool,
    ) -> Option<GrantScope> {
        let names_one_file = self
            .policy
            .catalog
            .get(tool)
            .is_some_and(|d| d.takes_directory_scope());
        match verdict.parts.as_slice() {
            [only] if grantable && names_one_file => match &only.subject {
                Some(Subject::Path(path)) => path.parent().map(|dir| GrantScope::Directory {
                    path: dir.to_path_buf(),
                }),
                _ => None,
            },
            _ => None,
        }
    }

    /// Stores one session grant per scope; returns their ids.
    pub(super) fn grant_for_session(
        &self,
        tool: &str,
        args: &Value,
        scopes: Vec<GrantScope>,
        workspace: &Path,
    ) -> Vec<u64> {
        let now = (self.clock)();
        scopes
            .into_iter()
            .map(|scope| {
                self.grants
                    .add(
                        NewGrant {
                            session: self.config.session.clone(),
                            workspace: workspace.to_path_buf(),
                            tool: crate::sandbox::grant_tool(tool, args),
                            scope,
                            ttl_ms: self.config.grant_ttl.map(|d| d.as_millis() as Millis),
                            max_uses: None,
                        },
                        now,
                    )
                    .id
            })
            .collect()
    }

    pub(super) async fn wait_for_answer(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> Result<Decision, (DecisionSource, String)> {
        let limit = self.time_limit(request.risk);
        let asking = self.approver.ask(request);
        let timed = async {
            match limit {
                Some(limit) => tokio::time::timeout(limit, asking).await.map_err(|_| limit),
                None => Ok(asking.await),
            }
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err((DecisionSource::Cancelled, "denied: cancelled while waiting for approval (interrupt); nothing ran".into())),
            answer = timed => match answer {
                Err(limit) => Err((DecisionSource::Timeout, format!("denied: timed out after {}s waiting for approval; nothing ran", limit.as_secs()))),
                Ok(Err(ApproverError::ChannelClosed)) => Err((DecisionSource::Error, "denied: nobody to ask, the approval channel is closed; nothing ran".into())),
                Ok(Err(ApproverError::NoAnswer)) => Err((DecisionSource::Error, "denied: the approver went away without answering; nothing ran".into())),
                Ok(Err(ApproverError::Failed(e))) => Err((DecisionSource::Error, format!("denied: the approver failed ({e}); nothing ran"))),
                Ok(Err(ApproverError::Park)) => Err((DecisionSource::Parked, String::new())),
                Ok(Ok(decision)) => Ok(decision),
            }
        }
    }
}

/// What a refusal at the modal (or by a headless run) tells the model.
pub(super) fn denied_by(answered_by: &DecisionSource, reason: Option<&str>) -> String {
    let who = if *answered_by == DecisionSource::User {
        "the user"
    } else {
        "a headless run"
    };
    match reason.map(str::trim) {
        Some(r) if !r.is_empty() => format!("denied by {who}: {r}"),
        _ => format!("denied by {who}"),
    }
}
