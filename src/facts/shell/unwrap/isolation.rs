//! Sandboxes that start a command: `bwrap` and `firejail` (service units, control groups and
//! proxies are in `services`). The command they start is judged as if it ran directly, and each
//! keeps an ask of its own (it changes what the command sees and runs as, see `PRIVILEGED`).
//! What they make visible under another name (a bind mount, a private home) counts as read or
//! written where it really is, and every option they are given that airlock does not know is a
//! question, since past it airlock cannot tell what the command is or sees.

use super::launchers::{opens_shell, shell_string};
use super::{Unwrapped, env, is_name, lit};
use crate::facts::shell::words::Word;

/// A wrapper's own option that airlock does not know: the caller cannot tell where the command
/// starts, or what it sees, past it.
pub(super) fn unknown_option(out: &mut Unwrapped, wrapper: &str, option: &str) {
    out.problems.push(format!(
        "`{wrapper}` is given an option airlock does not know (`{option}`), so what the command it runs is and sees is a guess"
    ));
}

/// A path the command sees under another name: airlock judges the names the command uses, not
/// the files they reach.
fn remaps(out: &mut Unwrapped, wrapper: &str, what: String) {
    out.problems.push(format!(
        "`{wrapper} {what}` shows the command a path under another name: the paths it names are not the files airlock judges"
    ));
}

/// What a bwrap option does, with the number of words it takes.
#[derive(Clone, Copy)]
enum Bwrap {
    /// Nothing airlock judges (namespaces, ids, labels, file descriptors, fresh mounts).
    Plain(usize),
    /// `--bind SRC DEST` and kin: SRC is read (`ro`) or also written, under DEST.
    Bind {
        writable: bool,
    },
    /// `--overlay-src SRC`: SRC is read under the overlay's destination.
    OverlaySrc,
    /// `--overlay RWSRC WORKDIR DEST`: writes go to RWSRC and WORKDIR.
    Overlay,
    /// `--tmp-overlay DEST`, `--ro-overlay DEST`: the sources given before, under DEST.
    OverlayOn,
    /// `--bind-fd FD DEST`, `--ro-bind-fd FD DEST`: whatever FD is open on, under DEST.
    BindFd,
    /// `--symlink SRC DEST`: DEST leads to SRC.
    Symlink,
    /// `--dir DEST`, `--chmod OCTAL PATH`: changes the path it names, on the host when a
    /// writable bind holds it.
    Changes(usize),
    Chdir,
    Setenv,
    /// `--args FD`: more options, read from a file descriptor.
    Args,
    /// `--help`, `--version`: runs nothing.
    Prints,
}

/// bwrap's options, matched exactly as bwrap matches them.
const BWRAP: &[(&str, Bwrap)] = &[
    ("--help", Bwrap::Prints),
    ("--version", Bwrap::Prints),
    ("--args", Bwrap::Args),
    ("--argv0", Bwrap::Plain(1)),
    ("--level-prefix", Bwrap::Plain(0)),
    ("--unshare-all", Bwrap::Plain(0)),
    ("--share-net", Bwrap::Plain(0)),
    ("--unshare-user", Bwrap::Plain(0)),
    ("--unshare-user-try", Bwrap::Plain(0)),
    ("--unshare-ipc", Bwrap::Plain(0)),
    ("--unshare-pid", Bwrap::Plain(0)),
    ("--unshare-net", Bwrap::Plain(0)),
    ("--unshare-uts", Bwrap::Plain(0)),
    ("--unshare-cgroup", Bwrap::Plain(0)),
    ("--unshare-cgroup-try", Bwrap::Plain(0)),
    ("--userns", Bwrap::Plain(1)),
    ("--userns2", Bwrap::Plain(1)),
    ("--disable-userns", Bwrap::Plain(0)),
    ("--assert-userns-disabled", Bwrap::Plain(0)),
    ("--pidns", Bwrap::Plain(1)),
    ("--uid", Bwrap::Plain(1)),
    ("--gid", Bwrap::Plain(1)),
    ("--hostname", Bwrap::Plain(1)),
    ("--chdir", Bwrap::Chdir),
    ("--clearenv", Bwrap::Plain(0)),
    ("--setenv", Bwrap::Setenv),
    ("--unsetenv", Bwrap::Plain(1)),
    ("--lock-file", Bwrap::Plain(1)),
    ("--sync-fd", Bwrap::Plain(1)),
    ("--bind", Bwrap::Bind { writable: true }),
    ("--bind-try", Bwrap::Bind { writable: true }),
    ("--dev-bind", Bwrap::Bind { writable: true }),
    ("--dev-bind-try", Bwrap::Bind { writable: true }),
    ("--ro-bind", Bwrap::Bind { writable: false }),
    ("--ro-bind-try", Bwrap::Bind { writable: false }),
    ("--bind-fd", Bwrap::BindFd),
    ("--ro-bind-fd", Bwrap::BindFd),
    ("--remount-ro", Bwrap::Plain(1)),
    ("--overlay-src", Bwrap::OverlaySrc),
    ("--overlay", Bwrap::Overlay),
    ("--tmp-overlay", Bwrap::OverlayOn),
    ("--ro-overlay", Bwrap::OverlayOn),
    ("--exec-label", Bwrap::Plain(1)),
    ("--file-label", Bwrap::Plain(1)),
    ("--proc", Bwrap::Plain(1)),
    ("--dev", Bwrap::Plain(1)),
    ("--tmpfs", Bwrap::Plain(1)),
    ("--mqueue", Bwrap::Plain(1)),
    ("--dir", Bwrap::Changes(1)),
    ("--file", Bwrap::Plain(2)),
    ("--bind-data", Bwrap::Plain(2)),
    ("--ro-bind-data", Bwrap::Plain(2)),
    ("--symlink", Bwrap::Symlink),
    ("--seccomp", Bwrap::Plain(1)),
    ("--add-seccomp-fd", Bwrap::Plain(1)),
    ("--block-fd", Bwrap::Plain(1)),
    ("--userns-block-fd", Bwrap::Plain(1)),
    ("--info-fd", Bwrap::Plain(1)),
    ("--json-status-fd", Bwrap::Plain(1)),
    ("--new-session", Bwrap::Plain(0)),
    ("--die-with-parent", Bwrap::Plain(0)),
    ("--as-pid-1", Bwrap::Plain(0)),
    ("--cap-add", Bwrap::Plain(1)),
    ("--cap-drop", Bwrap::Plain(1)),
    ("--perms", Bwrap::Plain(1)),
    ("--size", Bwrap::Plain(1)),
    ("--chmod", Bwrap::Changes(2)),
];

impl Bwrap {
    fn words(self) -> usize {
        match self {
            Bwrap::Plain(n) | Bwrap::Changes(n) => n,
            Bwrap::Prints => 0,
            Bwrap::OverlaySrc | Bwrap::OverlayOn | Bwrap::Chdir | Bwrap::Args => 1,
            Bwrap::Bind { .. } | Bwrap::BindFd | Bwrap::Symlink | Bwrap::Setenv => 2,
            Bwrap::Overlay => 3,
        }
    }
}

/// The same path, as written (`--bind / /`, `--ro-bind /usr /usr`): nothing is renamed.
fn same_path(a: &Word, b: &Word) -> bool {
    match (a.as_lit(), b.as_lit()) {
        (Some(a), Some(b)) => a.trim_end_matches('/') == b.trim_end_matches('/'),
        _ => false,
    }
}

/// A bind mount: the host path `source` at `dest` in the sandbox.
struct Bind {
    source: String,
    dest: String,
    writable: bool,
}

/// The host path a sandbox path reaches through the binds given so far (a later bind over an
/// earlier one wins), and whether it is writable there; `None` when no bind holds it (it is in
/// the sandbox's own memory). A `~` path and an absolute one cannot be compared here: the bind
/// may hold it, as it is.
fn on_host(binds: &[Bind], path: &Word) -> Option<(Word, bool)> {
    let path = path.as_lit()?;
    binds.iter().rev().find_map(|b| {
        if path.starts_with('~') != b.dest.starts_with('~') {
            return Some((Word::lit(path), b.writable));
        }
        let dest = b.dest.trim_end_matches('/');
        let rest = path.strip_prefix(dest)?;
        if !(rest.is_empty() || rest.starts_with('/') || dest.is_empty()) {
            return None;
        }
        let source = b.source.trim_end_matches('/');
        let rest = rest.trim_start_matches('/');
        let host = match (source.is_empty(), rest.is_empty()) {
            (true, true) => "/".to_string(),
            (_, true) => source.to_string(),
            _ => format!("{source}/{rest}"),
        };
        Some((Word::lit(&host), b.writable))
    })
}

/// `bwrap [OPTIONS] [--] CMD...`: the command in new namespaces, seeing the host paths its bind
/// mounts give it. A bind that shows a path under another name counts as reading (or, when
/// writable, writing) that path, and the names the command uses for it are not judged as it;
/// what bwrap creates or changes under a writable bind (`--dir`, `--chmod`, `--symlink`) is a
/// write on the host.
pub(super) fn bwrap(out: &mut Unwrapped) -> Option<usize> {
    let mut i = 1;
    let mut chdir = None;
    let mut binds: Vec<Bind> = Vec::new();
    while let Some(word) = out.argv.get(i) {
        // A word computed at run time is where the command starts, or an option: the command's
        // name is then computed at run time, which is judged as such.
        let Some(w) = lit(word).map(str::to_string) else {
            break;
        };
        let w = w.as_str();
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') {
            break;
        }
        let Some(&(option, kind)) = BWRAP.iter().find(|(name, _)| *name == w) else {
            unknown_option(out, "bwrap", w);
            i += 1;
            continue;
        };
        let n = kind.words();
        let Some(args) = out.argv.get(i + 1..i + 1 + n).map(<[Word]>::to_vec) else {
            // bwrap refuses an option without its values: nothing runs.
            return None;
        };
        let shown = || {
            let words: Vec<&str> = args.iter().map(Word::display).collect();
            format!("{option} {}", words.join(" "))
        };
        match kind {
            Bwrap::Prints => return None,
            Bwrap::Plain(_) => {}
            Bwrap::Bind { writable } => {
                if !same_path(&args[0], &args[1]) {
                    remaps(out, "bwrap", shown());
                    if writable {
                        out.writes.push(args[0].clone());
                    } else {
                        out.reads.push(args[0].clone());
                    }
                }
                if let (Some(source), Some(dest)) = (args[0].as_lit(), args[1].as_lit()) {
                    binds.push(Bind {
                        source: source.to_string(),
                        dest: dest.to_string(),
                        writable,
                    });
                }
            }
            Bwrap::OverlaySrc => out.reads.push(args[0].clone()),
            Bwrap::Overlay => {
                remaps(out, "bwrap", shown());
                out.writes.extend(args[..2].iter().cloned());
            }
            Bwrap::OverlayOn | Bwrap::BindFd => remaps(out, "bwrap", shown()),
            Bwrap::Symlink => {
                remaps(out, "bwrap", shown());
                // What the link leads to, as the host has it; a relative target stays inside.
                if args[0].as_lit().is_none_or(|t| t.starts_with(['/', '~'])) {
                    match on_host(&binds, &args[0]) {
                        Some((host, true)) => out.writes.push(host),
                        Some((host, false)) => out.reads.push(host),
                        None if args[0].is_dynamic() => out.writes.push(args[0].clone()),
                        None => {}
                    }
                }
                if let Some((host, true)) = on_host(&binds, &args[1]) {
                    out.writes.push(host);
                }
            }
            Bwrap::Changes(_) => {
                if let Some(path) = args.last() {
                    match on_host(&binds, path) {
                        Some((host, true)) => out.writes.push(host),
                        None if path.is_dynamic() => out.writes.push(path.clone()),
                        _ => {}
                    }
                }
            }
            Bwrap::Chdir => chdir = Some(args[0].clone()),
            Bwrap::Setenv => match args[0].as_lit() {
                Some(name) if is_name(name) => out.env.push((name.to_string(), args[1].clone())),
                _ => out.problems.push(format!(
                    "`bwrap --setenv {}` sets a variable whose name is computed at run time",
                    args[0].display()
                )),
            },
            Bwrap::Args => out.problems.push(format!(
                "`bwrap --args {}` reads more options from a file descriptor airlock cannot see",
                args[0].display()
            )),
        }
        i += 1 + n;
    }
    if chdir.is_some() {
        // The host paths bwrap's options name are taken from where bwrap starts, not from the
        // sandbox's directory the command starts in.
        let relative = out
            .writes
            .iter()
            .chain(&out.reads)
            .any(|p| !p.as_lit().is_some_and(|p| p.starts_with(['/', '~'])));
        if relative {
            out.problems.push(
                "`bwrap --chdir` with a relative host path: airlock judges that path from the sandbox's directory".into(),
            );
        }
        env::change_dir(out, chdir);
    }
    // Without a command bwrap refuses to start.
    (i < out.argv.len()).then_some(i)
}

/// What a firejail option does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Firejail {
    /// Nothing airlock judges: filters, limits, networking, fresh or read-only mounts.
    Plain,
    /// Manages or inspects sandboxes instead of running a command.
    NoCommand,
    /// `--env=NAME=VALUE`.
    Env,
    /// `--output=FILE`, `--trace=FILE`: a file it writes.
    Writes,
    /// `--netfilter=FILE`, `--hosts-file=FILE`: a file it reads.
    Reads,
    /// `--profile=FILE`, `--include=FILE`: settings airlock does not read, which can mount any
    /// path under any name.
    Profile,
    /// `--private=DIR`, `--bind=SRC,DEST`: a path shown under another name, and written there.
    Remaps,
    /// `--chroot=DIR`: every absolute path lies under DIR.
    Chroot,
    /// `--join=NAME`: into another sandbox, whose mounts airlock does not know.
    Joins,
    /// `--private-cwd=DIR`: where the command starts.
    Chdir,
    /// `--shell=PROGRAM`: the command's words joined and run by that shell (`none`: directly).
    Shell,
}

/// firejail's options, each one word (`--name` or `--name=value`), by name.
const FIREJAIL: &[(&str, Firejail)] = &[
    ("allow-debuggers", Firejail::Plain),
    ("allusers", Firejail::Plain),
    ("apparmor", Firejail::Plain),
    ("blacklist", Firejail::Plain),
    ("caps", Firejail::Plain),
    ("caps.drop", Firejail::Plain),
    ("caps.keep", Firejail::Plain),
    ("cpu", Firejail::Plain),
    ("dbus-system", Firejail::Plain),
    ("dbus-user", Firejail::Plain),
    ("debug", Firejail::Plain),
    ("defaultgw", Firejail::Plain),
    ("deterministic-exit-code", Firejail::Plain),
    ("deterministic-shutdown", Firejail::Plain),
    ("disable-mnt", Firejail::Plain),
    ("dns", Firejail::Plain),
    ("hostname", Firejail::Plain),
    ("ignore", Firejail::Plain),
    ("interface", Firejail::Plain),
    ("ip", Firejail::Plain),
    ("ip6", Firejail::Plain),
    ("iprange", Firejail::Plain),
    ("ipc-namespace", Firejail::Plain),
    ("keep-config-pulse", Firejail::Plain),
    ("keep-dev-shm", Firejail::Plain),
    ("keep-fd", Firejail::Plain),
    ("keep-var-tmp", Firejail::Plain),
    ("mac", Firejail::Plain),
    ("machine-id", Firejail::Plain),
    ("memory-deny-write-execute", Firejail::Plain),
    ("mtu", Firejail::Plain),
    ("name", Firejail::Plain),
    ("net", Firejail::Plain),
    ("netmask", Firejail::Plain),
    ("netns", Firejail::Plain),
    ("nice", Firejail::Plain),
    ("no3d", Firejail::Plain),
    ("noautopulse", Firejail::Plain),
    ("noblacklist", Firejail::Plain),
    ("nodbus", Firejail::Plain),
    ("nodvd", Firejail::Plain),
    ("noexec", Firejail::Plain),
    ("nogroups", Firejail::Plain),
    ("noinput", Firejail::Plain),
    ("nonewprivs", Firejail::Plain),
    ("noprinters", Firejail::Plain),
    ("noprofile", Firejail::Plain),
    ("noroot", Firejail::Plain),
    ("nosound", Firejail::Plain),
    ("notv", Firejail::Plain),
    ("nou2f", Firejail::Plain),
    ("novideo", Firejail::Plain),
    ("nowhitelist", Firejail::Plain),
    ("overlay", Firejail::Plain),
    ("overlay-named", Firejail::Plain),
    ("overlay-tmpfs", Firejail::Plain),
    ("private-bin", Firejail::Plain),
    ("private-cache", Firejail::Plain),
    ("private-dev", Firejail::Plain),
    ("private-etc", Firejail::Plain),
    ("private-home", Firejail::Plain),
    ("private-lib", Firejail::Plain),
    ("private-opt", Firejail::Plain),
    ("private-srv", Firejail::Plain),
    ("private-tmp", Firejail::Plain),
    ("protocol", Firejail::Plain),
    ("quiet", Firejail::Plain),
    ("read-only", Firejail::Plain),
    ("read-write", Firejail::Plain),
    ("restrict-namespaces", Firejail::Plain),
    ("rlimit-as", Firejail::Plain),
    ("rlimit-cpu", Firejail::Plain),
    ("rlimit-fsize", Firejail::Plain),
    ("rlimit-nofile", Firejail::Plain),
    ("rlimit-nproc", Firejail::Plain),
    ("rlimit-sigpending", Firejail::Plain),
    ("rmenv", Firejail::Plain),
    ("seccomp", Firejail::Plain),
    ("seccomp.block-secondary", Firejail::Plain),
    ("seccomp.drop", Firejail::Plain),
    ("seccomp.keep", Firejail::Plain),
    ("seccomp-error-action", Firejail::Plain),
    ("timeout", Firejail::Plain),
    ("tmpfs", Firejail::Plain),
    ("tracelog", Firejail::Plain),
    ("veth-name", Firejail::Plain),
    ("whitelist", Firejail::Plain),
    ("writable-etc", Firejail::Plain),
    ("writable-run-user", Firejail::Plain),
    ("writable-var", Firejail::Plain),
    ("writable-var-log", Firejail::Plain),
    ("x11", Firejail::Plain),
    ("help", Firejail::NoCommand),
    ("version", Firejail::NoCommand),
    ("list", Firejail::NoCommand),
    ("tree", Firejail::NoCommand),
    ("top", Firejail::NoCommand),
    ("netstats", Firejail::NoCommand),
    ("shutdown", Firejail::NoCommand),
    ("get", Firejail::NoCommand),
    ("put", Firejail::NoCommand),
    ("ls", Firejail::NoCommand),
    ("cat", Firejail::NoCommand),
    ("bandwidth", Firejail::NoCommand),
    ("overlay-clean", Firejail::NoCommand),
    ("audit", Firejail::NoCommand),
    ("env", Firejail::Env),
    ("output", Firejail::Writes),
    ("output-stderr", Firejail::Writes),
    ("trace", Firejail::Writes),
    ("netfilter", Firejail::Reads),
    ("netfilter6", Firejail::Reads),
    ("hosts-file", Firejail::Reads),
    ("profile", Firejail::Profile),
    ("include", Firejail::Profile),
    ("private", Firejail::Remaps),
    ("bind", Firejail::Remaps),
    ("chroot", Firejail::Chroot),
    ("join", Firejail::Joins),
    ("join-filesystem", Firejail::Joins),
    ("join-network", Firejail::Joins),
    ("join-or-start", Firejail::Joins),
    ("private-cwd", Firejail::Chdir),
    ("shell", Firejail::Shell),
];

/// `firejail [--OPTION[=VALUE]...] [--] [CMD...]`: the command in a sandbox (the user's shell
/// without one); `-c` runs its words through that shell.
pub(super) fn firejail(out: &mut Unwrapped) -> Option<usize> {
    let mut i = 1;
    while let Some(word) = out.argv.get(i) {
        let Some(w) = lit(word).map(str::to_string) else {
            break;
        };
        let w = w.as_str();
        if w == "--" {
            i += 1;
            break;
        }
        if w == "-c" {
            firejail_c(out, i + 1);
            return None;
        }
        if w == "-?" {
            return None;
        }
        let Some(option) = w.strip_prefix("--") else {
            if w.starts_with('-') {
                unknown_option(out, "firejail", w);
                i += 1;
                continue;
            }
            break;
        };
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(Word::lit(value))),
            None => (option, None),
        };
        let kind = FIREJAIL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
        // `--seccomp.EPERM=...`, `--net.print=...`, `--debug-caps`: the families by prefix.
        let kind = kind.or_else(|| {
            if name.ends_with(".print") || name.starts_with("debug-") {
                Some(Firejail::NoCommand)
            } else if name.starts_with("seccomp.") {
                Some(Firejail::Plain)
            } else {
                None
            }
        });
        let Some(kind) = kind else {
            unknown_option(out, "firejail", w);
            i += 1;
            continue;
        };
        match (kind, value) {
            (Firejail::Plain, _) => {}
            (Firejail::NoCommand, _) => return None,
            (Firejail::Env, Some(setting)) => {
                match setting.as_lit().and_then(|s| s.split_once('=')) {
                    Some((name, value)) if is_name(name) => {
                        out.env.push((name.to_string(), Word::lit(value)))
                    }
                    _ => unknown_option(out, "firejail", w),
                }
            }
            (Firejail::Writes, Some(file)) => out.writes.push(file),
            (Firejail::Writes, None) => {}
            (Firejail::Reads, Some(file)) => out.reads.push(file),
            // `--netfilter` alone: the default filter.
            (Firejail::Reads, None) => {}
            (Firejail::Profile, file) => {
                out.problems.push(format!(
                    "`firejail {w}` loads settings airlock does not read, which can show the command any path under another name"
                ));
                out.reads.extend(file);
            }
            (Firejail::Remaps, Some(value)) => {
                remaps(out, "firejail", w.to_string());
                // `--bind=SRC,DEST`: SRC; `--private=DIR`: DIR, the command's home.
                let source = value.display().split(',').next().unwrap_or("").to_string();
                out.writes.push(Word::lit(&source));
            }
            // `--private` alone: a fresh home in memory, nothing of the real one.
            (Firejail::Remaps, None) => {}
            (Firejail::Chroot, _) => out.problems.push(format!(
                "`firejail {w}` makes the command's absolute paths lie under that directory, not where airlock judges them"
            )),
            (Firejail::Joins, _) => out.problems.push(format!(
                "`firejail {w}` runs the command inside another sandbox, whose paths are not the ones airlock judges"
            )),
            (Firejail::Chdir, dir) => {
                env::change_dir(out, Some(dir.unwrap_or_else(|| Word::lit("~"))))
            }
            (Firejail::Shell, Some(shell)) if shell.as_lit() == Some("none") => {}
            (Firejail::Shell, _) => out.problems.push(format!(
                "`firejail {w}` runs the command's words joined through a shell, which reads them again"
            )),
            // `--env` needs a value.
            (Firejail::Env, None) => unknown_option(out, "firejail", w),
        }
        i += 1;
    }
    if i >= out.argv.len() {
        opens_shell(out, "firejail");
        return None;
    }
    Some(i)
}

/// `firejail -c WORDS...`: the words joined are a string the user's shell runs.
fn firejail_c(out: &mut Unwrapped, from: usize) {
    let words: Option<Vec<&str>> = out.argv[from.min(out.argv.len())..]
        .iter()
        .map(lit)
        .collect();
    match words {
        Some(words) if !words.is_empty() => {
            let string = Word::lit(&words.join(" "));
            shell_string(out, "firejail", &string, Vec::new());
        }
        Some(_) => opens_shell(out, "firejail"),
        None => out
            .problems
            .push("`firejail -c` runs a command built at run time".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::unwrap;
    use crate::facts::shell::words::Word;

    use super::super::testing::{argv, program};

    #[test]
    fn bwrap_options_and_their_values_come_off_down_to_the_command() {
        assert_eq!(
            program(
                "bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent --setenv A 1 ls -la"
            ),
            vec!["ls", "-la"]
        );
        assert_eq!(
            program("bwrap --bind / / -- rm -rf /x"),
            vec!["rm", "-rf", "/x"]
        );
        assert_eq!(
            program("bwrap --overlay-src /a --overlay /rw /work /mnt --chmod 0700 /mnt cat f"),
            vec!["cat", "f"]
        );
    }

    #[test]
    fn a_bwrap_bind_that_renames_a_path_counts_it_as_read_or_written() {
        let u = unwrap(argv(
            "bwrap --ro-bind /home/u/.ssh /keys --bind /srv /data ls",
        ));
        assert_eq!(u.reads, vec![Word::lit("/home/u/.ssh")]);
        assert_eq!(u.writes, vec![Word::lit("/srv")]);
        assert_eq!(u.problems.len(), 2);
        let u = unwrap(argv("bwrap --ro-bind / / --bind /tmp /tmp ls"));
        assert!(u.reads.is_empty() && u.writes.is_empty() && u.problems.is_empty());
    }

    #[test]
    fn an_unknown_option_of_each_wrapper_is_a_problem_naming_it() {
        for (command, option) in [
            ("bwrap --frobnicate ls", "--frobnicate"),
            ("firejail --frobnicate ls", "--frobnicate"),
            ("systemd-run --user --frobnicate ls", "--frobnicate"),
            ("cgexec -z ls", "-z"),
            ("proxychains4 -x ls", "-x"),
        ] {
            let u = unwrap(argv(command));
            assert!(
                u.problems.iter().any(|p| p.contains(option)),
                "{command}: {:?}",
                u.problems
            );
        }
    }

    #[test]
    fn firejail_options_come_off_down_to_the_command() {
        assert_eq!(
            program(
                "firejail --noprofile --private-tmp --net=none --seccomp.EPERM=chmod rm -rf /x"
            ),
            vec!["rm", "-rf", "/x"]
        );
        let u = unwrap(argv("firejail --private=/srv/home --output=log ls"));
        assert_eq!(u.writes, vec![Word::lit("/srv/home"), Word::lit("log")]);
    }
}
