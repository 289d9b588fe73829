//! A real terminal for the real binary: one tmux server per test (its own socket), a pane to
//! read as a person would, keys to press. The server goes when the test ends.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A server of its own, with one session `airlock` of `width` x `height` running `command`.
    pub fn start(name: &str, width: u16, height: u16, command: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("airlock-test-{name}-{}", std::process::id()),
        };
        tmux.open(width, height, command);
        tmux
    }

    /// Runs `command` in the session: the first time in a new one, then in its pane, in place of
    /// what ran there (the server stays up, so nothing races its shutdown).
    pub fn open(&self, width: u16, height: u16, command: &str) {
        let (w, h) = (width.to_string(), height.to_string());
        if self.status(&["has-session", "-t", "airlock"]) {
            self.run(&["respawn-pane", "-k", "-t", "airlock", command]);
            return;
        }
        self.run(&[
            "new-session",
            "-d",
            "-s",
            "airlock",
            "-x",
            &w,
            "-y",
            &h,
            command,
        ]);
    }

    /// Whether a tmux command succeeded.
    fn status(&self, args: &[&str]) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux is installed (.ci/run installs it)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "airlock"])
    }

    /// Polls the screen until `want` shows up; fails with the screen if it does not.
    pub fn wait_for(&self, want: &str) -> String {
        self.wait_polling(want, Duration::from_millis(100))
    }

    /// `wait_for`, polling as fast as tmux answers: for what must be answered within the
    /// cockpit's arm delay of its appearing.
    pub fn wait_for_quickly(&self, want: &str) -> String {
        self.wait_polling(want, Duration::from_millis(5))
    }

    fn wait_polling(&self, want: &str, every: Duration) -> String {
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
            std::thread::sleep(every);
        }
    }

    /// Text typed literally (no key names: `y` is the letter y).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "airlock", "-l", text]);
    }

    pub fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "airlock", keys]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}
