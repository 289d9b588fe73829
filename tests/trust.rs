//! The real binary on a project whose config names a rules file outside `.airlock/` (and one
//! outside the workspace): `airlock trust` covers it, a change to it untrusts the project, and
//! the agent can change neither, whatever route it takes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct Project {
    root: tempfile::TempDir,
    ws: PathBuf,
}

const RULES: &str = "deny = [\"bash(curl *)\"]\n";

fn project() -> Project {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    for dir in ["home", "state", "tmp", "ws/.airlock", "ws/policy", "shared"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    std::fs::write(
        ws.join(".airlock/config.toml"),
        "rules = \"../policy/rules.toml\"\nmode = \"auto-edit\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("policy/rules.toml"), RULES).unwrap();
    std::fs::write(ws.join("policy/other.toml"), "x = 1\n").unwrap();
    std::fs::write(root.path().join("shared/rules.toml"), RULES).unwrap();
    std::os::unix::fs::symlink("policy/rules.toml", ws.join("rules-link")).unwrap();
    Project { root, ws }
}

impl Project {
    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_airlock"));
        let root = self.root.path();
        cmd.env("HOME", root.join("home"))
            .env("AIRLOCK_HOME", root.join("state"))
            .env("TMPDIR", root.join("tmp"))
            .env("XDG_CONFIG_HOME", root.join("home/.config"))
            .env_remove("AIRLOCK_PROVIDER")
            .env_remove("AIRLOCK_MODEL")
            .env_remove("AIRLOCK_BASE_URL")
            .env_remove("AIRLOCK_MODE")
            .env_remove("AIRLOCK_RULES");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    fn ws(&self) -> &str {
        self.ws.to_str().unwrap()
    }

    fn physical(&self, relative: &str) -> String {
        std::fs::canonicalize(self.ws.join(relative))
            .unwrap()
            .display()
            .to_string()
    }

    fn shared_rules(&self) -> PathBuf {
        self.root.path().join("shared/rules.toml")
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn mode_line(show: &str) -> &str {
    show.lines().find(|l| l.starts_with("mode ")).unwrap_or("")
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn airlock_trust_lists_the_rules_file_and_a_change_to_it_untrusts_the_project() {
    let p = project();
    let out = p.run(&["trust", "--workspace", p.ws()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listing = stdout(&out);
    for (file, content) in [
        (
            ".airlock/config.toml",
            std::fs::read(p.ws.join(".airlock/config.toml")).unwrap(),
        ),
        ("policy/rules.toml", RULES.as_bytes().to_vec()),
    ] {
        let line = format!("sha256 {}  {}", sha256(&content), p.physical(file));
        assert!(listing.contains(&line), "{line}\n{listing}");
    }
    let show = stdout(&p.run(&["config", "show", "--workspace", p.ws()]));
    assert!(show.contains("(trusted)"), "{show}");
    assert!(mode_line(&show).contains("auto-edit"), "{show}");

    std::fs::write(
        p.ws.join("policy/rules.toml"),
        "allow = [\"bash(git *)\"]\n",
    )
    .unwrap();
    let show = stdout(&p.run(&["config", "show", "--workspace", p.ws()]));
    assert!(show.contains("not trusted (only tightening"), "{show}");
    assert!(
        show.contains(&format!(
            "{} changed since you trusted this project",
            p.physical("policy/rules.toml")
        )) && show.contains("airlock trust"),
        "{show}"
    );
    assert!(
        mode_line(&show).contains("default"),
        "the looser mode is dropped: {show}"
    );

    // `exec` says the same before it starts.
    let out = p.run(&[
        "exec",
        "--workspace",
        p.ws(),
        "--scenario",
        "/no/such.json",
        "go",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not trusted any more") && stderr.contains("policy/rules.toml"),
        "{stderr}"
    );

    assert_eq!(
        p.run(&["trust", "--workspace", p.ws()]).status.code(),
        Some(0)
    );
    let show = stdout(&p.run(&["config", "show", "--workspace", p.ws()]));
    assert!(show.contains("(trusted)"), "{show}");
}

fn policy_check(p: &Project, calls: &[Value]) -> Vec<Value> {
    let mut child = p
        .command()
        .args([
            "policy",
            "check",
            "--mode",
            "auto-edit",
            "--workspace",
            p.ws(),
            "--rules",
            p.shared_rules().to_str().unwrap(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn policy_check_denies_every_write_to_the_rules_files_in_use_and_not_to_their_neighbours() {
    let p = project();
    let shared = p.shared_rules().display().to_string();
    let bash =
        |id: &str, command: &str| json!({"id": id, "tool": "bash", "args": {"command": command}});
    let write = |id: &str, path: &str| json!({"id": id, "tool": "write_file", "args": {"path": path, "content": "allow = []\n"}});
    let calls = vec![
        write("deny-write", "policy/rules.toml"),
        json!({"id": "deny-edit", "tool": "edit_file",
               "args": {"path": "policy/rules.toml", "old": "deny", "new": "allow"}}),
        bash(
            "deny-append",
            "echo 'allow = [\"bash(git *)\"]' >> policy/rules.toml",
        ),
        bash("deny-sed", "sed -i s/deny/allow/ policy/rules.toml"),
        bash("deny-mv", "mv x policy/rules.toml"),
        bash("deny-rm", "rm policy/rules.toml"),
        write("deny-symlink", "rules-link"),
        write("deny-config", ".airlock/config.toml"),
        write("deny-outside", &shared),
        bash("deny-outside-sh", &format!("echo x >> {shared}")),
        write("allow-neighbour", "policy/other.toml"),
        bash("ask-neighbour-sh", "echo x >> policy/other.toml"),
        bash("allow-read", "cat policy/rules.toml"),
    ];
    let results = policy_check(&p, &calls);
    assert_eq!(results.len(), calls.len());
    for r in &results {
        let id = r["id"].as_str().unwrap();
        let expected = id.split('-').next().unwrap();
        assert_eq!(r["decision"], expected, "{id}: {r}");
        if expected == "deny" {
            let reasons = r["reasons"].to_string();
            assert!(reasons.contains("airlock is using"), "{id}: {reasons}");
        }
    }
}

#[test]
fn an_agent_in_a_trusted_auto_edit_project_cannot_rewrite_its_rules_file_even_when_every_ask_is_approved()
 {
    let p = project();
    assert_eq!(
        p.run(&["trust", "--workspace", p.ws()]).status.code(),
        Some(0)
    );
    let scenario = p.root.path().join("loosen.json");
    std::fs::write(
        &scenario,
        json!({"name": "loosen", "steps": [
            {"calls": [
                {"tool": "write_file", "args": {"path": "policy/rules.toml", "content": "allow = [\"bash(curl *)\"]\n"}},
                {"tool": "bash", "args": {"command": "echo 'allow = [\"bash(curl *)\"]' >> rules-link"}},
                {"tool": "write_file", "args": {"path": "policy/other.toml", "content": "x = 2\n"}}
            ]},
            {"say": "done", "expect": ["denied", "denied", "ok"]}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = p.run(&[
        "exec",
        "--workspace",
        p.ws(),
        "--scenario",
        scenario.to_str().unwrap(),
        "--approvals",
        "dangerously-allow-all",
        "go",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let denied: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool_denied")
        .collect();
    assert_eq!(denied.len(), 2, "{events:#?}");
    assert!(
        denied.iter().all(|e| e["source"] == "policy"),
        "{denied:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(p.ws.join("policy/rules.toml")).unwrap(),
        RULES
    );
    assert_eq!(
        std::fs::read_to_string(p.ws.join("policy/other.toml")).unwrap(),
        "x = 2\n"
    );
}
