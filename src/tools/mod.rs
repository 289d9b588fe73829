//! The tools an agent can call, and the registry that runs them. The registry executes only
//! `Approved` calls (a value only the gate makes) and takes their arguments from the frozen,
//! digest-checked text, so what runs is exactly what was shown. A file tool runs on the path the
//! gate judged (carried by `Approved`), not on its argument resolved again. A `bash` call runs in
//! the OS sandbox under the profile frozen into its arguments (`crate::sandbox`); one that runs
//! without it (profile `off`, or a kernel without Landlock) runs only if a person approved it.
//!
//! Each tool declares itself through [`Tool`], next to its code; `registry` lists the built-ins,
//! and the registry here runs a call by looking its tool up there (or at the MCP hub).
//!
//! Imports `approval` (the `Approved` token), `facts` (the catalog, diffs), `output`, `protocol`,
//! `sandbox` and `mcp`; must never import `agent`, `model`, `store`, `config`, `ui`, `cli` or
//! `demo`.

pub mod agent;
pub mod bash;
pub mod files;
mod mcp;
pub mod registry;
pub mod runlog;
pub mod tool;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::approver::{AmendRequest, Amended, Previewer};
use crate::approval::gate::Approved;
use crate::facts::catalog::ToolCatalog;
use tool::{PreviewAt, ToolRun};

use crate::output::{OutputSink, ToolError, ToolOutcome};
use crate::protocol::ToolStatus;
pub use tool::Tool;

use crate::protocol::Preview;

/// Runs tools in one workspace.
pub struct ToolRegistry {
    pub workspace: PathBuf,
    pub home: PathBuf,
    /// Where full outputs of runs are written (`<dir>/<call id>.log`), if anywhere.
    pub log_dir: Option<PathBuf>,
    /// Environment variables kept from commands besides [`HIDDEN_ENV`](crate::facts::envvars::HIDDEN_ENV): the key variables
    /// the configuration names (`api_key_env`).
    pub hidden_env: Vec<String>,
    /// The configured MCP servers, whose tools run here too once approved.
    pub mcp: Option<Arc<crate::mcp::McpHub>>,
    /// The sandbox `bash` runs in; `None` runs commands unconfined (tests of other things).
    pub sandbox: Option<Arc<crate::sandbox::Sandbox>>,
}

impl ToolRegistry {
    pub fn new(workspace: PathBuf, home: PathBuf, log_dir: Option<PathBuf>) -> Self {
        ToolRegistry {
            workspace,
            home,
            log_dir,
            hidden_env: Vec::new(),
            mcp: None,
            sandbox: None,
        }
    }

    /// Runs every `bash` call in this sandbox.
    pub fn sandboxed(mut self, sandbox: crate::sandbox::Sandbox) -> Self {
        self.sandbox = Some(Arc::new(sandbox));
        self
    }

    /// Also runs the tools of these MCP servers.
    pub fn with_mcp(mut self, hub: Arc<crate::mcp::McpHub>) -> Self {
        self.mcp = Some(hub);
        self
    }

    /// Also keeps these variables from every command (a configured `api_key_env`).
    pub fn hiding_env(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.hidden_env.extend(names);
        self
    }

    pub fn catalog(&self) -> ToolCatalog {
        ToolCatalog::builtin()
    }

    /// Runs an approved call, once the decision that allowed it is durable in the audit log.
    /// Its arguments come from the frozen text, re-checked against the digest that was
    /// approved; a mismatch runs nothing.
    pub async fn execute(
        &self,
        approved: Approved,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        self.execute_with(approved, cancel, sink, None).await
    }

    /// [`ToolRegistry::execute`], from an agent's turn that can start sub-agents (`agents`).
    pub async fn execute_with(
        &self,
        approved: Approved,
        cancel: CancellationToken,
        sink: OutputSink,
        agents: Option<&dyn agent::SubAgents>,
    ) -> Result<ToolOutcome, ToolError> {
        // Nothing runs before the decision that allowed it is durable in the audit log.
        approved.recorded().await.map_err(ToolError::Failed)?;
        let args = approved
            .args()
            .map_err(|e| ToolError::Tampered(e.to_string()))?;
        let Some(tool) = registry::builtin(approved.tool()) else {
            return self.execute_mcp(approved, args, cancel, sink).await;
        };
        tool.execute(ToolRun {
            tools: self,
            approved,
            args,
            cancel,
            sink,
            agents,
        })
        .await
    }

    /// Runs an approved call of an MCP server's tool, against the definition it was judged on.
    /// A tool of a server still starting is not listed yet: the hub waits for it.
    pub(crate) async fn execute_mcp(
        &self,
        approved: Approved,
        args: Value,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        let name = approved.tool();
        match (&self.mcp, approved.mcp_definition()) {
            (Some(hub), Some(definition)) if hub.serves(name) => {
                hub.call(name, args, definition, cancel, sink).await
            }
            (Some(hub), None) if hub.serves(name) => Err(ToolError::Tampered(format!(
                "`{name}` was not judged on an MCP tool definition, so airlock cannot tell what it would run; nothing was sent"
            ))),
            _ => Err(ToolError::Unknown(name.to_string())),
        }
    }
}

impl Previewer for ToolRegistry {
    fn preview(&self, tool: &str, args: &Value, judged: Option<&Path>) -> Option<Preview> {
        let at = PreviewAt {
            workspace: &self.workspace,
            judged,
        };
        match registry::builtin(tool) {
            Some(found) => found.preview(args, at),
            None => {
                let listed = self.mcp.as_ref()?.catalog().lookup(tool)?;
                listed.preview(args, at)
            }
        }
    }

    fn amend(&self, change: AmendRequest<'_>) -> Result<Amended, String> {
        let at = PreviewAt {
            workspace: &self.workspace,
            judged: change.judged,
        };
        match registry::builtin(change.tool) {
            Some(found) => found.amend(change, at),
            None => match self
                .mcp
                .as_ref()
                .and_then(|hub| hub.catalog().lookup(change.tool))
            {
                Some(listed) => listed.amend(change, at),
                None => Err(format!(
                    "`{}` is not a tool this session knows; nothing was changed",
                    change.tool
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests;
