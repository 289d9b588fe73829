//! One configured MCP server: its process, its connection (rmcp, stdio), its tool listing checked
//! against the pins, and the calls made to it. A server is started in the background or by the
//! first call that needs it; one that stopped is a tool error for the call that saw it and is
//! started again by a later call, after a backoff that grows with each failure in a row.
//!
//! The server runs in a process group of its own (so `npx` and the node it starts go together),
//! in the workspace, without airlock's key variables, and with its stderr kept (the last lines
//! are told when it fails) instead of painted over the cockpit.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, ProgressNotificationParam,
    Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use crate::mcp::catalog::{McpCatalog, McpTool, ServerState};
use crate::mcp::config::ConfiguredServer;
use crate::mcp::definition::{ToolDefinition, exposed_name};
use crate::mcp::{content, pins};
use crate::tools::{OutputSink, Stream, ToolError, ToolOutcome, ToolStatus};

/// Lines of a server's stderr kept to explain a failure.
const STDERR_LINES: usize = 12;

/// The longest wait before a crashed server is started again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Progress notifications and list changes from the server, routed to whoever waits for them.
#[derive(Clone, Default)]
struct Handler {
    progress: Arc<Mutex<Progress>>,
    list_changed: Arc<AtomicBool>,
}

/// Where each call's progress goes. A server may report progress before the call that asked
/// for it is registered (the request is on its way while its handle is made): those lines wait
/// in `early`, bounded, and go to the call's output when it registers.
#[derive(Default)]
struct Progress {
    sinks: HashMap<String, OutputSink>,
    early: HashMap<String, Vec<String>>,
}

/// At most this many unclaimed progress tokens, and lines per token, are kept.
const EARLY_PROGRESS: usize = 32;

impl Progress {
    fn report(&mut self, token: String, line: String) {
        if let Some(sink) = self.sinks.get(&token) {
            sink(Stream::Stderr, line.as_bytes());
            return;
        }
        if self.early.len() >= EARLY_PROGRESS && !self.early.contains_key(&token) {
            self.early.clear();
        }
        let lines = self.early.entry(token).or_default();
        if lines.len() < EARLY_PROGRESS {
            lines.push(line);
        }
    }

    fn register(&mut self, token: String, sink: OutputSink) {
        for line in self.early.remove(&token).unwrap_or_default() {
            sink(Stream::Stderr, line.as_bytes());
        }
        self.sinks.insert(token, sink);
    }

    fn unregister(&mut self, token: &str) {
        self.sinks.remove(token);
        self.early.remove(token);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn token_key(token: &impl serde::Serialize) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl ClientHandler for Handler {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let total = params.total.map(|t| format!("/{t}")).unwrap_or_default();
        let message = params
            .message
            .map(|m| format!(": {}", crate::visible::visible_line(&m)))
            .unwrap_or_default();
        let line = format!("progress {}{total}{message}\n", params.progress);
        lock(&self.progress).report(token_key(&params.progress_token), line);
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.list_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }
}

/// A running server process and its connection. Dropping it kills the process group.
struct Live {
    service: RunningService<RoleClient, Handler>,
    handler: Handler,
    group: Option<i32>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Becomes true once the server's stderr is read to its end (the process is gone).
    stderr_read: tokio::sync::watch::Receiver<bool>,
}

impl Live {
    fn alive(&self) -> bool {
        !self.service.is_closed() && !self.service.peer().is_transport_closed()
    }

    fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }

    /// The stderr tail of a server that stopped, once its last lines are read (a moment at
    /// most: they are what explains the crash).
    async fn last_words(&self) -> String {
        let mut read = self.stderr_read.clone();
        let _ = tokio::time::timeout(Duration::from_millis(500), read.wait_for(|done| *done)).await;
        self.stderr_tail()
    }
}

fn tail_text(lines: &Mutex<VecDeque<String>>) -> String {
    let lines = lock(lines);
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "; its last stderr lines: {}",
            lines.iter().cloned().collect::<Vec<_>>().join(" | ")
        )
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            // The group may be gone already; then there is nothing to stop.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

enum Conn {
    Down {
        retry_at: Option<Instant>,
        last_error: Option<String>,
    },
    Up(Arc<Live>),
}

/// The wait before the next start after `failures` failures in a row: none after the first,
/// then 1, 2, 4... seconds, at most [`MAX_BACKOFF`].
pub fn backoff(failures: u32) -> Duration {
    match failures {
        0 | 1 => Duration::ZERO,
        n => Duration::from_secs(1u64 << (n - 2).min(5)).min(MAX_BACKOFF),
    }
}

pub struct Server {
    pub configured: ConfiguredServer,
    workspace: PathBuf,
    hidden_env: Vec<String>,
    db: Option<PathBuf>,
    catalog: Arc<McpCatalog>,
    conn: tokio::sync::Mutex<Conn>,
    /// Failures in a row (failed starts, stops) since the last call that worked.
    failures: std::sync::atomic::AtomicU32,
}

impl Server {
    pub fn new(
        configured: ConfiguredServer,
        workspace: PathBuf,
        hidden_env: Vec<String>,
        db: Option<PathBuf>,
        catalog: Arc<McpCatalog>,
    ) -> Server {
        catalog.set_state(&configured.name, ServerState::Starting);
        Server {
            configured,
            workspace,
            hidden_env,
            db,
            catalog,
            conn: tokio::sync::Mutex::new(Conn::Down {
                retry_at: None,
                last_error: None,
            }),
            failures: std::sync::atomic::AtomicU32::new(0),
        }
    }

    pub fn name(&self) -> &str {
        &self.configured.name
    }

    /// Starts the server if it is not running (and its backoff allows), and lists its tools.
    /// Returns the connection, or why there is none.
    async fn live(&self) -> Result<Arc<Live>, String> {
        let mut conn = self.conn.lock().await;
        if let Conn::Up(live) = &*conn {
            if live.alive() {
                if live.handler.list_changed.swap(false, Ordering::SeqCst) {
                    let defs = list(&live.service, self.configured.config.startup_timeout()).await;
                    match defs {
                        Ok(defs) => self.publish(defs),
                        Err(e) => return Err(e),
                    }
                }
                return Ok(live.clone());
            }
            let why = format!("it stopped{}", live.stderr_tail());
            let failures = self.failures.fetch_add(1, Ordering::SeqCst) + 1;
            *conn = Conn::Down {
                retry_at: Some(Instant::now() + backoff(failures)),
                last_error: Some(why),
            };
        }
        let Conn::Down {
            retry_at,
            last_error,
        } = &*conn
        else {
            return Err("the MCP connection is in an unexpected state".into());
        };
        if let (Some(at), Some(why)) = (retry_at, last_error)
            && *at > Instant::now()
        {
            let wait = at.saturating_duration_since(Instant::now());
            return Err(format!(
                "{why}; airlock starts it again in {}s",
                wait.as_secs().max(1)
            ));
        }
        match self.start().await {
            Ok(live) => {
                let live = Arc::new(live);
                *conn = Conn::Up(live.clone());
                Ok(live)
            }
            Err(why) => {
                let failures = self.failures.fetch_add(1, Ordering::SeqCst) + 1;
                self.catalog
                    .set_state(self.name(), ServerState::Failed(why.clone()));
                *conn = Conn::Down {
                    retry_at: Some(Instant::now() + backoff(failures)),
                    last_error: Some(why.clone()),
                };
                Err(why)
            }
        }
    }

    /// Connects in the background, at start-up: the tools are offered once listed.
    pub async fn connect(&self) {
        // A failure is already in the catalog's state for `airlock mcp list` and the cockpit.
        let _ = self.live().await;
    }

    async fn start(&self) -> Result<Live, String> {
        let config = &self.configured.config;
        let Some(program) = &config.command else {
            return Err(
                "streamable HTTP servers (`url`) are not supported by this airlock yet; start the server over stdio with `command`"
                    .into(),
            );
        };
        let mut command = tokio::process::Command::new(program);
        command
            .args(&config.args)
            .current_dir(&self.workspace)
            .process_group(0)
            .kill_on_drop(true);
        for name in crate::tools::bash::HIDDEN_ENV
            .iter()
            .copied()
            .chain(self.hidden_env.iter().map(String::as_str))
        {
            command.env_remove(name);
        }
        command.envs(&config.env);
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start `{}`: {e}; check `command` in [mcp_servers.{}] of {}",
                    crate::visible::visible_line(program),
                    self.name(),
                    self.configured.file.display()
                )
            })?;
        let group = transport.id().map(|pid| pid as i32);
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let (stderr_done, stderr_read) = tokio::sync::watch::channel(stderr.is_none());
        if let Some(stderr) = stderr {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let mut kept = lock(&kept);
                    if kept.len() == STDERR_LINES {
                        kept.pop_front();
                    }
                    kept.push_back(crate::visible::visible_line(
                        &line.chars().take(300).collect::<String>(),
                    ));
                }
                let _ = stderr_done.send(true);
            });
        }
        let handler = Handler::default();
        let limit = config.startup_timeout();
        let guard = GroupGuard(group);
        let service = tokio::time::timeout(limit, handler.clone().serve(transport))
            .await
            .map_err(|_| {
                format!(
                    "it did not finish the MCP handshake within {}s{}",
                    limit.as_secs(),
                    tail_text(&kept)
                )
            })?
            .map_err(|e| format!("the MCP handshake failed: {e}{}", tail_text(&kept)))?;
        std::mem::forget(guard);
        let live = Live {
            service,
            handler,
            group,
            stderr: kept,
            stderr_read,
        };
        let defs = list(&live.service, limit)
            .await
            .map_err(|e| format!("{e}{}", live.stderr_tail()))?;
        self.publish(defs);
        Ok(live)
    }

    /// Checks a listing against the pins and offers its tools.
    fn publish(&self, defs: Vec<ToolDefinition>) {
        let changed = self.pin_check(&defs);
        let mut tools = Vec::new();
        let mut skipped = Vec::new();
        for definition in defs {
            match exposed_name(self.name(), &definition.name) {
                Some(exposed) => tools.push(McpTool {
                    server: self.name().to_string(),
                    exposed,
                    digest: definition.digest(),
                    definition,
                    changed: changed.clone(),
                }),
                None => skipped.push(format!(
                    "`{}`: its name cannot be offered to a model (letters, digits, `_` and `-` only, at most 64 with the server's name)",
                    crate::visible::visible_line(&definition.name)
                )),
            }
        }
        self.catalog.set_tools(self.name(), tools, skipped);
        self.catalog.set_state(self.name(), ServerState::Ready);
    }

    /// Records the listing and compares it with the accepted pins: `Some(reason)` when the
    /// server's tools must ask again. A pin store that cannot be read fails closed.
    fn pin_check(&self, defs: &[ToolDefinition]) -> Option<String> {
        let Some(db) = &self.db else {
            return Some(format!(
                "airlock keeps no pins for MCP server `{}` here, so it cannot tell whether its tools changed",
                self.name()
            ));
        };
        let listing: Vec<(String, String)> = defs
            .iter()
            .map(|d| (d.name.clone(), d.canonical()))
            .collect();
        let key = &self.configured.pin_key;
        let checked = crate::store::db::Store::open(db).and_then(|store| {
            store.record_mcp_listing(key, &listing, crate::approval::gate::now_ms())?;
            store.mcp_pins(key)
        });
        match checked {
            Ok(pins) => {
                let changes = pins::compare(&pins.unwrap_or_default(), defs);
                (!changes.is_empty()).then(|| pins::changed_reason(self.name(), &changes))
            }
            Err(e) => Some(format!(
                "airlock cannot check the tools of MCP server `{}` against their pins ({e})",
                self.name()
            )),
        }
    }

    /// Calls `tool` with `args`. Progress goes to `sink` as it comes; the result text too, at
    /// the end. A cancelled call tells the server (`notifications/cancelled`).
    pub async fn call(
        &self,
        exposed: &str,
        tool: &str,
        args: Value,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        let judged = self.catalog.lookup(exposed);
        let live = self
            .live()
            .await
            .map_err(|why| ToolError::Failed(format!("MCP server `{}`: {why}", self.name())))?;
        // A restart or a list change may have brought a new definition since the call was judged.
        let now = self.catalog.lookup(exposed);
        let same = |a: &McpTool, b: &McpTool| a.digest == b.digest && a.changed == b.changed;
        match (&judged, &now) {
            (Some(a), Some(b)) if same(a, b) => {}
            _ => {
                return Err(ToolError::Tampered(format!(
                    "the definition of `{exposed}` changed since the call was judged; nothing was sent to the server, and a new call asks again"
                )));
            }
        }
        let Value::Object(arguments) = args else {
            return Err(ToolError::InvalidArguments(format!(
                "the arguments of `{exposed}` must be a JSON object"
            )));
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        let timeout = self.configured.config.call_timeout();
        let request = ClientRequest::CallToolRequest(Request::new(params));
        let handle = live
            .service
            .peer()
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await;
        let handle = match handle {
            Ok(handle) => handle,
            Err(e) => return Err(self.crashed(&live, &e.to_string()).await),
        };
        let token = token_key(&handle.progress_token);
        lock(&live.handler.progress).register(token.clone(), sink.clone());
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            answer = handle.await_response() => Some(answer),
        };
        // rmcp hands each notification to its own task, so progress sent just before the
        // answer may still be on its way: let those tasks run before the call stops listening.
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        lock(&live.handler.progress).unregister(&token);
        let Some(answer) = answer else {
            let note =
                CancelledNotificationParam::new(Some(id), Some("cancelled in airlock".into()));
            // The server may be gone already; the call is cancelled either way.
            let _ = peer.notify_cancelled(note).await;
            return Ok(finished(
                ToolStatus::Cancelled,
                "cancelled; the server was told to stop".into(),
            ));
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => {
                self.failures.store(0, Ordering::SeqCst);
                let json = serde_json::to_value(&result).unwrap_or(Value::Null);
                let (text, is_error) = content::text_of(&json);
                sink(Stream::Stdout, text.as_bytes());
                let status = if is_error {
                    ToolStatus::Failed
                } else {
                    ToolStatus::Ok
                };
                Ok(finished(status, text))
            }
            Ok(_) => Err(ToolError::Failed(format!(
                "MCP server `{}` answered the call with something that is not a tool result",
                self.name()
            ))),
            Err(ServiceError::Timeout { timeout }) => Ok(finished(
                ToolStatus::TimedOut,
                format!(
                    "timed out after {}s; the server was told to stop (raise `timeout_secs` in [mcp_servers.{}] if it needs longer)",
                    timeout.as_secs(),
                    self.name()
                ),
            )),
            Err(ServiceError::McpError(e)) => Ok(finished(
                ToolStatus::Failed,
                format!("the server refused the call: {}", e.message),
            )),
            Err(e) => Err(self.crashed(&live, &e.to_string()).await),
        }
    }

    /// The error for a call whose server went away; it is started again by a later call.
    async fn crashed(&self, live: &Live, error: &str) -> ToolError {
        let why = format!(
            "MCP server `{}` stopped during the call ({error}){}; nothing more came back, and airlock starts it again on the next call",
            self.name(),
            live.last_words().await
        );
        self.catalog
            .set_state(self.name(), ServerState::Failed(why.clone()));
        ToolError::Failed(why)
    }
}

/// Kills a process group unless forgotten: a server that fails its handshake is not left behind.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn finished(status: ToolStatus, content: String) -> ToolOutcome {
    ToolOutcome {
        status,
        exit_code: None,
        lines: content.lines().count() as u64,
        content,
        log: None,
    }
}

async fn list(
    service: &RunningService<RoleClient, Handler>,
    limit: Duration,
) -> Result<Vec<ToolDefinition>, String> {
    let tools = tokio::time::timeout(limit, service.peer().list_all_tools())
        .await
        .map_err(|_| format!("it did not list its tools within {}s", limit.as_secs()))?
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    tools
        .iter()
        .map(|t| {
            let json = serde_json::to_value(t).map_err(|e| e.to_string())?;
            ToolDefinition::from_listing(&json)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> (OutputSink, Arc<Mutex<String>>) {
        let seen = Arc::new(Mutex::new(String::new()));
        let into = seen.clone();
        let sink: OutputSink = Arc::new(move |_, bytes: &[u8]| {
            lock(&into).push_str(&String::from_utf8_lossy(bytes));
        });
        (sink, seen)
    }

    #[test]
    fn progress_reported_before_its_call_is_registered_reaches_the_call_in_order() {
        let mut progress = Progress::default();
        progress.report("1".into(), "progress 1/3\n".into());
        let (sink, seen) = recording();
        progress.register("1".into(), sink);
        progress.report("1".into(), "progress 2/3\n".into());
        assert_eq!(*lock(&seen), "progress 1/3\nprogress 2/3\n");
        progress.unregister("1");
        progress.report("1".into(), "late\n".into());
        assert_eq!(*lock(&seen), "progress 1/3\nprogress 2/3\n");
    }

    #[test]
    fn unclaimed_progress_is_bounded() {
        let mut progress = Progress::default();
        for token in 0..1000 {
            for line in 0..100 {
                progress.report(token.to_string(), format!("{line}\n"));
            }
        }
        assert!(progress.early.len() <= EARLY_PROGRESS);
        assert!(progress.early.values().all(|l| l.len() <= EARLY_PROGRESS));
    }
}
