//! The HTTP side of real providers: one client (rustls with the ring provider), retries with
//! backoff that honour `Retry-After` for 429 and 5xx, connect and read timeouts, and SSE reading.
//! Every error names the provider, the URL and the status. The API key is never in an error,
//! a log line, an event or the audit log.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::anthropic;
use super::openai;
use super::sse::{SseEvent, SseParser};
use super::{Message, ModelClient, ModelError, ModelReply};
use crate::approval::approver::BoxFuture;
use crate::facts::catalog::ToolCatalog;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions.
    #[value(name = "openai")]
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }
}

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
        }
    }
}

pub struct HttpModel {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    api_key: Option<String>,
    pub max_tokens: u32,
    pub system: String,
    pub retry: RetryPolicy,
    pub tools: ToolCatalog,
    /// MCP tools offered besides `tools`, as their servers list them.
    pub mcp: Option<Arc<crate::mcp::McpCatalog>>,
    /// Built on a thread of its own from the moment the model is made (loading the system's CA
    /// certificates takes tens of milliseconds), so it is never on the way to the first frame;
    /// the first request waits for it if it is not ready yet.
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    client_spec: ClientSpec,
}

/// What the client is built for: its time-outs, and whether the base URL is plain `http://`.
type ClientSpec = ((Duration, Duration), bool);

fn build_client(((connect, read), plain): ClientSpec) -> Result<reqwest::Client, String> {
    // Installing the provider twice is harmless; the first one wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = reqwest::Client::builder()
        .connect_timeout(connect)
        .read_timeout(read);
    // A model at a plain `http://` address (a local server) needs no certificate: the system's
    // are not loaded (milliseconds of reading hundreds of files), and a redirect to `https://`
    // fails to verify rather than trusting anything.
    let builder = if plain {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    };
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// True when `base_url` is a plain `http://` address.
fn is_plain_http(base_url: &str) -> bool {
    base_url
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

pub struct HttpModelConfig {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub max_tokens: u32,
    pub system: String,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub retry: RetryPolicy,
}

impl HttpModel {
    pub fn new(config: HttpModelConfig) -> Result<HttpModel, ModelError> {
        let timeouts = (
            (config.connect_timeout, config.read_timeout),
            is_plain_http(&config.base_url),
        );
        let client = Arc::new(OnceLock::new());
        let early = client.clone();
        std::thread::spawn(move || {
            early.get_or_init(|| build_client(timeouts));
        });
        Ok(HttpModel {
            kind: config.kind,
            base_url: config.base_url.trim_end_matches('/').to_string(),
            model: config.model,
            api_key: config.api_key,
            max_tokens: config.max_tokens,
            system: config.system,
            retry: config.retry,
            tools: ToolCatalog::builtin(),
            mcp: None,
            client,
            client_spec: timeouts,
        })
    }

    /// The HTTP client, once built (waiting for the thread building it, off the async workers).
    async fn client(&self) -> Result<reqwest::Client, ModelError> {
        let built = match self.client.get() {
            Some(built) => built.clone(),
            None => {
                let cell = self.client.clone();
                let spec = self.client_spec;
                tokio::task::spawn_blocking(move || cell.get_or_init(|| build_client(spec)).clone())
                    .await
                    .unwrap_or_else(|e| Err(format!("building the HTTP client stopped: {e}")))
            }
        };
        built.map_err(|message| self.error(message))
    }

    fn url(&self) -> String {
        match self.kind {
            ProviderKind::OpenAi => format!("{}/chat/completions", self.base_url),
            ProviderKind::Anthropic => format!("{}/v1/messages", self.base_url),
        }
    }

    /// An answer that broke off, worth asking again.
    pub fn interrupted(&self, message: String) -> ModelError {
        ModelError::Interrupted {
            provider: self.kind.name().into(),
            message: format!("{} ({})", message, self.url()),
        }
    }

    /// The error for an answer that could not be finished: a cut one is worth asking again.
    pub fn unfinished(&self, why: Unfinished) -> ModelError {
        match why {
            Unfinished::Cut(m) => self.interrupted(m),
            Unfinished::Malformed(m) => self.error(m),
        }
    }

    pub fn error(&self, message: String) -> ModelError {
        ModelError::Provider {
            provider: self.kind.name().into(),
            message: format!("{} ({})", message, self.url()),
        }
    }

    /// POSTs the body, retrying 429 and 5xx with backoff (honouring `Retry-After`), a bounded
    /// number of times. Other statuses are errors at once, with the body's message.
    /// While it waits to try again, `deltas` gets a line that says why, which attempt comes
    /// next and when, so a person watching sees more than "working".
    async fn send(
        &self,
        body: &Value,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<reqwest::Response, ModelError> {
        let url = self.url();
        let client = self.client().await?;
        let mut attempt = 0;
        loop {
            let mut request = client.post(&url).json(body);
            request = match self.kind {
                ProviderKind::OpenAi => match &self.api_key {
                    Some(key) => request.bearer_auth(key),
                    None => request,
                },
                ProviderKind::Anthropic => {
                    let r = request.header("anthropic-version", "2023-06-01");
                    match &self.api_key {
                        Some(key) => r.header("x-api-key", key),
                        None => r,
                    }
                }
            };
            let outcome = request.send().await;
            let (retryable, wait, message) = match outcome {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .map(Duration::from_secs_f64);
                    let text = response.text().await.unwrap_or_default();
                    let detail: String = text.chars().take(300).collect();
                    let retryable = status.as_u16() == 429 || status.is_server_error();
                    (retryable, retry_after, format!("HTTP {status}: {detail}"))
                }
                Err(e) if e.is_connect() || e.is_timeout() => (
                    true,
                    None,
                    format!("cannot reach the server: {}", causes(e)),
                ),
                Err(e) => (false, None, format!("request failed: {}", causes(e))),
            };
            if !retryable || attempt >= self.retry.max_retries {
                let tries = if attempt > 0 {
                    format!(" after {} attempts", attempt + 1)
                } else {
                    String::new()
                };
                return Err(self.error(format!("{message}{tries}")));
            }
            let backoff = self.retry.base_delay * 2u32.saturating_pow(attempt);
            let delay = wait.unwrap_or(backoff).min(self.retry.max_delay);
            let _ = deltas.send(retry_note(
                &message,
                attempt + 2,
                self.retry.max_retries + 1,
                delay,
            ));
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    /// Reads SSE events until the body ends, handing each to `on_event`.
    pub async fn read_sse(
        &self,
        response: reqwest::Response,
        _kind: ProviderKind,
        mut on_event: impl FnMut(SseEvent) -> Result<(), String>,
    ) -> Result<(), ModelError> {
        let mut parser = SseParser::new();
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                let why = if e.is_timeout() {
                    "the stream stalled (read timeout)"
                } else {
                    "the stream broke"
                };
                self.interrupted(format!("{why}: {e}"))
            })?;
            for event in parser.push(&chunk) {
                on_event(event).map_err(|m| self.error(m))?;
            }
        }
        for event in parser.push(b"\n\n") {
            on_event(event).map_err(|m| self.error(m))?;
        }
        Ok(())
    }
}

/// What a person watching reads while a request waits to be sent again:
/// `[cannot reach the server: …; attempt 2 of 4 in 1.5s]`.
fn retry_note(why: &str, next: u32, of: u32, wait: Duration) -> String {
    format!(
        "\n[{why}; attempt {next} of {of} in {:.1}s]\n",
        wait.as_secs_f64()
    )
}

impl ModelClient for HttpModel {
    fn name(&self) -> String {
        format!("{}: {}", self.kind.name(), self.model)
    }

    fn respond<'a>(
        &'a self,
        conversation: &'a [Message],
        deltas: mpsc::UnboundedSender<String>,
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            // An answer that breaks off is asked for again (nothing from it has run); other
            // failures end here. Text already shown is followed by a note, not taken back.
            let mut attempt = 0;
            loop {
                let (tx, mut rx) = mpsc::unbounded_channel::<String>();
                let out = deltas.clone();
                let forward = tokio::spawn(async move {
                    let mut shown = false;
                    while let Some(text) = rx.recv().await {
                        shown = true;
                        let _ = out.send(text);
                    }
                    shown
                });
                let result = self.respond_once(conversation, tx).await;
                let shown = forward.await.unwrap_or(false);
                match result {
                    Err(ModelError::Interrupted { message, .. })
                        if attempt < self.retry.max_retries =>
                    {
                        if shown {
                            let _ = deltas.send("\n[the answer broke off; asking again]\n".into());
                        }
                        let _ = message;
                        let delay = (self.retry.base_delay * 2u32.saturating_pow(attempt))
                            .min(self.retry.max_delay);
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                    }
                    other => return other,
                }
            }
        })
    }
}

impl HttpModel {
    async fn respond_once(
        &self,
        conversation: &[Message],
        deltas: mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, ModelError> {
        if let Some(mcp) = &self.mcp {
            mcp.settle_all(crate::mcp::config::DEFAULT_STARTUP_TIMEOUT)
                .await;
        }
        let mut offered = self.tools.clone();
        for tool in self.mcp.iter().flat_map(|m| m.descriptors()) {
            offered.register(tool);
        }
        match self.kind {
            ProviderKind::OpenAi => {
                let body = openai::request_body(&self.model, &self.system, conversation, &offered);
                let response = self.send(&body, &deltas).await?;
                openai::read_stream(self, response, &deltas).await
            }
            ProviderKind::Anthropic => {
                let body = anthropic::request_body(
                    &self.model,
                    self.max_tokens,
                    &self.system,
                    conversation,
                    &offered,
                );
                let response = self.send(&body, &deltas).await?;
                anthropic::read_stream(self, response, &deltas).await
            }
        }
    }
}

/// What the model is told about its situation.
pub fn system_prompt(workspace: &std::path::Path) -> String {
    format!(
        "You are a coding agent working in the workspace {}. Use the tools to read, search, edit \
         files and run commands there. Every tool call passes an approval gate: some run at once, \
         some wait for a person, some are refused. A refused call comes back with its reasons: \
         respect them, do not retry the same call in another form, and say what you would need \
         instead. Keep changes inside the workspace.",
        workspace.display()
    )
}

/// Why a streamed answer cannot be used.
#[derive(Debug)]
pub enum Unfinished {
    /// The stream broke off before its finish marker.
    Cut(String),
    /// The answer arrived whole but is malformed.
    Malformed(String),
}

impl From<String> for Unfinished {
    fn from(message: String) -> Unfinished {
        Unfinished::Malformed(message)
    }
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unfinished::Cut(m) | Unfinished::Malformed(m) => f.write_str(m),
        }
    }
}

/// A request error and what caused it, without the URL (the error this becomes names it once):
/// "error sending request: client error (Connect): tcp connect error: Connection refused (os
/// error 111)".
fn causes(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_http_address_goes_without_the_systems_certificates() {
        assert!(is_plain_http("http://127.0.0.1:8080/v1"));
        assert!(is_plain_http("HTTP://localhost/v1"));
        assert!(!is_plain_http("https://api.openai.com/v1"));
        assert!(!is_plain_http("http"));
        assert!(!is_plain_http("httpx://host"));
        // Without certificates a TLS server cannot be trusted: the client still builds.
        assert!(build_client(((Duration::from_secs(1), Duration::from_secs(1)), true)).is_ok());
    }
}
