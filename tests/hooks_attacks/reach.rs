//! Trust and the agent's reach: the files a hook runs, and what a hook inherits.

use super::*;

// ---------------------------------------------------------------------------------------------
// 3. Trust and the agent's reach: the files a hook runs.
// ---------------------------------------------------------------------------------------------

pub(crate) fn trust(w: &World) -> String {
    let out = w.airlock(&["trust", "--workspace", "ws"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    common::stdout(&out)
}

/// `airlock trust` refused: its standard error.
/// The project's config: one hook for `event` running `command` (a TOML array).
fn project_hook(w: &World, event: &str, command: &str) {
    std::fs::create_dir_all(w.path("ws/.airlock")).unwrap();
    std::fs::write(
        w.path("ws/.airlock/config.toml"),
        format!("[[hooks]]\nevent = \"{event}\"\ncommand = {command}\n"),
    )
    .unwrap();
}

fn trust_refused(w: &World) -> String {
    let refused = w.airlock(&["trust", "--workspace", "ws"], &[]);
    assert_eq!(
        refused.status.code(),
        Some(1),
        "{}",
        common::stdout(&refused)
    );
    common::stderr(&refused)
}

/// A marker the user's own rights can write and the sandbox cannot: in the home directory.
pub(crate) const PWN_SH: &str = "cat > /dev/null\necho pwned > \"$HOME/pwned\"\n";

#[test]
fn a_project_hook_naming_a_workspace_script_without_a_slash_never_runs_it() {
    // `command = ["sh", "check.sh"]`: the hook would run the workspace's check.sh (its working
    // directory), a file the agent writes. Such a hook is refused, with how to name it instead.
    let w = World::new(&calls(json!([bash("ls")])));
    std::fs::write(w.path("ws/check.sh"), "cat > /dev/null\nexit 0\n").unwrap();
    project_hook(&w, "PreToolUse", r#"["sh", "check.sh"]"#);
    let refused = trust_refused(&w);
    assert!(refused.contains("is a file in the workspace"), "{refused}");
    std::fs::write(w.path("ws/check.sh"), PWN_SH).unwrap();
    w.exec("deny", &[], &[]);
    assert!(!w.path("home/pwned").exists(), "the workspace's script ran");
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
    std::fs::write(w.path("ws/check.sh"), "cat > /dev/null\nexit 0\n").unwrap();
    project_hook(&w, "PreToolUse", r#"["sh", "check.sh"]"#);
    // Such a hook is never trusted, so never runs, whatever the agent writes to check.sh.
    trust_refused(&w);
    let out = w.exec("deny", &["--mode", "auto-edit"], &[]);
    assert!(
        !w.path("home/pwned").exists(),
        "the agent's script ran as a hook: {}",
        common::stdout(&out)
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
    project_hook(&w, "SessionStart", r#"["sh", "hooks/check.sh"]"#);
    trust(&w);
    w.exec("deny", &[], &[]);
    assert!(
        w.path("ws/ran.seen").exists(),
        "the trusted hook did not run"
    );
    std::fs::remove_file(w.path("ws/ran.seen")).unwrap();
    // Changed after trust (a pull, a teammate): the project is not trusted any more.
    std::fs::write(w.path("ws/.airlock/hooks/lib.sh"), PWN_SH).unwrap();
    let out = w.exec("deny", &[], &[]);
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
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/check.sh"), SOURCES_LIB).unwrap();
    std::fs::write(w.path("ws/scripts/lib.sh"), "true\n").unwrap();
    project_hook(&w, "Stop", r#"["sh", "../scripts/check.sh"]"#);
    // A hook script outside .airlock/ is never trusted, so whatever the agent writes beside
    // it never runs as a hook.
    trust_refused(&w);
    let out = w.exec("deny", &["--mode", "auto-edit"], &[]);
    assert!(
        !w.path("home/pwned").exists(),
        "the agent's code ran as a hook: {}",
        common::stdout(&out)
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
    w.user_hooks(
        &[("lint.sh", lint)],
        "[[hooks]]\nevent = \"PostToolUse\"\nmatcher = \"Write|Edit\"\ncommand = [\"sh\", \"hooks/lint.sh\"]\n",
    );
    let out = w.exec("deny", &["--mode", "auto-edit"], &[]);
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
    project_hook(&w, "SessionStart", r#"["sh", "hooks/a.sh"]"#);
    // Before trust: the script the link leads to is out of the agent's reach already.
    let out = w.exec("dangerously-allow-all", &[], &[]);
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
    // Such a hook cannot be trusted: its script lies outside .airlock/, where its neighbours
    // would not be covered.
    let refused = trust_refused(&w);
    assert!(refused.contains("outside the project's"), "{refused}");
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
    std::fs::create_dir_all(w.path("ws/scripts")).unwrap();
    std::fs::write(w.path("ws/scripts/mark.sh"), original).unwrap();
    project_hook(&w, "SessionStart", r#"["sh", "../scripts/mark.sh"]"#);
    let out = w.exec("dangerously-allow-all", &[], &[]);
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
    project_hook(
        &w,
        "SessionStart",
        r#"["sh", "-c", "touch \"$HOME/pwned\""]"#,
    );
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
    w.user_hooks(
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
    w.exec("deny", &[], &secrets);
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
