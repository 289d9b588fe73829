//! Many airlock processes on one state directory at once, with the real binary: a cockpit in
//! tmux waits at its modal, holding its connections to the state database, while short processes
//! list, park, approve and deny with racing codes, resume and verify, all at the same time. The
//! database must never be pulled from under the cockpit (its WAL unlinked, a file it holds
//! deleted), every code decides exactly once, every parked call runs at most once, and afterwards
//! SQLite finds the database whole and every audit log verifies. Then the README's workflow: a
//! modal answered with its code from another terminal closes as approved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use std::collections::VecDeque;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::World;
use tmux::Tmux;

/// The parked runs: each asks to append a line to `made.txt`.
const PARKED: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "done", "expect": ["ok"]}
]}"#;

/// The cockpit's run: one call that asks, then done.
const COCKPIT: &str = r#"{"name": "c", "prompt": "go", "steps": [
    {"say": "Writing the marker.", "calls": [{"tool": "bash", "args": {"command": "echo cockpit >> cockpit.txt"}}]},
    {"say": "All finished here.", "expect": ["ok"]}
]}"#;

fn cockpit_command(w: &World) -> String {
    std::fs::write(w.path("c.json"), COCKPIT).unwrap();
    w.cockpit("--scenario c.json --workspace ws")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The one-time code the modal shows.
fn code_on(screen: &str) -> String {
    screen
        .split("airlock approve ")
        .nth(1)
        .map(|rest| rest.chars().take(9).collect())
        .unwrap_or_else(|| panic!("no code on screen:\n{screen}"))
}

/// The process of the cockpit `airlock sessions` lists as open.
fn open_cockpit_pid(w: &World) -> i32 {
    let listing = text(&w.airlock(&["sessions"], &[]));
    listing
        .split("open (process ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no open cockpit in:\n{listing}"))
}

/// Watches, until told to stop, that the cockpit keeps the database files it holds: its WAL is
/// never unlinked or replaced, and no descriptor of it points at a deleted file of the state
/// directory. Returns what went wrong, if anything.
fn watch_the_cockpits_files(
    pid: i32,
    state: PathBuf,
    stop: Arc<AtomicBool>,
) -> thread::JoinHandle<Vec<String>> {
    thread::spawn(move || {
        let wal = state.join("airlock.db-wal");
        let first = std::fs::metadata(&wal).map(|m| m.ino());
        let mut wrong = Vec::new();
        let Ok(first) = first else {
            return vec![format!("no WAL while the cockpit runs: {first:?}")];
        };
        let state = state.display().to_string();
        while !stop.load(Ordering::Relaxed) && wrong.len() < 5 {
            match std::fs::metadata(&wal) {
                Ok(m) if m.ino() == first => {}
                Ok(_) => wrong.push("the WAL was replaced under the cockpit".into()),
                Err(e) => wrong.push(format!("the WAL was unlinked under the cockpit: {e}")),
            }
            for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
            {
                if let Ok(target) = std::fs::read_link(fd.path()) {
                    let target = target.display().to_string();
                    if target.starts_with(&state) && target.ends_with("(deleted)") {
                        wrong.push(format!("the cockpit holds a deleted file: {target}"));
                    }
                }
            }
            // How often the watch samples (it runs for the whole storm), not a wait for anything.
            thread::sleep(Duration::from_millis(10));
        }
        wrong
    })
}

/// What the storm did, for the checks after it.
#[derive(Default)]
struct Tally {
    processes: AtomicUsize,
    approved_and_resumed: AtomicUsize,
    denied: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn run(&self, w: &World, args: &[&str]) -> Output {
        self.processes.fetch_add(1, Ordering::Relaxed);
        w.airlock(args, &[])
    }

    fn fail(&self, what: String) {
        self.failures.lock().unwrap().push(what);
    }
}

/// Runs `args` in `n` processes started together; their outputs.
fn race(w: &Arc<World>, tally: &Arc<Tally>, n: usize, args: &[&str]) -> Vec<Output> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let racers: Vec<_> = (0..n)
        .map(|_| {
            let (w, tally, args) = (w.clone(), tally.clone(), args.clone());
            thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                tally.run(&w, &args)
            })
        })
        .collect();
    racers.into_iter().map(|r| r.join().unwrap()).collect()
}

fn park(w: &World, tally: &Tally) -> Option<(String, String)> {
    tally.processes.fetch_add(1, Ordering::Relaxed);
    let out = w
        .command(w.dir.path(), &common::exec_args("park", &[]), &[])
        .output()
        .unwrap();
    if out.status.code() != Some(5) {
        tally.fail(format!("a park ended {:?}: {}", out.status, text(&out)));
        return None;
    }
    let parked = World::events(&out)
        .into_iter()
        .find(|e| e["event"] == "parked")?;
    Some((
        parked["run"].as_str()?.to_owned(),
        parked["code"].as_str()?.to_owned(),
    ))
}

/// Three processes race to answer one code (two approvals, or two denials and an approval):
/// exactly one wins. An approved run is then resumed by two processes at once: exactly one runs
/// it.
fn decide_and_resume(w: &Arc<World>, tally: &Arc<Tally>, run: &str, code: &str, deny: bool) {
    let answers = if deny {
        race(w, tally, 3, &["deny", code, "--reason", "racing"])
    } else {
        race(w, tally, 3, &["approve", code])
    };
    let won = answers.iter().filter(|o| o.status.success()).count();
    if won != 1 {
        let all: Vec<String> = answers.iter().map(text).collect();
        tally.fail(format!("{won} answers to {code} won, not one: {all:?}"));
        return;
    }
    let resumes = race(w, tally, 2, &["resume", run]);
    let ran = resumes
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stdout).contains("\"event\":\"resumed\""))
        .count();
    let finished = resumes.iter().any(|o| o.status.code() == Some(0));
    if ran != 1 || (!deny && !finished) {
        let all: Vec<String> = resumes.iter().map(text).collect();
        tally.fail(format!("{ran} resumes of {run} finished, not one: {all:?}"));
        return;
    }
    if deny {
        tally.denied.fetch_add(1, Ordering::Relaxed);
    } else {
        tally.approved_and_resumed.fetch_add(1, Ordering::Relaxed);
    }
}

fn audit_logs(state: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(state.join("audit"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect()
}

#[test]
fn many_airlock_processes_share_a_state_directory_with_a_waiting_cockpit_and_nothing_is_lost() {
    let w = Arc::new(World::new(PARKED));
    let tmux = Tmux::start("storm", 120, 40, &cockpit_command(&w));
    tmux.wait_for("wants to run bash");
    let cockpit_code = code_on(&tmux.wait_for("airlock approve "));
    let pid = open_cockpit_pid(&w);
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch_the_cockpits_files(pid, w.path("state"), stop.clone());

    let tally = Arc::new(Tally::default());
    let queue: Arc<Mutex<VecDeque<(String, String)>>> = Arc::default();
    let storm_ends = Instant::now() + Duration::from_secs(12);
    let mut workers = Vec::new();
    // Readers: what a person runs in another terminal, over and over.
    for reader in 0..3 {
        let (w, tally) = (w.clone(), tally.clone());
        workers.push(thread::spawn(move || {
            let mut turn = reader;
            while Instant::now() < storm_ends {
                let out = match turn % 3 {
                    0 => tally.run(&w, &["sessions"]),
                    1 => tally.run(&w, &["approvals", "list"]),
                    _ => tally.run(&w, &["state", "check"]),
                };
                if !out.status.success() {
                    tally.fail(format!("a reader failed: {}", text(&out)));
                }
                turn += 1;
            }
        }));
    }
    // Parkers: headless runs that park their call.
    for _ in 0..2 {
        let (w, tally, queue) = (w.clone(), tally.clone(), queue.clone());
        workers.push(thread::spawn(move || {
            while Instant::now() < storm_ends {
                if let Some(parked) = park(&w, &tally) {
                    queue.lock().unwrap().push_back(parked);
                }
            }
        }));
    }
    // Deciders: racing answers, then racing resumes.
    for decider in 0..2 {
        let (w, tally, queue) = (w.clone(), tally.clone(), queue.clone());
        workers.push(thread::spawn(move || {
            let mut n = decider;
            loop {
                let next = queue.lock().unwrap().pop_front();
                match next {
                    Some((run, code)) => {
                        decide_and_resume(&w, &tally, &run, &code, n % 4 == 3);
                        n += 1;
                    }
                    None if Instant::now() >= storm_ends => break,
                    // Nothing parked yet: look again soon (the storm's pace, not a wait).
                    None => thread::sleep(Duration::from_millis(20)),
                }
            }
        }));
    }
    for worker in workers {
        worker.join().unwrap();
    }
    // Whatever was left parked is answered now, by one process each.
    let left: Vec<_> = queue.lock().unwrap().drain(..).collect();
    for (run, code) in left {
        decide_and_resume(&w, &tally, &run, &code, false);
    }

    stop.store(true, Ordering::Relaxed);
    let wrong = watcher.join().unwrap();
    assert!(wrong.is_empty(), "{wrong:#?}");
    let failures = tally.failures.lock().unwrap().clone();
    assert!(failures.is_empty(), "{failures:#?}");

    // The cockpit, still at its modal, takes an answer from another terminal.
    let listing = text(&w.airlock(&["approvals", "list"], &[]));
    assert!(listing.contains("echo cockpit >> cockpit.txt"), "{listing}");
    let answered = w.airlock(&["approve", &cockpit_code], &[]);
    assert!(answered.status.success(), "{}", text(&answered));
    tmux.wait_for("All finished here.");
    tmux.wait_for("· Enter send");
    tmux.keys("C-d");
    tmux.wait_for("AIRLOCK-ENDED");

    let processes = tally.processes.load(Ordering::Relaxed);
    assert!(processes >= 50, "only {processes} processes ran");
    let approved = tally.approved_and_resumed.load(Ordering::Relaxed);
    let denied = tally.denied.load(Ordering::Relaxed);
    assert!(
        approved >= 3 && denied >= 1,
        "{approved} approved, {denied} denied"
    );

    // Each approved call ran exactly once, each denied one never; the cockpit's once.
    let made = std::fs::read_to_string(w.path("ws/made.txt")).unwrap_or_default();
    assert_eq!(made.lines().count(), approved, "{made}");
    assert_eq!(
        std::fs::read_to_string(w.path("ws/cockpit.txt")).unwrap(),
        "cockpit\n"
    );
    // SQLite finds the database whole; no approval is left waiting; every log verifies.
    assert_eq!(w.query("PRAGMA integrity_check"), "ok");
    assert_eq!(
        w.query("SELECT CAST(count(*) AS TEXT) FROM approvals WHERE state = 'pending'"),
        "0"
    );
    let check = w.airlock(&["state", "check"], &[]);
    assert!(check.status.success(), "{}", text(&check));
    let logs = audit_logs(&w.path("state"));
    assert!(logs.len() > approved, "{} logs", logs.len());
    for log in logs {
        let verified = w.airlock(&["audit", "verify", log.to_str().unwrap()], &[]);
        assert!(
            verified.status.success(),
            "{}: {}",
            log.display(),
            text(&verified)
        );
    }
}

#[test]
fn a_modal_answered_with_its_code_from_another_terminal_closes_as_approved_within_a_second() {
    let w = World::new(PARKED);
    let tmux = Tmux::start("answer", 120, 40, &cockpit_command(&w));
    tmux.wait_for("wants to run bash");
    let code = code_on(&tmux.wait_for("airlock approve "));
    // The README's workflow: list the waiting approvals in another terminal, then approve.
    let listing = w.airlock(&["approvals", "list"], &[]);
    assert!(listing.status.success());
    assert!(
        text(&listing).contains("echo cockpit >> cockpit.txt"),
        "{}",
        text(&listing)
    );
    let sessions = w.airlock(&["sessions"], &[]);
    assert!(sessions.status.success());
    let answered = w.airlock(&["approve", &code], &[]);
    assert!(
        text(&answered).contains("the running cockpit picks the answer up"),
        "{}",
        text(&answered)
    );
    let asked = Instant::now();
    let closed = loop {
        let screen = tmux.screen();
        if !screen.contains("wants to run bash") {
            break Some(screen);
        }
        if asked.elapsed() > Duration::from_secs(1) {
            break None;
        }
        thread::sleep(Duration::from_millis(25));
    };
    let screen = closed.unwrap_or_else(|| {
        panic!(
            "the modal was still open a second after the answer:\n{}",
            tmux.screen()
        )
    });
    let screen = if screen.contains("All finished here.") {
        screen
    } else {
        tmux.wait_for("All finished here.")
    };
    assert!(
        screen.contains("answered by a one-time code from another terminal"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(w.path("ws/cockpit.txt")).unwrap(),
        "cockpit\n"
    );
}

#[test]
fn a_damaged_database_is_reported_with_its_way_out_and_repaired_with_a_copy_kept() {
    let w = World::new(PARKED);
    std::fs::write(w.path("s.json"), PARKED).unwrap();
    let (_run, _code) = w.park(&[]);
    // A failing disk: every page but the first turned to junk (no airlock process runs).
    let db = w.path("state/airlock.db");
    let bytes = std::fs::read(&db).unwrap();
    let mut damaged = bytes[..4096].to_vec();
    damaged.resize(bytes.len().max(3 * 4096), 0xA5);
    std::fs::write(&db, &damaged).unwrap();

    let listed = w.airlock(&["approvals", "list"], &[]);
    assert_eq!(listed.status.code(), Some(1));
    assert!(
        text(&listed).contains("airlock state repair"),
        "{}",
        text(&listed)
    );
    let checked = w.airlock(&["state", "check"], &[]);
    assert_eq!(checked.status.code(), Some(1), "{}", text(&checked));
    assert!(text(&checked).contains("is damaged"), "{}", text(&checked));

    let repaired = w.airlock(&["state", "repair"], &[]);
    assert!(repaired.status.success(), "{}", text(&repaired));
    let said = text(&repaired);
    assert!(
        said.contains("is kept as") && said.contains("approvals waiting"),
        "{said}"
    );
    let kept: Vec<_> = std::fs::read_dir(w.path("state"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".damaged-"))
        .collect();
    assert!(!kept.is_empty(), "{said}");
    assert!(w.airlock(&["approvals", "list"], &[]).status.success());
    assert!(w.airlock(&["state", "check"], &[]).status.success());
}

/// In a test process of its own: any open and close of the SHM file by another test of the
/// same process would drop the lock this test looks for.
#[test]
fn making_the_database_private_never_opens_it_so_no_sqlite_lock_of_this_process_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("airlock.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    // A reader in another process would see it as the last user if our lock were gone:
    // the shared lock SQLite holds on the SHM file while the connection is open must
    // still be there after the files are made private.
    let shm = dir.path().join("airlock.db-shm");
    let held_before = shared_lock_held_on(&shm);
    airlock::store::private_db_files(&db).unwrap();
    assert!(held_before, "SQLite holds a lock on the SHM file");
    assert!(
        shared_lock_held_on(&shm),
        "the lock SQLite holds survives making the files private"
    );
}

/// Whether this process holds a POSIX lock on `file`, as /proc/locks tells.
fn shared_lock_held_on(file: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(file).unwrap().ino();
    let me = std::process::id();
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&"POSIX")
                && fields.get(4) == Some(&me.to_string().as_str())
                && fields
                    .get(5)
                    .and_then(|f| f.rsplit(':').next())
                    .is_some_and(|ino| ino == inode.to_string())
        })
}
