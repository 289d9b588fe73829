//! Programs that start a command under other conditions: CPU and memory placement (`taskset`,
//! `chrt`, `numactl`), limits (`prlimit`), a lock (`flock`), a recording terminal (`script`),
//! other ids, groups, namespaces or a root (`setpriv`, `runuser`, `su`, `sg`, `unshare`,
//! `nsenter`, `chroot`), a faked root (`fakeroot`), a session bus or display
//! (`dbus-run-session`, `xvfb-run`), an unbuffered terminal (`unbuffer`). The command they start is judged as if it ran directly; each one's
//! options are read from a table (see `getopt`), and the files they open themselves are recorded.
//!
//! Each function returns where the wrapped command starts in `out.argv`, or `None` when it runs
//! no command of its own (then it is judged as the program, or its shell string is in
//! `out.inner`).

use super::getopt::{self, Read, Spec, Takes};
use super::{Inner, SHELLS, Unwrapped, env, lit};
use crate::approval::shell::words::Word;

use Takes::{Nothing as N, Optional as O, Value as V};

/// Where the operands start: without permutation they are the tail of the argv.
fn operands_start(out: &Unwrapped, read: &Read) -> usize {
    out.argv.len().saturating_sub(read.operands.len())
}

fn note_unknown(out: &mut Unwrapped, read: &Read, wrapper: &str) {
    if let Some(problem) = read.unknown_problem(wrapper) {
        out.problems.push(problem);
    }
}

/// A shell string a wrapper hands to a shell (`flock F -c`, `script -c`, `runuser -c`).
fn shell_string(out: &mut Unwrapped, wrapper: &str, string: &Word, positional: Vec<Word>) {
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
fn opens_shell(out: &mut Unwrapped, wrapper: &str) {
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

const SETPRIV: Spec = Spec {
    short: &[('d', N), ('h', N), ('V', N)],
    long: &[
        ("dump", N),
        ("no-new-privs", N),
        ("keep-groups", N),
        ("clear-groups", N),
        ("init-groups", N),
        ("reset-env", N),
        ("help", N),
        ("version", N),
        ("ambient-caps", V),
        ("inh-caps", V),
        ("bounding-set", V),
        ("groups", V),
        ("rgid", V),
        ("egid", V),
        ("regid", V),
        ("ruid", V),
        ("euid", V),
        ("reuid", V),
        ("securebits", V),
        ("pdeathsig", V),
        ("selinux-label", V),
        ("apparmor-profile", V),
        ("landlock-access", V),
        ("landlock-rule", V),
    ],
    permute: false,
};

/// `setpriv [OPTIONS] CMD...`: the command with other ids, groups or capabilities.
pub(super) fn setpriv(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &SETPRIV);
    note_unknown(out, &read, "setpriv");
    if read.has(&["d", "dump", "h", "help", "V", "version"]) {
        return None;
    }
    Some(operands_start(out, &read))
}

const RUNUSER: Spec = Spec {
    short: &[
        ('f', N),
        ('l', N),
        ('m', N),
        ('p', N),
        ('P', N),
        ('h', N),
        ('V', N),
        ('c', V),
        ('g', V),
        ('G', V),
        ('s', V),
        ('u', V),
        ('w', V),
    ],
    long: &[
        ("fast", N),
        ("login", N),
        ("preserve-environment", N),
        ("pty", N),
        ("help", N),
        ("version", N),
        ("command", V),
        ("session-command", V),
        ("group", V),
        ("supp-group", V),
        ("shell", V),
        ("user", V),
        ("whitelist-environment", V),
    ],
    // su's getopt permutes: `runuser bob -c CMD` reads `-c` after the user.
    permute: true,
};

/// `runuser -u USER [--] CMD...` runs the command itself; `runuser [-] [USER [ARGS...]]` and
/// `su` (the same options, without `-u`) run the user's shell with ARGS, `-c STRING` among them.
/// The command is rebuilt at the end of the argv, since options may stand among its words.
pub(super) fn runuser(name: &str, out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &RUNUSER);
    note_unknown(out, &read, name);
    if read.has(&["h", "help", "V", "version"]) {
        return None;
    }
    if let Some(shell) = read.values(&["s", "shell"]).last() {
        let bourne = shell
            .as_lit()
            .and_then(|s| s.rsplit('/').next())
            .is_some_and(|s| SHELLS.contains(&s) || s == "rbash");
        if !bourne {
            out.problems.push(format!(
                "`{name} -s {}` runs the command with a shell airlock does not read as bash",
                shell.display()
            ));
        }
    }
    let strings = read.values(&["c", "command", "session-command"]);
    if read.has(&["u", "user"]) {
        if read.operands.is_empty() {
            if strings.is_empty() {
                opens_shell(out, name);
            }
            for string in &strings {
                shell_string(out, name, string, Vec::new());
            }
            return None;
        }
        // Both a string and a command: each is judged, and neither replaces the other.
        for string in &strings {
            shell_string(out, name, string, Vec::new());
        }
        out.replaced = false;
        let program = out.argv[0].clone();
        out.argv = std::iter::once(program).chain(read.operands).collect();
        return Some(1);
    }
    // su's form: an optional `-` (a login shell), the user, then the shell's own arguments.
    let mut operands = read.operands.as_slice();
    if operands.first().and_then(lit) == Some("-") {
        operands = &operands[1..];
    }
    let shell_args = operands.get(1..).unwrap_or_default().to_vec();
    if strings.is_empty() {
        opens_shell(out, name);
    }
    for string in &strings {
        shell_string(out, name, string, shell_args.clone());
    }
    None
}

/// `sg [-] [GROUP [-c] COMMAND]`: the command, a shell string, run with another group.
pub(super) fn sg(out: &mut Unwrapped) {
    let mut rest = &out.argv[1..];
    if rest.first().and_then(lit) == Some("-") {
        rest = &rest[1..];
    }
    let mut command = rest.get(1..).unwrap_or_default();
    if command.first().and_then(lit) == Some("-c") {
        command = &command[1..];
    }
    match command {
        [] => opens_shell(out, "sg"),
        [string] => {
            let string = string.clone();
            shell_string(out, "sg", &string, Vec::new());
        }
        // More than one word: sg joins them, as `sh -c` gets them.
        words => match words.iter().map(lit).collect::<Option<Vec<_>>>() {
            Some(words) => {
                let string = Word::lit(&words.join(" "));
                shell_string(out, "sg", &string, Vec::new());
            }
            None => out
                .problems
                .push("`sg` runs a command built at run time".into()),
        },
    }
}

const UNSHARE: Spec = Spec {
    short: &[
        ('m', O),
        ('u', O),
        ('i', O),
        ('n', O),
        ('p', O),
        ('U', O),
        ('C', O),
        ('T', O),
        ('f', N),
        ('r', N),
        ('c', N),
        ('h', N),
        ('V', N),
        ('R', V),
        ('w', V),
        ('S', V),
        ('G', V),
        ('l', V),
    ],
    long: &[
        ("mount", O),
        ("uts", O),
        ("ipc", O),
        ("net", O),
        ("pid", O),
        ("user", O),
        ("cgroup", O),
        ("time", O),
        ("kill-child", O),
        ("mount-proc", O),
        ("mount-binfmt", O),
        ("fork", N),
        ("map-root-user", N),
        ("map-current-user", N),
        ("map-auto", N),
        ("keep-caps", N),
        ("help", N),
        ("version", N),
        ("map-user", V),
        ("map-group", V),
        ("map-users", V),
        ("map-groups", V),
        ("propagation", V),
        ("setgroups", V),
        ("root", V),
        ("wd", V),
        ("setuid", V),
        ("setgid", V),
        ("monotonic", V),
        ("boottime", V),
        ("load-interp", V),
    ],
    permute: false,
};

/// `unshare [OPTIONS] [CMD...]`: the command in new namespaces (`$SHELL` without one).
pub(super) fn unshare(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &UNSHARE);
    note_unknown(out, &read, "unshare");
    if read.has(&["h", "help", "V", "version"]) {
        return None;
    }
    if let Some(root) = read.values(&["R", "root"]).last() {
        out.problems.push(format!(
            "`unshare --root {}` makes the command's absolute paths lie under that directory, not where airlock judges them",
            root.display()
        ));
    }
    let wd = read.values(&["w", "wd"]).pop();
    if wd.is_some() {
        env::change_dir(out, wd);
    }
    if read.operands.is_empty() {
        opens_shell(out, "unshare");
        return None;
    }
    Some(operands_start(out, &read))
}

const NSENTER: Spec = Spec {
    short: &[
        ('a', N),
        ('c', N),
        ('e', N),
        ('F', N),
        ('Z', N),
        ('h', N),
        ('V', N),
        ('t', V),
        ('S', V),
        ('G', V),
        ('W', V),
        ('m', O),
        ('u', O),
        ('i', O),
        ('n', O),
        ('p', O),
        ('U', O),
        ('C', O),
        ('T', O),
        ('r', O),
        ('w', O),
    ],
    long: &[
        ("all", N),
        ("join-cgroup", N),
        ("env", N),
        ("no-fork", N),
        ("follow-context", N),
        ("preserve-credentials", N),
        ("keep-caps", N),
        ("user-parent", N),
        ("help", N),
        ("version", N),
        ("target", V),
        ("setuid", V),
        ("setgid", V),
        ("wdns", V),
        ("mount", O),
        ("uts", O),
        ("ipc", O),
        ("net", O),
        ("pid", O),
        ("user", O),
        ("cgroup", O),
        ("time", O),
        ("root", O),
        ("wd", O),
    ],
    permute: false,
};

/// `nsenter [OPTIONS] [CMD...]`: the command inside another process's namespaces (`$SHELL`
/// without one). In its mount namespace or root, paths name that process's files.
pub(super) fn nsenter(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &NSENTER);
    note_unknown(out, &read, "nsenter");
    if read.has(&["h", "help", "V", "version"]) {
        return None;
    }
    if read.has(&[
        "a", "all", "m", "mount", "r", "root", "w", "wd", "W", "wdns",
    ]) {
        out.problems.push(
            "`nsenter` enters another mount namespace or root: the paths the command names are not the ones airlock judges".into(),
        );
    }
    if read.operands.is_empty() {
        opens_shell(out, "nsenter");
        return None;
    }
    Some(operands_start(out, &read))
}

const CHROOT: Spec = Spec {
    short: &[],
    long: &[
        ("groups", V),
        ("userspec", V),
        ("skip-chdir", N),
        ("help", N),
        ("version", N),
    ],
    permute: false,
};

/// `chroot [OPTIONS] NEWROOT [CMD...]`: the command (`$SHELL -i` without one) with NEWROOT as
/// `/`, started in it. To `/` that is the real root; anywhere else every absolute path the
/// command names lies under NEWROOT, which airlock does not judge that way.
pub(super) fn chroot(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &CHROOT);
    note_unknown(out, &read, "chroot");
    if read.has(&["help", "version"]) {
        return None;
    }
    let root = read.operands.first()?.clone();
    let real_root = root
        .as_lit()
        .is_some_and(|r| !r.is_empty() && r.split('/').all(|c| c.is_empty() || c == "."));
    if !real_root {
        out.problems.push(format!(
            "`chroot {}` makes the command's absolute paths lie under that directory, not where airlock judges them",
            root.display()
        ));
    }
    if !read.has(&["skip-chdir"]) {
        let dir = if real_root { Word::lit("/") } else { root };
        env::change_dir(out, Some(dir));
    }
    if read.operands.len() < 2 {
        opens_shell(out, "chroot");
        return None;
    }
    Some(operands_start(out, &read) + 1)
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
