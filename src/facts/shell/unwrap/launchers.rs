//! Programs that start a command under other conditions: CPU and memory placement (`taskset`,
//! `chrt`, `numactl`), limits (`prlimit`), a lock (`flock`), a recording terminal (`script`),
//! a faked root (`fakeroot`), a session bus or display (`dbus-run-session`, `xvfb-run`), an
//! unbuffered terminal (`unbuffer`); other ids, namespaces or a root are in `identity`. The
//! command they start is judged as if it ran directly; each one's
//! options are read from a table (see `getopt`), and the files they open themselves are recorded.
//!
//! Each function returns where the wrapped command starts in `out.argv`, or `None` when it runs
//! no command of its own (then it is judged as the program, or its shell string is in
//! `out.inner`).

use super::getopt::{self, Read, Spec, Takes};
use super::{Inner, Unwrapped, lit};
use crate::facts::shell::words::Word;

use Takes::{Nothing as N, Optional as O, Value as V};

/// Where the operands start: without permutation they are the tail of the argv.
pub(super) fn operands_start(out: &Unwrapped, read: &Read) -> usize {
    out.argv.len().saturating_sub(read.operands.len())
}

pub(super) fn note_unknown(out: &mut Unwrapped, read: &Read, wrapper: &str) {
    if let Some(problem) = read.unknown_problem(wrapper) {
        out.problems.push(problem);
    }
}

/// A shell string a wrapper hands to a shell (`flock F -c`, `script -c`, `runuser -c`).
pub(super) fn shell_string(
    out: &mut Unwrapped,
    wrapper: &str,
    string: &Word,
    positional: Vec<Word>,
) {
    match string {
        Word::Lit { value, .. } => {
            out.inner.push(Inner::Script {
                text: value.clone(),
                positional,
            });
            out.replaced = true;
        }
        Word::Dynamic { .. } => out.problems.push(format!(
            "`{wrapper}` runs a command string built at run time"
        )),
    }
}

/// A wrapper given no command starts an interactive shell on its standard input.
pub(super) fn opens_shell(out: &mut Unwrapped, wrapper: &str) {
    out.problems.push(format!(
        "`{wrapper}` without a command starts a shell reading commands airlock cannot see"
    ));
}

const TASKSET: Spec = Spec {
    short: &[('a', N), ('p', N), ('c', N), ('h', N), ('V', N)],
    long: &[
        ("all-tasks", N),
        ("pid", N),
        ("cpu-list", N),
        ("help", N),
        ("version", N),
    ],
    permute: false,
};

/// `taskset [-a] [-c] MASK|LIST CMD...`; with `-p` it changes a running process instead.
pub(super) fn taskset(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &TASKSET);
    note_unknown(out, &read, "taskset");
    if read.has(&["p", "pid", "h", "help", "V", "version"]) {
        return None;
    }
    Some(operands_start(out, &read) + 1)
}

const CHRT: Spec = Spec {
    short: &[
        ('a', N),
        ('b', N),
        ('d', N),
        ('e', N),
        ('f', N),
        ('i', N),
        ('m', N),
        ('o', N),
        ('p', N),
        ('r', N),
        ('R', N),
        ('v', N),
        ('h', N),
        ('V', N),
        ('T', V),
        ('P', V),
        ('D', V),
    ],
    long: &[
        ("all-tasks", N),
        ("batch", N),
        ("deadline", N),
        ("ext", N),
        ("fifo", N),
        ("idle", N),
        ("max", N),
        ("other", N),
        ("pid", N),
        ("rr", N),
        ("reset-on-fork", N),
        ("verbose", N),
        ("help", N),
        ("version", N),
        ("sched-runtime", V),
        ("sched-period", V),
        ("sched-deadline", V),
    ],
    permute: false,
};

/// `chrt [OPTIONS] [PRIORITY] CMD...`; `-p` changes a running process, `-m` only prints.
pub(super) fn chrt(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &CHRT);
    note_unknown(out, &read, "chrt");
    if read.has(&["p", "pid", "m", "max", "h", "help", "V", "version"]) {
        return None;
    }
    let start = operands_start(out, &read);
    // The priority is a number; a policy that needs none may leave it out.
    let priority = match read.operands.first() {
        Some(Word::Lit { value, .. }) => {
            !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
        }
        Some(Word::Dynamic { .. }) => true,
        None => false,
    };
    Some(start + usize::from(priority))
}

/// prlimit's resources: each takes its limits only attached (`-n1024`, `--nofile=1024`).
const PRLIMIT: Spec = Spec {
    short: &[
        ('c', O),
        ('d', O),
        ('e', O),
        ('f', O),
        ('i', O),
        ('l', O),
        ('m', O),
        ('n', O),
        ('q', O),
        ('r', O),
        ('s', O),
        ('t', O),
        ('u', O),
        ('v', O),
        ('x', O),
        ('y', O),
        ('o', V),
        ('p', V),
        ('h', N),
        ('V', N),
    ],
    long: &[
        ("core", O),
        ("data", O),
        ("nice", O),
        ("fsize", O),
        ("sigpending", O),
        ("memlock", O),
        ("rss", O),
        ("nofile", O),
        ("msgqueue", O),
        ("rtprio", O),
        ("stack", O),
        ("cpu", O),
        ("nproc", O),
        ("as", O),
        ("locks", O),
        ("rttime", O),
        ("output", V),
        ("pid", V),
        ("noheadings", N),
        ("raw", N),
        ("verbose", N),
        ("help", N),
        ("version", N),
    ],
    permute: false,
};

/// `prlimit [--RESOURCE=LIMITS...] CMD...`; with `--pid` it changes a running process.
pub(super) fn prlimit(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &PRLIMIT);
    note_unknown(out, &read, "prlimit");
    if read.has(&["p", "pid", "h", "help", "V", "version"]) {
        return None;
    }
    Some(operands_start(out, &read))
}

const NUMACTL: Spec = Spec {
    short: &[
        ('a', N),
        ('b', N),
        ('l', N),
        ('s', N),
        ('H', N),
        ('h', N),
        ('i', V),
        ('w', V),
        ('p', V),
        ('P', V),
        ('m', V),
        ('N', V),
        ('C', V),
    ],
    long: &[
        ("all", N),
        ("balancing", N),
        ("localalloc", N),
        ("show", N),
        ("hardware", N),
        ("help", N),
        ("interleave", V),
        ("weighted-interleave", V),
        ("preferred", V),
        ("preferred-many", V),
        ("membind", V),
        ("cpunodebind", V),
        ("cpubind", V),
        ("physcpubind", V),
    ],
    permute: false,
};

/// `numactl [--cpunodebind=NODES|-N NODES ...] CMD...`; `--show` and `--hardware` only print.
pub(super) fn numactl(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &NUMACTL);
    note_unknown(out, &read, "numactl");
    if read.has(&["s", "show", "H", "hardware", "h", "help"]) {
        return None;
    }
    Some(operands_start(out, &read))
}

const FLOCK: Spec = Spec {
    short: &[
        ('s', N),
        ('x', N),
        ('e', N),
        ('n', N),
        ('u', N),
        ('o', N),
        ('F', N),
        ('h', N),
        ('V', N),
        ('w', V),
        ('E', V),
    ],
    long: &[
        ("shared", N),
        ("exclusive", N),
        ("nonblock", N),
        ("nb", N),
        ("unlock", N),
        ("close", N),
        ("no-fork", N),
        ("verbose", N),
        ("help", N),
        ("version", N),
        ("wait", V),
        ("timeout", V),
        ("conflict-exit-code", V),
    ],
    permute: false,
};

/// `flock [OPTIONS] FILE CMD...` or `flock [OPTIONS] FILE -c STRING`: it creates FILE if missing
/// (a write), then runs the command or the shell string. `flock FD` only locks.
pub(super) fn flock(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &FLOCK);
    note_unknown(out, &read, "flock");
    if read.operands.len() < 2 {
        return None;
    }
    out.writes.push(read.operands[0].clone());
    if matches!(lit(&read.operands[1]), Some("-c" | "--command")) {
        match read.operands.get(2) {
            Some(string) => {
                let string = string.clone();
                shell_string(out, "flock", &string, Vec::new());
            }
            None => out
                .problems
                .push("`flock -c` without a command string".into()),
        }
        return None;
    }
    Some(operands_start(out, &read) + 1)
}

const SCRIPT: Spec = Spec {
    short: &[
        ('a', N),
        ('e', N),
        ('f', N),
        ('q', N),
        ('h', N),
        ('V', N),
        ('B', V),
        ('c', V),
        ('E', V),
        ('I', V),
        ('O', V),
        ('o', V),
        ('m', V),
        ('T', V),
        ('t', O),
    ],
    long: &[
        ("append", N),
        ("return", N),
        ("flush", N),
        ("force", N),
        ("quiet", N),
        ("help", N),
        ("version", N),
        ("log-io", V),
        ("command", V),
        ("echo", V),
        ("log-in", V),
        ("log-out", V),
        ("output-limit", V),
        ("logging-format", V),
        ("log-timing", V),
        ("timing", O),
    ],
    // Read as if options may follow the typescript file: the safer reading of the two.
    permute: true,
};

/// `script [OPTIONS] [FILE]`: runs `-c STRING` (or, without it, an interactive shell) in a
/// terminal it records into FILE (`typescript` by default) and the log files its options name.
pub(super) fn script(out: &mut Unwrapped) {
    let read = getopt::read(&out.argv, 1, &SCRIPT);
    note_unknown(out, &read, "script");
    if read.has(&["h", "help", "V", "version"]) {
        return;
    }
    let logs = read.values(&[
        "B",
        "log-io",
        "I",
        "log-in",
        "O",
        "log-out",
        "T",
        "log-timing",
        "t",
        "timing",
    ]);
    out.writes.extend(logs);
    out.writes.extend(read.operands.iter().cloned());
    if read.operands.is_empty() && !read.has(&["B", "log-io", "O", "log-out"]) {
        out.writes.push(Word::lit("typescript"));
    }
    let strings = read.values(&["c", "command"]);
    if strings.is_empty() {
        opens_shell(out, "script");
    }
    for string in &strings {
        shell_string(out, "script", string, Vec::new());
    }
}

const FAKEROOT: Spec = Spec {
    short: &[
        ('l', V),
        ('i', V),
        ('s', V),
        ('b', V),
        ('u', N),
        ('h', N),
        ('v', N),
    ],
    long: &[
        ("lib", V),
        ("faked", V),
        ("fd-base", V),
        ("unknown-is-real", N),
        ("help", N),
        ("version", N),
    ],
    permute: false,
};

/// `fakeroot [OPTIONS] [--] [CMD...]`: the command believing it is root (`$SHELL` without one).
/// `-i FILE` reads saved ownerships, `-s FILE` writes them; `--lib` and `--faked` name code it
/// loads or runs.
pub(super) fn fakeroot(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &FAKEROOT);
    note_unknown(out, &read, "fakeroot");
    if read.has(&["h", "help", "v", "version"]) {
        return None;
    }
    for code in read.values(&["l", "lib", "faked"]) {
        out.problems.push(format!(
            "`fakeroot` loads or runs `{}` around the command",
            code.display()
        ));
    }
    out.reads.extend(read.values(&["i"]));
    out.writes.extend(read.values(&["s"]));
    if read.operands.is_empty() {
        opens_shell(out, "fakeroot");
        return None;
    }
    Some(operands_start(out, &read))
}

/// `dbus-run-session [--config-file=FILE] [--dbus-daemon=BINARY] [--] CMD...`.
pub(super) fn dbus_run_session(out: &mut Unwrapped) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = out.argv.get(i).and_then(lit) {
        let (name, attached) = match w.split_once('=') {
            Some((name, value)) => (name, Some(Word::lit(value))),
            None => (w, None),
        };
        let value = |i: &mut usize, out: &Unwrapped| {
            attached.clone().or_else(|| {
                *i += 1;
                out.argv.get(*i).cloned()
            })
        };
        match name {
            "--" => return Some(i + 1),
            "--help" | "--version" => return None,
            "--config-file" => {
                let file = value(&mut i, out);
                out.reads.extend(file);
            }
            "--dbus-daemon" => {
                let daemon = value(&mut i, out);
                out.problems.push(format!(
                    "`dbus-run-session --dbus-daemon` runs `{}`",
                    daemon.as_ref().map(Word::display).unwrap_or("")
                ));
            }
            _ if w.starts_with('-') => out.problems.push(format!(
                "`dbus-run-session` is given an option airlock does not know (`{w}`), so where the command it runs starts is a guess"
            )),
            _ => return Some(i),
        }
        i += 1;
    }
    Some(i)
}

const XVFB_RUN: Spec = Spec {
    short: &[
        ('a', N),
        ('d', N),
        ('h', N),
        ('l', N),
        ('e', V),
        ('f', V),
        ('n', V),
        ('p', V),
        ('s', V),
        ('w', V),
    ],
    long: &[
        ("auto-servernum", N),
        ("auto-display", N),
        ("help", N),
        ("listen-tcp", N),
        ("error-file", V),
        ("auth-file", V),
        ("server-num", V),
        ("xauth-protocol", V),
        ("server-args", V),
        ("wait", V),
    ],
    permute: false,
};

/// `xvfb-run [OPTIONS] CMD...`: the command with a virtual display; `-e FILE` and `-f FILE` are
/// files it writes.
pub(super) fn xvfb_run(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &XVFB_RUN);
    note_unknown(out, &read, "xvfb-run");
    if read.has(&["h", "help"]) {
        return None;
    }
    out.writes
        .extend(read.values(&["e", "error-file", "f", "auth-file"]));
    Some(operands_start(out, &read))
}

/// `unbuffer [-p] CMD...`: only a first `-p` is its own; every other word is the command's.
pub(super) fn unbuffer(out: &Unwrapped) -> usize {
    if out.argv.get(1).and_then(lit) == Some("-p") {
        2
    } else {
        1
    }
}
