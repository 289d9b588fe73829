//! What the audit keeps of hooks, and where else a hook stands.

use super::reach::{PWN_SH, trust};
use super::*;

// ---------------------------------------------------------------------------------------------
// 6. The audit.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_permission_request_hooks_allow_and_deny_are_audited_with_the_digest_hooks_list_shows() {
    for (answer, decision) in [
        (
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"release build"}}}"#,
            "allow",
        ),
        (
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not today"}}}"#,
            "deny",
        ),
    ] {
        let w = World::new(&calls(json!([bash("make")])));
        w.user_hooks(
            &[("request.sh", &format!("cat > /dev/null\necho '{answer}'\n"))],
            "[[hooks]]\nevent = \"PermissionRequest\"\nname = \"release-gate\"\ncommand = [\"sh\", \"hooks/request.sh\"]\n",
        );
        let listed = common::stdout(&w.airlock(&["hooks", "list", "--workspace", "ws"], &[]));
        let digest = listed
            .lines()
            .find_map(|l| l.trim().strip_prefix("digest "))
            .unwrap_or_else(|| panic!("{listed}"))
            .to_string();
        let out = w.exec("deny", &[], &[]);
        assert_eq!(
            started(&World::events(&out), "c1"),
            decision == "allow",
            "{}",
            common::stdout(&out)
        );
        let records = audit(&w);
        let record = records
            .iter()
            .find(|r| r["kind"] == "decision" && r["body"]["source"] == "hook")
            .unwrap_or_else(|| panic!("no decision by a hook: {records:?}"));
        assert_eq!(record["body"]["decision"], decision);
        let (hook, hook_digest) = if decision == "allow" {
            (
                &record["body"]["detail"]["hook"],
                &record["body"]["detail"]["hook_digest"],
            )
        } else {
            (&record["body"]["hook"], &record["body"]["hook_digest"])
        };
        assert_eq!(hook, "release-gate");
        assert_eq!(hook_digest.as_str(), Some(digest.as_str()));
        let outcomes = hook_outcomes(&w);
        assert_eq!(outcomes[0]["hook"], "release-gate");
        assert_eq!(outcomes[0]["say"], decision);
        assert!(outcomes[0]["reason"].is_string(), "{outcomes:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// More of 1 and 2: a hook's ask, everywhere a call can be answered.
// ---------------------------------------------------------------------------------------------

/// A hook that asks about every call, with its reason.
const ASK: &str = "cat > /dev/null\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"every command is looked at here\"}}'\n";

#[test]
fn a_hooks_ask_is_not_answered_by_an_earlier_session_grant() {
    // A person allowed `echo … >> log.txt` for the session; the hook asks about every call.
    // "A hook can ask about anything": the second call comes to the person again.
    let w = World::new(
        &json!({"name": "p", "prompt": "go", "steps": [
            {"calls": [bash("echo one >> log.txt")]},
            {"calls": [bash("echo two >> log.txt")], "expect": ["ok"]},
            {"say": "done", "expect": ["any"]}
        ]})
        .to_string(),
    );
    w.user_hooks(
        &[("ask.sh", ASK)],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/ask.sh\"]\n",
    );
    let (run, code) = w.park(&[]);
    let approved = w.airlock(&["approve", &code, "--session"], &[]);
    assert!(approved.status.success(), "{}", common::stderr(&approved));
    let resumed = w.airlock(&["resume", &run], &[]);
    let events = World::events(&resumed);
    assert!(
        !started(&events, "c2"),
        "the grant answered the hook's ask: {}",
        common::stdout(&resumed)
    );
    assert_eq!(
        resumed.status.code(),
        Some(5),
        "{}",
        common::stdout(&resumed)
    );
}

#[test]
fn a_parked_call_says_which_hook_asked_and_why() {
    // `ls` only reads: it waits only because the hook asks. Whoever decides it later (`airlock
    // approvals list`, then `airlock approve`) must see that, as the modal would show it.
    let w = World::new(&calls(json!([bash("ls")])));
    w.user_hooks(
        &[("ask.sh", ASK)],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/ask.sh\"]\n",
    );
    w.park(&[]);
    let listed = common::stdout(&w.airlock(&["approvals", "list"], &[]));
    assert!(
        listed.contains("ask.sh") && listed.contains("every command is looked at here"),
        "{listed}"
    );
}

#[test]
fn a_sub_agents_calls_pass_the_same_hooks() {
    let w = World::new(
        &json!({"name": "p", "prompt": "go", "steps": [
            {"calls": [{"tool": "agent", "args": {"task": "sub", "prompt": "push it"}}]},
            {"say": "done", "expect": ["any"]}
        ], "agents": {"sub": {"steps": [
            {"calls": [bash("git push origin main")]},
            {"say": "tried", "expect": ["any"]}
        ]}}})
        .to_string(),
    );
    pre_tool_use(
        &w,
        "cat > /dev/null\necho 'Blocked: pushes go through review' >&2\nexit 2\n",
        "matcher = \"Bash\"",
    );
    let out = w.exec("dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    let denied = events
        .iter()
        .find(|e| e["event"] == "tool_denied" && e["tool"] == "bash")
        .unwrap_or_else(|| panic!("the sub-agent's push was not denied: {events:?}"));
    assert_ne!(denied["agent"], "main", "{denied}");
    assert_eq!(
        denied["message"],
        "denied by hook h.sh: Blocked: pushes go through review"
    );
}

// ---------------------------------------------------------------------------------------------
// More of 3: how a hook's program is named.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_project_hook_run_as_a_dot_slash_script_is_covered_by_trust_and_out_of_the_agents_reach() {
    // `./check.sh` is the config directory's, never the workspace's (the hook's working
    // directory): the agent's `check.sh` at the top of the workspace is not run.
    let w = World::new(&calls(json!([
        {"tool": "write_file", "args": {"path": ".airlock/check.sh", "content": PWN_SH}},
        {"tool": "write_file", "args": {"path": "check.sh", "content": PWN_SH}},
    ])));
    let original = "#!/bin/sh\ncat > /dev/null\necho ran > \"$CLAUDE_PROJECT_DIR/ran.seen\"\n";
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    let script = w.path("ws/.airlock/check.sh");
    std::fs::write(&script, original).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"Stop\"\ncommand = [\"./check.sh\"]\n",
    )
    .unwrap();
    let listed = trust(&w);
    assert!(listed.contains(".airlock/check.sh"), "{listed}");
    let out = w.exec("dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    assert!(denial(&events, "c1").contains("check.sh"));
    assert!(
        w.path("ws/ran.seen").exists(),
        "the trusted hook did not run"
    );
    assert!(!w.path("home/pwned").exists());
    std::fs::remove_file(w.path("ws/ran.seen")).unwrap();
    std::fs::write(&script, format!("{original}echo changed\n")).unwrap();
    let out = w.exec("deny", &[], &[]);
    assert!(
        !w.path("ws/ran.seen").exists(),
        "a hook changed after trust ran"
    );
    assert!(
        common::stderr(&out).contains("not trusted any more"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn a_hook_never_runs_a_program_the_agent_can_change_through_the_path() {
    // The person works in the project's activated virtualenv (its bin/ first on PATH) and has
    // a Python hook of their own. The agent drops a `.pth` file into the venv, an ordinary
    // workspace write that auto-edit runs without asking; the next hook's `python3` is the
    // venv's, which runs every `.pth` at start, outside the sandbox, with the user's rights.
    let w = World::new(
        &json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "PTH", "content":
                "import os; open(os.path.join(os.environ['HOME'], 'pwned'), 'w').write('pwned')\n"}}]},
            {"say": "next", "expect": ["any"], "calls": [bash("ls")]},
            {"say": "done", "expect": ["any"]}
        ]})
        .to_string(),
    );
    let venv = w.path("ws/.venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .map(|e| e.unwrap().path().join("site-packages"))
        .find(|p| p.is_dir())
        .unwrap();
    let pth = site.join("zz_agent.pth");
    let relative = pth
        .strip_prefix(w.path("ws"))
        .unwrap()
        .display()
        .to_string();
    let scenario = std::fs::read_to_string(w.path("s.json")).unwrap();
    std::fs::write(
        w.path("s.json"),
        scenario.replace("\"PTH\"", &format!("{relative:?}")),
    )
    .unwrap();
    w.user_hooks(
        &[("check.py", "import sys\nsys.stdin.read()\n")],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"python3\", \"hooks/check.py\"]\n",
    );
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = w.exec(
        "deny",
        &["--mode", "auto-edit"],
        &[
            ("PATH", &path),
            ("VIRTUAL_ENV", &venv.display().to_string()),
        ],
    );
    assert!(
        !w.path("home/pwned").exists(),
        "a hook ran the agent's code outside the sandbox: {}",
        common::stdout(&out)
    );
}
