//! What each tool declares about itself: its name, its argument schema and its risk.
//!
//! The catalog is the gate's view of the tool registry. A name the catalog does not know, or a tool
//! that declares no risk, is treated as `Dangerous`: the gate never trusts what it cannot look up.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How much harm a call can do, from `Safe` (reads inside the workspace) to `Dangerous`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Safe,
    Mutating,
    Dangerous,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Mutating => "mutating",
            Risk::Dangerous => "dangerous",
        }
    }
}

/// A tool as the gate knows it. `risk: None` means the tool declared nothing, which counts as
/// `Dangerous`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDescriptor {
    pub name: String,
    pub description: String,
    pub schema: Value,
    pub risk: Option<Risk>,
}

impl ToolDescriptor {
    pub fn declared_risk(&self) -> Risk {
        self.risk.unwrap_or(Risk::Dangerous)
    }
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

    /// The six built-in tools with their schemas and declared risks.
    pub fn builtin() -> Self {
        let mut catalog = Self::empty();
        let path =
            json!({"type": "string", "description": "path, relative to the workspace or absolute"});
        catalog.register(ToolDescriptor {
            name: "read_file".into(),
            description: "Read a text file.".into(),
            schema: object_schema(&[("path", path.clone())], &["path"]),
            risk: Some(Risk::Safe),
        });
        catalog.register(ToolDescriptor {
            name: "list_dir".into(),
            description: "List the entries of a directory.".into(),
            schema: object_schema(&[("path", path.clone())], &["path"]),
            risk: Some(Risk::Safe),
        });
        catalog.register(ToolDescriptor {
            name: "search".into(),
            description: "Search file contents with a regular expression, respecting .gitignore."
                .into(),
            schema: object_schema(
                &[
                    ("pattern", json!({"type": "string"})),
                    ("path", path.clone()),
                ],
                &["pattern"],
            ),
            risk: Some(Risk::Safe),
        });
        catalog.register(ToolDescriptor {
            name: "write_file".into(),
            description: "Create or replace a file with the given content.".into(),
            schema: object_schema(
                &[
                    ("path", path.clone()),
                    ("content", json!({"type": "string"})),
                ],
                &["path", "content"],
            ),
            risk: Some(Risk::Mutating),
        });
        catalog.register(ToolDescriptor {
            name: "edit_file".into(),
            description: "Replace an exact, unique string in a file.".into(),
            schema: object_schema(
                &[
                    ("path", path),
                    ("old", json!({"type": "string"})),
                    ("new", json!({"type": "string"})),
                    ("replace_all", json!({"type": "boolean"})),
                ],
                &["path", "old", "new"],
            ),
            risk: Some(Risk::Mutating),
        });
        catalog.register(ToolDescriptor {
            name: "bash".into(),
            description: "Run a bash command in the workspace, in an OS sandbox. `sandbox` picks \
                          what it may touch: `workspace-write` (the usual: reads all but keys and \
                          credentials, writes only the workspace and temp, no network), \
                          `read-only`, `network` (adds the network) or `off` (no sandbox; always \
                          asks the user). Ask for a wider one only when a run shows the sandbox \
                          refused something the task needs."
                .into(),
            schema: object_schema(
                &[
                    ("command", json!({"type": "string"})),
                    (
                        "timeout_ms",
                        json!({"type": "integer", "minimum": 1, "maximum": 1_800_000}),
                    ),
                    (
                        "sandbox",
                        json!({"type": "string", "enum": crate::sandbox::Profile::ALL.map(crate::sandbox::Profile::as_str)}),
                    ),
                ],
                &["command"],
            ),
            risk: Some(Risk::Dangerous),
        });
        catalog
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

fn object_schema(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unregistered_tool_is_dangerous() {
        assert_eq!(
            ToolCatalog::builtin().risk_of("launch_missiles"),
            Risk::Dangerous
        );
    }

    #[test]
    fn a_tool_that_declares_no_risk_is_dangerous() {
        let mut catalog = ToolCatalog::empty();
        catalog.register(ToolDescriptor {
            name: "mystery".into(),
            description: String::new(),
            schema: json!({}),
            risk: None,
        });
        assert_eq!(catalog.risk_of("mystery"), Risk::Dangerous);
    }

    #[test]
    fn builtin_tools_declare_their_risks() {
        let catalog = ToolCatalog::builtin();
        assert_eq!(catalog.risk_of("read_file"), Risk::Safe);
        assert_eq!(catalog.risk_of("list_dir"), Risk::Safe);
        assert_eq!(catalog.risk_of("search"), Risk::Safe);
        assert_eq!(catalog.risk_of("write_file"), Risk::Mutating);
        assert_eq!(catalog.risk_of("edit_file"), Risk::Mutating);
        assert_eq!(catalog.risk_of("bash"), Risk::Dangerous);
        assert_eq!(catalog.iter().count(), 6);
    }
}
