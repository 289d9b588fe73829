//! The approval modal's scrollable document: every reason, every part, the command or the diff,
//! as logical lines that wrap to the modal's width (nothing is cut with `…`). Both the state
//! (`app`: scrolling, which asking parts the human has had on screen) and the drawing (`render`)
//! read the request through this one model, so what is counted as seen is what was drawn.
//!
//! Order: what decides first (denying, then asking parts and reasons), then what runs (the
//! command, the diff), then what is allowed. A diff's lines are made from its index only when a
//! window shows them, so a frame costs what is on screen, not the size of the change.
//!
//! Scrolling is by rows: a position is a logical line and a row inside it, so a line longer than
//! the window can still be read to its end, and the last row of the document can always be
//! brought into view (`max_top`).

use std::borrow::Cow;
use std::ops::Range;

use ratatui::style::{Color, Modifier, Style};

use crate::protocol::ApprovalRequest;
use crate::protocol::Preview;
use crate::protocol::Ruling;
use crate::visible::visible;

mod build;
pub mod diff;
mod seen;
pub mod wrap;

pub use diff::{DiffIndex, DiffKind, Review};
pub use seen::Seen;

/// Up to this many session scopes are named on the `a` option itself; more are listed at the end
/// of the document (a footer that grew with them would leave no room for the preview).
pub const SCOPES_IN_FOOTER: usize = 3;

/// Something the human must have had on screen before `y`, `a` or `d` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MustSee {
    /// An asking or denying part (index into `verdict.parts`).
    Part(usize, Ruling),
    /// An asking or denying reason not shown next to its part (index into `verdict.reasons`).
    Reason(usize, Ruling),
    /// The last line of the command that will run.
    CommandEnd,
    /// The first and the last added or removed line of a diff.
    ChangeStart,
    ChangeEnd,
    /// The last line of the arguments, for a tool without a finer preview.
    ArgumentsEnd,
}

/// A scroll position: the logical line at the top of the window and its first row shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Scroll {
    pub line: usize,
    pub row: usize,
}

impl Scroll {
    pub const TOP: Scroll = Scroll { line: 0, row: 0 };
    /// As far down as the document goes (resolved by `clamp`).
    pub const END: Scroll = Scroll {
        line: usize::MAX,
        row: 0,
    };
}

/// The preview's content area as last drawn: its width and the rows the document gets (the hint
/// row, when there is one, is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    pub width: usize,
    pub rows: usize,
}

impl View {
    /// Used for scrolling before the first frame has said how big the preview is.
    pub const BEFORE_FIRST_FRAME: View = View {
        width: 80,
        rows: 20,
    };
}

/// One logical line of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocLine {
    /// Already made visible; the first row's lead is part of it.
    pub text: String,
    /// What rows after the first start with.
    pub cont: &'static str,
    pub style: Style,
    /// The line lists an allowed part (counted in the "more below" marker).
    pub allowed_part: bool,
}

/// The part of one logical line a window shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    pub line: usize,
    pub rows: Range<usize>,
    /// All rows of the line.
    pub total: usize,
}

/// How many things of each kind lie outside the window, on one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outside {
    pub denying: usize,
    pub asking: usize,
    pub allowed_parts: usize,
    pub lines: usize,
}

pub struct Doc<'a> {
    prelude: Vec<DocLine>,
    diff: Option<(&'a str, Cow<'a, DiffIndex>)>,
    /// Every must-see item and the line it is on, in line order.
    must: Vec<(usize, MustSee)>,
}

pub(crate) fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

pub(crate) fn ruling_style(r: Ruling) -> Style {
    match r {
        Ruling::Deny => Style::default().fg(Color::Red),
        Ruling::Ask => Style::default().fg(Color::Yellow),
        Ruling::Allow => dim(),
    }
}

const DIFF_CONT: &str = "    ↪ ";

impl<'a> Doc<'a> {
    /// The document for `request`. `index` is the diff's index when the state has one for this
    /// request; without it (a stale or missing index) one is built here, correct but slower.
    pub fn new(request: &'a ApprovalRequest, index: Option<&'a DiffIndex>) -> Doc<'a> {
        let (prelude, mut must) = build::prelude(request);
        let diff = match request.preview.as_ref().and_then(Preview::unified_diff) {
            Some(unified) => {
                let index = match index {
                    Some(i) if i.call_id == request.call_id => Cow::Borrowed(i),
                    _ => Cow::Owned(DiffIndex::build(&request.call_id, unified)),
                };
                if let Some((first, last)) = index.changed() {
                    must.push((prelude.len() + first, MustSee::ChangeStart));
                    must.push((prelude.len() + last, MustSee::ChangeEnd));
                }
                Some((unified, index))
            }
            None => None,
        };
        Doc {
            prelude,
            diff,
            must,
        }
    }

    /// The lines before the diff.
    pub fn prelude_len(&self) -> usize {
        self.prelude.len()
    }

    pub fn len(&self) -> usize {
        self.prelude.len() + self.diff.as_ref().map_or(0, |(_, index)| index.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Everything the human must have had on screen, with the line it is on.
    pub fn must_see(&self) -> &[(usize, MustSee)] {
        &self.must
    }

    /// Logical line `i`, styled; a diff line is made only when asked for.
    pub fn line(&self, i: usize) -> Option<DocLine> {
        if let Some(line) = self.prelude.get(i) {
            return Some(line.clone());
        }
        let (unified, index) = self.diff.as_ref()?;
        let at = i - self.prelude.len();
        let (text, kind, number) = index.line(unified, at)?;
        let hunk = index.hunk_of(at);
        let review = index.review.as_ref();
        let dropped = review.is_some_and(|r| r.dropped.contains(&hunk));
        let (text, mut style) = match kind {
            DiffKind::Hunk => match review {
                Some(review) => {
                    let current = review.current + 1 == hunk;
                    let state = if dropped { "DROPPED" } else { "kept" };
                    let marker = if current { "▶" } else { " " };
                    let style = match (current, dropped) {
                        (true, _) => Style::default()
                            .fg(Color::Black)
                            .bg(Color::Cyan)
                            .add_modifier(Modifier::BOLD),
                        (false, true) => Style::default().fg(Color::Yellow),
                        (false, false) => Style::default().fg(Color::Cyan),
                    };
                    (
                        format!(
                            "{marker} {}   [hunk {hunk} of {}: {state}]",
                            visible(text),
                            index.hunk_count()
                        ),
                        style,
                    )
                }
                None => (visible(text), Style::default().fg(Color::Cyan)),
            },
            DiffKind::FileHeader => (visible(text), dim()),
            DiffKind::Added => (
                format!("{number:>5} {}", visible(text)),
                Style::default().fg(Color::Green),
            ),
            // Not a line of the new file: no number, so the column reads one way only.
            DiffKind::Removed => (
                format!("{:>5} {}", "", visible(text)),
                Style::default().fg(Color::Red),
            ),
            DiffKind::Context => (format!("{number:>5} {}", visible(text)), Style::default()),
        };
        // A dropped hunk's changes are not written: struck through.
        if dropped && matches!(kind, DiffKind::Added | DiffKind::Removed) {
            style = style.add_modifier(Modifier::CROSSED_OUT | Modifier::DIM);
        }
        Some(DocLine {
            text,
            cont: DIFF_CONT,
            style,
            allowed_part: false,
        })
    }

    /// The rows line `i` takes at `width`.
    pub fn rows(&self, i: usize, width: usize) -> usize {
        self.line(i)
            .map_or(1, |l| wrap::row_count(&l.text, width, l.cont))
    }

    /// The rows the whole document takes at `width`, counted no further than `most`: a modal
    /// sized to its content asks this, walking at most the rows it could ever show.
    pub fn rows_up_to(&self, width: usize, most: usize) -> usize {
        let mut used = 0;
        for i in 0..self.len() {
            if used >= most {
                return most;
            }
            used += self.rows(i, width);
        }
        used.min(most)
    }

    /// The view the document gets in a preview area of `width` x `height`: all of it when it
    /// fits, else one row less, for the hint row. Walks at most `height` rows.
    pub fn view(&self, width: usize, height: usize) -> (View, bool) {
        let mut used = 0;
        for i in 0..self.len() {
            used += self.rows(i, width);
            if used > height {
                return (
                    View {
                        width,
                        rows: height.saturating_sub(1),
                    },
                    true,
                );
            }
        }
        (
            View {
                width,
                rows: height,
            },
            false,
        )
    }

    /// The lowest top position: the document's last row at the window's bottom.
    pub fn max_top(&self, view: View) -> Scroll {
        let mut need = view.rows.max(1);
        let mut i = self.len();
        while i > 0 {
            i -= 1;
            let rows = self.rows(i, view.width);
            if rows >= need {
                return Scroll {
                    line: i,
                    row: rows - need,
                };
            }
            need -= rows;
        }
        Scroll::TOP
    }

    /// `top` made valid for `view`: inside the document and no lower than `max_top`.
    pub fn clamp(&self, top: Scroll, view: View) -> Scroll {
        if self.is_empty() {
            return Scroll::TOP;
        }
        let max = self.max_top(view);
        if top.line >= self.len() {
            return max;
        }
        let row = top.row.min(self.rows(top.line, view.width) - 1);
        Scroll {
            line: top.line,
            row,
        }
        .min(max)
    }

    /// `n` rows further down.
    pub fn down(&self, top: Scroll, n: usize, view: View) -> Scroll {
        let mut pos = self.clamp(top, view);
        let mut n = n;
        while n > 0 && pos.line < self.len() {
            let rows = self.rows(pos.line, view.width);
            if pos.row + n < rows {
                pos.row += n;
                break;
            }
            n -= rows - pos.row;
            pos = Scroll {
                line: pos.line + 1,
                row: 0,
            };
        }
        self.clamp(pos, view)
    }

    /// `n` rows further up.
    pub fn up(&self, top: Scroll, n: usize, view: View) -> Scroll {
        let mut pos = self.clamp(top, view);
        let mut n = n;
        loop {
            if n <= pos.row {
                pos.row -= n;
                break;
            }
            n -= pos.row + 1;
            if pos.line == 0 {
                pos.row = 0;
                break;
            }
            pos.line -= 1;
            pos.row = self.rows(pos.line, view.width) - 1;
        }
        pos
    }

    /// What a window from `top` shows: the rows of each line in it, top to bottom.
    pub fn window(&self, top: Scroll, view: View) -> Vec<Slice> {
        let top = self.clamp(top, view);
        let mut slices = Vec::new();
        let mut room = view.rows;
        let mut line = top.line;
        let mut first_row = top.row;
        while room > 0 && line < self.len() {
            let total = self.rows(line, view.width);
            let end = total.min(first_row + room);
            slices.push(Slice {
                line,
                rows: first_row..end,
                total,
            });
            room -= end - first_row;
            line += 1;
            first_row = 0;
        }
        slices
    }

    /// What lies above and below a window: must-see items by ruling, allowed parts, lines. An
    /// item on a line the window cuts counts as outside, on the side it is cut.
    pub fn outside(&self, window: &[Slice]) -> (Outside, Outside) {
        let (mut above, mut below) = (Outside::default(), Outside::default());
        let (Some(first), Some(last)) = (window.first(), window.last()) else {
            return (above, below);
        };
        let is_above =
            |line: usize| line < first.line || (line == first.line && first.rows.start > 0);
        let is_below =
            |line: usize| line > last.line || (line == last.line && last.rows.end < last.total);
        let mut counted: Vec<MustSee> = Vec::new();
        for (line, item) in &self.must {
            let ruling = match item {
                MustSee::Part(_, r) | MustSee::Reason(_, r) => *r,
                _ => continue,
            };
            if counted.contains(item) {
                continue;
            }
            counted.push(*item);
            let side = if is_above(*line) {
                &mut above
            } else if is_below(*line) {
                &mut below
            } else {
                continue;
            };
            match ruling {
                Ruling::Deny => side.denying += 1,
                _ => side.asking += 1,
            }
        }
        for (i, line) in self.prelude.iter().enumerate() {
            if line.allowed_part {
                if is_above(i) {
                    above.allowed_parts += 1;
                } else if is_below(i) {
                    below.allowed_parts += 1;
                }
            }
        }
        above.lines = first.line + usize::from(first.rows.start > 0);
        below.lines = self.len() - last.line - usize::from(last.rows.end == last.total);
        (above, below)
    }
}

#[cfg(test)]
mod tests;
