//! What keys and the mouse do to the cockpit. The window on top of the stack gets every key (its
//! own `on_key` in `ui::overlay`; this applies the `Outcome`). With no window open a key is looked
//! up in the panes' tables (`ui::keys`, which the help is drawn from): the keys that work
//! anywhere, the conversation's scroll keys, then the focused pane's.

use super::*;
use crate::ui::conversation;
use crate::ui::keys::{self, Action, Place};
use crate::ui::overlay::{
    AuditOverlay, ConfirmQuitOverlay, Context, Effect, GrantsOverlay, HelpOverlay, Outcome,
};

impl App {
    /// Handles a key. Returns the ops it sends.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Op> {
        self.now = now;
        // A `Ctrl-C` that armed quitting counts only for the very next key.
        let quit_armed = self.quit_armed();
        self.quit_armed_until = None;
        if !self.overlays.is_empty() {
            return self.overlay_key(key);
        }
        if let Some(action) = keys::action(Place::Anywhere, &key) {
            return self.anywhere(action, quit_armed);
        }
        if let Some(action) = keys::action(Place::Conversation, &key) {
            self.scroll_conversation(action);
            return Vec::new();
        }
        match self.focus {
            Focus::Prompt => self.prompt_key(key),
            Focus::Results => self.results_key(&key),
        }
    }

    fn anywhere(&mut self, action: Action, quit_armed: bool) -> Vec<Op> {
        match action {
            Action::SwitchFocus => {
                self.focus = match self.focus {
                    Focus::Prompt => Focus::Results,
                    Focus::Results => Focus::Prompt,
                };
            }
            Action::Interrupt if self.turn_running => return vec![Op::Interrupt],
            Action::Interrupt if !self.prompt.is_empty() => self.prompt = new_prompt(),
            // On an empty, idle prompt: a second `Ctrl-C` soon after quits (asking first, as
            // `Ctrl-D` does, while anything runs); the status bar says so meanwhile.
            Action::Interrupt if quit_armed => return self.request_quit(),
            Action::Interrupt => self.quit_armed_until = Some(self.now + QUIT_AGAIN),
            Action::Quit => return self.request_quit(),
            Action::Grants => return self.open_grants(),
            Action::Help => self.open_help(),
            Action::Audit => return self.open_audit(),
            Action::Agents => self
                .overlays
                .push(Overlay::Agents(crate::ui::overlay::AgentsOverlay::default())),
            Action::Inbox => {
                self.refresh_inbox();
                self.overlays
                    .push(Overlay::Inbox(crate::ui::overlay::InboxOverlay::default()));
            }
            Action::Devices => self.open_devices(),
            Action::NextAgent => self.cycle_agent(true),
            Action::PrevAgent => self.cycle_agent(false),
            _ => {}
        }
        Vec::new()
    }

    /// The conversation pane's size inside its border, as last drawn.
    fn conversation_size(&self) -> (usize, usize) {
        let (_, _, width, height) = self.conversation_area;
        (
            usize::from(width.saturating_sub(2)),
            usize::from(height.saturating_sub(2)),
        )
    }

    fn scroll_conversation(&mut self, action: Action) {
        let (width, height) = self.conversation_size();
        // A page keeps one line of the previous page in view, to read on from.
        let page = height.saturating_sub(1).max(1) as isize;
        let rows = match action {
            Action::Up(n) => -isize::from(n),
            Action::Down(n) => isize::from(n),
            Action::PageUp => -page,
            Action::PageDown => page,
            Action::Top => {
                self.conversation = conversation::first(&self.entries, width, height);
                return;
            }
            Action::Bottom => {
                self.conversation = conversation::View::Bottom;
                return;
            }
            _ => return,
        };
        self.conversation =
            conversation::scroll(&self.entries, self.conversation, width, height, rows);
    }

    fn open_help(&mut self) {
        self.overlays.push(Overlay::Help(HelpOverlay::default()));
    }

    /// Remembers the calls answered with a session grant, so the grant list is asked for again
    /// once the gate has stored it (see `grant_settled`).
    fn note_grants(&mut self, ops: &[Op]) {
        for op in ops {
            if let Op::Decide {
                call_id,
                decision: crate::protocol::Decision::AllowSession { .. },
            } = op
            {
                self.granting.push(call_id.clone());
            }
        }
    }

    /// The top window takes the key; what it asks beyond its own state is done here.
    fn overlay_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let cx = Context {
            now: self.now,
            screen: self.screen,
            grants: &self.grants,
            agents: &self.agents,
            inbox: &self.inbox,
            wall_ms: self.wall_ms,
        };
        let Some(top) = self.overlays.last_mut() else {
            return Vec::new();
        };
        let outcome = top.on_key(key, &cx);
        self.apply(outcome)
    }

    fn apply(&mut self, outcome: Outcome) -> Vec<Op> {
        if outcome.close {
            self.overlays.pop();
            // The modal is on top again (the help over it closed): its keys go live only after
            // it has been in sight for the arm delay again, so a second `Esc` meant for the
            // help cannot deny the call.
            let now = self.now;
            if let Some(Overlay::Approval(a)) = self.overlays.last_mut() {
                a.rearm(now);
            }
        }
        for effect in outcome.effects {
            match effect {
                Effect::OpenHelp(place) => self
                    .overlays
                    .push(Overlay::Help(HelpOverlay::at(place, self.screen))),
                Effect::Notice(text) => self.entries.push(Entry::Notice(text)),
                Effect::ViewAgent(agent) => self.view_agent(agent),
                Effect::InboxAnswer { id, allow } => self.answer_inbox(id, allow),
                Effect::UndoPlan { call_id, and_later } => self.open_undo(&call_id, and_later),
                Effect::UndoApply { plan, overwrite } => self.apply_undo(&plan, overwrite),
                Effect::RevokeDevice { id } => self.revoke_device(id),
                Effect::NewPairing => self.new_pairing(),
                Effect::OpenDevices => self.open_devices(),
                Effect::Parked { call_id, text } => {
                    let shown = self.ids.note(&call_id);
                    // Said in the conversation of the agent whose call it is.
                    let agent = self.agent_of_call(&call_id);
                    self.with_conversation(agent, |app| {
                        app.entries
                            .push(Entry::Notice(format!("parked {shown} {text}")))
                    });
                }
                Effect::Quit => self.should_quit = true,
                Effect::Edit(job) => self.editor_job = Some(job),
            }
        }
        self.note_grants(&outcome.ops);
        outcome.ops
    }

    fn request_quit(&mut self) -> Vec<Op> {
        if self.running_tools() > 0 || self.turn_running {
            self.overlays.push(Overlay::ConfirmQuit(ConfirmQuitOverlay));
            Vec::new()
        } else {
            self.should_quit = true;
            vec![Op::Shutdown]
        }
    }

    fn open_audit(&mut self) -> Vec<Op> {
        self.overlays.push(Overlay::Audit(AuditOverlay::default()));
        vec![Op::ListAudit]
    }

    fn open_grants(&mut self) -> Vec<Op> {
        self.overlays
            .push(Overlay::Grants(GrantsOverlay::default()));
        vec![Op::ListGrants]
    }

    fn prompt_key(&mut self, key: KeyEvent) -> Vec<Op> {
        match keys::action(Place::Prompt, &key) {
            Some(Action::NewLine) => {
                self.prompt.insert_newline();
                Vec::new()
            }
            Some(Action::Send) => {
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
                // What was sent, and what answers it, is what the person wants to see next.
                self.conversation = conversation::View::Bottom;
                vec![Op::Submit { prompt: text }]
            }
            Some(Action::Help) if self.prompt.is_empty() => {
                self.open_help();
                Vec::new()
            }
            // As readline has it (the text area's own Ctrl-U is undo).
            Some(Action::DeleteToLineStart) => {
                self.prompt.delete_line_by_head();
                Vec::new()
            }
            _ => {
                self.prompt.input(key);
                Vec::new()
            }
        }
    }

    fn results_key(&mut self, key: &KeyEvent) -> Vec<Op> {
        let count = self.runs.len();
        match keys::action(Place::Results, key) {
            Some(Action::Close) => self.focus = Focus::Prompt,
            Some(Action::Down(_)) => {
                self.follow = false;
                if let Some(next) = (self.selected_run + 1..count).find(|i| self.run_shown(*i)) {
                    self.selected_run = next;
                }
            }
            Some(Action::Up(_)) => {
                self.follow = false;
                if let Some(before) = (0..self.selected_run).rev().find(|i| self.run_shown(*i)) {
                    self.selected_run = before;
                }
            }
            Some(Action::Expand) => self.expanded = !self.expanded,
            Some(Action::Follow) => {
                self.follow = !self.follow;
                if self.follow {
                    self.selected_run = count.saturating_sub(1);
                    self.results_scroll = 0;
                }
            }
            Some(Action::CancelRun) => {
                // Only a run on screen: with the filter on, the selection may be a hidden one.
                if let Some(run) = self.runs.get(self.selected_run)
                    && run.status == RunStatus::Running
                    && self.run_shown(self.selected_run)
                {
                    return vec![Op::CancelTool {
                        call_id: run.call_id.clone(),
                    }];
                }
            }
            Some(Action::Grants) => return self.open_grants(),
            Some(Action::Audit) => return self.open_audit(),
            Some(Action::FilterRuns) => self.toggle_run_filter(),
            Some(Action::Undo) => {
                if let Some(run) = self.runs.get(self.selected_run)
                    && run.status != RunStatus::Running
                    && self.run_shown(self.selected_run)
                {
                    let call_id = run.call_id.clone();
                    self.open_undo(&call_id, false);
                }
            }
            Some(Action::Help) => self.open_help(),
            Some(Action::Quit) => return self.request_quit(),
            _ => {}
        }
        Vec::new()
    }

    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        let inside = |(x, y, w, h): (u16, u16, u16, u16)| {
            mouse.column >= x && mouse.column < x + w && mouse.row >= y && mouse.row < y + h
        };
        let up = match mouse.kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            _ => return,
        };
        let cx = Context {
            now: self.now,
            screen: self.screen,
            grants: &self.grants,
            agents: &self.agents,
            inbox: &self.inbox,
            wall_ms: self.wall_ms,
        };
        match self.overlays.last_mut() {
            Some(top) => top.on_wheel(up, &cx),
            None if inside(self.conversation_area) => {
                if let Some(action) = keys::wheel(Place::Conversation, up) {
                    self.scroll_conversation(action);
                }
            }
            None if inside(self.results_area) => {
                let rows = keys::wheel_rows(Place::Results, up);
                self.follow = false;
                self.results_scroll = if rows < 0 {
                    self.results_scroll
                        .saturating_add(rows.unsigned_abs() as u16)
                } else {
                    self.results_scroll.saturating_sub(rows as u16)
                };
            }
            None => {}
        }
    }
}
