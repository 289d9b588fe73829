#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Attacks on the approval page (`exec --approvals remote`), with the real binary and raw HTTP
//! over loopback: the host and origin checks, the cookie and the form token, the form's fields,
//! pairing, the guess limit, connection slots, and what a paired device can and cannot do.
//!
//! Each test names the property that should hold. A test that fails is a weakness found; see
//! the comment above it.

mod browser;
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::World;
use common::page::PageRun;
use sha2::Digest;

const COMMAND: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "ok", "expect": ["any"]}
]}"#;

const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");

/// An HTTP response, as bytes came back.
#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

fn parse(bytes: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// Sends `raw` as it is and reads until the server closes (or 20 s pass).
fn send(addr: &str, raw: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = stream.write_all(raw);
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf);
    parse(&buf)
}

/// A well-formed request to the page at `addr`, with its own `Host`.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut raw = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        raw.push_str(&format!("{k}: {v}\r\n"));
    }
    raw.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    send(addr, raw.as_bytes())
}

fn cookie_header(cookie: &str) -> String {
    format!("airlock_device={cookie}")
}

/// `host:port` of the page.
fn addr(run: &PageRun) -> String {
    run.origin.trim_start_matches("http://").to_string()
}

fn token(run: &PageRun) -> String {
    run.pairing.split("token=").nth(1).unwrap().to_string()
}

fn encode(pairs: &[(&str, &str)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

/// Pairs a device named `name` with the run's token; its session cookie.
fn pair(run: &PageRun, name: &str) -> String {
    let reply = pair_with(&addr(run), &token(run), name);
    assert_eq!(reply.status, 303, "{reply:?}");
    cookie_of(&reply).unwrap()
}

fn pair_with(addr: &str, token: &str, name: &str) -> Reply {
    request(
        addr,
        "POST",
        "/pair",
        &[FORM],
        &encode(&[("token", token), ("name", name)]),
    )
}

fn cookie_of(reply: &Reply) -> Option<String> {
    let set = reply.header("set-cookie")?;
    let value = set.strip_prefix("airlock_device=")?;
    Some(value.split(';').next().unwrap().to_string())
}

/// The page as the device with `cookie` sees it.
fn index(addr: &str, cookie: &str) -> Reply {
    request(addr, "GET", "/", &[("Cookie", &cookie_header(cookie))], "")
}

/// Every value of the hidden field `name` on a page, in order, without repeats.
fn values(body: &str, name: &str) -> Vec<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let mut out: Vec<String> = Vec::new();
    for piece in body.split(&marker).skip(1) {
        let v = piece.split('"').next().unwrap().to_string();
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// What the page shows the device to answer its one request with: (code, digest, form token).
fn shown(addr: &str, cookie: &str) -> (String, String, String) {
    let page = index(addr, cookie);
    assert_eq!(page.status, 200, "{page:?}");
    let code = values(&page.body, "code");
    assert_eq!(code.len(), 1, "one request on the page: {}", page.body);
    (
        code[0].clone(),
        values(&page.body, "digest")[0].clone(),
        values(&page.body, "form_token")[0].clone(),
    )
}

fn answer(addr: &str, cookie: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let cookie = cookie_header(cookie);
    let mut all = vec![FORM, ("Cookie", cookie.as_str())];
    all.extend_from_slice(headers);
    request(addr, "POST", "/answer", &all, body)
}

/// The stored state of the approval whose code is `code` (hashed as airlock hashes it).
fn state_of(w: &World, code: &str) -> String {
    let normal: String = code
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase();
    let hash: String = sha2::Sha256::digest(normal.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    w.query(&format!(
        "SELECT state FROM approvals WHERE code_hash = '{hash}'"
    ))
}

/// A run waiting at its first request.
fn waiting(w: &World) -> PageRun {
    let run = PageRun::start(w, &[]);
    run.wait_for("approval_requested");
    run
}

// ---------------------------------------------------------------------------------------------
// The Host check.

#[test]
fn only_the_pages_own_host_names_are_served_whatever_the_spelling() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let port = addr.rsplit(':').next().unwrap().to_string();
    let c = cookie_header(&cookie);
    for host in [
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        format!("127.0.0.1.:{port}"),
        format!("localhost.:{port}"),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{port}.evil.example"),
        format!("127.0.0.1:{port}@evil.example"),
        format!("evil.example@127.0.0.1:{port}"),
        format!("127.1:{port}"),
        format!("2130706433:{port}"),
        format!("0x7f000001:{port}"),
        format!("[::ffff:127.0.0.1]:{port}"),
        format!("[0:0:0:0:0:0:0:1]:{port}"),
        format!("127.0.0.1:0{port}"),
        format!("127.0.0.1:{port}/"),
        format!("127.0.0.1:{port}, evil.example"),
    ] {
        let reply = send(
            &addr,
            format!("GET / HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_ne!(reply.status, 200, "Host: {host} was served");
        assert!(!reply.body.contains("name=\"code\""), "Host: {host}");
    }
    // No Host at all (HTTP/1.0).
    let reply = send(
        &addr,
        format!("GET / HTTP/1.0\r\nCookie: {c}\r\n\r\n").as_bytes(),
    );
    assert_ne!(reply.status, 200, "{reply:?}");
    // The page's own names, in any case, are.
    for host in [
        addr.clone(),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
    ] {
        let reply = send(
            &addr,
            format!("GET / HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(reply.status, 200, "Host: {host}: {reply:?}");
    }
}

/// FAILS: hyper hands the route the first of two `Host` headers, and the route checks only that
/// one. RFC 9112 §3.2 requires a 400 for more than one Host. No browser sends this, but a proxy
/// or tunnel in front (the `public_url` setup) may route on the other one.
#[test]
fn a_request_with_two_host_headers_is_not_served() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let reply = send(
        &addr,
        format!(
            "GET / HTTP/1.1\r\nHost: {addr}\r\nHost: evil.example\r\nCookie: {}\r\nConnection: close\r\n\r\n",
            cookie_header(&cookie)
        )
        .as_bytes(),
    );
    assert_ne!(reply.status, 200, "{reply:?}");
}

/// FAILS: with an absolute-form request target the target's authority, not `Host`, names the
/// host (RFC 9112 §3.2.2), but the route checks only `Host`.
#[test]
fn an_absolute_form_request_for_another_host_is_not_served() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let reply = send(
        &addr,
        format!(
            "GET http://evil.example/ HTTP/1.1\r\nHost: {addr}\r\nCookie: {}\r\nConnection: close\r\n\r\n",
            cookie_header(&cookie)
        )
        .as_bytes(),
    );
    assert_ne!(reply.status, 200, "{reply:?}");
}

// ---------------------------------------------------------------------------------------------
// The Origin check.

#[test]
fn an_answer_from_any_other_origin_is_refused_however_the_origin_is_spelled() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    let port = addr.rsplit(':').next().unwrap().to_string();
    let body = encode(&[
        ("code", &code),
        ("digest", &digest),
        ("form_token", &token),
        ("decision", "deny"),
    ]);
    let evil_port = format!("http://127.0.0.1:{}", port.parse::<u32>().unwrap() + 1);
    let with_port_suffix = format!("http://127.0.0.1:{port}.evil.example");
    let with_slash = format!("http://{addr}/");
    let userinfo = format!("http://{addr}@evil.example");
    let variants: Vec<Vec<(&str, &str)>> = vec![
        vec![("Origin", "null")],
        vec![("Origin", "null"), ("Sec-Fetch-Site", "cross-site")],
        vec![("Origin", "null"), ("Sec-Fetch-Site", "same-site")],
        vec![("Origin", "null"), ("Sec-Fetch-Site", "none")],
        vec![("Origin", "http://evil.example")],
        vec![("Origin", &evil_port)],
        vec![("Origin", &with_port_suffix)],
        vec![("Origin", &with_slash)],
        vec![("Origin", &userinfo)],
        vec![("Origin", "file://")],
        vec![("Origin", "chrome-extension://abcdef")],
        vec![("Origin", "")],
        vec![("Sec-Fetch-Site", "same-site")],
        vec![("Sec-Fetch-Site", "cross-site")],
        // A forged same-origin claim next to a foreign Origin: the Origin decides.
        vec![
            ("Origin", "http://evil.example"),
            ("Sec-Fetch-Site", "same-origin"),
        ],
    ];
    for headers in &variants {
        let reply = answer(&addr, &cookie, headers, &body);
        assert_eq!(reply.status, 403, "{headers:?}: {reply:?}");
    }
    assert_eq!(state_of(&w, &code), "pending");
    // The page's own origin (in any case) answers.
    let own = format!("HTTP://{}", addr.to_ascii_uppercase());
    let reply = answer(&addr, &cookie, &[("Origin", &own)], &body);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(state_of(&w, &code), "denied");
}

// ---------------------------------------------------------------------------------------------
// Cookies and form tokens.

#[test]
fn with_two_device_cookies_the_device_and_its_form_token_come_from_the_same_one() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let a = pair(&run, "phone");
    // A cookie that names no device (one a page on another port of this host could set).
    let b = "b".repeat(64);
    let (code, digest, token_a) = shown(&addr, &a);
    // Device A's cookie first, a bogus one second, with a form token that is not A's: refused.
    let both = format!("airlock_device={a}; airlock_device={b}");
    let body = |token: &str| {
        encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", token),
            ("decision", "deny"),
        ])
    };
    let reply = request(
        &addr,
        "POST",
        "/answer",
        &[FORM, ("Cookie", &both)],
        &body(&"0".repeat(64)),
    );
    assert_eq!(reply.status, 403, "{reply:?}");
    // A bogus cookie first and A's second: the bogus one is the device, and it is no device.
    let swapped = format!("airlock_device={b}; airlock_device={a}");
    let reply = request(
        &addr,
        "POST",
        "/answer",
        &[FORM, ("Cookie", &swapped)],
        &body(&token_a),
    );
    assert_eq!(reply.status, 401, "{reply:?}");
    // In two Cookie headers, the same.
    let reply = request(
        &addr,
        "POST",
        "/answer",
        &[
            FORM,
            ("Cookie", &format!("airlock_device={b}")),
            ("Cookie", &format!("airlock_device={a}")),
        ],
        &body(&token_a),
    );
    assert_eq!(reply.status, 401, "{reply:?}");
    // Spelled differently, the cookie is not the device's.
    for spelled in [
        format!("airlock_device=\"{a}\""),
        format!("AIRLOCK_DEVICE={a}"),
        format!("airlock_device ={a}"),
        format!("airlock_device={}", a.to_ascii_uppercase()),
    ] {
        let reply = request(
            &addr,
            "POST",
            "/answer",
            &[FORM, ("Cookie", &spelled)],
            &body(&token_a),
        );
        assert_eq!(reply.status, 401, "{spelled}: {reply:?}");
    }
    assert_eq!(state_of(&w, &code), "pending");
}

#[test]
fn a_revoked_devices_cookie_and_form_token_answer_nothing() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    // What `d` in F6 does (Store::revoke_device).
    assert_eq!(
        w.sql("UPDATE paired_devices SET revoked_ms = 1 WHERE revoked_ms IS NULL"),
        1
    );
    assert_eq!(index(&addr, &cookie).status, 401);
    let reply = answer(
        &addr,
        &cookie,
        &[],
        &encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", &token),
            ("decision", "allow"),
        ]),
    );
    assert_eq!(reply.status, 401, "{reply:?}");
    assert_eq!(state_of(&w, &code), "pending");
    assert!(!w.path("ws/made.txt").exists());
}

// ---------------------------------------------------------------------------------------------
// The answer form's fields.

#[test]
fn a_second_code_field_cannot_answer_a_request_other_than_the_one_checked() {
    let w = World::new(COMMAND);
    let run_a = waiting(&w);
    let run_b = waiting(&w);
    let (addr_a, addr_b) = (addr(&run_a), addr(&run_b));
    assert_ne!(addr_a, addr_b);
    let cookie = pair(&run_a, "phone");
    // Each session-scoped page lists only its own run's request (a device is paired for the
    // machine, so the same cookie reads both).
    let (code_a, digest_a, token) = shown(&addr_a, &cookie);
    let (code_b, digest_b, _) = shown(&addr_b, &cookie);
    assert_ne!(code_a, code_b);
    let a_page = index(&addr_a, &cookie).body;
    assert!(!a_page.contains(&code_b), "run B's request is on A's page");
    let post = |pairs: &[(&str, &str)]| answer(&addr_a, &cookie, &[], &encode(pairs));
    // B's request answered on A's page: refused.
    let reply = post(&[
        ("code", &code_b),
        ("digest", &digest_b),
        ("form_token", &token),
        ("decision", "allow"),
    ]);
    assert_eq!(reply.status, 404, "{reply:?}");
    // B's code first, A's second: the first is the one checked, and it is refused.
    let reply = post(&[
        ("code", &code_b),
        ("digest", &digest_b),
        ("code", &code_a),
        ("digest", &digest_a),
        ("form_token", &token),
        ("decision", "allow"),
    ]);
    assert_eq!(reply.status, 404, "{reply:?}");
    // A wrong digest first, the right one second: refused.
    let reply = post(&[
        ("code", &code_a),
        ("digest", &"0".repeat(64)),
        ("digest", &digest_a),
        ("form_token", &token),
        ("decision", "allow"),
    ]);
    assert_eq!(reply.status, 409, "{reply:?}");
    // A wrong form token first, the right one second: refused.
    let reply = post(&[
        ("code", &code_a),
        ("digest", &digest_a),
        ("form_token", &"0".repeat(64)),
        ("form_token", &token),
        ("decision", "allow"),
    ]);
    assert_eq!(reply.status, 403, "{reply:?}");
    assert_eq!(state_of(&w, &code_a), "pending");
    assert_eq!(state_of(&w, &code_b), "pending");
    // A's code first and B's second: A is answered (deny first, then allow: the first counts),
    // B is not.
    let reply = post(&[
        ("code", &code_a),
        ("digest", &digest_a),
        ("code", &code_b),
        ("digest", &digest_b),
        ("form_token", &token),
        ("decision", "deny"),
        ("decision", "allow"),
    ]);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(state_of(&w, &code_a), "denied");
    assert_eq!(state_of(&w, &code_b), "pending");
    // B's own page, with B's code, still answers it.
    let reply = answer(
        &addr_b,
        &cookie,
        &[],
        &encode(&[
            ("code", &code_b),
            ("digest", &digest_b),
            ("form_token", &token),
            ("decision", "deny"),
        ]),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(state_of(&w, &code_b), "denied");
    assert!(!w.path("ws/made.txt").exists());
}

#[test]
fn nothing_on_the_page_allows_for_the_session_notes_or_changes_the_call() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    let base = [
        ("code", code.as_str()),
        ("digest", digest.as_str()),
        ("form_token", token.as_str()),
    ];
    for decision in [
        "allow_session",
        "allow_once",
        "session",
        "ALLOW",
        "allow ",
        "",
    ] {
        let mut pairs = base.to_vec();
        pairs.push(("decision", decision));
        let reply = answer(&addr, &cookie, &[], &encode(&pairs));
        assert_eq!(reply.status, 400, "{decision:?}: {reply:?}");
    }
    assert_eq!(state_of(&w, &code), "pending");
    // Fields the page does not have are ignored: what is allowed is the frozen call, once.
    let mut pairs = base.to_vec();
    pairs.extend([
        ("decision", "allow"),
        ("note", "and also run rm -rf ~"),
        ("command", "echo pwned >> pwned.txt"),
        ("hunks", "1"),
        ("session", "1"),
        ("scope", "session"),
        ("amend", r#"{"command":"echo pwned >> pwned.txt"}"#),
    ]);
    let reply = answer(&addr, &cookie, &[], &encode(&pairs));
    assert_eq!(reply.status, 200, "{reply:?}");
    let started = run.wait_for("tool_started");
    assert!(
        started.to_string().contains("echo ran >> made.txt"),
        "{started}"
    );
    run.wait_for("turn_finished");
    let decision: serde_json::Value =
        serde_json::from_str(&w.query("SELECT decision FROM approvals ORDER BY id LIMIT 1"))
            .unwrap();
    assert_eq!(decision["decision"], "allow_once", "{decision}");
    let keys: Vec<&String> = decision.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["by", "decision"], "{decision}");
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
    assert!(!w.path("ws/pwned.txt").exists());
}

#[test]
fn an_answered_request_is_not_answered_again_from_the_page() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    let body = |decision: &str| {
        encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", &token),
            ("decision", decision),
        ])
    };
    assert_eq!(answer(&addr, &cookie, &[], &body("deny")).status, 200);
    // Replayed, or flipped, the same form decides nothing.
    for decision in ["allow", "deny", "allow"] {
        let reply = answer(&addr, &cookie, &[], &body(decision));
        assert_eq!(reply.status, 409, "{reply:?}");
    }
    run.wait_for("turn_finished");
    assert_eq!(state_of(&w, &code), "denied");
    assert!(!w.path("ws/made.txt").exists());
}

#[test]
fn an_answer_after_the_request_timed_out_decides_nothing() {
    let w = World::new(COMMAND);
    let dir = w.path("home/.config/airlock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "approval_timeout_secs = 2\n").unwrap();
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    run.wait_for("tool_denied");
    let reply = answer(
        &addr,
        &cookie,
        &[],
        &encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", &token),
            ("decision", "allow"),
        ]),
    );
    assert_eq!(reply.status, 409, "{reply:?}");
    assert_ne!(state_of(&w, &code), "approved");
    run.wait_for("turn_finished");
    assert!(!w.path("ws/made.txt").exists());
}

// ---------------------------------------------------------------------------------------------
// Pairing.

#[test]
fn a_pairing_token_pairs_exactly_one_device_even_when_raced() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let token = token(&run);
    let barrier = Arc::new(Barrier::new(12));
    let racers: Vec<_> = (0..12)
        .map(|i| {
            let (addr, token, barrier) = (addr.clone(), token.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                pair_with(&addr, &token, &format!("racer {i}")).status
            })
        })
        .collect();
    let statuses: Vec<u16> = racers.into_iter().map(|r| r.join().unwrap()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 303).count(),
        1,
        "{statuses:?}"
    );
    // Replayed afterwards: refused, and no new cookie.
    let replay = pair_with(&addr, &token, "late");
    assert_eq!(replay.status, 403, "{replay:?}");
    assert!(cookie_of(&replay).is_none());
    assert_eq!(
        w.query("SELECT CAST(count(*) AS TEXT) FROM paired_devices"),
        "1"
    );
}

#[test]
fn a_pairing_posted_from_another_origin_is_refused_and_leaves_the_token_for_its_owner() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let token = token(&run);
    for origin in ["http://evil.example", "null"] {
        let reply = request(
            &addr,
            "POST",
            "/pair",
            &[FORM, ("Origin", origin)],
            &encode(&[("token", &token), ("name", "evil")]),
        );
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
        assert!(cookie_of(&reply).is_none());
    }
    pair(&run, "phone");
}

#[test]
fn the_pairing_page_leaks_its_token_nowhere() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let token = token(&run);
    let form = request(&addr, "GET", &format!("/pair?token={token}"), &[], "");
    assert_eq!(form.status, 200, "{form:?}");
    assert_eq!(
        form.header("referrer-policy").as_deref(),
        Some("same-origin")
    );
    assert_eq!(form.header("cache-control").as_deref(), Some("no-store"));
    assert_eq!(form.header("x-frame-options").as_deref(), Some("DENY"));
    let csp = form.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && !csp.contains("script-src"));
    assert!(csp.contains("frame-ancestors 'none'"));
    assert!(form.header("access-control-allow-origin").is_none());
    // Nothing on it is loaded from, or links to, anywhere else.
    assert!(
        !form.body.contains("http://")
            && !form.body.contains("https://")
            && !form.body.contains("//"),
        "{}",
        form.body
    );
    let paired = pair_with(&addr, &token, "phone");
    assert_eq!(paired.header("location").as_deref(), Some("/"));
    let set = paired.header("set-cookie").unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains(&token) && !set.contains("Domain"), "{set}");
}

#[test]
fn a_devices_name_is_text_on_the_page_and_in_the_audit_never_markup_or_escapes() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    // Names that are empty or too long pair nothing (and leave the token usable).
    for bad in ["", "   ", &"x".repeat(41)] {
        let reply = pair_with(&addr, &token(&run), bad);
        assert_eq!(reply.status, 400, "{bad:?}");
    }
    let name = "<img src=x onerror=alert(1)>\u{1b}[2J\u{202e}\u{7}x";
    let cookie = pair(&run, name);
    let page = index(&addr, &cookie);
    assert_eq!(page.status, 200);
    for hidden in ["<img", "\u{1b}", "\u{202e}", "\u{7}"] {
        assert!(!page.body.contains(hidden), "{hidden:?} reached the page");
    }
    assert!(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"));
    let (code, digest, token) = shown(&addr, &cookie);
    let reply = answer(
        &addr,
        &cookie,
        &[],
        &encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", &token),
            ("decision", "deny"),
            ("reason", "no \u{1b}]0;owned\u{7} \u{202e}way"),
        ]),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    for hidden in ["\u{1b}", "\u{202e}", "\u{7}"] {
        assert!(!reply.body.contains(hidden), "{hidden:?} in the reply");
    }
    run.wait_for("turn_finished");
    let audit = w.airlock(&["audit", "show"], &[]);
    let shown = common::stdout(&audit);
    assert!(shown.contains("deny by user"), "{shown}");
    for hidden in ["\u{1b}", "\u{202e}", "\u{7}"] {
        assert!(!shown.contains(hidden), "{hidden:?} in audit show: {shown}");
    }
}

/// FAILS: `Store::decide` (src/store/db/approvals.rs) tells an allow from a deny by looking for
/// the substring `"deny"` anywhere in the decision's JSON, and the page's decision carries the
/// device's name (`"by":{"device":"deny"}`). A phone named `deny` that taps **Allow once** is
/// told "Allowed c1 once", but the request is stored (and acted on) as denied.
#[test]
fn a_devices_name_cannot_change_what_its_answer_decides() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "deny");
    let (code, digest, token) = shown(&addr, &cookie);
    let reply = answer(
        &addr,
        &cookie,
        &[],
        &encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", &token),
            ("decision", "allow"),
        ]),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("Allowed c1 once"), "{}", reply.body);
    run.wait_for("turn_finished");
    assert_eq!(state_of(&w, &code), "approved", "the page said allowed");
    assert!(w.path("ws/made.txt").exists(), "the allowed call never ran");
}

// ---------------------------------------------------------------------------------------------
// The guess limit.

#[test]
fn every_kind_of_wrong_guess_counts_and_past_twenty_even_a_right_token_is_refused() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let real = token(&run);
    for i in 0..5 {
        let bogus = format!("{i:064}");
        assert_eq!(index(&addr, &bogus).status, 401);
        let reply = request(&addr, "GET", &format!("/pair?token={i:032}"), &[], "");
        assert_eq!(reply.status, 403);
        assert_eq!(pair_with(&addr, &format!("{i:032}"), "x").status, 403);
        let reply = answer(
            &addr,
            &bogus,
            &[],
            "code=A&digest=b&form_token=c&decision=deny",
        );
        assert_eq!(reply.status, 401);
    }
    // The 21st, right this time: refused all the same.
    assert_eq!(pair_with(&addr, &real, "phone").status, 429);
    let reply = request(&addr, "GET", &format!("/pair?token={real}"), &[], "");
    assert_eq!(reply.status, 429);
}

/// FAILS: the limit is one counter for the whole page, checked before the cookie is. Any program
/// that reaches the port (anyone on the network with `listen` beyond loopback) sends 20 bogus
/// cookies a minute and the paired phone gets "too many tries" on every page load and answer,
/// for as long as it keeps doing so. (Fail-safe for approvals: nothing is allowed, the requests
/// time out as denied; but the person is locked out of the page.)
#[test]
fn an_unpaired_client_cannot_lock_the_paired_device_out() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    for i in 0..20 {
        assert_eq!(index(&addr, &format!("{i:064}")).status, 401);
    }
    let page = index(&addr, &cookie);
    assert_eq!(
        page.status, 200,
        "the paired phone was locked out: {page:?}"
    );
}

/// Sends `n` wrong cookies to the page at once; how many were checked (401, not 429).
fn burst(addr: &str, n: usize) -> usize {
    let barrier = Arc::new(Barrier::new(n));
    let guesses: Vec<_> = (0..n)
        .map(|i| {
            let (addr, barrier) = (addr.to_string(), barrier.clone());
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&addr).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(20)))
                    .unwrap();
                let raw = format!(
                    "GET / HTTP/1.1\r\nHost: {addr}\r\nCookie: airlock_device={i:064}\r\nConnection: close\r\n\r\n"
                );
                barrier.wait();
                stream.write_all(raw.as_bytes()).unwrap();
                let mut buf = Vec::new();
                let _ = stream.read_to_end(&mut buf);
                parse(&buf).status
            })
        })
        .collect();
    guesses
        .into_iter()
        .map(|g| g.join().unwrap())
        .filter(|s| *s == 401)
        .count()
}

/// FAILS (racy: six fresh pages make a pass unlikely): `Shared::limited` is
/// checked, and `Shared::wrong` counted, in separate critical sections with the database lookup
/// (and, on a fresh page, `Store::open`) between them, so guesses sent at once all pass the
/// check before any is counted: up to 32 (the connection slots) get checked, not 20.
#[test]
fn a_burst_of_guesses_at_once_gets_no_more_than_twenty_checked() {
    for _ in 0..6 {
        let w = World::new(COMMAND);
        let run = waiting(&w);
        let checked = burst(&addr(&run), 32);
        assert!(checked <= 20, "{checked} guesses were checked in a minute");
    }
}

// ---------------------------------------------------------------------------------------------
// Connections, methods, paths, bodies.

/// A fresh request is answered within a few seconds.
fn answers_soon(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return false;
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let raw = format!("GET /page.css HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(raw.as_bytes()).is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf);
    parse(&buf).status == 200
}

#[test]
fn connections_that_send_no_whole_head_give_their_slots_back() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    // 32 slots: half send nothing, half start a head and never end it.
    let held: Vec<TcpStream> = (0..32)
        .map(|i| {
            let mut s = TcpStream::connect(&addr).unwrap();
            if i % 2 == 1 {
                s.write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
                    .unwrap();
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(12));
    assert!(answers_soon(&addr), "the page is still held");
    drop(held);
}

/// FAILS: the header read has a 10 s timeout, but the body does not (`handle` collects it with
/// no deadline). 32 connections that send a head announcing a body and then nothing hold all 32
/// slots for ever; the accept loop waits for a slot, so the page answers no one, the paired phone
/// included. No cookie is needed.
#[test]
fn connections_that_never_send_their_body_give_their_slots_back() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let held: Vec<TcpStream> = (0..32)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(
                format!(
                    "POST /answer HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
                )
                .as_bytes(),
            )
            .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(12));
    assert!(answers_soon(&addr), "32 stalled bodies hold the page");
    drop(held);
}

#[test]
fn no_method_but_get_and_post_does_anything_and_there_is_no_cors() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let c = cookie_header(&cookie);
    for (method, path) in [
        ("HEAD", "/"),
        ("OPTIONS", "/answer"),
        ("OPTIONS", "*"),
        ("PUT", "/answer"),
        ("DELETE", "/"),
        ("PATCH", "/answer"),
        ("TRACE", "/"),
        ("GET", "/answer"),
        ("POST", "/"),
        ("POST", "/page.css"),
    ] {
        let reply = request(
            &addr,
            method,
            path,
            &[
                ("Cookie", &c),
                ("Origin", "http://evil.example"),
                ("Access-Control-Request-Method", "POST"),
            ],
            "",
        );
        assert!(
            reply.status >= 400,
            "{method} {path} answered {}",
            reply.status
        );
        assert!(
            reply.header("access-control-allow-origin").is_none(),
            "{method} {path}"
        );
        assert!(
            !reply.body.contains("name=\"form_token\""),
            "{method} {path}"
        );
    }
}

#[test]
fn no_path_reads_a_file() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let c = cookie_header(&cookie);
    for path in [
        "/../../../../../../etc/passwd",
        "/page.css/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "//etc/passwd",
        "/ws/calc.py",
        "/state/airlock.key",
        "/airlock.db",
        "/remote/key.pem",
        "/page.css?../../etc/passwd",
    ] {
        let reply = request(&addr, "GET", path, &[("Cookie", &c)], "");
        assert!(!reply.body.contains("root:"), "{path}");
        assert!(!reply.body.contains("return a - b"), "{path}");
        assert!(
            reply.status == 404
                || reply.status == 400
                || reply
                    .header("content-type")
                    .is_some_and(|t| t.starts_with("text/css")),
            "{path}: {reply:?}"
        );
    }
}

#[test]
fn an_oversized_answer_is_refused_and_decides_nothing() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    let padding = "x".repeat(20 * 1024);
    let body = encode(&[
        ("code", &code),
        ("digest", &digest),
        ("form_token", &token),
        ("decision", "deny"),
        ("reason", &padding),
    ]);
    assert_eq!(answer(&addr, &cookie, &[], &body).status, 413);
    // Chunked, no length given.
    let chunked = format!(
        "POST /answer HTTP/1.1\r\nHost: {addr}\r\nCookie: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        cookie_header(&cookie),
        body.len()
    );
    assert_eq!(send(&addr, chunked.as_bytes()).status, 413);
    assert_eq!(state_of(&w, &code), "pending");
}

#[test]
fn a_request_framed_two_ways_decides_nothing() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&addr, &cookie);
    let body = encode(&[
        ("code", &code),
        ("digest", &digest),
        ("form_token", &token),
        ("decision", "allow"),
    ]);
    let c = cookie_header(&cookie);
    // Two lengths that disagree.
    let two_lengths = format!(
        "POST /answer HTTP/1.1\r\nHost: {addr}\r\nCookie: {c}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    assert_eq!(send(&addr, two_lengths.as_bytes()).status, 400);
    // A transfer coding that is not chunked last.
    let odd = format!(
        "POST /answer HTTP/1.1\r\nHost: {addr}\r\nCookie: {c}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked, identity\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    assert_ne!(send(&addr, odd.as_bytes()).status, 200);
    // An answer smuggled after an unauthenticated request: with both framings, chunked counts
    // and the bytes after its end are a second request, which carries no cookie here.
    let inner = format!(
        "POST /answer HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let smuggle = format!(
        "POST /answer HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{inner}",
        inner.len() + 5
    );
    let reply = send(&addr, smuggle.as_bytes());
    assert_ne!(reply.status, 200, "{reply:?}");
    assert_eq!(state_of(&w, &code), "pending");
    assert!(!w.path("ws/made.txt").exists());
}

// ---------------------------------------------------------------------------------------------
// The cookie in the browser.

/// FAILS: cookies are not scoped by port. Once a desktop browser is paired at
/// `http://127.0.0.1:PORT`, it sends the `airlock_device` cookie (HttpOnly and SameSite=Strict
/// do not stop this: another port of the same host is the same site) to every other server on
/// 127.0.0.1, such as the dev server the agent just wrote and you open to look at its work. That
/// server reads the cookie from its request, loads the page with it (the form token is on it),
/// and allows its own pending requests; no Origin is needed from a non-browser.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_on_another_port_of_the_same_host_cannot_answer_with_what_the_browser_sends_it() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let addr = addr(&run);
    let browser = browser::Browser::start(390, 844).await;
    browser.goto(&run.pairing).await;
    let name = browser.find("#name").await.unwrap();
    browser.type_into(&name, "laptop browser").await;
    browser.click(&browser.find("#pair").await.unwrap()).await;
    browser
        .wait_for_text("Paired as laptop browser", Duration::from_secs(20))
        .await
        .unwrap();
    // Another server on this machine, on another port (a dev server, say).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut buf = vec![0u8; 16 * 1024];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let page = "<!doctype html><title>my app</title><p>hello";
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                )
                .as_bytes(),
            );
            let _ = tx.send(head);
        }
    });
    browser.goto(&format!("http://{other}/")).await;
    browser
        .wait_for_text("hello", Duration::from_secs(20))
        .await
        .unwrap();
    let heads: Vec<String> = rx.try_iter().collect();
    let stolen = heads.iter().find_map(|head| {
        head.lines()
            .filter(|l| l.to_ascii_lowercase().starts_with("cookie:"))
            .flat_map(|l| l[7..].split(';'))
            .find_map(|p| p.trim().strip_prefix("airlock_device=").map(str::to_string))
    });
    // What that server can do with it, outside any browser.
    if let Some(cookie) = stolen {
        let addr = addr.clone();
        let reply = tokio::task::spawn_blocking(move || {
            let (code, digest, token) = shown(&addr, &cookie);
            answer(
                &addr,
                &cookie,
                &[],
                &encode(&[
                    ("code", &code),
                    ("digest", &digest),
                    ("form_token", &token),
                    ("decision", "allow"),
                ]),
            )
        })
        .await
        .unwrap();
        assert_ne!(
            reply.status, 200,
            "a server on {other} was sent the device cookie and allowed the request with it: {}",
            reply.body
        );
    }
    assert_eq!(
        w.query("SELECT state FROM approvals ORDER BY id LIMIT 1"),
        "pending"
    );
}
