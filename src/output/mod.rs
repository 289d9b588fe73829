//! A call's output, from the moment a tool writes it to the moment it is shown: live output thinned
//! on its way out (`sink`, [`OutputSink`]), the bounded head-and-tail buffer both the bash tool
//! (for the model's result) and the cockpit (for the results pane) keep (`bounded`), and what a
//! finished tool gives back ([`ToolOutcome`], [`ToolError`]). One implementation for both sides,
//! so they agree on which lines can never be shown.
//!
//! Imports only `protocol` (the `Stream` and `ToolStatus` a driver sees), so the tools, the MCP
//! client, the agent and the cockpit can all use it without importing each other.

pub mod bounded;
mod sink;

use std::path::PathBuf;

use serde::Serialize;

use crate::protocol::ToolStatus;

pub use bounded::{
    BoundedOutput, MAX_LINE_BYTES, OUTPUT_HEAD_LINES, OUTPUT_TAIL_LINES, Thinned, Thinner,
    unseen_lines,
};
pub use sink::{OutputSink, PACE};

/// What a finished tool gives back: the observation for the model, and facts for the UI.
#[derive(Debug, Clone, Serialize)]
pub struct ToolOutcome {
    pub status: ToolStatus,
    pub exit_code: Option<i32>,
    pub content: String,
    pub lines: u64,
    /// The full output, when it was written to a file.
    pub log: Option<PathBuf>,
}

impl ToolOutcome {
    pub fn text(content: String) -> Self {
        ToolOutcome {
            status: ToolStatus::Ok,
            exit_code: None,
            lines: content.lines().count() as u64,
            content,
            log: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    InvalidArguments(String),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Failed(String),
    #[error("refused to run: {0}")]
    Tampered(String),
    #[error("`{0}` is not a tool airlock can run")]
    Unknown(String),
}
