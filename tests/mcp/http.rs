//! Streamable HTTP servers: the npm reference server `@modelcontextprotocol/server-everything`
//! started here with `streamableHttp` on a free port (its `PORT`), reached by `url`. Same gate,
//! pins, progress and timeout as a stdio server.

use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::time::Instant;

use super::*;

/// The server, killed when the test ends. It logs each request on its stdout, kept in `log`.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
    log: PathBuf,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    pub(crate) fn start(dir: &Path) -> HttpServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        HttpServer::start_on(dir, port)
    }

    pub(crate) fn start_on(dir: &Path, port: u16) -> HttpServer {
        let index = npm_bin("mcp-server-everything");
        let log = dir.join(format!("everything-http-{port}.log"));
        let child = Command::new("node")
            .arg(&index)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            log,
        }
    }

    fn port(&self) -> u16 {
        self.url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// How many MCP requests it has received.
    pub(crate) fn requests(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .matches("Received MCP")
            .count()
    }
}

fn with_http_server(w: &World, server: &HttpServer, extra: &str) {
    std::fs::write(
        w.path("home/.config/airlock/config.toml"),
        format!("[mcp_servers.web]\nurl = {:?}\n{extra}", server.url),
    )
    .unwrap();
}

#[test]
fn a_streamable_http_server_lists_its_tools_and_its_calls_pass_the_same_gate() {
    let w = World::new();
    let server = HttpServer::start(&w.path("tmp"));
    with_http_server(&w, &server, "");
    let listed = w.list();
    for line in [
        "web: ready",
        "safe      mcp:web/echo",
        "mutating  mcp:web/toggle-simulated-logging",
    ] {
        assert!(listed.contains(line), "{line:?} not in\n{listed}");
    }
    let events = w.exec(
        json!([
            {"calls": [
                {"tool": "web__echo", "args": {"message": "over http"}},
                {"tool": "web__toggle-simulated-logging"},
            ]},
            {"expect": ["ok", "denied"]},
        ]),
        &[],
    );
    assert_eq!(
        event(&events, "tool_finished", "c1").unwrap()["status"],
        "ok"
    );
    assert_eq!(output(&events, "c1"), "Echo: over http");
    let denied = event(&events, "tool_denied", "c2").expect("the mutating call asked");
    assert_eq!(denied["source"], "headless");
    // The listing was pinned the first time and has not changed since.
    assert!(!w.list().contains("CHANGED"));
}

#[test]
fn an_approved_http_call_streams_its_progress() {
    let w = World::new();
    let server = HttpServer::start(&w.path("tmp"));
    with_http_server(&w, &server, "");
    let events = w.exec(
        json!([
            {"calls": [{"tool": "web__trigger-long-running-operation", "args": {"duration": 1, "steps": 3}}]},
            {"expect": ["ok"]},
        ]),
        &["--approvals", "dangerously-allow-all"],
    );
    let progress = output(&events, "c1");
    assert!(progress.contains("progress 1/3"), "{progress}");
    assert!(progress.contains("Long running operation completed"));
}

fn http_hub(w: &World, url: &str, timeout_secs: Option<u64>) -> Arc<airlock::mcp::McpHub> {
    airlock::mcp::McpHub::new(
        vec![airlock::mcp::ConfiguredServer {
            name: "web".into(),
            config: airlock::mcp::ServerConfig {
                url: Some(url.into()),
                timeout_secs,
                ..Default::default()
            },
            file: PathBuf::from("config.toml"),
            pin_key: "web".into(),
            from_project: false,
        }],
        Vec::new(),
        w.ws(),
        Vec::new(),
        Some(std::sync::Arc::new(airlock::store::db::StatePins(
            w.path("state/state.db"),
        ))),
        w.sandbox(),
    )
}

#[tokio::test]
async fn an_http_call_past_its_timeout_times_out_and_a_cancelled_one_is_cancelled() {
    let w = World::new();
    let server = HttpServer::start(&w.path("tmp"));
    let hub = http_hub(&w, &server.url, Some(1));
    hub.connect_all().await;
    let (sink, _) = collecting();
    let slow = json!({"duration": 30, "steps": 30});
    let outcome = hub
        .call(
            "web__trigger-long-running-operation",
            slow.clone(),
            &listed(&hub, "web__trigger-long-running-operation"),
            tokio_util::sync::CancellationToken::new(),
            sink.clone(),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, airlock::protocol::ToolStatus::TimedOut);
    // Cancelled once the call is under way (its first progress is in), on a server with no
    // time limit, so only the cancel can end it.
    let hub = http_hub(&w, &server.url, None);
    hub.connect_all().await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let stop = cancel.clone();
    let under_way = airlock::output::OutputSink::new(move |_, piece| {
        if String::from_utf8_lossy(piece.text).contains("progress 1/30") {
            stop.cancel();
        }
    });
    let outcome = hub
        .call(
            "web__trigger-long-running-operation",
            slow,
            &listed(&hub, "web__trigger-long-running-operation"),
            cancel,
            under_way,
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, airlock::protocol::ToolStatus::Cancelled);
}

#[test]
fn a_missing_token_variable_fails_the_server_with_its_name_and_sends_nothing() {
    let w = World::new();
    let server = HttpServer::start(&w.path("tmp"));
    with_http_server(
        &w,
        &server,
        "bearer_token_env = \"AIRLOCK_TEST_MCP_TOKEN_NOT_SET\"\n",
    );
    let listed = w.list();
    assert!(
        listed
            .contains("web: failed: its token variable $AIRLOCK_TEST_MCP_TOKEN_NOT_SET is not set"),
        "{listed}"
    );
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_header_value_is_sent_but_never_printed() {
    let w = World::new();
    let server = HttpServer::start(&w.path("tmp"));
    // A header the server does not need still travels; a wrong URL path makes the handshake
    // fail, and its error must quote neither the header's value nor the URL's query.
    let wrong = server.url.replace("/mcp", "/nothing-here?key=topsecret");
    std::fs::write(
        w.path("home/.config/airlock/config.toml"),
        format!(
            "[mcp_servers.web]\nurl = {wrong:?}\nstartup_timeout_secs = 5\nheaders = {{ X-Api-Key = \"hunter2-secret\" }}\n"
        ),
    )
    .unwrap();
    let listed = w.list();
    assert!(listed.contains("web: failed"), "{listed}");
    assert!(listed.contains("HTTP 404"), "{listed}");
    assert!(!listed.contains("hunter2"), "{listed}");
    assert!(!listed.contains("topsecret"), "{listed}");
}

#[test]
fn a_projects_url_server_is_not_contacted_until_the_project_is_trusted() {
    let w = World::new();
    let server = HttpServer::start(&w.path("tmp"));
    std::fs::write(w.path("home/.config/airlock/config.toml"), "").unwrap();
    std::fs::create_dir_all(w.ws().join(".airlock")).unwrap();
    std::fs::write(
        w.ws().join(".airlock/config.toml"),
        format!("[mcp_servers.web]\nurl = {:?}\n", server.url),
    )
    .unwrap();
    let listed = w.list();
    assert!(
        listed.contains("web: not started: the project is not trusted"),
        "{listed}"
    );
    let events = w.exec(
        json!([{"calls": [{"tool": "web__echo", "args": {"message": "x"}}]}, {"expect": ["denied"]}]),
        &[],
    );
    assert!(event(&events, "tool_denied", "c1").is_some());
    assert_eq!(server.requests(), 0, "an untrusted project reached its URL");
    let ws = w.ws();
    let out = w.airlock(&["trust", "--workspace", ws.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(w.list().contains("web: ready"));
    assert!(server.requests() > 0);
}

#[tokio::test]
async fn an_http_server_that_went_away_is_an_error_and_is_connected_again_once_back() {
    let w = World::new();
    let mut server = HttpServer::start(&w.path("tmp"));
    let hub = http_hub(&w, &server.url, Some(5));
    hub.connect_all().await;
    let digest = listed(&hub, "web__echo");
    let call = |message: &str| {
        let (sink, _) = collecting();
        hub.call(
            "web__echo",
            json!({ "message": message }),
            &digest,
            tokio_util::sync::CancellationToken::new(),
            sink,
        )
    };
    assert_eq!(call("one").await.unwrap().content, "Echo: one");
    let port = server.port();
    server.stop();
    let error = call("two").await.unwrap_err().to_string();
    assert!(error.contains("MCP server `web`"), "{error}");
    let _back = HttpServer::start_on(&w.path("tmp"), port);
    // The first failure in a row is retried at once (see `backoff`).
    assert_eq!(call("three").await.unwrap().content, "Echo: three");
}
