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
}

impl ToolDescriptor {
    pub fn declared_risk(&self) -> Risk {
        self.risk.unwrap_or(Risk::Dangerous)
    }

    /// Whether the tool writes a path it is given (so what is there before matters).
    pub fn writes_a_path(&self) -> bool {
        self.paths.iter().any(|p| p.writes)
    }

    /// Whether a session grant may cover the directory around its path: the tool names one
    /// file, so the directory holding it is the natural wider scope.
    pub fn takes_directory_scope(&self) -> bool {
        self.paths.iter().any(|p| p.names == PathTarget::OneFile)
    }
}

/// An argument that names a path, as its tool declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathArg {
    pub key: &'static str,
    pub names: PathTarget,
    /// Whether the tool creates, replaces or changes what the path names.
    pub writes: bool,
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
        });
        assert_eq!(catalog.risk_of("mystery"), Risk::Dangerous);
    }
}
