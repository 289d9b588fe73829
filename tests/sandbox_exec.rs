//! `airlock exec` with the sandbox, as a user runs it: an approved script that goes for a planted
//! key, writes to the home and calls a local listener is refused all three, the run finishes,
//! and the model reads why. Without Landlock every command asks; parked calls keep their profile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{World, stderr};
use serde_json::{Value, json};

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted-secret\n";

fn exec(w: &World, approvals: &str, env: &[(&str, &str)]) -> std::process::Output {
    w.exec(approvals, &[], env)
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

#[test]
fn an_approved_script_going_for_a_key_the_home_and_the_network_is_refused_all_three_and_the_model_reads_why()
 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let w = World::new("{}");
    let home = std::fs::canonicalize(w.path("home")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), KEY).unwrap();
    // The script is project code the policy cannot see into: it asks, and is approved.
    let script = format!(
        "cat \"$HOME/.ssh/id_ed25519\"\necho x > \"$HOME/x\"\ncurl -sS -m 5 http://127.0.0.1:{port}/\necho finished\n"
    );
    let scenario = json!({"name": "escape", "prompt": "go", "steps": [
        {"calls": [{"tool": "write_file", "args": {"path": "steal.sh", "content": script}}]},
        {"expect": ["ok"], "calls": [{"tool": "bash", "args": {"command": "bash steal.sh"}}]},
        {"expect": ["ok"], "expect_seen": [
            format!("reading {}/.ssh/id_ed25519: a protected place", home.display()),
            format!("writing {}/x: outside what `workspace-write` may write", home.display()),
            "a network call: curl: (7)".to_string(),
            "\"sandbox\": \"network\"".to_string(),
            "finished".to_string(),
        ], "say": "The sandbox refused the key, the home and the network."}
    ]});
    std::fs::write(w.path("s.json"), scenario.to_string()).unwrap();
    let out = exec(&w, "dangerously-allow-all", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    let events = World::events(&out);
    let text: String = of_kind(&events, "tool_output")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(!text.contains("planted-secret"), "{text}");
    assert!(!home.join("x").exists());
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "the listener was reached");
    assert!(
        of_kind(&events, "turn_finished")
            .iter()
            .any(|e| e["outcome"] == "completed"),
        "{events:?}"
    );
}

#[test]
fn without_landlock_even_a_read_only_command_asks_and_airlock_says_so_at_start() {
    let w = World::new(
        r#"{"name": "n", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "ls"}}]},
            {"expect": ["denied"], "expect_seen": ["runs without a sandbox"], "say": "asked"}
        ]}"#,
    );
    let out = exec(&w, "deny", &[("AIRLOCK_SANDBOX_PRETEND_NO_LANDLOCK", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no sandbox: Landlock is taken as missing"),
        "{}",
        stderr(&out)
    );
    // With Landlock, the same command runs without asking.
    let w = World::new(
        r#"{"name": "y", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "ls"}}]},
            {"expect": ["ok"], "say": "ran"}
        ]}"#,
    );
    let out = exec(&w, "deny", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_command_with_the_sandbox_off_is_always_asked() {
    let w = World::new(
        r#"{"name": "off", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "ls", "sandbox": "off"}}]},
            {"expect": ["denied"], "expect_seen": ["runs without the sandbox"], "say": "asked"}
        ]}"#,
    );
    let out = exec(&w, "deny", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_parked_call_runs_under_the_profile_it_was_frozen_with_whatever_the_config_says_later() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo ran > made.txt"}}]},
            {"say": "done", "expect": ["ok"]}
        ]}"#,
    );
    let (run, code) = w.park(&[]);
    let list = w.airlock(&["approvals", "list"], &[]);
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("workspace-write"),
        "the parked call shows its profile: {}",
        String::from_utf8_lossy(&list.stdout)
    );
    // The user's default turns narrower meanwhile; the approved call keeps the profile it was
    // approved with (it is in its frozen arguments and digest).
    std::fs::create_dir_all(w.path("home/.config/airlock")).unwrap();
    std::fs::write(
        w.path("home/.config/airlock/config.toml"),
        "sandbox = \"read-only\"\n",
    )
    .unwrap();
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    // (The new user config is a changed policy file: the person confirms it.)
    let resumed = w.airlock(&["resume", &run, "--accept-changed-policy"], &[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
}

#[test]
fn allow_all_never_runs_a_call_the_model_asked_to_run_without_the_sandbox() {
    let w = World::new(
        &json!({"name": "off", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo ran > marker", "sandbox": "off"}}]},
            {"say": "understood"}
        ]})
        .to_string(),
    );
    let out = exec(&w, "dangerously-allow-all", &[]);
    let events = World::events(&out);
    let finished = of_kind(&events, "tool_finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    assert_eq!(finished[0]["status"], "failed");
    assert!(
        finished[0]["error"]
            .as_str()
            .unwrap()
            .contains("only a person can approve"),
        "{events:?}"
    );
    assert!(!w.path("ws/marker").exists(), "it ran unconfined");

    // The person's own choice still holds: `--sandbox off` runs it.
    let chosen = w.exec("dangerously-allow-all", &["--sandbox", "off"], &[]);
    assert!(chosen.status.success(), "{}", stderr(&chosen));
    assert!(w.path("ws/marker").exists());
}
