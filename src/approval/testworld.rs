//! A real workspace, home and state directory on disk for policy and gate tests.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::approval::policy::{Mode, Policy};
use crate::approval::rules::Rules;
use crate::facts::catalog::ToolCatalog;
use crate::facts::paths::PathContext;
use crate::protocol::Verdict;

pub struct World {
    pub _dir: tempfile::TempDir,
    pub policy: Policy,
}

pub fn world_with(mode: Mode, rules: Rules) -> World {
    // Not under /tmp: the temporary directory is a place of its own to the policy.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-worlds");
    std::fs::create_dir_all(&root).unwrap();
    let dir = tempfile::tempdir_in(&root).unwrap();
    let ws = dir.path().join("ws");
    let home = dir.path().join("home");
    let state = dir.path().join("state");
    for d in [&ws, &home, &state] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(ws.join("src/tokenizer.rs"), "// tokens\n").unwrap();
    std::fs::write(ws.join(".env"), "KEY=1\n").unwrap();
    std::fs::write(ws.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(ws.join("big.txt"), "line\n".repeat(1000)).unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("etc-link")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), ws.join("keys")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(
        home.join(".ssh/id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("other-project")).unwrap();
    let mut paths = PathContext::new(&ws, &home, &state).unwrap();
    // The world's own scratch directory stands in for /tmp, wherever the checkout lives.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    paths.temp_dirs = vec![tmp.canonicalize().unwrap()];
    World {
        _dir: dir,
        policy: Policy::new(mode, rules, paths, ToolCatalog::builtin()),
    }
}

pub fn world() -> World {
    world_with(Mode::Default, Rules::empty())
}

impl World {
    /// Runs a bash command through the policy; `{tmp}` stands for the world's temp directory,
    /// `{state}` for airlock's state directory.
    pub fn bash(&self, command: &str) -> Verdict {
        let command = command
            .replace("{tmp}", &self.tmp().display().to_string())
            .replace(
                "{state}",
                &self.policy.paths.state_dir.display().to_string(),
            );
        let command = command.as_str();
        self.policy
            .assess("bash", &json!({ "command": command }))
            .verdict
    }

    pub fn tool(&self, tool: &str, args: Value) -> Verdict {
        self.policy.assess(tool, &args).verdict
    }

    pub fn tmp(&self) -> PathBuf {
        self.policy.paths.temp_dirs[0].clone()
    }

    pub fn outside(&self) -> PathBuf {
        self.policy
            .paths
            .workspace
            .parent()
            .unwrap()
            .join("other-project")
    }
}
