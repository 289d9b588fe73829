//! One batch of tool calls: gated one at a time in model order, approved ones started at once so
//! they run concurrently, results handed back in the order the model asked.

use super::*;

impl Agent {
    /// Gates the calls one at a time in model order, from `from` on (earlier ones already have
    /// results; `first` is an outcome already settled for the call at `from`); starts each
    /// approved call at once, so they run concurrently. Returns one result per call, in model
    /// order, or where the batch parked.
    pub(super) async fn run_calls(
        &self,
        calls: &[ToolCall],
        mut results: Vec<Option<Message>>,
        from: usize,
        mut first: Option<GateOutcome>,
        cancel: &CancellationToken,
    ) -> BatchEnd {
        let mut running = JoinSet::new();
        let mut parked: Option<(usize, Box<crate::approval::approver::ApprovalRequest>)> = None;
        // Where the batch stands, for checkpoints: the next call to gate, and calls running.
        let mut next = from;
        let mut started: Vec<usize> = Vec::new();
        for (index, call) in calls.iter().enumerate().skip(from) {
            next = index;
            if index > from {
                self.checkpoint(calls, &results, next, &started);
            }
            let outcome = if let Some(settled) = first.take() {
                Some(settled)
            } else if cancel.is_cancelled() {
                None
            } else {
                Some(self.gate.check(call.clone(), cancel).await)
            };
            match outcome {
                Some(GateOutcome::Parked(request)) => {
                    // Nobody can answer now: stop here; what already runs finishes first.
                    parked = Some((index, request));
                    break;
                }
                None => {
                    let message = "denied: the turn was interrupted before this call was decided; nothing ran".to_string();
                    self.emit(AgentEvent::ToolDenied {
                        call_id: call.id.clone(),
                        tool: call.tool.clone(),
                        source: crate::approval::gate::DecisionSource::Cancelled,
                        message: message.clone(),
                    });
                    results[index] = Some(tool_message(call, CallResult::Denied, message));
                }
                Some(GateOutcome::Denied(denial)) => {
                    self.emit(AgentEvent::ToolDenied {
                        call_id: call.id.clone(),
                        tool: call.tool.clone(),
                        source: denial.source.clone(),
                        message: denial.message.clone(),
                    });
                    let mut content = denial.message.clone();
                    if !denial.reasons.is_empty() {
                        content.push_str("\nreasons:\n");
                        for r in &denial.reasons {
                            content.push_str(&format!("- {r}\n"));
                        }
                    }
                    results[index] = Some(tool_message(call, CallResult::Denied, content));
                }
                Some(GateOutcome::Approved(approved)) => {
                    let token = cancel.child_token();
                    lock(&self.control.running).insert(call.id.clone(), token.clone());
                    self.emit(AgentEvent::ToolStarted {
                        call_id: call.id.clone(),
                        tool: call.tool.clone(),
                        title: title(call),
                    });
                    let events = self.events.clone();
                    let call_id = call.id.clone();
                    let sink: OutputSink = Arc::new(move |stream, bytes| {
                        let _ = events.send(AgentEvent::ToolOutput {
                            call_id: call_id.clone(),
                            stream,
                            text: text_of(bytes),
                        });
                    });
                    let tools = self.tools.clone();
                    running
                        .spawn(async move { (index, tools.execute(approved, token, sink).await) });
                    started.push(index);
                }
            }
        }
        if parked.is_none() {
            next = calls.len();
        }
        self.checkpoint(calls, &results, next, &started);
        while let Some(joined) = running.join_next().await {
            let Ok((index, outcome)) = joined else {
                continue;
            };
            let call = &calls[index];
            lock(&self.control.running).remove(&call.id);
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
            results[index] = Some(message);
            started.retain(|i| *i != index);
            self.checkpoint(calls, &results, next, &started);
        }
        if let Some((index, request)) = parked {
            return BatchEnd::Parked {
                results,
                index,
                request,
            };
        }
        // Every slot is filled: each call was either denied or joined. A task that panicked
        // still gets a result, so the model never loses track of a call.
        BatchEnd::Done(
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
                .collect(),
        )
    }
}

pub(super) fn tool_message(call: &ToolCall, result: CallResult, content: String) -> Message {
    Message::Tool {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        result,
        content,
    }
}

/// A one-line title for a call, for the results pane.
pub fn title(call: &ToolCall) -> String {
    let text = |k: &str| call.args.get(k).and_then(|v| v.as_str()).unwrap_or("");
    match call.tool.as_str() {
        "bash" => format!("$ {}", text("command").lines().next().unwrap_or("")),
        "read_file" => format!("read {}", text("path")),
        "list_dir" => format!(
            "list {}",
            if text("path").is_empty() {
                "."
            } else {
                text("path")
            }
        ),
        "search" => format!(
            "search /{}/ in {}",
            text("pattern"),
            if text("path").is_empty() {
                "."
            } else {
                text("path")
            }
        ),
        "write_file" => format!("write {}", text("path")),
        "edit_file" => format!("edit {}", text("path")),
        other => other.to_string(),
    }
}

/// Output bytes as text. The tools hand over whole characters, so the strict (fast, vectorised)
/// check almost always passes; only invalid bytes take the slower replacing path.
fn text_of(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}
