//! The agent's checkpoint: where a turn stands, enough to go on in another process. It crosses
//! the protocol sealed (`SavedCheckpoint`): drivers store it and hand it back, only the agent
//! reads it. A driver showing a reopened session gets `RestoredSession`, made here.

use std::collections::HashMap;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

mod tree;

pub use tree::{Asking, ParkedAgent};

use super::title;
use crate::model::{CallResult, Message};
use crate::protocol::{RestoredCall, RestoredEntry, RestoredSession, SavedCheckpoint, ToolCall};

/// Where a parked turn stands: everything needed to go on later, in another process.
///
/// Serialized as its [`CheckpointRef`] is: when `calls` are the calls of the conversation's last
/// message (a turn's batch always is), they are not written a second time
/// (`"calls_in_conversation": true`), and reading it back takes them from that message.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "StoredCheckpoint")]
pub struct Checkpoint {
    /// The conversation up to and including the model message that asked for `calls`.
    pub conversation: Vec<Message>,
    pub calls: Vec<ToolCall>,
    /// Results of the calls before the parked one (denied, or ran to completion).
    pub results: Vec<Option<Message>>,
    /// Index of the parked call in `calls`.
    pub parked: usize,
    /// The model's own state (the scripted model's position).
    pub model: serde_json::Value,
    pub turn: u64,
    /// Calls that were approved and had started, with no result yet. If the process dies, they
    /// are reported as interrupted on resume and never run again.
    #[serde(default)]
    pub started: Vec<usize>,
    /// No turn is running: the conversation is all there is to go on from (a cockpit session
    /// between turns). A resume restores it and waits for the next prompt.
    #[serde(default)]
    pub idle: bool,
    /// Sub-agents started by calls of this batch that parked (a call of theirs waits for a
    /// person): each goes on from its own checkpoint when the run resumes.
    pub agents: Vec<ParkedAgent>,
    /// How many sub-agents the session's tree had numbered (`a1`, `a2`, ...), so one started
    /// after a resume takes the next number.
    pub sub_agents: usize,
}

/// A checkpoint borrowed from the agent, to be written without a copy of the conversation (a
/// 100 MB `write_file` is in it, in the batch's last message). Serializes as the `Checkpoint`
/// with the same fields, and reads back as one.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointRef<'a> {
    pub conversation: &'a [Message],
    pub calls: &'a [ToolCall],
    pub results: &'a [Option<Message>],
    pub parked: usize,
    pub model: &'a serde_json::Value,
    pub turn: u64,
    pub started: &'a [usize],
    pub idle: bool,
    pub agents: &'a [ParkedAgent],
    pub sub_agents: usize,
}

impl CheckpointRef<'_> {
    /// Whether `calls` are the calls of the conversation's last message, so writing them once,
    /// in the conversation, is enough.
    fn calls_in_conversation(&self) -> bool {
        calls_are_last(self.conversation, self.calls)
    }
}

impl CheckpointRef<'_> {
    /// Sealed for the protocol (the JSON made here, in memory).
    pub fn saved(&self) -> SavedCheckpoint {
        // As `Checkpoint::saved`: plain data, which serializes without fail.
        SavedCheckpoint::of(self).unwrap_or_else(|_| SavedCheckpoint::null())
    }
}

impl Serialize for CheckpointRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Checkpoint", 10)?;
        out.serialize_field("conversation", self.conversation)?;
        if self.calls_in_conversation() {
            out.serialize_field("calls_in_conversation", &true)?;
        } else {
            out.serialize_field("calls", self.calls)?;
        }
        out.serialize_field("results", self.results)?;
        out.serialize_field("parked", &self.parked)?;
        out.serialize_field("model", self.model)?;
        out.serialize_field("turn", &self.turn)?;
        out.serialize_field("started", self.started)?;
        out.serialize_field("idle", &self.idle)?;
        // Written only when a tree parked (most checkpoints have no sub-agents).
        if self.agents.is_empty() {
            out.skip_field("agents")?;
        } else {
            out.serialize_field("agents", self.agents)?;
        }
        if self.sub_agents == 0 {
            out.skip_field("sub_agents")?;
        } else {
            out.serialize_field("sub_agents", &self.sub_agents)?;
        }
        out.end()
    }
}

impl Serialize for Checkpoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(serializer)
    }
}

/// A checkpoint as it is written: `calls`, or `calls_in_conversation` when they are the last
/// message's.
#[derive(Deserialize)]
struct StoredCheckpoint {
    conversation: Vec<Message>,
    #[serde(default)]
    calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    calls_in_conversation: bool,
    results: Vec<Option<Message>>,
    parked: usize,
    model: serde_json::Value,
    turn: u64,
    #[serde(default)]
    started: Vec<usize>,
    #[serde(default)]
    idle: bool,
    #[serde(default)]
    agents: Vec<ParkedAgent>,
    #[serde(default)]
    sub_agents: usize,
}

impl TryFrom<StoredCheckpoint> for Checkpoint {
    type Error = String;

    fn try_from(stored: StoredCheckpoint) -> Result<Checkpoint, String> {
        let calls = calls_kept(
            stored.calls,
            stored.calls_in_conversation,
            &stored.conversation,
        )?;
        Ok(Checkpoint {
            conversation: stored.conversation,
            calls,
            results: stored.results,
            parked: stored.parked,
            model: stored.model,
            turn: stored.turn,
            started: stored.started,
            idle: stored.idle,
            agents: stored.agents,
            sub_agents: stored.sub_agents,
        })
    }
}

/// A batch's calls as a checkpoint or a journal kept them: written out (`calls`), or said to be
/// the conversation's last message's (`calls_in_conversation`), taken from there.
fn calls_kept(
    calls: Option<Vec<ToolCall>>,
    in_conversation: bool,
    conversation: &[Message],
) -> Result<Vec<ToolCall>, String> {
    match (calls, in_conversation) {
        (Some(calls), false) => Ok(calls),
        (None, true) => match conversation.last() {
            Some(Message::Assistant { calls, .. }) if !calls.is_empty() => Ok(calls.clone()),
            _ => Err(
                "the checkpoint's calls are said to be in its last message, which asks for none"
                    .into(),
            ),
        },
        (Some(_), true) => {
            Err("the checkpoint has calls of its own and says they are in its last message".into())
        }
        (None, false) => Err("missing field `calls`".into()),
    }
}

/// Whether `calls` are those of the conversation's last message (a turn's batch always is), so
/// writing them once, in the conversation, is enough.
fn calls_are_last(conversation: &[Message], calls: &[ToolCall]) -> bool {
    !calls.is_empty()
        && matches!(
            conversation.last(),
            Some(Message::Assistant { calls: last, .. })
                if std::ptr::eq(last.as_slice(), calls) || last.as_slice() == calls
        )
}

/// Keeps a headless run's checkpoints (`airlock exec`), so that another process can go on with
/// the run: after it parked, or after the process running it stopped. Called on the agent task,
/// before the step a checkpoint describes goes on (a call is on record as started before it
/// starts), with the checkpoint borrowed: nothing is copied to hand it over.
pub trait Checkpoints: Send + Sync {
    /// Keeps where a running turn stands. An error is told to the driver once (the keeper's
    /// owner decides whether the run can go on without it).
    fn keep(&self, checkpoint: &CheckpointRef<'_>) -> Result<(), String>;

    /// Seals a parked turn's checkpoint for `TurnOutcome::Parked`: what the driver will store
    /// and hand back to resume it (the keeper may have written the JSON elsewhere and seal
    /// where it is).
    fn seal(&self, checkpoint: &CheckpointRef<'_>) -> Result<SavedCheckpoint, String>;
}

/// Where a turn stands apart from the conversation, borrowed from the agent for a journal: the
/// conversation grows message by message and is kept as it grows; this is kept whole beside it.
/// Serialized, it reads back as a `KeptStanding`.
#[derive(Debug, Serialize)]
pub struct Standing<'a> {
    pub calls: &'a [ToolCall],
    pub results: &'a [Option<Message>],
    pub parked: usize,
    pub model: serde_json::Value,
    pub turn: u64,
    pub started: &'a [usize],
    pub idle: bool,
}

impl<'a> Standing<'a> {
    /// This standing as a journal keeps it beside `conversation` (the one it stands in): its
    /// calls are not written a second time when they are the conversation's last message's (a
    /// batch's always are; a 100 MB `write_file` is in them), `"calls_in_conversation": true`
    /// says so, and reading it back takes them from that message. Reads back as a
    /// `KeptStanding`.
    pub fn beside(&'a self, conversation: &'a [Message]) -> StandingBeside<'a> {
        StandingBeside {
            standing: self,
            calls_in_conversation: calls_are_last(conversation, self.calls),
        }
    }
}

/// A [`Standing`] as a journal writes it: see [`Standing::beside`].
#[derive(Debug, Clone, Copy)]
pub struct StandingBeside<'a> {
    standing: &'a Standing<'a>,
    calls_in_conversation: bool,
}

impl Serialize for StandingBeside<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let standing = self.standing;
        let mut out = serializer.serialize_struct("Standing", 7)?;
        if self.calls_in_conversation {
            out.serialize_field("calls_in_conversation", &true)?;
        } else {
            out.serialize_field("calls", standing.calls)?;
        }
        out.serialize_field("results", standing.results)?;
        out.serialize_field("parked", &standing.parked)?;
        out.serialize_field("model", &standing.model)?;
        out.serialize_field("turn", &standing.turn)?;
        out.serialize_field("started", standing.started)?;
        out.serialize_field("idle", &standing.idle)?;
        out.end()
    }
}

/// A `Standing` as a journal kept it: with the conversation kept beside it, a checkpoint again.
/// Its calls are written out, or (`calls_in_conversation`) those of the conversation's last
/// message.
#[derive(Debug, Deserialize)]
pub struct KeptStanding {
    #[serde(default)]
    calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    calls_in_conversation: bool,
    results: Vec<Option<Message>>,
    parked: usize,
    model: serde_json::Value,
    turn: u64,
    #[serde(default)]
    started: Vec<usize>,
    #[serde(default)]
    idle: bool,
}

impl Standing<'_> {
    /// A checkpoint of this standing with `conversation` (a copy of both).
    pub fn checkpoint(&self, conversation: &[Message]) -> Checkpoint {
        Checkpoint {
            conversation: conversation.to_vec(),
            calls: self.calls.to_vec(),
            results: self.results.to_vec(),
            parked: self.parked,
            model: self.model.clone(),
            turn: self.turn,
            started: self.started.to_vec(),
            idle: self.idle,
            agents: Vec::new(),
            sub_agents: 0,
        }
    }
}

impl KeptStanding {
    /// The checkpoint this standing and `conversation` (the one kept with it) make; an error
    /// when its calls are said to be in the conversation's last message and are not.
    pub fn with_conversation(self, conversation: Vec<Message>) -> Result<Checkpoint, String> {
        let calls = calls_kept(self.calls, self.calls_in_conversation, &conversation)?;
        Ok(Checkpoint {
            conversation,
            calls,
            results: self.results,
            parked: self.parked,
            model: self.model,
            turn: self.turn,
            started: self.started,
            idle: self.idle,
            agents: Vec::new(),
            sub_agents: 0,
        })
    }
}

/// Keeps where the session stands, durably, as the turn moves: called on the agent task before
/// the step it describes goes on (a call is recorded as started before it starts), so a process
/// killed at any point can be resumed without running anything twice.
pub trait Journal: Send + Sync {
    /// Stores `conversation` and `standing`; an error is told to the driver once and the session
    /// goes on. Between two calls on one journal the conversation only grows: the agent appends
    /// to it, and a resumed agent starts from the conversation this journal kept. So a journal
    /// may write only the messages past those it has (and starts over if it ever got shorter).
    fn save(&self, conversation: &[Message], standing: &Standing<'_>) -> Result<(), String>;
}

impl Checkpoint {
    /// This checkpoint, borrowed.
    pub fn view(&self) -> CheckpointRef<'_> {
        CheckpointRef {
            conversation: &self.conversation,
            calls: &self.calls,
            results: &self.results,
            parked: self.parked,
            model: &self.model,
            turn: self.turn,
            started: &self.started,
            idle: self.idle,
            agents: &self.agents,
            sub_agents: self.sub_agents,
        }
    }

    /// Sealed for the protocol.
    pub fn saved(&self) -> SavedCheckpoint {
        // A checkpoint is plain data (strings, numbers, JSON values, structs, no maps with
        // non-string keys), which serializes without fail. Were it ever to fail, `null` is a
        // checkpoint that refuses to reopen, loudly, rather than one that reopens wrong.
        self.view().saved()
    }

    /// Opens a checkpoint a driver kept; an error says what is wrong with it.
    pub fn from_saved(saved: &SavedCheckpoint) -> Result<Checkpoint, serde_json::Error> {
        serde_json::from_str(saved.json())
    }

    /// What a driver shows of this session when it is reopened: the conversation, each settled
    /// call with its title and result, and (when a turn was under way) the calls of its batch
    /// that had started and will not run again. Calls of the batch never decided get their lines
    /// from the gate's events when the turn goes on.
    pub fn restored_session(&self) -> RestoredSession {
        let mut titles: HashMap<&str, String> = HashMap::new();
        let mut entries = Vec::new();
        for message in &self.conversation {
            match message {
                Message::User { text } => entries.push(RestoredEntry::User { text: text.clone() }),
                Message::Assistant { text, calls } => {
                    if !text.is_empty() {
                        entries.push(RestoredEntry::Assistant { text: text.clone() });
                    }
                    for call in calls {
                        titles.insert(&call.id, title(call));
                    }
                }
                Message::Tool { .. } => entries.extend(settled(message, &titles)),
            }
        }
        if !self.idle {
            for (index, call) in self.calls.iter().enumerate() {
                match self.results.get(index) {
                    Some(Some(message)) => entries.extend(settled(message, &titles)),
                    _ if self.started.contains(&index) => {
                        entries.push(RestoredEntry::Interrupted {
                            call_id: call.id.clone(),
                            title: title(call),
                        })
                    }
                    _ => {}
                }
            }
        }
        RestoredSession {
            messages: self.conversation.len(),
            entries,
            turn_goes_on: !self.idle,
        }
    }
}

/// A call's result message as an entry, titled as its call was.
fn settled(message: &Message, titles: &HashMap<&str, String>) -> Option<RestoredEntry> {
    let Message::Tool {
        call_id,
        result,
        content,
        ..
    } = message
    else {
        return None;
    };
    Some(RestoredEntry::Settled {
        call_id: call_id.clone(),
        title: titles.get(call_id.as_str()).cloned().unwrap_or_default(),
        result: match result {
            CallResult::Ok => RestoredCall::Ok,
            CallResult::Failed => RestoredCall::Failed,
            CallResult::Denied => RestoredCall::Denied,
        },
        content: content.clone(),
    })
}

#[cfg(test)]
mod tests;
