//! Real providers end to end: `airlock exec` against real third-party mock servers started here on
//! 127.0.0.1 (installed by scripts/test-servers.sh): @copilotkit/aimock for OpenAI and Anthropic
//! fixtures, llmock for faults (429 with Retry-After, truncated and stalled streams, malformed
//! tool calls). A full turn each: the model asks for a tool, the gate decides, the result goes
//! back, the model answers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn servers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers")
}

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn aimock(fixtures: &Path) -> Server {
    let cli = servers().join("npm/node_modules/@copilotkit/aimock/dist/cli.js");
    assert!(
        cli.exists(),
        "aimock is not installed: run scripts/test-servers.sh (or scripts/test.sh)"
    );
    let mut child = Command::new("node")
        .arg(&cli)
        .args(["-p", "0", "-h", "127.0.0.1", "-f"])
        .arg(fixtures)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    let stdout = child.stdout.take().unwrap();
    let mut url = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(at) = line.find("http://127.0.0.1:") {
            url = line[at..].trim().to_string();
            break;
        }
    }
    assert!(!url.is_empty(), "aimock did not say where it listens");
    Server { child, url }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn llmock() -> Server {
    let py = servers().join("py");
    assert!(
        py.exists(),
        "llmock is not installed: run scripts/test-servers.sh (or scripts/test.sh)"
    );
    let port = free_port();
    let child = Command::new("python3")
        .args([
            "-c",
            "from llmock.cli import app; app()",
            "serve",
            "--port",
            &port.to_string(),
        ])
        .env("PYTHONPATH", &py)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs");
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "llmock did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Server { child, url }
}

/// POSTs JSON with curl-free std networking (a tiny HTTP/1.1 client for the control API).
fn post(url: &str, path: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

fn get(url: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

struct Run {
    status: Option<i32>,
    events: Vec<Value>,
    stdout: String,
    stderr: String,
}

fn exec(root: &Path, provider: &str, base_url: &str, key_var: &str, key: &str) -> Run {
    let ws = root.join("ws");
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .current_dir(&ws)
        .args([
            "exec",
            "--provider",
            provider,
            "--model",
            "test-model",
            "--base-url",
            base_url,
            "what is in the workspace?",
        ])
        .env("HOME", root.join("home"))
        .env("AIRLOCK_HOME", root.join("state"))
        .env("XDG_CONFIG_HOME", root.join("home/.config"))
        .env(key_var, key)
        .env_remove("AIRLOCK_PROVIDER")
        .env_remove("AIRLOCK_MODEL")
        .env_remove("AIRLOCK_BASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Run {
        status: out.status.code(),
        events: stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["ws", "home/.config/airlock", "state"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::write(dir.path().join("ws/notes.txt"), "hello\n").unwrap();
    // A short read timeout, so a stalled stream is noticed quickly.
    std::fs::write(
        dir.path().join("home/.config/airlock/config.toml"),
        "read_timeout_secs = 3\n",
    )
    .unwrap();
    dir
}

fn kinds(run: &Run) -> Vec<String> {
    run.events
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect()
}

fn text(run: &Run) -> String {
    run.events
        .iter()
        .filter(|e| e["event"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect()
}

fn outcome(run: &Run) -> Value {
    run.events
        .iter()
        .find(|e| e["event"] == "turn_finished")
        .unwrap()["outcome"]
        .clone()
}

fn fixtures(dir: &Path) -> PathBuf {
    let path = dir.join("fixtures.json");
    std::fs::write(
        &path,
        r#"{"fixtures": [
          {"match": {"userMessage": "what is in the workspace?", "hasToolResult": false},
           "response": {"toolCalls": [{"name": "list_dir", "arguments": {"path": "."}}]}},
          {"match": {"userMessage": "what is in the workspace?", "hasToolResult": true},
           "response": {"content": "The workspace holds notes.txt."}}
        ]}"#,
    )
    .unwrap();
    path
}

#[test]
fn a_full_turn_against_an_openai_compatible_server() {
    let root = root();
    let server = aimock(&fixtures(root.path()));
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        "sk-test-openai-0123456789",
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let k = kinds(&run);
    let position = |name: &str| {
        k.iter()
            .position(|x| x == name)
            .unwrap_or_else(|| panic!("no {name}: {k:?}"))
    };
    // The model asked for a tool, it ran, its result went back, and the model answered.
    assert!(position("tool_started") < position("tool_finished"));
    assert!(position("tool_finished") < position("text_delta"));
    assert_eq!(text(&run), "The workspace holds notes.txt.");
    assert_eq!(outcome(&run), "completed");
    // The second request carried the tool's result back, and the assistant turn had "" content.
    let journal = get(&server.url, "/__aimock/journal");
    let body = journal.split("\r\n\r\n").nth(1).unwrap_or("");
    assert!(body.contains("\"role\":\"tool\""), "{body}");
    assert!(body.contains("notes.txt"), "{body}");
    assert!(!run.stdout.contains("sk-test-openai") && !run.stderr.contains("sk-test-openai"));
}

#[test]
fn a_full_turn_against_an_anthropic_server() {
    let root = root();
    let server = aimock(&fixtures(root.path()));
    let run = exec(
        root.path(),
        "anthropic",
        &server.url,
        "ANTHROPIC_API_KEY",
        "sk-ant-test-0123456789",
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        kinds(&run).contains(&"tool_finished".to_string()),
        "{}",
        run.stdout
    );
    assert_eq!(text(&run), "The workspace holds notes.txt.");
    assert_eq!(outcome(&run), "completed");
}

#[test]
fn rate_limits_are_retried_honouring_retry_after() {
    let root = root();
    let server = llmock();
    post(
        &server.url,
        "/_llmock/scenario",
        r#"{"behaviors": [
            {"type": "fail", "status": 429, "retry_after": 0.3, "times": 2},
            {"type": "reply", "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}
        ]}"#,
    );
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        "mock",
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(kinds(&run).contains(&"tool_finished".to_string()));
    // Whoever watches sees each wait: why, which attempt comes next, and when.
    let said = text(&run);
    assert!(said.contains("HTTP 429"), "{said}");
    // llmock sends `Retry-After: 1` for 0.3 s (whole seconds, as HTTP has them).
    assert!(said.contains("; attempt 2 of 4 in 1.0s]"), "{said}");
    assert!(said.contains("; attempt 3 of 4 in 1.0s]"), "{said}");
    let verdict = get(&server.url, "/_llmock/verdict?format=text");
    assert!(verdict.contains("PASS"), "{verdict}");
}

#[test]
fn a_stream_that_breaks_off_is_asked_again_and_never_half_used() {
    let root = root();
    let server = llmock();
    post(
        &server.url,
        "/_llmock/scenario",
        r#"{"behaviors": [
            {"type": "stream_fault", "kind": "truncate", "after_chunks": 1, "times": 2},
            {"type": "reply", "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}
        ]}"#,
    );
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        "mock",
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let verdict = get(&server.url, "/_llmock/verdict?format=text");
    assert!(verdict.contains("PASS"), "{verdict}");
}

#[test]
fn a_stream_that_keeps_breaking_off_is_an_error_naming_the_provider_and_no_tool_runs() {
    let root = root();
    let server = llmock();
    post(
        &server.url,
        "/_llmock/scenario",
        r#"{"behaviors": [
            {"type": "reply", "tool_calls": [{"name": "bash", "arguments": {"command": "touch made"}}], "times": null},
            {"type": "stream_fault", "kind": "truncate", "after_chunks": 1, "times": null}
        ]}"#,
    );
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        "mock",
    );
    assert_eq!(run.status, Some(1), "{}", run.stdout);
    let message = outcome(&run)["failed"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("openai")
            && message.contains("/chat/completions")
            && message.contains("finish marker"),
        "{message}"
    );
    assert!(!kinds(&run).contains(&"tool_started".to_string()));
    assert!(!root.path().join("ws/made").exists());
}

#[test]
fn a_malformed_tool_call_runs_nothing_and_the_model_is_told_why_and_asked_again() {
    let root = root();
    let server = llmock();
    post(
        &server.url,
        "/_llmock/scenario",
        r#"{"behaviors": [{"type": "tool_fault", "kind": "malformed_arguments"}]}"#,
    );
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        "mock",
    );
    // The turn goes on: the refusal is an event, and the model is asked again (llmock's fault
    // is for one answer; the next is its plain reply).
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let denied: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["event"] == "tool_denied")
        .collect();
    assert_eq!(denied.len(), 1, "{}", run.stdout);
    assert_eq!(denied[0]["source"], "error");
    let message = denied[0]["message"].as_str().unwrap();
    assert!(
        message.contains("not valid JSON") && message.contains("send the call again"),
        "{message}"
    );
    assert!(!kinds(&run).contains(&"tool_started".to_string()));
    assert_eq!(outcome(&run), "completed", "{}", run.stdout);
}

#[test]
fn a_stalled_stream_is_noticed_by_the_read_timeout_and_asked_again() {
    let root = root();
    let server = llmock();
    post(
        &server.url,
        "/_llmock/scenario",
        r#"{"behaviors": [{"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 60}]}"#,
    );
    let started = Instant::now();
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        "mock",
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the 60 s stall was sat through"
    );
    let verdict = get(&server.url, "/_llmock/verdict?format=text");
    assert!(!verdict.contains("no_read_timeout"), "{verdict}");
}

#[test]
fn an_api_key_never_appears_in_output_errors_or_the_audit_log() {
    let root = root();
    let server = llmock();
    post(
        &server.url,
        "/_llmock/scenario",
        r#"{"behaviors": [{"type": "fail", "status": 401}]}"#,
    );
    let key = "sk-live-do-not-leak-4242";
    let run = exec(
        root.path(),
        "openai",
        &format!("{}/v1", server.url),
        "OPENAI_API_KEY",
        key,
    );
    assert_eq!(run.status, Some(1));
    let message = outcome(&run)["failed"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("401"), "{message}");
    assert!(!run.stdout.contains(key) && !run.stderr.contains(key));
    for entry in walk(&root.path().join("state")) {
        let content = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(!content.contains(key), "{} holds the key", entry.display());
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
