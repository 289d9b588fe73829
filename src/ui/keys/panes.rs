//! The panes' key tables: the prompt, the keys that work anywhere with no window open, the
//! conversation's scroll keys and the results pane. `App::on_key` looks a key up in them in
//! that order (the first that names it takes it); the help lists them in `Place::ALL`'s order.

use crossterm::event::KeyCode;

use super::{ALT, Action, Binding, Press, ctrl, key, plain, shift};

/// The prompt (focused, no window open).
pub const PROMPT: &[Binding] = &[
    Binding {
        keys: "Enter",
        presses: &[(key(KeyCode::Enter), Action::Send)],
        does: "send the prompt",
    },
    Binding {
        keys: "Shift-Enter / Alt-Enter",
        presses: &[
            (shift(KeyCode::Enter), Action::NewLine),
            (Press::Key(KeyCode::Enter, ALT), Action::NewLine),
        ],
        does: "new line",
    },
    Binding {
        keys: "?",
        presses: &[(plain('?'), Action::Help)],
        does: "this help (when the prompt is empty)",
    },
    Binding {
        keys: "Ctrl-U",
        presses: &[(ctrl('u'), Action::DeleteToLineStart)],
        does: "delete to the start of the line",
    },
    Binding {
        keys: "any other key",
        presses: &[(Press::Other, Action::Edit)],
        does: "edits the prompt (← → ↑ ↓ Home End Backspace, Ctrl-W deletes a word, Ctrl-K to the end of the line ...)",
    },
];

/// With no window open, whichever pane has focus.
pub const ANYWHERE: &[Binding] = &[
    Binding {
        keys: "Tab / Shift-Tab",
        presses: &[
            (key(KeyCode::Tab), Action::SwitchFocus),
            (key(KeyCode::BackTab), Action::SwitchFocus),
        ],
        does: "focus the results pane (again: the prompt)",
    },
    Binding {
        keys: "Ctrl-C",
        presses: &[(ctrl('c'), Action::Interrupt)],
        does: "interrupt the running turn, or clear the prompt; on an empty prompt, twice within 2 s quits (asks first while tools run)",
    },
    Binding {
        keys: "Ctrl-D",
        presses: &[(ctrl('d'), Action::Quit)],
        does: "quit (asks first while tools run)",
    },
    Binding {
        keys: "Ctrl-G",
        presses: &[(ctrl('g'), Action::Grants)],
        does: "session grants",
    },
    Binding {
        keys: "F1",
        presses: &[(key(KeyCode::F(1)), Action::Help)],
        does: "this help",
    },
    Binding {
        keys: "F2",
        presses: &[(key(KeyCode::F(2)), Action::Audit)],
        does: "this session's decisions and who made them",
    },
    Binding {
        keys: "F3",
        presses: &[(key(KeyCode::F(3)), Action::Agents)],
        does: "the agents: the session's own and its sub-agents, with their state",
    },
    Binding {
        keys: "F4",
        presses: &[(key(KeyCode::F(4)), Action::Inbox)],
        does: "the inbox: requests waiting in other sessions and parked runs on this machine",
    },
    Binding {
        keys: "F6",
        presses: &[(key(KeyCode::F(6)), Action::Devices)],
        does: "other devices: pair a phone with the approval page (--remote), revoke one",
    },
    Binding {
        keys: "Alt-→ / Alt-←",
        presses: &[
            (Press::Key(KeyCode::Right, ALT), Action::NextAgent),
            (Press::Key(KeyCode::Left, ALT), Action::PrevAgent),
        ],
        does: "show the next / previous agent's conversation",
    },
];

/// Scrolling the conversation, from either pane (no window open).
pub const CONVERSATION: &[Binding] = &[
    Binding {
        keys: "PgUp / PgDn",
        presses: &[
            (key(KeyCode::PageUp), Action::PageUp),
            (key(KeyCode::PageDown), Action::PageDown),
        ],
        does: "scroll the conversation by a page",
    },
    Binding {
        keys: "Shift-↑ / Shift-↓",
        presses: &[
            (shift(KeyCode::Up), Action::Up(1)),
            (shift(KeyCode::Down), Action::Down(1)),
        ],
        does: "scroll the conversation by a line",
    },
    Binding {
        keys: "Shift-Home / Shift-End",
        presses: &[
            (shift(KeyCode::Home), Action::Top),
            (shift(KeyCode::End), Action::Bottom),
        ],
        does: "its first line / back to the latest, following it",
    },
    Binding {
        keys: "mouse wheel",
        presses: super::WHEEL,
        does: "over the conversation: scroll it",
    },
];

/// The results pane (focused with Tab).
pub const RESULTS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        presses: super::LINES,
        does: "select a run",
    },
    Binding {
        keys: "Enter",
        presses: &[(key(KeyCode::Enter), Action::Expand)],
        does: "expand the run to full height (again to shrink)",
    },
    Binding {
        keys: "f",
        presses: &[(plain('f'), Action::Follow)],
        does: "follow the tail of the output",
    },
    Binding {
        keys: "x",
        presses: &[(plain('x'), Action::CancelRun)],
        does: "cancel the selected run (kills its process group)",
    },
    Binding {
        keys: "u",
        presses: &[(plain('u'), Action::Undo)],
        does: "undo what the selected run changed in the workspace (shown first)",
    },
    Binding {
        keys: "a",
        presses: &[(plain('a'), Action::FilterRuns)],
        does: "only the runs of the agent on screen (again: every run)",
    },
    Binding {
        keys: "g",
        presses: &[(plain('g'), Action::Grants)],
        does: "session grants",
    },
    Binding {
        keys: "l",
        presses: &[(plain('l'), Action::Audit)],
        does: "this session's decisions and who made them",
    },
    Binding {
        keys: "Esc",
        presses: &[(key(KeyCode::Esc), Action::Close)],
        does: "back to the prompt",
    },
    Binding {
        keys: "?",
        presses: &[(plain('?'), Action::Help)],
        does: "this help",
    },
    Binding {
        keys: "q",
        presses: &[(plain('q'), Action::Quit)],
        does: "quit (asks first while tools run)",
    },
    Binding {
        keys: "mouse wheel",
        presses: super::WHEEL,
        does: "over the results: scroll the selected run's output",
    },
];
