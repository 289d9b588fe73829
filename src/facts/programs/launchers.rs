//! The programs that start other commands, where they are left as the program itself: a
//! privileged wrapper whose shell string replaced what it ran (or that was given nothing to
//! run), a scheduler or tracer pointed at a running process instead of a command (`taskset -p`,
//! `strace -p`), a debugger given no program to run. What they start is taken off and judged in
//! `shell::unwrap`; here is what they do themselves.

use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

/// The reason a privileged wrapper gives, by name (the names `shell::unwrap` keeps as
/// privileged).
pub(super) fn privileged(name: &str) -> Option<String> {
    let why = match name {
        "sudo" | "doas" | "su" | "runuser" => "runs as another user via",
        "sg" => "runs with another group via",
        "setpriv" => "runs with other user ids, groups or capabilities via",
        "nsenter" => "runs inside another process's namespaces via",
        "unshare" => "runs in new namespaces (as root inside them, with `-r`) via",
        "chroot" => "runs under another root directory via",
        "bwrap" => "runs in new namespaces with a filesystem view of its own via",
        "firejail" => {
            "runs in a sandbox with mounts, filters and ids of its own, set up as root, via"
        }
        "systemd-run" => {
            "runs as a unit of the service manager (the system's, as root, without `--user`), outside this session, via"
        }
        _ => return None,
    };
    Some(format!("{why} `{name}`"))
}

/// Effects of a launcher left as the program, or `None` for another program.
pub(super) fn launchers(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        // With arguments they are judged as before (`sudo -v`, `sudo -e FILE`, `su USER`).
        "sudo" | "doas" | "su" if args.words.is_empty() => vec![privileged_effect(name)],
        "runuser" | "sg" | "setpriv" | "nsenter" | "unshare" | "chroot" | "bwrap" | "firejail"
        | "systemd-run" => vec![privileged_effect(name)],
        "taskset" | "chrt" | "prlimit" => {
            if args.has(&['p'], &["pid"]) {
                vec![Effect::ProcessControl(format!(
                    "`{name} -p` changes a running process"
                ))]
            } else {
                vec![]
            }
        }
        "numactl" | "flock" | "script" | "fakeroot" | "dbus-run-session" | "xvfb-run"
        | "unbuffer" | "valgrind" | "parallel" | "cgexec" | "proxychains" | "proxychains4" => {
            vec![]
        }
        "strace" | "ltrace" => {
            if args.has(&['p'], &["attach"]) {
                vec![attaches(name)]
            } else {
                vec![]
            }
        }
        "gdb" => gdb(args),
        _ => return None,
    })
}

fn privileged_effect(name: &str) -> Effect {
    Effect::Privileged(privileged(name).unwrap_or_else(|| format!("runs via `{name}`")))
}

/// Attaching to a running process shows what it reads and writes, or its memory: another
/// process's secrets, as `/proc/PID/mem` would.
fn attaches(name: &str) -> Effect {
    Effect::CredentialAccess(format!(
        "`{name}` attaches to a running process and shows what it reads, writes or holds in memory"
    ))
}

/// gdb's options that take a value (one dash or two), whose values are not files to read.
const GDB_VALUE: &[&str] = &[
    "ex",
    "eval-command",
    "iex",
    "init-eval-command",
    "eiex",
    "early-init-eval-command",
    "p",
    "pid",
    "cd",
    "d",
    "directory",
    "b",
    "l",
    "tty",
    "t",
    "i",
    "interpreter",
    "D",
    "data-directory",
];

/// gdb's options whose value is a file it reads.
const GDB_FILE: &[&str] = &[
    "x",
    "command",
    "ix",
    "init-command",
    "eix",
    "early-init-command",
    "s",
    "symbols",
    "e",
    "exec",
    "se",
    "c",
    "core",
];

/// `gdb` without `--args`: it runs whatever debugger commands it is given, which can run any
/// code; it reads the program, core and command files; `-p PID` (or a numeric second operand)
/// attaches to a running process.
fn gdb(args: &Args) -> Vec<Effect> {
    let mut e = vec![Effect::RunsCode(
        "`gdb` runs debugger commands (from `-ex`, `-x` files or its input), which can run any program or code".into(),
    )];
    let mut operands = Vec::new();
    let mut words = args.iter();
    let mut attach = false;
    while let Some(w) = words.next() {
        let Some(s) = lit(w) else {
            operands.push(w.clone());
            continue;
        };
        let Some(option) = s.strip_prefix("--").or_else(|| s.strip_prefix('-')) else {
            operands.push(w.clone());
            continue;
        };
        let (name, attached) = match option.split_once('=') {
            Some((name, value)) => (name, Some(Word::lit(value))),
            None => (option, None),
        };
        let file = GDB_FILE.contains(&name);
        if !file && !GDB_VALUE.contains(&name) {
            continue;
        }
        attach |= matches!(name, "p" | "pid");
        let value = attached.or_else(|| words.next().cloned());
        if file {
            e.extend(value.map(Effect::Read));
        }
    }
    let pid = operands
        .get(1)
        .and_then(lit)
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if attach || pid {
        e.push(attaches("gdb"));
        operands.truncate(1);
    }
    e.extend(reads(operands));
    e
}
