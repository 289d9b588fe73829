//! The real binary in a real terminal (tmux), driven as a person would: wait for the approval
//! modal, read the diff, press `y`, watch output stream, quit, and check the terminal came back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux is installed (.ci/run installs it)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "airlock"])
    }

    /// Polls the screen until `want` shows up; fails with the screen if it does not.
    fn wait_for(&self, want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            if screen.contains(want) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "`{want}` never appeared; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "airlock", keys]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} was never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_cockpit_runs_the_demo_with_a_person_approving_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["home", "state", "tmp"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    let status_file = dir.path().join("exit-status");
    let command = format!(
        "env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES XDG_CONFIG_HOME={home}/.config HOME={home} AIRLOCK_HOME={state} TMPDIR={tmp} AIRLOCK_EXIT_STATUS_FILE={status} {bin}; echo AIRLOCK-ENDED; sleep 60",
        home = dir.path().join("home").display(),
        state = dir.path().join("state").display(),
        tmp = dir.path().join("tmp").display(),
        status = status_file.display(),
        bin = env!("CARGO_BIN_EXE_airlock"),
    );
    let tmux = Tmux {
        socket: format!("airlock-test-{}", std::process::id()),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "airlock",
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ]);

    // The edit asks first: the modal shows the diff before any key is live.
    // (Not just "approval": the status bar counts the batch's questions before the modal opens.)
    tmux.wait_for("wants to run edit_file");
    let screen = tmux.wait_for("+    return a + b");
    assert!(screen.contains("-    return a - b"), "{screen}");
    std::thread::sleep(Duration::from_millis(600)); // past the arm delay
    // Chords are not answers: Ctrl-D (quit elsewhere), Ctrl-A and Ctrl-Y leave the modal open.
    for chord in ["C-d", "C-a", "C-y"] {
        tmux.keys(chord);
    }
    std::thread::sleep(Duration::from_millis(500));
    let screen = tmux.screen();
    assert!(
        screen.contains("+    return a + b") && screen.contains("waiting for"),
        "a chord answered the modal:\n{screen}"
    );
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");

    // Then the test run asks; allow it and watch its output arrive.
    tmux.wait_for("python3 -m unittest -v");
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");
    tmux.wait_for("OK");

    // The hard deny never asks; the two long checks stream side by side; the turn ends.
    tmux.wait_for("lint: checked module");
    // (A fragment: the conversation wraps between words, so the sentence may span two rows.)
    tmux.wait_for("I did not touch anything");
    let screen = tmux.wait_for("grants 0 · Enter");
    assert!(
        screen.contains("✗ c7"),
        "the rm -rf ~/.cache/pip was denied: {screen}"
    );

    // Quit, and the terminal is ours again: no alternate screen, the shell's line is there.
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&status_file).trim(), "0");
    let screen = tmux.wait_for("AIRLOCK-ENDED");
    assert!(
        !screen.contains("conversation"),
        "the cockpit is still on screen:\n{screen}"
    );
    let alternate = tmux.run(&["display-message", "-p", "-t", "airlock", "#{alternate_on}"]);
    assert_eq!(alternate.trim(), "0", "the alternate screen was not left");
}
