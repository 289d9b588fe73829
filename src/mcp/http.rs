//! Connecting to a streamable-HTTP server (`url = "https://..."`): rmcp's streamable HTTP
//! transport over airlock's own reqwest client (the one HTTP stack in the build, rustls with the
//! ring provider), with the configured headers and bearer token.
//!
//! The client is built once per process, off the async workers (loading the system's CA
//! certificates takes tens of milliseconds), and shared by every HTTP server. It follows only
//! same-origin 307/308 redirects (the method and body stay, and neither the session id nor a
//! header goes to another host); anything else comes back as an error. Header values and the
//! token never appear in an error: every message from the transport is scrubbed of them.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::mcp::config::ConfiguredServer;
use crate::mcp::handler::Handler;
use crate::mcp::live::{Live, hide};

/// How long connecting to a server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Redirects one request may follow (same origin, 307 or 308 only).
const MAX_REDIRECTS: usize = 5;

static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();

fn build_client() -> Result<reqwest::Client, String> {
    // Installing the provider twice is harmless; the first one wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        // An idle pooled connection whose last body was not read to its end stalls the next
        // request for a TCP delayed ACK (rmcp measured ~40 ms); the requests here are few.
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// The shared client, built on a blocking thread the first time.
async fn client() -> Result<reqwest::Client, String> {
    if let Some(built) = CLIENT.get() {
        return built.clone();
    }
    tokio::task::spawn_blocking(|| CLIENT.get_or_init(build_client).clone())
        .await
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?
}

/// The headers and token to send, and the texts to hide from every message.
struct Credentials {
    headers: HashMap<HeaderName, HeaderValue>,
    bearer: Option<String>,
    secrets: Vec<String>,
}

fn credentials(configured: &ConfiguredServer) -> Result<Credentials, String> {
    let config = &configured.config;
    let mut headers = HashMap::new();
    let mut secrets = Vec::new();
    for (name, value) in &config.headers {
        // `ServerConfig::check` accepted both when the config loaded.
        let (Ok(name), Ok(mut value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) else {
            return Err(format!(
                "a header in [mcp_servers.{}] of {} is not valid",
                configured.name,
                configured.file.display()
            ));
        };
        value.set_sensitive(true);
        secrets.extend(secret_forms(value.to_str().unwrap_or_default()));
        headers.insert(name, value);
    }
    let bearer = match &config.bearer_token_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => {
                secrets.extend(secret_forms(token.trim()));
                Some(token.trim().to_string())
            }
            _ => {
                return Err(format!(
                    "its token variable ${} is not set (`bearer_token_env` in [mcp_servers.{}] of {}); set it, or remove `bearer_token_env`",
                    crate::visible::visible_line(var),
                    configured.name,
                    configured.file.display()
                ));
            }
        },
    };
    Ok(Credentials {
        headers,
        bearer,
        secrets,
    })
}

/// A secret as it may show up in a message: whole, and (for `Bearer xyz`) its token alone.
fn secret_forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_string()];
    if let Some((_, token)) = value.split_once(' ')
        && token.len() >= 4
    {
        forms.push(token.to_string());
    }
    forms
}

/// Connects to the server at `url` and finishes the MCP handshake.
pub(super) async fn start(configured: &ConfiguredServer, url: &str) -> Result<Live, String> {
    let credentials = credentials(configured)?;
    let client = client().await?;
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .custom_headers(credentials.headers)
        .reinit_on_expired_session(true);
    if let Some(token) = credentials.bearer {
        transport_config = transport_config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(client, transport_config);
    let handler = Handler::default();
    let limit = configured.config.startup_timeout();
    let mut secrets = credentials.secrets;
    // reqwest quotes the whole URL in its errors; its query may carry a key.
    if let Some((_, query)) = url.split_once('?') {
        secrets.push(query.to_string());
    }
    let service = tokio::time::timeout(limit, handler.clone().serve(transport))
        .await
        .map_err(|_| {
            format!(
                "it did not finish the MCP handshake within {}s (is {} the server's MCP endpoint?)",
                limit.as_secs(),
                crate::visible::visible_line(&shown_url(url))
            )
        })?
        .map_err(|e| {
            hide(
                &format!(
                    "the MCP handshake with {} failed: {}",
                    crate::visible::visible_line(&shown_url(url)),
                    tidy(&e.to_string())
                ),
                &secrets,
            )
        })?;
    Ok(Live::remote(service, handler, secrets))
}

/// rmcp's transport error without the Rust type names it carries, and at most a few hundred
/// characters of it (a server's error page can be long).
pub(super) fn tidy(error: &str) -> String {
    let error = match (error.find("Transport ["), error.find("] error: ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &error[..start], &error[end + "] error: ".len()..])
        }
        _ => error.to_string(),
    };
    let error = error.replace("Send message error ", "");
    match error.char_indices().nth(400) {
        Some((cut, _)) => format!("{}…", &error[..cut]),
        None => error,
    }
}

/// The URL as shown in a message: without its query, which may carry a key.
fn shown_url(url: &str) -> String {
    match url.split_once('?') {
        Some((base, _)) => format!("{base}?…"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::ServerConfig;

    fn configured(config: ServerConfig) -> ConfiguredServer {
        ConfiguredServer {
            name: "web".into(),
            config,
            file: "config.toml".into(),
            pin_key: "web".into(),
            from_project: false,
        }
    }

    #[test]
    fn header_values_and_the_token_are_hidden_from_messages() {
        let credentials = credentials(&configured(ServerConfig {
            url: Some("https://h/mcp".into()),
            headers: [("Authorization".into(), "Bearer s3cr3t-token".into())].into(),
            ..Default::default()
        }))
        .unwrap();
        let said = hide(
            "request failed: Authorization: Bearer s3cr3t-token; token s3cr3t-token",
            &credentials.secrets,
        );
        assert!(!said.contains("s3cr3t"), "{said}");
    }

    #[test]
    fn a_missing_token_variable_is_an_error_naming_it() {
        let err = credentials(&configured(ServerConfig {
            url: Some("https://h/mcp".into()),
            bearer_token_env: Some("AIRLOCK_TEST_SURELY_UNSET_TOKEN".into()),
            ..Default::default()
        }))
        .err()
        .unwrap();
        assert!(
            err.contains("$AIRLOCK_TEST_SURELY_UNSET_TOKEN is not set"),
            "{err}"
        );
    }

    #[test]
    fn transport_errors_lose_their_type_names() {
        assert_eq!(
            tidy(
                "Send message error Transport [rmcp::transport::worker::WorkerTransport<X<reqwest::Client>>] error: HTTP 404 Not Found, when send initialize request"
            ),
            "HTTP 404 Not Found, when send initialize request"
        );
    }

    #[test]
    fn a_query_is_not_shown() {
        assert_eq!(shown_url("https://h/mcp?key=abc"), "https://h/mcp?…");
        assert_eq!(shown_url("https://h/mcp"), "https://h/mcp");
    }
}
