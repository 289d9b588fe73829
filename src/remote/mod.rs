//! Approving from another device: a small web page, served by airlock itself, that lists the
//! requests waiting for an answer and answers them with their one-time codes, exactly as
//! `airlock approve CODE` / `airlock deny CODE` would (the first answer wins, wherever it comes
//! from). It is a channel for answers only: nothing on it can start a tool, change a rule or read
//! a file.
//!
//! - **Pairing, not an open port.** It listens on 127.0.0.1 unless given an address, and an
//!   address beyond this machine needs TLS (a certificate given, or a self-signed one made and
//!   pinned by the fingerprint the terminal shows). A device pairs by opening the URL the
//!   terminal shows (a one-time token, [`pairing::TOKEN_TTL_MS`]); the token is exchanged for a
//!   session cookie (HttpOnly, SameSite=Strict, Secure over TLS) whose hash the state database
//!   keeps, signed, until the device is revoked.
//! - **Bound to the call.** Every answer carries the request's code and the digest of the frozen
//!   call it was shown; an answer for a digest no longer waiting is refused.
//! - **No way in from other pages.** No CORS, a Content-Security-Policy that allows only the
//!   page's own style sheet (no script at all), a form token derived from the cookie under the
//!   state key on every answer, the `Origin` and `Host` checked, wrong guesses limited.
//!
//! Imports only `protocol`, `store`, `clock`, `digest` and `visible`.

mod http;
pub mod nudge;
pub mod page;
pub mod pairing;
pub mod qr;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::protocol::{PairedDevice, PairingOffer, RemotePairing};

/// The port the page listens on when no address is given (any free one if it is taken).
pub const DEFAULT_PORT: u16 = 8377;

/// Which requests the page lists and answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One session's (a headless run's).
    Session(String),
    /// Every request waiting on this machine (a cockpit: its own and its inbox).
    Everything,
}

/// How the page is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    Off,
    /// A certificate made once and kept in the state directory (`remote/`), pinned by the
    /// fingerprint the terminal shows.
    SelfSigned,
    Files {
        cert: PathBuf,
        key: PathBuf,
    },
}

#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to listen; `None`: 127.0.0.1:[`DEFAULT_PORT`], or any free port.
    pub listen: Option<SocketAddr>,
    pub tls: Tls,
    /// The address a device opens when it is not the one listened on (a tunnel, a proxy):
    /// the pairing URL uses it, and requests must come to its host.
    pub public_url: Option<String>,
    /// An ntfy-style push URL nudged when a request starts waiting (it carries nothing).
    pub notify_url: Option<String>,
    pub scope: Scope,
    /// The state directory: its database, and where a self-signed certificate is kept.
    pub state: PathBuf,
    /// How long a pairing token answers ([`pairing::TOKEN_TTL_MS`] unless a test says less).
    pub pairing_ttl_ms: u64,
}

/// The page, serving until dropped.
pub struct RemotePage {
    shared: Arc<http::Shared>,
    /// Where it listens.
    pub address: SocketAddr,
    /// The address a device opens (scheme, host and port).
    pub origin: String,
    /// The SHA-256 fingerprint of its certificate, when it serves TLS.
    pub fingerprint: Option<String>,
    pairing_ttl_ms: u64,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl RemotePage {
    /// Starts serving. Refuses an address beyond this machine without TLS, a certificate that
    /// cannot be read, an address that cannot be listened on.
    pub async fn start(settings: Settings) -> Result<RemotePage, String> {
        let listen = settings
            .listen
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)));
        if !listen.ip().is_loopback() && settings.tls == Tls::Off {
            return Err(format!(
                "the approval page would listen on {listen}, beyond this machine, without TLS: \
                 anyone on the network could read the requests on their way. Set \
                 `tls = \"self-signed\"` (or `tls_cert` and `tls_key`) under [remote], or listen \
                 on 127.0.0.1 and reach it through a tunnel"
            ));
        }
        let acceptor = match &settings.tls {
            Tls::Off => None,
            tls => {
                let ip = listen.ip();
                let names: Vec<String> = (!ip.is_unspecified() && !ip.is_loopback())
                    .then(|| ip.to_string())
                    .into_iter()
                    .collect();
                Some(tls::acceptor(tls, &settings.state, &names)?)
            }
        };
        let listener = match tokio::net::TcpListener::bind(listen).await {
            Ok(listener) => listener,
            // The default port taken (another airlock's page): any free one, unless a tunnel
            // or proxy (`public_url`) forwards to it: that would reach whatever holds it.
            Err(e) if settings.listen.is_none() && settings.public_url.is_some() => {
                return Err(format!(
                    "the approval page cannot listen on {listen} ({e}), where `public_url` under \
                     [remote] leads through your tunnel or proxy, and another port would leave \
                     that address to whatever holds it; stop it, or set `listen` under [remote] \
                     (and point the tunnel there)"
                ));
            }
            Err(_) if settings.listen.is_none() => {
                tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
                    .await
                    .map_err(|e| format!("the approval page cannot listen on 127.0.0.1: {e}"))?
            }
            Err(e) => {
                return Err(format!(
                    "the approval page cannot listen on {listen}: {e}; choose another `listen` under [remote]"
                ));
            }
        };
        let address = listener
            .local_addr()
            .map_err(|e| format!("the approval page's address: {e}"))?;
        let secure = acceptor.is_some();
        let scheme = if secure { "https" } else { "http" };
        // Listening on every address: a device opens the page by this machine's name.
        let host_name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty());
        let origin = match (&settings.public_url, &host_name) {
            (Some(url), _) => url.trim_end_matches('/').to_string(),
            (None, Some(name)) if address.ip().is_unspecified() => {
                format!("{scheme}://{name}:{}", address.port())
            }
            (None, _) => format!("{scheme}://{address}"),
        };
        let mut hosts = http::allowed_hosts(&origin, address);
        if address.ip().is_unspecified() {
            let port = address.port();
            hosts.extend(host_name.iter().map(|name| format!("{name}:{port}")));
            hosts.extend(["127.0.0.1", "localhost", "[::1]"].map(|n| format!("{n}:{port}")));
        }
        let fingerprint = acceptor.as_ref().map(|(_, f)| f.clone());
        let base = format!("/p/{}", secret_path(&settings.state)?);
        let shared = Arc::new(http::Shared::new(
            settings.state.join("airlock.db"),
            settings.scope.clone(),
            secure || origin.starts_with("https://"),
            hosts,
            base.clone(),
        ));
        // Every address a device opens is under the secret path.
        let origin = format!("{origin}{base}");
        let mut tasks = vec![tokio::spawn(http::serve(
            listener,
            acceptor.map(|(a, _)| a),
            shared.clone(),
        ))];
        if let Some(url) = settings.notify_url.clone() {
            tasks.push(tokio::spawn(nudge::run(
                url,
                format!("{origin}/"),
                shared.clone(),
            )));
        }
        Ok(RemotePage {
            shared,
            address,
            origin,
            fingerprint,
            pairing_ttl_ms: settings.pairing_ttl_ms,
            tasks,
        })
    }
}

impl RemotePairing for RemotePage {
    fn offer(&self) -> Result<PairingOffer, String> {
        // 128 bits: plenty for a token that lives minutes, pairs once and is rate-limited, and
        // a shorter URL makes a smaller QR code (one a 30-row terminal shows whole).
        let token = pairing::url_secret::<16>()?;
        let expires_ms = self.shared.add_token(&token, self.pairing_ttl_ms);
        let url = format!("{}/pair?token={token}", self.origin);
        Ok(PairingOffer {
            qr: qr::lines(&url)?,
            url,
            expires_ms,
            fingerprint: self.fingerprint.clone(),
            origin: self.origin.clone(),
        })
    }

    fn devices(&self) -> Result<Vec<PairedDevice>, String> {
        self.shared.devices()
    }

    fn revoke(&self, id: i64) -> Result<(), String> {
        self.shared.revoke(id)
    }
}

impl Drop for RemotePage {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The secret part of the page's path: made once (64 bits), kept in the state directory
/// (`remote/path`, 0600) so every airlock process of this user serves the page at the same
/// path and a paired device's cookie (scoped to it) keeps working.
fn secret_path(state: &std::path::Path) -> Result<String, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = state.join("remote");
    let file = dir.join("path");
    // 64 bits in base64url (or in hex, as an earlier airlock kept it).
    let valid = |text: &str| {
        pairing::is_url_secret(text, 8)
            || (text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    if let Ok(text) = std::fs::read_to_string(&file)
        && valid(text.trim())
    {
        return Ok(text.trim().to_string());
    }
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "the approval page's path cannot be kept in {}: {e}",
            dir.display()
        )
    };
    crate::store::private_dir(&dir).map_err(|e| fail(&e))?;
    // 64 bits: another server on this host would have to make the browser guess it, one request
    // a guess, and a shorter link makes a QR code a 30-row terminal shows whole.
    let secret = pairing::url_secret::<8>().map_err(|e| fail(&e))?;
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file);
    match made {
        Ok(mut f) => f.write_all(secret.as_bytes()).map_err(|e| fail(&e))?,
        // Made by another process meanwhile: theirs stands.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(&file).map_err(|e| fail(&e))?;
            if valid(text.trim()) {
                return Ok(text.trim().to_string());
            }
            return Err(fail(&format!(
                "{} is not a path secret; remove it",
                file.display()
            )));
        }
        Err(e) => return Err(fail(&e)),
    }
    Ok(secret)
}
