//! The file tools: read, list, search, write, edit.
//!
//! Each works on the physical path the gate judged for its call (`Approved::judged_path`), never
//! on its argument resolved again: by the time a call runs (a human took a minute, a parked run
//! resumed the next day) a directory on the way may have become a symlink. `held` walks the
//! judged path without following links, so what was judged is what is touched, or nothing is.
//! The argument as the model wrote it is kept for messages.
//!
//! Each tool lives in its own file with its `Tool` declaration (schema, risk, path argument,
//! title, preview); this module holds what they share.

pub mod amend;
pub mod edit_file;
mod held;
pub mod list_dir;
pub mod read_file;
pub mod search;
pub mod write_file;

use std::path::Path;

use serde_json::Value;

use super::ToolError;
use held::{Judged, Verb};

pub use edit_file::{MAX_EDIT_BYTES, apply_edit, current_text, edit_file};
pub use list_dir::list_dir;
pub use read_file::{MAX_READ_BYTES, read_file};
pub use search::{MAX_MATCHES, search};
pub use write_file::write_file;

pub fn string<'a>(args: &'a Value, key: &str, tool: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArguments(format!("`{tool}` needs a string `{key}`")))
}

/// Where a file tool works: the physical path the gate judged for this call, and the workspace
/// (paths inside it are shown relative to it).
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub workspace: &'a Path,
    pub judged: &'a Path,
}

impl<'a> Place<'a> {
    fn judged(self, raw: &'a str, verb: Verb) -> Judged<'a> {
        Judged {
            path: self.judged,
            raw,
            workspace: self.workspace,
            verb,
        }
    }
}

#[cfg(test)]
mod tests;
