//! One batch of tool calls: gated one at a time in model order, approved ones started at once so
//! they run concurrently, results handed back in the order the model asked.

use super::*;
use futures_util::FutureExt;

use crate::approval::gate::Approved;
use crate::output::{ToolError, ToolOutcome};
use crate::protocol::QueuedCall;
use crate::tools::registry::title_of_canonical;

/// The largest arguments (canonical JSON, bytes) of a call whose change is diffed for the
/// cockpit when no approval showed it.
const MAX_UNSHOWN_CHANGE_ARGS: usize = 256 * 1024;

/// The largest file such a change is diffed against: a one-line edit of a 200 MB log is not
/// read whole for a glance.
const MAX_UNSHOWN_CHANGE_FILE: u64 = 4 << 20;

/// Where a batch stands: each call's result in model order, the approved calls waiting to
/// start together and those running, and for checkpoints the next call to gate and the calls
/// started but not finished.
struct Progress {
    results: Vec<Option<Message>>,
    running: JoinSet<Joined>,
    /// Approved calls not started yet: they start together once the gate has decided what it
    /// can decide at once, so the first to wait for its audit record commits all of their
    /// decisions in one group commit (one call at a time made a second, later commit).
    ready: Vec<Ready>,
    next: usize,
    started: Vec<usize>,
    /// Sub-agents of this batch that parked, by the index of the call that started them.
    parked: Vec<(usize, super::subagents::ParkedChild)>,
}

/// An approved call on record as started, about to be run.
pub(super) struct Ready {
    index: usize,
    approved: Approved,
    token: CancellationToken,
    sink: OutputSink,
}

/// What a call's task gives back: its place in the batch, how it ended, and what the model is
/// told before its result (see [`preface`]).
type Joined = (usize, Result<ToolOutcome, ToolError>, Option<String>);

impl Agent {
    /// Gates the calls one at a time in model order, from `from` on (earlier ones already have
    /// results; `first` is an outcome already settled for the call at `from`); starts each
    /// approved call at once, so they run concurrently. Returns one result per call, in model
    /// order, or where the batch parked. `resumed`: sub-agents of this batch that had parked,
    /// going on (a resumed run), each with the decision that resumed it if it is for its tree.
    pub(super) async fn run_calls(
        &self,
        calls: &[ToolCall],
        results: Vec<Option<Message>>,
        from: usize,
        mut first: Option<GateOutcome>,
        resumed: Vec<(ParkedAgent, Option<super::ParkedAnswer>)>,
        cancel: &CancellationToken,
    ) -> BatchEnd {
        // Calls still to be gated (a settled `first` is not), so a driver can count its questions.
        let open = from + usize::from(first.is_some());
        if open < calls.len() {
            self.announce(&calls[open..], cancel).await;
        }
        let mut batch = Progress {
            results,
            running: JoinSet::new(),
            ready: Vec::new(),
            next: from,
            started: Vec::new(),
            parked: Vec::new(),
        };
        self.relaunch(calls, resumed, cancel, &mut batch);
        let mut parked: Option<(usize, Box<crate::protocol::ApprovalRequest>)> = None;
        for (index, call) in calls.iter().enumerate().skip(from) {
            batch.next = index;
            let outcome = match first.take() {
                Some(settled) => Some(settled),
                None if cancel.is_cancelled() => None,
                None => Some(self.decide(calls, call, cancel, &mut batch).await),
            };
            if let Some(request) = self.settle(calls, index, outcome, cancel, &mut batch) {
                parked = Some((index, request));
                break;
            }
        }
        if parked.is_none() {
            batch.next = calls.len();
        }
        // On record before they start (one checkpoint for every call approved since the last).
        self.checkpoint(calls, &batch.results, batch.next, &batch.started);
        self.launch(&mut batch.ready, &mut batch.running);
        while let Some(joined) = batch.running.join_next().await {
            self.finish_ready(calls, joined, &mut batch);
        }
        // Denials and outcomes were staged; they are durable before the results go back.
        let _ = self.gate.flush_audit_async().await;
        // The run parks on the first request in model order: a sub-agent's (its `agent` call
        // was approved before this agent's own parked call), else this agent's own.
        batch.parked.sort_by_key(|(index, _)| *index);
        let mut agents = Vec::with_capacity(batch.parked.len());
        let mut first_request = None;
        for (index, (mut agent, request)) in batch.parked {
            agent.call = index;
            first_request.get_or_insert(request);
            agents.push(agent);
        }
        let next = match &parked {
            Some((index, _)) => *index,
            None => calls.len(),
        };
        if let Some(request) = first_request.or(parked.map(|(_, request)| request)) {
            return BatchEnd::Parked {
                results: batch.results,
                index: next,
                request,
                agents,
            };
        }
        BatchEnd::Done(filled(calls, batch.results))
    }

    /// The gate's answer for one call. Calls already running may finish while this one waits
    /// for its answer: each is reported the moment it ends, not when the last question is
    /// answered.
    async fn decide(
        &self,
        calls: &[ToolCall],
        call: &ToolCall,
        cancel: &CancellationToken,
        batch: &mut Progress,
    ) -> GateOutcome {
        let check = self.gate.check(call, cancel);
        tokio::pin!(check);
        // Decided at once (the policy, a grant): on to the next call.
        if let Some(outcome) = check.as_mut().now_or_never() {
            return outcome;
        }
        // The gate waits (a person, a hook, a server): on record as waiting for this call, so a
        // run stopped now resumes here, and what it approved so far starts, on record as
        // started first. Calls decided at once are not each written down with the whole
        // batch: a batch of 64 approved calls wrote 63 checkpoints of 64 calls before the
        // first could start.
        self.checkpoint(calls, &batch.results, batch.next, &batch.started);
        if !batch.ready.is_empty() {
            self.launch(&mut batch.ready, &mut batch.running);
        }
        loop {
            tokio::select! {
                outcome = &mut check => return outcome,
                Some(joined) = batch.running.join_next(), if !batch.running.is_empty() => {
                    self.finish_ready(calls, joined, batch);
                }
            }
        }
    }

    /// Reports `joined` and every other call that has ended by now, then keeps one checkpoint
    /// for them all (calls that end together, as a batch of `sleep 1` does, are not each
    /// written down again with the whole batch).
    fn finish_ready(
        &self,
        calls: &[ToolCall],
        joined: Result<Joined, tokio::task::JoinError>,
        batch: &mut Progress,
    ) {
        self.finish(calls, joined, batch);
        while let Some(joined) = batch.running.try_join_next() {
            self.finish(calls, joined, batch);
        }
        self.checkpoint(calls, &batch.results, batch.next, &batch.started);
    }

    /// Acts on the gate's answer for call `index` (`None`: the turn was interrupted before it
    /// was decided): a refusal is reported and becomes its result, an approval waits in `ready`
    /// to start. A parked call is handed back: nobody can answer now, so the batch stops there.
    fn settle(
        &self,
        calls: &[ToolCall],
        index: usize,
        outcome: Option<GateOutcome>,
        cancel: &CancellationToken,
        batch: &mut Progress,
    ) -> Option<Box<crate::protocol::ApprovalRequest>> {
        let call = &calls[index];
        match outcome {
            Some(GateOutcome::Parked(mut request)) => {
                request.title = title_of_canonical(&request.tool, &request.frozen.canonical);
                return Some(request);
            }
            None => {
                let message =
                    "denied: the turn was interrupted before this call was decided; nothing ran"
                        .to_string();
                self.emit(AgentEvent::ToolDenied {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    title: refused_title(call),
                    source: crate::protocol::DecisionSource::Cancelled,
                    message: message.clone(),
                });
                batch.results[index] = Some(tool_message(call, CallResult::Denied, message));
            }
            Some(GateOutcome::Denied(denial)) => {
                self.emit(AgentEvent::ToolDenied {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    title: refused_title(call),
                    source: denial.source.clone(),
                    message: denial.message.clone(),
                });
                let content = denial_text(&denial.message, &denial.reasons);
                batch.results[index] = Some(tool_message(call, CallResult::Denied, content));
            }
            Some(GateOutcome::Approved(approved)) => {
                let token = cancel.child_token();
                lock(&self.control.running).insert(call.id.clone(), token.clone());
                // A call a person changed runs as changed, and is titled so.
                let title = match approved.amended() {
                    Some(_) => format!(
                        "{} (changed by you)",
                        title_of_canonical(approved.tool(), &approved.frozen().canonical)
                    ),
                    None => title(call),
                };
                self.emit(AgentEvent::ToolStarted {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    title,
                });
                if let Some(diff) = self.unshown_change(&approved) {
                    self.emit(AgentEvent::ToolChange {
                        call_id: call.id.clone(),
                        diff,
                    });
                }
                if call.tool == crate::approval::policy::AGENT_TOOL {
                    self.spawner.reserve(&call.id);
                }
                let sink = self.output_sink(&call.id);
                // On record as started before it starts (the checkpoint before `launch`): if
                // the process dies from then on, a resume reports it interrupted and never runs
                // it again.
                batch.started.push(index);
                batch.ready.push(Ready {
                    index,
                    approved,
                    token,
                    sink,
                });
            }
        }
        None
    }

    /// The change an approved file call will make, as a diff, when no person saw it in an
    /// approval (the policy, a rule, the mode, a grant or a headless stand-in allowed it), so the
    /// cockpit can show it on the run. Only for calls whose arguments are at most
    /// [`MAX_UNSHOWN_CHANGE_ARGS`] on a file of at most [`MAX_UNSHOWN_CHANGE_FILE`], and only
    /// for calls that change a file (one judged on a path, or an MCP call, whose preview may be
    /// a file change): a command's arguments are not read back for nothing.
    fn unshown_change(&self, approved: &Approved) -> Option<String> {
        use crate::approval::approver::Previewer;
        use crate::protocol::DecisionSource::{Parked, RemoteCode, User};
        // A change a person made before approving was not shown as it runs (only kept hunks,
        // say): it is sent like a change nobody saw.
        let seen_as_it_runs =
            matches!(approved.source(), User | RemoteCode | Parked) && approved.amended().is_none();
        if seen_as_it_runs
            || approved.frozen().canonical.len() > MAX_UNSHOWN_CHANGE_ARGS
            || (approved.judged_path().is_none() && approved.mcp_definition().is_none())
        {
            return None;
        }
        let large = |path: &std::path::Path| {
            std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_UNSHOWN_CHANGE_FILE)
        };
        if approved.judged_path().is_some_and(large) {
            return None;
        }
        let args = approved.args().ok()?;
        let preview = self
            .tools
            .preview(approved.tool(), &args, approved.judged_path())?;
        preview.unified_diff().map(str::to_string)
    }

    /// Starts again the sub-agents of this batch that had parked (the run resumed), each at its
    /// `agent` call: on record as started, cancellable like any running call.
    fn relaunch(
        &self,
        calls: &[ToolCall],
        resumed: Vec<(ParkedAgent, Option<super::ParkedAnswer>)>,
        cancel: &CancellationToken,
        batch: &mut Progress,
    ) {
        for (agent, answer) in resumed {
            let index = agent.call;
            let Some(call) = calls.get(index) else {
                continue;
            };
            let token = cancel.child_token();
            lock(&self.control.running).insert(call.id.clone(), token.clone());
            self.emit(AgentEvent::ToolStarted {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                title: title(call),
            });
            batch.started.push(index);
            let sink = self.output_sink(&call.id);
            let spawner = self.spawner.clone();
            let call_id = call.id.clone();
            batch.running.spawn(async move {
                let outcome = spawner
                    .resume(agent, answer, &call_id, token, sink.clone())
                    .await;
                sink.end();
                (index, outcome, None)
            });
        }
        if !batch.started.is_empty() {
            self.checkpoint(calls, &batch.results, batch.next, &batch.started);
        }
    }

    /// Starts the approved calls that wait in `ready`, in model order.
    fn launch(&self, ready: &mut Vec<Ready>, running: &mut JoinSet<Joined>) {
        for Ready {
            index,
            approved,
            token,
            sink,
        } in ready.drain(..)
        {
            let tools = self.tools.clone();
            let spawner = self.spawner.clone();
            let preface = preface(&approved);
            // The person's PostToolUse hooks, given the call as it ran (its frozen arguments).
            let after = self.gate.after_call().and_then(|after| {
                approved
                    .args()
                    .ok()
                    .map(|args| (after, approved.tool().to_string(), args))
            });
            // A call that may change the workspace runs only once the workspace before it is
            // kept (so it can be undone); what it changed is said before it is reported done.
            let kept = self
                .config
                .history
                .clone()
                .filter(|_| !approved.read_only());
            let changed = kept.as_ref().map(|_| {
                let events = self.events.clone();
                let tag = self.tag.clone();
                move |call_id: String, changes: crate::protocol::ChangeCount| {
                    let _ = events.send(super::tagged(
                        tag.as_deref(),
                        AgentEvent::WorkspaceChanged { call_id, changes },
                    ));
                }
            });
            running.spawn(async move {
                let call_id = approved.call_id().to_string();
                if let Some(history) = &kept {
                    let title = title_of_canonical(approved.tool(), &approved.frozen().canonical);
                    let (h, id) = (history.clone(), call_id.clone());
                    let before = tokio::task::spawn_blocking(move || h.before(&id, &title)).await;
                    let failed = match before {
                        Ok(Ok(())) => None,
                        Ok(Err(e)) => Some(e),
                        Err(e) => Some(e.to_string()),
                    };
                    if let Some(why) = failed {
                        let outcome = Err(ToolError::Failed(format!(
                            "the workspace could not be kept before this call ({why}), so it \
                             could not be undone; nothing ran"
                        )));
                        sink.end();
                        return (index, outcome, preface);
                    }
                }
                let agents: &dyn crate::tools::agent::SubAgents = &*spawner;
                let outcome = tools
                    .execute_with(approved, token, sink.clone(), Some(agents))
                    .await;
                if let (Some(history), Some(changed)) = (kept, changed) {
                    let id = call_id.clone();
                    if let Ok(Ok(changes)) =
                        tokio::task::spawn_blocking(move || history.after(&id)).await
                        && !changes.is_empty()
                    {
                        changed(call_id.clone(), changes);
                    }
                }
                // Output a tool had paced goes out before the call is reported done, with the
                // marker of a last line that was being cut (it ended without a newline).
                sink.end();
                let mut outcome = outcome;
                if let (Some((after, tool, args)), Ok(done)) = (after, outcome.as_mut()) {
                    let response = serde_json::json!({
                        "success": done.status == ToolStatus::Ok,
                        "exit_code": done.exit_code,
                        "output": done.content,
                    });
                    if let Some(note) = after.run(&call_id, &tool, args, response).await {
                        done.content.push_str(&format!("\n\n{note}"));
                    }
                }
                (index, outcome, preface)
            });
        }
    }

    /// Tells the driver which calls the gate takes next. An MCP server still starting (a
    /// session's first step, a resumed run) is waited for, so its calls are forecast as what
    /// they are, not as unknown tools.
    async fn announce(&self, calls: &[ToolCall], cancel: &CancellationToken) {
        self.gate.settle_mcp(calls, cancel).await;
        self.emit(AgentEvent::BatchQueued {
            calls: calls
                .iter()
                .map(|call| {
                    let (needs_decision, sandbox) = self.gate.forecast(call);
                    QueuedCall {
                        call_id: call.id.clone(),
                        tool: call.tool.clone(),
                        title: title(call),
                        needs_decision,
                        sandbox,
                    }
                })
                .collect(),
        });
    }

    /// Where a running call's output goes: to the driver, thinned (by the sink) to what a viewer
    /// can show, so a flood crosses the channel as a few kilobytes a read, not all of it.
    fn output_sink(&self, call_id: &str) -> OutputSink {
        let events = self.events.clone();
        let tag = self.tag.clone();
        let call_id = call_id.to_string();
        OutputSink::new(move |stream, piece| {
            // A piece that carries neither text nor a count of lines left out says nothing: it
            // is not sent (a driver printing every event would print an empty one).
            if piece.text.is_empty() && piece.skipped == 0 && piece.cut == 0 {
                return;
            }
            let _ = events.send(super::tagged(
                tag.as_deref(),
                AgentEvent::ToolOutput {
                    call_id: call_id.clone(),
                    stream,
                    text: text_of(piece.text),
                    skipped: piece.skipped,
                },
            ));
        })
    }

    /// One call has ended: report it, audit its outcome, keep its result in its model-order slot.
    fn finish(
        &self,
        calls: &[ToolCall],
        joined: Result<Joined, tokio::task::JoinError>,
        batch: &mut Progress,
    ) {
        let Ok((index, outcome, preface)) = joined else {
            // A task that panicked: its slot stays empty and is filled when the batch ends.
            return;
        };
        let call = &calls[index];
        lock(&self.control.running).remove(&call.id);
        // A sub-agent that parked has not ended: it waits with its checkpoint, and this batch
        // parks with it. It is not running any more (nothing of it goes on in this process).
        if call.tool == crate::approval::policy::AGENT_TOOL
            && let Some(child) = self.spawner.take_parked(&call.id)
        {
            batch.parked.push((index, child));
            batch.started.retain(|i| *i != index);
            return;
        }
        let (results, started) = (&mut batch.results, &mut batch.started);
        let (message, finished) = match outcome {
            Ok(o) => {
                let result = if o.status == ToolStatus::Ok {
                    CallResult::Ok
                } else {
                    CallResult::Failed
                };
                let finished = AgentEvent::ToolFinished {
                    call_id: call.id.clone(),
                    status: o.status,
                    exit_code: o.exit_code,
                    lines: o.lines,
                    error: None,
                    log: o.log.clone(),
                };
                (tool_message(call, result, o.content), finished)
            }
            Err(e) => {
                let finished = AgentEvent::ToolFinished {
                    call_id: call.id.clone(),
                    status: ToolStatus::Failed,
                    exit_code: None,
                    lines: 0,
                    error: Some(e.to_string()),
                    log: None,
                };
                (
                    tool_message(call, CallResult::Failed, format!("error: {e}")),
                    finished,
                )
            }
        };
        if let AgentEvent::ToolFinished {
            status, exit_code, ..
        } = &finished
        {
            let _ = self.gate.record_outcome(
                &call.id,
                match status {
                    ToolStatus::Ok => "ok",
                    ToolStatus::Failed => "failed",
                    ToolStatus::Cancelled => "cancelled",
                    ToolStatus::TimedOut => "timed_out",
                },
                serde_json::json!({"exit_code": exit_code}),
            );
        }
        self.emit(finished);
        results[index] = Some(match (preface, message) {
            (
                Some(preface),
                Message::Tool {
                    call_id,
                    tool,
                    result,
                    content,
                },
            ) => Message::Tool {
                call_id,
                tool,
                result,
                content: format!("{preface}{content}"),
            },
            (_, message) => message,
        });
        started.retain(|i| *i != index);
    }
}

/// What the model is told before the result of a call a person changed or approved with a
/// note: what it proposed and what ran instead, and the person's words.
fn preface(approved: &Approved) -> Option<String> {
    let mut text = String::new();
    if let Some(amended) = approved.amended() {
        text.push_str(&amended.told);
    }
    if let Some(note) = approved.note() {
        text.push_str(&format!(
            "The user approved this call with a note for you: {note}\n"
        ));
    }
    (!text.is_empty()).then(|| text + "\nThe call's result:\n")
}

pub(super) fn tool_message(call: &ToolCall, result: CallResult, content: String) -> Message {
    Message::Tool {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        result,
        content,
    }
}

/// Every call's result in model order. Each slot is filled: each call was either denied or
/// joined; a task that panicked still gets a result, so the model never loses track of a call.
fn filled(calls: &[ToolCall], results: Vec<Option<Message>>) -> Vec<Message> {
    calls
        .iter()
        .zip(results)
        .map(|(call, r)| {
            r.unwrap_or_else(|| {
                tool_message(
                    call,
                    CallResult::Failed,
                    "error: the tool stopped unexpectedly".into(),
                )
            })
        })
        .collect()
}

/// What the model is told of a denial: the message, then every reason.
fn denial_text(message: &str, reasons: &[String]) -> String {
    let mut content = message.to_string();
    if !reasons.is_empty() {
        content.push_str("\nreasons:\n");
        for r in reasons {
            content.push_str(&format!("- {r}\n"));
        }
    }
    content
}

/// A one-line title for a call, for the results pane: the tool's own (`tools::Tool::title`).
pub fn title(call: &ToolCall) -> String {
    crate::tools::registry::title(&call.tool, &call.args)
}

/// The title of a refused call: a command is shown whole (not only its first line, as a running
/// call's title is), up to [`REFUSED_TITLE_CHARS`].
pub fn refused_title(call: &ToolCall) -> String {
    crate::tools::registry::refused_title(&call.tool, &call.args)
}

/// Output bytes as text. The tools hand over whole characters, so the strict (fast, vectorised)
/// check almost always passes; only invalid bytes take the slower replacing path.
fn text_of(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests;
