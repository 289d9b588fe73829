//! Undo (`u` on a finished run in the results pane): what undoing the run's call would do, file
//! by file (a diff from what is there now to what undo leaves, a conflict for a file changed
//! since), for that call alone or, with `l`, for it and every later call. `y` does it once the
//! whole plan has been in sight and the arm delay has passed; a file in conflict is put back
//! only after `o`. The undo is recorded (and can be undone) and the model is told.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{Effect, Outcome};
use crate::protocol::UndoPlan;
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::render::centered;
use crate::visible::visible_line;

pub const KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: keys::LINES,
        does: "scroll the plan",
    },
    Binding {
        keys: "PgDn / G",
        presses: &[
            (key(KeyCode::PageDown), Action::PageDown),
            (plain('G'), Action::Bottom),
        ],
        does: "a page down / to the end of the plan",
    },
    Binding {
        keys: "l",
        presses: &[(plain('l'), Action::Expand)],
        does: "this call alone, or it and every later call",
    },
    Binding {
        keys: "o",
        presses: &[(plain('o'), Action::ToggleHunk)],
        does: "put back the files changed since too (conflicts), or leave them",
    },
    Binding {
        keys: "y",
        presses: &[(
            plain('y'),
            Action::Answer(super::approval::ApprovalChoice::AllowOnce),
        )],
        does: "once the whole plan was in sight and armed: undo",
    },
    Binding {
        keys: "n / Esc / q",
        presses: &[
            (plain('n'), Action::Close),
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
        ],
        does: "keep everything as it is",
    },
    Binding {
        keys: "F1",
        presses: &[(key(KeyCode::F(1)), Action::Help)],
        does: "the help, over this window",
    },
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoOverlay {
    pub plan: UndoPlan,
    pub scroll: usize,
    /// Put back files changed since too.
    pub overwrite: bool,
    /// When `y` goes live.
    pub armed_at: Instant,
}

impl UndoOverlay {
    pub fn new(plan: UndoPlan, now: Instant) -> UndoOverlay {
        UndoOverlay {
            plan,
            scroll: 0,
            overwrite: false,
            armed_at: now + super::approval::ARM_DELAY,
        }
    }

    pub fn on_key(&mut self, key: &KeyEvent, now: Instant, screen: (u16, u16)) -> Outcome {
        let (width, rows) = window(screen);
        let below = self.rows(width).len().saturating_sub(rows + self.scroll);
        match keys::action(Place::Undo, key) {
            Some(Action::Close) => Outcome::close(),
            Some(Action::Help) => Outcome::help(Place::Undo),
            Some(Action::Down(_)) => {
                if below > 0 {
                    self.scroll += 1;
                }
                Outcome::default()
            }
            Some(Action::Up(_)) => {
                self.scroll = self.scroll.saturating_sub(1);
                Outcome::default()
            }
            Some(Action::PageDown) => {
                self.scroll += below.min(rows);
                Outcome::default()
            }
            Some(Action::Bottom) => {
                self.scroll += below;
                Outcome::default()
            }
            Some(Action::Expand) => Outcome {
                effects: vec![Effect::UndoPlan {
                    call_id: self.plan.call_id.clone(),
                    and_later: !self.plan.and_later,
                }],
                close: true,
                ..Outcome::default()
            },
            Some(Action::ToggleHunk) => {
                if self.plan.files.iter().any(|f| f.conflict.is_some()) {
                    self.overwrite = !self.overwrite;
                }
                Outcome::default()
            }
            Some(Action::Answer(_)) if now >= self.armed_at && below == 0 => Outcome {
                effects: vec![Effect::UndoApply {
                    plan: Box::new(self.plan.clone()),
                    overwrite: self.overwrite,
                }],
                close: true,
                ..Outcome::default()
            },
            // Not all of it seen, or not armed yet: nothing is undone unread, and the
            // countdown starts again.
            Some(Action::Answer(_)) => {
                if below == 0 {
                    self.armed_at = now + super::approval::ARM_DELAY;
                }
                Outcome::default()
            }
            _ => Outcome::default(),
        }
    }

    /// The plan as rows of `width`: the calls, each file with its conflict and diff, the notes.
    fn rows(&self, width: usize) -> Vec<Line<'static>> {
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
        let calls: Vec<String> = self
            .plan
            .calls
            .iter()
            .map(|(id, title)| format!("{} {}", visible_line(id), visible_line(title)))
            .collect();
        add(
            format!("undo {}", calls.join(", ")),
            Style::default().add_modifier(Modifier::BOLD),
        );
        let conflicts = self
            .plan
            .files
            .iter()
            .filter(|f| f.conflict.is_some())
            .count();
        if conflicts > 0 {
            add(
                format!(
                    "{conflicts} file(s) changed since: {} (o)",
                    if self.overwrite {
                        "they are put back too"
                    } else {
                        "they are left as they are"
                    }
                ),
                Style::default().fg(Color::Red),
            );
        }
        for file in &self.plan.files {
            add(String::new(), Style::default());
            add(
                format!(
                    "{} {}{}",
                    file.action.as_str(),
                    visible_line(&file.path),
                    if file.not_kept {
                        "  (not kept: cannot be brought back)"
                    } else {
                        ""
                    }
                ),
                Style::default().add_modifier(Modifier::BOLD),
            );
            if let Some(conflict) = &file.conflict {
                add(
                    format!("! {}", visible_line(conflict)),
                    Style::default().fg(Color::Red),
                );
            }
            for line in &file.diff {
                let style = match line.chars().next() {
                    Some('+') if !line.starts_with("+++") => Style::default().fg(Color::Green),
                    Some('-') if !line.starts_with("---") => Style::default().fg(Color::Red),
                    _ => Style::default(),
                };
                add(visible_line(line), style);
            }
        }
        add(String::new(), Style::default());
        for note in &self.plan.notes {
            add(
                format!("note: {}", visible_line(note)),
                Style::default().add_modifier(Modifier::DIM),
            );
        }
        rows
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        let area = centered(frame.area(), 90, 85);
        frame.render_widget(Clear, area);
        let (width, rows) = window((frame.area().width, frame.area().height));
        let lines = self.rows(width);
        let below = lines.len().saturating_sub(rows + self.scroll);
        let scope = if self.plan.and_later {
            "it and every later call (l: it alone)"
        } else {
            "this call alone (l: and every later one)"
        };
        let title = if below > 0 {
            format!(" undo · {scope} · {below} more rows below (j) before y · n keeps ")
        } else if app.now < self.armed_at {
            format!(" undo · {scope} · read it first (y arms in a moment) · n keeps ")
        } else {
            format!(" undo · {scope} · y undo · n keeps ")
        };
        let scroll = self.scroll.min(lines.len().saturating_sub(rows));
        let block = Block::default()
            .borders(Borders::ALL)
            .title(title)
            .border_style(Style::default().fg(Color::Magenta));
        frame.render_widget(
            Paragraph::new(lines.into_iter().skip(scroll).collect::<Vec<_>>()).block(block),
            area,
        );
    }
}

/// The inner width and rows of the window on a screen of `screen` (as `render` lays it).
fn window(screen: (u16, u16)) -> (usize, usize) {
    let area = centered(ratatui::layout::Rect::new(0, 0, screen.0, screen.1), 90, 85);
    (
        usize::from(area.width.saturating_sub(2)).max(1),
        usize::from(area.height.saturating_sub(2)).max(1),
    )
}
