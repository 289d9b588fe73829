//! Every output path is bounded in bytes as well as lines: a command printing one 20 MB line
//! crosses `airlock exec`'s events as its first 2 KiB and a marker saying how much was left out
//! and where the output is; the model reads a result of a few KiB; the run log keeps at most its
//! cap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use airlock::output::MAX_LINE_BYTES;
use airlock::output::OutputSink;
use airlock::tools::bash::{BashRun, run};
use airlock::tools::runlog::LogLimits;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// One line of 20,000,000 bytes, no newline.
const LONG_LINE: &str = "head -c 20000000 /dev/zero | tr '\\0' x";
const LONG: u64 = 20_000_000;

/// The events `airlock exec` printed for `scenario` (steps), run in a scratch home.
fn exec(root: &Path, steps: Value) -> (Option<i32>, Vec<u8>, String) {
    for sub in ["home", "state", "tmp", "ws"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let scenario = root.join("scenario.json");
    let body = serde_json::json!({"name": "bounds", "prompt": "bounds", "steps": steps});
    std::fs::write(&scenario, body.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["exec", "--scenario"])
        .arg(&scenario)
        .arg("--workspace")
        .arg(root.join("ws"))
        .args(["--approvals", "dangerously-allow-all"])
        .env("HOME", root.join("home"))
        .env("AIRLOCK_HOME", root.join("state"))
        .env("TMPDIR", root.join("tmp"))
        .env("XDG_CONFIG_HOME", root.join("home/.config"))
        .env_remove("AIRLOCK_PROVIDER")
        .env_remove("AIRLOCK_MODEL")
        .env_remove("AIRLOCK_BASE_URL")
        .env_remove("AIRLOCK_MODE")
        .env_remove("AIRLOCK_RULES")
        .output()
        .unwrap();
    (
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is a JSON event"))
        .collect()
}

#[test]
fn a_twenty_megabyte_line_crosses_exec_as_two_kibibytes_and_a_marker_naming_the_run_log() {
    let root = tempfile::tempdir().unwrap();
    let (status, stdout, stderr) = exec(
        root.path(),
        serde_json::json!([
            {"calls": [{"tool": "bash", "args": {"command": LONG_LINE}}]},
            // The model's result says the line was cut, and how big the output was.
            {"say": "done", "expect_seen": ["… [line cut]", "printed 20000000 bytes in all"]}
        ]),
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        stdout.len() < 16 * 1024,
        "{} bytes of events for a 20 MB line",
        stdout.len()
    );
    let events = events(&stdout);
    let text: String = events
        .iter()
        .filter(|e| e["event"] == "tool_output")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    let log = events
        .iter()
        .find(|e| e["event"] == "tool_finished")
        .and_then(|e| e["log"].as_str())
        .expect("the run log is named");
    // What passes of a line: one byte past what a viewer keeps, so the viewer cuts it.
    let passes = MAX_LINE_BYTES + 1;
    let left_out = LONG - passes as u64;
    assert_eq!(
        text,
        format!(
            "{} … [airlock: {left_out} more bytes of this line left out; the run log {log} keeps \
             the first 16 MiB and the last 1 MiB of the output]",
            "x".repeat(passes)
        )
    );
    // The log keeps its cap: 16 MiB from the start, 1 MiB from the end, and a line between.
    let logged = std::fs::metadata(log).unwrap().len();
    assert!(
        logged <= 17 * 1024 * 1024 + 200,
        "the log has {logged} bytes"
    );
    assert!(logged > 17 * 1024 * 1024, "the log has {logged} bytes");
}

#[test]
fn long_lines_on_both_streams_cross_exec_as_two_kibibytes_a_line_wherever_they_come() {
    let root = tempfile::tempdir().unwrap();
    // 300 lines of 100 KB on stdout (past the 200-line head), then one on stderr that never
    // ends: 30 MB, of which a few hundred KiB may cross.
    let command = "for i in $(seq 300); do head -c 100000 /dev/zero | tr '\\0' a; echo; done; \
                   head -c 100000 /dev/zero | tr '\\0' b >&2";
    let (status, stdout, stderr) = exec(
        root.path(),
        serde_json::json!([
            {"calls": [{"tool": "bash", "args": {"command": command}}]},
            {"say": "done"}
        ]),
    );
    assert_eq!(status, Some(0), "{stderr}");
    let events = events(&stdout);
    let outputs: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool_output")
        .collect();
    let text: String = outputs
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    // Every line that crossed is at most 2 KiB and its marker.
    for line in text.lines() {
        assert!(
            line.len() <= MAX_LINE_BYTES + 400,
            "a line of {}",
            line.len()
        );
        assert!(
            line.contains("more bytes of this line left out"),
            "{line:.80}"
        );
    }
    let skipped: u64 = outputs
        .iter()
        .map(|e| e["skipped"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(text.lines().count() as u64 + skipped, 301);
    assert!(
        stdout.len() < 1024 * 1024,
        "{} bytes of events",
        stdout.len()
    );
    let stderr_text: String = outputs
        .iter()
        .filter(|e| e["stream"] == "stderr")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(stderr_text.starts_with(&"b".repeat(MAX_LINE_BYTES)));
    assert!(stderr_text.contains(" … [airlock: 97951 more bytes of this line left out"));
}

#[tokio::test]
async fn the_models_result_for_a_twenty_megabyte_line_is_a_few_kibibytes_and_names_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.log");
    let outcome = run(BashRun {
        command: LONG_LINE.into(),
        workspace: dir.path().to_path_buf(),
        timeout: Duration::from_secs(60),
        cancel: CancellationToken::new(),
        sink: OutputSink::discard(),
        log: Some(log.clone()),
        log_limits: LogLimits::DEFAULT,
        hidden_env: Vec::new(),
        note: None,
        sandbox: None,
    })
    .await
    .unwrap();
    let content = outcome.content;
    assert!(
        content.len() < 4096,
        "{} bytes: {content:.300}",
        content.len()
    );
    assert!(content.contains(&format!("{} … [line cut]\n", "x".repeat(100))));
    assert!(content.contains("the command printed 20000000 bytes in all"));
    assert!(content.contains(&format!("output log: {}", log.display())));
}
