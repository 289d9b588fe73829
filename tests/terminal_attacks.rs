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

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use common::World;
use tmux::Tmux;

/// Detaches (fork, new session, stdio closed), waits for the next modal, then tries every way
/// onto the terminal; writes what each attempt did to `attack.log`. `tty-only` tries only the
/// controlling terminal (what an unconfined command could still reach otherwise). The detached
/// half holds a lock on `attack.lock` for as long as it lives, taken before its command ends,
/// so the test can tell when it is gone.
const ATTACK: &str = r#"
import fcntl, os, sys, termios, time
# The controlling terminal, taken while still in airlock's session (if there is one).
try:
    early = os.open("/dev/tty", os.O_RDWR)
except OSError as e:
    early = "/dev/tty: cannot open (%s)" % e.strerror
now = sys.argv[1:2] == ["now"]
if not now:
    ready, taken = os.pipe()
    if os.fork():
        os.close(taken)
        os.read(ready, 1)
        sys.exit(0)
    lock = os.open("attack.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.write(taken, b"x")
    try:
        os.setsid()
    except OSError:
        pass
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    # The attack itself: it strikes later, once the next modal is up.
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
/// half should outlive its command: if not, the test waits until it is gone and checks it never
/// ran.
fn attack_from_a_cockpit(name: &str, args: &str, command: &str, survives: bool) -> Report {
    let w = World::new(&scenario(command));
    std::fs::write(w.path("ws/attack.py"), ATTACK).unwrap();
    let tmux = Tmux::start(name, 120, 40, &w.cockpit(args));
    tmux.wait_until_armed("python3 attack.py");
    tmux.keys("y");
    let modal = tmux.wait_for("echo second >> second.txt");
    assert!(modal.contains("wants to run bash"), "{modal}");

    // The attack fires about three seconds after the first call ended; the attacker is gone
    // once its lock is free (it took the lock before its command ended).
    wait_until_the_attacker_is_gone(&w.path("ws/attack.lock"));
    let later = std::fs::read_to_string(w.path("ws/attack.log"))
        .ok()
        .filter(|report| report.contains("done"));
    if survives {
        assert!(later.is_some(), "the attack never ran:\n{}", tmux.screen());
    } else {
        assert!(
            later.is_none(),
            "the attacker outlived its command:\n{later:?}"
        );
    }
    let report = format!("{later:?}");
    // Armed, the modal is drawn whole once and then left alone (nothing repaints what the
    // attack may have written over it), and it takes the key below.
    tmux.wait_until_armed("echo second >> second.txt");
    // A mark written to the terminal after the attack shows only once tmux has drawn all the
    // attack wrote before it, had it reached the terminal.
    let screen = tmux.drain_output("TEST-MARK-AFTER-THE-ATTACK");
    assert!(!screen.contains("FORGED-BY-COMMAND"), "{report}\n{screen}");
    // A key sent now is read after any key the attack pushed into the input: `N` opens the
    // reason box only if the modal was still open, unanswered, when it came.
    tmux.keys("N");
    let screen = tmux.wait_until(
        &format!("the modal did not take `N`: it did not stay open\n{report}"),
        |s| s.contains("why not?"),
    );
    assert!(
        !w.path("ws/second.txt").exists(),
        "the second call ran with no key from the person:\n{report}\n{screen}"
    );
    assert!(
        screen.contains("why not?")
            && screen.contains("echo second >> second.txt")
            && screen.contains("wants to run bash"),
        "the modal did not stay open:\n{report}\n{screen}"
    );

    // The person answers: the modal takes their key as before.
    tmux.keys("Escape");
    tmux.wait_for_gone("why not?");
    tmux.keys("n");
    tmux.wait_for("Understood, stopping here.");
    Report {
        now: std::fs::read_to_string(w.path("ws/attack-now.log")).unwrap_or_default(),
        later,
    }
}

/// Waits until no process holds `lock` (the attacker took it before its command ended, and
/// holds it for as long as it lives).
fn wait_until_the_attacker_is_gone(lock: &Path) {
    let file =
        std::fs::File::open(lock).expect("the attacker took its lock before its command ended");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match file.try_lock() {
            Ok(()) => return,
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => panic!("locking {}: {e}", lock.display()),
        }
        assert!(
            Instant::now() < deadline,
            "the attacker was still running 30 s after its command ended"
        );
        thread::sleep(Duration::from_millis(50));
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
