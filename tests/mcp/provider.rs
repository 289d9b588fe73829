//! An MCP tool called by a model through a real provider path: `airlock exec` against
//! @copilotkit/aimock (an OpenAI-compatible fixture server on 127.0.0.1, installed by
//! scripts/test-servers.sh), whose fixture asks for `everything__echo`; the call passes the gate,
//! runs on server-everything, and its result goes back to the model in the next request.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};

use super::*;

struct Aimock {
    child: Child,
    url: String,
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn aimock(fixtures: &Path) -> Aimock {
    let cli = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-servers/npm/node_modules/@copilotkit/aimock/dist/cli.js");
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
    Aimock { child, url }
}

/// The requests aimock received, as it keeps them (asked in HTTP/1.0, so the body comes whole,
/// not chunked).
fn journal(url: &str) -> String {
    let host = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /__aimock/journal HTTP/1.0\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

#[test]
fn a_model_behind_a_real_provider_calls_an_mcp_tool_and_gets_its_result_back() {
    let w = World::new();
    std::fs::write(
        w.path("home/.config/airlock/config.toml"),
        format!(
            "[mcp_servers.everything]\ncommand = {:?}\n",
            npm_bin("mcp-server-everything")
        ),
    )
    .unwrap();
    let fixtures = w.path("fixtures.json");
    std::fs::write(
        &fixtures,
        r#"{"fixtures": [
          {"match": {"userMessage": "echo through MCP", "hasToolResult": false},
           "response": {"toolCalls": [{"name": "everything__echo", "arguments": {"message": "from the model"}}]}},
          {"match": {"userMessage": "echo through MCP", "hasToolResult": true},
           "response": {"content": "The server echoed it."}}
        ]}"#,
    )
    .unwrap();
    let server = aimock(&fixtures);
    let ws = w.ws();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .current_dir(&ws)
        .args(["exec", "--provider", "openai", "--model", "test-model"])
        .args(["--base-url", &format!("{}/v1", server.url)])
        .arg("echo through MCP")
        .env("HOME", w.path("home"))
        .env("AIRLOCK_HOME", w.path("state"))
        .env("TMPDIR", w.path("tmp"))
        .env("XDG_CONFIG_HOME", w.path("home/.config"))
        .env("OPENAI_API_KEY", "sk-test-mcp-0123456789")
        .env_remove("AIRLOCK_PROVIDER")
        .env_remove("AIRLOCK_MODEL")
        .env_remove("AIRLOCK_BASE_URL")
        .env_remove("AIRLOCK_RULES")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // The model's call passed the gate (read-only: no one was asked) and ran on the server.
    let call = events
        .iter()
        .find(|e| e["event"] == "tool_finished")
        .expect("the tool ran");
    assert_eq!(call["status"], "ok", "{call}");
    assert!(events.iter().all(|e| e["event"] != "tool_denied"));
    let answer: String = events
        .iter()
        .filter(|e| e["event"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(answer, "The server echoed it.");

    // What the provider received: the MCP tool offered with its schema, then its result.
    let requests: Value = serde_json::from_str(&journal(&server.url)).unwrap();
    let bodies: Vec<&Value> = requests
        .as_array()
        .expect("the journal is a list")
        .iter()
        .map(|r| &r["body"])
        .collect();
    assert_eq!(bodies.len(), 2, "{requests:#}");
    let offered = bodies[0]["tools"].to_string();
    assert!(offered.contains("everything__echo"), "{offered}");
    let messages = bodies[1]["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the second request carries the tool's result");
    assert_eq!(result["content"], "Echo: from the model", "{result}");
}
