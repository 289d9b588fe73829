//! Other devices (F6): the approval page's pairing code, as a QR code and a link (one use, a
//! few minutes; `p` makes a new one), and the devices paired with it, each of which `d`
//! revokes. The page itself is served by `remote`; this window reads and changes it through
//! `protocol::RemotePairing` (`App::remote`), which the app calls when a key here asks.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{Effect, Outcome};
use crate::protocol::{PairedDevice, PairingOffer};
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Binding, Place, key, plain};
use crate::ui::render::{centered, dim};
use crate::visible::visible_line;

/// The window's keys.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: keys::LINES,
        does: "select a paired device",
    },
    Binding {
        keys: "d",
        presses: &[(plain('d'), Action::Revoke)],
        does: "revoke the selected device: it answers nothing from now on",
    },
    Binding {
        keys: "p",
        presses: &[(plain('p'), Action::NewPairing)],
        does: "a new pairing code (each pairs one device, once, for a few minutes)",
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

/// The window: the pairing code shown, the devices as last read, which one is selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DevicesOverlay {
    pub selected: usize,
    pub offer: Option<PairingOffer>,
    pub devices: Vec<PairedDevice>,
    /// Why the code or the list could not be had, when it could not.
    pub error: Option<String>,
}

impl DevicesOverlay {
    pub fn on_key(&mut self, key: &KeyEvent) -> Outcome {
        match keys::action(Place::Devices, key) {
            Some(Action::Close) => return Outcome::close(),
            Some(Action::Help) => return Outcome::help(Place::Devices),
            Some(Action::Down(_)) => {
                self.selected = (self.selected + 1).min(self.devices.len().saturating_sub(1))
            }
            Some(Action::Up(_)) => self.selected = self.selected.saturating_sub(1),
            Some(Action::Revoke) => {
                if let Some(d) = self.devices.get(self.selected) {
                    return Outcome {
                        effects: vec![Effect::RevokeDevice { id: d.id }],
                        ..Outcome::default()
                    };
                }
            }
            Some(Action::NewPairing) => {
                return Outcome {
                    effects: vec![Effect::NewPairing],
                    ..Outcome::default()
                };
            }
            _ => {}
        }
        Outcome::default()
    }

    pub fn render(&self, app: &App, frame: &mut Frame) {
        // Every row but the status bar's: a QR code needs height.
        let screen = frame.area();
        let area = centered(
            ratatui::layout::Rect {
                height: screen.height.saturating_sub(1).max(1),
                ..screen
            },
            90,
            100,
        );
        frame.render_widget(Clear, area);
        let revoke = keys::key_for(Place::Devices, Action::Revoke).unwrap_or_default();
        let new = keys::key_for(Place::Devices, Action::NewPairing).unwrap_or_default();
        let close = keys::key_for(Place::Devices, Action::Close).unwrap_or_default();
        let block = Block::default().borders(Borders::ALL).title(format!(
            " other devices ({new} new code, {revoke} revokes, {close} closes) "
        ));
        let inner_height = usize::from(area.height.saturating_sub(2));
        let mut lines: Vec<Line> = Vec::new();
        if let Some(error) = &self.error {
            lines.push(Line::styled(
                visible_line(error),
                Style::default().fg(Color::Red),
            ));
        }
        if let Some(offer) = &self.offer {
            // One line above the code (the link below names the page): a 100-character link's
            // code fits a 100x30 terminal whole.
            lines.push(Line::styled(
                "pair a phone: scan the code or open the link below (one use, a few minutes)",
                dim(),
            ));
            // The code only when it fits whole: a cut QR code reads as nothing.
            // Below it: the link (as it wraps), the fingerprint, a blank line, the list's header,
            // its rows.
            let width = usize::from(area.width.saturating_sub(2)).max(1);
            let below = offer.url.chars().count().div_ceil(width)
                + usize::from(offer.fingerprint.is_some())
                + 2
                + self.devices.len().max(1);
            let room = inner_height.saturating_sub(lines.len() + below);
            let fits = offer.qr.len() <= room
                && offer.qr.first().map_or(0, |r| r.chars().count())
                    <= usize::from(area.width.saturating_sub(2));
            if fits {
                let paper = Style::default().fg(Color::Black).bg(Color::White);
                for row in &offer.qr {
                    lines.push(Line::styled(row.clone(), paper));
                }
            } else {
                lines.push(Line::styled(
                    "(a taller, wider terminal shows the QR code; the link pairs the same way)",
                    dim(),
                ));
            }
            lines.push(Line::from(visible_line(&offer.url)));
            if let Some(fingerprint) = &offer.fingerprint {
                lines.push(Line::styled(
                    format!("certificate SHA-256 {}", visible_line(fingerprint)),
                    dim(),
                ));
            }
        }
        lines.push(Line::from(""));
        lines.push(Line::styled(
            format!("paired devices ({revoke} revokes the selected one):"),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        if self.devices.is_empty() {
            lines.push(Line::styled("none yet", dim()));
        }
        for (i, d) in self.devices.iter().enumerate() {
            let selected = i == self.selected;
            let text = format!(
                "{} #{} {} · paired {} ago · last seen {} ago",
                if selected { "›" } else { " " },
                d.id,
                visible_line(&d.name),
                ago(app.wall_ms, d.created_ms),
                ago(app.wall_ms, d.last_seen_ms),
            );
            let style = if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::styled(text, style));
        }
        frame.render_widget(
            Paragraph::new(lines)
                .block(block)
                .wrap(Wrap { trim: false }),
            area,
        );
    }
}

fn ago(now_ms: u64, then_ms: u64) -> String {
    let s = now_ms.saturating_sub(then_ms) / 1000;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86_400 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}
