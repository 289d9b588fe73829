//! A second pass over the approval page: what a request's own content can do to the page, an
//! answer bound to one request applied to another, answers raced or given twice, another
//! session's requests, framing and paths, devices that share a name, what the page leaves out of
//! what the modal shows, and where the nudge goes.

use std::sync::mpsc::channel;

use super::*;

/// Writes the user's own config (`~/.config/airlock/config.toml`).
fn configure(w: &World, toml: &str) {
    let dir = w.path("home/.config/airlock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), toml).unwrap();
}

fn fields(code: &str, digest: &str, token: &str, decision: &str) -> String {
    encode(&[
        ("code", code),
        ("digest", digest),
        ("form_token", token),
        ("decision", decision),
    ])
}

/// Every status line's code in a stream of responses, in order.
fn statuses(bytes: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(bytes);
    text.match_indices("HTTP/1.1 ")
        .filter_map(|(i, _)| text[i + 9..].get(..3)?.parse().ok())
        .collect()
}

/// Sends `raw` on one connection and reads every byte back until the server closes (or a
/// second passes with nothing more: a connection kept alive for a next request).
fn send_raw(addr: &str, raw: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let _ = stream.write_all(raw);
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf);
    buf
}

// ---------------------------------------------------------------------------------------------
// What the page shows.

/// A call to an MCP server configured with `sandbox = "off"` runs with all of the person's
/// rights. The modal says so in red ("its server runs in: NO SANDBOX ..."), and the request's
/// stored preview carries it (`confinement`), but the page drops it: the phone shows the tool,
/// its risk, the reasons (none of which names the sandbox) and the arguments, and Allow once.
/// (A weakness: `page::preview` renders `server`, `tool`, `annotations` and `arguments` of an
/// `mcp` preview but not `confinement`, nor a `change` that is an error.)
#[test]
fn an_mcp_call_whose_server_runs_without_a_sandbox_says_so_on_the_page() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "rug__unannotated", "args": {}}]},
            {"say": "ok", "expect": ["any"]}
        ]}"#,
    );
    std::fs::create_dir_all(w.path("rug")).unwrap();
    let server =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/rug_server.py");
    configure(
        &w,
        &format!(
            "[mcp_servers.rug]\ncommand = \"python3\"\nargs = [{server:?}]\nsandbox = \"off\"\n\
             env = {{ RUG_DIR = {:?} }}\n",
            w.path("rug")
        ),
    );
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let summary = w.query("SELECT summary FROM approvals ORDER BY id LIMIT 1");
    assert!(
        summary.contains("NO SANDBOX"),
        "the stored request says where its server runs: {summary}"
    );
    let shown = index(&p, &cookie);
    assert_eq!(shown.status, 200, "{shown:?}");
    assert!(shown.body.contains("Allow once"), "{}", shown.body);
    assert!(
        shown.body.contains("NO SANDBOX"),
        "the phone is asked to allow a call whose server runs with all of your rights, and is \
         not told: {}",
        shown.body
    );
}

/// A request whose every field the model chose (its call id, its command, a file's path and
/// content, a sub-agent's task) holds markup that closes the `<pre>`, opens a form with an
/// allow button, or hides with bidi and zero-width characters: each is text on the page, and
/// each request keeps exactly its two forms, its two buttons, and its one Allow.
#[test]
fn no_field_of_a_request_can_forge_a_form_or_a_button_or_reach_the_page_as_markup() {
    let forged = "</pre></div></section><form method=post action=answer>\
                  <input name=decision value=allow><button class=allow>Deny</button></form>";
    let scenario = serde_json::json!({
        "name": "p", "prompt": "go",
        "steps": [
            {"calls": [
                {"id": "c1\"><button name=decision value=allow>x", "tool": "bash",
                 "args": {"command": format!("echo '{forged}' \u{202e}\u{200b} >> x.txt")}},
                {"id": "c2", "tool": "write_file",
                 "args": {"path": "<i>\"'q.txt", "content": format!("{forged}\n<!--\n<textarea>\n")}},
                {"id": "c3", "tool": "agent",
                 "args": {"task": "<b>\"task</b><textarea>", "prompt": "p"}}
            ]},
            {"say": "ok", "expect": ["any", "any", "any"]}
        ],
        "agents": {"<b>\"task</b><textarea>": {"steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo '<textarea>' >> s.txt"}}]},
            {"say": "done", "expect": ["any"]}
        ]}}
    });
    let w = World::new(&scenario.to_string());
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let mut pages = Vec::new();
    for asked in 0..3 {
        let page = index(&p, &cookie);
        assert_eq!(page.status, 200, "{page:?}");
        pages.push(page.body);
        let body = &pages[asked];
        let count = |s: &str| body.matches(s).count();
        assert_eq!(count("<form"), 2, "request {asked}: {body}");
        assert_eq!(count("</form>"), 2, "request {asked}: {body}");
        assert_eq!(count("<button"), 2, "request {asked}: {body}");
        assert_eq!(count("value=\"allow\""), 1, "request {asked}: {body}");
        assert_eq!(count("<input"), 7, "request {asked}: {body}");
        assert_eq!(count("<section"), 1, "request {asked}: {body}");
        assert_eq!(count("</section>"), 1, "request {asked}: {body}");
        assert!(
            count("<pre") <= 1 && count("<pre") == count("</pre>"),
            "{body}"
        );
        for raw in ["<textarea", "<!--", "<i>", "<b>\"", "\u{202e}", "\u{200b}"] {
            assert!(
                !body.contains(raw),
                "request {asked}: {raw:?} reached the page"
            );
        }
        let (code, digest, token) = shown(&p, &cookie);
        let reply = answer(&p, &cookie, &[], &fields(&code, &digest, &token, "deny"));
        assert_eq!(reply.status, 200, "{reply:?}");
        run.wait_for("tool_denied");
        if asked < 2 {
            run.wait_for("approval_requested");
        }
    }
    // The call id, the path and the sub-agent's task were shown, as text.
    let all = pages.concat();
    for text in [
        "c1&quot;&gt;&lt;button name=decision value=allow&gt;x",
        "&lt;i&gt;&quot;&#39;q.txt",
        "&lt;b&gt;&quot;task&lt;/b&gt;&lt;textarea&gt;",
    ] {
        assert!(all.contains(text), "{text} not shown: {all}");
    }
    assert!(!w.path("ws/x.txt").exists() && !w.path("ws/<i>\"'q.txt").exists());
}

// ---------------------------------------------------------------------------------------------
// Binding an answer to its request.

/// Two sub-agents ask at once, so one page lists two requests: one request's code with the
/// other's digest decides neither, in either order.
#[test]
fn an_answer_pairing_one_requests_code_with_anothers_digest_decides_neither() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
        {"calls": [
            {"tool": "agent", "args": {"task": "left", "prompt": "write left"}},
            {"tool": "agent", "args": {"task": "right", "prompt": "write right"}}
        ]},
        {"say": "both done", "expect": ["any", "any"]}
    ], "agents": {
        "left": {"steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo left >> left.txt"}}]},
            {"say": "left wrote", "expect": ["any"]}
        ]},
        "right": {"steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo right >> right.txt"}}]},
            {"say": "right wrote", "expect": ["any"]}
        ]}
    }}"#,
    );
    let run = PageRun::start(&w, &[]);
    run.wait_for("approval_requested");
    run.wait_for("approval_requested");
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let shown = index(&p, &cookie).body;
    let codes = values(&shown, "code");
    let digests = values(&shown, "digest");
    let token = values(&shown, "form_token")[0].clone();
    assert_eq!((codes.len(), digests.len()), (2, 2), "{shown}");
    for (code, digest) in [(&codes[0], &digests[1]), (&codes[1], &digests[0])] {
        let reply = answer(&p, &cookie, &[], &fields(code, digest, &token, "allow"));
        assert_eq!(reply.status, 409, "{reply:?}");
    }
    for code in &codes {
        assert_eq!(state_of(&w, code), "pending");
    }
    assert!(!w.path("ws/left.txt").exists() && !w.path("ws/right.txt").exists());
}

/// `airlock deny CODE` from another terminal answers first; the page's Allow, sent after with
/// the form it showed, decides nothing, and the call never runs.
#[test]
fn a_request_denied_from_another_terminal_is_not_allowed_after_on_the_page() {
    let w = World::new(THEN_MORE);
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
    let out = w.airlock(&["deny", &code, "--reason", "not now"], &[]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    run.wait_for("tool_denied");
    run.wait_for("approval_requested");
    let reply = answer(&p, &cookie, &[], &fields(&code, &digest, &token, "allow"));
    assert_eq!(reply.status, 409, "{reply:?}");
    assert!(state_of(&w, &code).starts_with("denied"));
    assert!(!w.path("ws/made.txt").exists());
}

/// Eight answers for one request, half Allow and half Deny, sent at the same moment: exactly one
/// decides, the others are refused, and what is stored is what the one told "Allowed"/"Denied"
/// was told.
#[test]
fn of_answers_raced_at_once_exactly_one_decides_and_it_is_the_one_stored() {
    let w = World::new(THEN_MORE);
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (p, cookie, barrier) = (p.clone(), cookie.clone(), barrier.clone());
            let decision = if i % 2 == 0 { "allow" } else { "deny" };
            let body = fields(&code, &digest, &token, decision);
            std::thread::spawn(move || {
                barrier.wait();
                (decision, answer(&p, &cookie, &[], &body))
            })
        })
        .collect();
    let replies: Vec<(&str, Reply)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let won: Vec<&(&str, Reply)> = replies.iter().filter(|(_, r)| r.status == 200).collect();
    assert_eq!(won.len(), 1, "{replies:?}");
    for (_, reply) in &replies {
        assert!(reply.status == 200 || reply.status == 409, "{reply:?}");
    }
    let state = state_of(&w, &code);
    match won[0].0 {
        "allow" => assert!(state.starts_with("approved"), "{state}"),
        _ => assert!(state.starts_with("denied"), "{state}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Scope.

/// A request another session left waiting on this machine (parked by `exec --approvals park`)
/// is not on this run's page, and its code, however spelled, answers nothing here.
#[test]
fn a_request_parked_by_another_session_is_neither_listed_nor_answerable_here() {
    let w = World::new(COMMAND);
    let (_, parked) = w.park(&[]);
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (own, _, token) = shown(&p, &cookie);
    assert_ne!(own, parked);
    let body = index(&p, &cookie).body;
    assert!(
        !body.contains(&parked),
        "another session's request is listed"
    );
    let parked_digest = w.query("SELECT digest FROM approvals ORDER BY id LIMIT 1");
    let spaced = parked.replace('-', " ");
    for spelled in [
        parked.clone(),
        parked.to_ascii_lowercase(),
        spaced,
        format!(" {parked} "),
    ] {
        let reply = answer(
            &p,
            &cookie,
            &[],
            &fields(&spelled, &parked_digest, &token, "allow"),
        );
        assert_eq!(reply.status, 404, "{spelled:?}: {reply:?}");
    }
    assert_eq!(state_of(&w, &parked), "pending");
    assert_eq!(state_of(&w, &own), "pending");
}

// ---------------------------------------------------------------------------------------------
// HTTP.

/// On one connection, the cookie of a first request lends nothing to a second one pipelined
/// after it; an answer hidden in the declared body of an oversized request is never read as a
/// request of its own; and a head with too many or too long headers decides nothing.
#[test]
fn a_connection_carries_no_authority_from_one_request_to_the_next() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let (addr, to_answer) = (&p.addr, p.at("/answer"));
    let cookie = pair(&run, "phone");
    let c = cookie_header(&cookie);
    let (code, digest, token) = shown(&p, &cookie);
    let body = fields(&code, &digest, &token, "allow");
    let post = |extra: &str, connection: &str| {
        format!(
            "POST {to_answer} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n{extra}Content-Length: {}\r\nConnection: {connection}\r\n\r\n{body}",
            body.len()
        )
    };
    // Pipelined: the page with the cookie, then an answer without it.
    let pipelined = format!(
        "GET {} HTTP/1.1\r\nHost: {addr}\r\nCookie: {c}\r\n\r\n{}",
        p.at("/"),
        post("", "close")
    );
    let got = statuses(&send_raw(addr, pipelined.as_bytes()));
    assert_eq!(got, [200, 401], "{got:?}");
    // An answer with the cookie inside the body of an oversized request that has none.
    let inner = post(&format!("Cookie: {c}\r\n"), "close");
    let padding = "x".repeat(17 * 1024);
    let outer_body = format!("{padding}{inner}");
    let outer = format!(
        "POST {to_answer} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{outer_body}",
        outer_body.len()
    );
    let got = statuses(&send_raw(addr, outer.as_bytes()));
    assert!(!got.contains(&200), "{got:?}");
    // Too many headers, and one too long, around a right answer.
    let many: String = (0..150).map(|i| format!("X-Pad-{i}: {i}\r\n")).collect();
    let long = format!("X-Long: {}\r\n", "y".repeat(512 * 1024));
    for extra in [many, long] {
        let raw = post(&format!("Cookie: {c}\r\n{extra}"), "close");
        let got = statuses(&send_raw(addr, raw.as_bytes()));
        assert!(!got.contains(&200), "{got:?}");
    }
    // A cookie of 64 KiB names no device.
    let huge = format!("airlock_device={}", "a".repeat(64 * 1024));
    let raw = post(&format!("Cookie: {huge}\r\n"), "close");
    let got = statuses(&send_raw(addr, raw.as_bytes()));
    assert!(!got.contains(&200), "{got:?}");
    assert_eq!(state_of(&w, &code), "pending");
    assert!(!w.path("ws/made.txt").exists());
}

/// The answer route is the one path `/answer` under the secret path, spelled exactly: doubled
/// or dotted slashes, percent-encoding, a trailing slash or parameters, another case, or a
/// `..` that a normalizing proxy would resolve, answer nothing.
#[test]
fn only_the_exact_answer_path_answers() {
    let w = World::new(COMMAND);
    let run = waiting(&w);
    let p = page(&run);
    let cookie = pair(&run, "phone");
    let (code, digest, token) = shown(&p, &cookie);
    let body = fields(&code, &digest, &token, "allow");
    let secret = p.base.strip_prefix("/p/").unwrap();
    let c = cookie_header(&cookie);
    for path in [
        p.at("//answer"),
        p.at("/./answer"),
        p.at("/%61nswer"),
        p.at("/answer%2f"),
        p.at("/answer/"),
        p.at("/ANSWER"),
        p.at("/answer;x"),
        p.at("/answer%00"),
        p.at("/x/../answer"),
        format!("/p//{secret}/answer"),
        format!("/p/{secret}%2fanswer"),
        format!("/q/../p/{secret}/answer"),
    ] {
        let reply = request(&p.addr, "POST", &path, &[FORM, ("Cookie", &c)], &body);
        assert_ne!(reply.status, 200, "{path}: {reply:?}");
        assert_eq!(state_of(&w, &code), "pending", "{path}");
    }
    // The path itself, with a query, still answers (the body is what is read).
    let reply = request(
        &p.addr,
        "POST",
        &p.at("/answer?decision=deny"),
        &[FORM, ("Cookie", &c)],
        &body,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(state_of(&w, &code).starts_with("approved"));
}

// ---------------------------------------------------------------------------------------------
// Devices.

/// Two devices paired under the same name stay two devices: each answers only with its own form
/// token, the answer records which one it was, revoking one leaves the other, and a 10 KB name
/// pairs nothing and leaves the token to its owner.
#[test]
fn two_devices_with_one_name_stay_two_devices_each_with_its_own_form_token() {
    let w = World::new(THEN_MORE);
    let run = waiting(&w);
    let other = waiting(&w);
    let p = page(&run);
    let huge = "n".repeat(10 * 1024);
    let refused = pair_with(&page(&other), &token(&other), &huge);
    assert_eq!(refused.status, 400, "{refused:?}");
    assert!(cookie_of(&refused).is_none());
    let first = pair(&run, "phone");
    let second = pair(&other, "phone");
    assert_ne!(first, second);
    let (code, digest, token_first) = shown(&p, &first);
    let (_, _, token_second) = shown(&p, &second);
    assert_ne!(token_first, token_second);
    // Each cookie with the other's form token: refused.
    for (cookie, token) in [(&first, &token_second), (&second, &token_first)] {
        let reply = answer(&p, cookie, &[], &fields(&code, &digest, token, "allow"));
        assert_eq!(reply.status, 403, "{reply:?}");
    }
    // The first revoked (what `d` in F6 does); the second still answers, as itself.
    let first_id = w.query("SELECT CAST(id AS TEXT) FROM paired_devices ORDER BY id LIMIT 1");
    assert_eq!(
        w.sql(&format!(
            "UPDATE paired_devices SET revoked_ms = 1 WHERE id = {first_id}"
        )),
        1
    );
    let reply = answer(
        &p,
        &first,
        &[],
        &fields(&code, &digest, &token_first, "deny"),
    );
    assert_eq!(reply.status, 401, "{reply:?}");
    let reply = answer(
        &p,
        &second,
        &[],
        &fields(&code, &digest, &token_second, "deny"),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let decision: serde_json::Value = serde_json::from_str(&w.query(&format!(
        "SELECT decision FROM approvals WHERE state LIKE 'denied%' AND digest = '{digest}' \
         ORDER BY id LIMIT 1"
    )))
    .unwrap();
    let second_id = w.query("SELECT CAST(id AS TEXT) FROM paired_devices ORDER BY id DESC LIMIT 1");
    assert_eq!(
        decision["by"]["device_id"].to_string(),
        second_id,
        "{decision}"
    );
}

// ---------------------------------------------------------------------------------------------
// The nudge.

/// The nudge goes to the push URL the person configured and nowhere else: a push service (or
/// anyone on the path of an http:// one) that answers with a redirect does not get the nudge,
/// and the page's link with its secret path, sent on to another host. (A weakness: reqwest
/// follows up to ten redirects by default, to any host, and keeps the `Click` header; the fix
/// is `redirect(Policy::none())` on the nudge's client in `remote/nudge.rs`.)
#[test]
fn the_nudge_follows_no_redirect_to_another_host() {
    let w = World::new(COMMAND);
    let push = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere_addr = elsewhere.local_addr().unwrap();
    configure(
        &w,
        &format!(
            "[remote]\nnotify_url = \"http://{}/topic\"\n",
            push.local_addr().unwrap()
        ),
    );
    let (pushed_tx, pushed) = channel();
    std::thread::spawn(move || {
        let (mut stream, _) = push.accept().unwrap();
        let _ = crate::common::page::nudge_request(&mut stream);
        let _ = stream.write_all(
            format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://{elsewhere_addr}/stolen\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        let _ = pushed_tx.send(());
    });
    let (stolen_tx, stolen) = channel();
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = elsewhere.accept() {
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let mut buf = vec![0u8; 16 * 1024];
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
            let _ = stolen_tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    let run = waiting(&w);
    let secret = page(&run).base;
    pushed.recv_timeout(Duration::from_secs(20)).unwrap();
    if let Ok(head) = stolen.recv_timeout(Duration::from_secs(2)) {
        panic!(
            "the nudge followed the push service's redirect to {elsewhere_addr}{}: {head}",
            if head.contains(&secret) {
                ", with the page's secret path"
            } else {
                ""
            }
        );
    }
}
