//! Reviewing a proposal in the modal: the hunks of its diff kept or dropped (`]`, `[`,
//! Space), its command edited inline or its file change in the person's editor (`e`), and a
//! change sent to be judged again (it comes back as a new question) or refused with why.

use std::time::Instant;

use crossterm::event::KeyEvent;

use super::ApprovalOverlay;
use super::keys::command_box;
use crate::protocol::Decision;
use crate::protocol::Op;
use crate::ui::keys::{self, Action, Place};
use crate::ui::overlay::{Effect, Outcome};
use crate::ui::preview::Scroll;

impl ApprovalOverlay {
    /// Editing the command (after `e`).
    pub(super) fn edit_key(&mut self, key: KeyEvent, now: Instant) -> Outcome {
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

    /// An allowing `decision`, for only the kept hunks when some of the diff's are dropped.
    pub(super) fn with_kept_hunks(&self, decision: Decision) -> Decision {
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
    pub(super) fn edit_proposal(&mut self) -> Outcome {
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
    pub(super) fn step_hunk(&mut self, forward: bool) {
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
    pub(super) fn toggle_hunk(&mut self) {
        if let Some(review) = self.diff.review.as_mut() {
            let number = review.current + 1;
            if !review.dropped.remove(&number) {
                review.dropped.insert(number);
            }
        }
    }
}
