//! The terminal belongs to the human: the real cockpit in tmux, as a person sees it, and a
//! command that tries to reach the screen a decision is made on. Approved once, it leaves its
//! process group and session, waits until the next modal is up, then opens `/dev/tty` and the
//! terminals under `/dev/pts`, writes escape sequences that would paint a forged line, and
//! pushes `y` into the input with `TIOCSTI`. None of it may reach the screen or the keyboard:
//! the next modal stays open, unanswered, until the person answers it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use std::thread;
use std::time::{Duration, Instant};

use common::World;
use tmux::Tmux;

/// Detaches (fork, new session, stdio closed), waits for the next modal, then tries every way
/// onto the terminal; writes what each attempt did to `attack.log`. `tty-only` tries only the
/// controlling terminal (what an unconfined command could still reach otherwise).
const ATTACK: &str = r#"
import fcntl, os, sys, termios, time
# The controlling terminal, taken while still in airlock's session (if there is one).
try:
    early = os.open("/dev/tty", os.O_RDWR)
except OSError as e:
    early = "/dev/tty: cannot open (%s)" % e.strerror
now = sys.argv[1:2] == ["now"]
if not now:
    if os.fork():
        sys.exit(0)
    try:
        os.setsid()
    except OSError:
        pass
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    time.sleep(3)
targets = ["/dev/tty"]
if sys.argv[1:] != ["tty-only"]:
    targets += ["/dev/pts/%d" % n for n in range(16)] + ["/dev/console", "/dev/ptmx"]
results = []
for path in targets:
    if path == "/dev/tty":
        if isinstance(early, str):
            results.append(early)
            continue
        fd = early
    else:
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        except OSError as e:
            results.append("%s: cannot open (%s)" % (path, e.strerror))
            continue
    try:
        os.write(fd, b"\0337\033[2;3HFORGED-BY-COMMAND: SAFE\0338")
        results.append("%s: WROTE" % path)
    except OSError as e:
        results.append("%s: cannot write (%s)" % (path, e.strerror))
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"y")
        results.append("%s: INJECTED" % path)
    except OSError as e:
        results.append("%s: cannot inject (%s)" % (path, e.strerror))
for name in ("TMUX", "TMUX_PANE", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR"):
    results.append("env %s=%s" % (name, os.environ.get(name, "unset")))
with open("attack-now.log" if now else "attack.log", "w") as log:
    log.write("\n".join(results) + "\ndone\n")
"#;

fn scenario(command: &str) -> String {
    serde_json::json!({"name": "t", "prompt": "go", "steps": [
        {"say": "Running the helper.", "calls": [
            {"tool": "bash", "args": {"command": command}}
        ]},
        {"say": "Now the second thing.", "expect": ["ok"], "calls": [
            {"tool": "bash", "args": {"command": "echo second >> second.txt"}}
        ]},
        {"say": "Understood, stopping here.", "expect": ["denied"]}
    ]})
    .to_string()
}

/// What the attack found: while its command ran (`now`, when the command made it try then
/// too), and three seconds after (`later`, when it outlived its command).
struct Report {
    now: String,
    later: Option<String>,
}

/// Runs the attack (`python3 attack.py ATTACK_ARGS`, after one attempt at once when `first`
/// says so) in a cockpit started with `args`. `survives` says whether the attacker's delayed
/// half should outlive its command: if not, the test waits as long as it would have taken and
/// checks it never ran.
fn attack_from_a_cockpit(name: &str, args: &str, command: &str, survives: bool) -> Report {
    let w = World::new(&scenario(command));
    std::fs::write(w.path("ws/attack.py"), ATTACK).unwrap();
    let tmux = Tmux::start(name, 120, 40, &w.cockpit(args));
    tmux.wait_for("python3 attack.py");
    thread::sleep(Duration::from_millis(700));
    tmux.keys("y");
    let modal = tmux.wait_for("echo second >> second.txt");
    assert!(modal.contains("wants to run bash"), "{modal}");

    // The attack fires about three seconds after the first call ended.
    let log = w.path("ws/attack.log");
    let waited = if survives { 30 } else { 6 };
    let deadline = Instant::now() + Duration::from_secs(waited);
    let later = loop {
        let report = std::fs::read_to_string(&log).unwrap_or_default();
        if report.contains("done") {
            break Some(report);
        }
        if Instant::now() >= deadline {
            assert!(!survives, "the attack never ran:\n{}", tmux.screen());
            break None;
        }
        thread::sleep(Duration::from_millis(100));
    };
    if !survives {
        assert!(
            later.is_none(),
            "the attacker outlived its command:\n{later:?}"
        );
    }
    let report = format!("{later:?}");
    // Time for an injected key or a forged line to show.
    thread::sleep(Duration::from_millis(1500));
    let screen = tmux.screen();
    assert!(
        !w.path("ws/second.txt").exists(),
        "the second call ran with no key from the person:\n{report}\n{screen}"
    );
    assert!(
        screen.contains("echo second >> second.txt") && screen.contains("wants to run bash"),
        "the modal did not stay open:\n{report}\n{screen}"
    );
    assert!(!screen.contains("FORGED-BY-COMMAND"), "{report}\n{screen}");

    // The person answers: the modal takes their key as before.
    tmux.keys("n");
    tmux.wait_for("Understood, stopping here.");
    Report {
        now: std::fs::read_to_string(w.path("ws/attack-now.log")).unwrap_or_default(),
        later,
    }
}

fn refused_everything(report: &str) {
    assert!(report.contains("/dev/tty: cannot open"), "{report}");
    assert!(!report.contains("WROTE"), "{report}");
    assert!(!report.contains("INJECTED"), "{report}");
    // The cockpit runs inside tmux, yet nothing tells the command where its server is.
    assert!(report.contains("env TMUX=unset"), "{report}");
    assert!(report.contains("env TMUX_PANE=unset"), "{report}");
}

#[test]
fn a_sandboxed_command_cannot_draw_on_or_type_into_the_terminal_the_human_approves_in() {
    // As root the command has a PID namespace of its own, and the half of the attack that
    // waits for the next modal ends with its command: it never gets to try. So it tries at
    // once too, while its command runs.
    let root = nix::unistd::geteuid().is_root();
    let report = attack_from_a_cockpit(
        "sandboxed",
        "--scenario s.json --workspace ws",
        "python3 attack.py now; python3 attack.py",
        !root,
    );
    refused_everything(&report.now);
    if let Some(later) = &report.later {
        refused_everything(later);
    }
}

#[test]
fn without_landlock_a_command_still_has_no_controlling_terminal() {
    let report = attack_from_a_cockpit(
        "unconfined",
        "--scenario s.json --workspace ws --sandbox off",
        "python3 attack.py tty-only",
        true,
    );
    let later = report.later.unwrap();
    assert!(later.contains("/dev/tty: cannot open"), "{later}");
    assert!(!later.contains("INJECTED"), "{later}");
}
