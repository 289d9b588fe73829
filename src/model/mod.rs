//! Models: the `ModelClient` trait the turn loop talks to, and the scripted model that plays a
//! scenario file offline. Real providers (OpenAI-compatible, Anthropic) implement the same trait.
//!
//! Imports `protocol` (the tool call), `facts` (the tool catalog), `approval` (the future type)
//! and `mcp` (the servers' tools); must never import `agent`, `tools`, `store`, `sandbox`,
//! `output`, `config`, `ui`, `cli` or `demo`.

pub mod anthropic;
pub mod http;
pub mod openai;
pub mod scripted;
pub mod sse;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::approval::approver::BoxFuture;
use crate::protocol::ToolCall;

/// What became of a tool call, as the model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallResult {
    /// Ran and succeeded.
    Ok,
    /// Ran and failed (non-zero exit, a tool error, cancelled, timed out).
    Failed,
    /// Never ran: the gate denied it.
    Denied,
}

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        text: String,
        calls: Vec<ToolCall>,
    },
    /// The result of one call, in the order the model asked for the calls.
    Tool {
        call_id: String,
        tool: String,
        result: CallResult,
        content: String,
    },
}

/// A complete model answer: its text and the tool calls it asks for (in order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub calls: Vec<ToolCall>,
    /// The calls whose arguments could not be read (not valid JSON), by their place in
    /// `calls` (where their arguments are an empty object), with why. None of this answer's
    /// calls run; the model is told which one and why, and may send them again.
    pub malformed: Vec<(usize, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("{0}")]
    Scenario(String),
    #[error("{provider}: {message}")]
    Provider { provider: String, message: String },
    /// The answer broke off (truncated, disconnected, stalled): worth asking again.
    #[error("{provider}: {message}")]
    Interrupted { provider: String, message: String },
}

pub trait ModelClient: Send + Sync {
    /// A short name for status lines ("scripted: demo").
    fn name(&self) -> String;

    /// The model's own state, for a checkpoint (the scripted model's position). Real models keep
    /// none: the conversation is their state.
    fn save(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Restores what `save` returned.
    fn restore(&self, _state: &serde_json::Value) {}

    /// The model a sub-agent started for `task` talks to: `None` when this one can answer it
    /// too (a real model keeps no state of its own: the conversation is its state); the
    /// scripted model plays the scenario's script for that task. `Err` says why none can.
    fn sub_agent(&self, task: &str) -> Result<Option<std::sync::Arc<dyn ModelClient>>, ModelError> {
        let _ = task;
        Ok(None)
    }

    /// Answers the conversation so far. Text is streamed through `deltas` as it comes; the reply
    /// holds the whole text and only complete tool calls (a partial call never runs).
    fn respond<'a>(
        &'a self,
        conversation: &'a [Message],
        deltas: mpsc::UnboundedSender<String>,
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>>;
}
