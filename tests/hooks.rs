//! Hooks with the real binary and real hook programs (shell and python): each event, each
//! decision, where a hook stands in the gate (its allow never lifts a hard deny), a hook that
//! hangs, trust of a project's hooks, and a Claude Code script run unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::World;
use serde_json::Value;

/// A Claude Code PreToolUse hook from its documentation's style: it reads the call on stdin,
/// and blocks a push to main with exit code 2 and the reason on stderr.
const BLOCK_PUSH: &str = r#"#!/usr/bin/env python3
import json, sys

data = json.load(sys.stdin)
if data.get("tool_name") == "Bash":
    command = data.get("tool_input", {}).get("command", "")
    if command.startswith("git push") and "main" in command.split():
        print("Blocked: pushes to main go through review", file=sys.stderr)
        sys.exit(2)
sys.exit(0)
"#;

fn scenario(command: &str, then_expect: &str) -> String {
    serde_json::json!({
        "name": "hooks", "prompt": "go",
        "steps": [
            {"calls": [{"tool": "bash", "args": {"command": command}}]},
            {"say": "done", "expect": [then_expect]}
        ]
    })
    .to_string()
}

fn exec(w: &World, approvals: &str) -> std::process::Output {
    w.exec(approvals, &[], &[])
}

fn event<'a>(events: &'a [Value], name: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["event"] == name)
        .unwrap_or_else(|| panic!("no `{name}` event in {events:?}"))
}

fn audit(w: &World) -> Vec<Value> {
    std::fs::read_dir(w.path("state/audit"))
        .unwrap()
        .flat_map(|e| {
            std::fs::read_to_string(e.unwrap().path())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_claude_code_script_written_for_bash_blocks_git_push_to_main_through_airlock_unchanged() {
    let w = World::new(&scenario("git push origin main", "denied"));
    w.user_hooks(
        &[("block_push.py", BLOCK_PUSH)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = [\"python3\", \"hooks/block_push.py\"]\n",
    );
    // Even a run that would allow every ask: the hook's deny comes first.
    let out = exec(&w, "dangerously-allow-all");
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let events = World::events(&out);
    let denied = event(&events, "tool_denied");
    assert_eq!(
        denied["message"],
        "denied by hook block_push.py: Blocked: pushes to main go through review"
    );
    let decision = audit(&w)
        .into_iter()
        .find(|r| r["kind"] == "decision" && r["body"]["decision"] == "deny")
        .unwrap();
    assert_eq!(decision["body"]["source"], "hook");
    assert_eq!(decision["body"]["hook"], "block_push.py");
    assert_eq!(decision["body"]["hook_digest"].as_str().unwrap().len(), 64);
    // Another push is not its business.
    let w = World::new(&scenario("git push origin feature", "ran"));
    w.user_hooks(
        &[("block_push.py", BLOCK_PUSH)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = [\"python3\", \"hooks/block_push.py\"]\n",
    );
    let out = exec(&w, "dangerously-allow-all");
    assert!(
        World::events(&out)
            .iter()
            .all(|e| e["event"] != "tool_denied"),
        "{}",
        common::stdout(&out)
    );
}

const ALLOW_ALL: &str = r#"#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"the team allows it"}}'
"#;

#[test]
fn a_hooks_allow_runs_what_the_policy_would_ask_about_and_is_audited_with_the_hook() {
    let w = World::new(&scenario("make", "ran"));
    w.user_hooks(
        &[("allow.sh", ALLOW_ALL)],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n",
    );
    // Nobody to ask: without the hook, `make` would be denied.
    let out = exec(&w, "deny");
    let events = World::events(&out);
    assert!(
        events.iter().all(|e| e["event"] != "tool_denied"),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e["event"] == "tool_started"));
    let allowed = audit(&w)
        .into_iter()
        .find(|r| r["kind"] == "decision" && r["body"]["decision"] == "allow")
        .unwrap();
    assert_eq!(allowed["body"]["source"], "hook");
    assert_eq!(allowed["body"]["detail"]["hook"], "allow.sh");
    assert_eq!(allowed["body"]["detail"]["reason"], "the team allows it");
}

#[test]
fn a_hooks_allow_does_not_lift_a_hard_deny() {
    let w = World::new(&scenario("rm -rf /", "denied"));
    w.user_hooks(
        &[("allow.sh", ALLOW_ALL)],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n",
    );
    let out = exec(&w, "dangerously-allow-all");
    let events = World::events(&out);
    let denied = event(&events, "tool_denied");
    assert!(
        denied["message"]
            .as_str()
            .unwrap()
            .contains("destroys data outside the workspace"),
        "{denied}"
    );
}

#[test]
fn a_hooks_allow_never_runs_a_command_without_the_sandbox() {
    let w = World::new(
        &serde_json::json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "make --version", "sandbox": "off"}}]},
            {"say": "done", "expect": ["denied"]}
        ]})
        .to_string(),
    );
    w.user_hooks(
        &[("allow.sh", ALLOW_ALL)],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n",
    );
    let out = exec(&w, "deny");
    let denied = event(&World::events(&out), "tool_denied").clone();
    assert!(
        denied["message"]
            .as_str()
            .unwrap()
            .contains("nobody is there"),
        "it was asked about, not allowed by the hook: {denied}"
    );
}

#[test]
fn a_hanging_hook_is_cut_at_its_timeout_and_the_call_asks() {
    let w = World::new(&scenario("make --version", "denied"));
    w.user_hooks(
        &[("hang.sh", "#!/bin/sh\nsleep 300\n")],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/hang.sh\"]\ntimeout_secs = 1\n",
    );
    let out = exec(&w, "deny");
    let denied = event(&World::events(&out), "tool_denied").clone();
    assert!(
        denied["message"]
            .as_str()
            .unwrap()
            .contains("nobody is there"),
        "the call was asked about: {denied}"
    );
    let hooks = audit(&w)
        .into_iter()
        .find(|r| r["kind"] == "hooks")
        .unwrap();
    assert_eq!(
        hooks["body"]["hooks"][0]["failure"],
        "it timed out after 1 s and was stopped"
    );
}

#[test]
fn a_hook_that_asks_makes_an_allowed_call_ask_and_the_request_says_why() {
    let w = World::new(&scenario("ls", "denied"));
    w.user_hooks(
        &[(
            "ask.py",
            "import json,sys\njson.load(sys.stdin)\nprint(json.dumps({'hookSpecificOutput': {'permissionDecision': 'ask', 'permissionDecisionReason': 'listing is audited here'}}))\n",
        )],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"python3\", \"hooks/ask.py\"]\n",
    );
    let out = exec(&w, "park");
    assert_eq!(out.status.code(), Some(5), "{}", common::stderr(&out));
    let parked = event(&World::events(&out), "parked").clone();
    assert_eq!(parked["tool"], "bash");
}

const MARK: &str =
    "#!/bin/sh\ncat >> \"$AIRLOCK_HOOK_EVENT.seen\"\necho >> \"$AIRLOCK_HOOK_EVENT.seen\"\n";

#[test]
fn session_start_post_tool_use_and_stop_hooks_run_and_a_post_tool_use_note_reaches_the_model() {
    let w = World::new(
        &serde_json::json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo hi"}}]},
            {"say": "done", "expect": ["ok"], "expect_seen": ["[hook lint.sh] style: 2 warnings"]}
        ]})
        .to_string(),
    );
    w.user_hooks(
        &[
            ("mark.sh", MARK),
            (
                "lint.sh",
                "#!/bin/sh\ncat > /dev/null\necho '{\"decision\":\"block\",\"reason\":\"style: 2 warnings\"}'\n",
            ),
        ],
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"hooks/mark.sh\"]\n\
         [[hooks]]\nevent = \"PostToolUse\"\nmatcher = \"Bash\"\ncommand = [\"sh\", \"hooks/mark.sh\"]\n\
         [[hooks]]\nevent = \"PostToolUse\"\nmatcher = \"Bash\"\ncommand = [\"sh\", \"hooks/lint.sh\"]\n\
         [[hooks]]\nevent = \"Stop\"\ncommand = [\"sh\", \"hooks/mark.sh\"]\n",
    );
    let out = exec(&w, "deny");
    let finished = event(&World::events(&out), "turn_finished").clone();
    assert_eq!(finished["outcome"], "completed", "{}", common::stdout(&out));
    let seen = |event: &str| -> Value {
        let text = std::fs::read_to_string(w.path(&format!("ws/{event}.seen")))
            .unwrap_or_else(|_| panic!("no {event} hook ran"));
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    };
    assert_eq!(seen("SessionStart")["source"], "startup");
    let post = seen("PostToolUse");
    assert_eq!(post["tool_name"], "Bash");
    assert_eq!(post["tool_input"]["command"], "echo hi");
    assert_eq!(post["tool_response"]["exit_code"], 0);
    assert_eq!(seen("Stop")["hook_event_name"], "Stop");
}

#[test]
fn a_notification_hook_hears_that_a_request_waits_without_what_it_runs() {
    let w = World::new(&scenario("make", "denied"));
    w.user_hooks(
        &[("mark.sh", MARK)],
        "[[hooks]]\nevent = \"Notification\"\ncommand = [\"sh\", \"hooks/mark.sh\"]\n",
    );
    let run = common::page::PageRun::start(&w, &[]);
    run.wait_for("approval_requested");
    let file = w.path("ws/Notification.seen");
    for _ in 0..200 {
        if std::fs::read_to_string(&file).is_ok_and(|t| t.ends_with('\n')) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let seen: Value = serde_json::from_str(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(seen["message"], "airlock needs your permission to use Bash");
    assert!(seen.get("tool_input").is_none(), "{seen}");
}

#[test]
fn a_project_hook_runs_only_once_trusted_and_not_after_its_script_changed() {
    let w = World::new(&scenario("make --version", "ran"));
    let project = w.path("ws/.airlock");
    std::fs::create_dir_all(project.join("hooks")).unwrap();
    std::fs::write(project.join("hooks/mark.sh"), MARK).unwrap();
    std::fs::write(
        project.join("config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"hooks/mark.sh\"]\n",
    )
    .unwrap();
    let marker = w.path("ws/SessionStart.seen");
    exec(&w, "deny");
    assert!(!marker.exists(), "an untrusted project's hook ran");
    let trusted = w.airlock(&["trust", "--workspace", "ws"], &[]);
    let listed = common::stdout(&trusted);
    assert!(
        listed.contains("hooks/mark.sh"),
        "trust lists the hook's script: {listed}"
    );
    exec(&w, "deny");
    assert!(marker.exists(), "the trusted project's hook did not run");
    std::fs::remove_file(&marker).unwrap();
    // The script changed after trust: it does not run, and the run says why.
    std::fs::write(
        project.join("hooks/mark.sh"),
        format!("{MARK}echo changed\n"),
    )
    .unwrap();
    let out = exec(&w, "deny");
    assert!(!marker.exists(), "a hook changed after trust ran");
    assert!(
        common::stderr(&out).contains("not trusted any more"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn hooks_list_shows_each_hook_and_its_last_result_and_hooks_test_runs_one_on_an_input() {
    let w = World::new(&scenario("git push origin main", "denied"));
    w.user_hooks(
        &[("block_push.py", BLOCK_PUSH)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = [\"python3\", \"hooks/block_push.py\"]\n",
    );
    let listed = common::stdout(&w.airlock(&["hooks", "list", "--workspace", "ws"], &[]));
    assert!(listed.contains("PreToolUse  block_push.py"), "{listed}");
    assert!(listed.contains("last: never ran"), "{listed}");
    let out = w.hooks_test(
        "PreToolUse",
        r#"{"tool_name": "Bash", "tool_input": {"command": "git push origin main"}}"#,
    );
    assert_eq!(out.status.code(), Some(0));
    let said: Value = serde_json::from_str(common::stdout(&out).trim()).unwrap();
    assert_eq!(said["say"], "deny");
    let listed = common::stdout(&w.airlock(&["hooks", "list", "--workspace", "ws"], &[]));
    assert!(
        listed.contains("last: deny: Blocked: pushes to main go through review"),
        "{listed}"
    );
}

#[test]
fn a_hook_config_with_a_wrong_event_is_refused_with_the_file_and_what_to_use() {
    let w = World::new(&scenario("ls", "ok"));
    w.user_hooks(
        &[],
        "[[hooks]]\nevent = \"BeforeTool\"\ncommand = [\"true\"]\n",
    );
    let out = exec(&w, "deny");
    assert_eq!(out.status.code(), Some(1));
    let stderr = common::stderr(&out);
    assert!(
        stderr.contains("config.toml")
            && stderr.contains("BeforeTool")
            && stderr.contains("PreToolUse"),
        "{stderr}"
    );
}

#[test]
fn the_agent_cannot_rewrite_a_hook_script_and_a_hook_never_sees_airlocks_keys() {
    let w = World::new(
        &serde_json::json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "scripts/mark.sh", "content": "exit 0\n"}}]},
            {"say": "done", "expect": ["denied"]}
        ]})
        .to_string(),
    );
    // A hook script outside `.airlock/` (which is protected whole anyway).
    let project = w.path("ws/.airlock");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/mark.sh"), MARK).unwrap();
    std::fs::write(
        project.join("config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"../scripts/mark.sh\"]\n",
    )
    .unwrap();
    // Not even trusted yet: the script the person is about to trust is out of the agent's reach.
    let out = exec(&w, "dangerously-allow-all");
    let denied = event(&World::events(&out), "tool_denied").clone();
    assert!(
        denied["message"].as_str().unwrap().contains("mark.sh"),
        "{denied}"
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/scripts/mark.sh")).unwrap(),
        MARK
    );
    // A user hook that prints the key it would see.
    let w = World::new(&scenario("ls", "ok"));
    w.user_hooks(
        &[(
            "key.sh",
            "#!/bin/sh\ncat > /dev/null\necho \"key=${OPENAI_API_KEY-unset}\" > key.seen\n",
        )],
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"hooks/key.sh\"]\n",
    );
    w.airlock(
        &["exec", "--scenario", "s.json", "--workspace", "ws"],
        &[("OPENAI_API_KEY", "sk-secret")],
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/key.seen")).unwrap(),
        "key=unset\n"
    );
}

#[test]
fn a_permission_request_hook_answers_for_the_person_in_claude_codes_words() {
    let w = World::new(&scenario("make", "denied"));
    w.user_hooks(
        &[(
            "request.py",
            r#"import json, sys
data = json.load(sys.stdin)
assert data["hook_event_name"] == "PermissionRequest"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
    "decision": {"behavior": "deny", "message": "builds wait until the release is out"}}}))
"#,
        )],
        "[[hooks]]\nevent = \"PermissionRequest\"\ncommand = [\"python3\", \"hooks/request.py\"]\n",
    );
    // It runs only for calls about to be shown: this one would ask.
    let out = exec(&w, "dangerously-allow-all");
    let denied = event(&World::events(&out), "tool_denied").clone();
    assert_eq!(
        denied["message"],
        "denied by hook request.py: builds wait until the release is out"
    );
    // A call the policy allows is never shown, so the hook is not asked.
    let w = World::new(&scenario("ls", "ok"));
    w.user_hooks(
        &[("never.sh", "#!/bin/sh\nexit 2\n")],
        "[[hooks]]\nevent = \"PermissionRequest\"\ncommand = [\"sh\", \"hooks/never.sh\"]\n",
    );
    let out = exec(&w, "deny");
    assert!(
        World::events(&out)
            .iter()
            .all(|e| e["event"] != "tool_denied"),
        "{}",
        common::stdout(&out)
    );
}

#[test]
fn inside_the_sandbox_a_hook_script_is_read_only_to_any_program() {
    let w = World::new(
        &serde_json::json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "python3 -c \"open('scripts/mark.sh','a').write('echo pwned')\""}}]},
            {"say": "done", "expect": ["any"]}
        ]})
        .to_string(),
    );
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/mark.sh"), MARK).unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"../scripts/mark.sh\"]\n",
    )
    .unwrap();
    // Allowed to run (the policy cannot see what python writes): the sandbox stops the write.
    let out = exec(&w, "dangerously-allow-all");
    assert!(
        common::stdout(&out).contains("Read-only file system"),
        "{}",
        common::stdout(&out)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/scripts/mark.sh")).unwrap(),
        MARK
    );
}

#[test]
fn hooks_test_matches_a_command_prefix_as_the_gate_does_against_each_simple_command() {
    let w = World::new(&scenario("ls", "ok"));
    w.user_hooks(
        &[("block_push.py", BLOCK_PUSH)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand_prefix = \"git push\"\ncommand = [\"python3\", \"hooks/block_push.py\"]\n",
    );
    let run = |line: &str| {
        let input = serde_json::json!({"tool_name": "Bash", "tool_input": {"command": line}});
        w.hooks_test("PreToolUse", &input.to_string())
    };
    // After `&&`, with two spaces: the hook is run, as it would be in the gate (what it says
    // is the script's business: this one only looks at the line's start).
    let out = run("cd . &&  git  push origin main");
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let said: Value = serde_json::from_str(common::stdout(&out).trim()).unwrap();
    assert_eq!(said["hook"], "block_push.py", "{said}");
    assert!(said["failure"].is_null(), "{said}");
    // No git push anywhere in the line: no hook of that prefix runs.
    let out = run("git status && ls");
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stdout(&out).contains("no PreToolUse hook matches"));
}
