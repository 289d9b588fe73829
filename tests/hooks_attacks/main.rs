//! Hooks attacked as an outside red team would: a hook's answer that is garbage, ambiguous or
//! cut; a hook that will not stop; a model that shapes its arguments so that a hook misreads
//! the call or does not run at all; the agent reaching the files a hook runs; a hook's allow
//! where the policy or the sandbox says otherwise; what a hook inherits; what the audit keeps.
//!
//! Each test states a property. Written by a red-team pass in stop 43: the 19 that failed then
//! were weaknesses, all fixed in that stop; the others keep attacks not tested elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod arguments;
mod audit;
mod reach;

use std::path::Path;
use std::time::{Duration, Instant};

use common::World;
use serde_json::{Value, json};

/// A scenario of one step of `calls`, then a step that accepts whatever they came to.
fn calls(calls: Value) -> String {
    let n = calls.as_array().unwrap().len();
    json!({"name": "hooks-attacks", "prompt": "go", "steps": [
        {"calls": calls},
        {"say": "done", "expect": vec!["any"; n]}
    ]})
    .to_string()
}

fn bash(command: &str) -> Value {
    json!({"tool": "bash", "args": {"command": command}})
}

/// One PreToolUse hook of the user's running `sh hooks/h.sh` (`script`), stopped after 1 s.
fn pre_tool_use(w: &World, script: &str, extra: &str) {
    w.user_hooks(
        &[("h.sh", script)],
        &format!(
            "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/h.sh\"]\ntimeout_secs = 1\n{extra}\n"
        ),
    );
}

/// The event `name` about call `call`, if there is one.
fn event_of<'a>(events: &'a [Value], name: &str, call: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|e| e["event"] == name && e["call_id"] == call)
}

fn started(events: &[Value], call: &str) -> bool {
    event_of(events, "tool_started", call).is_some()
}

fn denial(events: &[Value], call: &str) -> String {
    event_of(events, "tool_denied", call)
        .and_then(|e| e["message"].as_str())
        .unwrap_or_else(|| panic!("call {call} was not denied: {events:?}"))
        .to_string()
}

const NOBODY: &str = "nobody is there to approve it";

fn audit(w: &World) -> Vec<Value> {
    let Ok(dir) = std::fs::read_dir(w.path("state/audit")) else {
        return Vec::new();
    };
    dir.flat_map(|e| {
        std::fs::read_to_string(e.unwrap().path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    })
    .collect()
}

/// Whether the audit holds a decision to allow a call made by a hook.
fn allowed_by_a_hook(w: &World) -> bool {
    audit(w).iter().any(|r| {
        r["kind"] == "decision" && r["body"]["decision"] == "allow" && r["body"]["source"] == "hook"
    })
}

/// Every hook outcome the audit recorded.
fn hook_outcomes(w: &World) -> Vec<Value> {
    audit(w)
        .into_iter()
        .filter(|r| r["kind"] == "hooks")
        .flat_map(|r| r["body"]["hooks"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Asserts that `make` (a call the policy asks about) was not run on a hook's word: it was
/// asked about (and so denied, nobody being there) or denied, and no hook allowed it.
fn assert_not_allowed(w: &World, out: &std::process::Output) {
    let events = World::events(out);
    assert!(
        !started(&events, "c1"),
        "the hook's answer let the call run: {}",
        common::stdout(out)
    );
    denial(&events, "c1");
    assert!(!allowed_by_a_hook(w), "the audit says a hook allowed it");
}

/// Asserts that the call was asked about because its hook had no say, and the audit says why.
fn assert_no_say(w: &World, out: &std::process::Output) {
    assert_not_allowed(w, out);
    let message = denial(&World::events(out), "c1");
    assert!(
        message.contains(NOBODY),
        "the call was not asked about: {message}"
    );
    let outcomes = hook_outcomes(w);
    assert!(
        outcomes.iter().any(|o| o["failure"].is_string()),
        "no hook failure recorded: {outcomes:?}"
    );
}

const ALLOW: &str = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine"}}"#;

fn allow_script() -> String {
    format!("cat > /dev/null\necho '{ALLOW}'\n")
}

/// Whether process `pid` still lives (a zombie does not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

fn read_pid(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|_| panic!("{} was not written", path.display()))
        .trim()
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// 1. Where a hook's allow stands.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_hooks_allow_never_runs_a_command_on_a_machine_without_a_sandbox() {
    // Without Landlock every command would run with all of the user's rights: the call must
    // come to a person (here: nobody, so denied), not be approved by the hook and then refused.
    let w = World::new(&calls(json!([bash("make --version")])));
    pre_tool_use(&w, &allow_script(), "");
    let out = w.exec("deny", &[], &[("AIRLOCK_SANDBOX_PRETEND_NO_LANDLOCK", "1")]);
    let events = World::events(&out);
    assert!(
        event_of(&events, "tool_denied", "c1")
            .is_some_and(|e| e["message"].as_str().is_some_and(|m| m.contains(NOBODY))),
        "the call was not asked about: {}",
        common::stdout(&out)
    );
    assert!(
        !allowed_by_a_hook(&w),
        "the gate recorded the hook's allow for an unconfined command"
    );
}

#[test]
fn no_mode_rule_or_sandbox_setting_is_lifted_by_a_hooks_allow() {
    // read-only mode, a deny rule, `--sandbox off` and `sandbox = "off"` in the config.
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(&w, &allow_script(), "");
    std::fs::write(w.path("rules.toml"), "deny = [\"bash(make *)\"]\n").unwrap();
    for (extra, wanted) in [
        (&["--mode", "read-only"][..], "read-only mode denies it"),
        (&["--rules", "rules.toml"][..], "deny bash(make *)"),
        (&["--sandbox", "off"][..], NOBODY),
    ] {
        let out = w.exec("deny", extra, &[]);
        let events = World::events(&out);
        assert!(
            !started(&events, "c1"),
            "{extra:?}: {}",
            common::stdout(&out)
        );
        let message = denial(&events, "c1");
        assert!(message.contains(wanted), "{extra:?}: {message}");
    }
    pre_tool_use(&w, &allow_script(), "");
    let config = w.path("home/.config/airlock/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("sandbox = \"off\"\n{text}")).unwrap();
    let out = w.exec("deny", &[], &[]);
    assert!(denial(&World::events(&out), "c1").contains(NOBODY));
    assert!(!allowed_by_a_hook(&w));
}

#[test]
fn a_permission_request_hooks_allow_does_not_overrule_a_pre_tool_use_hooks_ask() {
    let w = World::new(&calls(json!([bash("make")])));
    w.user_hooks(
        &[
            ("allow.sh", &allow_script()),
            (
                "ask.sh",
                "cat > /dev/null\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\"}}'\n",
            ),
        ],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/ask.sh\"]\n\
         [[hooks]]\nevent = \"PermissionRequest\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n",
    );
    let out = w.exec("deny", &[], &[]);
    assert_not_allowed(&w, &out);
    assert!(denial(&World::events(&out), "c1").contains(NOBODY));
}

#[test]
fn a_failed_hook_is_not_outvoted_by_another_hooks_allow() {
    let w = World::new(&calls(json!([bash("make")])));
    w.user_hooks(
        &[
            ("allow.sh", &allow_script()),
            ("crash.sh", "cat > /dev/null\necho boom >&2\nexit 1\n"),
        ],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/crash.sh\"]\n\
         [[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n\
         [[hooks]]\nevent = \"PermissionRequest\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n",
    );
    let out = w.exec("deny", &[], &[]);
    assert_no_say(&w, &out);
}

// ---------------------------------------------------------------------------------------------
// 2. A hook's answer: garbage, ambiguous, cut, odd exits, no end.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_hook_that_says_continue_false_never_allows_the_call() {
    // Claude Code: `continue: false` takes precedence over every decision.
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        r#"cat > /dev/null
echo '{"continue":false,"stopReason":"stop everything","hookSpecificOutput":{"permissionDecision":"allow"}}'
"#,
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_not_allowed(&w, &out);
}

#[test]
fn a_hook_whose_answer_says_block_and_allow_at_once_does_not_allow() {
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        r#"cat > /dev/null
echo '{"decision":"block","reason":"no builds","hookSpecificOutput":{"permissionDecision":"allow"}}'
"#,
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_not_allowed(&w, &out);
}

#[test]
fn a_hook_that_answers_deny_then_allow_under_one_key_does_not_allow() {
    // Duplicate keys: serde_json (like Python and JavaScript) keeps the last one; an answer
    // that says deny and allow is not an allow.
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecision":"allow"}}'
"#,
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_not_allowed(&w, &out);
}

#[test]
fn a_hook_whose_output_is_not_utf8_has_no_say() {
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        "cat > /dev/null\nprintf '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"\\377\\376\"}}\\n'\n",
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_no_say(&w, &out);
}

#[test]
fn a_hooks_answer_cut_at_the_output_limit_is_not_read_as_an_allow() {
    // 1 MiB of output is read: an allow padded to exactly 1 MiB, then a block after it. The
    // whole output is not one JSON answer, so the hook has no say.
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        &format!(
            "cat > /dev/null\npython3 -c '\nimport sys\na = {ALLOW:?}.encode()\nsys.stdout.buffer.write(a + b\" \" * (1024 * 1024 - len(a)) + b\"{{\\\"decision\\\": \\\"block\\\", \\\"reason\\\": \\\"no\\\"}}\")\n'\n"
        ),
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_no_say(&w, &out);
}

#[test]
fn a_hook_that_prints_two_answers_deny_and_allow_has_no_say() {
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        &format!(
            "cat > /dev/null\necho '{{\"hookSpecificOutput\":{{\"permissionDecision\":\"deny\"}}}}'\necho '{ALLOW}'\n"
        ),
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_no_say(&w, &out);
}

#[test]
fn a_hook_that_prints_allow_but_exits_oddly_has_no_say() {
    for ending in ["exit 1", "exit 3", "exit 255", "kill -9 $$"] {
        let w = World::new(&calls(json!([bash("make")])));
        pre_tool_use(&w, &format!("{}{ending}\n", allow_script()), "");
        let out = w.exec("deny", &[], &[]);
        assert_no_say(&w, &out);
        let failure = hook_outcomes(&w)[0]["failure"]
            .as_str()
            .unwrap()
            .to_string();
        let wanted = if ending.starts_with("kill") {
            "killed by signal 9".to_string()
        } else {
            format!("exit code {}", &ending[5..])
        };
        assert!(failure.contains(&wanted), "{ending}: {failure}");
    }
}

#[test]
fn a_hook_that_prints_hundreds_of_megabytes_is_stopped_at_its_timeout_and_has_no_say() {
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        &format!("cat > /dev/null\necho '{ALLOW}'\nhead -c 400000000 /dev/zero | tr '\\0' ' '\n"),
        "",
    );
    let start = Instant::now();
    let out = w.exec("deny", &[], &[]);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_no_say(&w, &out);
}

#[test]
fn a_hook_that_ignores_sigterm_is_still_stopped_at_its_timeout() {
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        &format!(
            "cat > /dev/null\ntrap '' TERM\necho '{ALLOW}'\necho $$ > \"$CLAUDE_PROJECT_DIR/hook.pid\"\nwhile :; do sleep 0.1; done\n"
        ),
        "",
    );
    stopped_in_time(&w, "hook.pid");
}

/// Runs the scenario with its hook: airlock waits no longer than the hook's time limit, the
/// hook has no say, and the process whose pid the hook wrote to `ws/PID_FILE` is gone.
fn stopped_in_time(w: &World, pid_file: &str) {
    let start = Instant::now();
    let out = w.exec("deny", &[], &[]);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_no_say(w, &out);
    let pid = read_pid(&w.path(&format!("ws/{pid_file}")));
    assert!(!alive(&pid), "{pid} (from {pid_file}) still runs");
}

#[test]
fn a_hook_whose_child_keeps_its_output_open_does_not_hold_airlock_past_the_timeout() {
    // The hook answers allow and exits; its child keeps standard output open. airlock waits no
    // longer than the hook's time limit, the child is stopped with it, and the hook has no say.
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        &format!(
            "cat > /dev/null\necho '{ALLOW}'\nsleep 30 &\necho $! > \"$CLAUDE_PROJECT_DIR/child.pid\"\nexit 0\n"
        ),
        "",
    );
    stopped_in_time(&w, "child.pid");
}

#[test]
fn a_hooks_child_that_leaves_its_process_group_is_stopped_at_the_timeout_too() {
    // README: "past it the hook is stopped (with its children)". A child that called setsid()
    // is out of the process group airlock kills.
    let w = World::new(&calls(json!([bash("make")])));
    pre_tool_use(
        &w,
        "cat > /dev/null\nsetsid sh -c 'echo $$ > \"$CLAUDE_PROJECT_DIR/child.pid\"; exec sleep 30' > /dev/null 2>&1 &\nsleep 30\n",
        "",
    );
    let out = w.exec("deny", &[], &[]);
    assert_no_say(&w, &out);
    let pid = read_pid(&w.path("ws/child.pid"));
    let lives = alive(&pid);
    if lives {
        // Ours to end: the test started it (through the hook).
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
    }
    assert!(!lives, "the hook's child {pid} outlived the hook's timeout");
}
