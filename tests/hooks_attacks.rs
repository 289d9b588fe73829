//! Hooks attacked as an outside red team would: a hook's answer that is garbage, ambiguous or
//! cut; a hook that will not stop; a model that shapes its arguments so that a hook misreads
//! the call or does not run at all; the agent reaching the files a hook runs; a hook's allow
//! where the policy or the sandbox says otherwise; what a hook inherits; what the audit keeps.
//!
//! Each test states a property. Those that fail at the time of writing are weaknesses (see the
//! report that came with this file); the others keep attacks that are not tested elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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

/// Writes `scripts` into `hooks/` in the user's config directory and `config` as the user
/// config.
fn user_hooks(w: &World, scripts: &[(&str, &str)], config: &str) {
    let dir = w.path("home/.config/airlock");
    std::fs::create_dir_all(dir.join("hooks")).unwrap();
    for (name, script) in scripts {
        std::fs::write(dir.join("hooks").join(name), script).unwrap();
    }
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

/// One PreToolUse hook of the user's running `sh hooks/h.sh` (`script`), stopped after 1 s.
fn pre_tool_use(w: &World, script: &str, extra: &str) {
    user_hooks(
        w,
        &[("h.sh", script)],
        &format!(
            "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/h.sh\"]\ntimeout_secs = 1\n{extra}\n"
        ),
    );
}

fn exec(w: &World, approvals: &str, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut args = vec![
        "exec",
        "--scenario",
        "s.json",
        "--workspace",
        "ws",
        "--approvals",
        approvals,
    ];
    args.extend_from_slice(extra);
    w.airlock(&args, env)
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
    let out = exec(
        &w,
        "deny",
        &[],
        &[("AIRLOCK_SANDBOX_PRETEND_NO_LANDLOCK", "1")],
    );
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
        let out = exec(&w, "deny", extra, &[]);
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
    let out = exec(&w, "deny", &[], &[]);
    assert!(denial(&World::events(&out), "c1").contains(NOBODY));
    assert!(!allowed_by_a_hook(&w));
}

#[test]
fn a_permission_request_hooks_allow_does_not_overrule_a_pre_tool_use_hooks_ask() {
    let w = World::new(&calls(json!([bash("make")])));
    user_hooks(
        &w,
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
    let out = exec(&w, "deny", &[], &[]);
    assert_not_allowed(&w, &out);
    assert!(denial(&World::events(&out), "c1").contains(NOBODY));
}

#[test]
fn a_failed_hook_is_not_outvoted_by_another_hooks_allow() {
    let w = World::new(&calls(json!([bash("make")])));
    user_hooks(
        &w,
        &[
            ("allow.sh", &allow_script()),
            ("crash.sh", "cat > /dev/null\necho boom >&2\nexit 1\n"),
        ],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/crash.sh\"]\n\
         [[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n\
         [[hooks]]\nevent = \"PermissionRequest\"\ncommand = [\"sh\", \"hooks/allow.sh\"]\n",
    );
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
    assert_no_say(&w, &out);
}

#[test]
fn a_hook_that_prints_allow_but_exits_oddly_has_no_say() {
    for ending in ["exit 1", "exit 3", "exit 255", "kill -9 $$"] {
        let w = World::new(&calls(json!([bash("make")])));
        pre_tool_use(&w, &format!("{}{ending}\n", allow_script()), "");
        let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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
    let out = exec(w, "deny", &[], &[]);
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
    let out = exec(&w, "deny", &[], &[]);
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

// ---------------------------------------------------------------------------------------------
// 5. What the model controls: the arguments. They must not steer which hooks run or what a
//    hook reads about the call.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_deny_hook_for_a_command_prefix_sees_that_command_anywhere_in_a_compound_command() {
    let w = World::new(&calls(json!([
        bash("git push origin main"),
        bash("true && git push origin main"),
        bash("echo ready\ngit push origin main"),
        bash("cd . ; git  push origin main"),
    ])));
    pre_tool_use(
        &w,
        "cat > /dev/null\necho 'Blocked: pushes go through review' >&2\nexit 2\n",
        "matcher = \"Bash\"\ncommand_prefix = \"git push\"",
    );
    // Even where every ask is allowed: the hook's deny comes first.
    let out = exec(&w, "dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    for call in ["c1", "c2", "c3", "c4"] {
        let message = event_of(&events, "tool_denied", call)
            .and_then(|e| e["message"].as_str())
            .unwrap_or("(it ran)");
        assert!(
            message.starts_with("denied by hook h.sh"),
            "{call} escaped the hook: {message}"
        );
    }
}

#[test]
fn a_hooks_allow_for_a_command_prefix_does_not_cover_commands_chained_after_it() {
    // README example 3: `command_prefix = "cargo "` with a hook that allows. `make` after it
    // is not a cargo command, and would ask.
    let w = World::new(&calls(json!([bash("cargo --version && make")])));
    pre_tool_use(
        &w,
        &allow_script(),
        "matcher = \"Bash\"\ncommand_prefix = \"cargo \"",
    );
    let out = exec(&w, "deny", &[], &[]);
    assert_not_allowed(&w, &out);
}

/// A Claude Code guard: denies a Write or Edit that puts `EVIL` in a file, or that lands under
/// the project's `secrets/`.
const GUARD: &str = r#"import json, os, sys
data = json.load(sys.stdin)
tool, given = data["tool_name"], data["tool_input"]
text = given.get("content", "") + given.get("new_string", "")
inside = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "secrets") + "/"
if tool in ("Write", "Edit") and ("EVIL" in text or given["file_path"].startswith(inside)):
    print("guarded", file=sys.stderr)
    sys.exit(2)
"#;

#[test]
fn a_hook_is_shown_the_edit_the_tool_makes_not_a_decoy_argument() {
    // The model adds `new_string` beside `new`: the hook reads the decoy, the tool writes `new`.
    let w = World::new(&calls(json!([
        {"tool": "edit_file", "args": {"path": "a.txt", "old": "hello", "new": "EVIL",
                                       "old_string": "hello", "new_string": "harmless"}},
        {"tool": "write_file", "args": {"path": "b.txt", "content": "EVIL",
                                        "file_path": "elsewhere.txt"}},
    ])));
    std::fs::write(w.path("ws/a.txt"), "hello\n").unwrap();
    user_hooks(
        &w,
        &[("guard.py", GUARD)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Write|Edit\"\ncommand = [\"python3\", \"hooks/guard.py\"]\n",
    );
    exec(&w, "dangerously-allow-all", &[], &[]);
    assert!(!w.path("ws/b.txt").exists(), "the write got past the guard");
    assert_eq!(
        std::fs::read_to_string(w.path("ws/a.txt")).unwrap(),
        "hello\n",
        "the edit the hook did not see was made"
    );
}

#[test]
fn a_hook_is_shown_the_path_a_write_lands_on_not_its_spelling() {
    let w = World::new(&calls(json!([
        {"tool": "write_file", "args": {"path": "secrets/plain.txt", "content": "x"}},
        {"tool": "write_file", "args": {"path": "docs/../secrets/dotdot.txt", "content": "x"}},
        {"tool": "write_file", "args": {"path": "link/linked.txt", "content": "x"}},
    ])));
    std::fs::create_dir_all(w.path("ws/docs")).unwrap();
    std::fs::create_dir_all(w.path("ws/secrets")).unwrap();
    std::os::unix::fs::symlink("secrets", w.path("ws/link")).unwrap();
    user_hooks(
        &w,
        &[("guard.py", GUARD)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Write|Edit\"\ncommand = [\"python3\", \"hooks/guard.py\"]\n",
    );
    let out = exec(&w, "dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    assert!(
        denial(&events, "c1").starts_with("denied by hook guard.py"),
        "the guard works on a plain path"
    );
    let written: Vec<String> = std::fs::read_dir(w.path("ws/secrets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        written.is_empty(),
        "written past the guard: {written:?}\n{}",
        common::stdout(&out)
    );
}

#[test]
fn a_matcher_on_bash_matches_the_real_bash_and_never_an_mcp_tool_named_bash() {
    let w = World::new(&calls(json!([])));
    user_hooks(
        &w,
        &[("mark.sh", "cat > /dev/null\n")],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = [\"sh\", \"hooks/mark.sh\"]\n",
    );
    let test = |tool: &str| -> bool {
        let input = json!({"tool_name": tool, "tool_input": {"command": "ls"}});
        let out = w.hooks_test("PreToolUse", &input.to_string());
        let text = common::stdout(&out);
        assert!(
            out.status.code() == Some(0) || text.contains("no PreToolUse hook matches"),
            "{tool}: {text}"
        );
        out.status.code() == Some(0)
    };
    assert!(test("Bash"));
    assert!(test("bash"));
    for tool in [
        "mcp__evil__Bash",
        "evil__Bash",
        "evil__bash",
        "mcp__Bash__x",
        "Bash__x",
        "BashOutput",
        "xBash",
    ] {
        assert!(!test(tool), "the matcher `Bash` matched {tool}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Trust and the agent's reach: the files a hook runs.
// ---------------------------------------------------------------------------------------------

fn trust(w: &World) -> String {
    let out = w.airlock(&["trust", "--workspace", "ws"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    common::stdout(&out)
}

/// A marker the user's own rights can write and the sandbox cannot: in the home directory.
const PWN_SH: &str = "cat > /dev/null\necho pwned > \"$HOME/pwned\"\n";

#[test]
fn a_project_hook_naming_a_workspace_script_without_a_slash_never_runs_it() {
    // `command = ["sh", "check.sh"]`: the hook would run the workspace's check.sh (its working
    // directory), a file the agent writes. Such a hook is refused, with how to name it instead.
    let w = World::new(&calls(json!([bash("ls")])));
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::write(w.path("ws/check.sh"), "cat > /dev/null\nexit 0\n").unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"check.sh\"]\n",
    )
    .unwrap();
    let listed = trust(&w);
    std::fs::write(w.path("ws/check.sh"), PWN_SH).unwrap();
    let out = exec(&w, "deny", &[], &[]);
    assert!(
        !w.path("home/pwned").exists(),
        "a hook script changed after trust ran; trust listed only:\n{listed}"
    );
    assert!(
        common::stderr(&out).contains("is a file in the workspace"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn the_agent_cannot_rewrite_a_script_a_hook_names_without_a_slash() {
    // auto-edit and nobody at the terminal: the agent rewrites check.sh, and the next call's
    // hook runs it outside the sandbox with the user's rights.
    let w = World::new(
        &json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "check.sh", "content": PWN_SH}}]},
            {"say": "next", "expect": ["any"], "calls": [{"tool": "bash", "args": {"command": "ls"}}]},
            {"say": "done", "expect": ["any"]}
        ]})
        .to_string(),
    );
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::write(w.path("ws/check.sh"), "cat > /dev/null\nexit 0\n").unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"sh\", \"check.sh\"]\n",
    )
    .unwrap();
    trust(&w);
    let out = exec(&w, "deny", &["--mode", "auto-edit"], &[]);
    assert!(
        !w.path("home/pwned").exists(),
        "the agent's script ran as a hook: {}",
        common::stdout(&out)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/check.sh")).unwrap(),
        "cat > /dev/null\nexit 0\n"
    );
}

/// A hook script that sources `lib.sh` next to it, and leaves a mark that it ran.
const SOURCES_LIB: &str = "cat > /dev/null\n. \"$(dirname \"$0\")/lib.sh\"\necho ran > \"$CLAUDE_PROJECT_DIR/ran.seen\"\n";

#[test]
fn a_file_a_trusted_hook_script_sources_is_covered_by_trust() {
    let w = World::new(&calls(json!([])));
    std::fs::create_dir_all(w.path("ws/.airlock/hooks")).unwrap();
    std::fs::write(w.path("ws/.airlock/hooks/check.sh"), SOURCES_LIB).unwrap();
    std::fs::write(w.path("ws/.airlock/hooks/lib.sh"), "true\n").unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"hooks/check.sh\"]\n",
    )
    .unwrap();
    trust(&w);
    exec(&w, "deny", &[], &[]);
    assert!(
        w.path("ws/ran.seen").exists(),
        "the trusted hook did not run"
    );
    std::fs::remove_file(w.path("ws/ran.seen")).unwrap();
    // Changed after trust (a pull, a teammate): the project is not trusted any more.
    std::fs::write(w.path("ws/.airlock/hooks/lib.sh"), PWN_SH).unwrap();
    let out = exec(&w, "deny", &[], &[]);
    assert!(
        !w.path("home/pwned").exists() && !w.path("ws/ran.seen").exists(),
        "a hook ran code changed after trust: {}",
        common::stderr(&out)
    );
}

#[test]
fn the_agent_cannot_rewrite_a_file_a_hook_script_sources() {
    // The script lives outside `.airlock/` (as in tests/hooks.rs); its helper next to it is
    // ordinary workspace code to the policy, written without asking in auto-edit.
    let w = World::new(&calls(json!([
        {"tool": "write_file", "args": {"path": "scripts/lib.sh", "content": PWN_SH}}
    ])));
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/check.sh"), SOURCES_LIB).unwrap();
    std::fs::write(w.path("ws/scripts/lib.sh"), "true\n").unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"Stop\"\ncommand = [\"sh\", \"../scripts/check.sh\"]\n",
    )
    .unwrap();
    trust(&w);
    let out = exec(&w, "deny", &["--mode", "auto-edit"], &[]);
    assert!(
        !w.path("home/pwned").exists(),
        "the agent's code ran as a hook: {}",
        common::stdout(&out)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/scripts/lib.sh")).unwrap(),
        "true\n"
    );
}

#[test]
fn the_readmes_lint_hook_never_runs_python_the_agent_wrote_into_the_workspace() {
    // README example 2, verbatim. Its `python3 -c 'import json…'` runs in the workspace, where
    // Python looks first: an agent's `json.py` (an ordinary write, no question in auto-edit)
    // runs outside the sandbox with the user's rights on the next write.
    let lint = r#"#!/bin/sh
# hooks/lint.sh  (event = "PostToolUse", matcher = "Write|Edit")
file=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])')
case "$file" in *.py) ;; *) exit 0 ;; esac
out=$(python3 -m pyflakes "$file" 2>&1) || { echo "$out" >&2; exit 2; }
"#;
    let w = World::new(&calls(json!([
        {"tool": "write_file", "args": {"path": "json.py", "content":
            "import os\nopen(os.path.join(os.environ['HOME'], 'pwned'), 'w').write('pwned')\n"}}
    ])));
    user_hooks(
        &w,
        &[("lint.sh", lint)],
        "[[hooks]]\nevent = \"PostToolUse\"\nmatcher = \"Write|Edit\"\ncommand = [\"sh\", \"hooks/lint.sh\"]\n",
    );
    let out = exec(&w, "deny", &["--mode", "auto-edit"], &[]);
    assert!(
        started(&World::events(&out), "c1"),
        "{}",
        common::stdout(&out)
    );
    assert!(
        !w.path("home/pwned").exists(),
        "a hook imported the agent's json.py outside the sandbox"
    );
}

#[test]
fn a_hook_script_reached_through_a_symlink_is_out_of_the_agents_reach() {
    let w = World::new(&calls(json!([
        {"tool": "write_file", "args": {"path": "scripts/real.sh", "content": PWN_SH}},
        {"tool": "edit_file", "args": {"path": "scripts/real.sh", "old": "exit 0", "new": "echo pwned > \"$HOME/pwned\""}},
        bash("python3 -c \"open('scripts/real.sh','a').write('echo pwned > $HOME/pwned')\""),
    ])));
    let original = "cat > /dev/null\nexit 0\n";
    std::fs::create_dir_all(w.path("ws/.airlock/hooks")).unwrap();
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/real.sh"), original).unwrap();
    std::os::unix::fs::symlink("../../scripts/real.sh", w.path("ws/.airlock/hooks/a.sh")).unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"hooks/a.sh\"]\n",
    )
    .unwrap();
    let listed = trust(&w);
    assert!(listed.contains("scripts/real.sh"), "{listed}");
    let out = exec(&w, "dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    assert!(denial(&events, "c1").contains("real.sh"));
    assert!(denial(&events, "c2").contains("real.sh"));
    assert!(
        common::stdout(&out).contains("Read-only file system"),
        "{}",
        common::stdout(&out)
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/scripts/real.sh")).unwrap(),
        original
    );
    assert!(!w.path("home/pwned").exists());
}

#[test]
fn inside_the_sandbox_a_hook_script_cannot_be_replaced_renamed_away_or_unlinked() {
    let w = World::new(&calls(json!([
        bash(
            "python3 -c \"import os; os.rename('scripts', 'old'); os.mkdir('scripts'); open('scripts/mark.sh', 'w').write('echo pwned')\""
        ),
        bash(
            "python3 -c \"import os; open('scripts/new', 'w').write('echo pwned'); os.rename('scripts/new', 'scripts/mark.sh')\""
        ),
        bash("python3 -c \"import os; os.unlink('scripts/mark.sh')\""),
        bash("python3 -c \"import os; os.link('scripts/mark.sh', 'scripts/hard')\""),
    ])));
    let original = "cat > /dev/null\nexit 0\n";
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/mark.sh"), original).unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"../scripts/mark.sh\"]\n",
    )
    .unwrap();
    let out = exec(&w, "dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    for call in ["c1", "c2", "c3", "c4"] {
        let finished = event_of(&events, "tool_finished", call);
        assert!(
            finished.is_none_or(|f| f["status"] != "ok"),
            "{call} succeeded: {}",
            common::stdout(&out)
        );
    }
    assert_eq!(
        std::fs::read_to_string(w.path("ws/scripts/mark.sh")).unwrap(),
        original
    );
    assert!(!w.path("ws/old").exists() && !w.path("ws/scripts/hard").exists());
}

#[test]
fn hooks_test_never_runs_an_untrusted_projects_hook() {
    let w = World::new(&calls(json!([])));
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        "[[hooks]]\nevent = \"SessionStart\"\ncommand = [\"sh\", \"-c\", \"touch \\\"$HOME/pwned\\\"\"]\n",
    )
    .unwrap();
    let out = w
        .command(
            w.dir.path(),
            &["hooks", "test", "SessionStart", "--workspace", "ws"],
            &[],
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", common::stdout(&out));
    assert!(!w.path("home/pwned").exists());
    let listed = common::stdout(&w.airlock(&["hooks", "list", "--workspace", "ws"], &[]));
    assert!(listed.contains("not run"), "{listed}");
}

// ---------------------------------------------------------------------------------------------
// 4. What a hook inherits.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_hook_sees_none_of_airlocks_keys_and_holds_none_of_its_state_files() {
    let w = World::new(&calls(json!([bash("ls")])));
    user_hooks(
        &w,
        &[(
            "env.py",
            r#"import json, os, sys
sys.stdin.read()
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
seen = {"env": dict(os.environ), "fds": fds}
open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "env.seen"), "w").write(json.dumps(seen))
"#,
        )],
        "api_key_env = \"MY_MODEL_KEY\"\n\
         [mcp_servers.remote1]\nurl = \"http://127.0.0.1:9/mcp\"\nbearer_token_env = \"MY_MCP_TOKEN\"\n\
         [[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"python3\", \"hooks/env.py\"]\n",
    );
    let secrets = [
        ("MY_MODEL_KEY", "secret-model-key"),
        ("MY_MCP_TOKEN", "secret-mcp-token"),
        ("AIRLOCK_API_KEY", "secret-airlock-key"),
        ("ANTHROPIC_API_KEY", "secret-anthropic-key"),
        ("GITHUB_TOKEN", "secret-github-token"),
    ];
    exec(&w, "deny", &[], &secrets);
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(w.path("ws/env.seen")).unwrap()).unwrap();
    let env = seen["env"].as_object().unwrap();
    for (name, value) in secrets {
        assert!(env.get(name).is_none(), "the hook sees {name}");
        assert!(
            !env.values().any(|v| v == value),
            "the hook sees {name}'s value"
        );
    }
    assert!(
        env.get("AIRLOCK_HOME").is_none(),
        "the hook sees AIRLOCK_HOME"
    );
    assert_eq!(env["AIRLOCK_HOOK_EVENT"], "PreToolUse");
    let state = w.path("state").canonicalize().unwrap();
    for (fd, target) in seen["fds"].as_object().unwrap() {
        let target = target.as_str().unwrap();
        assert!(
            !target.starts_with(&state.display().to_string()),
            "the hook holds fd {fd} on airlock's state: {target}"
        );
    }
}

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
        user_hooks(
            &w,
            &[("request.sh", &format!("cat > /dev/null\necho '{answer}'\n"))],
            "[[hooks]]\nevent = \"PermissionRequest\"\nname = \"release-gate\"\ncommand = [\"sh\", \"hooks/request.sh\"]\n",
        );
        let listed = common::stdout(&w.airlock(&["hooks", "list", "--workspace", "ws"], &[]));
        let digest = listed
            .lines()
            .find_map(|l| l.trim().strip_prefix("digest "))
            .unwrap_or_else(|| panic!("{listed}"))
            .to_string();
        let out = exec(&w, "deny", &[], &[]);
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
    user_hooks(
        &w,
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
    user_hooks(
        &w,
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
    let out = exec(&w, "dangerously-allow-all", &[], &[]);
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
    let out = exec(&w, "dangerously-allow-all", &[], &[]);
    let events = World::events(&out);
    assert!(denial(&events, "c1").contains("check.sh"));
    assert!(
        w.path("ws/ran.seen").exists(),
        "the trusted hook did not run"
    );
    assert!(!w.path("home/pwned").exists());
    std::fs::remove_file(w.path("ws/ran.seen")).unwrap();
    std::fs::write(&script, format!("{original}echo changed\n")).unwrap();
    let out = exec(&w, "deny", &[], &[]);
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
    user_hooks(
        &w,
        &[("check.py", "import sys\nsys.stdin.read()\n")],
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = [\"python3\", \"hooks/check.py\"]\n",
    );
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = exec(
        &w,
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
