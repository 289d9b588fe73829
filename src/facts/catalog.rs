//! What each tool declares about itself: its name, its argument schema and its risk.
//!
//! The catalog is the gate's view of the tool registry. A name the catalog does not know, or a tool
//! that declares no risk, is treated as `Dangerous`: the gate never trusts what it cannot look up.
//! The tools declare themselves (`tools::Tool`); the built-in catalog is made from their
//! registry (`ToolCatalog::builtin`, in `tools::registry`), so this module names no tool.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::protocol::Risk;

/// A tool as the gate knows it. `risk: None` means the tool declared nothing, which counts as
/// `Dangerous`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDescriptor {
    pub name: String,
    pub description: String,
    pub schema: Value,
    pub risk: Option<Risk>,
    /// The arguments that name a path (none for a tool that takes no path).
    #[serde(skip)]
    pub paths: Vec<PathArg>,
    /// The argument that holds a shell command the tool runs (in the OS sandbox), if it runs
    /// one: the policy parses it and judges every part.
    #[serde(skip)]
    pub command: Option<&'static str>,
}

impl ToolDescriptor {
    pub fn declared_risk(&self) -> Risk {
        self.risk.unwrap_or(Risk::Dangerous)
    }

    /// Whether the tool writes a path it is given (so what is there before matters).
    pub fn writes_a_path(&self) -> bool {
        self.paths.iter().any(|p| p.access.writes())
    }

    /// Whether a session grant may cover the directory around its path: the tool names one
    /// file, so the directory holding it is the natural wider scope.
    pub fn takes_directory_scope(&self) -> bool {
        self.paths.iter().any(|p| p.names == PathTarget::OneFile)
    }
}

/// An argument that names a path, as its tool declares it: everything the policy needs to judge
/// the call, so no part of the gate names a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathArg {
    pub key: &'static str,
    pub names: PathTarget,
    /// What the tool does to what the path names. There is no default: a new tool that takes a
    /// path says whether it reads, replaces or edits, or it does not compile.
    pub access: PathAccess,
    /// The path taken when the argument is left out (`.` for a tool that lists or searches the
    /// workspace); `None` when it is required.
    pub default: Option<&'static str>,
}

/// What a tool does to the path it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    /// Reads it, as `verb` says in words a person reads ("read", "list", "search").
    Read { verb: &'static str },
    /// Replaces the whole file with the string argument `content` (creating it if need be).
    Replace { content: &'static str },
    /// Changes part of the file: the string argument `old` becomes `new`.
    Edit {
        old: &'static str,
        new: &'static str,
    },
}

impl PathAccess {
    /// Whether the tool creates, replaces or changes what the path names.
    pub fn writes(&self) -> bool {
        !matches!(self, PathAccess::Read { .. })
    }

    /// The verb a reason uses for it.
    pub fn verb(&self) -> &'static str {
        match self {
            PathAccess::Read { verb } => verb,
            PathAccess::Replace { .. } => "write",
            PathAccess::Edit { .. } => "edit",
        }
    }
}

/// What a path argument names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathTarget {
    /// One file.
    OneFile,
    /// A directory, or a file, taken whole (listed, searched).
    Tree,
}

/// Every tool the gate may be asked about, by name.
#[derive(Debug, Clone, Default)]
pub struct ToolCatalog {
    tools: BTreeMap<String, ToolDescriptor>,
}

impl ToolCatalog {
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn register(&mut self, tool: ToolDescriptor) {
        self.tools.insert(tool.name.clone(), tool);
    }

    pub fn get(&self, name: &str) -> Option<&ToolDescriptor> {
        self.tools.get(name)
    }

    /// The declared risk, or `Dangerous` for a name nobody registered.
    pub fn risk_of(&self, name: &str) -> Risk {
        self.get(name)
            .map(ToolDescriptor::declared_risk)
            .unwrap_or(Risk::Dangerous)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ToolDescriptor> {
        self.tools.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unregistered_tool_is_dangerous() {
        assert_eq!(
            ToolCatalog::empty().risk_of("launch_missiles"),
            Risk::Dangerous
        );
    }

    #[test]
    fn a_tool_that_declares_no_risk_is_dangerous() {
        let mut catalog = ToolCatalog::empty();
        catalog.register(ToolDescriptor {
            name: "mystery".into(),
            description: String::new(),
            schema: serde_json::json!({}),
            risk: None,
            paths: Vec::new(),
            command: None,
        });
        assert_eq!(catalog.risk_of("mystery"), Risk::Dangerous);
    }
}
