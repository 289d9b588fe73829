//! What the model controls, its arguments, must not steer which hooks run or what they read.

use super::*;

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
    let out = w.exec("dangerously-allow-all", &[], &[]);
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
    let out = w.exec("deny", &[], &[]);
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
    w.user_hooks(
        &[("guard.py", GUARD)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Write|Edit\"\ncommand = [\"python3\", \"hooks/guard.py\"]\n",
    );
    w.exec("dangerously-allow-all", &[], &[]);
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
    w.user_hooks(
        &[("guard.py", GUARD)],
        "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Write|Edit\"\ncommand = [\"python3\", \"hooks/guard.py\"]\n",
    );
    let out = w.exec("dangerously-allow-all", &[], &[]);
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
    w.user_hooks(
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
