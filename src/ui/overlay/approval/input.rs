//! The approval modal's keys: its two tables (the options, and the reason box after `N`), which
//! the dispatcher below looks every key up in, the help lists and the footer draws its options
//! from (`offered`), and the guards an answer passes first.
//!
//! The guards, in order: `Ctrl-C` always works (it only denies), and `F1` opens the help over
//! the modal. While the modal is not armed, every other key but scrolling is dropped (counted,
//! and the footer says so: it went neither to the modal nor to the prompt hidden under it) and
//! pushes the arming later. A chord is never an answer, only the plain key the footer shows. An
//! allowing answer waits until everything that decides has been on screen
//! (`ApprovalOverlay::unseen`).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_textarea::TextArea;

use super::{ARM_DELAY, ApprovalOverlay};
use crate::protocol::Decision;
use crate::protocol::Op;
use crate::ui::keys::{self, Action, Binding, Place, Press, ctrl, key, plain};
use crate::ui::overlay::{Effect, Outcome};
use crate::ui::preview::Scroll;

/// What an answering key chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalChoice {
    AllowOnce,
    /// For the session, within the scope the footer names.
    AllowSession,
    /// For the session, the whole directory of the file (offered for file changes only).
    AllowDirectory,
    Deny,
    /// Deny, after typing a reason for the model.
    DenyWithReason,
    /// Allow once, after typing a word for the model (it reaches the model with the result).
    AllowNoted,
    /// Leave it waiting, answered later by its one-time code (here, elsewhere, or after a quit).
    Park,
}

/// The modal's keys while it shows the options.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "y",
        presses: &[(plain('y'), Action::Answer(ApprovalChoice::AllowOnce))],
        does: "allow once (after all that asks was on screen)",
    },
    Binding {
        keys: "Y",
        presses: &[(plain('Y'), Action::Answer(ApprovalChoice::AllowNoted))],
        does: "allow once and type a note for the model (it gets it with the result)",
    },
    Binding {
        keys: "a",
        presses: &[(plain('a'), Action::Answer(ApprovalChoice::AllowSession))],
        does: "allow for the session (the scope is shown)",
    },
    Binding {
        keys: "d",
        presses: &[(plain('d'), Action::Answer(ApprovalChoice::AllowDirectory))],
        does: "with a file: allow this tool on any file under the file's directory, for the session (the directory is shown)",
    },
    Binding {
        keys: "n / Esc",
        presses: &[
            (plain('n'), Action::Answer(ApprovalChoice::Deny)),
            (key(KeyCode::Esc), Action::Answer(ApprovalChoice::Deny)),
        ],
        does: "deny",
    },
    Binding {
        keys: "N",
        presses: &[(plain('N'), Action::Answer(ApprovalChoice::DenyWithReason))],
        does: "deny and type a reason for the model",
    },
    Binding {
        keys: "p",
        presses: &[(plain('p'), Action::Answer(ApprovalChoice::Park))],
        does: "park: it waits for `airlock approve CODE` from any terminal, even after you quit",
    },
    Binding {
        keys: "] [",
        presses: &[
            (plain(']'), Action::NextHunk),
            (plain('['), Action::PrevHunk),
        ],
        does: "with a diff: go to the next or the previous hunk",
    },
    Binding {
        keys: "Space",
        presses: &[(key(KeyCode::Char(' ')), Action::ToggleHunk)],
        does: "with a diff: keep or drop the current hunk (an answer writes only the kept ones)",
    },
    Binding {
        keys: "e",
        presses: &[(plain('e'), Action::EditProposal)],
        does: "edit before answering, judged again: a command inline, a file change in $VISUAL or $EDITOR",
    },
    Binding {
        keys: "j k ↑ ↓ PgUp PgDn Home End",
        // Scrolling is always safe, so the modal takes these with any modifier.
        presses: &[
            (Press::AnyModifiers(KeyCode::Char('j')), Action::Down(1)),
            (Press::AnyModifiers(KeyCode::Char('k')), Action::Up(1)),
            (Press::AnyModifiers(KeyCode::Down), Action::Down(1)),
            (Press::AnyModifiers(KeyCode::Up), Action::Up(1)),
            (Press::AnyModifiers(KeyCode::PageUp), Action::PageUp),
            (Press::AnyModifiers(KeyCode::PageDown), Action::PageDown),
            (Press::AnyModifiers(KeyCode::Home), Action::Top),
            (Press::AnyModifiers(KeyCode::End), Action::Bottom),
        ],
        does: "scroll the preview",
    },
    Binding {
        keys: "mouse wheel",
        presses: keys::WHEEL,
        does: "scroll the preview",
    },
    Binding {
        keys: "Ctrl-C",
        presses: &[(Press::Ctrl('c'), Action::Interrupt)],
        does: "deny this and every queued request, and interrupt the turn",
    },
    Binding {
        keys: "F1 / ?",
        presses: &[
            (key(KeyCode::F(1)), Action::Help),
            (plain('?'), Action::Help),
        ],
        does: "the help, over the modal (Esc there closes only the help)",
    },
];

/// What the modal's text boxes (a reason, a note, the command editor) share.
const BOX_INTERRUPT: Binding = Binding {
    keys: "Ctrl-C",
    presses: &[(Press::Ctrl('c'), Action::Interrupt)],
    does: "deny this and every queued request, and interrupt the turn",
};
const BOX_HELP: Binding = Binding {
    keys: "F1",
    presses: &[(key(KeyCode::F(1)), Action::Help)],
    does: "the help, over the modal",
};
const BOX_DELETE_TO_LINE_START: Binding = Binding {
    keys: "Ctrl-U",
    presses: &[(ctrl('u'), Action::DeleteToLineStart)],
    does: "delete to the start of the line",
};

/// The modal's keys while a reason for the model is typed (after `N`).
pub const REASON_KEYS: &[Binding] = &[
    Binding {
        keys: "Enter",
        presses: &[(Press::AnyModifiers(KeyCode::Enter), Action::Send)],
        does: "answer (deny after N, allow after Y), with the text for the model",
    },
    Binding {
        keys: "Esc",
        presses: &[(Press::AnyModifiers(KeyCode::Esc), Action::Close)],
        does: "back to the options (the reason is dropped)",
    },
    BOX_INTERRUPT,
    BOX_HELP,
    BOX_DELETE_TO_LINE_START,
    Binding {
        keys: "any other key",
        presses: &[(Press::Other, Action::Edit)],
        does: "edits the reason",
    },
];

/// The command editor's keys (after `e`).
pub const EDIT_KEYS: &[Binding] = &[
    Binding {
        keys: "Enter",
        presses: &[(key(KeyCode::Enter), Action::Send)],
        does: "judge the edited command again and show it (it arms again before an answer)",
    },
    Binding {
        keys: "Alt-Enter",
        presses: &[(
            Press::Key(KeyCode::Enter, KeyModifiers::ALT),
            Action::NewLine,
        )],
        does: "a new line in the command",
    },
    Binding {
        keys: "Esc",
        presses: &[(Press::AnyModifiers(KeyCode::Esc), Action::Close)],
        does: "back to the options (the edit is dropped)",
    },
    BOX_INTERRUPT,
    BOX_HELP,
    BOX_DELETE_TO_LINE_START,
    Binding {
        keys: "any other key",
        presses: &[(Press::Other, Action::Edit)],
        does: "edits the command",
    },
];

/// The order the footer offers the answers in: the everyday ones first, the whole-directory
/// grant (offered for a file change only) last. Each answer of `KEYS` is here once.
pub const FOOT_ORDER: [ApprovalChoice; 7] = [
    ApprovalChoice::AllowOnce,
    ApprovalChoice::AllowSession,
    ApprovalChoice::Deny,
    ApprovalChoice::DenyWithReason,
    ApprovalChoice::AllowNoted,
    ApprovalChoice::Park,
    ApprovalChoice::AllowDirectory,
];

impl ApprovalChoice {
    /// The footer's label, and its shorter form for a narrow modal. The session grants name
    /// their scope instead (`foot`); their short form leads it.
    pub fn labels(self) -> (&'static str, &'static str) {
        match self {
            ApprovalChoice::AllowOnce => ("allow once", "allow once"),
            ApprovalChoice::AllowNoted => ("allow with a note for the model", "allow + note"),
            ApprovalChoice::AllowSession | ApprovalChoice::AllowDirectory => {
                ("allow for the session", "for the session")
            }
            ApprovalChoice::Deny => ("deny", "deny"),
            ApprovalChoice::DenyWithReason => {
                ("deny with a reason for the model", "deny with a reason")
            }
            ApprovalChoice::Park => ("park: answer later by its code", "park"),
        }
    }
}

/// The answers the footer offers, in its order, each with the key `KEYS` binds it to (the
/// first plain character that makes it).
pub fn offered() -> impl Iterator<Item = (char, ApprovalChoice)> {
    FOOT_ORDER.into_iter().filter_map(|choice| {
        KEYS.iter()
            .flat_map(|b| b.presses.iter())
            .find_map(|(press, action)| match (press, action) {
                (Press::Key(KeyCode::Char(c), m), Action::Answer(a))
                    if *a == choice && m.is_empty() =>
                {
                    Some((*c, choice))
                }
                _ => None,
            })
    })
}

/// The reason box's placeholder, its keys from `REASON_KEYS`.
pub(super) fn reason_box() -> TextArea<'static> {
    text_box("why not?")
}

/// The note box (after `Y`): the same keys as the reason box.
pub(super) fn note_box() -> TextArea<'static> {
    text_box("a word for the model with the result?")
}

fn text_box(asking: &str) -> TextArea<'static> {
    let send = keys::key_for(Place::Reason, Action::Send).unwrap_or_default();
    let back = keys::key_for(Place::Reason, Action::Close).unwrap_or_default();
    let mut text = TextArea::default();
    text.set_placeholder_text(format!("{asking} ({send} sends, {back} goes back)"));
    text
}

/// The command editor, holding `command`, the cursor at its end.
pub(super) fn command_box(command: &str) -> TextArea<'static> {
    let mut edit = TextArea::new(command.lines().map(str::to_string).collect());
    edit.move_cursor(tui_textarea::CursorMove::Bottom);
    edit.move_cursor(tui_textarea::CursorMove::End);
    edit
}

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

    /// Editing the command (after `e`).
    fn edit_key(&mut self, key: KeyEvent, now: Instant) -> Outcome {
        match keys::action(Place::EditCommand, &key) {
            Some(Action::Interrupt) => return self.deny_all(),
            Some(Action::Help) => return Outcome::help(Place::EditCommand),
            Some(Action::Close) => self.editing = None,
            Some(Action::NewLine) => {
                if let Some(edit) = self.editing.as_mut() {
                    edit.insert_newline();
                }
            }
            Some(Action::DeleteToLineStart) => {
                if let Some(edit) = self.editing.as_mut() {
                    edit.delete_line_by_head();
                }
            }
            Some(Action::Send) => {
                let command = self
                    .editing
                    .take()
                    .map(|e| e.lines().join("\n"))
                    .unwrap_or_default();
                // Judged again by the gate, which asks again (or says why not): not an answer.
                return self.decide(
                    Decision::Amend {
                        amendment: crate::protocol::Amendment::Command { command },
                        answer: None,
                    },
                    now,
                );
            }
            _ => {
                if let Some(edit) = self.editing.as_mut() {
                    edit.input(key);
                }
            }
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
    fn deny_all(&mut self) -> Outcome {
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

    /// An allowing `decision`, for only the kept hunks when some of the diff's are dropped.
    fn with_kept_hunks(&self, decision: Decision) -> Decision {
        match self.diff.review.as_ref() {
            Some(review) if !review.dropped.is_empty() => Decision::Amend {
                amendment: crate::protocol::Amendment::Hunks {
                    keep: review.kept(self.diff.hunk_count()),
                },
                answer: Some(Box::new(decision)),
            },
            _ => decision,
        }
    }

    /// `e`: the front request's command in the editor inside the modal; a file change's text
    /// (a `write_file`'s content, an `edit_file`'s replacement) in the person's own editor.
    fn edit_proposal(&mut self) -> Outcome {
        let Some(front) = self.queue.front() else {
            return Outcome::default();
        };
        if let Some(crate::protocol::Preview::Command { command, .. }) = &front.preview {
            self.editing = Some(command_box(command));
            return Outcome::default();
        }
        let field = match front.tool.as_str() {
            "write_file" => "content",
            "edit_file" => "new",
            _ => return Outcome::default(),
        };
        let args: serde_json::Value =
            serde_json::from_str(&front.frozen.canonical).unwrap_or_default();
        let (Some(text), path) = (
            args.get(field).and_then(serde_json::Value::as_str),
            args.get("path")
                .and_then(serde_json::Value::as_str)
                .unwrap_or(""),
        ) else {
            return Outcome::default();
        };
        let suffix = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .filter(|e| e.chars().all(|c| c.is_ascii_alphanumeric()) && e.len() <= 12)
            .map(|e| format!(".{e}"))
            .unwrap_or_default();
        Outcome {
            effects: vec![Effect::Edit(crate::ui::app::EditorJob {
                call_id: front.call_id.clone(),
                text: text.to_string(),
                suffix,
            })],
            ..Outcome::default()
        }
    }

    /// The front request, if it is `call_id`'s, changed by `amendment`: it leaves the queue
    /// and comes back once judged again.
    pub(crate) fn amend_front(
        &mut self,
        call_id: &str,
        amendment: crate::protocol::Amendment,
        now: Instant,
    ) -> Vec<Op> {
        if self.queue.front().map(|r| r.call_id.as_str()) != Some(call_id) {
            return Vec::new();
        }
        self.decide(
            Decision::Amend {
                amendment,
                answer: None,
            },
            now,
        )
        .ops
    }

    /// Says why on the front request, if it is `call_id`'s (a change that was not made).
    pub(crate) fn notice_front(&mut self, call_id: &str, why: String) {
        if let Some(front) = self.queue.front_mut()
            && front.call_id == call_id
        {
            front.notice = Some(why);
            // What the person had picked and where they were stay as they were.
            let (scroll, review) = (self.scroll, self.diff.review.clone());
            self.front_changed();
            self.scroll = scroll;
            if self.diff.review.is_some() {
                self.diff.review = review;
            }
        }
    }

    /// `]` / `[`: the next or previous hunk becomes current, and the preview scrolls to it.
    fn step_hunk(&mut self, forward: bool) {
        let count = self.diff.hunk_count();
        let Some(review) = self.diff.review.as_mut() else {
            return;
        };
        if count == 0 {
            return;
        }
        review.current = if forward {
            (review.current + 1).min(count - 1)
        } else {
            review.current.saturating_sub(1)
        };
        let current = review.current;
        if let (Some(doc), Some(line)) = (self.doc(), self.diff.hunk_line(current)) {
            let at = doc.prelude_len() + line;
            self.scroll = Scroll { line: at, row: 0 };
        }
    }

    /// Space: the current hunk is dropped if it was kept, kept if it was dropped.
    fn toggle_hunk(&mut self) {
        if let Some(review) = self.diff.review.as_mut() {
            let number = review.current + 1;
            if !review.dropped.remove(&number) {
                review.dropped.insert(number);
            }
        }
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
        Outcome {
            effects: vec![Effect::Parked {
                call_id: request.call_id,
                text: format!(
                    "({}): it waits for `airlock approve {code}` or `airlock deny {code}` from any terminal; quit if you like, then `airlock approve {code} --resume` reopens this session and goes on",
                    request.tool
                ),
            }],
            ..Outcome::default()
        }
    }

    /// Answers the front request; the next one (if any) arms again after the delay.
    fn decide(&mut self, decision: Decision, now: Instant) -> Outcome {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_offers_every_answer_of_the_table_once_each_by_its_plain_key() {
        let offered: Vec<(char, ApprovalChoice)> = offered().collect();
        assert_eq!(offered.len(), FOOT_ORDER.len(), "{offered:?}");
        let answers: Vec<ApprovalChoice> = KEYS
            .iter()
            .flat_map(|b| b.presses.iter())
            .filter_map(|(_, action)| match action {
                Action::Answer(choice) => Some(*choice),
                _ => None,
            })
            .collect();
        for choice in &answers {
            assert!(FOOT_ORDER.contains(choice), "{choice:?} is not offered");
        }
        for choice in FOOT_ORDER {
            assert!(answers.contains(&choice), "{choice:?} has no key");
        }
        let keys: String = offered.iter().map(|(c, _)| *c).collect();
        assert_eq!(keys, "yanNYpd");
    }

    #[test]
    fn the_reason_box_says_the_keys_its_table_binds() {
        let reason = reason_box();
        assert_eq!(
            reason.placeholder_text(),
            "why not? (Enter sends, Esc goes back)"
        );
    }
}
