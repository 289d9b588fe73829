//! A scratch world for driving the real binary: a workspace, a home, a state directory and a
//! scenario file, all in one temp directory.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub mod page;

pub struct World {
    pub dir: tempfile::TempDir,
}

impl World {
    pub fn new(scenario: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["ws", "home", "state"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("s.json"), scenario).unwrap();
        std::fs::write(dir.path().join("ws/calc.py"), "return a - b\n").unwrap();
        World { dir }
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// The binary, set up to run in this world from `cwd`.
    pub fn command(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_airlock"));
        command
            .current_dir(cwd)
            .args(args)
            .env("HOME", self.path("home"))
            .env("AIRLOCK_HOME", self.path("state"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env_remove("AIRLOCK_PROVIDER")
            .envs(env.iter().copied());
        command
    }

    pub fn airlock(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.airlock_in(self.dir.path(), args, env)
    }

    /// `airlock exec` of the world's scenario (`s.json`) in its workspace (`ws`), with
    /// `--approvals approvals`, then `extra`.
    #[allow(dead_code)]
    pub fn exec(&self, approvals: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        self.airlock(&exec_args(approvals, extra), env)
    }

    pub fn airlock_in(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.command(cwd, args, env).output().unwrap()
    }

    /// Writes `scripts` into `hooks/` in the user's config directory, and `config` as the
    /// user config.
    #[allow(dead_code)]
    pub fn user_hooks(&self, scripts: &[(&str, &str)], config: &str) {
        let dir = self.path("home/.config/airlock");
        std::fs::create_dir_all(dir.join("hooks")).unwrap();
        for (name, script) in scripts {
            std::fs::write(dir.join("hooks").join(name), script).unwrap();
        }
        std::fs::write(dir.join("config.toml"), config).unwrap();
    }

    /// `airlock hooks test EVENT --workspace ws`, given `input` on standard input.
    #[allow(dead_code)]
    pub fn hooks_test(&self, event: &str, input: &str) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .command(
                self.dir.path(),
                &["hooks", "test", event, "--workspace", "ws"],
                &[],
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    /// Runs the scenario with `--approvals park`; returns (run id, code).
    pub fn park(&self, env: &[(&str, &str)]) -> (String, String) {
        self.park_with(&[], env)
    }

    /// `park`, with more arguments for `exec`.
    pub fn park_with(&self, extra: &[&str], env: &[(&str, &str)]) -> (String, String) {
        let out = self.exec("park", extra, env);
        assert_eq!(
            out.status.code(),
            Some(5),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let parked: Value = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["event"] == "parked")
            .expect("a parked event");
        (
            parked["run"].as_str().unwrap().into(),
            parked["code"].as_str().unwrap().into(),
        )
    }

    /// The cockpit with `args`, run from this world's directory, as a shell command for tmux:
    /// it says `AIRLOCK-ENDED` when it stops and writes its exit status to `exit-status`.
    pub fn cockpit(&self, args: &str) -> String {
        format!(
            "cd {dir} && env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES HOME={dir}/home XDG_CONFIG_HOME={dir}/home/.config AIRLOCK_HOME={dir}/state AIRLOCK_EXIT_STATUS_FILE={dir}/exit-status {bin} {args}; echo AIRLOCK-ENDED; sleep 60",
            dir = self.dir.path().display(),
            bin = env!("CARGO_BIN_EXE_airlock"),
        )
    }

    pub fn events(out: &Output) -> Vec<Value> {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Runs one SQL statement on the state database, as someone editing it by hand would;
    /// returns how many rows changed.
    pub fn sql(&self, statement: &str) -> usize {
        rusqlite::Connection::open(self.path("state/airlock.db"))
            .unwrap()
            .execute(statement, [])
            .unwrap()
    }

    /// One value from the state database.
    pub fn query(&self, statement: &str) -> String {
        rusqlite::Connection::open(self.path("state/airlock.db"))
            .unwrap()
            .query_row(statement, [], |r| r.get(0))
            .unwrap()
    }
}

/// The arguments of `airlock exec` of a world's scenario (`s.json`) in its workspace (`ws`),
/// with `--approvals approvals`, then `extra`.
#[allow(dead_code)]
pub fn exec_args<'a>(approvals: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
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
    args
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
