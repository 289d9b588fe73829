//! The page's HTTP side: connections (plain or TLS, HTTP/1.1 through hyper), and the routes.
//! A route is a plain function from the request's head and body to a [`Reply`], run on a
//! blocking thread (it reads and writes the state database), so it is tested without sockets.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::http::request::Parts;
use hyper::http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::Value;

use super::Scope;
use super::page::{self, MarkedPart, Waiting};
use super::pairing::{Guesses, TokenRefused, Tokens};
use crate::clock::now_ms;
use crate::protocol::PairedDevice;
use crate::store::db::{DeviceRow, Store, StoreError};
use crate::store::key::same_text as same;

/// The session cookie's name.
pub const COOKIE: &str = "airlock_device";
/// A form is small: a code, a digest, a token and a reason.
const BODY_LIMIT: usize = 16 * 1024;
/// Connections served at once; more wait to be accepted.
const CONNECTIONS: usize = 32;
/// How long a request's body may take to arrive.
const BODY_TIME: Duration = Duration::from_secs(10);
/// How long one connection may last, keep-alive included: a slot is never held for good.
const CONNECTION_TIME: Duration = Duration::from_secs(60);
const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// What a route answers.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: String,
    pub css: bool,
    pub cookie: Option<String>,
    pub location: Option<String>,
}

impl Reply {
    fn page(status: StatusCode, body: String) -> Reply {
        Reply {
            status,
            body,
            css: false,
            cookie: None,
            location: None,
        }
    }

    fn refused(status: StatusCode, title: &str, text: &str) -> Reply {
        Reply::page(status, page::message(title, text, true, false))
    }
}

/// What every route shares: the state database, the tokens shown, the guesses counted.
pub struct Shared {
    db: PathBuf,
    scope: Scope,
    secure: bool,
    hosts: Vec<String>,
    /// The secret path the page is served under (`/p/<secret>`; empty in tests): the cookie is
    /// scoped to it, so a server on another port of this host (which a browser sends the
    /// host's cookies to) is never sent the device's cookie.
    base: String,
    tokens: Mutex<Tokens>,
    /// Wrong pairing tokens, unknown cookies, and wrong form tokens or codes from a paired
    /// device, each counted on its own: a stranger's guesses never lock a paired phone out.
    tokens_tried: Mutex<Guesses>,
    cookies_tried: Mutex<Guesses>,
    codes_tried: Mutex<Guesses>,
    store: Mutex<Option<Store>>,
}

/// The `Host` values a request may carry: the origin's, and for a loopback address its other
/// loopback names (a page on 127.0.0.1 opened as localhost). Anything else (a DNS-rebinding
/// name pointed at 127.0.0.1) is refused.
pub fn allowed_hosts(origin: &str, address: SocketAddr) -> Vec<String> {
    let authority = origin
        .split_once("://")
        .map_or(origin, |(_, rest)| rest)
        .split('/')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut hosts = vec![authority];
    if address.ip().is_loopback() {
        let port = address.port();
        for name in ["127.0.0.1", "localhost", "[::1]"] {
            hosts.push(format!("{name}:{port}"));
        }
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

impl Shared {
    pub fn new(
        db: PathBuf,
        scope: Scope,
        secure: bool,
        hosts: Vec<String>,
        base: String,
    ) -> Shared {
        Shared {
            base,
            db,
            scope,
            secure,
            hosts,
            tokens: Mutex::new(Tokens::default()),
            tokens_tried: Mutex::new(Guesses::default()),
            cookies_tried: Mutex::new(Guesses::default()),
            codes_tried: Mutex::new(Guesses::default()),
            store: Mutex::new(None),
        }
    }

    /// The state directory (the database's): what the nudge watches.
    pub fn db_dir(&self) -> Option<PathBuf> {
        self.db.parent().map(PathBuf::from)
    }

    /// Holds a new pairing token; when it expires.
    pub fn add_token(&self, token: &str, ttl_ms: u64) -> u64 {
        lock(&self.tokens).add(token, now_ms(), ttl_ms)
    }

    pub fn devices(&self) -> Result<Vec<PairedDevice>, String> {
        let rows = self.with_store(|s| s.devices())?;
        Ok(rows
            .into_iter()
            .map(|d| PairedDevice {
                id: d.id,
                name: d.name,
                created_ms: d.created_ms,
                last_seen_ms: d.last_seen_ms,
            })
            .collect())
    }

    pub fn revoke(&self, id: i64) -> Result<(), String> {
        match self.with_store(|s| s.revoke_device(id, now_ms()))? {
            true => Ok(()),
            false => Err(format!("no paired device has the number {id}")),
        }
    }

    fn with_store<T>(&self, f: impl FnOnce(&Store) -> Result<T, StoreError>) -> Result<T, String> {
        let mut held = lock(&self.store);
        if held.is_none() {
            *held = Some(Store::open(&self.db).map_err(|e| e.to_string())?);
        }
        match held.as_ref() {
            Some(store) => f(store).map_err(|e| e.to_string()),
            None => Err("the state database is not open".into()),
        }
    }

    /// The ids of the requests in scope waiting now (what the nudge compares).
    pub fn waiting_ids(&self) -> Result<Vec<i64>, String> {
        let now = now_ms();
        self.with_store(|s| {
            Ok(s.pending(now)?
                .into_iter()
                .filter(|r| r.signed && self.in_scope(&r.session))
                .map(|r| r.id)
                .collect())
        })
    }

    fn in_scope(&self, session: &str) -> bool {
        match &self.scope {
            Scope::Session(s) => s == session,
            Scope::Everything => true,
        }
    }

    /// Answers one request (head and body), at `now`.
    pub fn route(&self, head: &Parts, body: &[u8], now: u64) -> Reply {
        // Exactly one Host, one of the page's own, and a target that names no other host.
        let mut hosts = head.headers.get_all(header::HOST).iter();
        let host = match (hosts.next(), hosts.next()) {
            (Some(h), None) => h.to_str().ok().map(str::to_ascii_lowercase),
            _ => None,
        };
        let target_ok = head
            .uri
            .authority()
            .is_none_or(|a| self.hosts.contains(&a.as_str().to_ascii_lowercase()));
        if !target_ok || !host.is_some_and(|h| self.hosts.contains(&h)) {
            return Reply::refused(
                StatusCode::MISDIRECTED_REQUEST,
                "wrong address",
                "This page answers only at the address airlock showed.",
            );
        }
        // Under the secret path only; its bare form gets its slash (relative links need it).
        let full = head.uri.path();
        if !self.base.is_empty() && full == self.base {
            return Reply {
                location: Some(format!("{}/", self.base)),
                ..Reply::page(StatusCode::SEE_OTHER, String::new())
            };
        }
        let Some(path) = full.strip_prefix(self.base.as_str()) else {
            return Reply::refused(StatusCode::NOT_FOUND, "not found", "There is no such page.");
        };
        match (&head.method, path) {
            (&Method::GET, "/page.css") => Reply {
                css: true,
                ..Reply::page(StatusCode::OK, page::CSS.to_string())
            },
            (&Method::GET, "/") => self.index(&head.headers, now),
            (&Method::GET, "/pair") => self.pair_form(head, now),
            (&Method::POST, "/pair") => self.posted(head, |s| s.pair(body, now)),
            (&Method::POST, "/answer") => self.posted(head, |s| s.answer(&head.headers, body, now)),
            (_, "/" | "/pair" | "/answer" | "/page.css") => Reply::refused(
                StatusCode::METHOD_NOT_ALLOWED,
                "not allowed",
                "That method is not used here.",
            ),
            _ => Reply::refused(StatusCode::NOT_FOUND, "not found", "There is no such page."),
        }
    }

    /// A form posted from this page, and only from it: a browser names the page a form came
    /// from (`Origin`, `Sec-Fetch-Site`), and one from any other page is refused before
    /// anything is read.
    fn posted(&self, head: &Parts, then: impl FnOnce(&Self) -> Reply) -> Reply {
        let get = |name: &str| head.headers.get(name).and_then(|v| v.to_str().ok());
        let from_here = match (get("origin"), get("sec-fetch-site")) {
            // A browser that hides where the form came from (`Origin: null`) still says
            // whether it was this very site.
            (Some("null"), site) => site == Some("same-origin"),
            (Some(origin), _) => {
                let origin = origin.to_ascii_lowercase();
                origin.split_once("://").is_some_and(|(scheme, host)| {
                    matches!(scheme, "http" | "https") && self.hosts.iter().any(|h| h == host)
                })
            }
            (None, Some(site)) => matches!(site, "same-origin" | "none"),
            // Not a browser (no page to forge a form from): the cookie and form token decide.
            (None, None) => true,
        };
        if !from_here {
            return Reply::refused(
                StatusCode::FORBIDDEN,
                "refused",
                "This form came from another site; nothing was done.",
            );
        }
        then(self)
    }

    fn too_many() -> Reply {
        Reply::refused(
            StatusCode::TOO_MANY_REQUESTS,
            "too many tries",
            "Too many wrong tries in the last minute; wait a minute and try again.",
        )
    }

    /// The paired device the request's cookie names; else the reply for a request with no
    /// cookie, or with one that names no device (counted as a guess).
    fn device(&self, headers: &HeaderMap, now: u64) -> Result<(DeviceRow, String), Reply> {
        let Some(cookie) = cookie(headers) else {
            return Err(self.not_paired());
        };
        match self.with_store(|s| s.device_by_cookie(&cookie, now)) {
            Ok(Some(device)) => Ok((device, cookie)),
            _ => {
                let mut tried = lock(&self.cookies_tried);
                if tried.limited(now) {
                    return Err(Self::too_many());
                }
                tried.wrong(now);
                Err(self.not_paired())
            }
        }
    }

    /// The device cookie's header: scoped to the page's path, for [`IDLE_LIMIT_MS`] from
    /// now (the database forgets a device unused that long).
    ///
    /// [`IDLE_LIMIT_MS`]: crate::store::db::devices::IDLE_LIMIT_MS
    fn set_cookie(&self, cookie: &str) -> String {
        format!(
            "{COOKIE}={cookie}; Path={}/; HttpOnly; SameSite=Strict; Max-Age={}{}",
            self.base,
            crate::store::db::devices::IDLE_LIMIT_MS / 1000,
            if self.secure { "; Secure" } else { "" }
        )
    }

    fn not_paired(&self) -> Reply {
        Reply::refused(
            StatusCode::UNAUTHORIZED,
            "not paired",
            "This device is not paired with airlock (or was revoked). Pair it from the terminal: \
             open the pairing link (or scan the QR code) airlock shows.",
        )
    }

    fn index(&self, headers: &HeaderMap, now: u64) -> Reply {
        let (device, cookie) = match self.device(headers, now) {
            Ok(found) => found,
            Err(reply) => return reply,
        };
        match self.waiting(now) {
            Ok(waiting) => {
                let token = self
                    .with_store(|s| Ok(s.form_token(&cookie)))
                    .unwrap_or_default();
                // Its cookie's lifetime starts again: a device in use is never dropped.
                Reply {
                    cookie: Some(self.set_cookie(&cookie)),
                    ..Reply::page(
                        StatusCode::OK,
                        page::requests(&waiting, &device.name, &token, now),
                    )
                }
            }
            Err(e) => Reply::refused(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot read the requests",
                &format!("The state database cannot be read: {e}"),
            ),
        }
    }

    fn waiting(&self, now: u64) -> Result<Vec<Waiting>, String> {
        self.with_store(|s| {
            let mut out = Vec::new();
            for row in s.pending(now)? {
                if !row.signed || !self.in_scope(&row.session) {
                    continue;
                }
                let Some(code) = s.pending_code(row.id, now)? else {
                    continue;
                };
                let summary: Value = serde_json::from_str(&row.summary).unwrap_or(Value::Null);
                let strings = |v: &Value| -> Vec<String> {
                    v.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|r| r.as_str().map(str::to_string))
                        .collect()
                };
                let parts = summary["parts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| MarkedPart {
                        label: p["label"].as_str().unwrap_or("").to_string(),
                        ruling: p["ruling"].as_str().unwrap_or("ask").to_string(),
                        span: match (p["span"][0].as_u64(), p["span"][1].as_u64()) {
                            (Some(a), Some(b)) => Some((a as usize, b as usize)),
                            _ => None,
                        },
                        why: strings(&p["why"]),
                    })
                    .collect();
                out.push(Waiting {
                    code,
                    digest: row.digest.clone(),
                    session: row.session.clone(),
                    call_id: row.call_id.clone(),
                    tool: row.tool.clone(),
                    agent: summary["agent"]["id"].as_str().map(|id| {
                        format!("{id} ({})", summary["agent"]["task"].as_str().unwrap_or(""))
                    }),
                    risk: summary["risk"].as_str().unwrap_or("?").to_string(),
                    reasons: strings(&summary["reasons"]),
                    parts,
                    preview: summary["preview"].clone(),
                    canonical: row.frozen.canonical.clone(),
                    created_ms: row.created_ms,
                    expires_ms: row.expires_ms,
                });
            }
            Ok(out)
        })
    }

    fn token_refused(&self, why: TokenRefused) -> Reply {
        let text = match why {
            TokenRefused::Expired => {
                "This pairing link expired. Make a new one in the terminal and open that."
            }
            TokenRefused::UnknownOrUsed => {
                "This pairing link was already used, or airlock never made it. Make a new one in \
                 the terminal and open that."
            }
        };
        Reply::refused(StatusCode::FORBIDDEN, "pairing refused", text)
    }

    /// Counts a pairing try before its token is checked; `false`: too many this minute.
    fn try_token(&self, now: u64) -> bool {
        lock(&self.tokens_tried).reserve(now)
    }

    fn pair_form(&self, head: &Parts, now: u64) -> Reply {
        if !self.try_token(now) {
            return Self::too_many();
        }
        let token = form(head.uri.query().unwrap_or("").as_bytes(), "token").unwrap_or_default();
        match lock(&self.tokens).check(&token, now) {
            Ok(()) => {
                lock(&self.tokens_tried).release(now);
                Reply::page(StatusCode::OK, page::pair_form(&token))
            }
            Err(why) => self.token_refused(why),
        }
    }

    fn pair(&self, body: &[u8], now: u64) -> Reply {
        if !self.try_token(now) {
            return Self::too_many();
        }
        let token = form(body, "token").unwrap_or_default();
        let name = form(body, "name").unwrap_or_default();
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 40 {
            return Reply::refused(
                StatusCode::BAD_REQUEST,
                "pairing refused",
                "Give this device a name of 1 to 40 characters.",
            );
        }
        if let Err(why) = lock(&self.tokens).take(&token, now) {
            return self.token_refused(why);
        }
        lock(&self.tokens_tried).release(now);
        let cookie = match crate::store::db::new_secret() {
            Ok(cookie) => cookie,
            Err(e) => {
                return Reply::refused(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "pairing failed",
                    &e.to_string(),
                );
            }
        };
        match self.with_store(|s| s.pair_device(name, &cookie, now)) {
            Ok(_) => Reply {
                cookie: Some(self.set_cookie(&cookie)),
                location: Some(format!("{}/", self.base)),
                ..Reply::page(
                    StatusCode::SEE_OTHER,
                    page::message("paired", "Paired.", false, true),
                )
            },
            Err(e) => Reply::refused(
                StatusCode::INTERNAL_SERVER_ERROR,
                "pairing failed",
                &format!("The state database cannot be written: {e}"),
            ),
        }
    }

    fn answer(&self, headers: &HeaderMap, body: &[u8], now: u64) -> Reply {
        let (device, cookie) = match self.device(headers, now) {
            Ok(found) => found,
            Err(reply) => return reply,
        };
        if !lock(&self.codes_tried).reserve(now) {
            return Self::too_many();
        }
        let expected = self
            .with_store(|s| Ok(s.form_token(&cookie)))
            .unwrap_or_default();
        let given = form(body, "form_token").unwrap_or_default();
        if expected.is_empty() || !same(&given, &expected) {
            return Reply::refused(
                StatusCode::FORBIDDEN,
                "refused",
                "This answer did not come from the page airlock served (its form token is wrong); \
                 nothing was decided. Reload the page and answer there.",
            );
        }
        let code = form(body, "code").unwrap_or_default();
        let digest = form(body, "digest").unwrap_or_default();
        let reason = form(body, "reason")
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty());
        let allow = match form(body, "decision").as_deref() {
            Some("allow") => true,
            Some("deny") => false,
            _ => {
                return Reply::refused(
                    StatusCode::BAD_REQUEST,
                    "refused",
                    "An answer is Allow once or Deny; nothing was decided.",
                );
            }
        };
        let row = self.with_store(|s| s.approval_by_code(&code));
        let row = match row {
            Ok(Some(row)) if self.in_scope(&row.session) => {
                // A right code is no guess.
                lock(&self.codes_tried).release(now);
                row
            }
            Ok(_) => {
                return Reply::refused(
                    StatusCode::NOT_FOUND,
                    "refused",
                    "No request here has this code; nothing was decided.",
                );
            }
            Err(e) => {
                return Reply::refused(StatusCode::INTERNAL_SERVER_ERROR, "refused", &e);
            }
        };
        let back =
            |status, text: &str| Reply::page(status, page::message("refused", text, true, true));
        if !same(&row.digest, &digest) {
            return back(
                StatusCode::CONFLICT,
                &format!(
                    "The request for {} is no longer the one this page showed (it was changed or \
                     judged again); nothing was decided. Reload the page to see it as it stands.",
                    row.call_id
                ),
            );
        }
        let by =
            serde_json::json!({"channel": "page", "device": device.name, "device_id": device.id});
        let decision = if allow {
            serde_json::json!({"decision": "allow_once", "by": by})
        } else {
            serde_json::json!({"decision": "deny", "reason": reason, "by": by})
        };
        match self.with_store(|s| s.decide(&code, &decision.to_string(), now)) {
            Ok(_) => {
                let text = if allow {
                    format!("Allowed {} once. The agent goes on.", row.call_id)
                } else {
                    format!(
                        "Denied {}{}. The agent is told.",
                        row.call_id,
                        reason
                            .as_deref()
                            .map(|r| format!(" (\"{r}\")"))
                            .unwrap_or_default()
                    )
                };
                Reply::page(
                    StatusCode::OK,
                    page::message(if allow { "allowed" } else { "denied" }, &text, false, true),
                )
            }
            Err(e) => back(
                StatusCode::CONFLICT,
                e.to_string().trim_start_matches("refused: "),
            ),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A field of a URL-encoded form (or query): its first value.
fn form(body: &[u8], name: &str) -> Option<String> {
    form_urlencoded::parse(body)
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The session cookie, if the request carries one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

fn response(reply: Reply) -> Response<Full<Bytes>> {
    let mut builder = Response::builder()
        .status(reply.status)
        .header(
            header::CONTENT_TYPE,
            if reply.css {
                "text/css; charset=utf-8"
            } else {
                "text/html; charset=utf-8"
            },
        )
        .header(header::CONTENT_SECURITY_POLICY, CSP)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::X_FRAME_OPTIONS, "DENY")
        .header(header::REFERRER_POLICY, "same-origin")
        .header(header::CACHE_CONTROL, "no-store");
    if let Some(cookie) = &reply.cookie {
        builder = builder.header(header::SET_COOKIE, cookie);
    }
    if let Some(location) = &reply.location {
        builder = builder.header(header::LOCATION, location);
    }
    builder
        .body(Full::new(Bytes::from(reply.body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::from_static(b"error"))))
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let (head, body) = request.into_parts();
    let body = Limited::new(body, BODY_LIMIT).collect();
    let body = match tokio::time::timeout(BODY_TIME, body).await {
        Ok(Ok(body)) => body.to_bytes(),
        Ok(Err(_)) | Err(_) => {
            return response(Reply::refused(
                StatusCode::PAYLOAD_TOO_LARGE,
                "refused",
                "That is more than an answer; nothing was done.",
            ));
        }
    };
    let reply = tokio::task::spawn_blocking(move || shared.route(&head, &body, now_ms())).await;
    response(reply.unwrap_or_else(|_| {
        Reply::refused(
            StatusCode::INTERNAL_SERVER_ERROR,
            "error",
            "airlock failed to answer; nothing was decided.",
        )
    }))
}

/// Serves connections until the task is aborted.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (shared, tls) = (shared.clone(), tls.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let service = hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(handle(shared, request).await) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10));
            let served = async {
                match tls {
                    Some(tls) => {
                        if let Ok(stream) = tls.accept(stream).await {
                            let io = hyper_util::rt::TokioIo::new(stream);
                            let _ = builder.serve_connection(io, service).await;
                        }
                    }
                    None => {
                        let io = hyper_util::rt::TokioIo::new(stream);
                        let _ = builder.serve_connection(io, service).await;
                    }
                }
            };
            let _ = tokio::time::timeout(CONNECTION_TIME, served).await;
        });
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
