//! The approval page's settings with the real binary, outside a browser: the nudge to a push
//! service carries nothing but "an approval waits" and the link; beyond this machine the page
//! needs TLS, and a self-signed certificate is pinned by the fingerprint the run prints; bad
//! `[remote]` settings are refused with where and how to fix them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::sync::mpsc::channel;
use std::time::Duration;

use common::World;
use common::page::PageRun;

const COMMAND: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo secret-words >> made.txt"}}]},
    {"say": "ok", "expect": ["any"]}
]}"#;

fn configure(w: &World, remote: &str) {
    let dir = w.path("home/.config/airlock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), format!("[remote]\n{remote}")).unwrap();
}

#[test]
fn the_nudge_says_only_that_an_approval_waits_and_links_to_the_page() {
    let w = World::new(COMMAND);
    let push = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let push_url = format!("http://{}/airlock", push.local_addr().unwrap());
    configure(&w, &format!("notify_url = \"{push_url}\"\n"));
    let (tx, pushed) = channel();
    std::thread::spawn(move || {
        let (mut stream, _) = push.accept().unwrap();
        let request = common::page::nudge_request(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
        tx.send(String::from_utf8_lossy(&request).into_owned())
            .unwrap();
    });
    let run = PageRun::start(&w, &[]);
    let origin = run.origin.clone();
    let asked = run.wait_for("approval_requested");
    let code = asked["request"]["code"].as_str().unwrap().to_string();
    let request = pushed.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(request.starts_with("POST /airlock "), "{request}");
    assert!(
        request.contains("An approval request waits for your answer in airlock."),
        "{request}"
    );
    // Header names in any case; the link exactly (its secret path is case-sensitive).
    let click = request
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("click"))
        })
        .map(|(_, v)| v.trim());
    assert_eq!(
        click,
        Some(format!("{origin}/").as_str()),
        "links to the page: {request}"
    );
    for secret in ["secret-words", "made.txt", "echo", code.as_str(), "bash"] {
        assert!(
            !request.contains(secret),
            "the nudge carried {secret:?}: {request}"
        );
    }
}

#[test]
fn beyond_this_machine_the_page_needs_tls_and_says_how_to_give_it() {
    let w = World::new(COMMAND);
    configure(&w, "listen = \"0.0.0.0:0\"\n");
    let out = w.exec("remote", &[], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = common::stderr(&out);
    assert!(
        stderr.contains("without TLS") && stderr.contains("tls = \"self-signed\""),
        "{stderr}"
    );
    assert!(!w.path("ws/made.txt").exists());
}

#[test]
fn a_self_signed_page_is_pinned_by_the_fingerprint_it_prints_and_its_cookie_is_secure() {
    let w = World::new(COMMAND);
    configure(&w, "listen = \"0.0.0.0:0\"\ntls = \"self-signed\"\n");
    let run = PageRun::start(&w, &[]);
    let fingerprint = run.fingerprint.clone().unwrap();
    // The certificate kept in the state directory is the one printed.
    let pem = std::fs::read_to_string(w.path("state/remote/cert.pem")).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = decode_base64(&body);
    use sha2::Digest;
    let digest = sha2::Sha256::digest(&der);
    let expected: Vec<String> = digest.iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(fingerprint, expected.join(":"));
    assert!(run.origin.starts_with("https://"));
    // Over TLS (the test trusts the pinned certificate by its fingerprint, checked above).
    // https://HOST:PORT/p/SECRET: the page's port and path.
    let (authority, path) = run
        .origin
        .trim_start_matches("https://")
        .split_once('/')
        .unwrap();
    let port = authority.rsplit(':').next().unwrap().to_string();
    let token = run.pairing.rsplit('=').next().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, cookie) = rt.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .no_proxy()
            .danger_accept_invalid_certs(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let reply = client
            .post(format!("https://127.0.0.1:{port}/{path}/pair"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("token={token}&name=phone"))
            .send()
            .await
            .unwrap();
        let cookie = reply
            .headers()
            .get("set-cookie")
            .map(|c| c.to_str().unwrap().to_string())
            .unwrap_or_default();
        (reply.status().as_u16(), cookie)
    });
    assert_eq!(status, 303);
    assert!(cookie.contains("; Secure"), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
}

#[test]
fn bad_remote_settings_are_refused_with_the_file_and_the_key() {
    for (setting, key) in [
        ("tls = \"maybe\"\n", "tls"),
        ("listen = \"everywhere\"\n", "listen"),
        ("tls_cert = \"c.pem\"\n", "tls_cert"),
        ("notify_url = \"ntfy.sh/x\"\n", "notify_url"),
        ("colour = \"blue\"\n", "colour"),
    ] {
        let w = World::new(COMMAND);
        configure(&w, setting);
        let out = w.airlock(
            &[
                "exec",
                "--scenario",
                "s.json",
                "--workspace",
                "ws",
                "--remote",
            ],
            &[],
        );
        assert_ne!(out.status.code(), Some(0), "{setting}");
        let stderr = common::stderr(&out);
        assert!(
            stderr.contains("config.toml") && stderr.contains(key),
            "{setting}: {stderr}"
        );
        assert!(!w.path("ws/made.txt").exists());
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = ALPHABET.iter().position(|a| *a == c).unwrap() as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[test]
fn behind_a_tunnel_a_taken_default_port_is_refused_not_swapped_for_another() {
    // The tunnel forwards public_url to 127.0.0.1:8377; a page moved to another port would
    // leave that address (and the cookie and secret path a phone sends there) to whatever
    // holds the port now. Held here by the test itself (others' pages come and go).
    let held = (0..200)
        .find_map(|_| {
            std::net::TcpListener::bind("127.0.0.1:8377")
                .ok()
                .or_else(|| {
                    std::thread::sleep(Duration::from_millis(50));
                    None
                })
        })
        .expect("port 8377 could be held for the test");
    let w = World::new(COMMAND);
    configure(&w, "public_url = \"https://phone.example.net\"\n");
    let out = w.exec("remote", &[], &[]);
    drop(held);
    assert_eq!(out.status.code(), Some(1), "{}", common::stdout(&out));
    let stderr = common::stderr(&out);
    assert!(
        stderr.contains("public_url") && stderr.contains("`listen`"),
        "{stderr}"
    );
    assert!(!w.path("ws/made.txt").exists());
}
