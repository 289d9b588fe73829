//! What agent events do to the cockpit's state: the conversation's entries, the runs and their
//! output, the batch the modal counts in, and the approval modal's queue (a request joins it, or
//! leaves it when the agent settles it on its own).

use super::*;
use crate::protocol::ApprovalRequest;

impl App {
    /// Applies one agent event. Returns ops to send: the grant list again, when a session grant
    /// may have been stored or used up since it was last asked for.
    pub fn on_agent_event(&mut self, event: AgentEvent) -> Vec<Op> {
        match event {
            AgentEvent::Agent { agent, event } => self.sub_agent_event(agent, *event),
            AgentEvent::AgentStarted {
                agent,
                call_id,
                depth,
                mode,
                sandbox,
            } => {
                self.agent_started(agent, call_id, depth, (mode, sandbox));
                Vec::new()
            }
            AgentEvent::AgentFinished {
                agent,
                status,
                summary,
            } => {
                self.agent_finished(&agent, status, summary);
                Vec::new()
            }
            // A sub-agent's request shows in its own conversation (and the one queue).
            AgentEvent::ApprovalRequested { request } => {
                let of = request
                    .agent
                    .as_ref()
                    .and_then(|a| self.agents.list.iter().position(|v| v.label.id == a.id));
                let event = AgentEvent::ApprovalRequested { request };
                self.with_conversation(of, |app| app.apply_event(event))
            }
            event => self.with_conversation(None, |app| app.apply_event(event)),
        }
    }

    /// Applies one event to the conversation in `entries` (see `agents`).
    pub(super) fn apply_event(&mut self, event: AgentEvent) -> Vec<Op> {
        let mut ops = Vec::new();
        match event {
            event @ (AgentEvent::Agent { .. }
            | AgentEvent::AgentStarted { .. }
            | AgentEvent::AgentFinished { .. }) => return self.on_agent_event(event),
            AgentEvent::TurnStarted { prompt, .. } => self.turn_started(prompt),
            AgentEvent::TextDelta { text } => match self.entries.last_mut() {
                Some(Entry::Assistant(s)) => s.push_str(&text),
                _ => self.entries.push(Entry::Assistant(text)),
            },
            AgentEvent::BatchQueued { calls } => {
                // Numbered in the order the model asked for them.
                for call in &calls {
                    self.ids.note(&call.call_id);
                }
                self.batch = Batch::new(calls);
            }
            AgentEvent::ApprovalRequested { request } => self.approval_requested(*request),
            AgentEvent::ApprovalSettled { call_id, by } => {
                self.drop_request(&call_id);
                let shown = self.ids.note(&call_id);
                self.entries
                    .push(Entry::Notice(format!("{shown} was answered {by}")));
                // An answer given elsewhere may have stored a session grant.
                self.granting.push(call_id);
            }
            AgentEvent::ToolDenied {
                call_id,
                tool,
                title,
                message,
                ..
            } => {
                self.batch.settled(&call_id);
                self.asked.remove(&call_id);
                ops.extend(self.grant_settled(&call_id));
                // What was refused, not only which tool (a line made when it asked keeps its own).
                let title = if title.is_empty() { tool } else { title };
                self.ensure_tool_line(&call_id, title, ToolLine::Denied(message));
                // A request the agent settled on its own (interrupt, timeout) leaves the queue.
                self.drop_request(&call_id);
            }
            AgentEvent::ToolStarted { call_id, title, .. } => {
                ops.extend(self.grant_settled(&call_id));
                self.tool_started(call_id, title);
            }
            AgentEvent::ToolChange { call_id, diff } => {
                // A change nobody was asked about, or one a person changed before approving
                // (only some hunks kept): shown on its run as it is written.
                if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
                    run.diff = Some(changes_only(&diff));
                }
            }
            AgentEvent::WorkspaceChanged { call_id, changes } => {
                if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
                    run.changes = Some(changes);
                }
            }
            AgentEvent::ToolOutput {
                call_id,
                stream,
                text,
                skipped,
            } => {
                if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
                    run.output.skip(stream, skipped);
                    run.output.push(stream, text.as_bytes());
                }
            }
            AgentEvent::ToolFinished {
                call_id,
                status,
                exit_code,
                error,
                log,
                ..
            } => self.tool_finished(&call_id, (status, exit_code), error, log),
            AgentEvent::TurnFinished { outcome, .. } => {
                self.turn_finished(outcome);
                // Grants may have expired or been stored by answers the turn never started.
                ops.push(Op::ListGrants);
            }
            AgentEvent::Error { message } => self.entries.push(Entry::Notice(message)),
            AgentEvent::Grants { grants } => self.grants = grants,
            AgentEvent::Checkpoint { .. } => {}
            AgentEvent::Restored { session } => self.restore(&session),
            AgentEvent::Audit { lines } => self.audit = lines,
            AgentEvent::ShutdownComplete => self.should_quit = true,
        }
        ops
    }

    /// `call_id` started or was refused: if it was answered with a session grant, the gate has
    /// stored the grant by now, and the list is asked for again.
    fn grant_settled(&mut self, call_id: &str) -> Option<Op> {
        let at = self.granting.iter().position(|id| id == call_id)?;
        self.granting.remove(at);
        Some(Op::ListGrants)
    }

    fn turn_started(&mut self, prompt: String) {
        self.turn_running = true;
        if std::mem::take(&mut self.resumed_turn) {
            self.entries.push(Entry::Notice(
                "the turn goes on where it stopped: calls not yet decided are judged again".into(),
            ));
        } else {
            self.entries.push(Entry::User(prompt));
        }
    }

    /// The terminal gained or lost focus: a request that starts waiting while it has none is
    /// announced (once) by a desktop notification.
    pub fn on_focus(&mut self, focused: bool) {
        if let Some(notifier) = &mut self.notifier {
            notifier.on_focus(focused);
        }
    }

    /// The request joins the modal's queue, or opens the modal.
    fn approval_requested(&mut self, request: ApprovalRequest) {
        // A notification names the agent and the tool, never the arguments: it may be shown
        // on a lock screen.
        if let Some(notifier) = &mut self.notifier {
            let agent = match &request.agent {
                Some(a) => format!("Sub-agent {}", a.id),
                None => "The agent".to_string(),
            };
            if let Some(bytes) = notifier.waiting(&request.call_id, &agent, &request.tool) {
                self.nudges.extend(bytes);
            }
        }
        self.batch.asked(&request.call_id);
        self.ids.note(&request.call_id);
        self.ensure_tool_line(&request.call_id, request.title.clone(), ToolLine::Asking);
        // What the run shows later: the change it makes, the sandbox it runs in.
        self.asked.insert(
            request.call_id.clone(),
            Asked {
                diff: request
                    .preview
                    .as_ref()
                    .and_then(|p| p.unified_diff())
                    .map(str::to_string),
                sandbox: request.sandbox.clone(),
            },
        );
        let now = self.now;
        match self.approval_mut() {
            Some(overlay) => overlay.push(request, now),
            None => self
                .overlays
                .push(Overlay::Approval(Box::new(ApprovalOverlay::new(
                    request, now,
                )))),
        }
    }

    /// The request for `call_id` was settled elsewhere: it leaves the queue (and the modal
    /// closes when nothing is left).
    fn drop_request(&mut self, call_id: &str) {
        if let Some(overlay) = self.approval_mut() {
            overlay.retain(|r| r.call_id != call_id);
        }
        self.close_empty_approval();
    }

    fn tool_started(&mut self, call_id: String, title: String) {
        self.batch.settled(&call_id);
        self.ensure_tool_line(&call_id, title.clone(), ToolLine::Running);
        // What runs is titled as it runs: a call a person changed is not the one it was asked as.
        for entry in &mut self.entries {
            if let Entry::Tool {
                call_id: id,
                title: shown,
                ..
            } = entry
                && *id == call_id
            {
                shown.clone_from(&title);
            }
        }
        let short_id = self.ids.note(&call_id);
        let asked = self.asked.remove(&call_id).unwrap_or_default();
        let mut run = Run::new(call_id, short_id, title, self.now);
        run.diff = asked.diff.as_deref().map(changes_only);
        run.sandbox = asked.sandbox;
        self.runs.push(run);
        if self.follow
            && let Some(last) = (0..self.runs.len()).rev().find(|i| self.run_shown(*i))
        {
            self.selected_run = last;
        }
    }

    fn tool_finished(
        &mut self,
        call_id: &str,
        (status, exit_code): (ToolStatus, Option<i32>),
        error: Option<String>,
        log: Option<std::path::PathBuf>,
    ) {
        let mut line = ToolLine::Finished(status, exit_code);
        if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
            run.status = RunStatus::Done(status, exit_code);
            run.ended = Some(self.now);
            if let Some(error) = error {
                run.output
                    .push(Stream::Stderr, format!("{error}\n").as_bytes());
            }
            run.output.finish();
            run.output.shrink_to_fit();
            run.log = log;
            // The sandbox's note, when the run's output carries it.
            let lines = run.output.lines();
            run.refused = super::refused::find_in(lines.iter().map(|(l, _)| l.as_str()));
            line = ToolLine::ended(run.status, run.refused.as_ref());
        }
        self.trim_old_runs();
        self.tool_line(call_id, line);
    }

    fn turn_finished(&mut self, outcome: TurnOutcome) {
        self.turn_running = false;
        self.batch = Batch::default();
        self.asked.clear();
        let notice = match outcome {
            TurnOutcome::Completed => None,
            TurnOutcome::Interrupted => Some("interrupted".to_string()),
            TurnOutcome::StepLimit => Some("stopped: step limit reached".to_string()),
            TurnOutcome::Failed { message } => Some(format!("turn failed: {message}")),
            TurnOutcome::Parked { request, .. } => Some(format!(
                "parked: {} waits for a decision",
                self.ids.note(&request.call_id)
            )),
        };
        if let Some(notice) = notice {
            self.entries.push(Entry::Notice(notice));
        }
        // Nothing can be waiting any more.
        self.overlays.retain(|o| !matches!(o, Overlay::Approval(_)));
    }
}

/// A unified diff cut to what changes: each hunk's header and its added and removed lines (as
/// `diff -U0` would show it), for a run's body, where a summary has room for a few lines only.
fn changes_only(unified: &str) -> String {
    let mut out = String::new();
    let mut in_hunks = false;
    for line in unified.lines() {
        let hunk = line.starts_with("@@");
        in_hunks |= hunk;
        let change = in_hunks && (line.starts_with('+') || line.starts_with('-'));
        if hunk || change {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_keeps_only_what_its_diff_changes() {
        let unified =
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -9 +9 @@\n--- x\n+-- y\n";
        assert_eq!(
            super::changes_only(unified),
            "@@ -1,3 +1,3 @@\n-b\n+B\n@@ -9 +9 @@\n--- x\n+-- y\n"
        );
    }
}
