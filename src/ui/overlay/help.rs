//! The help: every key and mouse binding of every context, drawn from the same tables the
//! dispatchers look keys up in (`ui::keys::table`), so it lists exactly what the keys do. The
//! window owns how far it is scrolled; its length depends on the screen's width (what it says
//! wraps), so scrolling is measured against the size of the screen last drawn.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::Outcome;
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::preview::wrap::text_width;
use crate::ui::words::wrap_words;

/// The help's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: keys::LINES,
        does: "scroll by a line",
    },
    Binding {
        keys: "PgUp / PgDn",
        presses: &[
            (key(KeyCode::PageUp), Action::PageUp),
            (key(KeyCode::PageDown), Action::PageDown),
        ],
        does: "scroll by a page",
    },
    Binding {
        keys: "Home / End",
        presses: &[
            (key(KeyCode::Home), Action::Top),
            (key(KeyCode::End), Action::Bottom),
        ],
        does: "first / last line",
    },
    Binding {
        keys: "mouse wheel",
        presses: keys::WHEEL,
        does: "scroll",
    },
    Binding {
        keys: "Esc / q / ? / F1",
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
            (plain('?'), Action::Close),
            (key(KeyCode::F(1)), Action::Close),
        ],
        does: "close",
    },
];

/// The help, scrolled this many rows from its top.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HelpOverlay {
    pub scroll: usize,
}

impl HelpOverlay {
    /// The help opened over a window: scrolled to that window's keys (on a screen of `screen`).
    pub fn at(place: Place, screen: (u16, u16)) -> HelpOverlay {
        // Before the first frame the screen's size is not known: a common one stands in.
        let screen = if screen.0 == 0 { (80, 24) } else { screen };
        let area = area(Rect::new(0, 0, screen.0, screen.1));
        let inner = Block::default().borders(Borders::ALL).inner(area);
        let scroll = lines(inner.width as usize)
            .iter()
            .position(|l| l.to_string() == place.title())
            .unwrap_or(0);
        HelpOverlay { scroll }
    }

    /// A key on the help; `screen` is the size it was last drawn on.
    pub fn on_key(&mut self, key: &KeyEvent, screen: (u16, u16)) -> Outcome {
        self.act(keys::action(Place::Help, key), screen)
    }

    pub fn on_wheel(&mut self, up: bool, screen: (u16, u16)) {
        self.act(keys::wheel(Place::Help, up), screen);
    }

    fn act(&mut self, action: Option<Action>, screen: (u16, u16)) -> Outcome {
        let (rows, page) = size(screen);
        let last = rows.saturating_sub(page);
        let page = page.max(1);
        let at = self.scroll.min(last);
        match action {
            Some(Action::Close) => return Outcome::close(),
            Some(Action::Up(n)) => self.scroll = at.saturating_sub(usize::from(n)),
            Some(Action::Down(n)) => self.scroll = (at + usize::from(n)).min(last),
            Some(Action::PageUp) => self.scroll = at.saturating_sub(page),
            Some(Action::PageDown) => self.scroll = (at + page).min(last),
            Some(Action::Top) => self.scroll = 0,
            Some(Action::Bottom) => self.scroll = last,
            _ => {}
        }
        Outcome::default()
    }

    pub fn render(&self, frame: &mut Frame) {
        let area = area(frame.area());
        frame.render_widget(Clear, area);
        let block = Block::default().borders(Borders::ALL).title(format!(
            " every key, mouse too ({} closes) ",
            keys::key_for(Place::Help, Action::Close).unwrap_or_default()
        ));
        let inner = block.inner(area);
        let mut lines = lines(inner.width as usize);
        let height = inner.height as usize;
        let top = self.scroll.min(lines.len().saturating_sub(height));
        let below = lines.len().saturating_sub(top + height);
        let mut block = block;
        if top > 0 || below > 0 {
            let mut parts = Vec::new();
            if top > 0 {
                parts.push(format!("↑ {top} above"));
            }
            if below > 0 {
                parts.push(format!("↓ {below} more below"));
            }
            block = block.title_bottom(Line::styled(
                format!(" {} · ↑ ↓ PgUp PgDn ", parts.join(" · ")),
                Style::default().fg(Color::Yellow),
            ));
        }
        frame.render_widget(block, area);
        let shown: Vec<Line> = lines.drain(top..(top + height).min(lines.len())).collect();
        frame.render_widget(Paragraph::new(shown), inner);
    }
}

/// Where the help goes on a screen of this size: nearly all of it, since it is a long list.
fn area(screen: Rect) -> Rect {
    let width = screen
        .width
        .saturating_sub(4)
        .clamp(screen.width.min(20), 92);
    let height = screen.height.saturating_sub(2).max(screen.height.min(8));
    Rect {
        x: screen.x + (screen.width - width) / 2,
        y: screen.y + (screen.height - height) / 2,
        width,
        height,
    }
}

/// Every binding of the key table, section by section, laid out for `width` cells: the keys in
/// one column, what they do word-wrapped beside them.
fn lines(width: usize) -> Vec<Line<'static>> {
    let widest = keys::all()
        .map(|(_, b)| text_width(b.keys))
        .max()
        .unwrap_or(0);
    let key_width = widest.min(width * 2 / 5).max(1);
    let does_width = width.saturating_sub(key_width + 4).max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    for place in Place::ALL {
        lines.push(Line::raw(place.title()).bold());
        for binding in keys::bindings(place) {
            let keys = wrap_words(binding.keys, key_width);
            let does = wrap_words(binding.does, does_width);
            for row in 0..keys.len().max(does.len()) {
                let key = keys.get(row).map_or("", String::as_str);
                let pad = key_width.saturating_sub(text_width(key));
                lines.push(Line::from(vec![
                    Span::styled(
                        format!("  {key}{}  ", " ".repeat(pad)),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(does.get(row).cloned().unwrap_or_default()),
                ]));
            }
        }
        lines.push(Line::raw(""));
    }
    lines.pop();
    lines
}

/// The help's length in rows and how many of them a screen of (width, height) shows at once.
pub fn size(screen: (u16, u16)) -> (usize, usize) {
    let area = area(Rect::new(0, 0, screen.0, screen.1));
    let inner = Block::default().borders(Borders::ALL).inner(area);
    (lines(inner.width as usize).len(), inner.height as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_shows_every_binding_of_the_key_table() {
        let text: Vec<String> = lines(200).iter().map(|l| l.to_string()).collect();
        for (_, b) in keys::all() {
            assert!(
                text.iter()
                    .any(|l| l.contains(b.keys) && l.contains(b.does)),
                "{b:?} is missing from the help"
            );
        }
        for place in Place::ALL {
            assert!(text.iter().any(|l| l == place.title()), "{place:?}");
        }
    }

    #[test]
    fn at_60x20_every_help_row_fits_and_the_help_scrolls() {
        let area = area(Rect::new(0, 0, 60, 20));
        assert!(area.width <= 60 && area.height <= 20);
        let inner = area.width as usize - 2;
        for line in lines(inner) {
            assert!(line.width() <= inner, "{line}");
        }
        let (rows, page) = size((60, 20));
        assert!(rows > page);
    }
}
