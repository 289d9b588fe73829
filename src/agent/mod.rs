//! The agent: one background task that owns the conversation and runs turns. Each turn asks the
//! model, takes its tool calls one at a time in model order through the gate (one human answers
//! one question at a time), runs approved calls concurrently under one cancellation token, and
//! hands results back to the model in the order it asked.
//!
//! The driver talks to the task only through `protocol`: `Op` in, `AgentEvent` out. What must
//! outlive the process goes through traits the driver implements (`Journal` for the session,
//! `CodeBook` for one-time codes).
//!
//! Imports `protocol`, `output`, `clock`, `approval` (the gate), `model` and `tools`; must never
//! import `store`, `cli`, `ui`, `config`, `mcp`, `sandbox` or `demo`.

mod approver;
mod batch;
mod checkpoint;
mod codes;
mod decisions;
mod ops;
mod resume;
mod subagents;
mod unread;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::approval::approver::Approver;
use crate::approval::gate::{Gate, GateOutcome};
use crate::model::{CallResult, Message, ModelClient};
use crate::output::OutputSink;
use crate::protocol::{AgentEvent, CallId, Op, TurnOutcome};
use crate::tools::ToolRegistry;

use crate::protocol::AgentHandle;
use crate::protocol::ToolCall;
use crate::protocol::ToolStatus;
pub use approver::ChannelApprover;
use batch::tool_message;
pub use batch::{refused_title, title};
pub use checkpoint::{
    Asking, Checkpoint, CheckpointRef, Checkpoints, Journal, KeptStanding, ParkedAgent, Standing,
    StandingBeside,
};
pub use codes::{CodeBook, IssuedCode};
use ops::{Next, handle_grant_op, handle_op_during_turn};
pub use subagents::{MAIN, SubAgentLimits};

/// How a batch of calls ended.
enum BatchEnd {
    Done(Vec<Message>),
    Parked {
        results: Vec<Option<Message>>,
        /// The next call to gate (the parked one, when this agent's own call parked).
        index: usize,
        /// The request the run parks on (the first in model order: this agent's, or a
        /// sub-agent's). Any other waiting request is asked again when the run goes on.
        request: Box<crate::protocol::ApprovalRequest>,
        /// Sub-agents of this batch that parked, each at its `agent` call.
        agents: Vec<ParkedAgent>,
    },
}

/// Most model round trips in one turn.
pub const DEFAULT_MAX_STEPS: usize = 50;

/// State shared by the turn and the op handler: who is waiting for an answer, what is running,
/// and how to stop the turn.
#[derive(Default)]
pub(crate) struct Control {
    decisions: decisions::Decisions,
    running: Mutex<HashMap<CallId, CancellationToken>>,
    turn: Mutex<Option<CancellationToken>>,
    /// The driver is shutting down: what the interrupt does to the turn from now on (requests
    /// denied, tools killed) is not the person's decision, so it is not journaled; the session
    /// resumes from where it stood.
    closing: std::sync::atomic::AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct AgentConfig {
    pub max_steps: usize,
    /// Keeps where the turn stands as it moves (a headless run's checkpoints), so that another
    /// process can go on with it; and seals a parked turn's checkpoint.
    pub checkpoints: Option<Arc<dyn Checkpoints>>,
    /// Give every approval request a one-time code from this book too (answerable elsewhere).
    pub remote: Option<Arc<dyn CodeBook>>,
    /// Keep the session durable as it moves (the cockpit's sessions).
    pub journal: Option<Arc<dyn Journal>>,
    /// How deep sub-agents nest and how many run at once.
    pub sub_agents: SubAgentLimits,
    /// Keeps the workspace before each call that may change it, so the call can be undone.
    pub history: Option<Arc<dyn crate::protocol::WorkspaceHistory>>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_steps: DEFAULT_MAX_STEPS,
            checkpoints: None,
            remote: None,
            journal: None,
            sub_agents: SubAgentLimits::default(),
            history: None,
        }
    }
}

/// Starts the agent task. `make_gate` receives the approver that asks the driver (through
/// `AgentEvent::ApprovalRequested` and `Op::Decide`); a headless driver may use its own instead.
pub fn spawn(
    model: Arc<dyn ModelClient>,
    tools: Arc<ToolRegistry>,
    make_gate: impl FnOnce(Arc<dyn Approver>) -> Gate,
    config: AgentConfig,
) -> AgentHandle {
    spawn_with(model, tools, make_gate, config, None)
}

/// What a resumed agent starts from: the checkpoint, and the parked call's decision
/// (`(call id, frozen call, allow, reason)`), already taken by its one-time code.
pub struct Resume {
    pub checkpoint: Checkpoint,
    /// The decision for the parked call; none when resuming a run whose process died.
    pub answer: Option<ParkedAnswer>,
    /// Tell the driver the conversation so far (`AgentEvent::Restored`), so it shows it again.
    pub show_history: bool,
}

/// How the parked call was decided.
pub struct ParkedAnswer {
    pub call_id: String,
    pub frozen: crate::protocol::FrozenCall,
    pub allow: bool,
    /// Allowed for the session: the call's scopes become session grants.
    pub session_grant: bool,
    pub reason: Option<String>,
    /// For a file call: the physical path it was judged on when it parked (what was approved).
    pub judged_path: Option<std::path::PathBuf>,
    /// For an MCP call: the digest of the tool definition it was judged on when it parked.
    pub mcp_definition: Option<String>,
    /// A change given with the code (kept hunks, an edited command), and the preview the
    /// code showed (what the hunks are numbered in).
    pub change: Option<(crate::protocol::Amendment, Option<crate::protocol::Preview>)>,
}

/// Like `spawn`, and when `resume` is given the task first finishes the parked turn.
pub fn spawn_with(
    model: Arc<dyn ModelClient>,
    tools: Arc<ToolRegistry>,
    make_gate: impl FnOnce(Arc<dyn Approver>) -> Gate,
    config: AgentConfig,
    resume: Option<Resume>,
) -> AgentHandle {
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    let control = Arc::new(Control::default());
    let approver: Arc<dyn Approver> = Arc::new(
        ChannelApprover::new(control.clone(), event_tx.clone()).with_remote(config.remote.clone()),
    );
    let gate = Arc::new(make_gate(approver));
    let spawner = Arc::new(subagents::Spawner {
        model: model.clone(),
        tools: tools.clone(),
        gate: gate.clone(),
        events: event_tx.clone(),
        control: control.clone(),
        tree: subagents::Tree::new(config.sub_agents),
        depth: 0,
        id: MAIN.into(),
        max_steps: config.max_steps,
        reserved: Default::default(),
        parked: Default::default(),
        history: config.history.clone(),
    });
    let agent = Agent {
        model,
        tools,
        gate,
        events: event_tx,
        control,
        conversation: Vec::new(),
        turn: 0,
        config,
        journal_failed: std::sync::atomic::AtomicBool::new(false),
        checkpoint_failed: std::sync::atomic::AtomicBool::new(false),
        spawner,
        tag: None,
    };
    let task = tokio::spawn(async move {
        let mut agent = agent;
        if let Some(r) = resume {
            if r.show_history {
                agent.emit(AgentEvent::Restored {
                    session: Box::new(r.checkpoint.restored_session()),
                });
            }
            if r.checkpoint.idle {
                agent.restore(r.checkpoint);
                return agent.run(op_rx).await;
            }
            // Sub-agents started after the resume are numbered after those before it.
            agent.spawner.numbered_after(r.checkpoint.sub_agents);
            let mut op_rx = op_rx;
            if agent
                .drive_turn(
                    TurnStart::Resume(Box::new(r.checkpoint), r.answer.map(Box::new)),
                    &mut op_rx,
                )
                .await
            {
                agent.emit(AgentEvent::ShutdownComplete);
                return;
            }
            return agent.run(op_rx).await;
        }
        agent.run(op_rx).await
    });
    AgentHandle {
        ops: op_tx,
        events: event_rx,
        task,
    }
}

struct Agent {
    model: Arc<dyn ModelClient>,
    tools: Arc<ToolRegistry>,
    gate: Arc<Gate>,
    events: mpsc::UnboundedSender<AgentEvent>,
    control: Arc<Control>,
    conversation: Vec<Message>,
    turn: u64,
    config: AgentConfig,
    /// The journal failed once and the driver was told; it is not told again.
    journal_failed: std::sync::atomic::AtomicBool,
    /// The same for the checkpoint keeper.
    checkpoint_failed: std::sync::atomic::AtomicBool,
    /// Starts this agent's sub-agents.
    spawner: Arc<subagents::Spawner>,
    /// A sub-agent's id: its events go out wrapped in `AgentEvent::Agent`, its call ids start
    /// with it. `None` for the session's own agent.
    tag: Option<String>,
}

/// How a turn begins: with the person's prompt, or going on with a checkpoint.
enum TurnStart {
    Prompt(String),
    Resume(Box<Checkpoint>, Option<Box<ParkedAnswer>>),
}

impl Agent {
    /// Runs one turn while answering ops (decisions, cancels, grants, shutdown); true when the
    /// driver asked to shut down.
    async fn drive_turn(
        &mut self,
        start: TurnStart,
        ops: &mut mpsc::UnboundedReceiver<Op>,
    ) -> bool {
        let control = self.control.clone();
        let events = self.events.clone();
        let gate = self.gate.clone();
        let mut shutdown = false;
        // The turn's token exists before any op is looked at, so an interrupt that arrives
        // before the turn's first step still stops it.
        let cancel = CancellationToken::new();
        *lock(&control.turn) = Some(cancel.clone());
        let turn = async {
            match start {
                TurnStart::Prompt(prompt) => self.run_turn(prompt, cancel).await,
                TurnStart::Resume(checkpoint, answer) => {
                    self.resume_turn(*checkpoint, answer.map(|a| *a), cancel)
                        .await
                }
            }
        };
        tokio::pin!(turn);
        loop {
            tokio::select! {
                _ = &mut turn => break,
                op = ops.recv() => match op {
                    Some(op) if handle_grant_op(&gate, &events, &op) => {}
                    Some(op) => {
                        if let Next::Shutdown = handle_op_during_turn(&control, &events, op) {
                            shutdown = true;
                        }
                    }
                    None => {
                        control.close();
                        shutdown = true;
                    }
                },
            }
        }
        shutdown
    }

    async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Op>) {
        while let Some(op) = ops.recv().await {
            match op {
                Op::Submit { prompt } => {
                    if self.drive_turn(TurnStart::Prompt(prompt), &mut ops).await {
                        break;
                    }
                }
                Op::Shutdown => break,
                Op::Interrupt => {}
                Op::ListGrants | Op::RevokeGrant { .. } | Op::ListAudit => {
                    handle_grant_op(&self.gate, &self.events, &op);
                }
                Op::Decide { call_id, .. } => {
                    let _ = self.events.send(AgentEvent::Error {
                        message: format!(
                            "no approval is waiting for {call_id}; it may already be decided"
                        ),
                    });
                }
                Op::CancelTool { call_id } => {
                    let _ = self.events.send(AgentEvent::Error {
                        message: format!("{call_id} is not running"),
                    });
                }
                Op::Notice { message } => {
                    let _ = self.events.send(AgentEvent::Error { message });
                }
            }
        }
        let _ = self.events.send(AgentEvent::ShutdownComplete);
    }

    fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(tagged(self.tag.as_deref(), event));
    }

    async fn run_turn(&mut self, prompt: String, cancel: CancellationToken) {
        self.turn += 1;
        let turn = self.turn;
        self.emit(AgentEvent::TurnStarted {
            turn,
            prompt: prompt.clone(),
        });
        self.conversation.push(Message::User { text: prompt });
        self.journal(&[], &[], 0, &[], false);
        let outcome = self.turn_steps(&cancel).await;
        *lock(&self.control.turn) = None;
        self.journal(&[], &[], 0, &[], true);
        self.emit(AgentEvent::TurnFinished { turn, outcome });
    }

    async fn turn_steps(&mut self, cancel: &CancellationToken) -> TurnOutcome {
        // The last answer held calls that could not be read: said if the step limit ends it.
        let mut unreadable = false;
        for _ in 0..self.config.max_steps {
            if cancel.is_cancelled() {
                return TurnOutcome::Interrupted;
            }
            // What the person undid since the model last looked: it must not act on a
            // workspace that no longer exists.
            if let Some(history) = &self.config.history {
                for news in history.take_news() {
                    self.conversation.push(Message::User {
                        text: format!("[airlock] {news}"),
                    });
                }
            }
            let (delta_tx, mut delta_rx) = mpsc::unbounded_channel::<String>();
            let events = self.events.clone();
            let tag = self.tag.clone();
            let forward = tokio::spawn(async move {
                while let Some(text) = delta_rx.recv().await {
                    let _ = events.send(tagged(tag.as_deref(), AgentEvent::TextDelta { text }));
                }
            });
            let reply = tokio::select! {
                reply = self.model.respond(&self.conversation, delta_tx) => reply,
                _ = cancel.cancelled() => {
                    let _ = forward.await;
                    return TurnOutcome::Interrupted;
                }
            };
            let _ = forward.await;
            let (text, mut calls, malformed) = match reply {
                Ok(reply) => (reply.text, reply.calls, reply.malformed),
                Err(e) => {
                    return TurnOutcome::Failed {
                        message: e.to_string(),
                    };
                }
            };
            // A sub-agent's calls are told apart from every other agent's by its id; an id
            // of the session's agent that looks like one (`a1-c1`, which a model may send) is
            // renamed, so no two agents' calls ever share an id (in the answers waited for,
            // the running calls, the results pane).
            for call in &mut calls {
                match &self.tag {
                    Some(tag) => call.id = format!("{tag}-{}", call.id),
                    None if subagents::in_sub_agent_namespace(&call.id) => {
                        call.id = format!("{}-{}", MAIN, call.id)
                    }
                    None => {}
                }
            }
            let asked = !calls.is_empty();
            // The calls are moved into the conversation, and the batch borrows them from there:
            // one copy of a 100 MB `write_file`, not one per holder.
            self.conversation.push(Message::Assistant { text, calls });
            if !asked {
                return TurnOutcome::Completed;
            }
            // Nothing of an answer with an unreadable call runs; the model is told and asked
            // again, as the next step.
            unreadable = !malformed.is_empty();
            if unreadable {
                let results = self.refuse_unread(last_calls(&self.conversation), &malformed);
                self.conversation.extend(results);
                self.journal(&[], &[], 0, &[], false);
                continue;
            }
            let this = &*self;
            let calls = last_calls(&this.conversation);
            let empty = vec![None; calls.len()];
            this.checkpoint(calls, &empty, 0, &[]);
            match this
                .run_calls(calls, empty, 0, None, Vec::new(), cancel)
                .await
            {
                BatchEnd::Done(results) => self.conversation.extend(results),
                BatchEnd::Parked {
                    results,
                    index,
                    request,
                    agents,
                } => {
                    return this.park(calls, results, index, request, agents);
                }
            }
            if cancel.is_cancelled() {
                return TurnOutcome::Interrupted;
            }
        }
        if unreadable {
            self.emit(AgentEvent::Error {
                message: format!(
                    "the model kept sending tool calls whose arguments were not valid JSON; the \
                     turn stopped at its step limit ({} steps) and none of those calls ran",
                    self.config.max_steps
                ),
            });
        }
        TurnOutcome::StepLimit
    }

    /// Keeps where the turn stands: in the keeper of checkpoints and in the journal, when
    /// there are any. Both are done here, before the step this describes goes on.
    fn checkpoint(
        &self,
        calls: &[ToolCall],
        results: &[Option<Message>],
        next: usize,
        started: &[usize],
    ) {
        use std::sync::atomic::Ordering;
        self.journal(calls, results, next, started, false);
        let Some(keeper) = &self.config.checkpoints else {
            return;
        };
        let model = self.model.save();
        let checkpoint = CheckpointRef {
            conversation: &self.conversation,
            calls,
            results,
            parked: next,
            model: &model,
            turn: self.turn,
            started,
            idle: false,
            // A running turn's sub-agents are not kept: if the process stops, their calls are
            // reported interrupted, like any call that was running.
            agents: &[],
            sub_agents: self.spawner.sub_agents(),
        };
        if let Err(e) = keeper.keep(&checkpoint)
            && !self.checkpoint_failed.swap(true, Ordering::SeqCst)
        {
            self.emit(AgentEvent::Error {
                message: format!("this run's checkpoint could not be kept ({e})"),
            });
        }
    }

    /// Keeps where the session stands in the journal, if there is one and the driver is not
    /// shutting down.
    fn journal(
        &self,
        calls: &[ToolCall],
        results: &[Option<Message>],
        next: usize,
        started: &[usize],
        idle: bool,
    ) {
        use std::sync::atomic::Ordering;
        let Some(journal) = &self.config.journal else {
            return;
        };
        if self.control.closing.load(Ordering::SeqCst) {
            return;
        }
        let standing = Standing {
            calls,
            results,
            parked: next,
            model: self.model.save(),
            turn: self.turn,
            started,
            idle,
        };
        if let Err(e) = journal.save(&self.conversation, &standing)
            && !self.journal_failed.swap(true, Ordering::SeqCst)
        {
            self.emit(AgentEvent::Error {
                message: format!(
                    "this session could not be saved ({e}); it goes on, but --resume may not reopen it as it is now"
                ),
            });
        }
    }

    /// Takes up a conversation between turns: the next prompt goes on from it.
    fn restore(&mut self, checkpoint: Checkpoint) {
        self.turn = checkpoint.turn;
        self.conversation = checkpoint.conversation;
        self.model.restore(&checkpoint.model);
    }

    /// Ends a turn whose call at `index` parked: its checkpoint, sealed (by the keeper, when
    /// there is one, which may keep it elsewhere), goes to the driver with the request.
    fn park(
        &self,
        calls: &[ToolCall],
        results: Vec<Option<Message>>,
        index: usize,
        request: Box<crate::protocol::ApprovalRequest>,
        agents: Vec<ParkedAgent>,
    ) -> TurnOutcome {
        let model = self.model.save();
        let checkpoint = CheckpointRef {
            conversation: &self.conversation,
            calls,
            results: &results,
            parked: index,
            model: &model,
            turn: self.turn,
            started: &[],
            idle: false,
            agents: &agents,
            sub_agents: self.spawner.sub_agents(),
        };
        let sealed = match &self.config.checkpoints {
            Some(keeper) => keeper.seal(&checkpoint),
            None => Ok(checkpoint.saved()),
        };
        match sealed {
            Ok(checkpoint) => TurnOutcome::Parked {
                checkpoint: Box::new(checkpoint),
                request,
            },
            // Nothing of the parked call ran; without its checkpoint the run cannot go on later.
            Err(e) => TurnOutcome::Failed {
                message: format!(
                    "{} parked, but the run could not be kept to go on later ({e}); nothing of it ran",
                    request.call_id
                ),
            },
        }
    }
}

/// `event` as the driver gets it from the agent tagged `tag`: a sub-agent's wrapped in
/// `AgentEvent::Agent`, the session's own agent's as it is.
fn tagged(tag: Option<&str>, event: AgentEvent) -> AgentEvent {
    match tag {
        Some(agent) => AgentEvent::Agent {
            agent: agent.to_string(),
            event: Box::new(event),
        },
        None => event,
    }
}

/// The calls the conversation's last message asks for (none if it is not the model's).
fn last_calls(conversation: &[Message]) -> &[ToolCall] {
    match conversation.last() {
        Some(Message::Assistant { calls, .. }) => calls,
        _ => &[],
    }
}

#[cfg(test)]
mod tests;
