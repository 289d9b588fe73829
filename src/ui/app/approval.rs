//! The approval modal's state: its queue, scrolling, what the human has had on screen, and the
//! keys that answer it.
//!
//! `y`, `a` and `d` are refused until every must-see item of the front request (each asking or
//! denying part and reason, the end of the command, the first and the last changed line of a
//! diff) has been on screen, every row of it. What was on screen is recorded after each frame (`approval_drawn`,
//! called by the loop with the size the renderer gave the preview), through the same document
//! model the renderer draws, so "seen" means drawn. Denying (`n`, `Esc`, `N`, `Ctrl-C`) always
//! works: refusing a denial would only keep a dangerous request alive.

use super::*;
use crate::ui::preview::{DiffIndex, Doc, MustSee, Scroll, Seen, View};

/// The approval modal: requests queue first-in first-out inside it.
#[derive(Debug)]
pub struct ApprovalOverlay {
    pub queue: VecDeque<ApprovalRequest>,
    /// Keys before this instant are swallowed (and push it later).
    pub armed_at: Instant,
    /// The preview's scroll position (a line of the document and a row inside it).
    pub scroll: Scroll,
    /// While typing a reason after `N`.
    pub reason: Option<TextArea<'static>>,
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
    /// Keys typed before it armed went on into the prompt (said once in the conversation).
    pub typed_into_prompt: bool,
}

impl ApprovalOverlay {
    pub fn new(request: ApprovalRequest, now: Instant) -> ApprovalOverlay {
        let mut overlay = ApprovalOverlay {
            queue: VecDeque::from([request]),
            armed_at: now + ARM_DELAY,
            scroll: Scroll::TOP,
            reason: None,
            answered: 0,
            diff: DiffIndex::default(),
            view: None,
            seen: Seen::default(),
            refused: None,
            typed_into_prompt: false,
        };
        overlay.front_changed();
        overlay
    }

    /// A new request is at the front: nothing of it has been seen, its preview starts at the top.
    fn front_changed(&mut self) {
        self.scroll = Scroll::TOP;
        self.seen.clear();
        self.refused = None;
        self.diff = match self.queue.front() {
            Some(ApprovalRequest {
                call_id,
                preview: Some(Preview::Diff { unified, .. }),
                ..
            }) => DiffIndex::build(call_id, unified),
            _ => DiffIndex::default(),
        };
    }

    /// Removes requests the agent settled itself; a new front starts unseen.
    pub(super) fn retain(&mut self, keep: impl Fn(&ApprovalRequest) -> bool) {
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
    fn page(&self) -> isize {
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
}

/// Whether a key may answer a modal: no modifier at all, or Shift on an uppercase letter (`N`),
/// which is how terminals report a capital.
pub(super) fn answers_a_modal(key: &KeyEvent) -> bool {
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

impl App {
    /// After a frame: the renderer's report of the approval preview it drew (request and size).
    pub fn approval_drawn(&mut self, drawn: Option<(String, View)>) {
        if let (Some((call_id, view)), Some(overlay)) = (drawn, self.approval_mut()) {
            overlay.drawn(&call_id, view);
        }
    }

    pub(super) fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Op> {
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
        // Typing that was meant for the prompt when the modal appeared goes on into the prompt
        // (j and k too, which scroll an armed modal), never into an answer; the modal stays
        // unarmed while it lasts.
        if now < overlay.armed_at && is_typing(&key) {
            overlay.armed_at = now + ARM_DELAY;
            let first = !overlay.typed_into_prompt;
            overlay.typed_into_prompt = true;
            self.prompt.input(key);
            if first {
                self.entries.push(Entry::Notice(
                    "an approval appeared while you typed: your keys went on into the prompt draft, not to the approval".into(),
                ));
            }
            return Vec::new();
        }
        // Scrolling is always safe, armed or not, with or without modifiers.
        let scrolled = match key.code {
            KeyCode::Char('j') | KeyCode::Down => Some(1),
            KeyCode::Char('k') | KeyCode::Up => Some(-1),
            KeyCode::PageDown => Some(overlay.page()),
            KeyCode::PageUp => Some(-overlay.page()),
            KeyCode::Home => {
                overlay.scroll = Scroll::TOP;
                return Vec::new();
            }
            KeyCode::End => {
                // Resolved against the size of the frame that draws it (`drawn`).
                overlay.scroll = Scroll::END;
                return Vec::new();
            }
            _ => None,
        };
        if let Some(rows) = scrolled {
            overlay.scroll_rows(rows);
            return Vec::new();
        }
        if now < overlay.armed_at {
            // Too soon: the person may not have seen it yet. Keep it unarmed a little longer.
            overlay.armed_at = now + ARM_DELAY;
            return Vec::new();
        }
        // Ctrl-D is the quit key, Ctrl-A and Ctrl-Y mean something else in many programs: a
        // chord is never an answer, only the plain key the options line shows.
        if !answers_a_modal(&key) {
            return Vec::new();
        }
        self.answer(key.code, now)
    }

    /// An armed, plain key on the modal.
    fn answer(&mut self, code: KeyCode, now: Instant) -> Vec<Op> {
        let Some(overlay) = self.approval_mut() else {
            return Vec::new();
        };
        let Some(front) = overlay.queue.front() else {
            return Vec::new();
        };
        let grants_session = front.session_scopes.is_some();
        let grants_directory = grants_session && front.directory_scope.is_some();
        let decision = match code {
            KeyCode::Esc => Some(Decision::Deny { reason: None }),
            KeyCode::Char('d') if grants_directory => {
                Some(Decision::AllowSession { directory: true })
            }
            KeyCode::Char(c) => match APPROVAL_OPTIONS.iter().find(|o| o.key == c) {
                Some(o) if o.choice == ApprovalChoice::DenyWithReason => {
                    let mut reason = TextArea::default();
                    reason.set_placeholder_text("why not? (Enter sends, Esc goes back)");
                    overlay.reason = Some(reason);
                    return Vec::new();
                }
                Some(o) if o.choice == ApprovalChoice::AllowSession && !grants_session => None,
                Some(o) if o.choice == ApprovalChoice::Park => return self.park_front(now),
                Some(o) => o.choice.decision(),
                None => None,
            },
            _ => None,
        };
        let Some(decision) = decision else {
            return Vec::new();
        };
        let allows = !matches!(decision, Decision::Deny { .. });
        if allows && !overlay.unseen().is_empty() {
            // Not everything that decides has been on screen yet: the footer says what and how.
            if let KeyCode::Char(c) = code {
                overlay.refused = Some(c);
            }
            return Vec::new();
        }
        self.decide(decision, now)
    }

    /// Parks the front request: it leaves the modal and keeps waiting in the agent for an answer
    /// by its one-time code (from any terminal; after a quit, `airlock approve CODE --resume`
    /// reopens this session). Nothing is decided. A request without a code stays.
    fn park_front(&mut self, now: Instant) -> Vec<Op> {
        let Some(overlay) = self.approval_mut() else {
            return Vec::new();
        };
        let Some(code) = overlay.queue.front().and_then(|r| r.code.clone()) else {
            return Vec::new();
        };
        let Some(request) = overlay.queue.pop_front() else {
            return Vec::new();
        };
        overlay.front_changed();
        overlay.armed_at = now + ARM_DELAY;
        self.close_empty_approval();
        self.entries.push(super::Entry::Notice(format!(
            "parked {} ({}): it waits for `airlock approve {code}` or `airlock deny {code}` from any terminal; quit if you like, then `airlock approve {code} --resume` reopens this session and goes on",
            request.call_id, request.tool
        )));
        Vec::new()
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
        overlay.front_changed();
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
}
