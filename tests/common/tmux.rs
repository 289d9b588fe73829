//! A real terminal for the real binary: one tmux server per test (its own socket), a pane to
//! read as a person would, keys to press. The server goes when the test ends.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
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
            .stderr(std::process::Stdio::null())
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
        self.poll_until(&format!("`{want}` never appeared"), every, |screen| {
            screen.contains(want)
        })
    }

    /// Polls the screen until `gone` is no longer on it; fails with the screen if it stays.
    pub fn wait_for_gone(&self, gone: &str) -> String {
        self.wait_until(&format!("`{gone}` never went away"), |screen| {
            !screen.contains(gone)
        })
    }

    /// Polls the screen until `holds` is true of it; fails saying `never` (what did not happen)
    /// with the screen if it never is.
    pub fn wait_until(&self, never: &str, holds: impl Fn(&str) -> bool) -> String {
        self.poll_until(never, Duration::from_millis(100), holds)
    }

    /// `wait_until`, polling as fast as tmux answers: for what must be acted on within the
    /// cockpit's arm delay.
    pub fn wait_until_quickly(&self, never: &str, holds: impl Fn(&str) -> bool) -> String {
        self.poll_until(never, Duration::from_millis(5), holds)
    }

    /// Waits until the approval modal showing `want` has armed, so the next key answers it:
    /// the modal is up and its bottom border no longer counts down ("keys are live in 0.3s",
    /// down to "live in 0.3s" when narrow; the cockpit redraws the moment the keys go live).
    /// The frame must be drawn to its last row: a modal's first frame is drawn whole, top to
    /// bottom, so one caught halfway shows the request without its countdown yet. Polls fast:
    /// a test may need to act soon after.
    pub fn wait_until_armed(&self, want: &str) -> String {
        let never = format!("the modal showing `{want}` never armed");
        self.poll_until(&never, Duration::from_millis(10), |screen| {
            screen.contains(want)
                && screen.contains("┌ approval")
                && !arming(screen)
                && screen
                    .lines()
                    .last()
                    .is_some_and(|row| !row.trim().is_empty())
        })
    }

    /// Writes `mark` straight onto the pane's terminal (at the start of its last row, the
    /// cursor put back after), as any process holding the terminal could, and waits until tmux
    /// shows it: whatever was written to the terminal before it has been drawn by then.
    pub fn drain_output(&self, mark: &str) -> String {
        let tty = self.run(&["display-message", "-p", "-t", "airlock", "#{pane_tty}"]);
        let height = self.run(&["display-message", "-p", "-t", "airlock", "#{pane_height}"]);
        let text = format!("\x1b7\x1b[{};1H{mark}\x1b8", height.trim());
        // Opened as no one's controlling terminal: the test must not take the pane's.
        let mut terminal = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NOCTTY.bits())
            .open(tty.trim())
            .expect("the pane's terminal opens");
        terminal
            .write_all(text.as_bytes())
            .expect("the pane's terminal takes a write");
        self.poll_until(
            &format!("the mark `{mark}` never showed"),
            Duration::from_millis(10),
            |screen| screen.contains(mark),
        )
    }

    fn poll_until(&self, never: &str, every: Duration, holds: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            if holds(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "{never}; screen:\n{screen}");
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

/// Whether an approval modal on `screen` still counts down to its keys going live
/// (`foot::arming`: "... live in 0.3s ...").
fn arming(screen: &str) -> bool {
    screen
        .match_indices("live in ")
        .any(|(at, m)| screen[at + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
}
