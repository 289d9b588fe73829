//! The session's agents: its own (`main`) and every sub-agent, one row each with its state
//! (running, waiting for you, done, failed, cancelled), its requests in the queue, its mode and
//! task. `Enter` shows its conversation; `x` cancels a running sub-agent (its `agent` call, and
//! with it everything it started). The list is `App::agents`; this window owns only which row
//! is selected (0 is `main`).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{Effect, Outcome};
use crate::protocol::{MAIN_AGENT, Op};
use crate::ui::app::{AgentState, Agents, App};
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::render::fit::truncate;
use crate::ui::render::{centered, dim};
use crate::visible::visible_line;

/// The agent list's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: keys::LINES,
        does: "select an agent",
    },
    Binding {
        keys: "Enter",
        presses: &[(key(KeyCode::Enter), Action::ViewAgent)],
        does: "show its conversation",
    },
    Binding {
        keys: "x",
        presses: &[(plain('x'), Action::CancelRun)],
        does: "cancel the selected sub-agent (and the sub-agents it started)",
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

/// The agent list: which row is selected (0: the session's own agent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentsOverlay {
    pub selected: usize,
}

impl AgentsOverlay {
    pub fn on_key(&mut self, key: &KeyEvent, agents: &Agents) -> Outcome {
        match keys::action(Place::Agents, key) {
            Some(Action::Close) => return Outcome::close(),
            Some(Action::Help) => return Outcome::help(Place::Agents),
            Some(Action::Down(_)) => self.selected = (self.selected + 1).min(agents.list.len()),
            Some(Action::Up(_)) => self.selected = self.selected.saturating_sub(1),
            Some(Action::ViewAgent) => {
                return Outcome {
                    close: true,
                    effects: vec![Effect::ViewAgent(self.selected.checked_sub(1))],
                    ..Outcome::default()
                };
            }
            Some(Action::CancelRun) => {
                if let Some(view) = self
                    .selected
                    .checked_sub(1)
                    .and_then(|i| agents.list.get(i))
                    .filter(|v| v.ended.is_none())
                {
                    return Outcome::ops(vec![Op::CancelTool {
                        call_id: view.call_id.clone(),
                    }]);
                }
            }
            _ => {}
        }
        Outcome::default()
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        let area = centered(frame.area(), 80, 60);
        frame.render_widget(Clear, area);
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" agents (Enter shows one, x cancels, Esc closes) ");
        let width = usize::from(area.width.saturating_sub(2));
        let viewing = app.agents.viewing.map_or(0, |i| i + 1);
        let row = |i: usize, text: String, style: Style| {
            let mark = match (i == self.selected, i == viewing) {
                (true, _) => "›",
                (false, true) => "•",
                _ => " ",
            };
            let style = if i == self.selected {
                style.add_modifier(Modifier::REVERSED)
            } else {
                style
            };
            Line::styled(truncate(&format!("{mark} {text}"), width), style)
        };
        let main_waiting = app.requests_of(None);
        let main_state = if main_waiting > 0 {
            AgentState::Waiting(main_waiting)
        } else if app.turn_running {
            AgentState::Running
        } else {
            AgentState::Ended(crate::protocol::AgentStatus::Done)
        };
        let mut lines = vec![row(
            0,
            format!(
                "{MAIN_AGENT:<6} {:<20} the session's agent",
                if app.turn_running || main_waiting > 0 {
                    main_state.words()
                } else {
                    "idle".into()
                }
            ),
            state_style(main_state),
        )];
        for (i, view) in app.agents.list.iter().enumerate() {
            let state = app.agent_state(i);
            let indent = "  ".repeat(view.depth.saturating_sub(1));
            let mut text = format!(
                "{indent}{:<6} {:<20} {}  · mode {}",
                visible_line(&view.label.id),
                state.words(),
                visible_line(&view.label.task),
                visible_line(&view.mode),
            );
            if let Some(sandbox) = &view.sandbox {
                text.push_str(&format!(", sandbox {}", visible_line(sandbox)));
            }
            if view.ended.is_some() && !view.summary.is_empty() {
                text.push_str(&format!("  · {}", visible_line(&view.summary)));
            }
            lines.push(row(i + 1, text, state_style(state)));
        }
        if app.agents.list.is_empty() {
            lines.push(Line::styled(
                "  no sub-agents yet: the model starts one with the `agent` tool",
                dim(),
            ));
        }
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}

fn state_style(state: AgentState) -> Style {
    match state {
        AgentState::Waiting(_) => Style::default().fg(Color::Yellow),
        AgentState::Running => Style::default().fg(Color::Blue),
        AgentState::Ended(crate::protocol::AgentStatus::Done) => Style::default(),
        AgentState::Ended(_) => Style::default().fg(Color::Red),
    }
}
