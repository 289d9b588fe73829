use super::*;
use crate::protocol::HookSay;

/// A hook of `event` running `script` (written to a file in `dir`) with `interpreter`.
fn hook(
    dir: &std::path::Path,
    name: &str,
    event: HookEvent,
    interpreter: &str,
    script: &str,
) -> HookSpec {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    HookSpec {
        name: name.into(),
        event,
        matcher: None,
        command_prefix: None,
        argv: vec![interpreter.into(), path.display().to_string()],
        digest: "d".into(),
        timeout_ms: 10_000,
        source: "test".into(),
    }
}

fn bash_call(dir: &std::path::Path, command: &str) -> HookInput {
    HookInput {
        session_id: "s1".into(),
        cwd: dir.display().to_string(),
        call_id: Some("c1".into()),
        tool: Some("bash".into()),
        args: Some(json!({"command": command})),
        ..HookInput::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_shell_hook_that_exits_2_blocks_with_its_stderr_as_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let spec = hook(
        dir.path(),
        "block.sh",
        HookEvent::PreToolUse,
        "sh",
        "cat > /dev/null\necho 'Blocked: not in this repo' >&2\nexit 2\n",
    );
    let runner = HookRunner::new(vec![spec], vec![], None);
    let out = runtime().block_on(runner.run(HookEvent::PreToolUse, bash_call(dir.path(), "make")));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].say, Some(HookSay::Deny));
    assert_eq!(out[0].reason.as_deref(), Some("Blocked: not in this repo"));
}

#[test]
fn a_python_hook_reads_claude_code_fields_and_answers_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let spec = hook(
        dir.path(),
        "guard.py",
        HookEvent::PreToolUse,
        "python3",
        r#"import json, sys
data = json.load(sys.stdin)
assert data["hook_event_name"] == "PreToolUse"
command = data["tool_input"]["command"]
decision = "allow" if data["tool_name"] == "Bash" and command.startswith("cargo ") else "ask"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": decision, "permissionDecisionReason": "checked " + command}}))
"#,
    );
    let runner = HookRunner::new(vec![spec], vec![], None);
    let rt = runtime();
    let allowed =
        rt.block_on(runner.run(HookEvent::PreToolUse, bash_call(dir.path(), "cargo test")));
    assert_eq!(allowed[0].say, Some(HookSay::Allow), "{allowed:?}");
    assert_eq!(allowed[0].reason.as_deref(), Some("checked cargo test"));
    let asked = rt.block_on(runner.run(HookEvent::PreToolUse, bash_call(dir.path(), "make")));
    assert_eq!(asked[0].say, Some(HookSay::Ask));
}

#[test]
fn a_hanging_hook_is_stopped_at_its_time_limit_with_its_children_and_has_no_say() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let mut spec = hook(
        dir.path(),
        "hang.sh",
        HookEvent::PreToolUse,
        "sh",
        &format!("sleep 300 &\necho $! > {}\nwait\n", pids.display()),
    );
    spec.timeout_ms = 300;
    let runner = HookRunner::new(vec![spec], vec![], None);
    let out = runtime().block_on(runner.run(HookEvent::PreToolUse, bash_call(dir.path(), "make")));
    assert_eq!(out[0].say, None);
    let failure = out[0].failure.as_deref().unwrap();
    assert!(failure.contains("timed out after 0.3 s"), "{failure}");
    // Its child went with it.
    let child: i32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child), None).is_ok()
        && !std::fs::read_to_string(format!("/proc/{child}/stat"))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(!alive, "the hook's child still runs");
}

#[test]
fn a_crashing_hook_and_one_that_prints_garbage_have_no_say_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let crash = hook(
        dir.path(),
        "crash.py",
        HookEvent::PreToolUse,
        "python3",
        "raise SystemExit('boom')\n",
    );
    let garbage = hook(
        dir.path(),
        "chatty.sh",
        HookEvent::PreToolUse,
        "sh",
        "echo looks fine to me\n",
    );
    let missing = HookSpec {
        argv: vec!["/nonexistent/hook".into()],
        ..crash.clone()
    };
    let runner = HookRunner::new(vec![crash, garbage, missing], vec![], None);
    let out = runtime().block_on(runner.run(HookEvent::PreToolUse, bash_call(dir.path(), "make")));
    assert!(out.iter().all(|o| o.say.is_none()));
    assert!(
        out[0]
            .failure
            .as_deref()
            .unwrap()
            .contains("exit code 1: boom"),
        "{out:?}"
    );
    assert!(
        out[1]
            .failure
            .as_deref()
            .unwrap()
            .contains("not its JSON answer")
    );
    assert!(
        out[2]
            .failure
            .as_deref()
            .unwrap()
            .contains("cannot be started")
    );
}

#[test]
fn a_hook_runs_only_for_its_tools_and_command_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = hook(
        dir.path(),
        "push.sh",
        HookEvent::PreToolUse,
        "sh",
        "exit 2\n",
    );
    spec.matcher = Some("Bash".into());
    spec.command_prefix = Some("git push".into());
    let runner = HookRunner::new(vec![spec], vec![], None);
    let rt = runtime();
    assert_eq!(
        rt.block_on(runner.run(
            HookEvent::PreToolUse,
            bash_call(dir.path(), "git push origin main")
        ))
        .len(),
        1
    );
    assert!(
        rt.block_on(runner.run(HookEvent::PreToolUse, bash_call(dir.path(), "git status")))
            .is_empty()
    );
    let write = HookInput {
        tool: Some("write_file".into()),
        args: Some(json!({"path": "a", "content": ""})),
        ..bash_call(dir.path(), "")
    };
    assert!(
        rt.block_on(runner.run(HookEvent::PreToolUse, write))
            .is_empty()
    );
}

#[test]
fn a_hook_does_not_see_airlocks_keys_and_its_last_result_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let spec = hook(
        dir.path(),
        "env.sh",
        HookEvent::PostToolUse,
        "/bin/sh",
        "echo \"{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"home=${HOME-unset}\\\"}\"\n",
    );
    let last = dir.path().join("state/hooks/last.json");
    let runner = HookRunner::new(vec![spec], vec!["HOME".into()], Some(last.clone()));
    let out = runtime().block_on(runner.run(HookEvent::PostToolUse, bash_call(dir.path(), "make")));
    assert_eq!(out[0].note.as_deref(), Some("home=unset"));
    let kept = last_results(&last);
    assert_eq!(kept["env.sh:d"]["event"], "PostToolUse");
}

#[test]
fn a_command_prefix_is_matched_word_by_word_against_each_simple_command() {
    let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    assert!(super::starts_with(
        &argv(&["git", "push", "origin"]),
        "git push"
    ));
    assert!(super::starts_with(&argv(&["git", "push"]), "git  push "));
    assert!(super::starts_with(&argv(&["cargo", "build"]), "cargo "));
    assert!(!super::starts_with(&argv(&["cargo-audit"]), "cargo "));
    assert!(!super::starts_with(&argv(&["git"]), "git push"));
    assert!(!super::starts_with(&argv(&["git", "push"]), "  "));
}
