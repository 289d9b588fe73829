//! The windows' key tables, until each moves next to its window.

use crossterm::event::KeyCode;

use super::{Action, Binding, Press, ctrl, key, plain};

/// The approval modal.
pub const APPROVAL: &[Binding] = &[
    Binding {
        keys: "y",
        presses: &[(plain('y'), Action::Modal)],
        does: "allow once (after all that asks was on screen)",
    },
    Binding {
        keys: "a",
        presses: &[(plain('a'), Action::Modal)],
        does: "allow for the session (the scope is shown)",
    },
    Binding {
        keys: "d",
        presses: &[(plain('d'), Action::Modal)],
        does: "with a file: allow its whole directory for the session",
    },
    Binding {
        keys: "n / Esc",
        presses: &[
            (plain('n'), Action::Modal),
            (key(KeyCode::Esc), Action::Modal),
        ],
        does: "deny",
    },
    Binding {
        keys: "N",
        presses: &[(plain('N'), Action::Modal)],
        does: "deny and type a reason for the model",
    },
    Binding {
        keys: "p",
        presses: &[(plain('p'), Action::Modal)],
        does: "park: it waits for `airlock approve CODE` from any terminal, even after you quit",
    },
    Binding {
        keys: "j k ↑ ↓ PgUp PgDn Home End",
        // Scrolling is always safe, so the modal takes these with any modifier.
        presses: &[
            (Press::AnyModifiers(KeyCode::Char('j')), Action::Modal),
            (Press::AnyModifiers(KeyCode::Char('k')), Action::Modal),
            (Press::AnyModifiers(KeyCode::Down), Action::Modal),
            (Press::AnyModifiers(KeyCode::Up), Action::Modal),
            (Press::AnyModifiers(KeyCode::PageUp), Action::Modal),
            (Press::AnyModifiers(KeyCode::PageDown), Action::Modal),
            (Press::AnyModifiers(KeyCode::Home), Action::Modal),
            (Press::AnyModifiers(KeyCode::End), Action::Modal),
        ],
        does: "scroll the preview",
    },
    Binding {
        keys: "mouse wheel",
        presses: &[
            (Press::WheelUp, Action::Up(3)),
            (Press::WheelDown, Action::Down(3)),
        ],
        does: "scroll the preview",
    },
    Binding {
        keys: "Ctrl-C",
        presses: &[(ctrl('c'), Action::Modal)],
        does: "deny this and every queued request, and interrupt the turn",
    },
];
