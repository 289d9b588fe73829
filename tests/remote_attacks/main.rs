#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Attacks on the approval page (`exec --approvals remote`), with the real binary and raw HTTP
//! over loopback: the host and origin checks, the secret path, the cookie and the form token, the
//! form's fields, pairing, the guess limits, connection slots, and what a paired device can and
//! cannot do.
//!
//! Each test names the property that should hold. A test that fails is a weakness found; see
//! the comment above it.

#[path = "../browser/mod.rs"]
mod browser;
#[path = "../common/mod.rs"]
mod common;

mod forms;
mod pairing;
mod second;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::World;
use common::page::PageRun;
use sha2::Digest;

const COMMAND: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "ok", "expect": ["any"]}
]}"#;

/// `COMMAND`, and then four more calls that ask: after the first request is decided (or times
/// out), the run goes on waiting, and so its page stays up (a run with nothing more to ask ends
/// and takes its page with it).
const THEN_MORE: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"calls": [{"tool": "bash", "args": {"command": "echo 2 >> more.txt"}}]},
    {"calls": [{"tool": "bash", "args": {"command": "echo 3 >> more.txt"}}]},
    {"calls": [{"tool": "bash", "args": {"command": "echo 4 >> more.txt"}}]},
    {"calls": [{"tool": "bash", "args": {"command": "echo 5 >> more.txt"}}]},
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

/// A well-formed request for `target` (the whole path, secret part included) to the page at
/// `addr`, with its own `Host`.
fn request(addr: &str, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\n");
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

/// Where a run's page is: `host:port`, and the secret path every route lives under
/// (`/p/<11 base64url characters>`, no slash at the end).
#[derive(Debug, Clone)]
struct Page {
    addr: String,
    base: String,
}

impl Page {
    /// `path` (`/`, `/answer`, ...) under the secret path.
    fn at(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// The page of `run`, from its `origin` (`http://HOST:PORT/p/SECRET`).
fn page(run: &PageRun) -> Page {
    let rest = run.origin.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    let base = format!("/{path}");
    let secret = base.strip_prefix("/p/").unwrap();
    assert!(
        secret.len() == 11
            && secret
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{}",
        run.origin
    );
    assert!(
        run.pairing
            .starts_with(&format!("{}/pair?token=", run.origin)),
        "{}",
        run.pairing
    );
    Page {
        addr: addr.to_string(),
        base,
    }
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
    let reply = pair_with(&page(run), &token(run), name);
    assert_eq!(reply.status, 303, "{reply:?}");
    cookie_of(&reply).unwrap()
}

fn pair_with(p: &Page, token: &str, name: &str) -> Reply {
    request(
        &p.addr,
        "POST",
        &p.at("/pair"),
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
fn index(p: &Page, cookie: &str) -> Reply {
    request(
        &p.addr,
        "GET",
        &p.at("/"),
        &[("Cookie", &cookie_header(cookie))],
        "",
    )
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
fn shown(p: &Page, cookie: &str) -> (String, String, String) {
    let page = index(p, cookie);
    assert_eq!(page.status, 200, "{page:?}");
    let code = values(&page.body, "code");
    assert_eq!(code.len(), 1, "one request on the page: {}", page.body);
    (
        code[0].clone(),
        values(&page.body, "digest")[0].clone(),
        values(&page.body, "form_token")[0].clone(),
    )
}

fn answer(p: &Page, cookie: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let cookie = cookie_header(cookie);
    let mut all = vec![FORM, ("Cookie", cookie.as_str())];
    all.extend_from_slice(headers);
    request(&p.addr, "POST", &p.at("/answer"), &all, body)
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
