//! Wrappers that hand a command to something else to run: the service manager (`systemd-run`,
//! a unit outside this session, as root without `--user`), control groups (`cgexec`) and proxies
//! (`proxychains`). The command is judged as if it ran directly; `systemd-run` keeps an ask of
//! its own (see `PRIVILEGED`), and what the manager changes about the command (its directory,
//! its environment, `$NAME` in its words, unit properties that run other commands) is recorded
//! or is a question.

use super::getopt::{self, Spec, Takes};
use super::isolation::unknown_option;
use super::launchers::{note_unknown, opens_shell, operands_start};
use super::{Unwrapped, env, is_name, lit};
use crate::facts::shell::words::Word;

use Takes::{Nothing as N, Value as V};

const SYSTEMD_RUN: Spec = Spec {
    short: &[
        ('h', N),
        ('r', N),
        ('t', N),
        ('P', N),
        ('q', N),
        ('G', N),
        ('d', N),
        ('S', N),
        ('H', V),
        ('M', V),
        ('E', V),
        ('p', V),
        ('u', V),
        ('C', V),
    ],
    long: &[
        ("help", N),
        ("version", N),
        ("user", N),
        ("system", N),
        ("scope", N),
        ("slice-inherit", N),
        ("remain-after-exit", N),
        ("send-sighup", N),
        ("wait", N),
        ("tty", N),
        ("pty", N),
        ("pipe", N),
        ("quiet", N),
        ("on-timezone-change", N),
        ("on-clock-change", N),
        ("no-block", N),
        ("no-ask-password", N),
        ("collect", N),
        ("same-dir", N),
        ("shell", N),
        ("ignore-failure", N),
        ("unit", V),
        ("description", V),
        ("slice", V),
        ("host", V),
        ("machine", V),
        ("capsule", V),
        ("service-type", V),
        ("uid", V),
        ("gid", V),
        ("nice", V),
        ("setenv", V),
        ("property", V),
        ("on-active", V),
        ("on-boot", V),
        ("on-startup", V),
        ("on-unit-active", V),
        ("on-unit-inactive", V),
        ("on-calendar", V),
        ("timer-property", V),
        ("path-property", V),
        ("socket-property", V),
        ("working-directory", V),
        ("expand-environment", V),
        ("background", V),
        ("json", V),
        ("job-mode", V),
    ],
    // Its getopt string starts with `+`: options end at the command.
    permute: false,
};

/// Unit properties (`-p NAME=VALUE`) that only limit, account or confine what the command does.
/// Any other (`ExecStartPre=`, `RootDirectory=`, `BindPaths=`, `StandardOutput=file:...`, ...)
/// may run another command or show it other files, and is a question.
const LIMITING_PROPERTIES: &[&str] = &[
    "CPUAccounting",
    "CPUQuota",
    "CPUQuotaPeriodSec",
    "CPUWeight",
    "StartupCPUWeight",
    "CPUShares",
    "AllowedCPUs",
    "AllowedMemoryNodes",
    "CPUAffinity",
    "NUMAPolicy",
    "MemoryAccounting",
    "MemoryMin",
    "MemoryLow",
    "MemoryHigh",
    "MemoryMax",
    "MemoryLimit",
    "MemorySwapMax",
    "MemoryZSwapMax",
    "IOAccounting",
    "IOWeight",
    "StartupIOWeight",
    "TasksAccounting",
    "TasksMax",
    "Nice",
    "CPUSchedulingPolicy",
    "CPUSchedulingPriority",
    "IOSchedulingClass",
    "IOSchedulingPriority",
    "OOMScoreAdjust",
    "OOMPolicy",
    "RuntimeMaxSec",
    "TimeoutSec",
    "TimeoutStartSec",
    "TimeoutStopSec",
    "KillMode",
    "KillSignal",
    "SendSIGKILL",
    "SendSIGHUP",
    "Type",
    "RemainAfterExit",
    "CollectMode",
    "Description",
    "LimitCPU",
    "LimitFSIZE",
    "LimitDATA",
    "LimitSTACK",
    "LimitCORE",
    "LimitRSS",
    "LimitNOFILE",
    "LimitAS",
    "LimitNPROC",
    "LimitMEMLOCK",
    "LimitLOCKS",
    "LimitSIGPENDING",
    "LimitMSGQUEUE",
    "LimitNICE",
    "LimitRTPRIO",
    "LimitRTTIME",
    "NoNewPrivileges",
    "PrivateTmp",
    "PrivateNetwork",
    "PrivateDevices",
    "ProtectSystem",
    "ProtectHome",
    "ProtectKernelTunables",
    "ProtectKernelModules",
    "ProtectControlGroups",
    "MemoryDenyWriteExecute",
    "RestrictRealtime",
];

/// `-p NAME=VALUE`: a limit, the directory or environment the command gets, or a question.
fn systemd_property(out: &mut Unwrapped, property: &Word) {
    let Some((name, value)) = property.as_lit().and_then(|p| p.split_once('=')) else {
        out.problems.push(format!(
            "`systemd-run -p {}` sets a unit property airlock cannot read",
            property.display()
        ));
        return;
    };
    match name {
        _ if LIMITING_PROPERTIES.contains(&name) => {}
        "WorkingDirectory" => {
            let dir = value.trim_start_matches('-');
            env::change_dir(out, Some(Word::lit(dir)));
        }
        "Environment"
            if !value.contains(['"', '\'', '\\', '$', '%'])
                && value.split_whitespace().all(|s| {
                    s.split_once('=').is_some_and(|(n, _)| is_name(n))
                }) =>
        {
            for setting in value.split_whitespace() {
                if let Some((n, v)) = setting.split_once('=') {
                    out.env.push((n.to_string(), Word::lit(v)));
                }
            }
        }
        _ => out.problems.push(format!(
            "`systemd-run -p {name}=` sets a unit property airlock does not judge, which may run other commands or show the command other files"
        )),
    }
}

/// `systemd-run [OPTIONS] CMD...`: the command as a unit of the service manager, the system's
/// (as root) or with `--user` the user's, outside this session and its sandbox. A service (not
/// `--scope`) starts in `/` (the home directory for `--user`) unless told otherwise, and the
/// manager expands `$NAME` in the command's words itself.
pub(super) fn systemd_run(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &SYSTEMD_RUN);
    note_unknown(out, &read, "systemd-run");
    if read.has(&["h", "help", "version"]) {
        return None;
    }
    if read.has(&["S", "shell"]) {
        opens_shell(out, "systemd-run");
        return None;
    }
    // Without a command it refuses to start.
    if read.operands.is_empty() {
        return None;
    }
    for (names, what) in [
        (&["H", "host"][..], "on another host"),
        (&["M", "machine"][..], "in another machine or container"),
        (&["C", "capsule"][..], "in a capsule, as another user"),
    ] {
        for place in read.values(names) {
            out.problems.push(format!(
                "`systemd-run {}` runs the command {what}, whose files are not the ones airlock judges",
                place.display()
            ));
        }
    }
    for setting in read.values(&["E", "setenv"]) {
        if let Some((name, value)) = setting.as_lit().and_then(|s| s.split_once('='))
            && is_name(name)
        {
            out.env.push((name.to_string(), Word::lit(value)));
        } else if setting.is_dynamic() {
            out.problems.push(format!(
                "`systemd-run -E {}` sets a variable computed at run time",
                setting.display()
            ));
        }
    }
    let scope = read.has(&["scope"]);
    let dir = read.values(&["working-directory"]).pop();
    if dir.is_some() {
        env::change_dir(out, dir);
    } else if !scope && !read.has(&["d", "same-dir"]) {
        let user = read.opts.iter().rev().find_map(|o| match o.name.as_str() {
            "user" => Some(true),
            "system" => Some(false),
            _ => None,
        });
        let start = if user == Some(true) { "~" } else { "/" };
        env::change_dir(out, Some(Word::lit(start)));
    }
    for property in read.values(&["p", "property"]) {
        systemd_property(out, &property);
    }
    let expands = read
        .values(&["expand-environment"])
        .last()
        .is_none_or(|v| !matches!(v.as_lit(), Some("no" | "false" | "0" | "off")));
    if expands
        && let Some(word) = read
            .operands
            .iter()
            .find(|w| w.as_lit().is_some_and(|w| w.contains('$')))
    {
        out.problems.push(format!(
            "`systemd-run` expands `$NAME` in the command's words itself (`{}`), to values airlock does not see",
            word.display()
        ));
    }
    Some(operands_start(out, &read))
}

const CGEXEC: Spec = Spec {
    short: &[('g', V), ('h', N)],
    long: &[("sticky", N), ("help", N)],
    permute: false,
};

/// `cgexec [-g CONTROLLERS:PATH]... [--sticky] CMD...`: the command in other control groups.
pub(super) fn cgexec(out: &mut Unwrapped) -> Option<usize> {
    let read = getopt::read(&out.argv, 1, &CGEXEC);
    note_unknown(out, &read, "cgexec");
    if read.has(&["h", "help"]) || read.operands.is_empty() {
        return None;
    }
    Some(operands_start(out, &read))
}

/// `proxychains [-q] [-f CONFIG] CMD...` (and `proxychains4`): the command with its connections
/// sent through proxies. It reads at most two options, each exactly `-q` or `-f FILE`; any other
/// word there would be taken for the command.
pub(super) fn proxychains(name: &str, out: &mut Unwrapped) -> Option<usize> {
    let mut i = 1;
    for _ in 0..2 {
        match out.argv.get(i).and_then(lit) {
            Some("-q") => i += 1,
            Some("-f") => {
                let config = out.argv.get(i + 1)?.clone();
                out.reads.push(config);
                i += 2;
            }
            Some(w) if w.starts_with('-') => {
                let w = w.to_string();
                unknown_option(out, name, &w);
                i += 1;
            }
            _ => break,
        }
    }
    if let Some(w) = out.argv.get(i).and_then(lit)
        && w.starts_with('-')
    {
        let w = w.to_string();
        unknown_option(out, name, &w);
    }
    (i < out.argv.len()).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::super::unwrap;
    use crate::facts::shell::words::Word;

    use super::super::testing::{argv, program};

    #[test]
    fn systemd_run_cgexec_and_proxychains_come_off_down_to_the_command() {
        assert_eq!(
            program("systemd-run --user --scope -p MemoryMax=1G --wait --pty -E A=1 -- rm x"),
            vec!["rm", "x"]
        );
        assert_eq!(
            program("cgexec -g cpu,memory:grp --sticky rm x"),
            vec!["rm", "x"]
        );
        assert_eq!(
            program("proxychains4 -q -f /etc/p.conf curl x"),
            vec!["curl", "x"]
        );
        assert_eq!(program("proxychains curl x"), vec!["curl", "x"]);
        let u = unwrap(argv("proxychains4 -f p.conf curl x"));
        assert_eq!(u.reads, vec![Word::lit("p.conf")]);
    }

    #[test]
    fn proxychains_reads_two_options_at_most_and_only_exactly_q_and_f() {
        for command in [
            "proxychains4 -qf p.conf curl x",
            "proxychains4 -q -q -f p.conf curl x",
        ] {
            let u = unwrap(argv(command));
            assert!(
                u.problems
                    .iter()
                    .any(|p| p.contains("an option airlock does not know")),
                "{command}: {:?}",
                u.problems
            );
        }
    }

    #[test]
    fn a_systemd_service_starts_in_its_managers_directory_and_a_scope_where_it_is() {
        let chdir = |s: &str| unwrap(argv(s)).chdir.map(|w| w.display().to_string());
        assert_eq!(chdir("systemd-run rm -rf x").as_deref(), Some("/"));
        assert_eq!(chdir("systemd-run --user rm -rf x").as_deref(), Some("~"));
        assert_eq!(chdir("systemd-run --user --scope rm -rf x"), None);
        assert_eq!(chdir("systemd-run --user -d rm -rf x"), None);
        assert_eq!(
            chdir("systemd-run --working-directory=/etc rm x").as_deref(),
            Some("/etc")
        );
    }

    #[test]
    fn a_systemd_property_that_may_run_or_show_other_things_is_a_problem() {
        let u = unwrap(argv("systemd-run -p ExecStartPre=/bin/true ls"));
        assert!(u.problems.iter().any(|p| p.contains("ExecStartPre")));
        let u = unwrap(argv("systemd-run -p MemoryMax=1G -p CPUQuota=50% ls"));
        assert!(u.problems.is_empty(), "{:?}", u.problems);
    }
}

/// The rulings the policy gives these wrappers and the sandboxes of `isolation`, next to the
/// ones of what they run.
#[cfg(test)]
mod judged {
    use crate::approval::testworld::{World, world};
    use crate::protocol::Ruling;

    /// Each wrapper of this module and of `isolation`, as it is usually written.
    const WRAPPERS: &[&str] = &[
        "bwrap --bind / / --dev /dev --proc /proc",
        "bwrap --ro-bind / / --bind /tmp /tmp --unshare-all --die-with-parent --",
        "firejail --noprofile --private-tmp",
        "firejail --quiet --net=none --",
        "systemd-run --user",
        "systemd-run --user --scope -p MemoryMax=1G --wait",
        "systemd-run --scope --pty -E A=1",
        "cgexec -g cpu,memory:grp",
        "proxychains4 -q -f /etc/proxychains.conf",
        "proxychains",
    ];

    fn judged(w: &World, command: &str, ruling: Ruling, needle: &str) {
        let v = w.bash(command);
        let reasons = v.reason_lines();
        assert_eq!(v.ruling, ruling, "{command}: {reasons:#?}");
        assert!(
            reasons.iter().any(|r| r.contains(needle)),
            "{command}: no reason mentions {needle:?}: {reasons:#?}"
        );
    }

    #[test]
    fn the_hard_deny_of_a_shell_string_holds_through_every_wrapper() {
        let w = world();
        for wrapper in WRAPPERS {
            judged(
                &w,
                &format!("{wrapper} sh -c 'echo x >> ~/.bashrc'"),
                Ruling::Deny,
                "~/.bashrc",
            );
        }
    }

    #[test]
    fn the_hard_deny_of_deleting_outside_the_workspace_holds_through_every_wrapper() {
        let w = world();
        for wrapper in WRAPPERS {
            judged(
                &w,
                &format!("{wrapper} rm -rf /outside/dir"),
                Ruling::Deny,
                "/outside/dir",
            );
            judged(
                &w,
                &format!("{wrapper} cat ~/.ssh/id_rsa"),
                Ruling::Deny,
                "private key",
            );
        }
    }

    #[test]
    fn a_sandbox_or_service_unit_asks_for_itself_around_a_harmless_command() {
        let w = world();
        for (command, why) in [
            ("bwrap --ro-bind / / ls", "via `bwrap`"),
            (
                "bwrap --ro-bind / / --dev /dev -- cat src/main.rs",
                "via `bwrap`",
            ),
            ("firejail --noprofile ls", "via `firejail`"),
            ("systemd-run --user --scope ls", "via `systemd-run`"),
            ("systemd-run --user sh -c 'ls'", "via `systemd-run`"),
        ] {
            judged(&w, command, Ruling::Ask, why);
        }
    }

    #[test]
    fn cgexec_and_proxychains_keep_the_ruling_of_what_they_run() {
        let w = world();
        for (wrapped, direct) in [
            ("cgexec -g cpu:grp ls src", "ls src"),
            ("proxychains4 -q cat src/main.rs", "cat src/main.rs"),
        ] {
            assert_eq!(w.bash(wrapped).ruling, w.bash(direct).ruling, "{wrapped}");
        }
    }

    #[test]
    fn an_option_the_wrapper_does_not_know_asks_and_names_it() {
        let w = world();
        for (command, option) in [
            ("bwrap --ro-bind / / --frobnicate ls", "`--frobnicate`"),
            ("firejail --frobnicate ls", "`--frobnicate`"),
            ("systemd-run --user --frobnicate ls", "`--frobnicate`"),
            ("cgexec --frobnicate ls", "`--frobnicate`"),
            ("proxychains4 -x ls", "`-x`"),
        ] {
            judged(&w, command, Ruling::Ask, option);
        }
    }

    #[test]
    fn a_path_a_sandbox_shows_under_another_name_is_judged_where_it_really_is() {
        let w = world();
        judged(
            &w,
            "bwrap --ro-bind / / --ro-bind ~/.ssh /keys cat /keys/id_rsa",
            Ruling::Deny,
            "~/.ssh",
        );
        judged(
            &w,
            "bwrap --ro-bind / / --bind ~ /mnt rm -f /mnt/.bashrc",
            Ruling::Deny,
            "~",
        );
        // A writable bind lets the command write where it leads, whatever it names.
        judged(
            &w,
            "firejail --bind=/outside/dir,/mnt ls /mnt",
            Ruling::Deny,
            "/outside/dir",
        );
        judged(
            &w,
            "bwrap --ro-bind / / --ro-bind src /mnt ls /mnt",
            Ruling::Ask,
            "under another name",
        );
        // A link bwrap makes where a writable bind holds it is made on the host.
        judged(
            &w,
            "bwrap --bind / / --symlink ~/.bashrc /tmp/rc sh -c 'echo x >> /tmp/rc'",
            Ruling::Deny,
            "~/.bashrc",
        );
    }

    #[test]
    fn what_bwrap_creates_inside_its_own_root_is_not_a_write_on_the_host() {
        let w = world();
        let v = w.bash(
            "bwrap --ro-bind /usr /usr --symlink usr/lib64 /lib64 --dir /run/x --chmod 0700 /run/x --proc /proc --dev /dev ls",
        );
        assert_eq!(v.ruling, Ruling::Ask, "{:#?}", v.reason_lines());
        judged(
            &w,
            "bwrap --bind / / --dir /outside/dir/new ls",
            Ruling::Deny,
            "/outside/dir/new",
        );
    }

    #[test]
    fn a_systemd_service_runs_its_relative_paths_from_its_own_directory() {
        let w = world();
        // A user service starts in the home directory: `.bashrc` there is `~/.bashrc`.
        judged(
            &w,
            "systemd-run --user sh -c 'echo x >> .bashrc'",
            Ruling::Deny,
            "~/.bashrc",
        );
        judged(
            &w,
            "systemd-run --user -p ExecStartPre=/bin/true ls",
            Ruling::Ask,
            "ExecStartPre",
        );
        judged(
            &w,
            "systemd-run --user --scope cat '${HOME}/x'",
            Ruling::Ask,
            "expands `$NAME`",
        );
    }
}
