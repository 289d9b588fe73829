//! The session's grants (what "allow for the session" stored): one row each with its scope,
//! expiry and uses; `d` revokes the selected one. The list is the agent's (`Op::ListGrants`,
//! answered by `AgentEvent::Grants` into `App::grants`, which the status bar counts too); this
//! window owns only which row is selected.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::Outcome;
use crate::protocol::{GrantSummary, Op};
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::render::{centered, dim};
use crate::visible::visible_line;

/// The grant list's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: keys::LINES,
        does: "select a grant",
    },
    Binding {
        keys: "d",
        presses: &[(plain('d'), Action::Revoke)],
        does: "revoke the selected grant",
    },
    Binding {
        keys: "Esc / q",
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
        ],
        does: "close",
    },
    Binding {
        keys: "F1",
        presses: &[(key(KeyCode::F(1)), Action::Help)],
        does: "the help, over this window",
    },
];

/// The grant list: which row is selected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrantsOverlay {
    pub selected: usize,
}

impl GrantsOverlay {
    pub fn on_key(&mut self, key: &KeyEvent, grants: &[GrantSummary]) -> Outcome {
        match keys::action(Place::Grants, key) {
            Some(Action::Close) => return Outcome::close(),
            Some(Action::Help) => return Outcome::help(Place::Grants),
            Some(Action::Down(_)) => {
                self.selected = (self.selected + 1).min(grants.len().saturating_sub(1))
            }
            Some(Action::Up(_)) => self.selected = self.selected.saturating_sub(1),
            Some(Action::Revoke) => {
                if let Some(g) = grants.get(self.selected) {
                    return Outcome::ops(vec![Op::RevokeGrant { id: g.id }]);
                }
            }
            _ => {}
        }
        Outcome::default()
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        let area = centered(frame.area(), 80, 60);
        frame.render_widget(Clear, area);
        let revoke = keys::key_for(Place::Grants, Action::Revoke).unwrap_or_default();
        let close = keys::key_for(Place::Grants, Action::Close).unwrap_or_default();
        let block = Block::default().borders(Borders::ALL).title(format!(
            " session grants ({revoke} revokes, {close} closes) "
        ));
        let mut lines: Vec<Line> = Vec::new();
        if app.grants.is_empty() {
            lines.push(Line::styled("no grants: every ask asks again", dim()));
        }
        for (i, g) in app.grants.iter().enumerate() {
            let selected = i == self.selected;
            let expiry = match g.expires_in_ms {
                Some(ms) => format!("expires in {}s", ms / 1000),
                None => "until the session ends".to_string(),
            };
            let text = format!(
                "{} #{} {} {}  · {} · used {}",
                if selected { "›" } else { " " },
                g.id,
                visible_line(&g.tool),
                visible_line(&g.scope),
                expiry,
                g.uses
            );
            let style = if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::styled(text, style));
        }
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}
