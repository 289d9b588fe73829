//! The real binary, as a user runs it: `airlock policy check` and `airlock audit verify`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn airlock(args: &[&str], stdin: &str, home: &Path) -> Output {
    airlock_bytes(args, stdin.as_bytes(), home)
}

fn airlock_bytes(args: &[&str], stdin: &[u8], home: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .env("HOME", home)
        .env("AIRLOCK_HOME", home.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the airlock binary runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect()
}

#[test]
fn policy_check_on_the_examples_gives_the_decision_each_id_promises() {
    let home = tempfile::tempdir().unwrap();
    let calls = std::fs::read_to_string(repo().join("assets/examples/calls.jsonl")).unwrap();
    let workspace = repo().join("assets/examples/workspace");
    let out = airlock(
        &[
            "policy",
            "check",
            "--workspace",
            workspace.to_str().unwrap(),
        ],
        &calls,
        home.path(),
    );
    let results = lines(&out);
    let inputs = calls
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count();
    assert_eq!(results.len(), inputs, "one output line per input line");
    for r in &results {
        let id = r["id"].as_str().unwrap_or("bad-?");
        let expected = match id.split('-').next().unwrap() {
            "ro" => "allow",
            "ask" | "opaque" => "ask",
            "deny" => "deny",
            _ => "error",
        };
        let got = r["decision"]
            .as_str()
            .unwrap_or(if r.get("error").is_some() {
                "error"
            } else {
                "?"
            });
        assert_eq!(got, expected, "{id}: {r}");
    }
    // Malformed lines are reported and make the exit status say so.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 malformed"), "{stderr}");
}

#[test]
fn policy_check_reports_reasons_and_the_session_grant_scope() {
    let home = tempfile::tempdir().unwrap();
    let workspace = repo().join("assets/examples/workspace");
    let out = airlock(
        &[
            "policy",
            "check",
            "--workspace",
            workspace.to_str().unwrap(),
        ],
        "{\"id\": 7, \"tool\": \"bash\", \"args\": {\"command\": \"cargo test --release\"}}\n",
        home.path(),
    );
    assert!(out.status.success());
    let r = &lines(&out)[0];
    assert_eq!(r["id"], 7);
    assert_eq!(r["decision"], "ask");
    assert_eq!(r["risk"], "mutating");
    assert_eq!(
        r["grant_scope"],
        serde_json::json!([{"kind": "command", "prefix": ["cargo", "test"]}])
    );
    assert!(r["reasons"][0].as_str().unwrap().contains("cargo test"));
}

#[test]
fn policy_check_applies_a_rules_file_and_its_mode() {
    let home = tempfile::tempdir().unwrap();
    let rules = home.path().join("rules.toml");
    std::fs::write(
        &rules,
        "allow = [\"bash(cargo test *)\"]\ndeny = [\"bash(cargo publish *)\"]\n",
    )
    .unwrap();
    let workspace = repo().join("assets/examples/workspace");
    let input = "{\"id\":1,\"tool\":\"bash\",\"args\":{\"command\":\"cargo test\"}}\n\
                 {\"id\":2,\"tool\":\"bash\",\"args\":{\"command\":\"cargo publish\"}}\n\
                 {\"id\":3,\"tool\":\"bash\",\"args\":{\"command\":\"cargo build\"}}\n";
    let out = airlock(
        &[
            "policy",
            "check",
            "--workspace",
            workspace.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "--mode",
            "read-only",
        ],
        input,
        home.path(),
    );
    let decisions: Vec<_> = lines(&out)
        .iter()
        .map(|r| r["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, vec!["allow", "deny", "deny"]);
}

#[test]
fn a_rule_whose_example_fails_stops_the_run_with_a_message_naming_the_rule() {
    let home = tempfile::tempdir().unwrap();
    let rules = home.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\naction = \"allow\"\ntool = \"bash\"\npattern = \"git status\"\nmatch = [\"git status -s\"]\n",
    )
    .unwrap();
    let out = airlock(
        &[
            "policy",
            "check",
            "--rules",
            rules.to_str().unwrap(),
            "--workspace",
            home.path().to_str().unwrap(),
        ],
        "",
        home.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("allow bash(git status)") && stderr.contains("git status -s"),
        "{stderr}"
    );
}

#[test]
fn a_missing_workspace_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let out = airlock(
        &["policy", "check", "--workspace", "/no/such/dir"],
        "",
        home.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/no/such/dir") && stderr.contains("--workspace"),
        "{stderr}"
    );
}

#[test]
fn audit_verify_passes_a_good_log_and_fails_an_edited_one() {
    let dir = tempfile::tempdir().unwrap();
    let log = airlock::approval::audit::AuditLog::open(dir.path(), "s1").unwrap();
    for i in 0..3 {
        log.append(
            "decision",
            serde_json::json!({"call_id": format!("c{i}"), "decision": "deny"}),
        )
        .unwrap();
    }
    let path = log.path().to_path_buf();
    let ok = airlock(&["audit", "verify", path.to_str().unwrap()], "", dir.path());
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("3 records"));

    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"deny\"", "\"allow\"", 1)).unwrap();
    let bad = airlock(&["audit", "verify", path.to_str().unwrap()], "", dir.path());
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("line 1"), "{stderr}");
}

/// Runs the offline demo headless in `home` (nothing that asks runs) and returns its audit log.
fn demo_audit_log(home: &Path) -> PathBuf {
    let out = airlock(&["exec", "--approvals", "deny"], "", home);
    assert!(
        out.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logs: Vec<PathBuf> = std::fs::read_dir(home.join("state/audit"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

fn verify(log: &Path, home: &Path) -> (Option<i32>, String, String) {
    let out = airlock(&["audit", "verify", log.to_str().unwrap()], "", home);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn audit_verify_checks_a_real_sessions_log_against_its_anchor_in_the_state_database() {
    let home = tempfile::tempdir().unwrap();
    let log = demo_audit_log(home.path());
    let (code, stdout, stderr) = verify(&log, home.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("matches the anchor in the state database")
            && stdout.contains("airlock.db"),
        "{stdout}"
    );
}

#[test]
fn audit_verify_fails_a_truncated_log_whose_head_file_was_rewritten_to_match() {
    let home = tempfile::tempdir().unwrap();
    let log = demo_audit_log(home.path());
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "the demo writes several records");
    let keep = lines.len() - 2;
    std::fs::write(&log, lines[..keep].join("\n") + "\n").unwrap();
    let last: serde_json::Value = serde_json::from_str(lines[keep - 1]).unwrap();
    std::fs::write(
        log.with_extension("jsonl.head"),
        format!("{{\"seq\":{},\"hash\":{}}}\n", last["seq"], last["hash"]),
    )
    .unwrap();

    let (code, _, stderr) = verify(&log, home.path());
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("does not match its anchor")
            && stderr.contains(&format!("the log has {keep} records"))
            && stderr.contains("missing: lines"),
        "{stderr}"
    );
}

#[test]
fn audit_verify_fails_an_emptied_or_deleted_log_whose_anchor_remains() {
    let home = tempfile::tempdir().unwrap();
    let log = demo_audit_log(home.path());
    let head = log.with_extension("jsonl.head");
    std::fs::write(&log, "").unwrap();
    std::fs::remove_file(&head).unwrap();
    let (code, _, stderr) = verify(&log, home.path());
    assert_eq!(code, Some(1));
    assert!(stderr.contains("the log is empty"), "{stderr}");

    std::fs::remove_file(&log).unwrap();
    let (code, _, stderr) = verify(&log, home.path());
    assert_eq!(code, Some(1));
    assert!(stderr.contains("the log file is missing"), "{stderr}");
}

#[test]
fn audit_verify_without_the_state_database_says_only_the_chain_was_checked() {
    let home = tempfile::tempdir().unwrap();
    let log = demo_audit_log(home.path());
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(home.path().join(format!("state/airlock.db{suffix}")));
    }
    let (code, stdout, stderr) = verify(&log, home.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("no anchor found: only the chain was checked"),
        "{stdout}"
    );
    assert!(
        !home.path().join("state/airlock.db").exists(),
        "verify does not create a database"
    );
}

#[test]
fn policy_check_reports_a_line_that_is_not_utf8_with_its_byte_offset_and_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":\"a\",\"tool\":\"bash\",\"args\":{\"command\":\"ls\"}}\n");
    input.extend_from_slice(
        b"{\"id\":\"b\",\"tool\":\"bash\",\"args\":{\"command\":\"ls \xff\"}}\n",
    );
    input.extend_from_slice(b"{\"id\":\"c\",\"tool\":\"bash\",\"args\":{\"command\":\"ls\"}}\n");
    let out = airlock_bytes(
        &[
            "policy",
            "check",
            "--workspace",
            home.path().to_str().unwrap(),
        ],
        &input,
        home.path(),
    );
    let results = lines(&out);
    assert_eq!(
        results.len(),
        3,
        "one output line per input line: {results:?}"
    );
    assert_eq!(results[0]["id"], "a");
    assert_eq!(results[0]["decision"], "allow");
    assert_eq!(results[1]["id"], "b");
    let error = results[1]["error"].as_str().unwrap();
    let first_line = input.iter().position(|b| *b == b'\n').unwrap() + 1;
    let at = input[first_line..].iter().position(|b| *b == 0xff).unwrap();
    assert!(
        error.starts_with("line 2: not valid UTF-8")
            && error.contains(&format!("byte {at} of the line"))
            && error.contains(&format!("byte {} of the input", first_line + at)),
        "{error}"
    );
    assert_eq!(results[2]["id"], "c");
    assert_eq!(results[2]["decision"], "allow");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn policy_check_output_escapes_the_characters_line_readers_split_on() {
    let home = tempfile::tempdir().unwrap();
    let input = concat!(
        r#"{"id":"x\u2028y\u2029z\u0085w","tool":"bash","args":{"command":"echo '\u2028\u2029\u0085'"}}"#,
        "\n",
        r#"{"id":"second\u2028","tool":"nope"}"#,
        "\n"
    );
    let out = airlock(
        &[
            "policy",
            "check",
            "--explain",
            "--workspace",
            home.path().to_str().unwrap(),
        ],
        input,
        home.path(),
    );
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    for c in ['\u{2028}', '\u{2029}', '\u{0085}'] {
        assert!(!stdout.contains(c), "raw {c:?} in {stdout:?}");
    }
    assert!(
        stdout.contains("\\u2028") && stdout.contains("\\u0085"),
        "{stdout}"
    );
    // A reader that splits on every Unicode line break still sees two whole records.
    let records: Vec<serde_json::Value> = stdout
        .split(['\n', '\u{2028}', '\u{2029}', '\u{0085}'])
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["id"], "x\u{2028}y\u{2029}z\u{0085}w");
    assert_eq!(records[1]["id"], "second\u{2028}");
}

#[test]
fn policy_check_judges_a_write_through_a_link_made_earlier_in_the_command_like_the_real_target() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let workspace = root.path().join("ws");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    let calls = [
        ("direct", "echo x >> ~/.bashrc"),
        ("through-link", "ln -s ~ h && echo x >> h/.bashrc"),
        ("after-cd", "ln -s ~ h; cd h; echo x >> .bashrc"),
        ("hard-link", "ln ~/.bashrc x && echo x >> x"),
        ("key", "ln -s ~/.ssh k && cat k/config"),
        ("ordinary", "ln -s ../src src/lib && ls src/lib"),
    ];
    let input: String = calls
        .iter()
        .map(|(id, command)| {
            serde_json::json!({"id": id, "tool": "bash", "args": {"command": command}}).to_string()
                + "\n"
        })
        .collect();
    let out = airlock(
        &[
            "policy",
            "check",
            "--workspace",
            workspace.to_str().unwrap(),
        ],
        &input,
        &home,
    );
    let decisions: Vec<(String, String)> = lines(&out)
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("direct", "deny"),
        ("through-link", "deny"),
        ("after-cd", "deny"),
        ("hard-link", "deny"),
        ("key", "deny"),
        ("ordinary", "ask"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(id, d)| (id.to_string(), d.to_string()))
        .collect();
    assert_eq!(
        decisions,
        expected,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn output_into_a_pipe_whose_reader_has_gone_ends_quietly() {
    let home = tempfile::tempdir().unwrap();
    let call = r#"{"id":1,"tool":"bash","args":{"command":"ls"}}"#;
    let input = format!("{call}\n").repeat(20_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["policy", "check", "--workspace"])
        .arg(repo().join("assets/examples/workspace"))
        .env("HOME", home.path())
        .env("AIRLOCK_HOME", home.path().join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    // Like `| head -1`: read a little, then close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn a_model_named_without_a_provider_is_refused_not_played_as_the_demo() {
    let home = tempfile::tempdir().unwrap();
    let out = airlock(&["exec", "--model", "m", "hi"], "", home.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("a model is named (m, from flag --model) but no provider"),
        "{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_model_given_to_airlock_without_a_terminal_is_refused_not_ignored_for_the_demo() {
    let home = tempfile::tempdir().unwrap();
    let out = airlock(
        &["--provider", "openai", "--model", "m"],
        "hi\n",
        home.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("only plays the offline demo"), "{stderr}");
    assert!(stderr.contains("airlock exec"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "the demo did not play: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Without a model it still plays the demo as text.
    let demo = airlock(&[], "", home.path());
    assert_eq!(demo.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&demo.stdout).contains("airlock demo"));
}

#[test]
fn a_prompt_given_as_the_first_word_is_answered_with_where_a_prompt_goes() {
    let home = tempfile::tempdir().unwrap();
    let out = airlock(&["fix the tests"], "", home.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unrecognized subcommand 'fix the tests'"),
        "{stderr}"
    );
    assert!(stderr.contains("`airlock exec \"PROMPT\"`"), "{stderr}");
    // A mistyped subcommand gets clap's own answer only.
    let typo = airlock(&["sesions"], "", home.path());
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert_eq!(typo.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("A prompt is not a subcommand"), "{stderr}");
}
