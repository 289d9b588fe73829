//! The question before quitting while tools or a turn run: `y`, `q` or `Ctrl-D` quits, any
//! other key stays. It stays open when the turn ends under it (only the person closes it), so it
//! says what quitting would stop now, not what ran when it was asked.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{Effect, Outcome};
use crate::protocol::Op;
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Binding, Place, Press, ctrl, plain};
use crate::ui::render::centered;

/// The question's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "y / q / Ctrl-D",
        presses: &[
            (plain('y'), Action::Quit),
            (plain('q'), Action::Quit),
            (ctrl('d'), Action::Quit),
        ],
        does: "quit (kills the running tools and stops the turn)",
    },
    Binding {
        keys: "any other key",
        presses: &[(Press::Other, Action::Close)],
        does: "stay",
    },
];

/// Asking before quitting: it has no state of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfirmQuitOverlay;

impl ConfirmQuitOverlay {
    /// Every key closes the question; a quitting key quits.
    pub fn on_key(&mut self, key: &KeyEvent) -> Outcome {
        let mut outcome = Outcome::close();
        if keys::action(Place::ConfirmQuit, key) == Some(Action::Quit) {
            outcome.ops.push(Op::Shutdown);
            outcome.effects.push(Effect::Quit);
        }
        outcome
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        let area = centered(frame.area(), 60, 20);
        frame.render_widget(Clear, area);
        let block = Block::default().borders(Borders::ALL).title(" quit? ");
        let quit = keys::key_for(Place::ConfirmQuit, Action::Quit).unwrap_or_default();
        let text = format!(
            "{}\n{quit} / q quit · any other key stays",
            what_quitting_stops(app)
        );
        frame.render_widget(
            Paragraph::new(text).block(block).wrap(Wrap { trim: false }),
            area,
        );
    }
}

/// What quitting would stop now, in words that match it: the tools running, the turn, the
/// calls waiting for an answer.
pub fn what_quitting_stops(app: &App) -> String {
    let running = app.running_tools();
    let waiting = app.waiting_calls();
    let waits = match waiting {
        0 => String::new(),
        1 => ", and 1 call waits for your answer".to_string(),
        n => format!(", and {n} calls wait for your answer"),
    };
    let turn = if app.turn_running {
        " and stops the turn"
    } else {
        ""
    };
    match (running, app.turn_running) {
        (0, false) => "The turn has ended and nothing runs now.".to_string(),
        (0, true) => format!(
            "The turn is still in progress (no tool is running){waits}. Quitting stops it; the conversation is kept (`airlock --resume`)."
        ),
        (1, _) => format!("1 tool is running{waits}. Quitting kills it{turn}."),
        (n, _) => format!("{n} tools are running{waits}. Quitting kills them{turn}."),
    }
}
