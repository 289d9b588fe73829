//! What a key on the approval modal does: the dispatcher over its key tables (`keys`), the
//! answers, parking, and the guards an answer passes first.
//!
//! The guards, in order: `Ctrl-C` always works (it only denies), and `F1` opens the help over
//! the modal. While the modal is not armed, every other key but scrolling is dropped (counted,
//! and the footer says so: it went neither to the modal nor to the prompt hidden under it) and
//! pushes the arming later. A chord is never an answer, only the plain key the footer shows. An
//! allowing answer waits until everything that decides has been on screen
//! (`ApprovalOverlay::unseen`).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keys::{ApprovalChoice, note_box, reason_box};
use super::{ARM_DELAY, ApprovalOverlay};
use crate::protocol::Decision;
use crate::protocol::Op;
use crate::ui::keys::{self, Action, Place};
use crate::ui::overlay::{Effect, Outcome};
use crate::ui::preview::Scroll;

/// Whether a key may answer a modal: no modifier at all, or Shift on an uppercase letter (`N`),
/// which is how terminals report a capital.
pub(crate) fn answers_a_modal(key: &KeyEvent) -> bool {
    key.modifiers.is_empty()
        || (key.modifiers == KeyModifiers::SHIFT
            && matches!(key.code, KeyCode::Char(c) if c.is_uppercase()))
}

/// A key that types text (a character with no Ctrl or Alt, or Backspace), as opposed to one that
/// moves, scrolls or commands.
fn is_typing(key: &KeyEvent) -> bool {
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER);
    plain && matches!(key.code, KeyCode::Char(_) | KeyCode::Backspace)
}

impl ApprovalOverlay {
    /// A key on the modal; it closes once nothing is queued.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Outcome {
        let mut outcome = if self.editing.is_some() {
            self.edit_key(key, now)
        } else if self.reason.is_some() {
            self.reason_key(key, now)
        } else {
            self.options_key(key, now)
        };
        outcome.close = self.queue.is_empty();
        outcome
    }

    fn options_key(&mut self, key: KeyEvent, now: Instant) -> Outcome {
        let action = keys::action(Place::Approval, &key);
        if action == Some(Action::Interrupt) {
            return self.deny_all();
        }
        // `F1` opens the help at any time (`?` only once armed: typed early, it is typing).
        if action == Some(Action::Help) && !(now < self.armed_at && is_typing(&key)) {
            return Outcome::help(Place::Approval);
        }
        // Pairing a phone answers nothing: at any time, like the help.
        if action == Some(Action::Devices) {
            return Outcome {
                effects: vec![super::super::Effect::OpenDevices],
                ..Outcome::default()
            };
        }
        match action {
            // Scrolling is always safe, armed or not, with or without modifiers; typing meant
            // for the prompt (j and k too) is not scrolling.
            Some(Action::Down(n)) if !self.typed_early(&key, now) => {
                self.scroll_rows(isize::from(n))
            }
            Some(Action::Up(n)) if !self.typed_early(&key, now) => {
                self.scroll_rows(-isize::from(n))
            }
            Some(Action::PageDown) => self.scroll_rows(self.page()),
            Some(Action::PageUp) => self.scroll_rows(-self.page()),
            Some(Action::Top) => self.scroll = Scroll::TOP,
            // Resolved against the size of the frame that draws it (`drawn`).
            Some(Action::Bottom) => self.scroll = Scroll::END,
            // Moving between hunks is reading, like scrolling.
            Some(Action::NextHunk) if !self.typed_early(&key, now) => self.step_hunk(true),
            Some(Action::PrevHunk) if !self.typed_early(&key, now) => self.step_hunk(false),
            _ if now < self.armed_at => {
                // Too soon: the person may not have seen it yet, and the key was meant for the
                // prompt. It goes nowhere (the prompt is hidden under the modal: a key kept
                // there would be sent unseen with the next prompt); the footer counts it, and
                // the modal stays unarmed a little longer.
                self.ignored += 1;
                self.armed_at = now + ARM_DELAY;
            }
            // Ctrl-D is the quit key, Ctrl-A and Ctrl-Y mean something else in many programs: a
            // chord is never an answer, only the plain key the options line shows.
            Some(Action::Answer(choice)) if answers_a_modal(&key) => {
                return self.answer(choice, &key, now);
            }
            Some(Action::ToggleHunk) => self.toggle_hunk(),
            Some(Action::EditProposal) if answers_a_modal(&key) => return self.edit_proposal(),
            _ => {}
        }
        Outcome::default()
    }

    /// A key that types text, pressed before the modal armed.
    fn typed_early(&self, key: &KeyEvent, now: Instant) -> bool {
        now < self.armed_at && is_typing(key)
    }

    /// Typing a reason after `N`.
    fn reason_key(&mut self, key: KeyEvent, now: Instant) -> Outcome {
        match keys::action(Place::Reason, &key) {
            Some(Action::Interrupt) => return self.deny_all(),
            Some(Action::Help) => return Outcome::help(Place::Reason),
            Some(Action::Close) => {
                self.reason = None;
                self.noting = false;
            }
            Some(Action::DeleteToLineStart) => {
                if let Some(reason) = self.reason.as_mut() {
                    reason.delete_line_by_head();
                }
            }
            Some(Action::Send) => {
                let text = self
                    .reason
                    .take()
                    .map(|r| r.lines().join("\n").trim().to_string())
                    .unwrap_or_default();
                let decision = if std::mem::take(&mut self.noting) {
                    self.with_kept_hunks(if text.is_empty() {
                        Decision::AllowOnce
                    } else {
                        Decision::AllowNoted { note: text }
                    })
                } else {
                    Decision::Deny {
                        reason: (!text.is_empty()).then_some(text),
                    }
                };
                return self.decide(decision, now);
            }
            _ => {
                if let Some(reason) = self.reason.as_mut() {
                    reason.input(key);
                }
            }
        }
        Outcome::default()
    }

    /// `Ctrl-C`: deny everything queued and stop the turn. Nothing runs.
    pub(super) fn deny_all(&mut self) -> Outcome {
        let mut ops: Vec<Op> = self
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
        Outcome::ops(ops)
    }

    /// An armed, plain answering key.
    fn answer(&mut self, choice: ApprovalChoice, key: &KeyEvent, now: Instant) -> Outcome {
        let Some(front) = self.queue.front() else {
            return Outcome::default();
        };
        let grants_session = front.session_scopes.is_some();
        let grants_directory = grants_session && front.directory_scope.is_some();
        let decision = match choice {
            ApprovalChoice::AllowOnce => Decision::AllowOnce,
            ApprovalChoice::AllowSession if grants_session => {
                Decision::AllowSession { directory: false }
            }
            ApprovalChoice::AllowDirectory if grants_directory => {
                Decision::AllowSession { directory: true }
            }
            ApprovalChoice::AllowSession | ApprovalChoice::AllowDirectory => {
                return Outcome::default();
            }
            ApprovalChoice::Deny => Decision::Deny { reason: None },
            ApprovalChoice::DenyWithReason => {
                self.reason = Some(reason_box());
                return Outcome::default();
            }
            ApprovalChoice::AllowNoted => {
                if !self.unseen().is_empty() {
                    self.refused = Some('Y');
                    return Outcome::default();
                }
                self.noting = true;
                self.reason = Some(note_box());
                return Outcome::default();
            }
            ApprovalChoice::Park => return self.park_front(now),
        };
        let allows = !matches!(decision, Decision::Deny { .. });
        if allows && !self.unseen().is_empty() {
            // Not everything that decides has been on screen yet: the footer says what and how.
            if let KeyCode::Char(c) = key.code {
                self.refused = Some(c);
            }
            return Outcome::default();
        }
        let decision = if allows {
            self.with_kept_hunks(decision)
        } else {
            decision
        };
        self.decide(decision, now)
    }

    /// Parks the front request: it leaves the modal and keeps waiting in the agent for an answer
    /// by its one-time code (from any terminal; after a quit, `airlock approve CODE --resume`
    /// reopens this session). Nothing is decided. A request without a code stays.
    fn park_front(&mut self, now: Instant) -> Outcome {
        let Some(code) = self.queue.front().and_then(|r| r.code.clone()) else {
            return Outcome::default();
        };
        let Some(request) = self.queue.pop_front() else {
            return Outcome::default();
        };
        self.front_changed();
        self.armed_at = now + ARM_DELAY;
        // A sub-agent is not kept past a quit: its request can be answered while this cockpit
        // runs, not after.
        let text = match &request.agent {
            Some(agent) => format!(
                "({}, of sub-agent {}): it waits for `airlock approve {code}` or `airlock deny {code}` from any terminal while this cockpit runs; sub-agents are not kept when it quits (reopened, its `agent` call is reported as interrupted)",
                request.tool, agent.id
            ),
            None => format!(
                "({}): it waits for `airlock approve {code}` or `airlock deny {code}` from any terminal; quit if you like, then `airlock approve {code} --resume` reopens this session and goes on",
                request.tool
            ),
        };
        Outcome {
            effects: vec![Effect::Parked {
                call_id: request.call_id,
                text,
            }],
            ..Outcome::default()
        }
    }

    /// Answers the front request; the next one (if any) arms again after the delay.
    pub(super) fn decide(&mut self, decision: Decision, now: Instant) -> Outcome {
        let Some(request) = self.queue.pop_front() else {
            return Outcome::default();
        };
        // A change sent to be judged again is not an answer: the proposal comes back.
        if !matches!(decision, Decision::Amend { answer: None, .. }) {
            self.answered += 1;
        }
        self.front_changed();
        self.armed_at = now + ARM_DELAY;
        let granted = matches!(decision, Decision::AllowSession { .. });
        let mut ops = vec![Op::Decide {
            call_id: request.call_id,
            decision,
        }];
        if granted {
            ops.push(Op::ListGrants);
        }
        Outcome::ops(ops)
    }
}
