//! The inbox (F4): requests waiting elsewhere on this machine, in other cockpit sessions and
//! parked headless runs (`App::inbox`, read from the state database). The list names each one's
//! session, agent, tool, risk and age; `Enter` opens one whole (every reason, what it would run)
//! and only there, once it has been in sight for the arm delay, `y` allows it once and `n`
//! denies it, through its one-time code: the first answer wins wherever it comes from.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{Effect, Outcome};
use crate::protocol::{InboxEntry, MAIN_AGENT};
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::render::fit::truncate;
use crate::ui::render::{centered, dim};
use crate::visible::visible_line;

/// The inbox's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: keys::LINES,
        does: "select a request (open: scroll it)",
    },
    Binding {
        keys: "Enter",
        presses: &[(key(KeyCode::Enter), Action::Expand)],
        does: "open the selected request whole: every reason, what it would run",
    },
    Binding {
        keys: "y",
        presses: &[(
            plain('y'),
            Action::Answer(super::approval::ApprovalChoice::AllowOnce),
        )],
        does: "open, once armed: allow it once (through its one-time code)",
    },
    Binding {
        keys: "n",
        presses: &[(
            plain('n'),
            Action::Answer(super::approval::ApprovalChoice::Deny),
        )],
        does: "open, once armed: deny it",
    },
    Binding {
        keys: "Esc / q",
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
        ],
        does: "back to the list; from the list, close",
    },
    Binding {
        keys: "F1",
        presses: &[(key(KeyCode::F(1)), Action::Help)],
        does: "the help, over this window",
    },
];

/// The inbox: the selected request, and the one open whole (with when its keys go live).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InboxOverlay {
    pub selected: usize,
    /// The request open whole: its id, when `y` and `n` go live, and how far it is scrolled.
    pub open: Option<(i64, Instant, usize)>,
}

impl InboxOverlay {
    pub fn on_key(
        &mut self,
        key: &KeyEvent,
        entries: &[InboxEntry],
        (now, wall_ms): (Instant, u64),
        screen: (u16, u16),
    ) -> Outcome {
        let action = keys::action(Place::Inbox, key);
        // Answered or expired elsewhere meanwhile: back on the list.
        if self
            .open
            .is_some_and(|(id, _, _)| !entries.iter().any(|e| e.id == id))
        {
            self.open = None;
        }
        if let Some((id, armed_at, scroll)) = &mut self.open {
            // What of it is below the window: `y` and `n` wait until the end has been in sight.
            let (width, rows) = window(screen);
            let below = entries.iter().find(|e| e.id == *id).map_or(0, |e| {
                whole_rows(e, wall_ms, width)
                    .len()
                    .saturating_sub(rows + *scroll)
            });
            return match action {
                Some(Action::Close) => {
                    self.open = None;
                    Outcome::default()
                }
                Some(Action::Help) => Outcome::help(Place::Inbox),
                Some(Action::Down(_)) => {
                    if below > 0 {
                        *scroll += 1;
                    }
                    Outcome::default()
                }
                Some(Action::Up(_)) => {
                    *scroll = scroll.saturating_sub(1);
                    Outcome::default()
                }
                Some(Action::Answer(choice)) if now >= *armed_at && below == 0 => {
                    let allow = choice == super::approval::ApprovalChoice::AllowOnce;
                    let id = *id;
                    self.open = None;
                    Outcome {
                        effects: vec![Effect::InboxAnswer { id, allow }],
                        ..Outcome::default()
                    }
                }
                // Its end not seen yet: nothing is answered unread.
                Some(Action::Answer(_)) if below > 0 => Outcome::default(),
                // Not armed yet: a key meant for something else never answers, and the
                // countdown starts again.
                Some(Action::Answer(_)) => {
                    *armed_at = now + super::approval::ARM_DELAY;
                    Outcome::default()
                }
                _ => Outcome::default(),
            };
        }
        match action {
            Some(Action::Close) => return Outcome::close(),
            Some(Action::Help) => return Outcome::help(Place::Inbox),
            Some(Action::Down(_)) => {
                self.selected = (self.selected + 1).min(entries.len().saturating_sub(1))
            }
            Some(Action::Up(_)) => self.selected = self.selected.saturating_sub(1),
            Some(Action::Expand) => {
                if let Some(entry) = entries.get(self.selected) {
                    self.open = Some((entry.id, now + super::approval::ARM_DELAY, 0));
                }
            }
            _ => {}
        }
        Outcome::default()
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        let area = centered(frame.area(), 90, 80);
        frame.render_widget(Clear, area);
        let (width, rows) = window((frame.area().width, frame.area().height));
        let open = self.open.and_then(|(id, armed_at, scroll)| {
            app.inbox
                .iter()
                .find(|e| e.id == id)
                .map(|e| (e, armed_at, scroll))
        });
        let (title, lines) = match open {
            Some((entry, armed_at, scroll)) => {
                let lines = whole_rows(entry, app.wall_ms, width);
                let below = lines.len().saturating_sub(rows + scroll);
                let title = if below > 0 {
                    format!(
                        " waiting elsewhere: {below} more rows below (j) before y or n · Esc back "
                    )
                } else if app.now < armed_at {
                    " waiting elsewhere: read it first (y and n arm in a moment) · Esc back "
                        .to_string()
                } else {
                    " waiting elsewhere: y allow once · n deny · Esc back ".to_string()
                };
                let scroll = scroll.min(lines.len().saturating_sub(rows));
                (title, lines.into_iter().skip(scroll).collect())
            }
            None => (
                format!(
                    " inbox: {} waiting elsewhere (Enter opens one, Esc closes) ",
                    app.inbox.len()
                ),
                self.list(app, width),
            ),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .title(title)
            .border_style(Style::default().fg(Color::Yellow));
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }

    fn list(&self, app: &App, width: usize) -> Vec<Line<'static>> {
        if app.inbox.is_empty() {
            return vec![Line::styled(
                "nothing waits elsewhere on this machine",
                dim(),
            )];
        }
        app.inbox
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let first = e.preview.first().map(String::as_str).unwrap_or("");
                let text = format!(
                    "{} {:>7}  {}  {}  {} {}  {}  {}",
                    if i == self.selected { "›" } else { " " },
                    age(app.wall_ms, e.created_ms),
                    visible_line(&e.session),
                    visible_line(e.agent.as_deref().unwrap_or(MAIN_AGENT)),
                    visible_line(&e.tool),
                    visible_line(&e.risk),
                    if e.parked { "parked" } else { "cockpit" },
                    visible_line(first),
                );
                let style = if i == self.selected {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default()
                };
                Line::styled(truncate(&text, width), style)
            })
            .collect()
    }
}

/// The inner width and rows of the inbox's window on a screen of `screen` (as `render` lays it).
fn window(screen: (u16, u16)) -> (usize, usize) {
    let area = centered(ratatui::layout::Rect::new(0, 0, screen.0, screen.1), 90, 80);
    (
        usize::from(area.width.saturating_sub(2)).max(1),
        usize::from(area.height.saturating_sub(2)).max(1),
    )
}

/// A request open whole, wrapped to `width`: who asks what, every reason, what it would run.
/// Nothing is cut: a long line wraps.
fn whole_rows(e: &InboxEntry, wall_ms: u64, width: usize) -> Vec<Line<'static>> {
    let mut rows = Vec::new();
    let mut add = |text: String, style: Style| {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            rows.push(Line::raw(""));
        }
        for part in chars.chunks(width.max(1)) {
            rows.push(Line::styled(part.iter().collect::<String>(), style));
        }
    };
    add(
        format!(
            "{} wants to run {} · risk {} · {} · {} ({}) · asked {}",
            visible_line(&e.call_id),
            visible_line(&e.tool),
            visible_line(&e.risk),
            visible_line(e.agent.as_deref().unwrap_or(MAIN_AGENT)),
            visible_line(&e.session),
            if e.parked {
                "a parked run"
            } else {
                "a cockpit"
            },
            age(wall_ms, e.created_ms)
        ),
        Style::default().add_modifier(Modifier::BOLD),
    );
    add(String::new(), Style::default());
    for r in &e.reasons {
        add(format!("• {}", visible_line(r)), Style::default());
    }
    add(String::new(), Style::default());
    for l in &e.preview {
        let style = match l.chars().next() {
            Some('+') if !l.starts_with("+++") => Style::default().fg(Color::Green),
            Some('-') if !l.starts_with("---") => Style::default().fg(Color::Red),
            _ => Style::default(),
        };
        add(visible_line(l), style);
    }
    rows
}

/// How long ago `since` was, in a few characters.
fn age(now_ms: u64, since_ms: u64) -> String {
    let s = now_ms.saturating_sub(since_ms) / 1000;
    match s {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s => format!("{}h ago", s / 3600),
    }
}
