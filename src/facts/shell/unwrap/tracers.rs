//! Tracers and debuggers that start a command: `strace`, `ltrace`, `valgrind`, `gdb`. The command
//! they start is judged as if it ran directly, and what they do themselves besides: the output
//! files they write, the shell commands `strace -o '|CMD'` and gdb's `shell CMD` / `!CMD` run,
//! and, for gdb, that its own commands can run any code. Attaching to a running process (`-p`)
//! starts nothing: the tracer is then judged as the program (see `programs`).

use super::getopt::{self, Spec, Takes};
use super::{Inner, Unwrapped, lit};
use crate::facts::shell::words::Word;

use Takes::{Nothing as N, Optional as O, Value as V};

const STRACE: Spec = Spec {
    short: &[
        ('A', N),
        ('c', N),
        ('C', N),
        ('d', N),
        ('D', N),
        ('f', N),
        ('F', N),
        ('h', N),
        ('i', N),
        ('k', N),
        ('n', N),
        ('q', N),
        ('r', N),
        ('t', N),
        ('T', N),
        ('v', N),
        ('V', N),
        ('w', N),
        ('x', N),
        ('y', N),
        ('Y', N),
        ('z', N),
        ('Z', N),
        ('a', V),
        ('b', V),
        ('e', V),
        ('E', V),
        ('I', V),
        ('o', V),
        ('O', V),
        ('p', V),
        ('P', V),
        ('s', V),
        ('S', V),
        ('u', V),
        ('U', V),
        ('X', V),
    ],
    long: &[
        ("output-append-mode", N),
        ("summary-only", N),
        ("summary", N),
        ("summary-wall-clock", N),
        ("debug", N),
        ("daemonize", O),
        ("follow-forks", N),
        ("output-separately", N),
        ("help", N),
        ("stack-trace", O),
        ("stack-traces", O),
        ("no-abbrev", N),
        ("seccomp-bpf", N),
        ("successful-only", N),
        ("failed-only", N),
        ("version", N),
        ("instruction-pointer", N),
        ("syscall-number", N),
        ("columns", V),
        ("trace", V),
        ("signal", V),
        ("status", V),
        ("quiet", O),
        ("silence", O),
        ("silent", O),
        ("decode-fds", O),
        ("decode-pids", O),
        ("abbrev", V),
        ("verbose", V),
        ("raw", V),
        ("read", V),
        ("write", V),
        ("inject", V),
        ("fault", V),
        ("kvm", V),
        ("output", V),
        ("attach", V),
        ("user", V),
        ("env", V),
        ("string-limit", V),
        ("summary-sort-by", V),
        ("summary-columns", V),
        ("trace-path", V),
        ("const-print-style", V),
        ("detach-on", V),
        ("interruptible", V),
        ("argv0", V),
        ("timestamps", O),
        ("absolute-timestamps", O),
        ("relative-timestamps", O),
        ("syscall-times", O),
        ("secontext", O),
        ("tips", O),
    ],
    permute: false,
};

const LTRACE: Spec = Spec {
    short: &[
        ('b', N),
        ('c', N),
        ('C', N),
        ('f', N),
        ('h', N),
        ('i', N),
        ('L', N),
        ('r', N),
        ('S', N),
        ('t', N),
        ('T', N),
        ('V', N),
        ('z', N),
        ('a', V),
        ('A', V),
        ('D', V),
        ('e', V),
        ('F', V),
        ('l', V),
        ('n', V),
        ('o', V),
        ('p', V),
        ('s', V),
        ('u', V),
        ('w', V),
        ('x', V),
    ],
    long: &[
        ("demangle", N),
        ("help", N),
        ("version", N),
        ("no-signals", N),
        ("align", V),
        ("debug", V),
        ("indent", V),
        ("library", V),
        ("output", V),
        ("where", V),
        ("config", V),
    ],
    permute: false,
};

/// `strace [OPTIONS] CMD...` / `ltrace [OPTIONS] CMD...`: `-o FILE` is written (`-o '|CMD'` and
/// `-o '!CMD'` pipe the trace into a shell command), `-E NAME=VALUE` is set for the command,
/// `-u USER` runs it as another user, ltrace's `-F FILE` is read.
pub(super) fn tracer(name: &str, out: &mut Unwrapped) -> Option<usize> {
    let spec = if name == "strace" { &STRACE } else { &LTRACE };
    let read = getopt::read(&out.argv, 1, spec);
    if let Some(problem) = read.unknown_problem(name) {
        out.problems.push(problem);
    }
    if read.has(&["p", "attach", "h", "help", "V", "version"]) {
        return None;
    }
    for file in read.values(&["o", "output"]) {
        match file.as_lit() {
            Some(f) if f.starts_with('|') || f.starts_with('!') => out.inner.push(Inner::Script {
                text: f[1..].to_string(),
                positional: Vec::new(),
            }),
            _ => out.writes.push(file),
        }
    }
    if name == "ltrace" {
        out.reads.extend(read.values(&["F", "config"]));
    }
    if name == "strace" {
        for setting in read.values(&["E", "env"]) {
            if let Some((key, value)) = setting.as_lit().and_then(|s| s.split_once('=')) {
                out.env.push((key.to_string(), Word::lit(value)));
            } else if setting.is_dynamic() {
                out.problems.push(format!(
                    "`strace -E` sets a variable computed at run time: `{}`",
                    setting.display()
                ));
            }
        }
    }
    for user in read.values(&["u", "user"]) {
        out.problems.push(format!(
            "`{name} -u` runs the command as the user `{}`",
            user.display()
        ));
    }
    if read.operands.is_empty() {
        return None;
    }
    Some(out.argv.len() - read.operands.len())
}

/// valgrind options that write the file they name.
const VALGRIND_WRITES: &[&str] = &[
    "log-file",
    "xml-file",
    "vgdb-prefix",
    "xtree-leak-file",
    "xtree-memory-file",
    "callgrind-out-file",
    "cachegrind-out-file",
    "massif-out-file",
    "dhat-out-file",
];

/// valgrind options that read the file they name.
const VALGRIND_READS: &[&str] = &["suppressions", "extra-debuginfo-path", "fullpath-after"];

/// valgrind options that only tune what it checks or prints.
const VALGRIND_PLAIN: &[&str] = &[
    "tool",
    "q",
    "quiet",
    "v",
    "verbose",
    "h",
    "help",
    "help-debug",
    "help-dyn-options",
    "version",
    "d",
    "trace-children",
    "trace-children-skip",
    "trace-children-skip-by-arg",
    "child-silent-after-fork",
    "vgdb",
    "vgdb-error",
    "vgdb-stop-at",
    "vgdb-poll",
    "vgdb-shadow-registers",
    "track-fds",
    "time-stamp",
    "log-fd",
    "xml",
    "xml-fd",
    "xml-user-comment",
    "demangle",
    "num-callers",
    "error-limit",
    "exit-on-first-error",
    "error-exitcode",
    "error-markers",
    "show-error-list",
    "s",
    "show-below-main",
    "allow-mismatched-debuginfo",
    "gen-suppressions",
    "max-stackframe",
    "main-stacksize",
    "max-threads",
    "smc-check",
    "read-inline-info",
    "read-var-info",
    "run-libc-freeres",
    "run-cxx-freeres",
    "sim-hints",
    "fair-sched",
    "merge-recursive-frames",
    "num-transtab-sectors",
    "avg-transtab-entry-size",
    "valgrind-stacksize",
    "show-emwarns",
    "require-text-symbol",
    "soname-synonyms",
    "progress-interval",
    "keep-debuginfo",
    "default-suppressions",
    "leak-check",
    "leak-resolution",
    "show-leak-kinds",
    "errors-for-leak-kinds",
    "leak-check-heuristics",
    "show-reachable",
    "show-possibly-lost",
    "xtree-leak",
    "xtree-memory",
    "undef-value-errors",
    "track-origins",
    "partial-loads-ok",
    "expensive-definedness-checks",
    "keep-stacktraces",
    "freelist-vol",
    "freelist-big-blocks",
    "ignore-ranges",
    "ignore-range-below-sp",
    "malloc-fill",
    "free-fill",
    "show-mismatched-frees",
    "show-realloc-size-zero",
    "redzone-size",
    "alignment",
    "cache-sim",
    "branch-sim",
    "heap",
    "stacks",
    "depth",
    "threshold",
    "peak-inaccuracy",
    "time-unit",
    "detailed-freq",
    "max-snapshots",
    "pages-as-heap",
    "dump-instr",
    "dump-line",
    "collect-jumps",
    "collect-atstart",
    "toggle-collect",
    "separate-threads",
    "history-level",
    "conflict-cache-size",
    "check-stack-refs",
    "free-is-write",
    "show-conflicts",
];

/// `valgrind [--OPTION[=VALUE]...] CMD...`: every option is one word, so the command is the
/// first word without a dash. Output files are written, `--log-socket` / `--xml-socket` send
/// the log off the machine, `--db-command` runs a command.
pub(super) fn valgrind(out: &mut Unwrapped) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = out.argv.get(i).and_then(lit) {
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        let option = w.trim_start_matches('-');
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Word::lit(value)),
            None => (option, Word::lit("")),
        };
        if VALGRIND_WRITES.contains(&name) {
            out.writes.push(value);
        } else if VALGRIND_READS.contains(&name) {
            out.reads.push(value);
        } else if matches!(name, "log-socket" | "xml-socket") {
            out.problems.push(format!(
                "`valgrind --{name}` sends its log over the network"
            ));
        } else if matches!(name, "db-command" | "db-attach") {
            out.problems
                .push(format!("`valgrind --{name}` runs a command of its own"));
        } else if !VALGRIND_PLAIN.contains(&name) {
            out.problems.push(format!(
                "`valgrind` is given an option airlock does not know (`{w}`)"
            ));
        }
        i += 1;
    }
    (i < out.argv.len()).then_some(i)
}

/// gdb's options that take a value (getopt_long_only: one dash or two, value attached after `=`
/// or in the next word).
const GDB_VALUE: &[&str] = &[
    "ex",
    "eval-command",
    "iex",
    "init-eval-command",
    "eiex",
    "early-init-eval-command",
    "x",
    "command",
    "ix",
    "init-command",
    "eix",
    "early-init-command",
    "p",
    "pid",
    "cd",
    "d",
    "directory",
    "s",
    "symbols",
    "e",
    "exec",
    "se",
    "c",
    "core",
    "b",
    "l",
    "tty",
    "t",
    "i",
    "interpreter",
    "interp",
    "D",
    "data-directory",
];

const GDB_FLAG: &[&str] = &[
    "batch",
    "batch-silent",
    "q",
    "quiet",
    "silent",
    "nx",
    "n",
    "nh",
    "tui",
    "readnow",
    "readnever",
    "write",
    "statistics",
    "configuration",
    "help",
    "h",
    "version",
    "v",
    "return-child-result",
    "nw",
    "nowindows",
    "w",
    "windows",
    "f",
    "fullname",
    "dbx",
    "epoch",
    "args",
];

/// The one option of `GDB_VALUE` or `GDB_FLAG` a name stands for (exactly, or as the only one
/// it abbreviates), and whether it takes a value.
fn gdb_option(name: &str) -> Option<(&'static str, bool)> {
    let all = || {
        GDB_VALUE
            .iter()
            .map(|o| (*o, true))
            .chain(GDB_FLAG.iter().map(|o| (*o, false)))
    };
    if let Some(found) = all().find(|(o, _)| *o == name) {
        return Some(found);
    }
    let mut matches = all().filter(|(o, _)| !name.is_empty() && o.starts_with(name));
    let first = matches.next()?;
    matches.next().is_none().then_some(first)
}

/// The shell command a gdb command runs: `shell CMD`, `!CMD`, `pipe GDBCMD | CMD`, `| GDBCMD |
/// CMD`.
fn gdb_shell_command(command: &str) -> Option<&str> {
    let command = command.trim_start();
    if let Some(rest) = command.strip_prefix('!') {
        return Some(rest);
    }
    let (word, rest) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    if matches!(word, "she" | "shel" | "shell") {
        return Some(rest);
    }
    if let Some(rest) = command.strip_prefix('|') {
        return rest.split_once('|').map(|(_, cmd)| cmd);
    }
    if matches!(word, "pipe" | "pip") {
        return rest.split_once('|').map(|(_, cmd)| cmd);
    }
    None
}

/// `gdb [OPTIONS] [PROGRAM [CORE|PID]]` or `gdb [OPTIONS] --args PROGRAM ARGS...`. Whatever it is
/// told (`-ex`, `-x FILE`, or its input) can run any code, so it always asks; the shell
/// commands among `-ex` are judged, `-x` files are read, and with `--args` the program is
/// judged as if it ran. Attaching (`-p PID`, a numeric second operand) starts nothing.
pub(super) fn gdb(out: &mut Unwrapped) -> Option<usize> {
    let mut i = 1;
    let mut operands = Vec::new();
    let mut args_at = None;
    let mut attaches = false;
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else {
            out.problems.push(format!(
                "`gdb` is given a word computed at run time (`{}`) where an option may stand",
                out.argv[i].display()
            ));
            operands.push(i);
            i += 1;
            continue;
        };
        if w == "--" {
            operands.extend(i + 1..out.argv.len());
            break;
        }
        if !w.starts_with('-') || w == "-" {
            if args_at.is_some() {
                break;
            }
            operands.push(i);
            i += 1;
            continue;
        }
        let option = w.trim_start_matches('-');
        let (name, attached) = match option.split_once('=') {
            Some((name, value)) => (name, Some(Word::lit(value))),
            None => (option, None),
        };
        let Some((full, takes_value)) = gdb_option(name) else {
            out.problems.push(format!(
                "`gdb` is given an option airlock does not know (`{w}`)"
            ));
            i += 1;
            continue;
        };
        let value = match (takes_value, attached) {
            (true, Some(v)) => Some(v),
            (true, None) => {
                i += 1;
                out.argv.get(i).cloned()
            }
            (false, _) => None,
        };
        match (full, value) {
            ("args", _) => args_at = Some(i + 1),
            ("p" | "pid", _) => attaches = true,
            (
                "ex"
                | "eval-command"
                | "iex"
                | "init-eval-command"
                | "eiex"
                | "early-init-eval-command",
                Some(v),
            ) => {
                if let Some(cmd) = v.as_lit().and_then(gdb_shell_command) {
                    out.inner.push(Inner::Script {
                        text: cmd.to_string(),
                        positional: Vec::new(),
                    });
                }
            }
            (
                "x" | "command" | "ix" | "init-command" | "eix" | "early-init-command",
                Some(file),
            ) => out.reads.push(file),
            _ => {}
        }
        i += 1;
    }
    if args_at.is_none()
        && operands
            .get(1)
            .and_then(|&o| lit(&out.argv[o]))
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    {
        attaches = true;
    }
    if attaches {
        return None;
    }
    let start = args_at.map(|_| i).filter(|&s| s < out.argv.len());
    if start.is_some() {
        out.problems.push(
            "`gdb` runs debugger commands (from `-ex`, `-x` files or its input) that can run any code"
                .into(),
        );
    }
    start
}
