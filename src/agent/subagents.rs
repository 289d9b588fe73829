//! Sub-agents: an `agent` call the gate approved starts another `Agent` on the same task tree.
//! It has its own conversation and turn loop, runs while its caller goes on, and passes the
//! same gate (a view of it that names the sub-agent and holds it to a mode and sandbox no wider
//! than its caller's), so its requests join the one queue. Its events reach the driver wrapped
//! as `AgentEvent::Agent`; its call ids are its own id and the model's (`a1-call_0`), so no two
//! agents' calls share an id in the queue, the running set or the results pane. Its final
//! answer is the `agent` call's result; cancelling that call (or the turn) cancels it and
//! every sub-agent it started.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentConfig, Checkpoint, Control, ParkedAgent, ParkedAnswer};
use crate::approval::gate::Gate;
use crate::approval::policy::Limits;
use crate::model::{Message, ModelClient};
use crate::output::{OutputSink, ToolError, ToolOutcome};
use crate::protocol::{AgentEvent, AgentLabel, AgentStatus, Stream, ToolStatus, TurnOutcome};
use crate::tools::ToolRegistry;
use crate::tools::agent::{Spawn, SubAgents};
use crate::tools::tool::ToolFuture;

/// The session's own agent, as a sub-agent's parent is named.
pub const MAIN: &str = crate::protocol::MAIN_AGENT;

/// Whether `id` has the shape of a sub-agent's call id (`a` and digits, then `-`).
pub(super) fn in_sub_agent_namespace(id: &str) -> bool {
    id.strip_prefix('a')
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(digits, _)| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// How far a tree of agents may grow (`[agents]` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubAgentLimits {
    /// How deep sub-agents nest: 1 lets the session's agent start sub-agents that start none.
    pub max_depth: usize,
    /// How many sub-agents run at once, in the whole tree.
    pub max_running: usize,
}

impl Default for SubAgentLimits {
    fn default() -> Self {
        SubAgentLimits {
            max_depth: 2,
            max_running: 8,
        }
    }
}

/// What every agent of one session's tree shares: the limits, and the counts they limit.
#[derive(Default)]
pub(super) struct Tree {
    limits: SubAgentLimits,
    started: AtomicUsize,
    running: AtomicUsize,
}

impl Tree {
    pub(super) fn new(limits: SubAgentLimits) -> Arc<Tree> {
        Arc::new(Tree {
            limits,
            ..Tree::default()
        })
    }
}

/// One sub-agent counted as running until this is dropped.
struct Running(Arc<Tree>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What an agent starts its sub-agents with: its model, tools and gate, the driver's channel,
/// the shared control (answers, running calls), and where it stands in the tree.
pub(super) struct Spawner {
    pub(super) model: Arc<dyn ModelClient>,
    pub(super) tools: Arc<ToolRegistry>,
    pub(super) gate: Arc<Gate>,
    pub(super) events: mpsc::UnboundedSender<AgentEvent>,
    pub(super) control: Arc<Control>,
    pub(super) tree: Arc<Tree>,
    /// Of the agent that owns this spawner: 0 for the session's agent.
    pub(super) depth: usize,
    /// Its id: [`MAIN`] or a sub-agent's.
    pub(super) id: String,
    pub(super) max_steps: usize,
    /// Ids given to approved `agent` calls in the order the model asked for them (by call id),
    /// so sub-agents started together are numbered in that order, not in the order their
    /// tasks happened to start.
    pub(super) reserved: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// Sub-agents of this agent that parked, by the call that started them, with the request
    /// each parked on: taken by this agent's batch when the call ends.
    pub(super) parked: std::sync::Mutex<std::collections::HashMap<String, ParkedChild>>,
    /// The session's workspace history: every agent of the tree keeps checkpoints in it.
    pub(super) history: Option<Arc<dyn crate::protocol::WorkspaceHistory>>,
}

/// A sub-agent that parked, and the request it parked on.
pub(super) type ParkedChild = (ParkedAgent, Box<crate::protocol::ApprovalRequest>);

impl Spawner {
    /// How many sub-agents the session's tree has numbered so far.
    pub(super) fn sub_agents(&self) -> usize {
        self.tree.started.load(Ordering::SeqCst)
    }

    /// Sub-agents started from now on are numbered after the first `numbered` (a resumed run's).
    pub(super) fn numbered_after(&self, numbered: usize) {
        self.tree.started.fetch_max(numbered, Ordering::SeqCst);
    }

    /// Numbers the sub-agent an approved `agent` call will start.
    pub(super) fn reserve(&self, call_id: &str) {
        let number = self.tree.started.fetch_add(1, Ordering::SeqCst) + 1;
        super::lock(&self.reserved).insert(call_id.to_string(), number);
    }

    /// Counts one more sub-agent of this agent, or says which limit it would pass.
    fn admit(&self) -> Result<Running, String> {
        let limits = self.tree.limits;
        if self.depth + 1 > limits.max_depth {
            return Err(format!(
                "sub-agents nest at most {} deep (`[agents] max_depth` in the configuration) and \
                 this one would be {} deep, so it was not started; do this task yourself",
                limits.max_depth,
                self.depth + 1
            ));
        }
        let before = self.tree.running.fetch_add(1, Ordering::SeqCst);
        let running = Running(self.tree.clone());
        if before >= limits.max_running {
            return Err(format!(
                "at most {} sub-agents run at once (`[agents] max_running` in the \
                 configuration) and {before} are running, so this one was not started; wait \
                 for one to finish, or do this task yourself",
                limits.max_running
            ));
        }
        Ok(running)
    }

    async fn start(
        &self,
        spawn: Spawn,
        call_id: &str,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        let reserved = super::lock(&self.reserved).remove(call_id);
        let _running = self.admit().map_err(|why| {
            // Its number goes back when no later one was given, so the next sub-agent does
            // not skip one (`a1` refused, then `a2` would be the session's first).
            if let Some(number) = reserved {
                let _ = self.tree.started.compare_exchange(
                    number,
                    number - 1,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
            }
            ToolError::Failed(why)
        })?;
        let number =
            reserved.unwrap_or_else(|| self.tree.started.fetch_add(1, Ordering::SeqCst) + 1);
        let label = AgentLabel {
            id: format!("a{number}"),
            parent: self.id.clone(),
            task: spawn.task.clone(),
        };
        let caller = self.gate.limits();
        let limits = Limits {
            mode: spawn.mode.unwrap_or(caller.mode),
            profile: spawn.sandbox.or(caller.profile),
        };
        let mut agent = self.child(label.clone(), limits, call_id)?;
        let outcome = agent.sub_turn(spawn.prompt, &cancel).await;
        Ok(self.ended(&agent, label, outcome, call_id, &sink))
    }

    /// Brings back a sub-agent that parked (its run resumed): it goes on from its checkpoint
    /// under the limits it had, with `answer` when the decision that resumed the run is for a
    /// call of its tree. Counted as running, not held to the count limit: it was admitted
    /// when it started.
    pub(super) async fn resume(
        &self,
        parked: ParkedAgent,
        answer: Option<ParkedAnswer>,
        call_id: &str,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        self.tree.running.fetch_add(1, Ordering::SeqCst);
        let _running = Running(self.tree.clone());
        let limits = Limits::from_names(&parked.mode, parked.sandbox.as_deref()).map_err(|e| {
            ToolError::Failed(format!(
                "the parked sub-agent {} could not go on: its checkpoint names an {e}",
                parked.label.id
            ))
        })?;
        let label = parked.label.clone();
        let mut agent = self.child(label.clone(), limits, call_id)?;
        let outcome = agent.sub_resume(parked.checkpoint, answer, &cancel).await;
        Ok(self.ended(&agent, label, outcome, call_id, &sink))
    }

    /// A sub-agent of this agent, named `label` and held to `limits` (refused if they are
    /// wider than this agent's), announced to the driver.
    fn child(&self, label: AgentLabel, limits: Limits, call_id: &str) -> Result<Agent, ToolError> {
        let gate = self
            .gate
            .for_agent(label.clone(), limits)
            .map_err(ToolError::Failed)?;
        let model = match self.model.sub_agent(&label.task) {
            Ok(Some(model)) => model,
            Ok(None) => self.model.clone(),
            Err(e) => {
                return Err(ToolError::Failed(format!(
                    "the sub-agent could not be started: {e}"
                )));
            }
        };
        let limits = gate.limits();
        let _ = self.events.send(AgentEvent::AgentStarted {
            agent: label.clone(),
            call_id: call_id.to_string(),
            depth: self.depth + 1,
            mode: limits.mode.as_str().to_string(),
            sandbox: limits.profile.map(|p| p.as_str().to_string()),
        });
        let gate = Arc::new(gate);
        let spawner = Spawner {
            model: model.clone(),
            tools: self.tools.clone(),
            gate: gate.clone(),
            events: self.events.clone(),
            control: self.control.clone(),
            tree: self.tree.clone(),
            depth: self.depth + 1,
            id: label.id.clone(),
            max_steps: self.max_steps,
            reserved: Default::default(),
            parked: Default::default(),
            history: self.history.clone(),
        };
        Ok(Agent {
            model,
            tools: self.tools.clone(),
            gate,
            events: self.events.clone(),
            control: self.control.clone(),
            conversation: Vec::new(),
            turn: 0,
            config: AgentConfig {
                max_steps: self.max_steps,
                history: self.history.clone(),
                ..AgentConfig::default()
            },
            journal_failed: Default::default(),
            checkpoint_failed: Default::default(),
            spawner: Arc::new(spawner),
            tag: Some(label.id.clone()),
        })
    }

    /// The `agent` call's result for a sub-agent that ended with `outcome`, told to the driver.
    /// One that parked is kept for its caller's batch, which parks with it.
    fn ended(
        &self,
        agent: &Agent,
        label: AgentLabel,
        outcome: TurnOutcome,
        call_id: &str,
        sink: &OutputSink,
    ) -> ToolOutcome {
        let answer = last_answer(&agent.conversation);
        let (status, summary, result) = match outcome {
            TurnOutcome::Completed => (
                AgentStatus::Done,
                answer.clone(),
                ToolOutcome::text(if answer.is_empty() {
                    "(the sub-agent finished without a final answer)".into()
                } else {
                    answer
                }),
            ),
            TurnOutcome::Interrupted => {
                let said = "the sub-agent was cancelled before it finished".to_string();
                (
                    AgentStatus::Cancelled,
                    said.clone(),
                    ended(ToolStatus::Cancelled, said, &answer),
                )
            }
            TurnOutcome::Parked {
                checkpoint,
                request,
            } => match Checkpoint::from_saved(&checkpoint) {
                Ok(checkpoint) => {
                    let said = format!(
                        "its call {} waits for a person; it goes on when the run is resumed",
                        request.call_id
                    );
                    let (mode, sandbox) = agent.gate.limits().names();
                    let parked = ParkedAgent {
                        call: 0,
                        label: label.clone(),
                        depth: self.depth + 1,
                        mode,
                        sandbox,
                        checkpoint,
                    };
                    super::lock(&self.parked).insert(call_id.to_string(), (parked, request));
                    let _ = self.events.send(AgentEvent::AgentFinished {
                        agent: label.id,
                        status: AgentStatus::Parked,
                        summary: said.clone(),
                    });
                    // Not the call's result: its caller's batch parks instead of handing it on.
                    return ToolOutcome::text(said);
                }
                Err(e) => {
                    let why = format!(
                        "the sub-agent's call {} needs a person, and the sub-agent could not be                          kept to go on later ({e}); nothing of that call ran",
                        request.call_id
                    );
                    (
                        AgentStatus::Failed,
                        why.clone(),
                        ended(ToolStatus::Failed, why, &answer),
                    )
                }
            },
            other => {
                let why = match other {
                    TurnOutcome::StepLimit => format!(
                        "the sub-agent stopped at its step limit ({} model answers) without a \
                         final answer",
                        self.max_steps
                    ),
                    TurnOutcome::Failed { message } => format!("the sub-agent failed: {message}"),
                    _ => "the sub-agent ended".into(),
                };
                (
                    AgentStatus::Failed,
                    why.clone(),
                    ended(ToolStatus::Failed, why, &answer),
                )
            }
        };
        sink.send(Stream::Stdout, result.content.as_bytes());
        let _ = self.events.send(AgentEvent::AgentFinished {
            agent: label.id,
            status,
            summary: first_line(&summary),
        });
        result
    }

    /// The sub-agent started by call `call_id` if it parked, with the request it parked on.
    pub(super) fn take_parked(&self, call_id: &str) -> Option<ParkedChild> {
        super::lock(&self.parked).remove(call_id)
    }
}

impl SubAgents for Spawner {
    fn run<'a>(
        &'a self,
        spawn: Spawn,
        call_id: &'a str,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> ToolFuture<'a> {
        Box::pin(self.start(spawn, call_id, cancel, sink))
    }
}

impl Agent {
    /// A sub-agent's one turn: its prompt, then model steps until it answers without calls.
    async fn sub_turn(&mut self, prompt: String, cancel: &CancellationToken) -> TurnOutcome {
        self.turn = 1;
        self.emit(AgentEvent::TurnStarted {
            turn: 1,
            prompt: prompt.clone(),
        });
        self.conversation.push(Message::User { text: prompt });
        // Its end is said by `AgentFinished` (a `TurnFinished` would read as the session's own
        // turn ending to a script reading `exec`'s events, and a parked one would carry a
        // checkpoint nothing can go on from).
        self.turn_steps(cancel).await
    }
}

impl Agent {
    /// A parked sub-agent going on from its checkpoint (its run resumed).
    async fn sub_resume(
        &mut self,
        checkpoint: Checkpoint,
        answer: Option<ParkedAnswer>,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        self.emit(AgentEvent::TurnStarted {
            turn: checkpoint.turn,
            prompt: "(resumed with its run)".into(),
        });
        self.go_on(checkpoint, answer, cancel).await
    }
}

/// A result that says how the sub-agent ended, with what it had said last.
fn ended(status: ToolStatus, why: String, answer: &str) -> ToolOutcome {
    let content = if answer.is_empty() {
        why
    } else {
        format!("{why}. Its last words:\n{answer}")
    };
    ToolOutcome {
        status,
        ..ToolOutcome::text(content)
    }
}

/// The text of the conversation's last model answer.
fn last_answer(conversation: &[Message]) -> String {
    conversation
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { text, .. } => Some(text.trim().to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    crate::tools::agent::one_line(line)
}
