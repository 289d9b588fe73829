//! Going on with a parked turn (or one whose process stopped): the decision that resumed it is
//! settled in the agent whose call it is (this one, or a parked sub-agent), the rest of the
//! batch goes through the gate while the parked sub-agents go on, then the turn goes on.

use super::*;

impl Agent {
    /// Continues a parked turn (or one whose process stopped, with no `answer`).
    pub(super) async fn resume_turn(
        &mut self,
        checkpoint: Checkpoint,
        answer: Option<ParkedAnswer>,
        cancel: CancellationToken,
    ) {
        let turn = checkpoint.turn;
        self.emit(AgentEvent::TurnStarted {
            turn,
            prompt: if answer.is_some() {
                "(resumed after a parked approval)".into()
            } else {
                "(resumed after the process running it stopped)".into()
            },
        });
        let outcome = self.go_on(checkpoint, answer, &cancel).await;
        *lock(&self.control.turn) = None;
        self.journal(&[], &[], 0, &[], true);
        self.emit(AgentEvent::TurnFinished { turn, outcome });
    }

    /// Goes on from `checkpoint`: the parked call is settled by `answer` (its one-time code's
    /// decision) when it is this agent's, or `answer` goes to the parked sub-agent whose call it
    /// is; the rest of the batch goes through the gate while the parked sub-agents go on, then
    /// the turn goes on with the model.
    pub(super) async fn go_on(
        &mut self,
        checkpoint: Checkpoint,
        answer: Option<ParkedAnswer>,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let Checkpoint {
            conversation,
            calls,
            mut results,
            parked,
            model,
            turn,
            started,
            agents,
            ..
        } = checkpoint;
        self.turn = turn;
        self.conversation = conversation;
        self.model.restore(&model);
        // Calls that had started when the process died: their result is unknown, and they do
        // not run again.
        for &index in &started {
            if let (Some(slot), Some(call)) = (results.get_mut(index), calls.get(index))
                && slot.is_none()
            {
                *slot = Some(tool_message(
                        call,
                        CallResult::Failed,
                        "interrupted: the process running this call was stopped; its result is unknown, and it was not run again".into(),
                    ));
            }
        }
        let mine = answer
            .as_ref()
            .is_some_and(|a| calls.get(parked).is_some_and(|c| c.id == a.call_id));
        let (settled, mut answer) = match answer {
            Some(a) if mine => (Some(self.settle_answer(a).await), None),
            other => (None, other),
        };
        let resumed: Vec<(ParkedAgent, Option<ParkedAnswer>)> = agents
            .into_iter()
            .map(|agent| {
                let its = answer.take_if(|a| agent.checkpoint.asking(&a.call_id).is_some());
                (agent, its)
            })
            .collect();
        if let Some(lost) = answer {
            // Nothing of this tree waits on it (a resume checks this first): the call it was
            // for is asked again when the batch reaches it.
            self.emit(AgentEvent::Error {
                message: format!(
                    "the decision for {} was not used: no agent of this run waits on that call",
                    lost.call_id
                ),
            });
        }
        match self
            .run_calls(&calls, results, parked, settled, resumed, cancel)
            .await
        {
            BatchEnd::Done(results) => {
                self.conversation.extend(results);
                if cancel.is_cancelled() {
                    TurnOutcome::Interrupted
                } else {
                    self.turn_steps(cancel).await
                }
            }
            BatchEnd::Parked {
                results,
                index,
                request,
                agents,
            } => self.park(&calls, results, index, request, agents),
        }
    }

    /// The gate's outcome for this agent's parked call, decided by `answer`. A change given
    /// with the code is made by the tool: an MCP server's tool is waited for until its server
    /// has listed it.
    async fn settle_answer(&self, answer: ParkedAnswer) -> GateOutcome {
        if answer.change.is_some() {
            let call = ToolCall {
                id: answer.call_id.clone(),
                tool: answer.frozen.tool.clone(),
                args: serde_json::Value::Null,
            };
            self.gate
                .settle_mcp(std::slice::from_ref(&call), &CancellationToken::new())
                .await;
        }
        self.gate.settle_parked(
            &answer.call_id,
            answer.frozen,
            crate::approval::gate::ParkedDecision {
                allow: answer.allow,
                session_grant: answer.session_grant,
                reason: answer.reason,
                change: answer.change,
            },
            crate::approval::gate::Judged {
                path: answer.judged_path,
                mcp_definition: answer.mcp_definition,
                // Not judged again here: a checkpoint is kept before it.
                read_only: false,
            },
        )
    }
}
