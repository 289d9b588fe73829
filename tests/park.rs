//! Parking, deciding from another process, and resuming, with the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::World;
use serde_json::Value;

const TOUCH: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "done", "expect": ["ok"]}
]}"#;

#[test]
fn park_list_approve_resume_runs_the_frozen_call_exactly_once() {
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    assert!(!w.path("ws/made.txt").exists(), "nothing ran while parked");
    let list = w.airlock(&["approvals", "list"], &[]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains(&run) && listed.contains("echo ran >> made.txt"),
        "{listed}"
    );
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(
        World::events(&resumed)
            .iter()
            .any(|e| e["event"] == "turn_finished" && e["outcome"] == "completed")
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
    // Again: refused, and nothing runs twice.
    let again = w.airlock(&["resume", &run], &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not parked"));
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
    // The audit chain spans both processes and verifies.
    let log = w.path(&format!("state/audit/{run}.jsonl"));
    assert!(
        w.airlock(&["audit", "verify", log.to_str().unwrap()], &[])
            .status
            .success()
    );
}

#[test]
fn deny_then_resume_gives_the_model_the_denial_and_its_reason() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
            {"say": "understood", "expect": ["denied"]}
        ]}"#,
    );
    let (run, code) = w.park(&[]);
    assert!(
        w.airlock(&["deny", &code, "--reason", "not today"], &[])
            .status
            .success()
    );
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stdout)
    );
    let events = World::events(&resumed);
    let denied = events.iter().find(|e| e["event"] == "tool_denied").unwrap();
    assert_eq!(denied["message"], "denied by the user: not today");
    assert!(!w.path("ws/made.txt").exists());
}

#[test]
fn resume_after_the_approval_expired_refuses_and_runs_nothing() {
    let w = World::new(TOUCH);
    // A time to live of 0: the approval has expired by the time anyone can answer it.
    let (run, code) = w.park(&[("AIRLOCK_APPROVAL_TTL_MS", "0")]);
    let approve = w.airlock(&["approve", &code], &[]);
    assert!(String::from_utf8_lossy(&approve.stderr).contains("expired"));
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(resumed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("expired"));
    assert!(!w.path("ws/made.txt").exists());
    let shown = w.airlock(&["audit", "show", &run], &[]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("refused  approve c1: the approval for c1 expired"),
        "{text}"
    );
    assert!(
        text.contains("refused  resume c1: the approval for c1 expired"),
        "{text}"
    );
}

#[test]
fn a_pending_approval_tampered_with_in_the_database_is_refused_at_resume() {
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    let db = rusqlite::Connection::open(w.path("state/airlock.db")).unwrap();
    let changed = db
        .execute(
            "UPDATE approvals SET frozen = replace(frozen, 'echo ran', 'echo pwned')",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(resumed.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&resumed.stderr).contains("refused"),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(!w.path("ws/made.txt").exists());
    let shown = w.airlock(&["audit", "show", &run], &[]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("refused  resume c1: refused: "), "{text}");
}

#[test]
fn a_parked_edit_whose_file_changed_since_is_refused() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
            {"say": "done"}
        ]}"#,
    );
    let (run, code) = w.park(&[]);
    std::fs::write(w.path("ws/calc.py"), "return a - b  # edited by hand\n").unwrap();
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(resumed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("changed since"));
    assert_eq!(
        std::fs::read_to_string(w.path("ws/calc.py")).unwrap(),
        "return a - b  # edited by hand\n"
    );
}

#[test]
fn thirty_two_concurrent_approve_processes_have_exactly_one_winner() {
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    let children: Vec<_> = (0..32)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_airlock"))
                .current_dir(w.dir.path())
                .args(["approve", &code])
                .env("HOME", w.path("home"))
                .env("AIRLOCK_HOME", w.path("state"))
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let wins = children
        .into_iter()
        .map(|mut c| c.wait().unwrap().success())
        .filter(|ok| *ok)
        .count();
    assert_eq!(wins, 1);
    let shown = w.airlock(&["audit", "show", &run], &[]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(
        text.matches("refused  approve c1: the approval for c1 was already decided")
            .count(),
        31,
        "{text}"
    );
}

#[test]
fn approve_with_resume_finishes_the_run_in_one_step_and_only_once() {
    // The parked process has exited by design: the checkpoint and the approval live in the
    // database, and a resume after the run finished is refused.
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    assert!(
        w.airlock(&["approve", &code, "--resume"], &[])
            .status
            .success()
    );
    assert!(!w.airlock(&["resume", &run], &[]).status.success());
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
}

#[test]
fn audit_show_lists_each_decision_with_its_source() {
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    assert!(
        w.airlock(&["approve", &code, "--resume"], &[])
            .status
            .success()
    );
    let shown = w.airlock(&["audit", "show", &run], &[]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("parked by parked"), "{text}");
    assert!(text.contains("allow by remote_code"), "{text}");
    assert!(text.contains("ran: ok"), "{text}");
}

#[test]
fn a_session_grant_given_by_code_outlives_the_process_that_made_it() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo one >> log.txt"}}]},
            {"calls": [{"tool": "bash", "args": {"command": "echo two >> log.txt"}}], "expect": ["ok"]},
            {"calls": [{"tool": "bash", "args": {"command": "touch other"}}], "expect": ["ok"]},
            {"calls": [{"tool": "bash", "args": {"command": "echo four >> log.txt"}}], "expect": ["ok"]},
            {"say": "done", "expect": ["ok"]}
        ]}"#,
    );
    let (run, code) = w.park(&[]);
    assert!(
        w.airlock(&["approve", &code, "--session"], &[])
            .status
            .success()
    );
    // The grant covers `echo two >> log.txt`; `touch other` parks again.
    let first = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        first.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    let parked: Value = World::events(&first)
        .into_iter()
        .find(|e| e["event"] == "parked")
        .unwrap();
    assert_eq!(parked["call_id"], "c3");
    assert!(
        w.airlock(&["approve", parked["code"].as_str().unwrap()], &[])
            .status
            .success()
    );
    // A new process: the grant comes back from the state database and covers `echo four`.
    let second = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/log.txt")).unwrap(),
        "one\ntwo\nfour\n"
    );
}

/// Whether the running run's checkpoint holds the result of a `tool` call (it is on record as
/// finished).
fn kept_a_result_of(w: &World, tool: &str) -> bool {
    let Ok(db) = rusqlite::Connection::open_with_flags(
        w.path("state/airlock.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) else {
        return false;
    };
    let spec: Option<String> = db
        .query_row("SELECT checkpoint FROM runs", [], |r| r.get(0))
        .unwrap_or_default();
    let spec: Value = serde_json::from_str(&spec.unwrap_or_default()).unwrap_or_default();
    spec["checkpoint"]["results"]
        .as_array()
        .is_some_and(|results| results.iter().any(|r| r["tool"] == tool))
}

#[test]
fn kill_nine_of_a_running_exec_then_resume_loses_nothing_and_runs_nothing_twice() {
    let w = World::new(
        r#"{"name": "k", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo first >> ran.txt"}}]},
            {"calls": [
                {"tool": "bash", "args": {"command": "echo second >> ran.txt; sleep 30"}},
                {"tool": "read_file", "args": {"path": "ran.txt"}}
            ], "expect": ["ok"]},
            {"say": "done", "expect": ["failed", "ok"]}
        ]}"#,
    );
    let args = common::exec_args("dangerously-allow-all", &[]);
    let mut child = w
        .command(w.dir.path(), &args, &[])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the long call is running and the read beside it has finished and is on
    // record in the run's checkpoint, then kill the whole thing without warning.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(w.path("ws/ran.txt"))
        .unwrap_or_default()
        .lines()
        .count()
        < 2
        || !kept_a_result_of(&w, "read_file")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the second call never started, or the read beside it never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let run = {
        let db = rusqlite::Connection::open(w.path("state/airlock.db")).unwrap();
        let (id, state): (String, String) = db
            .query_row("SELECT id, state FROM runs", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(state, "running");
        id
    };
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&resumed.stdout),
        String::from_utf8_lossy(&resumed.stderr)
    );
    // The call that was running is reported as interrupted, not run again; the model went on.
    assert_eq!(
        std::fs::read_to_string(w.path("ws/ran.txt")).unwrap(),
        "first\nsecond\n"
    );
    let again = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "a finished run does not resume"
    );
}

#[test]
fn an_approved_call_whose_command_then_fails_still_used_its_approval_and_never_runs_again() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt && exit 3"}}]},
            {"say": "it failed"}
        ]}"#,
    );
    let (run, code) = w.park(&[]);
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    let first = w.airlock(&["resume", &run], &[]);
    let failed = World::events(&first)
        .into_iter()
        .find(|e| e["event"] == "tool_finished")
        .expect("the call ran");
    assert_eq!(failed["exit_code"], 3, "{failed}");
    let again = w.airlock(&["resume", &run], &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(!w.airlock(&["approve", &code], &[]).status.success());
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n",
        "the failed call ran exactly once"
    );
}

#[test]
fn audit_logs_heads_and_run_logs_are_private_to_the_user_and_so_is_a_state_dir_trust_makes() {
    use std::os::unix::fs::MetadataExt;
    let w = World::new(TOUCH);
    std::fs::remove_dir(w.path("state")).unwrap();
    let (run, code) = w.park(&[]);
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    assert_eq!(w.airlock(&["resume", &run], &[]).status.code(), Some(0));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().mode() & 0o777;
    let state = w.path("state");
    let mut checked = 0;
    for dir in [
        state.clone(),
        state.join("audit"),
        state.join("runs"),
        state.join(format!("runs/{run}")),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_type().unwrap().is_file() {
                assert_eq!(mode(&entry.path()), 0o600, "{}", entry.path().display());
                checked += 1;
            }
        }
    }
    assert!(
        state.join(format!("audit/{run}.jsonl.head")).exists()
            && state.join(format!("runs/{run}/c1.log")).exists(),
        "the head and the run log were among the files checked"
    );
    assert!(checked >= 5, "{checked} files");

    // `airlock trust` with no state directory yet makes it private too.
    let fresh = World::new(TOUCH);
    std::fs::remove_dir(fresh.path("state")).unwrap();
    std::fs::create_dir_all(fresh.path("ws/.airlock")).unwrap();
    std::fs::write(
        fresh.path("ws/.airlock/config.toml"),
        "mode = \"read-only\"\n",
    )
    .unwrap();
    let trusted = fresh.airlock(&["trust", "--workspace", "ws"], &[]);
    assert!(trusted.status.success(), "{}", common::stderr(&trusted));
    assert_eq!(mode(&fresh.path("state")), 0o700);
    for entry in std::fs::read_dir(fresh.path("state")).unwrap().flatten() {
        assert_eq!(mode(&entry.path()), 0o600, "{}", entry.path().display());
    }
}

#[test]
fn a_rules_file_changed_while_a_run_was_parked_is_never_used_without_the_person_confirming() {
    let w = World::new(TOUCH);
    std::fs::write(w.path("rules.toml"), "deny = [\"bash(curl *)\"]\n").unwrap();
    let (run, code) = w.park_with(&["--rules", "rules.toml"], &[]);
    // Something rewrote the rules meanwhile (what the red team did from inside a command).
    std::fs::write(w.path("rules.toml"), "allow = [\"bash(curl *)\"]\n").unwrap();
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    let refused = w.airlock(&["resume", &run], &[]);
    assert_eq!(refused.status.code(), Some(1));
    let why = common::stderr(&refused);
    assert!(
        why.contains("rules.toml") && why.contains("--accept-changed-policy"),
        "{why}"
    );
    assert!(!w.path("ws/made.txt").exists(), "nothing ran");
    // Still parked: once the person has looked, they go on.
    let resumed = w.airlock(&["resume", &run, "--accept-changed-policy"], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        common::stderr(&resumed)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "ran\n"
    );
}

#[test]
fn exec_for_a_person_names_the_workspace_it_was_given_and_how_asks_are_answered() {
    let w = World::new(TOUCH);
    let out = w.airlock(
        &[
            "exec",
            "--human",
            "--scenario",
            "s.json",
            "--workspace",
            "ws",
            "--approvals",
            "park",
        ],
        &[],
    );
    let text = common::stdout(&out);
    let header: Vec<&str> = text.lines().take(2).collect();
    assert!(header[0].contains("asks are parked"), "{text}");
    assert!(header[1].starts_with("workspace: "), "{text}");
    assert!(
        !header[1].contains("scratch copy"),
        "the user's own workspace: {text}"
    );
}

/// The session's agent delegates to two sub-agents; each writes a file with a command that
/// asks, and the parent reports both answers.
const TWO_AGENTS: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"say": "splitting", "calls": [
        {"tool": "agent", "args": {"task": "left", "prompt": "write left"}},
        {"tool": "agent", "args": {"task": "right", "prompt": "write right"}}
    ]},
    {"say": "both done", "expect": ["ok", "ok"], "expect_seen": ["left wrote", "right wrote"]}
], "agents": {
    "left": {"steps": [
        {"calls": [{"tool": "bash", "args": {"command": "echo left >> left.txt"}}]},
        {"say": "left wrote", "expect": ["ok"]}
    ]},
    "right": {"steps": [
        {"calls": [{"tool": "bash", "args": {"command": "echo right >> right.txt"}}]},
        {"say": "right wrote", "expect": ["ok"]}
    ]}
}}"#;

/// Runs the scenario headless with asks parked; the `parked` event it printed.
fn parks(w: &World) -> Value {
    let out = w.exec("park", &[], &[]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parked_event(&out)
}

/// The `parked` event a command printed.
fn parked_event(out: &std::process::Output) -> Value {
    World::events(out)
        .into_iter()
        .find(|e| e["event"] == "parked")
        .unwrap_or_else(|| panic!("no parked event: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn a_sub_agents_request_parks_the_run_and_each_resume_brings_the_whole_tree_back() {
    let w = World::new(TWO_AGENTS);
    let parked = parks(&w);
    // The run parks on the first sub-agent's request, which names it, and nothing ran.
    assert_eq!(parked["agent"], "a1", "{parked}");
    assert!(parked["call_id"].as_str().unwrap().starts_with("a1-"));
    assert!(!w.path("ws/left.txt").exists() && !w.path("ws/right.txt").exists());
    let run = parked["run"].as_str().unwrap().to_string();
    // Listed with its agent, from any terminal.
    let inbox = w.airlock(&["inbox"], &[]);
    let listed = String::from_utf8_lossy(&inbox.stdout);
    assert!(
        listed.contains("a1 (left)") && listed.contains("echo left"),
        "{listed}"
    );

    let code = parked["code"].as_str().unwrap();
    assert!(w.airlock(&["approve", code], &[]).status.success());
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    // a1 went on and finished; a2 asked again, and the run parked on it.
    assert_eq!(
        std::fs::read_to_string(w.path("ws/left.txt")).unwrap(),
        "left\n"
    );
    let events = World::events(&resumed);
    assert!(
        events.iter().any(|e| e["event"] == "agent_finished"
            && e["sub_agent"] == "a1"
            && e["status"] == "done"),
        "{events:?}"
    );
    let parked = parked_event(&resumed);
    assert_eq!(parked["agent"], "a2", "{parked}");

    let code = parked["code"].as_str().unwrap();
    assert!(w.airlock(&["approve", code], &[]).status.success());
    let last = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        last.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&last.stderr)
    );
    assert!(
        World::events(&last)
            .iter()
            .any(|e| e["event"] == "turn_finished" && e["outcome"] == "completed")
    );
    // Each command ran exactly once, and the parent heard both answers.
    assert_eq!(
        std::fs::read_to_string(w.path("ws/left.txt")).unwrap(),
        "left\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/right.txt")).unwrap(),
        "right\n"
    );
    let log = w.path(&format!("state/audit/{run}.jsonl"));
    assert!(
        w.airlock(&["audit", "verify", log.to_str().unwrap()], &[])
            .status
            .success()
    );
}

#[test]
fn a_parked_sub_agent_goes_on_under_the_narrower_sandbox_it_had() {
    // The sub-agent's commands run read-only; its command asks (it writes) and parks. Resumed
    // and approved, it runs in the sub-agent's read-only sandbox, not the parent's wider one.
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "agent", "args": {"task": "narrow", "prompt": "p", "sandbox": "read-only"}}]},
            {"say": "done", "expect": ["ok"]}
        ], "agents": {"narrow": {"steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo x > out.txt"}}]},
            {"say": "tried"}
        ]}}}"#,
    );
    let parked = parks(&w);
    assert_eq!(parked["agent"], "a1", "{parked}");
    let run = parked["run"].as_str().unwrap().to_string();
    assert!(
        w.airlock(&["approve", parked["code"].as_str().unwrap()], &[])
            .status
            .success()
    );
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let events = World::events(&resumed);
    let again = events
        .iter()
        .find(|e| e["event"] == "agent_started")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(
        (&again["sub_agent"]["id"], &again["sandbox"]),
        (&"a1".into(), &"read-only".into())
    );
    assert!(
        !w.path("ws/out.txt").exists(),
        "the read-only sandbox kept the write out"
    );
}

#[test]
fn airlock_undo_lists_a_headless_runs_calls_and_puts_back_what_one_changed() {
    let w = World::new(
        r#"{"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo broken > calc.py && rm notes.txt"}}]},
            {"say": "done", "expect": ["ok"]}
        ]}"#,
    );
    std::fs::write(w.path("ws/notes.txt"), "keep me\n").unwrap();
    let out = w.exec("dangerously-allow-all", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stdout(&out));
    assert!(
        World::events(&out)
            .iter()
            .any(|e| e["event"] == "workspace_changed"
                && e["changes"]["modified"] == 1
                && e["changes"]["deleted"] == 1),
        "{}",
        common::stdout(&out)
    );
    let listed = common::stdout(&w.airlock(&["undo"], &[]));
    assert!(
        listed.contains("c1") && listed.contains("changed 1 file, deleted 1"),
        "{listed}"
    );
    let session = listed.split_whitespace().nth(1).unwrap().to_string();
    // Asked, and answered no: nothing changes.
    let kept = w.airlock(&["undo", &session, "c1"], &[]);
    assert_eq!(kept.status.code(), Some(1));
    assert!(!w.path("ws/notes.txt").exists());
    let undone = w.airlock(&["undo", &session, "c1", "--yes"], &[]);
    assert_eq!(undone.status.code(), Some(0), "{}", common::stdout(&undone));
    assert_eq!(
        std::fs::read_to_string(w.path("ws/calc.py")).unwrap(),
        "return a - b\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/notes.txt")).unwrap(),
        "keep me\n"
    );
    // A session id is never a path.
    let refused = w.airlock(&["undo", "../state"], &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not a session id"));
}
