//! What a session grant covers (`GrantScope`) and what of a call must be covered (`Subject`).
//! The approval modal shows the scopes it offers, so the types cross to the driver; how a scope
//! covers a subject, and how it is described, is the gate's and stays in `approval::grants`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What a grant allows, independent of who it was given to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GrantScope {
    /// bash: a simple command whose argv starts with these words, e.g. ["cargo","test"]
    Command { prefix: Vec<String> },
    /// file tools (and bash redirect targets): exactly this resolved path
    Path { path: PathBuf },
    /// any path equal to or below this directory (component-wise, never string prefix)
    Directory { path: PathBuf },
    /// an MCP tool called with exactly these arguments (`arguments`: the frozen call's digest,
    /// over the tool's name and its canonical arguments) while its definition is the one the
    /// human saw (`definition`: the pinned definition's digest). An MCP server's arguments
    /// have no meaning airlock can read (a `path` may be a command, a `query` may delete), so
    /// nothing looser than the same call again is safe to allow without asking.
    McpCall {
        tool: String,
        arguments: String,
        definition: String,
    },
}

/// A part of a call that asked for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The argv of one simple command.
    Command(Vec<String>),
    /// One resolved path the call reads or writes.
    Path(PathBuf),
    /// An MCP call: its tool, the digest of its frozen arguments, its definition's digest.
    McpCall {
        tool: String,
        arguments: String,
        definition: String,
    },
}
