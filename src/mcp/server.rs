//! One configured MCP server: its connection (rmcp, over stdio to a process airlock starts,
//! `stdio`, or over streamable HTTP to a `url`, `http`), its tool listing checked against the
//! pins, and the calls made to it. A server is connected in the background or by the first call
//! that needs it; one that stopped (or became unreachable) is a tool error for the call that saw
//! it and is connected again by a later call, after a backoff that grows with each failure in a
//! row. Calls behave the same over both transports: timeout, progress, cancellation.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::mcp::catalog::{McpCatalog, McpTool, ServerState};
use crate::mcp::config::ConfiguredServer;
use crate::mcp::definition::{ToolDefinition, exposed_name};
use crate::mcp::handler::{Handler, lock, token_key};
use crate::mcp::live::{Live, hide};
use crate::mcp::pins::PinBook;
use crate::mcp::{content, http, pins, stdio};
use crate::output::{OutputSink, ToolError, ToolOutcome};
use crate::protocol::Stream;
use crate::protocol::ToolStatus;

/// The longest wait before a crashed server is started again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

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
    pins: Option<Arc<dyn PinBook>>,
    catalog: Arc<McpCatalog>,
    sandbox: Arc<crate::sandbox::Sandbox>,
    conn: tokio::sync::Mutex<Conn>,
    /// Failures in a row (failed starts, stops) since the last call that worked.
    failures: std::sync::atomic::AtomicU32,
}

impl Server {
    pub fn new(
        configured: ConfiguredServer,
        workspace: PathBuf,
        hidden_env: Vec<String>,
        pins: Option<Arc<dyn PinBook>>,
        catalog: Arc<McpCatalog>,
        sandbox: Arc<crate::sandbox::Sandbox>,
    ) -> Server {
        catalog.set_state(&configured.name, ServerState::Starting);
        catalog.set_startup_limit(&configured.name, configured.config.startup_timeout());
        Server {
            configured,
            workspace,
            hidden_env,
            pins,
            catalog,
            sandbox,
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
                        Ok(defs) => self.publish(defs, &live.server_name()),
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
        let limit = config.startup_timeout();
        let live = match (&config.command, &config.url) {
            (Some(program), _) => {
                let sandbox = stdio::Confinement::of(&self.configured, &self.sandbox)?;
                stdio::start(
                    &self.configured,
                    program,
                    &self.workspace,
                    &self.hidden_env,
                    &sandbox,
                )
                .await?
            }
            (None, Some(url)) => http::start(&self.configured, url).await?,
            (None, None) => {
                return Err(format!(
                    "[mcp_servers.{}] in {} gives neither `command` nor `url`",
                    self.name(),
                    self.configured.file.display()
                ));
            }
        };
        let defs = list(&live.service, limit)
            .await
            .map_err(|e| live.explain(&e))?;
        self.publish(defs, &live.server_name());
        Ok(live)
    }

    /// Checks a listing against the pins and offers its tools.
    /// `server_name` is the name the server gave itself at the handshake.
    fn publish(&self, defs: Vec<ToolDefinition>, server_name: &Option<String>) {
        let changed = self.pin_check(&defs);
        let mut tools = Vec::new();
        let mut skipped = Vec::new();
        for definition in defs {
            match exposed_name(self.name(), &definition.name) {
                Some(exposed) => tools.push(McpTool {
                    server: self.name().to_string(),
                    exposed,
                    digest: definition.digest(),
                    file_tool: crate::mcp::file_tools::recognise(
                        self.configured.config.file_tools.as_ref(),
                        server_name.as_deref(),
                        &definition.name,
                        &definition.input_schema,
                    ),
                    definition,
                    changed: changed.clone(),
                    confinement: Some(crate::mcp::confinement_label(&self.configured)),
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
        let Some(book) = &self.pins else {
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
        let checked = book
            .record_listing(key, &listing, crate::clock::now_ms())
            .and_then(|()| book.pins(key));
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

    /// Calls `exposed` with `args`, if the server still lists it with the definition the call
    /// was judged on (`definition`, its digest). Progress goes to `sink` as it comes; the result
    /// text too, at the end. A cancelled call tells the server (`notifications/cancelled`).
    ///
    /// A server still connecting (at start-up, or a resumed run's first call) is waited for: the
    /// connection is held while it starts, for at most its start-up timeout.
    pub async fn call(
        &self,
        exposed: &str,
        args: Value,
        definition: &str,
        cancel: CancellationToken,
        sink: OutputSink,
    ) -> Result<ToolOutcome, ToolError> {
        let live = tokio::select! {
            live = self.live() => live,
            _ = cancel.cancelled() => {
                return Ok(finished(ToolStatus::Cancelled, "cancelled while its MCP server was starting; nothing was sent".into()));
            }
        };
        let live =
            live.map_err(|why| ToolError::Failed(format!("MCP server `{}`: {why}", self.name())))?;
        // A restart or a list change may have brought a new definition since the call was judged.
        let tool = match self.catalog.lookup(exposed) {
            Some(now) if now.digest == definition => now.definition.name,
            Some(now) => {
                return Err(ToolError::Tampered(format!(
                    "the definition of `{exposed}` changed since the call was judged (sha256:{} then, sha256:{} now); nothing was sent to the server, and a new call asks again",
                    short(definition),
                    short(&now.digest)
                )));
            }
            None => {
                return Err(ToolError::Tampered(format!(
                    "MCP server `{}` no longer lists `{exposed}`; nothing was sent to it",
                    self.name()
                )));
            }
        };
        let Value::Object(arguments) = args else {
            return Err(ToolError::InvalidArguments(format!(
                "the arguments of `{exposed}` must be a JSON object"
            )));
        };
        let mut params = CallToolRequestParams::new(tool);
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
                let (mut text, is_error) = content::text_of(&json);
                if let Some(note) = live.plan.as_ref().filter(|_| is_error).and_then(|plan| {
                    crate::sandbox::blocked::explain_for_server(plan, &text, self.name())
                }) {
                    text.push_str(&format!("\n{note}"));
                }
                sink.send(Stream::Stdout, text.as_bytes());
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

    /// The error for a call whose server went away (a process that died, an HTTP server that
    /// stopped answering); its connection is dropped, so a later call connects again (after the
    /// backoff), rather than reusing one that no longer leads anywhere.
    async fn crashed(&self, live: &Arc<Live>, error: &str) -> ToolError {
        let why = hide(
            &format!(
                "MCP server `{}` stopped during the call ({}){}; nothing more came back, and airlock starts it again on the next call",
                self.name(),
                http::tidy(error),
                live.last_words().await
            ),
            &live.secrets,
        );
        self.catalog
            .set_state(self.name(), ServerState::Failed(why.clone()));
        let mut conn = self.conn.lock().await;
        if matches!(&*conn, Conn::Up(current) if Arc::ptr_eq(current, live)) {
            let failures = self.failures.fetch_add(1, Ordering::SeqCst) + 1;
            *conn = Conn::Down {
                retry_at: Some(Instant::now() + backoff(failures)),
                last_error: Some(why.clone()),
            };
        }
        ToolError::Failed(why)
    }
}

fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
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
