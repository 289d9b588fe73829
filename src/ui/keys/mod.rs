//! Every key (and the mouse wheel) the cockpit takes, in one table: where it works, what it does
//! and how it reads. The dispatcher (`App::on_key`, `App::on_mouse`) looks presses up here and the
//! help and hint line are drawn from here, so a key cannot do what the help does not say.
//!
//! The approval modal answers through its own small table (`APPROVAL_OPTIONS`, which also labels
//! the modal's options line) and its own dispatcher, which guards answers (arming, what has been
//! seen); its rows here document it, and a test presses every key on every window to check that
//! each key anything reacts to is listed.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::approval::approver::Decision;

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
    Help,
    Grants,
    Audit,
    ConfirmQuit,
}

impl Place {
    /// The order the help lists them in.
    pub const ALL: [Place; 9] = [
        Place::Prompt,
        Place::Anywhere,
        Place::Conversation,
        Place::Results,
        Place::Approval,
        Place::Help,
        Place::Grants,
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
            Place::Help => "this help",
            Place::Grants => "session grants",
            Place::Audit => "audit trail",
            Place::ConfirmQuit => "quit?",
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
    /// Handled by the approval modal's own dispatcher (answers come from `APPROVAL_OPTIONS`);
    /// `every_key_a_window_reacts_to_is_in_the_table` checks the two agree.
    Modal,
}

/// One row of a table: what a person presses (as shown, and each press with its action) and
/// what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    pub keys: &'static str,
    pub presses: &'static [(Press, Action)],
    pub does: &'static str,
}

mod panes;
mod table;

/// The key table of `place`: the one its dispatcher looks keys up in and the help lists.
pub fn table(place: Place) -> &'static [Binding] {
    match place {
        Place::Prompt => panes::PROMPT,
        Place::Anywhere => panes::ANYWHERE,
        Place::Conversation => panes::CONVERSATION,
        Place::Results => panes::RESULTS,
        Place::Approval => table::APPROVAL,
        Place::Help => crate::ui::overlay::help::KEYS,
        Place::Grants => crate::ui::overlay::grants::KEYS,
        Place::Audit => crate::ui::overlay::audit::KEYS,
        Place::ConfirmQuit => crate::ui::overlay::confirm_quit::KEYS,
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

/// The approval options: key, label, and the decision it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalChoice {
    AllowOnce,
    AllowSession,
    Deny,
    DenyWithReason,
    /// Leave it waiting, answered later by its one-time code (here, elsewhere, or after a quit).
    Park,
}

pub struct ApprovalOption {
    pub key: char,
    pub label: &'static str,
    /// The label on a modal too narrow for `label` beside the other options.
    pub short: &'static str,
    pub choice: ApprovalChoice,
}

pub const APPROVAL_OPTIONS: &[ApprovalOption] = &[
    ApprovalOption {
        key: 'y',
        label: "allow once",
        short: "allow once",
        choice: ApprovalChoice::AllowOnce,
    },
    ApprovalOption {
        key: 'a',
        label: "allow for the session",
        short: "for the session",
        choice: ApprovalChoice::AllowSession,
    },
    ApprovalOption {
        key: 'n',
        label: "deny",
        short: "deny",
        choice: ApprovalChoice::Deny,
    },
    ApprovalOption {
        key: 'N',
        label: "deny with a reason for the model",
        short: "deny with a reason",
        choice: ApprovalChoice::DenyWithReason,
    },
    ApprovalOption {
        key: 'p',
        label: "park: answer later by its code",
        short: "park",
        choice: ApprovalChoice::Park,
    },
];

impl ApprovalChoice {
    /// The decision for choices that need nothing more (`N` first asks for the reason).
    pub fn decision(self) -> Option<Decision> {
        match self {
            ApprovalChoice::AllowOnce => Some(Decision::AllowOnce),
            ApprovalChoice::AllowSession => Some(Decision::AllowSession { directory: false }),
            ApprovalChoice::Deny => Some(Decision::Deny { reason: None }),
            ApprovalChoice::DenyWithReason | ApprovalChoice::Park => None,
        }
    }
}

impl Press {
    fn matches(self, key: &KeyEvent) -> bool {
        match self {
            Press::Key(code, mods) => key.code == code && counted_modifiers(key) == mods,
            Press::AnyModifiers(code) => key.code == code,
            Press::WheelUp | Press::WheelDown | Press::Other => false,
        }
    }

    /// How the press is written in a binding's `keys` (each press must appear there).
    pub fn name(self) -> String {
        let (code, mods) = match self {
            Press::Key(code, mods) => (code, mods),
            Press::AnyModifiers(code) => (code, NONE),
            Press::WheelUp | Press::WheelDown => return "wheel".into(),
            Press::Other => return "other".into(),
        };
        let base = match code {
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
            other => format!("{other:?}"),
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

/// A one-line hint from the first bindings of these places: "Enter send the prompt · ...".
pub fn hint(places: &[Place], max: usize) -> String {
    places
        .iter()
        .flat_map(|p| bindings(*p))
        .filter(|b| b.presses.iter().any(|(press, _)| *press != Press::Other))
        .take(max)
        .map(|b| format!("{} {}", b.keys, b.does.split(" (").next().unwrap_or(b.does)))
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests;
