//! The cockpit's keys (and mouse wheel): one table per context (`table`), each row saying what a
//! person presses, what each press does (an `Action`) and how the help reads it. A context's
//! dispatcher (`App::on_key` for the panes, each window's `on_key` in `ui::overlay`) looks every
//! press up in its table, and the help, the status bar's key names and the approval modal's
//! options are drawn from the same tables, so a key cannot do what the help does not say. The
//! panes' tables are in `panes`; a window's table is next to the window. Tests press every key in every context both
//! ways: each key that does something is in the table, and each press in the table does something.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::overlay::approval::ApprovalChoice;

/// Where a binding works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// With no window open, whichever pane has focus.
    Anywhere,
    /// Scrolling the conversation: with no window open, from either pane.
    Conversation,
    Prompt,
    Results,
    Approval,
    /// The approval modal while a reason for the model is typed (after `N`).
    Reason,
    /// The approval modal while its command is edited (after `e`).
    EditCommand,
    Help,
    Grants,
    Audit,
    ConfirmQuit,
    /// The agent list (F3).
    Agents,
    /// The inbox (F4).
    Inbox,
    /// What undoing a run would do (`u` in the results pane).
    Undo,
    /// The approval page's pairing code and paired devices (F6).
    Devices,
}

impl Place {
    /// The order the help lists them in.
    pub const ALL: [Place; 15] = [
        Place::Prompt,
        Place::Anywhere,
        Place::Conversation,
        Place::Results,
        Place::Approval,
        Place::Reason,
        Place::EditCommand,
        Place::Help,
        Place::Grants,
        Place::Agents,
        Place::Inbox,
        Place::Undo,
        Place::Devices,
        Place::Audit,
        Place::ConfirmQuit,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Place::Anywhere => "anywhere (no window open)",
            Place::Conversation => "conversation (no window open)",
            Place::Prompt => "prompt",
            Place::Results => "results pane (Tab)",
            Place::Approval => "approval",
            Place::Reason => "approval, typing a reason (N) or a note (Y)",
            Place::EditCommand => "approval, editing the command (after e)",
            Place::Help => "this help",
            Place::Grants => "session grants",
            Place::Audit => "audit trail",
            Place::ConfirmQuit => "quit?",
            Place::Agents => "agents (F3)",
            Place::Inbox => "inbox (F4)",
            Place::Undo => "undo (u on a run)",
            Place::Devices => "other devices (F6)",
        }
    }
}

/// What a person presses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Press {
    /// A key with exactly these modifiers (Shift is not counted for characters, whose case
    /// carries it, nor for Shift-Tab).
    Key(KeyCode, KeyModifiers),
    /// A key with any modifiers at all.
    AnyModifiers(KeyCode),
    /// A character with Ctrl, whatever other modifiers come with it.
    Ctrl(char),
    WheelUp,
    WheelDown,
    /// Any key no other binding of the same place takes.
    Other,
}

/// What a binding does; each place's dispatcher says what it means there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Send,
    NewLine,
    /// The key goes to the prompt's editor.
    Edit,
    /// Deletes from the cursor to the start of its line (readline's `Ctrl-U`).
    DeleteToLineStart,
    Help,
    SwitchFocus,
    Interrupt,
    Quit,
    Grants,
    Audit,
    /// Scroll toward older lines, or select the previous item, by this many rows.
    Up(u8),
    Down(u8),
    PageUp,
    PageDown,
    Top,
    Bottom,
    Expand,
    Follow,
    CancelRun,
    Revoke,
    Close,
    /// Answers the approval modal.
    Answer(ApprovalChoice),
    /// The diff's next and previous hunk (the one the hunk keys act on).
    NextHunk,
    PrevHunk,
    /// Keeps or drops the current hunk.
    ToggleHunk,
    /// Opens the proposal to edit it (a command, inline).
    EditProposal,
    /// Opens the agent list.
    Agents,
    /// Shows the selected agent's conversation.
    ViewAgent,
    /// Shows the next (or previous) agent's conversation.
    NextAgent,
    PrevAgent,
    /// Shows only the runs of the agent on screen (again: every run).
    FilterRuns,
    /// Opens the inbox.
    Inbox,
    /// Shows what undoing the selected run would do.
    Undo,
    /// Opens the approval page's pairing code and paired devices.
    Devices,
    /// A new pairing code for the approval page.
    NewPairing,
}

/// One row of a table: what a person presses (as shown, and each press with its action) and
/// what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    pub keys: &'static str,
    pub presses: &'static [(Press, Action)],
    pub does: &'static str,
}

/// `j k ↑ ↓`: a line (or an item) down and up, in every list and pane that scrolls.
pub(crate) const LINES: &[(Press, Action)] = &[
    (plain('j'), Action::Down(1)),
    (key(KeyCode::Down), Action::Down(1)),
    (plain('k'), Action::Up(1)),
    (key(KeyCode::Up), Action::Up(1)),
];

/// The mouse wheel: three lines a notch.
pub(crate) const WHEEL: &[(Press, Action)] = &[
    (Press::WheelUp, Action::Up(3)),
    (Press::WheelDown, Action::Down(3)),
];

mod panes;

/// The key table of `place`: the one its dispatcher looks keys up in and the help lists.
pub fn table(place: Place) -> &'static [Binding] {
    match place {
        Place::Prompt => panes::PROMPT,
        Place::Anywhere => panes::ANYWHERE,
        Place::Conversation => panes::CONVERSATION,
        Place::Results => panes::RESULTS,
        Place::Approval => crate::ui::overlay::approval::KEYS,
        Place::Reason => crate::ui::overlay::approval::REASON_KEYS,
        Place::EditCommand => crate::ui::overlay::approval::EDIT_KEYS,
        Place::Help => crate::ui::overlay::help::KEYS,
        Place::Grants => crate::ui::overlay::grants::KEYS,
        Place::Audit => crate::ui::overlay::audit::KEYS,
        Place::ConfirmQuit => crate::ui::overlay::confirm_quit::KEYS,
        Place::Agents => crate::ui::overlay::agents::KEYS,
        Place::Inbox => crate::ui::overlay::inbox::KEYS,
        Place::Undo => crate::ui::overlay::undo::KEYS,
        Place::Devices => crate::ui::overlay::devices::KEYS,
    }
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;

pub(crate) const fn plain(c: char) -> Press {
    Press::Key(KeyCode::Char(c), NONE)
}

pub(crate) const fn key(code: KeyCode) -> Press {
    Press::Key(code, NONE)
}

pub(crate) const fn ctrl(c: char) -> Press {
    Press::Key(KeyCode::Char(c), CTRL)
}

pub(crate) const fn shift(code: KeyCode) -> Press {
    Press::Key(code, SHIFT)
}

impl Press {
    fn matches(self, key: &KeyEvent) -> bool {
        match self {
            Press::Key(code, mods) => key.code == code && counted_modifiers(key) == mods,
            Press::AnyModifiers(code) => key.code == code,
            Press::Ctrl(c) => key.code == KeyCode::Char(c) && key.modifiers.contains(CTRL),
            Press::WheelUp | Press::WheelDown | Press::Other => false,
        }
    }

    /// How the press is written in a binding's `keys` (each press must appear there).
    pub fn name(self) -> String {
        let (code, mods) = match self {
            Press::Key(code, mods) => (code, mods),
            Press::AnyModifiers(code) => (code, NONE),
            Press::Ctrl(c) => (KeyCode::Char(c), CTRL),
            Press::WheelUp | Press::WheelDown => return "wheel".into(),
            Press::Other => return "other".into(),
        };
        let base = match code {
            KeyCode::Char(' ') => "Space".into(),
            KeyCode::Char(c) if mods.contains(CTRL) => c.to_ascii_uppercase().to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Delete".into(),
            KeyCode::Insert => "Insert".into(),
            _ => "a key".into(),
        };
        let mut name = String::new();
        for (flag, label) in [(CTRL, "Ctrl-"), (ALT, "Alt-"), (SHIFT, "Shift-")] {
            if mods.contains(flag) {
                name.push_str(label);
            }
        }
        name + &base
    }
}

/// The modifiers a binding is matched against: Shift is part of a character (`N`, `?`) and of
/// Shift-Tab, not a modifier of its own.
fn counted_modifiers(key: &KeyEvent) -> KeyModifiers {
    match key.code {
        KeyCode::Char(_) | KeyCode::BackTab => key.modifiers - SHIFT,
        _ => key.modifiers,
    }
}

/// The bindings of one place, in order.
pub fn bindings(place: Place) -> impl Iterator<Item = &'static Binding> {
    table(place).iter()
}

/// Every binding, place by place in the help's order.
pub fn all() -> impl Iterator<Item = (Place, &'static Binding)> {
    Place::ALL
        .into_iter()
        .flat_map(|place| bindings(place).map(move |b| (place, b)))
}

/// What `key` does in `place`, if anything (an `Other` binding takes every key no other takes).
pub fn action(place: Place, key: &KeyEvent) -> Option<Action> {
    let presses = || bindings(place).flat_map(|b| b.presses.iter());
    presses()
        .find(|(press, _)| press.matches(key))
        .or_else(|| presses().find(|(press, _)| *press == Press::Other))
        .map(|(_, action)| *action)
}

/// What the wheel does in `place`, if anything.
pub fn wheel(place: Place, up: bool) -> Option<Action> {
    let wanted = if up { Press::WheelUp } else { Press::WheelDown };
    bindings(place)
        .flat_map(|b| b.presses.iter())
        .find(|(press, _)| *press == wanted)
        .map(|(_, action)| *action)
}

/// The rows the wheel scrolls in `place`: negative toward older lines, 0 where it does nothing.
pub fn wheel_rows(place: Place, up: bool) -> isize {
    match wheel(place, up) {
        Some(Action::Up(n)) => -isize::from(n),
        Some(Action::Down(n)) => isize::from(n),
        _ => 0,
    }
}

/// How the first press that does `action` in `place` is written ("Enter"), for a hint drawn
/// next to what it acts on.
pub fn key_for(place: Place, action: Action) -> Option<String> {
    bindings(place)
        .flat_map(|b| b.presses.iter())
        .find(|(_, a)| *a == action)
        .map(|(press, _)| press.name())
}

/// Whether the table lists `key` in `place` by name (not through an `Other` binding).
pub fn names(place: Place, key: &KeyEvent) -> bool {
    bindings(place)
        .flat_map(|b| b.presses.iter())
        .any(|(press, _)| press.matches(key))
}

#[cfg(test)]
mod tests;
