//! A reopened session as a driver shows it again: the conversation in order, each settled call
//! with its title and how it ended, and the calls that were running when the process stopped.
//! The agent reads its checkpoint and sends this; the driver never reads the checkpoint itself.

use serde::Serialize;

/// What `AgentEvent::Restored` carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoredSession {
    /// Messages in the conversation so far (the model's and the person's, results included).
    pub messages: usize,
    pub entries: Vec<RestoredEntry>,
    /// A turn was under way and now goes on: its next `TurnStarted` is not a prompt of the
    /// person's, and calls not yet decided are judged again.
    pub turn_goes_on: bool,
}

/// One thing to show again, in conversation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RestoredEntry {
    /// The person's prompt. Text a person typed: shown through `visible`.
    User { text: String },
    /// The model's text (never empty). Model text: shown through `visible`.
    Assistant { text: String },
    /// A call that was settled, with its result as the model got it.
    Settled {
        call_id: String,
        /// As the results pane titles the call; model text.
        title: String,
        result: RestoredCall,
        /// What the model was told (the output, or why it was denied).
        content: String,
    },
    /// A call that had started when the process stopped: its result is unknown and it does not
    /// run again.
    Interrupted { call_id: String, title: String },
}

/// How a settled call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoredCall {
    Ok,
    Failed,
    Denied,
}
