//! The approval modal's key tables: the options, the reason (or note) box after `N` or `Y`,
//! and the command editor after `e`, which the dispatcher (`input`) looks every key up in, the
//! help lists and the footer draws its options from (`offered`); and the text boxes they type
//! into.

use crossterm::event::{KeyCode, KeyModifiers};
use tui_textarea::TextArea;

use crate::ui::keys::{self, Action, Binding, Place, Press, ctrl, key, plain};

/// What an answering key chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalChoice {
    AllowOnce,
    /// For the session, within the scope the footer names.
    AllowSession,
    /// For the session, the whole directory of the file (offered for file changes only).
    AllowDirectory,
    Deny,
    /// Deny, after typing a reason for the model.
    DenyWithReason,
    /// Allow once, after typing a word for the model (it reaches the model with the result).
    AllowNoted,
    /// Leave it waiting, answered later by its one-time code (here, elsewhere, or after a quit).
    Park,
}

/// The modal's keys while it shows the options.
pub const KEYS: &[Binding] = &[
    Binding {
        keys: "y",
        presses: &[(plain('y'), Action::Answer(ApprovalChoice::AllowOnce))],
        does: "allow once (after all that asks was on screen)",
    },
    Binding {
        keys: "Y",
        presses: &[(plain('Y'), Action::Answer(ApprovalChoice::AllowNoted))],
        does: "allow once and type a note for the model (it gets it with the result)",
    },
    Binding {
        keys: "a",
        presses: &[(plain('a'), Action::Answer(ApprovalChoice::AllowSession))],
        does: "allow for the session (the scope is shown)",
    },
    Binding {
        keys: "d",
        presses: &[(plain('d'), Action::Answer(ApprovalChoice::AllowDirectory))],
        does: "with a file: allow this tool on any file under the file's directory, for the session (the directory is shown)",
    },
    Binding {
        keys: "n / Esc",
        presses: &[
            (plain('n'), Action::Answer(ApprovalChoice::Deny)),
            (key(KeyCode::Esc), Action::Answer(ApprovalChoice::Deny)),
        ],
        does: "deny",
    },
    Binding {
        keys: "N",
        presses: &[(plain('N'), Action::Answer(ApprovalChoice::DenyWithReason))],
        does: "deny and type a reason for the model",
    },
    Binding {
        keys: "p",
        presses: &[(plain('p'), Action::Answer(ApprovalChoice::Park))],
        does: "park: it waits for `airlock approve CODE` from any terminal, even after you quit",
    },
    Binding {
        keys: "] [",
        presses: &[
            (plain(']'), Action::NextHunk),
            (plain('['), Action::PrevHunk),
        ],
        does: "with a diff: go to the next or the previous hunk",
    },
    Binding {
        keys: "Space",
        presses: &[(key(KeyCode::Char(' ')), Action::ToggleHunk)],
        does: "with a diff: keep or drop the current hunk (an answer writes only the kept ones)",
    },
    Binding {
        keys: "e",
        presses: &[(plain('e'), Action::EditProposal)],
        does: "edit before answering, judged again: a command inline, a file change in $VISUAL or $EDITOR",
    },
    Binding {
        keys: "j k ↑ ↓ PgUp PgDn Home End",
        // Scrolling is always safe, so the modal takes these with any modifier.
        presses: &[
            (Press::AnyModifiers(KeyCode::Char('j')), Action::Down(1)),
            (Press::AnyModifiers(KeyCode::Char('k')), Action::Up(1)),
            (Press::AnyModifiers(KeyCode::Down), Action::Down(1)),
            (Press::AnyModifiers(KeyCode::Up), Action::Up(1)),
            (Press::AnyModifiers(KeyCode::PageUp), Action::PageUp),
            (Press::AnyModifiers(KeyCode::PageDown), Action::PageDown),
            (Press::AnyModifiers(KeyCode::Home), Action::Top),
            (Press::AnyModifiers(KeyCode::End), Action::Bottom),
        ],
        does: "scroll the preview",
    },
    Binding {
        keys: "mouse wheel",
        presses: keys::WHEEL,
        does: "scroll the preview",
    },
    Binding {
        keys: "Ctrl-C",
        presses: &[(Press::Ctrl('c'), Action::Interrupt)],
        does: "deny this and every queued request, and interrupt the turn",
    },
    Binding {
        keys: "F1 / ?",
        presses: &[
            (key(KeyCode::F(1)), Action::Help),
            (plain('?'), Action::Help),
        ],
        does: "the help, over the modal (Esc there closes only the help)",
    },
    Binding {
        keys: "F6",
        presses: &[(key(KeyCode::F(6)), Action::Devices)],
        does: "other devices, over the modal: pair a phone to answer this from it",
    },
];

/// What the modal's text boxes (a reason, a note, the command editor) share.
const BOX_INTERRUPT: Binding = Binding {
    keys: "Ctrl-C",
    presses: &[(Press::Ctrl('c'), Action::Interrupt)],
    does: "deny this and every queued request, and interrupt the turn",
};
const BOX_HELP: Binding = Binding {
    keys: "F1",
    presses: &[(key(KeyCode::F(1)), Action::Help)],
    does: "the help, over the modal",
};
const BOX_DELETE_TO_LINE_START: Binding = Binding {
    keys: "Ctrl-U",
    presses: &[(ctrl('u'), Action::DeleteToLineStart)],
    does: "delete to the start of the line",
};

/// The modal's keys while a reason for the model is typed (after `N`).
pub const REASON_KEYS: &[Binding] = &[
    Binding {
        keys: "Enter",
        presses: &[(Press::AnyModifiers(KeyCode::Enter), Action::Send)],
        does: "answer (deny after N, allow after Y), with the text for the model",
    },
    Binding {
        keys: "Esc",
        presses: &[(Press::AnyModifiers(KeyCode::Esc), Action::Close)],
        does: "back to the options (the reason is dropped)",
    },
    BOX_INTERRUPT,
    BOX_HELP,
    BOX_DELETE_TO_LINE_START,
    Binding {
        keys: "any other key",
        presses: &[(Press::Other, Action::Edit)],
        does: "edits the reason",
    },
];

/// The command editor's keys (after `e`).
pub const EDIT_KEYS: &[Binding] = &[
    Binding {
        keys: "Enter",
        presses: &[(key(KeyCode::Enter), Action::Send)],
        does: "judge the edited command again and show it (it arms again before an answer)",
    },
    Binding {
        keys: "Alt-Enter",
        presses: &[(
            Press::Key(KeyCode::Enter, KeyModifiers::ALT),
            Action::NewLine,
        )],
        does: "a new line in the command",
    },
    Binding {
        keys: "Esc",
        presses: &[(Press::AnyModifiers(KeyCode::Esc), Action::Close)],
        does: "back to the options (the edit is dropped)",
    },
    BOX_INTERRUPT,
    BOX_HELP,
    BOX_DELETE_TO_LINE_START,
    Binding {
        keys: "any other key",
        presses: &[(Press::Other, Action::Edit)],
        does: "edits the command",
    },
];

/// The order the footer offers the answers in: the everyday ones first, the whole-directory
/// grant (offered for a file change only) last. Each answer of `KEYS` is here once.
pub const FOOT_ORDER: [ApprovalChoice; 7] = [
    ApprovalChoice::AllowOnce,
    ApprovalChoice::AllowSession,
    ApprovalChoice::Deny,
    ApprovalChoice::DenyWithReason,
    ApprovalChoice::AllowNoted,
    ApprovalChoice::Park,
    ApprovalChoice::AllowDirectory,
];

impl ApprovalChoice {
    /// The footer's label, and its shorter form for a narrow modal. The session grants name
    /// their scope instead (`foot`); their short form leads it.
    pub fn labels(self) -> (&'static str, &'static str) {
        match self {
            ApprovalChoice::AllowOnce => ("allow once", "allow once"),
            ApprovalChoice::AllowNoted => ("allow with a note for the model", "allow + note"),
            ApprovalChoice::AllowSession | ApprovalChoice::AllowDirectory => {
                ("allow for the session", "for the session")
            }
            ApprovalChoice::Deny => ("deny", "deny"),
            ApprovalChoice::DenyWithReason => {
                ("deny with a reason for the model", "deny with a reason")
            }
            ApprovalChoice::Park => ("park: answer later by its code", "park"),
        }
    }
}

/// The answers the footer offers, in its order, each with the key `KEYS` binds it to (the
/// first plain character that makes it).
pub fn offered() -> impl Iterator<Item = (char, ApprovalChoice)> {
    FOOT_ORDER.into_iter().filter_map(|choice| {
        KEYS.iter()
            .flat_map(|b| b.presses.iter())
            .find_map(|(press, action)| match (press, action) {
                (Press::Key(KeyCode::Char(c), m), Action::Answer(a))
                    if *a == choice && m.is_empty() =>
                {
                    Some((*c, choice))
                }
                _ => None,
            })
    })
}

/// The reason box's placeholder, its keys from `REASON_KEYS`.
pub(super) fn reason_box() -> TextArea<'static> {
    text_box("why not?")
}

/// The note box (after `Y`): the same keys as the reason box.
pub(super) fn note_box() -> TextArea<'static> {
    text_box("a word for the model with the result?")
}

fn text_box(asking: &str) -> TextArea<'static> {
    let send = keys::key_for(Place::Reason, Action::Send).unwrap_or_default();
    let back = keys::key_for(Place::Reason, Action::Close).unwrap_or_default();
    let mut text = TextArea::default();
    text.set_placeholder_text(format!("{asking} ({send} sends, {back} goes back)"));
    text
}

/// The command editor, holding `command`, the cursor at its end.
pub(super) fn command_box(command: &str) -> TextArea<'static> {
    let mut edit = TextArea::new(command.lines().map(str::to_string).collect());
    edit.move_cursor(tui_textarea::CursorMove::Bottom);
    edit.move_cursor(tui_textarea::CursorMove::End);
    edit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_offers_every_answer_of_the_table_once_each_by_its_plain_key() {
        let offered: Vec<(char, ApprovalChoice)> = offered().collect();
        assert_eq!(offered.len(), FOOT_ORDER.len(), "{offered:?}");
        let answers: Vec<ApprovalChoice> = KEYS
            .iter()
            .flat_map(|b| b.presses.iter())
            .filter_map(|(_, action)| match action {
                Action::Answer(choice) => Some(*choice),
                _ => None,
            })
            .collect();
        for choice in &answers {
            assert!(FOOT_ORDER.contains(choice), "{choice:?} is not offered");
        }
        for choice in FOOT_ORDER {
            assert!(answers.contains(&choice), "{choice:?} has no key");
        }
        let keys: String = offered.iter().map(|(c, _)| *c).collect();
        assert_eq!(keys, "yanNYpd");
    }

    #[test]
    fn the_reason_box_says_the_keys_its_table_binds() {
        let reason = reason_box();
        assert_eq!(
            reason.placeholder_text(),
            "why not? (Enter sends, Esc goes back)"
        );
    }
}
