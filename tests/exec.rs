//! `airlock exec` on the built-in demo, as a user runs it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

struct Run {
    status: Option<i32>,
    events: Vec<Value>,
    stderr: String,
}

fn exec(args: &[&str], root: &Path) -> Run {
    exec_with_env(args, root, &[])
}

fn exec_with_env(args: &[&str], root: &Path, env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_airlock"));
    command.arg("exec").args(args).envs(env.iter().copied());
    let out = scratch_env(&mut command, root).output().unwrap();
    Run {
        status: out.status.code(),
        events: String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is a JSON event"))
            .collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Home, state, temp and config under `root`, and no provider settings from the outside.
fn scratch_env<'a>(command: &'a mut Command, root: &Path) -> &'a mut Command {
    command
        .env("HOME", root.join("home"))
        .env("AIRLOCK_HOME", root.join("state"))
        .env("TMPDIR", root.join("tmp"))
        .env("XDG_CONFIG_HOME", root.join("home/.config"))
        .env_remove("AIRLOCK_PROVIDER")
        .env_remove("AIRLOCK_MODEL")
        .env_remove("AIRLOCK_BASE_URL")
        .env_remove("AIRLOCK_MODE")
        .env_remove("AIRLOCK_RULES")
}

fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["home", "state", "tmp"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    dir
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

fn ids(events: &[&Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["call_id"].as_str().unwrap().to_string())
        .collect()
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn exec_with_approvals_deny_completes_the_demo_with_the_expected_denials() {
    let root = root();
    let run = exec(&[], root.path());
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let denied = of_kind(&run.events, "tool_denied");
    assert_eq!(ids(&denied), vec!["c5", "c6", "c7"]);
    assert_eq!(denied[0]["source"], "headless", "the edit needed a human");
    assert_eq!(
        denied[1]["source"], "headless",
        "the test run needed a human"
    );
    assert_eq!(
        denied[2]["source"], "policy",
        "rm -rf ~/.cache/pip is a hard deny"
    );
    assert_eq!(
        denied[2]["title"], "$ rm -rf ~/.cache/pip",
        "what was refused"
    );
    let mut ran = ids(&of_kind(&run.events, "tool_finished"));
    ran.sort();
    assert_eq!(ran, vec!["c1", "c2", "c3", "c4", "c8", "c9"]);
    let last = of_kind(&run.events, "turn_finished");
    assert_eq!(last[0]["outcome"], "completed");
    // Each step's calls are announced before any of them is decided, with what the gate expects
    // of each: the edit and the test run ask, the hard deny and the reads do not.
    let mut expected_to_ask = std::collections::BTreeMap::new();
    for event in &run.events {
        match event["event"].as_str().unwrap() {
            "batch_queued" => {
                for call in event["calls"].as_array().unwrap() {
                    assert!(
                        call["tool"].is_string() && call["title"].is_string(),
                        "{call}"
                    );
                    expected_to_ask.insert(
                        call["call_id"].as_str().unwrap().to_string(),
                        call["needs_decision"].as_bool().unwrap(),
                    );
                }
            }
            "tool_started" | "tool_denied" => {
                let id = event["call_id"].as_str().unwrap();
                assert!(expected_to_ask.contains_key(id), "{id} was not announced");
            }
            _ => {}
        }
    }
    let asking: Vec<&str> = expected_to_ask
        .iter()
        .filter(|(_, asks)| **asks)
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(asking, vec!["c5", "c6"]);
    // Both long commands streamed output while the other was still running.
    let outputs: Vec<&str> = of_kind(&run.events, "tool_output")
        .iter()
        .map(|e| e["call_id"].as_str().unwrap())
        .collect();
    let first_c9 = outputs.iter().position(|id| *id == "c9").unwrap();
    let last_c8 = outputs.iter().rposition(|id| *id == "c8").unwrap();
    assert!(
        first_c9 < last_c8,
        "outputs did not interleave: {outputs:?}"
    );
}

#[test]
fn the_demo_runs_on_a_scratch_copy_and_leaves_the_demo_workspace_untouched() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo-workspace");
    let before = snapshot(&assets);
    let root = root();
    let run = exec(&["--approvals", "dangerously-allow-all"], root.path());
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let workspace = PathBuf::from(run.events[0]["workspace"].as_str().unwrap());
    assert!(
        workspace.starts_with(root.path().join("tmp")),
        "{workspace:?}"
    );
    let fixed = std::fs::read_to_string(workspace.join("calc.py")).unwrap();
    assert!(
        fixed.contains("return a + b"),
        "the edit ran on the scratch copy"
    );
    assert_eq!(snapshot(&assets), before, "assets/demo-workspace changed");
    // The test run passed after the fix, and only the hard deny was refused.
    assert_eq!(ids(&of_kind(&run.events, "tool_denied")), vec!["c7"]);
    let tests = of_kind(&run.events, "tool_finished")
        .into_iter()
        .find(|e| e["call_id"] == "c6")
        .unwrap();
    assert_eq!(tests["exit_code"], 0);
}

#[test]
fn a_malformed_scenario_is_a_clear_error_and_nothing_runs() {
    let root = root();
    let scenario = root.path().join("bad.json");
    std::fs::write(&scenario, r#"{"name": "x", "steps": [{"calls": [{"tool": "bash", "args": {"command": "touch x"}}], "sey": 1}]}"#).unwrap();
    let run = exec(
        &["--scenario", scenario.to_str().unwrap(), "go"],
        root.path(),
    );
    assert_eq!(run.status, Some(1));
    assert!(
        run.stderr.contains("bad.json") && run.stderr.contains("sey"),
        "{}",
        run.stderr
    );
    assert!(run.events.is_empty());
}

#[test]
fn model_api_keys_never_reach_the_commands_an_agent_runs() {
    let root = root();
    let scenario = root.path().join("env.json");
    std::fs::write(
        &scenario,
        r#"{"name": "env", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo \"[${OPENAI_API_KEY-unset}] [${ANTHROPIC_API_KEY-unset}]\""}}]},
            {"say": "done", "expect": ["ok"]}
        ]}"#,
    )
    .unwrap();
    let workspace = root.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let run = exec_with_env(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--workspace",
            workspace.to_str().unwrap(),
            "--approvals",
            "dangerously-allow-all",
            "go",
        ],
        root.path(),
        &[
            ("OPENAI_API_KEY", "sk-secret-1"),
            ("ANTHROPIC_API_KEY", "sk-secret-2"),
        ],
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let output: String = of_kind(&run.events, "tool_output")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(output, "[unset] [unset]\n");
    let everything = serde_json::to_string(&run.events).unwrap();
    assert!(!everything.contains("sk-secret"));
}

/// A scenario (and its workspace) whose model asks for one bash command, then says "done".
fn one_command_scenario(root: &Path, command: &str) -> (PathBuf, PathBuf) {
    let scenario = root.join("one.json");
    let steps = serde_json::json!([
        {"calls": [{"tool": "bash", "args": {"command": command}}]},
        {"say": "done"}
    ]);
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "one", "prompt": "go", "steps": steps}).to_string(),
    )
    .unwrap();
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    (scenario, workspace)
}

/// Runs one bash command through a scripted scenario under allow-all and returns what it printed.
fn command_output(root: &Path, command: &str, env: &[(&str, &str)]) -> (String, Run) {
    let (scenario, workspace) = one_command_scenario(root, command);
    let run = exec_with_env(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--workspace",
            workspace.to_str().unwrap(),
            "--approvals",
            "dangerously-allow-all",
        ],
        root,
        env,
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let output = of_kind(&run.events, "tool_output")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    (output, run)
}

#[test]
fn a_key_in_a_custom_api_key_env_and_airlock_home_never_reach_a_command() {
    let root = root();
    let config = root.path().join("home/.config/airlock");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "provider = \"openai\"\napi_key_env = \"CORP_LLM_TOKEN\"\n",
    )
    .unwrap();
    let (output, run) = command_output(
        root.path(),
        "echo \"[${CORP_LLM_TOKEN-unset}] [${AIRLOCK_HOME-unset}]\"",
        &[("CORP_LLM_TOKEN", "sk-corp-secret")],
    );
    assert_eq!(output, "[unset] [unset]\n");
    assert!(
        !serde_json::to_string(&run.events)
            .unwrap()
            .contains("sk-corp-secret")
    );
}

#[test]
fn a_command_cannot_read_the_keys_from_airlocks_own_process_environment() {
    let root = root();
    // Every process whose starting environment holds the key. Before airlock kept its own process
    // private, its parent (airlock) was one, through /proc/<pid>/environ.
    let hunt = r#"py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3; $py -c '
import os
found = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            if b"sk-parent-" + b"7f3a9" in f.read():
                found.append(pid)
    except OSError:
        pass
print("holders:", found)
'"#;
    let (scenario, workspace) = one_command_scenario(root.path(), hunt);
    let args = vec![
        "exec",
        "--scenario",
        scenario.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
        "--approvals",
        "dangerously-allow-all",
    ];
    // Root may read every process (CAP_SYS_PTRACE), so as root (CI, containers) airlock and its
    // command run as an ordinary user, which is what an agent's command is on a real machine.
    let binary = env!("CARGO_BIN_EXE_airlock");
    let as_root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut command = if as_root {
        let chown = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(root.path())
            .status()
            .unwrap();
        assert!(chown.success());
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", binary]);
        c
    } else {
        Command::new(binary)
    };
    command
        .args(&args)
        .current_dir(root.path())
        .env("OPENAI_API_KEY", "sk-parent-7f3a9");
    let out = scratch_env(&mut command, root.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: String = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "tool_output")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(printed, "holders: []\n");
}

#[test]
fn a_flood_streams_as_head_lines_then_kept_tails_with_counts_and_the_log_has_every_line() {
    let root = root();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let scenario = root.path().join("flood.json");
    let steps = serde_json::json!([
        {"calls": [{"tool": "bash", "args": {"command": "seq 1 300000"}}]},
        {"say": "done"}
    ]);
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "flood", "prompt": "flood", "steps": steps}).to_string(),
    )
    .unwrap();
    let run = exec(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
            "--approvals",
            "dangerously-allow-all",
        ],
        root.path(),
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let outputs = of_kind(&run.events, "tool_output");
    let text: String = outputs
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    let skipped: u64 = outputs
        .iter()
        .map(|e| e["skipped"].as_u64().unwrap_or(0))
        .sum();
    // Every line is either sent or counted as left out; the first and last lines are sent.
    assert_eq!(text.lines().count() as u64 + skipped, 300_000);
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(text.ends_with("299999\n300000\n"));
    assert!(skipped > 250_000, "only {skipped} lines were left out");
    // The full output is in the log the finished event names.
    let finished = of_kind(&run.events, "tool_finished");
    let log = finished[0]["log"].as_str().expect("the log path is given");
    let logged = std::fs::read_to_string(log).unwrap();
    assert_eq!(logged.lines().count(), 300_000);
    assert!(logged.ends_with("300000\n"));
}

/// `airlock exec --human ARGS`: what it printed on standard output and error.
fn human(args: &[&str], root: &Path, env: &[(&str, &str)]) -> (String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_airlock"));
    command
        .args(["exec", "--human"])
        .args(args)
        .envs(env.iter().copied());
    let out = scratch_env(&mut command, root).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_human_banner_says_the_model_approvals_workspace_mode_and_sandbox_truthfully() {
    let root = root();
    let (demo, _) = human(&[], root.path(), &[]);
    let lines: Vec<&str> = demo.lines().take(3).collect();
    assert!(
        lines[0].starts_with("airlock demo (offline, scripted model) (asks are denied"),
        "{demo}"
    );
    assert!(lines[1].ends_with("(a scratch copy)"), "{demo}");
    assert_eq!(lines[2], "mode default, sandbox workspace-write", "{demo}");

    // A real provider (unreachable here), allow-all, the user's own workspace, no key.
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let (real, stderr) = human(
        &[
            "--provider",
            "openai",
            "--model",
            "gpt-x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--approvals",
            "dangerously-allow-all",
            "--workspace",
            ws.to_str().unwrap(),
            "--sandbox",
            "network",
            "hi",
        ],
        root.path(),
        &[("OPENAI_API_KEY", "")],
    );
    let lines: Vec<&str> = real.lines().take(3).collect();
    assert!(
        lines[0].starts_with("airlock (openai: gpt-x) (asks are allowed once each"),
        "{real}"
    );
    assert!(
        !real.contains("demo") && !real.contains("scratch copy"),
        "{real}"
    );
    assert_eq!(lines[2], "mode default, sandbox network", "{real}");
    assert!(
        stderr.contains("no API key: $OPENAI_API_KEY is not set"),
        "{stderr}"
    );
    // The unreachable server is named once, with why it could not be reached.
    let all = format!("{real}{stderr}");
    assert_eq!(
        all.matches("127.0.0.1:9/v1/chat/completions").count(),
        1,
        "{all}"
    );
    assert!(all.contains("Connection refused"), "{all}");
}

#[test]
fn the_human_transcript_joins_writes_into_whole_lines_and_says_what_a_parked_call_waits_for() {
    let root = root();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let scenario = root.path().join("s.json");
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "h", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command":
                "printf 'a'; sleep 0.3; printf 'b\\nc'; sleep 0.3; printf 'd'"}}]},
            {"expect": ["ok"], "calls": [{"tool": "write_file", "args": {"path": "x.txt", "content": "x"}}]},
            {"expect": ["any"]}
        ]})
        .to_string(),
    )
    .unwrap();
    let (text, _) = human(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
            "--approvals",
            "park",
        ],
        root.path(),
        &[],
    );
    assert!(
        text.contains("\n  c1 │ ab\n  c1 │ cd\n■ c1 done, exit 0"),
        "{text}"
    );
    assert!(
        text.contains("‖ c2 write_file is parked: nothing of it ran"),
        "{text}"
    );
    assert!(text.contains("airlock approve "), "{text}");
    assert!(
        !text.contains("\"event\""),
        "JSON in the human transcript: {text}"
    );
}

#[test]
fn json_mode_sends_no_output_event_that_says_nothing() {
    // A command that prints nothing, one whose last line has no newline, and a flood that is
    // thinned: every `tool_output` event carries text or a count of lines left out.
    for command in ["true", "printf 'one\\ntwo'", "seq 1 20000"] {
        let root = root();
        let (output, run) = command_output(root.path(), command, &[]);
        let empty: Vec<&Value> = of_kind(&run.events, "tool_output")
            .into_iter()
            .filter(|e| e["text"] == "" && e["skipped"] == 0)
            .collect();
        assert!(empty.is_empty(), "{command}: {empty:?}");
        if command == "true" {
            assert_eq!(output, "", "{command}");
        } else {
            assert!(
                output.starts_with("one\ntwo") || output.starts_with("1\n2\n"),
                "{command}: {output}"
            );
        }
    }
}

/// The sub-agents scenario headless, allowing every request: each event says the agent it
/// belongs to, both sub-agents run and finish, and the session's agent gets both answers.
#[test]
fn exec_prints_every_event_with_its_agent_and_runs_the_sub_agents_to_the_end() {
    let root = root();
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/subagents.json");
    let run = exec(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--approvals",
            "dangerously-allow-all",
        ],
        root.path(),
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    // Every agent event names its agent (the opening `session` line is the run's own).
    assert!(
        run.events
            .iter()
            .filter(|e| e["event"] != "session")
            .all(|e| e["agent"].is_string()),
        "every event names its agent"
    );
    let started = of_kind(&run.events, "agent_started");
    // They start at the same time, in either order; their ids follow the order they were asked.
    let mut agents: Vec<_> = started
        .iter()
        .map(|e| {
            assert_eq!(e["agent"], e["sub_agent"]["id"]);
            assert_eq!(e["sub_agent"]["parent"], "main");
            (
                e["sub_agent"]["id"].as_str().unwrap(),
                e["sub_agent"]["task"].as_str().unwrap(),
            )
        })
        .collect();
    agents.sort();
    assert_eq!(
        agents,
        vec![("a1", "run the tests"), ("a2", "count the lines of code")]
    );
    // A sub-agent's command is its own: its events carry its id, its call id starts with it.
    for (id, command) in [("a1", "for part in"), ("a2", "for f in *.py")] {
        let tool_started: Vec<_> = of_kind(&run.events, "tool_started")
            .into_iter()
            .filter(|e| e["agent"] == id)
            .collect();
        assert_eq!(tool_started.len(), 1, "{id}");
        assert!(tool_started[0]["title"].as_str().unwrap().contains(command));
        assert!(
            tool_started[0]["call_id"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{id}-"))
        );
    }
    let finished = of_kind(&run.events, "agent_finished");
    assert_eq!(finished.len(), 2);
    assert!(finished.iter().all(|e| e["status"] == "done"));
    let last = run
        .events
        .iter()
        .rev()
        .find(|e| e["event"] == "turn_finished")
        .unwrap();
    assert_eq!(last["agent"], "main");
    assert_eq!(last["outcome"], "completed");
}

/// A `notify` that is not a method, or an `[agents]` key that does not exist, stops airlock
/// before anything runs, naming the file and what to write instead.
#[test]
fn a_bad_notify_or_agents_setting_is_an_error_naming_the_file() {
    let root = root();
    let config = root.path().join("home/.config/airlock");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "notify = \"loud\"\n").unwrap();
    let run = exec(&["--approvals", "deny"], root.path());
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("config.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("\"loud\""), "{}", run.stderr);
    assert!(
        run.stderr.contains("auto, osc9, osc777, bell, off"),
        "{}",
        run.stderr
    );
    assert!(run.events.is_empty());
    std::fs::write(config.join("config.toml"), "[agents]\nmax_deep = 3\n").unwrap();
    let run = exec(&["--approvals", "deny"], root.path());
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("max_deep"), "{}", run.stderr);
    assert!(run.stderr.contains("config.toml"), "{}", run.stderr);
}

/// A command runs a little below airlock's priority (and what it starts inherits that), so a
/// flood of commands never starves the cockpit's keys and frames.
#[test]
fn a_command_runs_five_steps_below_airlocks_cpu_priority() {
    let root = root();
    let (output, _) = command_output(root.path(), "nice; sh -c nice", &[]);
    // Relative to this test's own priority (a CI runner may itself run lowered).
    let own = rustix::process::getpriority_process(None).unwrap();
    let expected = (own + 5).min(19);
    assert_eq!(output, format!("{expected}\n{expected}\n"));
}
