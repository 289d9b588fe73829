//! What agent events do to the cockpit's state: the conversation's entries, the runs and their
//! output, the batch the modal counts in, and the approval modal's queue (a request joins it, or
//! leaves it when the agent settles it on its own).

use super::*;
use crate::approval::approver::ApprovalRequest;

impl App {
    /// Applies one agent event. Returns ops to send (none today; kept for symmetry with keys).
    pub fn on_agent_event(&mut self, event: AgentEvent) -> Vec<Op> {
        match event {
            AgentEvent::TurnStarted { prompt, .. } => self.turn_started(prompt),
            AgentEvent::TextDelta { text } => match self.entries.last_mut() {
                Some(Entry::Assistant(s)) => s.push_str(&text),
                _ => self.entries.push(Entry::Assistant(text)),
            },
            AgentEvent::BatchQueued { calls } => self.batch = Batch::new(calls),
            AgentEvent::ApprovalRequested { request } => self.approval_requested(*request),
            AgentEvent::ApprovalSettled { call_id, by } => {
                self.drop_request(&call_id);
                self.entries
                    .push(Entry::Notice(format!("{call_id} was answered by {by}")));
            }
            AgentEvent::ToolDenied {
                call_id,
                tool,
                title,
                message,
                ..
            } => {
                self.batch.settled(&call_id);
                // What was refused, not only which tool (a line made when it asked keeps its own).
                let title = if title.is_empty() { tool } else { title };
                self.ensure_tool_line(&call_id, title, ToolLine::Denied(message));
                // A request the agent settled on its own (interrupt, timeout) leaves the queue.
                self.drop_request(&call_id);
            }
            AgentEvent::ToolStarted { call_id, title, .. } => self.tool_started(call_id, title),
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
            AgentEvent::TurnFinished { outcome, .. } => self.turn_finished(outcome),
            AgentEvent::Error { message } => self.entries.push(Entry::Notice(message)),
            AgentEvent::Grants { grants } => self.grants = grants,
            AgentEvent::Checkpoint { .. } => {}
            AgentEvent::Restored { session } => self.restore(&session),
            AgentEvent::Audit { lines } => self.audit = lines,
            AgentEvent::ShutdownComplete => self.should_quit = true,
        }
        Vec::new()
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

    /// The request joins the modal's queue, or opens the modal.
    fn approval_requested(&mut self, request: ApprovalRequest) {
        self.batch.asked(&request.call_id);
        self.ensure_tool_line(&request.call_id, request.title.clone(), ToolLine::Asking);
        let now = self.now;
        match self.approval_mut() {
            Some(overlay) => overlay.push(request),
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
        self.runs.push(Run {
            call_id,
            title,
            status: RunStatus::Running,
            started: self.now,
            ended: None,
            output: BoundedOutput::new(),
            log: None,
            trimmed: false,
            earlier: false,
        });
        if self.follow {
            self.selected_run = self.runs.len() - 1;
        }
    }

    fn tool_finished(
        &mut self,
        call_id: &str,
        (status, exit_code): (ToolStatus, Option<i32>),
        error: Option<String>,
        log: Option<std::path::PathBuf>,
    ) {
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
        }
        self.trim_old_runs();
        self.tool_line(call_id, ToolLine::Finished(status, exit_code));
    }

    fn turn_finished(&mut self, outcome: TurnOutcome) {
        self.turn_running = false;
        self.batch = Batch::default();
        let notice = match outcome {
            TurnOutcome::Completed => None,
            TurnOutcome::Interrupted => Some("interrupted".to_string()),
            TurnOutcome::StepLimit => Some("stopped: step limit reached".to_string()),
            TurnOutcome::Failed { message } => Some(format!("turn failed: {message}")),
            TurnOutcome::Parked { request, .. } => {
                Some(format!("parked: {} waits for a decision", request.call_id))
            }
        };
        if let Some(notice) = notice {
            self.entries.push(Entry::Notice(notice));
        }
        // Nothing can be waiting any more.
        self.overlays.retain(|o| !matches!(o, Overlay::Approval(_)));
    }
}
