//! Taking wrappers off a simple command: `sudo`, `env`, `command`, `builtin`, `exec`, `nice`,
//! `timeout`, `nohup`, `stdbuf`, `time`, `ionice`, `setsid`, `xargs`, the launchers (`taskset`,
//! `chrt`, `flock`, `runuser`, `chroot`, ... in `launchers` and `identity`), the sandboxes
//! (`bwrap`, `firejail` in `isolation`), the service manager, control groups and proxies
//! (`systemd-run`, `cgexec`, `proxychains` in `services`), the tracers (`strace`, `gdb`, ... in
//! `tracers`), and pulling the commands out of `find -exec`, `parallel` and `bash -c` (or another
//! shell's `-c`). What a wrapper runs is what gets judged, exactly as if it ran on its own: a
//! wrapper that is not taken off hides its command behind a name airlock reads as the program.
//!
//! A privileged wrapper (`sudo`, `runuser`, `chroot`, ...) is judged as well as what it runs:
//! its name stays in `wrappers`, and when what it runs is a shell string that replaces the
//! command, the wrapper itself stays as the command (see [`privileged_stays`]).

mod env;
mod getopt;
mod identity;
mod isolation;
mod launchers;
mod parallel;
mod runners;
mod services;
mod tracers;

use super::words::Word;

/// A command found inside another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    /// A shell string to parse (`bash -c STRING [ARG0 ARGS...]`, `eval WORDS`, `trap STRING`),
    /// with the positional parameters it gets (`$0`, `$1`, ...).
    Script { text: String, positional: Vec<Word> },
    /// An argv run by `find -exec`.
    FindExec(Vec<Word>),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unwrapped {
    pub wrappers: Vec<String>,
    pub env: Vec<(String, Word)>,
    pub argv: Vec<Word>,
    pub inner: Vec<Inner>,
    /// The outer command is fully replaced by `inner` (a `bash -c` with a literal string).
    pub replaced: bool,
    pub via_xargs: bool,
    /// `env -C DIR` / `--chdir`: the command runs somewhere else.
    pub chdir: Option<Word>,
    /// Files a wrapper itself writes (`time -o FILE`).
    pub writes: Vec<Word>,
    /// Files a wrapper itself reads (`xargs -a FILE`).
    pub reads: Vec<Word>,
    pub problems: Vec<String>,
}

pub const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "rbash",
];

/// Wrappers that run their command as another user, with other ids or capabilities, in other
/// namespaces, under another root, in a sandbox or as a unit of the service manager: the wrapper
/// is judged besides its command. `programs` gives each its reason, by the same names.
const PRIVILEGED: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "runuser",
    "sg",
    "setpriv",
    "nsenter",
    "unshare",
    "chroot",
    "bwrap",
    "firejail",
    "systemd-run",
];

/// Directories whose programs airlock knows by their base name (`/usr/bin/rm` is `rm`).
const STANDARD_BIN_DIRS: &[&str] = &[
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
];

/// The name a word calls, with standard bin directories taken off.
pub fn program_name(word: &Word) -> Option<String> {
    let Word::Lit { value, glob, .. } = word else {
        return None;
    };
    if *glob {
        return None;
    }
    if let Some((dir, base)) = value.rsplit_once('/') {
        let dir = if dir.is_empty() { "/" } else { dir };
        let dir = dir.trim_end_matches('/');
        if STANDARD_BIN_DIRS.contains(&dir) && !base.is_empty() {
            return Some(base.to_string());
        }
    }
    Some(value.clone())
}

fn lit(word: &Word) -> Option<&str> {
    word.as_lit()
}

/// Skips options of a wrapper. `with_value` lists the options that take a separate value.
/// Returns the index of the first word that is not an option of the wrapper.
fn skip_options(argv: &[Word], mut i: usize, with_value: &[&str], stop_at_number: bool) -> usize {
    while i < argv.len() {
        let Some(w) = lit(&argv[i]) else { return i };
        if w == "--" {
            return i + 1;
        }
        if !w.starts_with('-') || w == "-" {
            return i;
        }
        if stop_at_number && w[1..].chars().all(|c| c.is_ascii_digit()) && w.len() > 1 {
            // `nice -5 cmd`
            i += 1;
            continue;
        }
        let takes_value = with_value.contains(&w);
        i += if takes_value { 2 } else { 1 };
    }
    i
}

pub fn unwrap(argv: Vec<Word>) -> Unwrapped {
    let mut out = Unwrapped {
        argv,
        ..Unwrapped::default()
    };
    for _ in 0..16 {
        let Some(name) = out.argv.first().and_then(program_name) else {
            return privileged_stays(out);
        };
        let Some(rest_from) = take_off(&name, &mut out) else {
            if out.replaced && PRIVILEGED.contains(&name.as_str()) {
                // `runuser bob -c STRING`: the string replaced the wrapper's own shell.
                out.wrappers.push(name);
            }
            return privileged_stays(out);
        };
        if rest_from >= out.argv.len() {
            // The wrapper runs nothing else: it is the command itself (`env`, `sudo -v`, `exec >f`).
            return privileged_stays(out);
        }
        out.wrappers.push(name);
        out.argv.drain(..rest_from);
    }
    out.problems
        .push("more than 16 nested wrappers; airlock stopped unwrapping".into());
    privileged_stays(out)
}

/// A shell string replaces the shell that runs it (`sudo bash -c STRING` is judged as STRING),
/// but not a privileged wrapper around that shell: the outermost one stays as the command, with
/// the wrappers outside it, so it is judged too.
fn privileged_stays(mut out: Unwrapped) -> Unwrapped {
    if !out.replaced {
        return out;
    }
    if let Some(at) = out
        .wrappers
        .iter()
        .position(|w| PRIVILEGED.contains(&w.as_str()))
    {
        out.argv = vec![Word::lit(&out.wrappers[at])];
        out.wrappers.truncate(at);
        out.replaced = false;
    }
    out
}

/// Takes the wrapper `name` off `out`: where the command it wraps starts, or `None` when
/// unwrapping ends here (not a wrapper, or one whose inner commands are now in `out.inner`).
fn take_off(name: &str, out: &mut Unwrapped) -> Option<usize> {
    Some(match name {
        "sudo" | "doas" => sudo(name, out),
        "env" => {
            let i = env::options(out);
            env::settings(out, i)
        }
        "command" => command(out)?,
        "builtin" | "nohup" | "setsid" | "coproc" => skip_options(&out.argv, 1, &[], false),
        "time" => time(out),
        "watch" => {
            watch(out);
            return None;
        }
        // The grammar reads `! { cmd; }` and `time { cmd; }` as a command named `{`.
        "{" => 1,
        "exec" => skip_options(&out.argv, 1, &["-a"], false),
        "nice" => skip_options(&out.argv, 1, &["-n", "--adjustment"], true),
        "ionice" => skip_options(&out.argv, 1, &["-c", "-n", "--class", "--classdata"], false),
        "stdbuf" => skip_options(&out.argv, 1, &["-i", "-o", "-e"], false),
        "timeout" => timeout(out),
        "taskset" => launchers::taskset(out)?,
        "chrt" => launchers::chrt(out)?,
        "prlimit" => launchers::prlimit(out)?,
        "numactl" => launchers::numactl(out)?,
        "flock" => launchers::flock(out)?,
        "script" => {
            launchers::script(out);
            return None;
        }
        "setpriv" => identity::setpriv(out)?,
        "runuser" | "su" => identity::runuser(name, out)?,
        "sg" => {
            identity::sg(out);
            return None;
        }
        "unshare" => identity::unshare(out)?,
        "nsenter" => identity::nsenter(out)?,
        "chroot" => identity::chroot(out)?,
        "bwrap" => isolation::bwrap(out)?,
        "firejail" => isolation::firejail(out)?,
        "systemd-run" => services::systemd_run(out)?,
        "cgexec" => services::cgexec(out)?,
        "proxychains" | "proxychains4" => services::proxychains(name, out)?,
        "fakeroot" => launchers::fakeroot(out)?,
        "dbus-run-session" => launchers::dbus_run_session(out)?,
        "xvfb-run" => launchers::xvfb_run(out)?,
        "unbuffer" => launchers::unbuffer(out),
        "strace" | "ltrace" => tracers::tracer(name, out)?,
        "valgrind" => tracers::valgrind(out)?,
        "gdb" => tracers::gdb(out)?,
        "parallel" => {
            parallel::parallel(out);
            return None;
        }
        // `busybox APPLET ARGS`: the applet is the program (`busybox sh -c` is a shell).
        "busybox" => match out.argv.get(1).and_then(lit) {
            Some(applet) if SHELLS.contains(&applet) => {
                runners::shell_c(out);
                return None;
            }
            Some(applet) if !applet.starts_with('-') => 1,
            _ => return None,
        },
        "csh" | "tcsh" => {
            runners::csh_c(name, out);
            return None;
        }
        "fish" => {
            runners::fish_c(out);
            return None;
        }
        "xargs" => {
            *out = runners::xargs(std::mem::take(out));
            return None;
        }
        "find" => {
            runners::find_exec(out);
            return None;
        }
        "eval" => {
            eval(out);
            return None;
        }
        "trap" => {
            trap(out);
            return None;
        }
        shell if SHELLS.contains(&shell) => {
            runners::shell_c(out);
            return None;
        }
        _ => return None,
    })
}

/// In a cluster of short options (`-nD/etc`, `-iu NAME`; `cluster` is the word without its
/// `-`), the first option that `takes_value`, with its value: the rest of the cluster, or the
/// next word (then `i` moves onto it).
fn cluster_value(
    argv: &[Word],
    i: &mut usize,
    cluster: &str,
    takes_value: impl Fn(char) -> bool,
) -> Option<(char, Option<Word>)> {
    let (at, letter) = cluster.char_indices().find(|(_, c)| takes_value(*c))?;
    let rest = &cluster[at + letter.len_utf8()..];
    let value = if rest.is_empty() {
        *i += 1;
        argv.get(*i).cloned()
    } else {
        Some(Word::lit(rest))
    };
    Some((letter, value))
}

/// sudo's short options that take a value (the rest of their cluster, or the next word).
const SUDO_VALUE_LETTERS: &str = "ugCDhprRtTU";
/// sudo's long options that take a value (after `=`, or the next word).
const SUDO_LONG_WITH_VALUE: &[&str] = &[
    "user",
    "group",
    "chdir",
    "chroot",
    "prompt",
    "host",
    "role",
    "type",
    "close-from",
    "other-user",
    "command-timeout",
];

/// Reads sudo's options, as its getopt does (clusters such as `-nD /etc` or `-nD/etc` included),
/// recording a directory change (`-D DIR`, `--chdir DIR`, `--chdir=DIR`): the command runs there,
/// as with `env -C`. Returns where the command starts.
fn sudo_options(out: &mut Unwrapped) -> usize {
    let mut i = 1;
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else { return i };
        if w == "--" {
            return i + 1;
        }
        if !w.starts_with('-') || w == "-" {
            return i;
        }
        let mut dir = None;
        if let Some(long) = w.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(Word::lit(value))),
                None if SUDO_LONG_WITH_VALUE.contains(&long) => {
                    i += 1;
                    (long, out.argv.get(i).cloned())
                }
                None => (long, None),
            };
            if name == "chdir" {
                dir = value;
            }
        } else if let Some(('D', value)) = cluster_value(&out.argv, &mut i, &w[1..], |c| {
            SUDO_VALUE_LETTERS.contains(c)
        }) {
            dir = value;
        }
        if dir.is_some() {
            env::change_dir(out, dir);
        }
        i += 1;
    }
    i
}

/// `sudo` / `doas`: its options; a login or root shell with no command reads what airlock
/// cannot see.
fn sudo(name: &str, out: &mut Unwrapped) -> usize {
    let i = sudo_options(out);
    let shell_flag = out.argv[1..i.min(out.argv.len())]
        .iter()
        .filter_map(lit)
        .any(|w| matches!(w, "-s" | "-i" | "--shell" | "--login"));
    if shell_flag && i >= out.argv.len() {
        out.problems.push(format!(
            "`{name}` opens a root shell reading commands airlock cannot see"
        ));
    }
    i
}

/// `command -v` / `-V` only looks a name up: nothing is wrapped (`None`).
fn command(out: &mut Unwrapped) -> Option<usize> {
    let flags: Vec<&str> = out.argv[1..]
        .iter()
        .map_while(|w| lit(w).filter(|s| s.starts_with('-')))
        .collect();
    if flags.iter().any(|f| f.contains('v') || f.contains('V')) {
        return None;
    }
    Some(skip_options(&out.argv, 1, &[], false))
}

/// GNU `time`, whose `-o FILE` is a file it writes.
fn time(out: &mut Unwrapped) -> usize {
    // GNU time: `-f FORMAT`, `-o FILE` (which it writes), `--format=`, `--output=`.
    let i = skip_options(&out.argv, 1, &["-f", "-o", "--format", "--output"], false);
    let mut j = 1;
    while j < i.min(out.argv.len()) {
        match out.argv[j].as_lit() {
            Some("-o" | "--output") => {
                if let Some(file) = out.argv.get(j + 1) {
                    out.writes.push(file.clone());
                }
                j += 2;
            }
            Some(w) if w.starts_with("--o") && w.contains('=') => {
                let value = w.split_once('=').map(|(_, v)| v).unwrap_or("");
                out.writes.push(Word::lit(value));
                j += 1;
            }
            Some(w) if w.starts_with("-o") && w.len() > 2 => {
                out.writes.push(Word::lit(&w[2..]));
                j += 1;
            }
            _ => j += 1,
        }
    }
    i
}

/// `watch CMD...`: the words joined are a shell string it runs again and again.
fn watch(out: &mut Unwrapped) {
    // `watch` joins its arguments and runs them with `sh -c`.
    let i = skip_options(
        &out.argv,
        1,
        &["-n", "--interval", "-q", "--equexit"],
        false,
    );
    let words: Option<Vec<&str>> = out.argv[i.min(out.argv.len())..].iter().map(lit).collect();
    match words {
        Some(words) if !words.is_empty() => {
            out.inner.push(Inner::Script {
                text: words.join(" "),
                positional: Vec::new(),
            });
            out.replaced = true;
        }
        _ => out
            .problems
            .push("`watch` runs a command built at run time".into()),
    }
}

fn timeout(out: &Unwrapped) -> usize {
    let i = skip_options(
        &out.argv,
        1,
        &["-s", "-k", "--signal", "--kill-after"],
        false,
    );
    i + 1 // the duration
}

/// `eval WORDS`: the words joined are a shell string.
fn eval(out: &mut Unwrapped) {
    let words: Option<Vec<&str>> = out.argv[1..].iter().map(lit).collect();
    match words {
        Some(words) if !words.is_empty() => out.inner.push(Inner::Script {
            text: words.join(" "),
            positional: Vec::new(),
        }),
        Some(_) => {}
        None => out
            .problems
            .push("`eval` runs a string built at run time".into()),
    }
}

/// `trap ACTION SIGNALS`: the action is a shell string that runs later.
fn trap(out: &mut Unwrapped) {
    let first = skip_options(&out.argv, 1, &[], false);
    if let Some(action) = out.argv.get(first).and_then(lit) {
        if !action.starts_with('-') || first > 1 {
            out.inner.push(Inner::Script {
                text: action.to_string(),
                positional: Vec::new(),
            });
        }
    } else if out.argv.len() > first {
        out.problems
            .push("`trap` installs a handler built at run time".into());
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// For the wrappers' tests: a command line of literal words, and what is left of it unwrapped.
#[cfg(test)]
pub(super) mod testing {
    use super::{Word, unwrap};

    pub fn argv(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::lit).collect()
    }

    pub fn program(s: &str) -> Vec<String> {
        unwrap(argv(s))
            .argv
            .iter()
            .map(|w| w.display().to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::argv;
    use super::*;

    fn names(u: &Unwrapped) -> Vec<&str> {
        u.argv.iter().map(Word::display).collect()
    }

    #[test]
    fn nested_wrappers_come_off_down_to_the_real_program() {
        let u = unwrap(argv(
            "sudo -u root env -i FOO=1 timeout -s KILL 5 nice -n 10 nohup rm -rf /",
        ));
        assert_eq!(names(&u), vec!["rm", "-rf", "/"]);
        assert_eq!(u.wrappers, vec!["sudo", "env", "timeout", "nice", "nohup"]);
        assert_eq!(u.env[0].0, "FOO");
    }

    #[test]
    fn a_wrapper_with_nothing_to_run_is_the_command_itself() {
        assert_eq!(names(&unwrap(argv("env"))), vec!["env"]);
        assert_eq!(
            names(&unwrap(argv("command -v rm"))),
            vec!["command", "-v", "rm"]
        );
    }

    #[test]
    fn xargs_hands_its_input_to_the_inner_command() {
        let u = unwrap(argv("xargs -0 -n 1 rm -f"));
        assert_eq!(u.argv[0].display(), "rm");
        assert!(u.argv.last().is_some_and(Word::is_dynamic));
        let u = unwrap(argv("xargs -I % cp % /etc/"));
        assert!(u.argv[1].is_dynamic());
        assert_eq!(u.argv[2].display(), "/etc/");
    }

    #[test]
    fn a_wrapper_under_xargs_keeps_its_files_and_directory() {
        let u = unwrap(argv(
            "xargs time -o out.txt env -C /etc xargs -a list rm -f passwd",
        ));
        assert_eq!(u.argv[0].display(), "rm");
        assert_eq!(u.writes, vec![Word::lit("out.txt")]);
        assert_eq!(u.reads, vec![Word::lit("list")]);
        assert_eq!(u.chdir, Some(Word::lit("/etc")));
    }

    #[test]
    fn a_relative_directory_change_after_another_is_taken_from_there() {
        let u = unwrap(argv("env -C /etc env -C sub rm -f passwd"));
        assert_eq!(u.chdir, Some(Word::lit("/etc/sub")));
        let u = unwrap(argv("env -C /etc env -C /var rm -f x"));
        assert_eq!(u.chdir, Some(Word::lit("/var")));
    }

    #[test]
    fn find_exec_is_pulled_out_with_the_search_roots_in_place_of_braces() {
        let u = unwrap(argv("find /etc -name x -exec rm {} ;"));
        assert_eq!(names(&u), vec!["find", "/etc", "-name", "x"]);
        assert_eq!(
            u.inner,
            vec![Inner::FindExec(vec![Word::lit("rm"), Word::lit("/etc")])]
        );
    }

    #[test]
    fn a_shell_with_dash_c_is_replaced_by_its_string() {
        let u = unwrap(vec![
            Word::lit("bash"),
            Word::lit("-lc"),
            Word::lit("rm -rf ~"),
        ]);
        assert!(u.replaced);
        assert_eq!(
            u.inner,
            vec![Inner::Script {
                text: "rm -rf ~".into(),
                positional: vec![]
            }]
        );
        assert_eq!(
            program_name(&Word::lit("/usr/bin/env")).as_deref(),
            Some("env")
        );
        assert_eq!(program_name(&Word::lit("./env")).as_deref(), Some("./env"));
    }
}
