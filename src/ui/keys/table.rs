//! The cockpit's key table: each binding with where it works, its presses and their actions, and
//! what the help says it does.

use crossterm::event::KeyCode;

use super::{ALT, Action, Binding, Place, Press, ctrl, key, plain, shift};

/// Every binding of the cockpit. The order within a place is the order of the help and of the
/// hint line.
pub const BINDINGS: &[Binding] = &[
    // The prompt.
    Binding {
        keys: "Enter",
        place: Place::Prompt,
        presses: &[(key(KeyCode::Enter), Action::Send)],
        does: "send the prompt",
    },
    Binding {
        keys: "Shift-Enter / Alt-Enter",
        place: Place::Prompt,
        presses: &[
            (shift(KeyCode::Enter), Action::NewLine),
            (Press::Key(KeyCode::Enter, ALT), Action::NewLine),
        ],
        does: "new line",
    },
    Binding {
        keys: "?",
        place: Place::Prompt,
        presses: &[(plain('?'), Action::Help)],
        does: "this help (when the prompt is empty)",
    },
    Binding {
        keys: "any other key",
        place: Place::Prompt,
        presses: &[(Press::Other, Action::Edit)],
        does: "edits the prompt (← → ↑ ↓ Home End Backspace Ctrl-W Ctrl-U ...)",
    },
    // With no window open.
    Binding {
        keys: "Tab / Shift-Tab",
        place: Place::Anywhere,
        presses: &[
            (key(KeyCode::Tab), Action::SwitchFocus),
            (key(KeyCode::BackTab), Action::SwitchFocus),
        ],
        does: "focus the results pane (again: the prompt)",
    },
    Binding {
        keys: "Ctrl-C",
        place: Place::Anywhere,
        presses: &[(ctrl('c'), Action::Interrupt)],
        does: "interrupt the running turn (or clear the prompt)",
    },
    Binding {
        keys: "Ctrl-D",
        place: Place::Anywhere,
        presses: &[(ctrl('d'), Action::Quit)],
        does: "quit (asks first while tools run)",
    },
    Binding {
        keys: "Ctrl-G",
        place: Place::Anywhere,
        presses: &[(ctrl('g'), Action::Grants)],
        does: "session grants",
    },
    Binding {
        keys: "F1",
        place: Place::Anywhere,
        presses: &[(key(KeyCode::F(1)), Action::Help)],
        does: "this help",
    },
    Binding {
        keys: "F2",
        place: Place::Anywhere,
        presses: &[(key(KeyCode::F(2)), Action::Audit)],
        does: "this session's decisions and who made them",
    },
    // Scrolling the conversation, from either pane.
    Binding {
        keys: "PgUp / PgDn",
        place: Place::Conversation,
        presses: &[
            (key(KeyCode::PageUp), Action::PageUp),
            (key(KeyCode::PageDown), Action::PageDown),
        ],
        does: "scroll the conversation by a page",
    },
    Binding {
        keys: "Shift-↑ / Shift-↓",
        place: Place::Conversation,
        presses: &[
            (shift(KeyCode::Up), Action::Up(1)),
            (shift(KeyCode::Down), Action::Down(1)),
        ],
        does: "scroll the conversation by a line",
    },
    Binding {
        keys: "Shift-Home / Shift-End",
        place: Place::Conversation,
        presses: &[
            (shift(KeyCode::Home), Action::Top),
            (shift(KeyCode::End), Action::Bottom),
        ],
        does: "its first line / back to the latest, following it",
    },
    Binding {
        keys: "mouse wheel",
        place: Place::Conversation,
        presses: &[
            (Press::WheelUp, Action::Up(3)),
            (Press::WheelDown, Action::Down(3)),
        ],
        does: "over the conversation: scroll it",
    },
    // The results pane.
    Binding {
        keys: "j k ↑ ↓",
        place: Place::Results,
        presses: &[
            (plain('j'), Action::Down(1)),
            (key(KeyCode::Down), Action::Down(1)),
            (plain('k'), Action::Up(1)),
            (key(KeyCode::Up), Action::Up(1)),
        ],
        does: "select a run",
    },
    Binding {
        keys: "Enter",
        place: Place::Results,
        presses: &[(key(KeyCode::Enter), Action::Expand)],
        does: "expand the run to full height (again to shrink)",
    },
    Binding {
        keys: "f",
        place: Place::Results,
        presses: &[(plain('f'), Action::Follow)],
        does: "follow the tail of the output",
    },
    Binding {
        keys: "x",
        place: Place::Results,
        presses: &[(plain('x'), Action::CancelRun)],
        does: "cancel the selected run (kills its process group)",
    },
    Binding {
        keys: "g",
        place: Place::Results,
        presses: &[(plain('g'), Action::Grants)],
        does: "session grants",
    },
    Binding {
        keys: "l",
        place: Place::Results,
        presses: &[(plain('l'), Action::Audit)],
        does: "this session's decisions and who made them",
    },
    Binding {
        keys: "Esc",
        place: Place::Results,
        presses: &[(key(KeyCode::Esc), Action::Close)],
        does: "back to the prompt",
    },
    Binding {
        keys: "?",
        place: Place::Results,
        presses: &[(plain('?'), Action::Help)],
        does: "this help",
    },
    Binding {
        keys: "q",
        place: Place::Results,
        presses: &[(plain('q'), Action::Quit)],
        does: "quit (asks first while tools run)",
    },
    Binding {
        keys: "mouse wheel",
        place: Place::Results,
        presses: &[
            (Press::WheelUp, Action::Up(3)),
            (Press::WheelDown, Action::Down(3)),
        ],
        does: "over the results: scroll the selected run's output",
    },
    // The approval modal.
    Binding {
        keys: "y",
        place: Place::Approval,
        presses: &[(plain('y'), Action::Modal)],
        does: "allow once (after all that asks was on screen)",
    },
    Binding {
        keys: "a",
        place: Place::Approval,
        presses: &[(plain('a'), Action::Modal)],
        does: "allow for the session (the scope is shown)",
    },
    Binding {
        keys: "d",
        place: Place::Approval,
        presses: &[(plain('d'), Action::Modal)],
        does: "with a file: allow its whole directory for the session",
    },
    Binding {
        keys: "n / Esc",
        place: Place::Approval,
        presses: &[
            (plain('n'), Action::Modal),
            (key(KeyCode::Esc), Action::Modal),
        ],
        does: "deny",
    },
    Binding {
        keys: "N",
        place: Place::Approval,
        presses: &[(plain('N'), Action::Modal)],
        does: "deny and type a reason for the model",
    },
    Binding {
        keys: "p",
        place: Place::Approval,
        presses: &[(plain('p'), Action::Modal)],
        does: "park: it waits for `airlock approve CODE` from any terminal, even after you quit",
    },
    Binding {
        keys: "j k ↑ ↓ PgUp PgDn Home End",
        place: Place::Approval,
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
        place: Place::Approval,
        presses: &[
            (Press::WheelUp, Action::Up(3)),
            (Press::WheelDown, Action::Down(3)),
        ],
        does: "scroll the preview",
    },
    Binding {
        keys: "Ctrl-C",
        place: Place::Approval,
        presses: &[(ctrl('c'), Action::Modal)],
        does: "deny this and every queued request, and interrupt the turn",
    },
    // This help.
    Binding {
        keys: "j k ↑ ↓",
        place: Place::Help,
        presses: &[
            (plain('j'), Action::Down(1)),
            (key(KeyCode::Down), Action::Down(1)),
            (plain('k'), Action::Up(1)),
            (key(KeyCode::Up), Action::Up(1)),
        ],
        does: "scroll by a line",
    },
    Binding {
        keys: "PgUp / PgDn",
        place: Place::Help,
        presses: &[
            (key(KeyCode::PageUp), Action::PageUp),
            (key(KeyCode::PageDown), Action::PageDown),
        ],
        does: "scroll by a page",
    },
    Binding {
        keys: "Home / End",
        place: Place::Help,
        presses: &[
            (key(KeyCode::Home), Action::Top),
            (key(KeyCode::End), Action::Bottom),
        ],
        does: "first / last line",
    },
    Binding {
        keys: "mouse wheel",
        place: Place::Help,
        presses: &[
            (Press::WheelUp, Action::Up(3)),
            (Press::WheelDown, Action::Down(3)),
        ],
        does: "scroll",
    },
    Binding {
        keys: "Esc / q / ? / F1",
        place: Place::Help,
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
            (plain('?'), Action::Close),
            (key(KeyCode::F(1)), Action::Close),
        ],
        does: "close",
    },
    // Session grants.
    Binding {
        keys: "j k ↑ ↓",
        place: Place::Grants,
        presses: &[
            (plain('j'), Action::Down(1)),
            (key(KeyCode::Down), Action::Down(1)),
            (plain('k'), Action::Up(1)),
            (key(KeyCode::Up), Action::Up(1)),
        ],
        does: "select a grant",
    },
    Binding {
        keys: "d",
        place: Place::Grants,
        presses: &[(plain('d'), Action::Revoke)],
        does: "revoke the selected grant",
    },
    Binding {
        keys: "Esc / q",
        place: Place::Grants,
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
        ],
        does: "close",
    },
    // The audit trail.
    Binding {
        keys: "k ↑ / j ↓",
        place: Place::Audit,
        presses: &[
            (plain('k'), Action::Up(1)),
            (key(KeyCode::Up), Action::Up(1)),
            (plain('j'), Action::Down(1)),
            (key(KeyCode::Down), Action::Down(1)),
        ],
        does: "older / newer decisions",
    },
    Binding {
        keys: "Esc / q / F2",
        place: Place::Audit,
        presses: &[
            (key(KeyCode::Esc), Action::Close),
            (plain('q'), Action::Close),
            (key(KeyCode::F(2)), Action::Close),
        ],
        does: "close",
    },
    // Asking before quitting.
    Binding {
        keys: "y / q / Ctrl-D",
        place: Place::ConfirmQuit,
        presses: &[
            (plain('y'), Action::Quit),
            (plain('q'), Action::Quit),
            (ctrl('d'), Action::Quit),
        ],
        does: "quit (kills the running tools)",
    },
    Binding {
        keys: "any other key",
        place: Place::ConfirmQuit,
        presses: &[(Press::Other, Action::Close)],
        does: "stay",
    },
];
