//! The conversation pane as rows, and where its view stands.
//!
//! Each entry becomes the rows it shows at the pane's width (word-wrapped, followed by one blank
//! row). Only the entries the view touches are wrapped, so a frame and a scroll step cost what is
//! visible (plus the one entry the view starts in), never the whole session.
//!
//! The view either follows the newest row (`Bottom`) or, once scrolled back, is anchored to the
//! row at its top (`Anchored`): output that arrives meanwhile lands below and moves nothing, so
//! what a person is reading stays put until they scroll back down or jump to the end.

use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};

use super::app::{Entry, ToolLine};
use super::words::wrap_words;
use crate::protocol::ToolStatus;
use crate::visible::{visible, visible_line};

/// Where the conversation's view stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Shows the newest rows and keeps following them.
    #[default]
    Bottom,
    /// Scrolled back: the top row of the view is row `row` of entry `entry`.
    Anchored(Pos),
}

/// A row of the conversation: row `row` of entry `entry`. `(entries.len(), 0)` is the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub entry: usize,
    pub row: usize,
}

/// What a frame of the pane shows.
pub struct Window {
    pub lines: Vec<Line<'static>>,
    /// Rows exist below the last one shown (the view is scrolled back).
    pub more_below: bool,
}

fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

/// The rows one entry shows at `width` cells, its blank separator row included.
pub fn entry_rows(entry: &Entry, width: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    match entry {
        Entry::User(text) => {
            for (i, l) in wrap_words(&visible(text), width.saturating_sub(2))
                .into_iter()
                .enumerate()
            {
                let lead = if i == 0 { "> " } else { "  " };
                lines.push(Line::from(vec![
                    Span::raw(lead).bold(),
                    Span::raw(l).bold(),
                ]));
            }
        }
        Entry::Assistant(text) => {
            lines.extend(wrap_words(&visible(text), width).into_iter().map(Line::raw));
        }
        Entry::Tool {
            short_id,
            title,
            state,
            ..
        } => {
            let (icon, style, tail) = match state {
                ToolLine::Asking => (
                    "?",
                    Style::default().fg(Color::Yellow),
                    "waiting for approval".to_string(),
                ),
                ToolLine::Denied(message) => {
                    ("✗", Style::default().fg(Color::Red), message.clone())
                }
                ToolLine::Running => ("▶", Style::default().fg(Color::Blue), "running".to_string()),
                ToolLine::Finished(status, code) => finished_icon(*status, *code),
                ToolLine::Refused(status, code, refusals) => {
                    let (icon, _, tail) = finished_icon(*status, *code);
                    (
                        icon,
                        Style::default().fg(Color::Red),
                        format!("{tail} · sandbox refused {refusals}"),
                    )
                }
                ToolLine::Interrupted => interrupted_icon(),
            };
            // The call id, the title (a path, a command) and a denial's message all come from
            // the model or its arguments: shown, never obeyed by the terminal.
            let text = format!(
                "{icon} {} {} — {}",
                visible_line(short_id),
                visible_line(title),
                visible(&tail)
            );
            for (i, l) in wrap_words(&text, width).into_iter().enumerate() {
                let style = if i == 0 {
                    style
                } else {
                    style.add_modifier(Modifier::DIM)
                };
                lines.push(Line::styled(l, style));
            }
        }
        Entry::Notice(text) => {
            for l in wrap_words(&format!("! {}", visible(text)), width) {
                lines.push(Line::styled(l, dim().add_modifier(Modifier::ITALIC)));
            }
        }
    }
    lines.push(Line::raw(""));
    lines
}

/// A finished tool's icon, colour and status word, as both panes show it: its exit code when
/// it has one, else how it ended in words.
pub fn finished_icon(status: ToolStatus, code: Option<i32>) -> (&'static str, Style, String) {
    let code = |word: &str| code.map_or_else(|| word.to_string(), |c| format!("exit {c}"));
    match status {
        ToolStatus::Ok => ("✓", Style::default().fg(Color::Green), code("done")),
        ToolStatus::Failed => ("✗", Style::default().fg(Color::Red), code("failed")),
        ToolStatus::Cancelled => ("⊘", Style::default().fg(Color::Yellow), "cancelled".into()),
        ToolStatus::TimedOut => ("⏱", Style::default().fg(Color::Yellow), "timed out".into()),
    }
}

/// A call that was running when airlock stopped (a reopened session), as both panes show it.
pub fn interrupted_icon() -> (&'static str, Style, String) {
    (
        "⊘",
        Style::default().fg(Color::Yellow),
        "interrupted".into(),
    )
}

/// Row counts of entries, wrapped on demand and remembered for one operation.
struct Rows<'a> {
    entries: &'a [Entry],
    width: usize,
}

impl Rows<'_> {
    fn count(&self, entry: usize) -> usize {
        self.entries
            .get(entry)
            .map_or(0, |e| entry_rows(e, self.width).len())
    }

    fn end(&self) -> Pos {
        Pos {
            entry: self.entries.len(),
            row: 0,
        }
    }

    /// `n` rows further down from `pos`, stopping at the end.
    fn forward(&self, mut pos: Pos, mut n: usize) -> Pos {
        while pos.entry < self.entries.len() {
            let count = self.count(pos.entry);
            if pos.row + n < count {
                pos.row += n;
                return pos;
            }
            n -= count.saturating_sub(pos.row).min(n);
            pos = Pos {
                entry: pos.entry + 1,
                row: 0,
            };
            if n == 0 && pos.entry < self.entries.len() {
                return pos;
            }
        }
        self.end()
    }

    /// `n` rows further up from `pos`, stopping at the first row.
    fn back(&self, mut pos: Pos, mut n: usize) -> Pos {
        loop {
            if pos.row >= n {
                pos.row -= n;
                return pos;
            }
            n -= pos.row;
            if pos.entry == 0 {
                return Pos { entry: 0, row: 0 };
            }
            pos.entry -= 1;
            pos.row = self.count(pos.entry);
        }
    }

    /// Whether more than `limit` rows lie from `pos` to the end (counting at most `limit + 1`).
    fn more_than(&self, pos: Pos, limit: usize) -> bool {
        let mut seen = 0;
        let mut entry = pos.entry;
        let mut skip = pos.row;
        while entry < self.entries.len() {
            seen += self.count(entry).saturating_sub(skip);
            if seen > limit {
                return true;
            }
            skip = 0;
            entry += 1;
        }
        false
    }

    /// The row at the top of a view of `height` rows.
    fn top(&self, view: View, height: usize) -> Pos {
        let bottom_top = || self.back(self.end(), height);
        match view {
            View::Bottom => bottom_top(),
            View::Anchored(pos) => {
                // Normalised against today's width (a resize may have shortened the entry).
                let pos = self.forward(pos, 0);
                if self.more_than(pos, height) {
                    pos
                } else {
                    bottom_top()
                }
            }
        }
    }
}

/// The rows a pane of `width` x `height` cells shows for `view`.
pub fn window(entries: &[Entry], view: View, width: usize, height: usize) -> Window {
    let rows = Rows { entries, width };
    let top = rows.top(view, height);
    let mut lines = Vec::with_capacity(height);
    let mut entry = top.entry;
    let mut skip = top.row;
    while lines.len() < height && entry < entries.len() {
        let rest = height - lines.len();
        lines.extend(
            entry_rows(&entries[entry], width)
                .into_iter()
                .skip(skip)
                .take(rest),
        );
        skip = 0;
        entry += 1;
    }
    Window {
        more_below: rows.more_than(top, height),
        lines,
    }
}

/// The rows the newest entries fill at `width` cells, counted no further than `most`.
pub fn rows_up_to(entries: &[Entry], width: usize, most: usize) -> usize {
    let mut rows = 0;
    for entry in entries.iter().rev() {
        if rows >= most {
            break;
        }
        rows += entry_rows(entry, width).len();
    }
    rows.min(most)
}

/// The view after moving it `rows` rows (negative: up, toward older entries) in a pane of
/// `width` x `height` cells. Reaching the newest row follows it again.
pub fn scroll(entries: &[Entry], view: View, width: usize, height: usize, rows: isize) -> View {
    let table = Rows { entries, width };
    let top = table.top(view, height);
    let moved = if rows < 0 {
        table.back(top, rows.unsigned_abs())
    } else {
        table.forward(top, rows.unsigned_abs())
    };
    if table.more_than(moved, height) {
        View::Anchored(moved)
    } else {
        View::Bottom
    }
}

/// The view showing the very first row (or the bottom, if everything fits).
pub fn first(entries: &[Entry], width: usize, height: usize) -> View {
    let start = Pos { entry: 0, row: 0 };
    if (Rows { entries, width }).more_than(start, height) {
        View::Anchored(start)
    } else {
        View::Bottom
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(window: &Window) -> Vec<String> {
        window.lines.iter().map(|l| l.to_string()).collect()
    }

    /// Ten entries of one row each (plus its blank row): twenty rows in all.
    fn ten() -> Vec<Entry> {
        (0..10)
            .map(|i| Entry::Assistant(format!("entry {i}")))
            .collect()
    }

    #[test]
    fn the_bottom_view_shows_the_newest_rows() {
        let w = window(&ten(), View::Bottom, 40, 4);
        assert_eq!(text_of(&w), ["entry 8", "", "entry 9", ""]);
        assert!(!w.more_below);
    }

    #[test]
    fn scrolling_up_and_back_down_returns_to_following_the_bottom() {
        let entries = ten();
        let up = scroll(&entries, View::Bottom, 40, 4, -3);
        assert_eq!(up, View::Anchored(Pos { entry: 6, row: 1 }));
        let w = window(&entries, up, 40, 4);
        assert_eq!(text_of(&w), ["", "entry 7", "", "entry 8"]);
        assert!(w.more_below);
        assert_eq!(scroll(&entries, up, 40, 4, 3), View::Bottom);
        assert_eq!(scroll(&entries, up, 40, 4, 100), View::Bottom);
    }

    #[test]
    fn new_output_does_not_move_a_scrolled_back_view() {
        let mut entries = ten();
        let up = scroll(&entries, View::Bottom, 40, 4, -6);
        let before = text_of(&window(&entries, up, 40, 4));
        entries.push(Entry::Assistant("entry 10, just arrived".into()));
        if let Some(Entry::Assistant(text)) = entries.last_mut() {
            text.push_str(" and still streaming");
        }
        assert_eq!(text_of(&window(&entries, up, 40, 4)), before);
    }

    #[test]
    fn scrolling_up_stops_at_the_first_row_and_first_shows_it() {
        let entries = ten();
        let top = scroll(&entries, View::Bottom, 40, 4, -1000);
        assert_eq!(top, View::Anchored(Pos { entry: 0, row: 0 }));
        assert_eq!(first(&entries, 40, 4), top);
        assert_eq!(text_of(&window(&entries, top, 40, 4))[0], "entry 0");
    }

    #[test]
    fn a_conversation_that_fits_never_scrolls() {
        let entries = vec![Entry::Assistant("short".into())];
        assert_eq!(scroll(&entries, View::Bottom, 40, 10, -5), View::Bottom);
        assert_eq!(first(&entries, 40, 10), View::Bottom);
        assert!(scroll(&[], View::Bottom, 40, 10, -5) == View::Bottom);
    }

    #[test]
    fn an_anchor_left_past_its_entry_by_a_resize_still_shows_rows() {
        let entries = vec![
            Entry::Assistant("one two three four five six".into()),
            Entry::Assistant("a".into()),
            Entry::Assistant("b".into()),
        ];
        let anchored = View::Anchored(Pos { entry: 0, row: 5 });
        let w = window(&entries, anchored, 80, 2);
        assert_eq!(w.lines.len(), 2);
    }

    #[test]
    fn conversation_text_wraps_between_words() {
        let entries = vec![Entry::Assistant(
            "Nothing outside the workspace was read or written.".into(),
        )];
        let w = window(&entries, View::Bottom, 20, 10);
        assert_eq!(
            text_of(&w),
            [
                "Nothing outside the",
                "workspace was read",
                "or written.",
                ""
            ]
        );
    }
}
