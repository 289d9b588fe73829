//! The audit trail of this session: each request, its decision and who made it, and the outcome,
//! newest at the bottom. The lines are the agent's (`Op::ListAudit` when it opens, answered by
//! `AgentEvent::Audit` into `App::audit`); this window owns only how far back it is scrolled.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::Outcome;
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::render::fit::truncate;
use crate::ui::render::{centered, dim};
use crate::visible::visible_line;

/// The audit trail's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "k ↑ / j ↓",
        presses: keys::LINES,
        does: "older / newer decisions",
    },
    Binding {
        keys: "Esc / q / F2",
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
            (key(KeyCode::F(2)), Action::Close),
        ],
        does: "close",
    },
    Binding {
        keys: "F1",
        presses: &[(key(KeyCode::F(1)), Action::Help)],
        does: "the help, over this window",
    },
];

/// The audit window: scrolled this many lines back from the newest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuditOverlay {
    pub scroll: u16,
}

impl AuditOverlay {
    pub fn on_key(&mut self, key: &KeyEvent) -> Outcome {
        match keys::action(Place::Audit, key) {
            Some(Action::Close) => return Outcome::close(),
            Some(Action::Help) => return Outcome::help(Place::Audit),
            Some(Action::Up(n)) => self.scroll = self.scroll.saturating_add(u16::from(n)),
            Some(Action::Down(n)) => self.scroll = self.scroll.saturating_sub(u16::from(n)),
            _ => {}
        }
        Outcome::default()
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        let area = centered(frame.area(), 90, 80);
        frame.render_widget(Clear, area);
        let close = keys::key_for(Place::Audit, Action::Close).unwrap_or_default();
        let block = Block::default().borders(Borders::ALL).title(format!(
            " audit: this session's decisions and their source ({close} closes) "
        ));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let width = inner.width as usize;
        let mut lines: Vec<Line> = app
            .audit
            .iter()
            .map(|l| {
                let style = if l.contains(" deny by ") {
                    Style::default().fg(Color::Red)
                } else if l.contains(" allow by ") {
                    Style::default().fg(Color::Green)
                } else {
                    dim()
                };
                Line::styled(truncate(&visible_line(&readable(app, l)), width), style)
            })
            .collect();
        if lines.is_empty() {
            lines.push(Line::styled("nothing decided yet", dim()));
        }
        let height = inner.height as usize;
        let back = (self.scroll as usize).min(lines.len().saturating_sub(height.min(lines.len())));
        let end = lines.len().saturating_sub(back);
        let start = end.saturating_sub(height);
        frame.render_widget(
            Paragraph::new(lines.drain(start..end).collect::<Vec<_>>()),
            inner,
        );
    }
}

/// An audit line as the cockpit shows it: the call by the id the screen shows it with, and an
/// outcome's details in words (`ran: ok, exit 0`), never as the JSON the log stores them in.
pub fn readable(app: &App, line: &str) -> String {
    let mut line = line.to_string();
    if let Some(id) = line.split_whitespace().nth(1) {
        let short = app.short_id(id);
        if short != id {
            line = line.replacen(id, &format!("{short:<8}"), 1);
        }
    }
    let Some(at) = line.find(" ran: ") else {
        return line;
    };
    let (head, outcome) = line.split_at(at + " ran: ".len());
    let (word, detail) = outcome.split_once(' ').unwrap_or((outcome, ""));
    let mut said = vec![word.replace('_', " ")];
    match serde_json::from_str::<serde_json::Value>(detail.trim()) {
        Ok(serde_json::Value::Object(map)) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    (_, serde_json::Value::Null) => {}
                    ("exit_code", value) => said.push(format!("exit {value}")),
                    (key, serde_json::Value::String(text)) => {
                        said.push(format!("{} {text}", key.replace('_', " ")))
                    }
                    (key, value) => said.push(format!("{} {value}", key.replace('_', " "))),
                }
            }
        }
        _ if detail.trim().is_empty() => {}
        _ => said.push(detail.trim().to_string()),
    }
    format!("{head}{}", said.join(", "))
}
