//! What is known right now about the configured MCP servers: each server's state and the tools
//! it listed, as the model is offered them (`SERVER__TOOL`) and as the policy judges them. The
//! hub writes it as servers connect, crash and list again; the policy, the tool registry and the
//! model read snapshots. Pure data behind one lock, no I/O.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::approval::risk::{Risk, ToolDescriptor};
use crate::mcp::definition::ToolDefinition;

/// One offered tool.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub server: String,
    /// The name the model calls it by, `SERVER__TOOL`.
    pub exposed: String,
    pub definition: ToolDefinition,
    /// The pinned digest of `definition`.
    pub digest: String,
    /// Why it asks whatever the policy says: its server's definitions differ from the ones the
    /// user accepted (or cannot be checked). `None` when they are as accepted.
    pub changed: Option<String>,
}

impl McpTool {
    pub fn risk(&self) -> Risk {
        self.definition.risk()
    }

    pub fn rule_name(&self) -> String {
        crate::mcp::definition::rule_name(&self.server, &self.definition.name)
    }
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Configured; not started yet, or starting.
    Starting,
    /// Connected, its tools listed.
    Ready,
    /// It failed to start or stopped; the message says why and what happens next.
    Failed(String),
    /// In a project that is not trusted: never started.
    NotTrusted,
}

impl ServerState {
    pub fn describe(&self) -> String {
        match self {
            ServerState::Starting => "starting".into(),
            ServerState::Ready => "ready".into(),
            ServerState::Failed(why) => format!("failed: {why}"),
            ServerState::NotTrusted => {
                "not started: the project is not trusted (run `airlock trust`)".into()
            }
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    servers: BTreeMap<String, ServerState>,
    tools: BTreeMap<String, McpTool>,
    /// Listed tools that cannot be offered, per server, in words.
    skipped: BTreeMap<String, Vec<String>>,
}

/// Shared between the hub (writer) and the policy, registry and model (readers).
#[derive(Debug)]
pub struct McpCatalog {
    inner: RwLock<Inner>,
    /// Bumped at every change, for those waiting on a server still starting.
    version: tokio::sync::watch::Sender<u64>,
}

impl Default for McpCatalog {
    fn default() -> Self {
        McpCatalog {
            inner: RwLock::default(),
            version: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl McpCatalog {
    pub fn new() -> Arc<McpCatalog> {
        Arc::new(McpCatalog::default())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_state(&self, server: &str, state: ServerState) {
        self.write().servers.insert(server.to_string(), state);
        self.version.send_modify(|v| *v += 1);
    }

    /// Waits (at most `limit`) while the server `tool` would belong to (`SERVER__TOOL`) is still
    /// starting, so a call made right after start-up is judged on the listed tools.
    pub async fn settle(&self, tool: &str, limit: std::time::Duration) {
        let Some((server, _)) = tool.split_once("__") else {
            return;
        };
        let mut changes = self.version.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        while self.state(server) == Some(ServerState::Starting) {
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Waits (at most `limit`) until no server is starting: a model's first request offers the
    /// tools of the servers that started with the session.
    pub async fn settle_all(&self, limit: std::time::Duration) {
        let mut changes = self.version.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        while self
            .read()
            .servers
            .values()
            .any(|s| *s == ServerState::Starting)
        {
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    pub fn state(&self, server: &str) -> Option<ServerState> {
        self.read().servers.get(server).cloned()
    }

    /// Replaces everything `server` offers.
    pub fn set_tools(&self, server: &str, tools: Vec<McpTool>, skipped: Vec<String>) {
        let mut inner = self.write();
        inner.tools.retain(|_, t| t.server != server);
        for tool in tools {
            inner.tools.insert(tool.exposed.clone(), tool);
        }
        inner.skipped.insert(server.to_string(), skipped);
        drop(inner);
        self.version.send_modify(|v| *v += 1);
    }

    pub fn lookup(&self, exposed: &str) -> Option<McpTool> {
        self.read().tools.get(exposed).cloned()
    }

    /// Every offered tool, by exposed name.
    pub fn tools(&self) -> Vec<McpTool> {
        self.read().tools.values().cloned().collect()
    }

    pub fn servers(&self) -> Vec<(String, ServerState)> {
        self.read()
            .servers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn skipped(&self, server: &str) -> Vec<String> {
        self.read().skipped.get(server).cloned().unwrap_or_default()
    }

    /// The offered tools as the model sees them: name, the server's description (marked as coming
    /// from the server) and input schema.
    pub fn descriptors(&self) -> Vec<ToolDescriptor> {
        self.read()
            .tools
            .values()
            .map(|t| ToolDescriptor {
                name: t.exposed.clone(),
                description: format!("[MCP server {}] {}", t.server, t.definition.description),
                schema: t.definition.input_schema.clone(),
                risk: Some(t.risk()),
            })
            .collect()
    }
}
