//! The host, origin, cookie and form checks, and what a paired device can and cannot do.

use super::*;

// ---------------------------------------------------------------------------------------------
// The Host check.

#[test]
fn only_the_pages_own_host_names_are_served_whatever_the_spelling() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let (addr, base) = (&p.addr, &p.base);
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
        format!("127.0.0.1:{port}{base}"),
        format!("127.0.0.1:{port}, evil.example"),
    ] {
        let reply = send(
            addr,
            format!(
                "GET {base}/ HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_ne!(reply.status, 200, "Host: {host} was served");
        assert!(!reply.body.contains("name=\"code\""), "Host: {host}");
    }
    // No Host at all (HTTP/1.0).
    let reply = send(
        addr,
        format!("GET {base}/ HTTP/1.0\r\nCookie: {c}\r\n\r\n").as_bytes(),
    );
    assert_ne!(reply.status, 200, "{reply:?}");
    // The page's own names, in any case, are.
    for host in [
        addr.clone(),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
    ] {
        let reply = send(
            addr,
            format!(
                "GET {base}/ HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_eq!(reply.status, 200, "Host: {host}: {reply:?}");
    }
}

/// RFC 9112 §3.2 requires a 400 for more than one Host, and a proxy or tunnel in front (the
/// `public_url` setup) may route on the other one. (Was a weakness: the route checked only the
/// first `Host`; now such a request gets 421.)
#[test]
fn a_request_with_two_host_headers_is_not_served() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let (addr, base) = (&p.addr, &p.base);
    let cookie = pair(&run, "phone");
    let c = cookie_header(&cookie);
    for hosts in [
        format!("Host: {addr}\r\nHost: evil.example"),
        format!("Host: evil.example\r\nHost: {addr}"),
        format!("Host: {addr}\r\nHost: {addr}"),
    ] {
        let reply = send(
            addr,
            format!("GET {base}/ HTTP/1.1\r\n{hosts}\r\nCookie: {c}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_ne!(reply.status, 200, "{hosts:?}: {reply:?}");
        assert!(!reply.body.contains("name=\"code\""), "{hosts:?}");
    }
}

/// With an absolute-form request target the target's authority, not `Host`, names the host
/// (RFC 9112 §3.2.2). (Was a weakness: the route checked only `Host`; now 421.)
#[test]
fn an_absolute_form_request_for_another_host_is_not_served() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let (addr, base) = (&p.addr, &p.base);
    let cookie = pair(&run, "phone");
    let c = cookie_header(&cookie);
    for (target, host) in [
        (format!("http://evil.example{base}/"), addr.clone()),
        (format!("http://evil.example:{addr}{base}/"), addr.clone()),
        (format!("http://{addr}{base}/"), "evil.example".to_string()),
    ] {
        let reply = send(
            addr,
            format!(
                "GET {target} HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_ne!(reply.status, 200, "{target} (Host: {host}): {reply:?}");
        assert!(!reply.body.contains("name=\"code\""), "{target}");
    }
    // The page's own address in absolute form is served (the check is on the host, not the
    // form).
    let reply = send(
        addr,
        format!(
            "GET http://{addr}{base}/ HTTP/1.1\r\nHost: {addr}\r\nCookie: {c}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
}

// ---------------------------------------------------------------------------------------------
// The Origin check.

#[test]
fn an_answer_from_any_other_origin_is_refused_however_the_origin_is_spelled() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let addr = &p.addr;
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
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
    let with_path = format!("http://{addr}{}", p.base);
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
        vec![("Origin", &with_path)],
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
        let reply = answer(&p, &cookie, headers, &body);
        assert_eq!(reply.status, 403, "{headers:?}: {reply:?}");
    }
    assert_eq!(state_of(&w, &code), "pending");
    // The page's own origin (in any case) answers.
    let own = format!("HTTP://{}", addr.to_ascii_uppercase());
    let reply = answer(&p, &cookie, &[("Origin", &own)], &body);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(state_of(&w, &code), "denied");
}

// ---------------------------------------------------------------------------------------------
// Cookies and form tokens.

#[test]
fn with_two_device_cookies_the_device_and_its_form_token_come_from_the_same_one() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let (addr, to_answer) = (&p.addr, p.at("/answer"));
    let a = pair(&run, "phone");
    // A cookie that names no device (one a page on another port of this host could set).
    let b = "b".repeat(64);
    let (code, digest, token_a) = shown(&p, &a);
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
        addr,
        "POST",
        &to_answer,
        &[FORM, ("Cookie", &both)],
        &body(&"0".repeat(64)),
    );
    assert_eq!(reply.status, 403, "{reply:?}");
    // A bogus cookie first and A's second: the bogus one is the device, and it is no device.
    let swapped = format!("airlock_device={b}; airlock_device={a}");
    let reply = request(
        addr,
        "POST",
        &to_answer,
        &[FORM, ("Cookie", &swapped)],
        &body(&token_a),
    );
    assert_eq!(reply.status, 401, "{reply:?}");
    // In two Cookie headers, the same.
    let reply = request(
        addr,
        "POST",
        &to_answer,
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
            addr,
            "POST",
            &to_answer,
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
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
    // What `d` in F6 does (Store::revoke_device).
    assert_eq!(
        w.sql("UPDATE paired_devices SET revoked_ms = 1 WHERE revoked_ms IS NULL"),
        1
    );
    assert_eq!(index(&p, &cookie).status, 401);
    let reply = answer(
        &p,
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
    let (page_a, page_b) = (page(&run_a), page(&run_b));
    assert_ne!(page_a.addr, page_b.addr);
    let cookie = pair(&run_a, "phone");
    // Each session-scoped page lists only its own run's request (a device is paired for the
    // machine, so the same cookie reads both).
    let (code_a, digest_a, token) = shown(&page_a, &cookie);
    let (code_b, digest_b, _) = shown(&page_b, &cookie);
    assert_ne!(code_a, code_b);
    let a_page = index(&page_a, &cookie).body;
    assert!(!a_page.contains(&code_b), "run B's request is on A's page");
    let post = |pairs: &[(&str, &str)]| answer(&page_a, &cookie, &[], &encode(pairs));
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
        &page_b,
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
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
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
        let reply = answer(&p, &cookie, &[], &encode(&pairs));
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
    let reply = answer(&p, &cookie, &[], &encode(&pairs));
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
    // The run goes on to its next request, so the page is up for the replays.
    let w = World::new(THEN_MORE);
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
    let body = |decision: &str| {
        encode(&[
            ("code", &code),
            ("digest", &digest),
            ("form_token", &token),
            ("decision", decision),
        ])
    };
    assert_eq!(answer(&p, &cookie, &[], &body("deny")).status, 200);
    run.wait_for("tool_denied");
    run.wait_for("approval_requested");
    // Replayed, or flipped, the same form decides nothing.
    for decision in ["allow", "deny", "allow"] {
        let reply = answer(&p, &cookie, &[], &body(decision));
        assert_eq!(reply.status, 409, "{reply:?}");
    }
    assert_eq!(state_of(&w, &code), "denied");
    assert!(!w.path("ws/made.txt").exists());
    // The request now waiting is the second one, still open.
    let (second, _, _) = shown(&p, &cookie);
    assert_ne!(second, code);
    assert_eq!(state_of(&w, &second), "pending");
}

#[test]
fn an_answer_after_the_request_timed_out_decides_nothing() {
    // The run goes on to its next requests (two seconds each), so the page is up for the answer.
    let w = World::new(THEN_MORE);
    let dir = w.path("home/.config/airlock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "approval_timeout_secs = 2\n").unwrap();
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
    run.wait_for("tool_denied");
    run.wait_for("approval_requested");
    let reply = answer(
        &p,
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
    assert!(!w.path("ws/made.txt").exists());
}
