//! The approval modal: the requests waiting for a person, first-in first-out, with the front
//! one on screen. This module owns the modal's state (queue, arming, scroll, what has been seen);
//! `keys` its key tables, `input` what a key does, `review` keeping or dropping hunks and
//! changing a proposal before it is answered, `layout` and `draw` how it is laid out and drawn,
//! `foot` its options line and hints, `queue` the rows naming the calls still to decide, `size`
//! where it sits on the screen.
//!
//! `y`, `a` and `d` are refused until every must-see item of the front request (each asking or
//! denying part and reason, the end of the command, the first and the last changed line of a
//! diff) has been on screen, every row of it. What was on screen is recorded after each frame
//! (`App::approval_drawn`, called by the loop with the size the renderer gave the preview),
//! through the same document model the renderer draws, so "seen" means drawn. Denying (`n`,
//! `Esc`, `N`, `Ctrl-C`) always works: refusing a denial would only keep a dangerous request
//! alive.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::protocol::ApprovalRequest;
use crate::ui::preview::{DiffIndex, Doc, MustSee, Scroll, Seen, View};
use tui_textarea::TextArea;

mod draw;
mod foot;
mod input;
mod keys;
mod layout;
mod queue;
mod review;
mod size;

pub use keys::{ApprovalChoice, EDIT_KEYS, KEYS, REASON_KEYS, offered};
pub(crate) use layout::{Modal, modal};
pub(crate) use size::above;

/// Keys that arrive sooner than this after an approval appears (or after the previous key, while
/// still unarmed) are not taken as answers: a person typing into the prompt must not answer a
/// modal that popped up under their fingers.
pub const ARM_DELAY: Duration = Duration::from_millis(400);

/// The approval modal: requests queue first-in first-out inside it.
#[derive(Debug)]
pub struct ApprovalOverlay {
    pub queue: VecDeque<ApprovalRequest>,
    /// Keys before this instant are swallowed (and push it later).
    pub armed_at: Instant,
    /// The preview's scroll position (a line of the document and a row inside it).
    pub scroll: Scroll,
    /// While typing a reason after `N` (or a note after `Y`, when `noting`).
    pub reason: Option<TextArea<'static>>,
    /// The text box is a note that goes with an allow (`Y`), not a reason for a denial.
    pub noting: bool,
    /// While the command is edited (after `e`).
    pub editing: Option<TextArea<'static>>,
    /// How many requests this modal has shown so far (for "2 of 3").
    pub answered: usize,
    /// The front request's diff, indexed once (empty for other previews).
    pub diff: DiffIndex,
    /// The preview's size in the last frame drawn; `None` before the first.
    pub view: Option<View>,
    /// What of the front request has been on screen.
    pub seen: Seen,
    /// The answer key last refused because something was not seen yet (the hint says what).
    pub refused: Option<char>,
    /// Keys pressed before the front request armed, which went nowhere (the footer says so).
    pub ignored: usize,
}

impl ApprovalOverlay {
    pub fn new(request: ApprovalRequest, now: Instant) -> ApprovalOverlay {
        let mut overlay = ApprovalOverlay {
            queue: VecDeque::from([request]),
            armed_at: now + ARM_DELAY,
            scroll: Scroll::TOP,
            reason: None,
            noting: false,
            editing: None,
            answered: 0,
            diff: DiffIndex::default(),
            view: None,
            seen: Seen::default(),
            refused: None,
            ignored: 0,
        };
        overlay.front_changed();
        overlay
    }

    /// A new request is at the front: nothing of it has been seen, its preview starts at the top.
    pub(super) fn front_changed(&mut self) {
        self.scroll = Scroll::TOP;
        self.seen.clear();
        self.refused = None;
        self.ignored = 0;
        self.reason = None;
        self.noting = false;
        self.editing = None;
        self.diff = match self.queue.front() {
            Some(ApprovalRequest {
                call_id,
                preview: Some(preview),
                ..
            }) => match preview.unified_diff() {
                Some(unified) => {
                    let mut index = DiffIndex::build(call_id, unified);
                    // Hunk by hunk where the diff is exact and has more than one hunk: a file
                    // tool's change, or an MCP whole-file write's (an MCP edit is answered whole).
                    let exact_diff = |p: &crate::protocol::Preview| {
                        matches!(
                            p,
                            crate::protocol::Preview::Diff {
                                approximate: false,
                                ..
                            }
                        )
                    };
                    let exact = match preview {
                        crate::protocol::Preview::Mcp {
                            change: Some(change),
                            whole_file: true,
                            ..
                        } => exact_diff(change),
                        other => exact_diff(other),
                    };
                    if exact && index.hunk_count() > 1 {
                        index.review = Some(crate::ui::preview::Review::default());
                    }
                    index
                }
                None => DiffIndex::default(),
            },
            _ => DiffIndex::default(),
        };
    }

    /// The requests waiting, the front one first.
    pub fn requests(&self) -> impl Iterator<Item = &ApprovalRequest> {
        self.queue.iter()
    }

    /// Removes requests the agent settled itself; a new front starts unseen.
    pub(crate) fn retain(&mut self, keep: impl Fn(&ApprovalRequest) -> bool) {
        let front = self.queue.front().map(|r| r.call_id.clone());
        self.queue.retain(keep);
        if self.queue.front().map(|r| r.call_id.clone()) != front {
            self.front_changed();
        }
    }

    /// The front request's document.
    pub fn doc(&self) -> Option<Doc<'_>> {
        Some(Doc::new(self.queue.front()?, Some(&self.diff)))
    }

    /// The front request's must-see items not yet on screen, in the order they are shown.
    pub fn unseen(&self) -> Vec<MustSee> {
        let Some(doc) = self.doc() else {
            return Vec::new();
        };
        let mut unseen: Vec<MustSee> = Vec::new();
        for (_, item) in doc.must_see() {
            if !self.seen.contains(item) && !unseen.contains(item) {
                unseen.push(*item);
            }
        }
        unseen
    }

    fn view_or_default(&self) -> View {
        self.view.unwrap_or(View::BEFORE_FIRST_FRAME)
    }

    /// Scrolls by `rows` (down when positive).
    pub fn scroll_rows(&mut self, rows: isize) {
        let view = self.view_or_default();
        let Some(doc) = self.doc() else { return };
        let next = if rows >= 0 {
            doc.down(self.scroll, rows.unsigned_abs(), view)
        } else {
            doc.up(self.scroll, rows.unsigned_abs(), view)
        };
        self.scroll = next;
    }

    /// A page: the window's rows less one, so one row stays in sight.
    pub(super) fn page(&self) -> isize {
        self.view_or_default().rows.saturating_sub(1).max(1) as isize
    }

    /// A frame has drawn the front request `call_id` with its preview at `view`: keep the scroll
    /// position the frame used and record what it showed.
    pub fn drawn(&mut self, call_id: &str, view: View) {
        if self.queue.front().is_none_or(|r| r.call_id != call_id) {
            return;
        }
        self.view = Some(view);
        let Some(doc) = self.doc() else { return };
        let top = doc.clamp(self.scroll, view);
        let mut seen = self.seen.clone();
        seen.record(&doc, &doc.window(top, view), view.width);
        drop(doc);
        self.scroll = top;
        self.seen = seen;
    }

    /// The modal is in sight again (a window over it closed): its keys go live only after the
    /// arm delay, as when it appeared.
    pub fn rearm(&mut self, now: Instant) {
        self.armed_at = self.armed_at.max(now + ARM_DELAY);
    }

    /// Another request joins the queue, behind the ones already waiting.
    /// A request joins the queue at its end; a proposal asked about again after the person
    /// changed it (or after their change was refused) comes back to the front, where they were,
    /// unseen and arming again.
    pub fn push(&mut self, request: ApprovalRequest, now: Instant) {
        if request.amended.is_some() || request.notice.is_some() {
            self.queue.push_front(request);
            self.front_changed();
            self.armed_at = now + ARM_DELAY;
        } else {
            self.queue.push_back(request);
        }
    }

    /// What of the modal changes with time alone: 0 once armed, before that 1 + the tenths of
    /// the countdown shown (so "0.0s" and "armed" differ and the line never lingers); then the
    /// seconds left before the front request times out, if it can.
    /// When [`Self::clock_face`] next changes: the next tenth of a second (or the arming)
    /// while the keys arm, the next whole second of the front request's time-out; `None` when
    /// neither moves.
    pub fn next_change(&self, now: Instant, wall_ms: u64) -> Option<Instant> {
        let arming = (now < self.armed_at)
            .then(|| (now + std::time::Duration::from_millis(100)).min(self.armed_at));
        let deadline = self
            .queue
            .front()
            .and_then(|r| r.deadline_ms)
            .filter(|d| *d > wall_ms)
            .map(|d| now + std::time::Duration::from_millis((d - wall_ms) % 1000 + 1));
        arming.into_iter().chain(deadline).min()
    }

    pub fn clock_face(&self, now: Instant, wall_ms: u64) -> Vec<u64> {
        let mut face = vec![if now >= self.armed_at {
            0
        } else {
            1 + (self.armed_at.duration_since(now).as_secs_f64() * 10.0).round() as u64
        }];
        if let Some(deadline) = self.queue.front().and_then(|r| r.deadline_ms) {
            face.push(deadline.saturating_sub(wall_ms) / 1000);
        }
        face
    }
}
