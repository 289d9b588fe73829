//! Reviewing a parked proposal from another terminal, with the real binary: `airlock approvals
//! list` numbers the hunks, `airlock approve CODE --hunks 1,3` keeps only those, and
//! `--command '...'` runs an edited command, judged again before it counts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::World;

/// Twenty lines, and the same with lines 2, 10 and 18 changed.
fn twenty_lines() -> (String, String) {
    let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "LINE 2\n")
        .replace("line 10\n", "LINE 10\n")
        .replace("line 18\n", "LINE 18\n");
    (old, new)
}

fn write_world(expect: &str, seen: &[&str]) -> (World, String) {
    let (old, new) = twenty_lines();
    let scenario = serde_json::json!({"name": "p", "prompt": "go", "steps": [
        {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
        {"say": "done", "expect": [expect], "expect_seen": seen}
    ]});
    let w = World::new(&scenario.to_string());
    std::fs::write(w.path("ws/f.txt"), &old).unwrap();
    (w, old)
}

fn command_world(expect: &str, seen: &[&str]) -> World {
    let scenario = serde_json::json!({"name": "p", "prompt": "go", "steps": [
        {"calls": [{"tool": "bash", "args": {"command": "echo proposed >> made.txt"}}]},
        {"say": "done", "expect": [expect], "expect_seen": seen}
    ]});
    World::new(&scenario.to_string())
}

fn resumed_ok(w: &World, run: &str) {
    let resumed = w.airlock(&["resume", run], &[]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&resumed.stdout),
        String::from_utf8_lossy(&resumed.stderr)
    );
}

#[test]
fn approvals_list_numbers_the_hunks_and_approve_keeps_only_those_named() {
    let (w, old) = write_world(
        "ok",
        &["hunks 1 and 3 of 3 applied, hunk 2 dropped", "+LINE 10"],
    );
    let (run, code) = w.park(&[]);
    let list = w.airlock(&["approvals", "list"], &[]);
    let listed = String::from_utf8_lossy(&list.stdout);
    for n in 1..=3 {
        assert!(listed.contains(&format!("@@   [hunk {n}]")), "{listed}");
    }
    let approved = w.airlock(&["approve", &code, "--hunks", "1,3"], &[]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert!(String::from_utf8_lossy(&approved.stderr).contains("hunks 1 and 3 kept"));
    resumed_ok(&w, &run);
    let written = std::fs::read_to_string(w.path("ws/f.txt")).unwrap();
    assert_eq!(
        written,
        old.replace("line 2\n", "LINE 2\n")
            .replace("line 18\n", "LINE 18\n")
    );
}

#[test]
fn approve_with_a_command_runs_that_command_and_the_model_hears_both() {
    let w = command_world(
        "ok",
        &["echo proposed >> made.txt", "echo edited >> made.txt"],
    );
    let (run, code) = w.park(&[]);
    let approved = w.airlock(
        &["approve", &code, "--command", "echo edited >> made.txt"],
        &[],
    );
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    resumed_ok(&w, &run);
    assert_eq!(
        std::fs::read_to_string(w.path("ws/made.txt")).unwrap(),
        "edited\n"
    );
}

#[test]
fn approve_with_a_command_the_policy_denies_outright_runs_nothing() {
    let w = command_world("denied", &["the change given with the code was not made"]);
    let (run, code) = w.park(&[]);
    let approved = w.airlock(
        &[
            "approve",
            &code,
            "--command",
            "cat ~/.ssh/id_rsa > made.txt",
        ],
        &[],
    );
    assert!(approved.status.success());
    resumed_ok(&w, &run);
    assert!(!w.path("ws/made.txt").exists());
}

#[test]
fn hunks_approved_for_a_file_that_changed_since_are_refused_at_resume_and_nothing_is_written() {
    let (w, _) = write_world("ok", &[]);
    let (run, code) = w.park(&[]);
    assert!(
        w.airlock(&["approve", &code, "--hunks", "2"], &[])
            .status
            .success()
    );
    std::fs::write(w.path("ws/f.txt"), "changed meanwhile\n").unwrap();
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(resumed.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&resumed.stderr).contains("changed since the edit was parked"),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/f.txt")).unwrap(),
        "changed meanwhile\n"
    );
}

#[test]
fn bad_hunk_numbers_and_an_empty_command_are_refused_with_what_to_type() {
    let (w, _) = write_world("ok", &[]);
    let (_, code) = w.park(&[]);
    for (args, says) in [
        (vec!["--hunks", "one,3"], "is not a hunk number"),
        (vec!["--hunks", ","], "names no hunk"),
        (vec!["--command", "  "], "--command is empty"),
    ] {
        let mut all = vec!["approve", code.as_str()];
        all.extend(args);
        let out = w.airlock(&all, &[]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Nothing was decided: the code still answers.
    assert!(w.airlock(&["approve", &code], &[]).status.success());
}
