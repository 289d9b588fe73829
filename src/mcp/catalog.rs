//! What is known right now about the configured MCP servers: each server's state and the tools
//! it listed, as the model is offered them (`SERVER__TOOL`) and as the policy judges them. The
//! hub writes it as servers connect, crash and list again; the policy, the tool registry and the
//! model read snapshots. Pure data behind one lock, no I/O.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::facts::catalog::ToolDescriptor;
use crate::mcp::definition::ToolDefinition;
use crate::protocol::Risk;

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
    /// How it changes a file, when it is known to (`mcp::file_tools`): its approval shows the
    /// change as a diff.
    pub file_tool: Option<crate::mcp::file_tools::FileTool>,
    /// Where its server runs, in words (`mcp::confinement_label`): the modal shows it.
    pub confinement: Option<String>,
}

impl McpTool {
    pub fn risk(&self) -> Risk {
        self.definition.risk()
    }

    pub fn rule_name(&self) -> String {
        crate::mcp::definition::rule_name(&self.server, &self.definition.name)
    }

    /// Its server's description, marked as coming from the server.
    pub fn described(&self) -> String {
        format!(
            "[MCP server {}] {}",
            self.server, self.definition.description
        )
    }

    /// The tool as the model and the gate see it. It names no path the gate resolves: a file
    /// change it makes is previewed (`mcp::file_tools`), and its risk comes from its annotations.
    pub fn descriptor(&self) -> ToolDescriptor {
        ToolDescriptor {
            name: self.exposed.clone(),
            description: self.described(),
            schema: self.definition.input_schema.clone(),
            risk: Some(self.risk()),
            paths: Vec::new(),
            command: None,
        }
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
    /// How long each server may take to connect and list its tools.
    startup_limits: BTreeMap<String, std::time::Duration>,
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

    /// Records how long `server` may take to connect and list its tools (its
    /// `startup_timeout_secs`), which bounds the wait in [`McpCatalog::settle`].
    pub fn set_startup_limit(&self, server: &str, limit: std::time::Duration) {
        self.write()
            .startup_limits
            .insert(server.to_string(), limit);
    }

    /// Waits while the server `tool` would belong to (`SERVER__TOOL`) is still starting, so a
    /// call made right after start-up is judged (and forecast) on the listed tools rather than
    /// refused as unknown. Bounded by the server's own start-up limit (for its handshake, then
    /// its listing, and a second to publish), else by `fallback`.
    pub async fn settle(&self, tool: &str, fallback: std::time::Duration) {
        let Some((server, _)) = tool.split_once("__") else {
            return;
        };
        let limit = self
            .read()
            .startup_limits
            .get(server)
            .map_or(fallback, |l| *l * 2 + std::time::Duration::from_secs(1));
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

    /// Calls `notify` with a line for each server that fails (to start, or later), once per
    /// failure, until `notify` returns `false` (nobody listens any more). A server that recovers
    /// and fails again is said again.
    pub async fn report_failures(&self, mut notify: impl FnMut(String) -> bool) {
        let mut changes = self.version.subscribe();
        let mut said: BTreeMap<String, String> = BTreeMap::new();
        loop {
            let failed: Vec<(String, String)> = self
                .read()
                .servers
                .iter()
                .filter_map(|(name, state)| match state {
                    ServerState::Failed(why) => Some((name.clone(), why.clone())),
                    _ => None,
                })
                .collect();
            said.retain(|name, _| failed.iter().any(|(n, _)| n == name));
            for (name, why) in failed {
                if said.get(&name) == Some(&why) {
                    continue;
                }
                let line = format!(
                    "MCP server `{}` failed: {}. Its tools are not offered to the model; `airlock mcp list` shows every server.",
                    crate::visible::visible_line(&name),
                    crate::visible::visible_line(&why)
                );
                if !notify(line) {
                    return;
                }
                said.insert(name, why);
            }
            if changes.changed().await.is_err() {
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
            .map(McpTool::descriptor)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn each_failure_of_a_server_is_said_once_and_a_new_one_again() {
        let catalog = McpCatalog::new();
        catalog.set_state("ok", ServerState::Starting);
        catalog.set_state("fs", ServerState::Starting);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let reporting = catalog.clone();
        let task = tokio::spawn(async move {
            reporting
                .report_failures(|line| tx.send(line).is_ok())
                .await;
        });
        catalog.set_state("ok", ServerState::Ready);
        catalog.set_state(
            "fs",
            ServerState::Failed("cannot start `npx`: not found".into()),
        );
        let first = rx.recv().await.unwrap();
        assert!(
            first.starts_with("MCP server `fs` failed: cannot start `npx`"),
            "{first}"
        );
        assert!(first.contains("`airlock mcp list`"), "{first}");
        // Other changes do not repeat it; a new failure after a recovery is said again.
        catalog.set_state("ok", ServerState::Ready);
        catalog.set_state("fs", ServerState::Ready);
        catalog.set_state("fs", ServerState::Failed("it stopped".into()));
        let second = rx.recv().await.unwrap();
        assert!(second.contains("failed: it stopped"), "{second}");
        // Nobody listens any more: the reporter ends at the next failure it would say.
        drop(rx);
        catalog.set_state("ok", ServerState::Failed("gone".into()));
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("the reporter ends once nobody listens")
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_for_a_starting_server_is_bounded_by_its_own_start_up_limit() {
        let catalog = McpCatalog::new();
        catalog.set_state("slow", ServerState::Starting);
        catalog.set_startup_limit("slow", Duration::from_secs(1));
        let began = tokio::time::Instant::now();
        catalog.settle("slow__tool", Duration::from_secs(600)).await;
        // The handshake and the listing each have the limit, and a second to publish.
        assert_eq!(began.elapsed(), Duration::from_secs(3));
        // A server that is ready is not waited for; a built-in tool name neither.
        catalog.set_state("slow", ServerState::Ready);
        let began = tokio::time::Instant::now();
        catalog.settle("slow__tool", Duration::from_secs(600)).await;
        catalog.settle("read_file", Duration::from_secs(600)).await;
        assert_eq!(began.elapsed(), Duration::ZERO);
    }
}
