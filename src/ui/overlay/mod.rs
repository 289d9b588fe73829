//! The windows drawn over the panes, one module each: the approval modal (`approval`), the key
//! list (`help`), the session grants (`grants`), the audit trail (`audit`) and the question
//! before quitting (`confirm_quit`). Each owns its state, its key table (which `ui::keys` hands
//! to the help), what a key does to it (`on_key`) and how it is drawn (`render`, a pure function
//! of the window and `&App`). Changing a window means changing its module.
//!
//! `App` keeps them on a stack and gives the top one every key. What a window wants beyond its
//! own state (ops for the agent, to be closed, a line in the conversation, the help opened over
//! it) comes back as an `Outcome` that `App` applies: no window touches the prompt or another
//! window, so the draft is intact when the stack is empty again.

use std::time::Instant;

use crossterm::event::KeyEvent;

use crate::protocol::{GrantSummary, Op};
use crate::ui::keys::{self, Place};

pub mod agents;
pub mod approval;
pub mod audit;
pub mod confirm_quit;
pub mod devices;
pub mod grants;
pub mod help;
pub mod inbox;
pub mod undo;

pub use agents::AgentsOverlay;
pub use approval::ApprovalOverlay;
pub use audit::AuditOverlay;
pub use confirm_quit::ConfirmQuitOverlay;
pub use devices::DevicesOverlay;
pub use grants::GrantsOverlay;
pub use help::HelpOverlay;
pub use inbox::InboxOverlay;
pub use undo::UndoOverlay;

/// A window on the stack.
#[derive(Debug)]
pub enum Overlay {
    Inbox(InboxOverlay),
    Undo(Box<UndoOverlay>),
    Devices(Box<DevicesOverlay>),
    Agents(AgentsOverlay),
    Approval(Box<ApprovalOverlay>),
    Help(HelpOverlay),
    Grants(GrantsOverlay),
    Audit(AuditOverlay),
    ConfirmQuit(ConfirmQuitOverlay),
}

/// What a window may read of the rest of the cockpit while it takes a key.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub now: Instant,
    /// The whole screen's size (width, height) as last drawn.
    pub screen: (u16, u16),
    /// The session's grants as the agent last sent them.
    pub grants: &'a [GrantSummary],
    /// The session's sub-agents.
    pub agents: &'a crate::ui::app::Agents,
    /// Requests waiting elsewhere on this machine.
    pub inbox: &'a [crate::protocol::InboxEntry],
    /// Wall-clock milliseconds (how long a request has waited).
    pub wall_ms: u64,
}

/// What a key on a window asks of the app, beyond the window's own state.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    /// For the agent, in this order.
    pub ops: Vec<Op>,
    /// The window is done: it leaves the stack.
    pub close: bool,
    pub effects: Vec<Effect>,
}

/// Something only the app can do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The help opens over the window, at the keys of this place.
    OpenHelp(Place),
    /// A line for the conversation.
    Notice(String),
    /// A request was parked: the conversation says so, naming the call by its short id.
    Parked { call_id: String, text: String },
    /// Quit once the agent has shut down.
    Quit,
    /// Open a proposal's text in the person's editor (the loop suspends the screen).
    Edit(crate::ui::app::EditorJob),
    /// Show this agent's conversation (`None`: the session's own).
    ViewAgent(Option<usize>),
    /// Answer a request waiting elsewhere (allow once, or deny) through its one-time code.
    InboxAnswer { id: i64, allow: bool },
    /// Show what undoing this call (and every later one) would do.
    UndoPlan { call_id: String, and_later: bool },
    /// Do the undo that was shown (files changed since too, with `overwrite`).
    UndoApply {
        plan: Box<crate::protocol::UndoPlan>,
        overwrite: bool,
    },
    /// Revoke a device paired with the approval page.
    RevokeDevice { id: i64 },
    /// Show a new pairing code for the approval page.
    NewPairing,
    /// Open the other-devices window (over the approval modal).
    OpenDevices,
}

impl Outcome {
    pub fn ops(ops: Vec<Op>) -> Outcome {
        Outcome {
            ops,
            ..Outcome::default()
        }
    }

    pub fn close() -> Outcome {
        Outcome {
            close: true,
            ..Outcome::default()
        }
    }

    /// The help, opened over the window at its keys (`place`).
    pub fn help(place: Place) -> Outcome {
        Outcome {
            effects: vec![Effect::OpenHelp(place)],
            ..Outcome::default()
        }
    }
}

impl Overlay {
    /// The top window takes a key.
    pub fn on_key(&mut self, key: KeyEvent, cx: &Context) -> Outcome {
        match self {
            Overlay::Approval(o) => o.on_key(key, cx.now),
            Overlay::Help(o) => o.on_key(&key, cx.screen),
            Overlay::Grants(o) => o.on_key(&key, cx.grants),
            Overlay::Agents(o) => o.on_key(&key, cx.agents),
            Overlay::Inbox(o) => o.on_key(&key, cx.inbox, (cx.now, cx.wall_ms), cx.screen),
            Overlay::Undo(o) => o.on_key(&key, cx.now, cx.screen),
            Overlay::Devices(o) => o.on_key(&key),
            Overlay::Audit(o) => o.on_key(&key),
            Overlay::ConfirmQuit(o) => o.on_key(&key),
        }
    }

    /// The mouse wheel over the top window.
    pub fn on_wheel(&mut self, up: bool, cx: &Context) {
        match self {
            Overlay::Approval(a) => a.scroll_rows(keys::wheel_rows(Place::Approval, up)),
            Overlay::Help(o) => o.on_wheel(up, cx.screen),
            Overlay::Grants(_)
            | Overlay::Agents(_)
            | Overlay::Inbox(_)
            | Overlay::Undo(_)
            | Overlay::Devices(_)
            | Overlay::Audit(_)
            | Overlay::ConfirmQuit(_) => {}
        }
    }
}
