//! The cockpit's state and what keys and agent events do to it. Nothing here draws or talks to
//! the terminal; `App` returns the `Op`s to send, so it is tested without an agent.
//!
//! The modal stack owns the keyboard: the top overlay gets every key; with no overlay, keys go to
//! the focused pane, and the prompt keeps its draft through everything.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use super::keys::{APPROVAL_OPTIONS, ApprovalChoice};
use crate::approval::approver::{ApprovalRequest, Decision};
use crate::protocol::{AgentEvent, GrantSummary, Op, TurnOutcome};
use crate::tools::output::BoundedOutput;
use crate::tools::{Stream, ToolStatus};

/// Keys that arrive sooner than this after an approval appears (or after the previous key, while
/// still unarmed) are not taken as answers: a person typing into the prompt must not answer a
/// modal that popped up under their fingers.
pub const ARM_DELAY: Duration = Duration::from_millis(400);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    User(String),
    Assistant(String),
    Tool {
        call_id: String,
        title: String,
        state: ToolLine,
    },
    Notice(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolLine {
    Asking,
    Denied(String),
    Running,
    Finished(ToolStatus, Option<i32>),
}

#[derive(Debug, Clone)]
pub struct Run {
    pub call_id: String,
    pub title: String,
    pub status: RunStatus,
    pub started: Instant,
    pub ended: Option<Instant>,
    pub output: BoundedOutput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Running,
    Done(ToolStatus, Option<i32>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Prompt,
    Results,
}

/// The approval modal: requests queue first-in first-out inside it.
#[derive(Debug)]
pub struct ApprovalOverlay {
    pub queue: VecDeque<ApprovalRequest>,
    /// Keys before this instant are swallowed (and push it later).
    pub armed_at: Instant,
    pub scroll: u16,
    /// While typing a reason after `N`.
    pub reason: Option<TextArea<'static>>,
    /// How many requests this modal has shown so far (for "2 of 3").
    pub answered: usize,
}

#[derive(Debug)]
pub enum Overlay {
    Approval(Box<ApprovalOverlay>),
    Help,
    Grants {
        selected: usize,
    },
    /// The session's decisions and their sources; scrolled from the newest.
    Audit {
        scroll: u16,
    },
    ConfirmQuit,
}

/// Facts for the status bar.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub model: String,
    pub mode: String,
    pub workspace: String,
}

pub struct App {
    pub entries: Vec<Entry>,
    pub runs: Vec<Run>,
    pub selected_run: usize,
    pub expanded: bool,
    pub follow: bool,
    /// Lines scrolled up from the bottom of the conversation.
    pub conversation_scroll: u16,
    pub results_scroll: u16,
    pub prompt: TextArea<'static>,
    pub focus: Focus,
    pub overlays: Vec<Overlay>,
    pub status: Status,
    pub grants: Vec<GrantSummary>,
    /// This session's audit trail, as the agent last sent it.
    pub audit: Vec<String>,
    pub turn_running: bool,
    pub should_quit: bool,
    /// The clock the screen shows (elapsed times); set by the loop, fixed in tests.
    pub now: Instant,
    /// Wall-clock milliseconds, for approval deadlines; set by the loop, fixed in tests.
    pub wall_ms: u64,
    /// Last known areas of the panes, for mouse scrolling: (x, y, width, height).
    pub conversation_area: (u16, u16, u16, u16),
    pub results_area: (u16, u16, u16, u16),
}

fn new_prompt() -> TextArea<'static> {
    let mut prompt = TextArea::default();
    prompt.set_placeholder_text("Ask the agent… (Enter sends, Shift-Enter adds a line, F1 help)");
    prompt
}

impl App {
    pub fn new(status: Status, now: Instant) -> App {
        App {
            entries: Vec::new(),
            runs: Vec::new(),
            selected_run: 0,
            expanded: false,
            follow: true,
            conversation_scroll: 0,
            results_scroll: 0,
            prompt: new_prompt(),
            focus: Focus::Prompt,
            overlays: Vec::new(),
            status,
            grants: Vec::new(),
            audit: Vec::new(),
            turn_running: false,
            should_quit: false,
            now,
            wall_ms: 0,
            conversation_area: (0, 0, 0, 0),
            results_area: (0, 0, 0, 0),
        }
    }

    pub fn draft(&self) -> String {
        self.prompt.lines().join("\n")
    }

    pub fn pending_approvals(&self) -> usize {
        self.overlays
            .iter()
            .map(|o| match o {
                Overlay::Approval(a) => a.queue.len(),
                _ => 0,
            })
            .sum()
    }

    pub fn running_tools(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.status == RunStatus::Running)
            .count()
    }

    fn approval_mut(&mut self) -> Option<&mut ApprovalOverlay> {
        self.overlays.iter_mut().find_map(|o| match o {
            Overlay::Approval(a) => Some(a.as_mut()),
            _ => None,
        })
    }

    fn tool_line(&mut self, call_id: &str, state: ToolLine) {
        for entry in self.entries.iter_mut().rev() {
            if let Entry::Tool {
                call_id: id,
                state: s,
                ..
            } = entry
            {
                if id == call_id {
                    *s = state;
                    return;
                }
            }
        }
    }

    fn ensure_tool_line(&mut self, call_id: &str, title: String, state: ToolLine) {
        let exists = self
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Tool { call_id: id, .. } if id == call_id));
        if exists {
            self.tool_line(call_id, state);
        } else {
            self.entries.push(Entry::Tool {
                call_id: call_id.to_string(),
                title,
                state,
            });
        }
    }

    /// Applies one agent event. Returns ops to send (none today; kept for symmetry with keys).
    pub fn on_agent_event(&mut self, event: AgentEvent) -> Vec<Op> {
        match event {
            AgentEvent::TurnStarted { prompt, .. } => {
                self.turn_running = true;
                self.entries.push(Entry::User(prompt));
            }
            AgentEvent::TextDelta { text } => match self.entries.last_mut() {
                Some(Entry::Assistant(s)) => s.push_str(&text),
                _ => self.entries.push(Entry::Assistant(text)),
            },
            AgentEvent::ApprovalRequested { request } => {
                let call = crate::approval::gate::ToolCall {
                    id: request.call_id.clone(),
                    tool: request.tool.clone(),
                    args: serde_json::from_str(&request.frozen.canonical).unwrap_or_default(),
                };
                let title = crate::agent::title(&call);
                self.ensure_tool_line(&request.call_id, title, ToolLine::Asking);
                let now = self.now;
                match self.approval_mut() {
                    Some(overlay) => overlay.queue.push_back(*request),
                    None => self
                        .overlays
                        .push(Overlay::Approval(Box::new(ApprovalOverlay {
                            queue: VecDeque::from([*request]),
                            armed_at: now + ARM_DELAY,
                            scroll: 0,
                            reason: None,
                            answered: 0,
                        }))),
                }
            }
            AgentEvent::ApprovalSettled { call_id, by } => {
                if let Some(overlay) = self.approval_mut() {
                    overlay.queue.retain(|r| r.call_id != call_id);
                }
                self.close_empty_approval();
                self.entries
                    .push(Entry::Notice(format!("{call_id} was answered by {by}")));
            }
            AgentEvent::ToolDenied {
                call_id,
                tool,
                message,
                ..
            } => {
                self.ensure_tool_line(&call_id, tool, ToolLine::Denied(message));
                // A request the agent settled on its own (interrupt, timeout) leaves the queue.
                if let Some(overlay) = self.approval_mut() {
                    overlay.queue.retain(|r| r.call_id != call_id);
                }
                self.close_empty_approval();
            }
            AgentEvent::ToolStarted { call_id, title, .. } => {
                self.ensure_tool_line(&call_id, title.clone(), ToolLine::Running);
                self.runs.push(Run {
                    call_id,
                    title,
                    status: RunStatus::Running,
                    started: self.now,
                    ended: None,
                    output: BoundedOutput::new(),
                });
                if self.follow {
                    self.selected_run = self.runs.len() - 1;
                }
            }
            AgentEvent::ToolOutput {
                call_id,
                stream,
                text,
            } => {
                if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
                    run.output.push(stream, text.as_bytes());
                }
            }
            AgentEvent::ToolFinished {
                call_id,
                status,
                exit_code,
                error,
                ..
            } => {
                if let Some(run) = self.runs.iter_mut().rev().find(|r| r.call_id == call_id) {
                    run.status = RunStatus::Done(status, exit_code);
                    run.ended = Some(self.now);
                    if let Some(error) = error {
                        run.output
                            .push(Stream::Stderr, format!("{error}\n").as_bytes());
                    }
                    run.output.finish();
                }
                self.tool_line(&call_id, ToolLine::Finished(status, exit_code));
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                self.turn_running = false;
                match outcome {
                    TurnOutcome::Completed => {}
                    TurnOutcome::Interrupted => {
                        self.entries.push(Entry::Notice("interrupted".into()))
                    }
                    TurnOutcome::StepLimit => self
                        .entries
                        .push(Entry::Notice("stopped: step limit reached".into())),
                    TurnOutcome::Failed { message } => self
                        .entries
                        .push(Entry::Notice(format!("turn failed: {message}"))),
                    TurnOutcome::Parked { request, .. } => self.entries.push(Entry::Notice(
                        format!("parked: {} waits for a decision", request.call_id),
                    )),
                }
                // Nothing can be waiting any more.
                self.overlays.retain(|o| !matches!(o, Overlay::Approval(_)));
            }
            AgentEvent::Error { message } => self.entries.push(Entry::Notice(message)),
            AgentEvent::Grants { grants } => {
                self.grants = grants;
            }
            AgentEvent::Checkpoint { .. } => {}
            AgentEvent::Audit { lines } => {
                self.audit = lines;
            }
            AgentEvent::ShutdownComplete => self.should_quit = true,
        }
        self.conversation_scroll = 0;
        Vec::new()
    }

    fn close_empty_approval(&mut self) {
        self.overlays
            .retain(|o| !matches!(o, Overlay::Approval(a) if a.queue.is_empty()));
    }

    /// Handles a key. Returns the ops it sends.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Op> {
        self.now = now;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(top) = self.overlays.last_mut() {
            return match top {
                Overlay::Approval(_) => self.approval_key(key, now),
                Overlay::Help => {
                    if matches!(
                        key.code,
                        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') | KeyCode::F(1)
                    ) {
                        self.overlays.pop();
                    }
                    Vec::new()
                }
                Overlay::Grants { selected } => {
                    let count = self.grants.len();
                    match key.code {
                        KeyCode::Esc | KeyCode::Char('q') => {
                            self.overlays.pop();
                            Vec::new()
                        }
                        KeyCode::Char('j') | KeyCode::Down => {
                            *selected = (*selected + 1).min(count.saturating_sub(1));
                            Vec::new()
                        }
                        KeyCode::Char('k') | KeyCode::Up => {
                            *selected = selected.saturating_sub(1);
                            Vec::new()
                        }
                        KeyCode::Char('d') => match self.grants.get(*selected) {
                            Some(g) => vec![Op::RevokeGrant { id: g.id }],
                            None => Vec::new(),
                        },
                        _ => Vec::new(),
                    }
                }
                Overlay::Audit { scroll } => {
                    match key.code {
                        KeyCode::Esc | KeyCode::Char('q') | KeyCode::F(2) => {
                            self.overlays.pop();
                        }
                        KeyCode::Char('k') | KeyCode::Up => *scroll = scroll.saturating_add(1),
                        KeyCode::Char('j') | KeyCode::Down => *scroll = scroll.saturating_sub(1),
                        _ => {}
                    }
                    Vec::new()
                }
                Overlay::ConfirmQuit => {
                    let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Char('q'))
                        || (ctrl && key.code == KeyCode::Char('d'));
                    self.overlays.pop();
                    if yes {
                        self.should_quit = true;
                        return vec![Op::Shutdown];
                    }
                    Vec::new()
                }
            };
        }
        // No overlay: global keys first.
        match (key.code, ctrl) {
            (KeyCode::Char('c'), true) => {
                if self.turn_running {
                    return vec![Op::Interrupt];
                }
                self.prompt = new_prompt();
                return Vec::new();
            }
            (KeyCode::Char('d'), true) => return self.request_quit(),
            (KeyCode::Char('g'), true) => return self.open_grants(),
            (KeyCode::F(1), _) => {
                self.overlays.push(Overlay::Help);
                return Vec::new();
            }
            (KeyCode::F(2), _) => return self.open_audit(),
            (KeyCode::Tab | KeyCode::BackTab, _) => {
                self.focus = match self.focus {
                    Focus::Prompt => Focus::Results,
                    Focus::Results => Focus::Prompt,
                };
                return Vec::new();
            }
            _ => {}
        }
        match self.focus {
            Focus::Prompt => self.prompt_key(key),
            Focus::Results => self.results_key(key),
        }
    }

    fn request_quit(&mut self) -> Vec<Op> {
        if self.running_tools() > 0 || self.turn_running {
            self.overlays.push(Overlay::ConfirmQuit);
            Vec::new()
        } else {
            self.should_quit = true;
            vec![Op::Shutdown]
        }
    }

    fn open_audit(&mut self) -> Vec<Op> {
        self.overlays.push(Overlay::Audit { scroll: 0 });
        vec![Op::ListAudit]
    }

    fn open_grants(&mut self) -> Vec<Op> {
        self.overlays.push(Overlay::Grants { selected: 0 });
        vec![Op::ListGrants]
    }

    fn prompt_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let newline = key.modifiers.contains(KeyModifiers::SHIFT)
            || key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if newline => {
                self.prompt.insert_newline();
                Vec::new()
            }
            KeyCode::Enter => {
                let text = self.draft();
                if text.trim().is_empty() {
                    return Vec::new();
                }
                if self.turn_running {
                    self.entries.push(Entry::Notice(
                        "a turn is running: wait for it, or Ctrl-C to interrupt it (your draft is kept)".into(),
                    ));
                    return Vec::new();
                }
                self.prompt = new_prompt();
                vec![Op::Submit { prompt: text }]
            }
            KeyCode::Char('?') if self.prompt.is_empty() => {
                self.overlays.push(Overlay::Help);
                Vec::new()
            }
            _ => {
                self.prompt.input(key);
                Vec::new()
            }
        }
    }

    fn results_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let count = self.runs.len();
        match key.code {
            KeyCode::Esc => self.focus = Focus::Prompt,
            KeyCode::Char('j') | KeyCode::Down => {
                self.follow = false;
                self.selected_run = (self.selected_run + 1).min(count.saturating_sub(1));
            }
            KeyCode::Char('k') | KeyCode::Up => {
                self.follow = false;
                self.selected_run = self.selected_run.saturating_sub(1);
            }
            KeyCode::Enter => self.expanded = !self.expanded,
            KeyCode::Char('f') => {
                self.follow = !self.follow;
                if self.follow {
                    self.selected_run = count.saturating_sub(1);
                    self.results_scroll = 0;
                }
            }
            KeyCode::Char('x') => {
                if let Some(run) = self.runs.get(self.selected_run) {
                    if run.status == RunStatus::Running {
                        return vec![Op::CancelTool {
                            call_id: run.call_id.clone(),
                        }];
                    }
                }
            }
            KeyCode::Char('g') => return self.open_grants(),
            KeyCode::Char('l') => return self.open_audit(),
            KeyCode::Char('?') => self.overlays.push(Overlay::Help),
            KeyCode::Char('q') => return self.request_quit(),
            _ => {}
        }
        Vec::new()
    }

    fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Op> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some(overlay) = self.approval_mut() else {
            return Vec::new();
        };
        // Ctrl-C always works: deny everything queued and stop the turn. Nothing runs.
        if ctrl && key.code == KeyCode::Char('c') {
            let mut ops: Vec<Op> = overlay
                .queue
                .drain(..)
                .map(|r| Op::Decide {
                    call_id: r.call_id,
                    decision: Decision::Deny {
                        reason: Some("interrupted by the user".into()),
                    },
                })
                .collect();
            ops.push(Op::Interrupt);
            self.close_empty_approval();
            return ops;
        }
        // Typing a reason after `N`.
        if let Some(reason) = overlay.reason.as_mut() {
            return match key.code {
                KeyCode::Esc => {
                    overlay.reason = None;
                    Vec::new()
                }
                KeyCode::Enter => {
                    let text = reason.lines().join("\n").trim().to_string();
                    overlay.reason = None;
                    let decision = Decision::Deny {
                        reason: (!text.is_empty()).then_some(text),
                    };
                    self.decide(decision, now)
                }
                _ => {
                    reason.input(key);
                    Vec::new()
                }
            };
        }
        // Scrolling is always safe, armed or not.
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => {
                overlay.scroll = overlay.scroll.saturating_add(1);
                return Vec::new();
            }
            KeyCode::Char('k') | KeyCode::Up => {
                overlay.scroll = overlay.scroll.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::PageDown => {
                overlay.scroll = overlay.scroll.saturating_add(10);
                return Vec::new();
            }
            KeyCode::PageUp => {
                overlay.scroll = overlay.scroll.saturating_sub(10);
                return Vec::new();
            }
            KeyCode::Home => {
                overlay.scroll = 0;
                return Vec::new();
            }
            KeyCode::End => {
                overlay.scroll = u16::MAX / 2;
                return Vec::new();
            }
            _ => {}
        }
        if now < overlay.armed_at {
            // Too soon: the person may not have seen it yet. Keep it unarmed a little longer.
            overlay.armed_at = now + ARM_DELAY;
            return Vec::new();
        }
        let choice = match key.code {
            KeyCode::Esc => Some(ApprovalChoice::Deny),
            KeyCode::Char('d') => {
                let offered = overlay
                    .queue
                    .front()
                    .is_some_and(|r| r.directory_scope.is_some() && r.session_scopes.is_some());
                if offered {
                    return self.decide(Decision::AllowSession { directory: true }, now);
                }
                None
            }
            KeyCode::Char(c) => APPROVAL_OPTIONS
                .iter()
                .find(|o| o.key == c)
                .map(|o| o.choice),
            _ => None,
        };
        match choice {
            None => Vec::new(),
            Some(ApprovalChoice::AllowSession) => {
                let offered = overlay
                    .queue
                    .front()
                    .is_some_and(|r| r.session_scopes.is_some());
                if offered {
                    self.decide(Decision::AllowSession { directory: false }, now)
                } else {
                    Vec::new()
                }
            }
            Some(ApprovalChoice::DenyWithReason) => {
                let mut reason = TextArea::default();
                reason.set_placeholder_text("why not? (Enter sends, Esc goes back)");
                overlay.reason = Some(reason);
                Vec::new()
            }
            Some(other) => match other.decision() {
                Some(decision) => self.decide(decision, now),
                None => Vec::new(),
            },
        }
    }

    /// Answers the front request; the next one (if any) arms again after the delay; when the
    /// queue is empty the modal closes and focus is back where it was, draft intact.
    fn decide(&mut self, decision: Decision, now: Instant) -> Vec<Op> {
        let Some(overlay) = self.approval_mut() else {
            return Vec::new();
        };
        let Some(request) = overlay.queue.pop_front() else {
            return Vec::new();
        };
        overlay.answered += 1;
        overlay.scroll = 0;
        overlay.armed_at = now + ARM_DELAY;
        let granted = matches!(decision, Decision::AllowSession { .. });
        self.close_empty_approval();
        let mut ops = vec![Op::Decide {
            call_id: request.call_id,
            decision,
        }];
        if granted {
            ops.push(Op::ListGrants);
        }
        ops
    }

    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        let inside = |(x, y, w, h): (u16, u16, u16, u16)| {
            mouse.column >= x && mouse.column < x + w && mouse.row >= y && mouse.row < y + h
        };
        let up = matches!(mouse.kind, MouseEventKind::ScrollUp);
        let down = matches!(mouse.kind, MouseEventKind::ScrollDown);
        if !up && !down {
            return;
        }
        if let Some(Overlay::Approval(a)) = self.overlays.last_mut() {
            a.scroll = if up {
                a.scroll.saturating_sub(3)
            } else {
                a.scroll.saturating_add(3)
            };
        } else if inside(self.conversation_area) {
            self.conversation_scroll = if up {
                self.conversation_scroll.saturating_add(3)
            } else {
                self.conversation_scroll.saturating_sub(3)
            };
        } else if inside(self.results_area) {
            self.follow = false;
            self.results_scroll = if up {
                self.results_scroll.saturating_add(3)
            } else {
                self.results_scroll.saturating_sub(3)
            };
        }
    }
}

#[cfg(test)]
mod tests;
