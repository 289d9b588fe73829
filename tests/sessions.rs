//! Cockpit sessions that survive their process: the real binary in tmux, killed with SIGKILL in
//! the middle of a turn, reopened with `airlock --resume`: the conversation is back, a waiting
//! request is asked again with the code printed before, an answer given with that code while no
//! cockpit ran is taken, and a call that was running is reported interrupted, never run again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/tmux.rs"]
mod tmux;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tmux::Tmux;

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "state", "tmp", "ws"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        World { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn env(&self) -> String {
        format!(
            "env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES XDG_CONFIG_HOME={home}/.config HOME={home} AIRLOCK_HOME={state} TMPDIR={tmp} AIRLOCK_EXIT_STATUS_FILE={status}",
            home = self.path("home").display(),
            state = self.path("state").display(),
            tmp = self.path("tmp").display(),
            status = self.path("exit-status").display(),
        )
    }

    /// The cockpit with `args`, as a shell command for tmux.
    fn cockpit(&self, args: &str) -> String {
        format!(
            "{} {} {args}; echo AIRLOCK-ENDED; sleep 60",
            self.env(),
            env!("CARGO_BIN_EXE_airlock")
        )
    }

    /// A subcommand, run to its end; its stdout and stderr.
    fn airlock(&self, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .args(args)
            .env_remove("AIRLOCK_PROVIDER")
            .env_remove("AIRLOCK_MODEL")
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env("AIRLOCK_HOME", self.path("state"))
            .env("TMPDIR", self.path("tmp"))
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// Kills the cockpit `airlock sessions` says is open, with SIGKILL, and waits until it is
    /// gone.
    fn kill_the_open_cockpit(&self) {
        let listing = self.airlock(&["sessions"]);
        let pid: i32 = listing
            .split("open (process ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("no open cockpit in:\n{listing}"));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Path::new(&format!("/proc/{pid}")).exists() {
            assert!(Instant::now() < deadline, "process {pid} did not die");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The demo's calc.py in the (scratch) workspace of the session `airlock sessions` lists.
fn calc_in_the_session_listed(listing: &str) -> String {
    let workspace = listing
        .lines()
        .find_map(|l| l.trim().strip_prefix("in "))
        .unwrap_or_else(|| panic!("no workspace in:\n{listing}"));
    std::fs::read_to_string(Path::new(workspace).join("calc.py")).unwrap()
}

/// The one-time code the modal shows.
fn code_on(screen: &str) -> String {
    screen
        .split("airlock approve ")
        .nth(1)
        .map(|rest| rest.chars().take(9).collect())
        .unwrap_or_else(|| panic!("no code on screen:\n{screen}"))
}

#[test]
fn a_cockpit_killed_at_its_approvals_reopens_with_the_same_codes_and_finishes_the_demo() {
    let world = World::new();
    let tmux = Tmux::start("sessions", 120, 40, &world.cockpit(""));
    let screen = tmux.wait_for("wants to run edit_file");
    let edit_code = code_on(&tmux.wait_for("airlock approve "));
    assert!(screen.contains("edit_file"), "{screen}");

    world.kill_the_open_cockpit();
    let listing = world.airlock(&["sessions"]);
    assert!(
        listing.contains("stopped mid-turn, 1 request waiting"),
        "{listing}"
    );
    assert!(
        !listing.contains(&edit_code),
        "the listing must never show a code (an agent could read it):\n{listing}"
    );

    // Reopened: the same question, with the same code; the conversation before it is back.
    tmux.open(120, 40, &world.cockpit("--resume"));
    tmux.wait_for("wants to run edit_file");
    let screen = tmux.wait_for("airlock approve ");
    assert_eq!(code_on(&screen), edit_code, "{screen}");
    tmux.wait_until_armed("wants to run edit_file");
    tmux.keys("y");

    // The test run asks next; kill the cockpit there and answer with its code from outside.
    tmux.wait_for("wants to run bash");
    let bash_code = code_on(&tmux.wait_for("airlock approve "));
    assert_ne!(bash_code, edit_code);
    world.kill_the_open_cockpit();
    let answered = world.airlock(&["approve", &bash_code]);
    assert!(
        answered.contains("not running; reopen it with: airlock --resume"),
        "{answered}"
    );

    // Reopened again: the answer given while no cockpit ran is taken; the demo goes on to its
    // end, with the conversation of the first process still there.
    tmux.open(120, 40, &world.cockpit("--resume"));
    tmux.wait_for("answered by a one-time code from another terminal");
    let screen = tmux.wait_for("Done. `add`");
    assert!(screen.contains("c6"), "{screen}");
    // The turn is over (the status bar's hints are back) before quitting without a question.
    tmux.wait_for("· Enter send");
    tmux.keys("C-d");
    let screen = tmux.wait_for("AIRLOCK-ENDED");
    assert!(
        screen.contains("kept; reopen it with: airlock --resume"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(world.path("exit-status")).unwrap(),
        "0\n"
    );
    let listing = world.airlock(&["sessions"]);
    assert!(listing.contains("quit between turns"), "{listing}");
    // The fix was made once, in the scratch workspace the session started with.
    let calc = calc_in_the_session_listed(&listing);
    assert_eq!(calc.matches("return a + b").count(), 1, "{calc}");
}

#[test]
fn a_call_running_when_the_cockpit_was_killed_is_reported_interrupted_and_never_run_again() {
    let world = World::new();
    std::fs::write(
        world.path("s.json"),
        serde_json::json!({"name": "slow", "prompt": "run the slow thing", "steps": [
            {"say": "Starting it.", "calls": [
                {"tool": "bash", "args": {"command": "echo ran >> marker; sleep 20"}}
            ]},
            {"say": "It was interrupted, so I will not trust its result.", "expect": ["failed"]}
        ]})
        .to_string(),
    )
    .unwrap();
    let args = format!(
        "--scenario {} --workspace {}",
        world.path("s.json").display(),
        world.path("ws").display()
    );
    let tmux = Tmux::start("running", 120, 40, &world.cockpit(&args));
    tmux.wait_until_armed("wants to run bash");
    tmux.keys("y");
    tmux.wait_for("running");
    let marker = world.path("ws/marker");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    world.kill_the_open_cockpit();

    tmux.open(120, 40, &world.cockpit("--resume"));
    let screen = tmux.wait_for("I will not trust its result");
    assert!(
        screen.contains("was running when airlock stopped"),
        "{screen}"
    );
    assert!(screen.contains("Starting it."), "{screen}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ran\n");
    // What it left running was stopped when the session reopened: its launchers (whose
    // arguments hold the command) and the `sleep 20` bash became.
    let ws = std::fs::canonicalize(world.path("ws")).unwrap();
    let leftover = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let sleeping_here = cmdline == b"sleep\x0020\x00"
            && std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd == ws);
        sleeping_here
            || cmdline
                .windows(24)
                .any(|w| w == b"echo ran >> marker; slee")
    });
    assert!(!leftover, "the interrupted command is still running");
}

#[test]
fn a_request_parked_from_the_modal_is_approved_after_a_quit_and_the_session_goes_on() {
    let world = World::new();
    let tmux = Tmux::start("parked", 120, 40, &world.cockpit(""));
    tmux.wait_for("wants to run edit_file");
    let code = code_on(&tmux.wait_for("airlock approve "));
    tmux.wait_until_armed("wants to run edit_file");
    tmux.keys("p");
    let screen = tmux.wait_for("reopens this session and goes on");
    assert!(
        screen.contains(&format!("`airlock deny {code}`")),
        "{screen}"
    );
    // The turn still waits for that answer, so quitting asks first.
    tmux.keys("C-d");
    tmux.wait_for("quit?");
    tmux.keys("y");
    tmux.wait_for("AIRLOCK-ENDED");
    let listing = world.airlock(&["sessions"]);
    assert!(
        listing.contains("quit mid-turn, 1 request waiting"),
        "{listing}"
    );

    // Later, in a terminal: approve it and go on, in one command.
    tmux.open(
        120,
        40,
        &format!(
            "{} {} approve {code} --resume; echo AIRLOCK-ENDED; sleep 60",
            world.env(),
            env!("CARGO_BIN_EXE_airlock")
        ),
    );
    tmux.wait_for("answered by a one-time code from another terminal");
    tmux.wait_for("wants to run bash");
    let calc = calc_in_the_session_listed(&listing);
    assert!(calc.contains("return a + b"), "{calc}");
}

#[test]
fn a_session_whose_rules_changed_while_it_was_closed_reopens_only_once_the_person_confirms() {
    let world = World::new();
    std::fs::write(world.path("rules.toml"), "deny = [\"bash(curl *)\"]\n").unwrap();
    let rules = format!("--rules {}", world.path("rules.toml").display());
    let tmux = Tmux::start("policy", 120, 40, &world.cockpit(&rules));
    tmux.wait_for("wants to run edit_file");
    world.kill_the_open_cockpit();
    std::fs::write(world.path("rules.toml"), "allow = [\"bash(curl *)\"]\n").unwrap();

    tmux.open(120, 40, &world.cockpit("--resume"));
    let screen = tmux.wait_for("AIRLOCK-ENDED");
    assert!(
        screen.contains("changed since session") && screen.contains("rules.toml"),
        "{screen}"
    );
    assert!(screen.contains("--accept-changed-policy"), "{screen}");
    assert!(
        world.airlock(&["sessions"]).contains("stopped mid-turn"),
        "the session was not taken"
    );

    tmux.open(120, 40, &world.cockpit("--resume --accept-changed-policy"));
    tmux.wait_for("wants to run edit_file");
}

/// A command a person edited, then parked from the modal and left: after a quit, `airlock
/// approve CODE --resume` (the code the changed call showed) reopens the session and the
/// command that runs is the edited one.
#[test]
fn an_edited_command_parked_from_the_modal_runs_as_edited_after_a_quit() {
    let world = World::new();
    let scenario = world.path("s.json");
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "edit", "prompt": "go", "steps": [
            {"calls": [{"tool": "bash", "args": {"command": "echo proposed > made.txt"}}]},
            {"say": "all done"}
        ]})
        .to_string(),
    )
    .unwrap();
    let args = format!(
        "--scenario {} --workspace {}",
        scenario.display(),
        world.path("ws").display()
    );
    let tmux = Tmux::start("edited", 120, 40, &world.cockpit(&args));
    tmux.wait_until_armed("wants to run bash");
    tmux.keys("e");
    tmux.wait_for("edit the command");
    tmux.keys("C-u");
    tmux.type_text("echo edited > made.txt");
    tmux.keys("Enter");
    tmux.wait_until_armed("MODIFIED BY YOU");
    let code = code_on(&tmux.wait_for("airlock approve "));
    tmux.keys("p");
    tmux.wait_for("reopens this session and goes on");
    tmux.keys("C-d");
    tmux.wait_for("quit?");
    tmux.keys("y");
    tmux.wait_for("AIRLOCK-ENDED");
    assert!(!world.path("ws/made.txt").exists());

    tmux.open(
        120,
        40,
        &format!(
            "{} {} approve {code} --resume; echo AIRLOCK-ENDED; sleep 60",
            world.env(),
            env!("CARGO_BIN_EXE_airlock")
        ),
    );
    tmux.wait_for("all done");
    assert_eq!(
        std::fs::read_to_string(world.path("ws/made.txt")).unwrap(),
        "edited\n"
    );
}
