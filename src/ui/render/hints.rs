//! The status bar's key hints: only keys that do something in the state on screen (no `a` where
//! the modal offers no session grant, no `x` without a running run selected), each named as its
//! key table binds it. A hint is kept or dropped whole, the least important first, so the bar is
//! never cut inside a word; the way to the help is always kept.

use super::super::app::{App, Focus, Overlay, RunStatus};
use super::super::keys::{self, Action, Place};
use crate::ui::overlay::approval::{ApprovalChoice, offered};

/// One hint: what it says, how much it matters (lower is kept longer; `KEPT` is never dropped),
/// and whether it stands out (a second `Ctrl-C` quits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hint {
    pub text: String,
    pub rank: u8,
    pub urgent: bool,
}

/// Rank of the hints that are always shown.
pub(super) const KEPT: u8 = 0;

fn hint(rank: u8, key: Option<String>, what: &str) -> Option<Hint> {
    Some(Hint {
        text: format!("{} {what}", key?),
        rank,
        urgent: false,
    })
}

fn key(place: Place, action: Action) -> Option<String> {
    keys::key_for(place, action)
}

/// The hints for the state on screen, in the order they are shown.
pub(super) fn hints(app: &App) -> Vec<Hint> {
    let hints: Vec<Option<Hint>> = match app.overlays.last() {
        Some(Overlay::Approval(a)) => match a.queue.front() {
            Some(_) if a.editing.is_some() => vec![
                hint(1, key(Place::EditCommand, Action::Send), "judge it again"),
                hint(2, key(Place::EditCommand, Action::NewLine), "new line"),
                hint(2, key(Place::EditCommand, Action::Close), "back"),
                hint(KEPT, key(Place::EditCommand, Action::Help), "help"),
            ],
            Some(_) if a.reason.is_some() && a.noting => vec![
                hint(1, key(Place::Reason, Action::Send), "allow with the note"),
                hint(2, key(Place::Reason, Action::Close), "back"),
                hint(KEPT, key(Place::Reason, Action::Help), "help"),
            ],
            Some(_) if a.reason.is_some() => vec![
                hint(1, key(Place::Reason, Action::Send), "deny with the reason"),
                hint(2, key(Place::Reason, Action::Close), "back"),
                hint(KEPT, key(Place::Reason, Action::Help), "help"),
            ],
            Some(request) => {
                let mut shown = Vec::new();
                for (c, choice) in offered() {
                    let (rank, what) = match choice {
                        ApprovalChoice::AllowOnce => (1, "allow once"),
                        ApprovalChoice::Deny => (1, "deny"),
                        ApprovalChoice::AllowSession if request.session_scopes.is_some() => {
                            (2, "for the session")
                        }
                        ApprovalChoice::AllowDirectory
                            if request.session_scopes.is_some()
                                && request.directory_scope.is_some() =>
                        {
                            (4, "for the directory")
                        }
                        ApprovalChoice::DenyWithReason => (3, "deny with a reason"),
                        ApprovalChoice::AllowNoted => (4, "allow + note"),
                        ApprovalChoice::Park if request.code.is_some() => (5, "park"),
                        _ => continue,
                    };
                    shown.push(hint(rank, Some(c.to_string()), what));
                }
                if matches!(
                    request.preview,
                    Some(crate::protocol::Preview::Command { .. })
                ) {
                    shown.push(hint(3, key(Place::Approval, Action::EditProposal), "edit"));
                }
                if a.diff.review.is_some() {
                    shown.push(hint(3, Some("Space".into()), "keep/drop hunk"));
                }
                shown.push(hint(6, key(Place::Approval, Action::Interrupt), "deny all"));
                shown.push(Some(Hint {
                    text: "? help".into(),
                    rank: KEPT,
                    urgent: false,
                }));
                shown
            }
            None => Vec::new(),
        },
        Some(Overlay::Help(_)) => vec![
            hint(1, Some("↑↓ PgUp PgDn".into()), "scroll"),
            hint(KEPT, key(Place::Help, Action::Close), "close"),
        ],
        Some(Overlay::Grants(_)) => vec![
            (app.grants.len() > 1)
                .then(|| "j k".to_string())
                .and_then(|k| hint(2, Some(k), "select")),
            (!app.grants.is_empty())
                .then(|| key(Place::Grants, Action::Revoke))
                .flatten()
                .and_then(|k| hint(1, Some(k), "revoke")),
            hint(KEPT, key(Place::Grants, Action::Close), "close"),
            hint(3, key(Place::Grants, Action::Help), "help"),
        ],
        Some(Overlay::Devices(d)) => vec![
            hint(1, key(Place::Devices, Action::NewPairing), "new code"),
            (!d.devices.is_empty())
                .then(|| key(Place::Devices, Action::Revoke))
                .flatten()
                .and_then(|k| hint(2, Some(k), "revoke")),
            hint(KEPT, key(Place::Devices, Action::Close), "close"),
            hint(3, key(Place::Devices, Action::Help), "help"),
        ],
        Some(Overlay::Agents(_)) => vec![
            (!app.agents.list.is_empty())
                .then(|| "j k".to_string())
                .and_then(|k| hint(2, Some(k), "select")),
            hint(1, key(Place::Agents, Action::ViewAgent), "show"),
            hint(KEPT, key(Place::Agents, Action::Close), "close"),
            hint(3, key(Place::Agents, Action::Help), "help"),
        ],
        Some(Overlay::Inbox(o)) => match o.open {
            Some(_) => vec![
                hint(2, Some("y".into()), "allow once"),
                hint(2, Some("n".into()), "deny"),
                hint(KEPT, key(Place::Inbox, Action::Close), "back"),
            ],
            None => vec![
                (!app.inbox.is_empty())
                    .then(|| key(Place::Inbox, Action::Expand))
                    .flatten()
                    .and_then(|k| hint(1, Some(k), "open")),
                hint(KEPT, key(Place::Inbox, Action::Close), "close"),
                hint(3, key(Place::Inbox, Action::Help), "help"),
            ],
        },
        Some(Overlay::Undo(_)) => vec![
            hint(2, Some("y".into()), "undo"),
            hint(2, Some("l".into()), "later calls too"),
            hint(KEPT, key(Place::Undo, Action::Close), "keep"),
            hint(3, key(Place::Undo, Action::Help), "help"),
        ],
        Some(Overlay::Audit(_)) => vec![
            hint(2, Some("↑↓".into()), "older / newer"),
            hint(KEPT, key(Place::Audit, Action::Close), "close"),
            hint(3, key(Place::Audit, Action::Help), "help"),
        ],
        Some(Overlay::ConfirmQuit(_)) => vec![
            hint(KEPT, key(Place::ConfirmQuit, Action::Quit), "quit"),
            Some(Hint {
                text: "any other key stays".into(),
                rank: 1,
                urgent: false,
            }),
        ],
        None => panes(app),
    };
    hints.into_iter().flatten().collect()
}

/// The hints with no window open: the focused pane's keys and the ones that work anywhere.
fn panes(app: &App) -> Vec<Option<Hint>> {
    let mut shown = Vec::new();
    if app.quit_armed() {
        shown.push(Some(Hint {
            text: format!(
                "{} again to quit",
                key(Place::Anywhere, Action::Interrupt).unwrap_or_default()
            ),
            rank: KEPT,
            urgent: true,
        }));
    }
    let interrupt = key(Place::Anywhere, Action::Interrupt);
    match app.focus {
        Focus::Prompt => {
            let draft = !app.prompt.is_empty();
            shown.extend([
                // What Enter does between turns (a draft is kept, not sent, while one runs).
                (!app.turn_running)
                    .then(|| hint(1, key(Place::Prompt, Action::Send), "send"))
                    .flatten(),
                draft
                    .then(|| hint(5, key(Place::Prompt, Action::NewLine), "new line"))
                    .flatten(),
                hint(3, key(Place::Anywhere, Action::SwitchFocus), "results"),
                hint(4, key(Place::Conversation, Action::PageUp), "scroll"),
            ]);
            if app.turn_running {
                shown.push(hint(2, interrupt, "interrupt"));
            } else if draft {
                shown.push(hint(6, interrupt, "clear"));
            }
            shown.push(hint(2, key(Place::Anywhere, Action::Quit), "quit"));
            shown.push(hint(KEPT, key(Place::Anywhere, Action::Help), "help"));
        }
        Focus::Results => {
            let selected = app.runs.get(app.selected_run);
            shown.extend([
                (app.runs.len() > 1)
                    .then(|| hint(2, Some("j k".into()), "select"))
                    .flatten(),
                selected.and_then(|_| {
                    let what = if app.expanded { "every run" } else { "expand" };
                    hint(1, key(Place::Results, Action::Expand), what)
                }),
                selected
                    .filter(|r| r.status == RunStatus::Running)
                    .and_then(|_| hint(1, key(Place::Results, Action::CancelRun), "cancel")),
                (!app.follow && !app.runs.is_empty())
                    .then(|| hint(4, key(Place::Results, Action::Follow), "follow"))
                    .flatten(),
                hint(3, key(Place::Results, Action::Close), "prompt"),
            ]);
            if app.turn_running {
                shown.push(hint(2, interrupt, "interrupt"));
            }
            shown.push(hint(3, key(Place::Results, Action::Quit), "quit"));
            shown.push(hint(KEPT, key(Place::Results, Action::Help), "help"));
        }
    }
    shown
}

/// The hints that fit in `room` cells: every kept one, then the others from the most important
/// down, each whole, until one does not fit (no less important hint is shown in place of a more
/// important one left out); shown in their own order.
pub(super) fn fit(hints: &[Hint], room: usize) -> Vec<&Hint> {
    let width = |chosen: &[bool]| -> usize {
        hints
            .iter()
            .zip(chosen)
            .filter(|(_, c)| **c)
            .map(|(h, _)| crate::ui::preview::wrap::text_width(&h.text) + 3)
            .sum()
    };
    let mut chosen: Vec<bool> = hints.iter().map(|h| h.rank == KEPT).collect();
    let mut order: Vec<usize> = (0..hints.len())
        .filter(|i| hints[*i].rank != KEPT)
        .collect();
    order.sort_by_key(|i| hints[*i].rank);
    for i in order {
        chosen[i] = true;
        if width(&chosen) > room {
            chosen[i] = false;
            break;
        }
    }
    hints
        .iter()
        .zip(chosen)
        .filter(|(_, c)| *c)
        .map(|(h, _)| h)
        .collect()
}

/// The room the kept hints need (each with its `· ` and a space after it).
pub(super) fn kept_width(hints: &[Hint]) -> usize {
    hints
        .iter()
        .filter(|h| h.rank == KEPT)
        .map(|h| crate::ui::preview::wrap::text_width(&h.text) + 3)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(text: &str, rank: u8) -> Hint {
        Hint {
            text: text.into(),
            rank,
            urgent: false,
        }
    }

    #[test]
    fn hints_are_dropped_whole_least_important_first_and_the_kept_one_stays() {
        let hints = vec![
            h("Enter send", 1),
            h("Tab results", 3),
            h("Ctrl-D quit", 2),
            h("F1 help", KEPT),
        ];
        let texts =
            |room| -> Vec<String> { fit(&hints, room).iter().map(|h| h.text.clone()).collect() };
        assert_eq!(
            texts(100),
            ["Enter send", "Tab results", "Ctrl-D quit", "F1 help"]
        );
        // "Tab results" (rank 3) goes before "Ctrl-D quit" (rank 2), whatever their order.
        assert_eq!(texts(40), ["Enter send", "Ctrl-D quit", "F1 help"]);
        // A less important hint never takes the place of a more important one left out.
        assert_eq!(texts(24), ["Enter send", "F1 help"]);
        assert_eq!(texts(12), ["F1 help"]);
        assert_eq!(texts(0), ["F1 help"]);
    }
}
