//! Sub-agents in the cockpit: each has a conversation of its own, shown one at a time in the
//! conversation pane (the session's own agent, `main`, or a sub-agent); their runs share the
//! results pane, tagged with the agent; their requests share the one queue.
//!
//! `App::entries` always holds the conversation on screen; the others wait in their
//! `AgentView` (and `main`'s in `Agents::main_entries` while a sub-agent is shown). An event of
//! an agent not on screen is applied with its conversation swapped in, so every event is
//! handled by the same code whichever agent it belongs to.

use super::*;
use std::time::Instant;

use crate::protocol::{AgentLabel, AgentStatus};

/// A sub-agent as the cockpit knows it.
#[derive(Debug, Clone)]
pub struct AgentView {
    pub label: AgentLabel,
    /// The `agent` call that started it.
    pub call_id: String,
    pub depth: usize,
    pub mode: String,
    pub sandbox: Option<String>,
    /// `None` while it runs.
    pub ended: Option<AgentStatus>,
    /// Its final answer or why it ended (one line).
    pub summary: String,
    /// Its conversation, while another one is on screen.
    entries: Vec<Entry>,
    /// The calls of its last step, for the modal's "2 of 5" when it asks.
    batch: Batch,
}

/// Every sub-agent of this session, and which conversation is on screen.
#[derive(Debug, Clone, Default)]
pub struct Agents {
    pub list: Vec<AgentView>,
    /// The sub-agent whose conversation is on screen (`None`: the session's own).
    pub viewing: Option<usize>,
    /// The session's own conversation while a sub-agent's is on screen.
    main_entries: Vec<Entry>,
}

/// How an agent stands, as the agent list and the status bar say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentState {
    Running,
    /// Running, with requests in the queue.
    Waiting(usize),
    Ended(AgentStatus),
}

impl AgentState {
    pub fn words(self) -> String {
        match self {
            AgentState::Running => "running".into(),
            AgentState::Waiting(1) => "waiting for you".into(),
            AgentState::Waiting(n) => format!("waiting for you ({n})"),
            AgentState::Ended(status) => status.as_str().into(),
        }
    }
}

impl Agents {
    fn index(&self, id: &str) -> Option<usize> {
        self.list.iter().position(|a| a.label.id == id)
    }
}

impl App {
    /// The sub-agent whose call `call_id` is (its id is the call id's prefix: `a1-c1`);
    /// `None` for the session's own agent.
    pub(super) fn agent_of_call(&self, call_id: &str) -> Option<usize> {
        let (agent, _) = call_id.split_once('-')?;
        self.agents.index(agent)
    }
}

impl App {
    pub(super) fn agent_started(
        &mut self,
        agent: AgentLabel,
        call_id: String,
        depth: usize,
        (mode, sandbox): (String, Option<String>),
    ) {
        let view = AgentView {
            label: agent,
            call_id,
            depth,
            mode,
            sandbox,
            ended: None,
            summary: String::new(),
            entries: Vec::new(),
            batch: Batch::default(),
        };
        // The list is the tree: a sub-agent goes after its parent's last descendant, so the
        // list indents it under its own parent even when a sibling of the parent started
        // in between.
        let list = &mut self.agents.list;
        let at = match list.iter().position(|a| a.label.id == view.label.parent) {
            Some(parent) => {
                let depth = list[parent].depth;
                (parent + 1..list.len())
                    .find(|&i| list[i].depth <= depth)
                    .unwrap_or(list.len())
            }
            None => list.len(),
        };
        list.insert(at, view);
        if let Some(viewing) = self.agents.viewing.as_mut()
            && *viewing >= at
        {
            *viewing += 1;
        }
    }

    pub(super) fn agent_finished(&mut self, agent: &str, status: AgentStatus, summary: String) {
        if let Some(i) = self.agents.index(agent) {
            let view = &mut self.agents.list[i];
            view.ended = Some(status);
            view.summary = summary.clone();
            let line = match status {
                AgentStatus::Done => {
                    format!("finished: its answer went back to {}", view.label.parent)
                }
                other => format!("{}: {summary}", other.as_str()),
            };
            self.with_conversation(Some(i), |app| app.entries.push(Entry::Notice(line)));
        }
    }

    /// One event of sub-agent `agent`, applied to its conversation; its runs are tagged with it.
    pub(super) fn sub_agent_event(&mut self, agent: String, event: AgentEvent) -> Vec<Op> {
        let Some(i) = self.agents.index(&agent) else {
            // Events of an agent the cockpit was never told of (it cannot happen: the start
            // comes first) still show, in the session's conversation.
            return self.apply_event(event);
        };
        match event {
            AgentEvent::TurnStarted { prompt, .. } => {
                self.with_conversation(Some(i), |app| app.entries.push(Entry::User(prompt)));
                Vec::new()
            }
            // Its end is said by `AgentFinished`, and it must not end the session's turn.
            AgentEvent::TurnFinished { .. } => Vec::new(),
            AgentEvent::ToolStarted { ref call_id, .. } => {
                let call_id = call_id.clone();
                let ops = self.with_conversation(Some(i), |app| app.apply_event(event));
                if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
                    run.agent = Some(agent);
                }
                ops
            }
            event => self.with_conversation(Some(i), |app| app.apply_event(event)),
        }
    }

    /// Runs `f` with the conversation (and batch) of `agent` (`None`: the session's own) as
    /// `entries`, whichever one is on screen.
    pub(super) fn with_conversation<R>(
        &mut self,
        agent: Option<usize>,
        f: impl FnOnce(&mut App) -> R,
    ) -> R {
        if agent == self.agents.viewing && agent.is_none() {
            return f(self);
        }
        if agent == self.agents.viewing {
            // On screen, but its batch waits in its view.
            let i = agent.unwrap_or_default();
            std::mem::swap(&mut self.batch, &mut self.agents.list[i].batch);
            let r = f(self);
            std::mem::swap(&mut self.batch, &mut self.agents.list[i].batch);
            return r;
        }
        let held = match agent {
            None => std::mem::take(&mut self.agents.main_entries),
            Some(i) => std::mem::take(&mut self.agents.list[i].entries),
        };
        let shown = std::mem::replace(&mut self.entries, held);
        if let Some(i) = agent {
            std::mem::swap(&mut self.batch, &mut self.agents.list[i].batch);
        }
        let r = f(self);
        if let Some(i) = agent {
            std::mem::swap(&mut self.batch, &mut self.agents.list[i].batch);
        }
        let held = std::mem::replace(&mut self.entries, shown);
        match agent {
            None => self.agents.main_entries = held,
            Some(i) => self.agents.list[i].entries = held,
        }
        r
    }

    /// Shows the conversation of `agent` (`None`: the session's own).
    pub fn view_agent(&mut self, agent: Option<usize>) {
        let agent = agent.filter(|i| *i < self.agents.list.len());
        if agent == self.agents.viewing {
            return;
        }
        let shown = std::mem::take(&mut self.entries);
        match self.agents.viewing {
            None => self.agents.main_entries = shown,
            Some(i) => self.agents.list[i].entries = shown,
        }
        self.entries = match agent {
            None => std::mem::take(&mut self.agents.main_entries),
            Some(i) => std::mem::take(&mut self.agents.list[i].entries),
        };
        self.agents.viewing = agent;
        self.conversation = Default::default();
    }

    /// The next (`forward`) or previous conversation, `main` first, then each sub-agent in
    /// the order they started.
    pub fn cycle_agent(&mut self, forward: bool) {
        let count = self.agents.list.len() + 1;
        if count == 1 {
            self.entries.push(Entry::Notice(
                "no sub-agents yet: this is the session's agent (the model starts one with the `agent` tool)"
                    .into(),
            ));
            return;
        }
        let at = self.agents.viewing.map_or(0, |i| i + 1);
        let next = if forward {
            (at + 1) % count
        } else {
            (at + count - 1) % count
        };
        self.view_agent(next.checked_sub(1));
    }

    /// How `agent` stands now: its requests in the queue count as waiting for you.
    pub fn agent_state(&self, agent: usize) -> AgentState {
        let view = &self.agents.list[agent];
        if let Some(status) = view.ended {
            return AgentState::Ended(status);
        }
        match self.requests_of(Some(&view.label.id)) {
            0 => AgentState::Running,
            n => AgentState::Waiting(n),
        }
    }

    /// Calls that wait for a person, in every agent: the requests in the queue, and each
    /// running agent's calls of its current step still to come that will ask (as the status
    /// bar and the modal's "2 of 5" count them).
    pub fn waiting_calls(&self) -> usize {
        let mut queued_by_sub_agents = 0;
        let mut sub_agents = 0;
        for agent in &self.agents.list {
            let queued = self.requests_of(Some(&agent.label.id));
            queued_by_sub_agents += queued;
            sub_agents += match agent.ended {
                Some(_) => queued,
                None => queued.max(agent.batch.undecided()),
            };
        }
        let main = self
            .pending_approvals()
            .saturating_sub(queued_by_sub_agents)
            .max(self.batch.undecided());
        main + sub_agents
    }

    /// Requests in the queue from `agent` (`None`: the session's own agent).
    pub fn requests_of(&self, agent: Option<&str>) -> usize {
        self.overlays
            .iter()
            .filter_map(|o| match o {
                Overlay::Approval(a) => Some(a),
                _ => None,
            })
            .flat_map(|a| a.requests())
            .filter(|r| r.agent.as_ref().map(|l| l.id.as_str()) == agent)
            .count()
    }

    /// Whether the results pane shows run `index`: every run, or with the filter on (`a`),
    /// only the runs of the agent it was turned on for.
    pub fn run_shown(&self, index: usize) -> bool {
        match (&self.run_filter, self.runs.get(index)) {
            (None, Some(_)) => true,
            (Some(agent), Some(run)) => {
                run.agent.as_deref().unwrap_or(crate::protocol::MAIN_AGENT) == agent
            }
            (_, None) => false,
        }
    }

    /// Turns the results pane's filter on for the agent on screen, or off.
    pub fn toggle_run_filter(&mut self) {
        self.run_filter = match self.run_filter {
            Some(_) => None,
            None => Some(match self.agents.viewing {
                Some(i) => self.agents.list[i].label.id.clone(),
                None => crate::protocol::MAIN_AGENT.to_string(),
            }),
        };
        if let Some(last) = (0..self.runs.len()).rev().find(|i| self.run_shown(*i)) {
            self.selected_run = last;
        }
    }

    /// Reads the inbox again (requests waiting elsewhere); a source that cannot be read
    /// leaves the list as it was.
    pub fn refresh_inbox(&mut self) {
        if let Some(source) = &self.inbox_source
            && let Ok(entries) = source.list()
        {
            self.inbox = entries;
        }
    }

    /// When the first request of the inbox expires (`now` and `now_ms` being the same moment):
    /// the loop reads the inbox again then, so an expired request leaves the list even when
    /// nothing is written to the database. A millisecond past it, so the read finds it gone.
    pub fn next_inbox_expiry(&self, now: Instant, now_ms: u64) -> Option<Instant> {
        let first = self.inbox.iter().map(|e| e.expires_ms).min()?;
        Some(now + std::time::Duration::from_millis(first.saturating_sub(now_ms) + 1))
    }

    /// Answers request `id` of the inbox through its one-time code; the conversation says
    /// what became of it.
    pub(super) fn answer_inbox(&mut self, id: i64, allow: bool) {
        let Some(source) = self.inbox_source.clone() else {
            return;
        };
        let reason = (!allow).then(|| "denied from another airlock's inbox".to_string());
        let said = match source.answer(id, allow, reason) {
            Ok(done) => format!("inbox: {done}"),
            Err(why) => format!("inbox: nothing was answered: {why}"),
        };
        self.entries.push(Entry::Notice(said));
        self.refresh_inbox();
    }

    /// The name of the conversation on screen: `main` or a sub-agent's id and task.
    pub fn viewing_name(&self) -> Option<String> {
        let i = self.agents.viewing?;
        let label = &self.agents.list[i].label;
        Some(format!("{} · {}", label.id, label.task))
    }
}

impl App {
    /// Shows what undoing `call_id` (and every later call, with `and_later`) would do; the
    /// conversation says why when it cannot.
    pub(super) fn open_undo(&mut self, call_id: &str, and_later: bool) {
        let Some(source) = self.undo_source.clone() else {
            self.entries.push(Entry::Notice(
                "undo: this session keeps no history of the workspace".into(),
            ));
            return;
        };
        match source.plan(call_id, and_later) {
            Ok(plan) => self.overlays.push(Overlay::Undo(Box::new(
                crate::ui::overlay::UndoOverlay::new(plan, self.now),
            ))),
            Err(why) => self.entries.push(Entry::Notice(format!("undo: {why}"))),
        }
    }

    /// Does the undo that was shown; the conversation says what became of it (the model is
    /// told at its next request).
    pub(super) fn apply_undo(&mut self, plan: &crate::protocol::UndoPlan, overwrite: bool) {
        let Some(source) = self.undo_source.clone() else {
            return;
        };
        let said = match source.apply(plan, overwrite) {
            Ok(done) => format!("{done} (the model is told at its next request)"),
            Err(why) => format!("undo: {why}"),
        };
        self.entries.push(Entry::Notice(said));
    }
}
