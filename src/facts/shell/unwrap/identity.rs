//! Wrappers that run a command as someone or somewhere else: other ids or groups (`setpriv`,
//! `runuser`, `su`, `sg`), other namespaces (`unshare`, `nsenter`) or another root (`chroot`).
//! The command they start is judged as if it ran directly, and each keeps an ask of its own:
//! what it changes is a privilege, whatever it runs. Options are read from a table (see
//! `getopt`); the helpers they share with the other launchers are in `launchers`.

use super::getopt::{self, Spec, Takes};
use super::launchers::{note_unknown, opens_shell, operands_start, shell_string};
use super::{SHELLS, Unwrapped, env, lit};
use crate::facts::shell::words::Word;

use Takes::{Nothing as N, Optional as O, Value as V};

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
