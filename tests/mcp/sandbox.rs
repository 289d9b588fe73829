//! Every server airlock starts runs in a sandbox of its own (issue 26): the real npm filesystem
//! server, told it may use the whole home, still cannot write outside the workspace or read a
//! planted key, and the model reads why; `off` is taken only from the user's own config; where
//! no sandbox can be made, a server is not started unless the user said `off`.

use super::*;

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted-server-key\n";

impl World {
    /// Only the filesystem server, allowed (by its own arguments) the workspace and the whole
    /// home, with `extra` config lines.
    fn fs_over_home(&self, extra: &str) {
        let config = format!(
            "[mcp_servers.fs]\ncommand = {:?}\nargs = [{:?}, {:?}]\n{extra}",
            npm_bin("mcp-server-filesystem"),
            self.ws(),
            self.path("home"),
        );
        std::fs::write(self.path("home/.config/airlock/config.toml"), config).unwrap();
    }

    fn plant_key(&self) -> PathBuf {
        let key = self.path("home/.ssh/id_ed25519");
        std::fs::create_dir_all(key.parent().unwrap()).unwrap();
        std::fs::write(&key, KEY).unwrap();
        key
    }
}

fn result_text(events: &[Value], call: &str) -> String {
    events
        .iter()
        .filter(|e| e["call_id"] == call)
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_filesystem_server_in_its_sandbox_writes_the_workspace_but_not_outside_nor_reads_a_key() {
    let w = World::new();
    w.fs_over_home("");
    let key = w.plant_key();
    let outside = w.path("home/outside.txt");
    let inside = w.ws().join("inside.txt");
    let events = w.exec(
        json!([
            {"calls": [
                {"tool": "fs__write_file", "args": {"path": inside, "content": "in\n"}},
                {"tool": "fs__write_file", "args": {"path": outside, "content": "out\n"}},
                {"tool": "fs__read_text_file", "args": {"path": key}},
            ]},
            {"expect": ["ok", "failed", "failed"]},
        ]),
        &["--approvals", "dangerously-allow-all"],
    );
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "in\n");
    assert!(!outside.exists(), "the server wrote outside the workspace");
    let all = events
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !all.contains("planted-server-key"),
        "the key reached the model:\n{all}"
    );
    for call in ["c2", "c3"] {
        let text = result_text(&events, call);
        assert!(
            text.contains("[sandbox] MCP server `fs` runs in the sandbox `workspace-write`"),
            "{call} does not say the sandbox refused it:\n{text}"
        );
    }
    assert!(result_text(&events, "c2").contains("outside what `workspace-write` may write"));
    assert!(result_text(&events, "c3").contains("a protected place"));
}

#[test]
fn mcp_list_says_where_each_server_runs() {
    let w = World::new();
    let listed = w.list();
    assert!(
        listed.contains(
            "fs: ready\n  sandbox workspace-write (writes only the workspace and temp, no network)"
        ),
        "{listed}"
    );
    w.fs_over_home("sandbox = \"read-only\"\n");
    let listed = w.list();
    assert!(listed.contains("  sandbox read-only"), "{listed}");
}

#[test]
fn a_read_only_server_cannot_write_even_the_workspace() {
    let w = World::new();
    w.fs_over_home("sandbox = \"read-only\"\n");
    let inside = w.ws().join("inside.txt");
    let events = w.exec(
        json!([
            {"calls": [{"tool": "fs__write_file", "args": {"path": inside, "content": "in\n"}}]},
            {"expect": ["failed"]},
        ]),
        &["--approvals", "dangerously-allow-all"],
    );
    assert!(!inside.exists());
    assert!(result_text(&events, "c1").contains("the sandbox `read-only`"));
}

#[test]
fn off_runs_a_server_unconfined_only_when_the_users_own_config_says_so() {
    let w = World::new();
    w.fs_over_home("sandbox = \"off\"\n");
    let listed = w.list();
    assert!(listed.contains("fs: ready"), "{listed}");
    assert!(
        listed.contains("NO SANDBOX: `sandbox = \"off\"` in "),
        "{listed}"
    );
    let outside = w.path("home/outside.txt");
    let events = w.exec(
        json!([
            {"calls": [{"tool": "fs__write_file", "args": {"path": outside, "content": "out\n"}}]},
            {"expect": ["ok"]},
        ]),
        &["--approvals", "dangerously-allow-all"],
    );
    assert!(outside.exists(), "{events:?}");
    // The modal says so before anyone approves.
    let asked = parked(
        &w,
        json!({"tool": "fs__write_file", "args": {"path": outside, "content": "again\n"}}),
    );
    let confinement = asked["preview"]["confinement"].as_str().unwrap();
    assert!(confinement.starts_with("NO SANDBOX"), "{confinement}");

    // The same from a trusted project's config: not started, and the list says why.
    std::fs::write(w.path("home/.config/airlock/config.toml"), "").unwrap();
    std::fs::create_dir_all(w.ws().join(".airlock")).unwrap();
    let marker = w.ws().join("started");
    std::fs::write(
        w.ws().join(".airlock/config.toml"),
        format!(
            "[mcp_servers.wide]\ncommand = \"sh\"\nargs = [\"-c\", \"touch {}\"]\nsandbox = \"off\"\n",
            marker.display()
        ),
    )
    .unwrap();
    let ws = w.ws();
    let out = w.airlock(&["trust", "--workspace", ws.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = w.airlock(&["mcp", "list", "--workspace", ws.to_str().unwrap()]);
    // A server that failed makes the list fail too.
    assert_eq!(out.status.code(), Some(1));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("1 server(s) failed"), "{listed}");
    assert!(
        listed.contains("wide: failed: `sandbox = \"off\"` in [mcp_servers.wide]")
            && listed.contains("is not taken from a project's config"),
        "{listed}"
    );
    assert!(
        !marker.exists(),
        "a project's config started a server with no sandbox"
    );
}

#[test]
fn without_landlock_a_server_is_not_started_unless_the_user_said_off() {
    let w = World::new();
    w.fs_over_home("");
    let ws = w.ws();
    let listed = |w: &World| {
        let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .args(["mcp", "list", "--workspace", ws.to_str().unwrap()])
            .env("HOME", w.path("home"))
            .env("AIRLOCK_HOME", w.path("state"))
            .env("TMPDIR", w.path("tmp"))
            .env("XDG_CONFIG_HOME", w.path("home/.config"))
            .env("AIRLOCK_SANDBOX_PRETEND_NO_LANDLOCK", "1")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = listed(&w);
    assert!(
        text.contains("fs: failed: it cannot be started in its sandbox `workspace-write`")
            && text.contains("set `sandbox = \"off\"` in [mcp_servers.fs] of your own config"),
        "{text}"
    );
    w.fs_over_home("sandbox = \"off\"\n");
    assert!(listed(&w).contains("fs: ready"));
}

/// Runs one call with `--approvals park`; the event that parked it.
fn parked(w: &World, call: Value) -> Value {
    parked_then(w, call, json!({"expect": ["any"]}))
}

/// `parked`, with `then` as the scenario's step after the call.
fn parked_then(w: &World, call: Value, then: Value) -> Value {
    let scenario = w.path("scenario.json");
    let text = json!({"name": "mcp", "prompt": "go", "steps": [{"calls": [call]}, then]});
    std::fs::write(&scenario, text.to_string()).unwrap();
    let ws = w.ws();
    let out = w.airlock(&[
        "exec",
        "--scenario",
        scenario.to_str().unwrap(),
        "--workspace",
        ws.to_str().unwrap(),
        "--approvals",
        "park",
    ]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "parked")
        .unwrap_or_else(|| panic!("nothing parked: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_filesystem_write_or_edit_asks_with_its_change_as_a_diff_and_the_arguments_below() {
    let w = World::new();
    let notes = w.ws().join("notes.md");
    std::fs::write(&notes, "one\ntwo\nthree\n").unwrap();
    let write = parked(
        &w,
        json!({"tool": "fs__write_file", "args": {"path": notes, "content": "one\nTWO\nthree\n"}}),
    );
    let edit = parked(
        &w,
        json!({"tool": "fs__edit_file", "args": {"path": notes, "edits": [{"oldText": "three", "newText": "3"}]}}),
    );
    for (event, change) in [(&write, "-two\n+TWO\n"), (&edit, "-three\n+3\n")] {
        let preview = &event["preview"];
        assert_eq!(preview["change"]["kind"], "diff", "{preview}");
        let unified = preview["change"]["unified"].as_str().unwrap();
        assert!(unified.contains(change), "{unified}");
        let arguments = preview["arguments"].to_string();
        assert!(arguments.contains("notes.md"), "{arguments}");
        assert!(
            preview["confinement"]
                .as_str()
                .unwrap()
                .starts_with("sandbox workspace-write"),
            "{preview}"
        );
    }
    // Nothing ran: the file is as it was.
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "one\ntwo\nthree\n"
    );

    // Outside the workspace there is no diff, and the modal says why.
    let outside = parked(
        &w,
        json!({"tool": "fs__write_file", "args": {"path": w.path("home/x.txt"), "content": "x"}}),
    );
    let change = &outside["preview"]["change"];
    assert_eq!(change["kind"], "error", "{change}");
    assert!(
        change["message"]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );

    // The user's own table replaces the known one: `file_tools = {}` turns the diff off.
    let config = std::fs::read_to_string(w.path("home/.config/airlock/config.toml")).unwrap();
    let config = config.replace(
        "[mcp_servers.rug]",
        "[mcp_servers.fs.file_tools]\n\n[mcp_servers.rug]",
    );
    std::fs::write(w.path("home/.config/airlock/config.toml"), config).unwrap();
    let plain = parked(
        &w,
        json!({"tool": "fs__write_file", "args": {"path": notes, "content": "x"}}),
    );
    assert!(
        plain["preview"].get("change").is_none(),
        "{}",
        plain["preview"]
    );
}

/// Issue 26's per-hunk review, with the real filesystem server: a whole-file write parked, its
/// hunks numbered by `approvals list`, approved with only hunks 1 and 3: resumed, the server
/// writes exactly those, and the model is told hunk 2 was dropped. An edit call's change is
/// answered whole.
#[test]
fn a_filesystem_write_approved_with_some_hunks_writes_exactly_those() {
    let w = World::new();
    let notes = w.ws().join("notes.md");
    let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "LINE 2\n")
        .replace("line 10\n", "LINE 10\n")
        .replace("line 18\n", "LINE 18\n");
    std::fs::write(&notes, &old).unwrap();
    let parked = parked_then(
        &w,
        json!({"tool": "fs__write_file", "args": {"path": notes, "content": new}}),
        json!({"say": "done", "expect": ["ok"], "expect_seen": ["hunk 2 dropped", "+LINE 10"]}),
    );
    assert_eq!(
        parked["preview"]["whole_file"], true,
        "{}",
        parked["preview"]
    );
    let (run, code) = (
        parked["run"].as_str().unwrap(),
        parked["code"].as_str().unwrap(),
    );
    let listed = String::from_utf8_lossy(&w.airlock(&["approvals", "list"]).stdout).to_string();
    assert!(listed.contains("[hunk 3]"), "{listed}");
    let approved = w.airlock(&["approve", code, "--hunks", "1,3"]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let resumed = w.airlock(&["resume", run]);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&resumed.stdout),
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        old.replace("line 2\n", "LINE 2\n")
            .replace("line 18\n", "LINE 18\n")
    );
}
