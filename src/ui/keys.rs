//! Every key the cockpit takes, in one table per place. The help overlay and the hint lines are
//! generated from these tables, so they cannot disagree with what the keys do.

use crate::approval::approver::Decision;

/// One key binding as shown to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    pub keys: &'static str,
    pub does: &'static str,
}

/// The approval options: key, label, and the decision it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalChoice {
    AllowOnce,
    AllowSession,
    Deny,
    DenyWithReason,
}

pub struct ApprovalOption {
    pub key: char,
    pub label: &'static str,
    pub choice: ApprovalChoice,
}

pub const APPROVAL_OPTIONS: &[ApprovalOption] = &[
    ApprovalOption {
        key: 'y',
        label: "allow once",
        choice: ApprovalChoice::AllowOnce,
    },
    ApprovalOption {
        key: 'a',
        label: "allow for the session",
        choice: ApprovalChoice::AllowSession,
    },
    ApprovalOption {
        key: 'n',
        label: "deny",
        choice: ApprovalChoice::Deny,
    },
    ApprovalOption {
        key: 'N',
        label: "deny with a reason for the model",
        choice: ApprovalChoice::DenyWithReason,
    },
];

impl ApprovalChoice {
    /// The decision for choices that need nothing more (`N` first asks for the reason).
    pub fn decision(self) -> Option<Decision> {
        match self {
            ApprovalChoice::AllowOnce => Some(Decision::AllowOnce),
            ApprovalChoice::AllowSession => Some(Decision::AllowSession { directory: false }),
            ApprovalChoice::Deny => Some(Decision::Deny { reason: None }),
            ApprovalChoice::DenyWithReason => None,
        }
    }
}

pub const APPROVAL_KEYS: &[Binding] = &[
    Binding {
        keys: "y",
        does: "allow once (after all that asks was on screen)",
    },
    Binding {
        keys: "a",
        does: "allow for the session (the scope is shown)",
    },
    Binding {
        keys: "d",
        does: "with a file: allow its whole directory for the session",
    },
    Binding {
        keys: "n / Esc",
        does: "deny",
    },
    Binding {
        keys: "N",
        does: "deny and type a reason for the model",
    },
    Binding {
        keys: "j k ↑ ↓ PgUp PgDn Home End",
        does: "scroll the preview",
    },
    Binding {
        keys: "Ctrl-C",
        does: "deny this and every queued request, and interrupt the turn",
    },
];

pub const PROMPT_KEYS: &[Binding] = &[
    Binding {
        keys: "Enter",
        does: "send the prompt",
    },
    Binding {
        keys: "Shift-Enter / Alt-Enter",
        does: "new line",
    },
    Binding {
        keys: "Tab",
        does: "focus the results pane",
    },
    Binding {
        keys: "Ctrl-C",
        does: "interrupt the running turn (or clear the prompt)",
    },
    Binding {
        keys: "Ctrl-D",
        does: "quit (asks first while tools run)",
    },
    Binding {
        keys: "Ctrl-G",
        does: "session grants",
    },
    Binding {
        keys: "F1 / ? (empty prompt)",
        does: "this help",
    },
];

pub const RESULTS_KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        does: "select a run",
    },
    Binding {
        keys: "Enter",
        does: "expand the run to full height (again to shrink)",
    },
    Binding {
        keys: "f",
        does: "follow the tail of the output",
    },
    Binding {
        keys: "x",
        does: "cancel the selected run (kills its process group)",
    },
    Binding {
        keys: "g",
        does: "session grants",
    },
    Binding {
        keys: "Tab / Esc",
        does: "back to the prompt",
    },
    Binding {
        keys: "?",
        does: "this help",
    },
    Binding {
        keys: "q",
        does: "quit (asks first while tools run)",
    },
];

pub const GRANTS_KEYS: &[Binding] = &[
    Binding {
        keys: "j k ↑ ↓",
        does: "select a grant",
    },
    Binding {
        keys: "d",
        does: "revoke the selected grant",
    },
    Binding {
        keys: "Esc / q",
        does: "close",
    },
];

/// A one-line hint from a table: "Enter send · Tab results · ...".
pub fn hint(bindings: &[Binding], max: usize) -> String {
    bindings
        .iter()
        .take(max)
        .map(|b| format!("{} {}", b.keys, b.does.split(" (").next().unwrap_or(b.does)))
        .collect::<Vec<_>>()
        .join(" · ")
}
