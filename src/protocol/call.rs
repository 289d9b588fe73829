//! A tool call as it crosses: the call the model asked for, its id, the streams its output comes
//! on, and how it ended.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Identifies one tool call across events and ops (`c1`, `c2`, ... in a session).
pub type CallId = String;

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub tool: String,
    pub args: Value,
}

/// Which stream a piece of a running call's output came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Failed,
    Cancelled,
    TimedOut,
}
