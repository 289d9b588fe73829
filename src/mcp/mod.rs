//! MCP (Model Context Protocol) servers: tools the user brings, offered to the model as
//! `SERVER__TOOL` and judged by the same gate as the built-in tools.
//!
//! Imports `protocol`, `output` (a call's live output and outcome), `facts` (the tool catalog, the
//! diff of a file change), `sandbox` (where a server runs), `clock`, `digest` and `visible`;
//! must never import `approval`, `store`, `tools`, `model`, `agent`, `config`, `ui`, `cli` or
//! `demo`: the gate reads its catalog, and the state database keeps its pins (a [`pins::PinBook`]),
//! not the other way round.
//!
//! Ownership: the [`McpHub`] owns the servers (`server`: process, connection, calls) and writes
//! the shared [`catalog::McpCatalog`]; the policy (`approval::policy::mcp`), the tool registry and
//! the model only read it. Nothing here decides whether a call may run: the risk comes from the
//! tool's annotations (`definition`), the pins say whether a server's tools changed since the
//! user accepted them (`pins`, kept in the state database), and the policy turns both, with
//! the user's rules, into a verdict.
//!
//! Start-up cost is nothing when no server is configured, and never on the way to the first
//! frame otherwise: servers connect on background tasks and their tools are offered once listed.

pub mod catalog;
pub mod config;
pub mod content;
pub mod definition;
pub mod file_tools;
mod handler;
mod http;
mod live;
pub mod pins;
pub mod preview;
pub mod server;
mod stdio;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::output::{OutputSink, ToolError, ToolOutcome};
pub use catalog::{McpCatalog, McpTool, ServerState};
pub use config::{ConfiguredServer, ServerConfig};
use pins::PinBook;
use server::Server;

/// Where a configured server runs, in words (see [`McpHub::confinement`]).
pub fn confinement_label(configured: &ConfiguredServer) -> String {
    let config = &configured.config;
    if config.command.is_none() {
        return "remote: runs elsewhere, out of airlock's sandbox".into();
    }
    match config.sandbox() {
        crate::sandbox::Profile::Off => format!(
            "NO SANDBOX: `sandbox = \"off\"` in {}, it runs with all of your rights",
            configured.file.display()
        ),
        profile => format!("sandbox {} ({})", profile.as_str(), profile.describe()),
    }
}

/// The configured servers of one session.
pub struct McpHub {
    servers: BTreeMap<String, Arc<Server>>,
    catalog: Arc<McpCatalog>,
}

impl McpHub {
    /// `servers` may start; `not_trusted` are a project's servers that may not (they are listed
    /// as such). `pins` is where the accepted definitions are kept; `sandbox` what a `command`
    /// server is started in (under its own `sandbox` profile).
    pub fn new(
        servers: Vec<ConfiguredServer>,
        not_trusted: Vec<String>,
        workspace: PathBuf,
        hidden_env: Vec<String>,
        pins: Option<Arc<dyn PinBook>>,
        sandbox: Arc<crate::sandbox::Sandbox>,
    ) -> Arc<McpHub> {
        let catalog = McpCatalog::new();
        for name in not_trusted {
            catalog.set_state(&name, ServerState::NotTrusted);
        }
        let servers = servers
            .into_iter()
            .map(|configured| {
                let name = configured.name.clone();
                let server = Server::new(
                    configured,
                    workspace.clone(),
                    hidden_env.clone(),
                    pins.clone(),
                    catalog.clone(),
                    sandbox.clone(),
                );
                (name, Arc::new(server))
            })
            .collect();
        Arc::new(McpHub { servers, catalog })
    }

    /// Where `server` runs, in words: its sandbox profile, `NO SANDBOX` when its config says
    /// `off`, or that a remote server runs out of airlock's reach.
    pub fn confinement(&self, server: &str) -> Option<String> {
        let configured = &self.servers.get(server)?.configured;
        Some(confinement_label(configured))
    }

    pub fn catalog(&self) -> Arc<McpCatalog> {
        self.catalog.clone()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Starts every server on a background task; each one's tools are offered once listed.
    pub fn connect_in_background(&self) {
        for server in self.servers.values() {
            let server = server.clone();
            tokio::spawn(async move { server.connect().await });
        }
    }

    /// Starts every server and waits until each has listed its tools or failed.
    pub async fn connect_all(&self) {
        let mut set = tokio::task::JoinSet::new();
        for server in self.servers.values() {
            let server = server.clone();
            set.spawn(async move { server.connect().await });
        }
        while set.join_next().await.is_some() {}
    }

    /// Whether `tool` names a tool of one of these servers, listed or not yet (`SERVER__TOOL`
    /// of a configured server that may still be starting).
    pub fn serves(&self, tool: &str) -> bool {
        self.server_of(tool).is_some()
    }

    fn server_of(&self, tool: &str) -> Option<&Arc<Server>> {
        // A server's name never holds `__`, so the first one ends it.
        let (server, _) = tool.split_once("__")?;
        self.servers.get(server)
    }

    /// Runs an approved call of one of these servers' tools, against the definition it was
    /// judged on (`definition`, the digest `Approved::mcp_definition` carries). A server still
    /// starting is waited for.
    pub async fn call(
        &self,
        exposed: &str,
        args: Value,
        definition: &str,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        let server = self
            .server_of(exposed)
            .ok_or_else(|| ToolError::Unknown(exposed.to_string()))?;
        server.call(exposed, args, definition, cancel, sink).await
    }
}

/// The tools of `servers` as last listed, from their pins, without starting anything (for
/// `airlock policy check`): the accepted definitions, or the ones seen since, which then carry
/// the change that makes them ask. A server never listed offers nothing.
pub fn catalog_from_pins(servers: &[ConfiguredServer], book: &dyn PinBook) -> Arc<McpCatalog> {
    let catalog = McpCatalog::new();
    for server in servers {
        let pins = book.pins(&server.pin_key).ok().flatten();
        let Some(pins) = pins else {
            catalog.set_state(
                &server.name,
                ServerState::Failed("never listed: run `airlock mcp list` once".into()),
            );
            continue;
        };
        let current: Vec<definition::ToolDefinition> = pins
            .iter()
            .filter_map(|p| p.seen.as_ref().or(p.accepted.as_ref()))
            .filter_map(|text| serde_json::from_str::<Value>(text).ok())
            .filter_map(|v| definition::ToolDefinition::from_listing(&v).ok())
            .collect();
        let changes = pins::compare(&pins, &current);
        let changed = (!changes.is_empty()).then(|| pins::changed_reason(&server.name, &changes));
        let tools = current
            .into_iter()
            .filter_map(|d| {
                Some(McpTool {
                    server: server.name.clone(),
                    exposed: definition::exposed_name(&server.name, &d.name)?,
                    digest: d.digest(),
                    // Nothing is started here, so only the config's own table is known.
                    file_tool: file_tools::recognise(
                        server.config.file_tools.as_ref(),
                        None,
                        &d.name,
                        &d.input_schema,
                    ),
                    definition: d,
                    changed: changed.clone(),
                    confinement: Some(confinement_label(server)),
                })
            })
            .collect();
        catalog.set_tools(&server.name, tools, Vec::new());
        catalog.set_state(&server.name, ServerState::Ready);
    }
    catalog
}
