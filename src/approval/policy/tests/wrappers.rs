//! The red team's holes: wrappers the policy did not see through (a hard deny turned into a
//! grantable ask by `taskset`, `flock`, `script`, `env -S`, ...), airlock's own subcommands
//! reached through a computed word, recursive searches that print a workspace's secrets, and
//! `/dev/fd/..` climbing into another process's `/proc` entry. Each attack is here, with the
//! ordinary commands next to it that must keep their ruling.

use super::*;

fn reasons(v: &crate::protocol::Verdict) -> Vec<String> {
    v.reason_lines()
}

/// `wrapped` gets exactly the ruling and the reasons of `direct`.
fn judged_like(w: &World, pairs: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (wrapped, direct) in pairs {
        let (a, b) = (w.bash(wrapped), w.bash(direct));
        if a.ruling != b.ruling || reasons(&a) != reasons(&b) {
            wrong.push(format!(
                "{wrapped:?} => {:?} {:#?}\n  but {direct:?} => {:?} {:#?}",
                a.ruling,
                reasons(&a),
                b.ruling,
                reasons(&b)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn has_reason(w: &World, command: &str, ruling: Ruling, needle: &str) {
    let v = w.bash(command);
    assert_eq!(v.ruling, ruling, "{command}: {:#?}", reasons(&v));
    assert!(
        reasons(&v).iter().any(|r| r.contains(needle)),
        "{command}: no reason mentions {needle:?}: {:#?}",
        reasons(&v)
    );
}

#[test]
fn taskset_chrt_and_other_launchers_are_judged_by_the_command_they_run() {
    let rm = "rm -rf /outside/dir";
    let key = "cat ~/.ssh/id_rsa";
    let pairs: Vec<(String, &str)> = [
        ("taskset -c 0", rm),
        ("taskset -a 0x3", rm),
        ("taskset --cpu-list 0-3", key),
        ("chrt 10", key),
        ("chrt -f 10", rm),
        ("chrt --sched-runtime 5000 -d 0", rm),
        ("chrt --other", key),
        ("prlimit --nofile=10", rm),
        ("prlimit -n10 --cpu=5", key),
        ("numactl --cpunodebind=0", rm),
        ("numactl -N 0", key),
        ("numactl --membind 0 --physcpubind=1", rm),
        ("valgrind --leak-check=full --track-origins=yes", rm),
        ("ltrace -f -s 80", key),
        ("strace -f -e trace=file", rm),
        ("unbuffer", rm),
        ("unbuffer -p", key),
        ("xvfb-run -a", rm),
        ("xvfb-run -s '-screen 0 1024x768x24'", key),
        ("dbus-run-session --", rm),
        ("fakeroot --", key),
        ("fakeroot -u", rm),
        ("busybox", rm),
        ("nice -n 5 taskset -c 0", key),
    ]
    .iter()
    .map(|(wrapper, direct)| (format!("{wrapper} {direct}"), *direct))
    .collect();
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    judged_like(&world(), &pairs);
}

#[test]
fn a_wrapper_around_an_ordinary_command_keeps_that_commands_ruling() {
    judged_like(
        &world(),
        &[
            ("taskset -c 0 cargo test", "cargo test"),
            ("taskset -c 0 ls src", "ls src"),
            ("chrt -o 0 wc -l src/main.rs", "wc -l src/main.rs"),
            ("numactl -N 0 cat src/main.rs", "cat src/main.rs"),
            ("prlimit --nofile=1024 cargo build", "cargo build"),
        ],
    );
    check_table(
        &world(),
        Ruling::Allow,
        &["taskset -c 0 ls", "unbuffer cat src/main.rs", "chrt 0 true"],
    );
}

#[test]
fn a_shell_string_a_wrapper_runs_is_judged_like_the_string() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "flock F sh -c 'echo x >> ~/.bashrc'",
            "flock -n F -c 'echo x >> ~/.bashrc'",
            "flock -w 5 /tmp/lock rm -rf /outside/dir",
            "script -qc 'rm -rf /outside' /dev/null",
            "script -q /dev/null -c 'rm -rf /outside'",
            "script --command='cat ~/.ssh/id_rsa' /dev/null",
            "env -S 'sh -c \"echo >> ~/.bashrc\"'",
            "env -S'rm -rf /outside/dir'",
            "env -iS 'A=1 rm -rf /outside/dir'",
            "env --split-string='cat ~/.ssh/id_rsa'",
            "env -S '-C /etc rm -f passwd'",
            "runuser bob -c 'rm -rf /outside/dir'",
            "runuser - bob -c 'echo >> ~/.bashrc'",
            "runuser -u bob -c true rm -rf /outside/dir",
            "su -c 'rm -rf /outside/dir'",
            "sg docker 'rm -rf /outside/dir'",
            "tcsh -c 'rm -rf /outside/dir'",
            "csh -fc 'echo x >! ~/.bashrc'",
            "rbash -c 'rm -rf /outside/dir'",
            "fish -c 'rm -rf /outside/dir'",
            "fish -C 'cat ~/.ssh/id_rsa'",
            "busybox sh -c 'rm -rf /outside/dir'",
            "gdb -batch -ex '!rm -rf /outside/dir'",
            "gdb -ex 'shell rm -rf /outside/dir' ./prog",
            "gdb --batch --eval-command='shell cat ~/.ssh/id_rsa'",
            "strace -o '|rm -rf /outside/dir' ls",
            "parallel rm -rf ::: /outside/dir",
            "parallel 'rm -rf {}' ::: src /outside/dir",
            "parallel -j4 cat {} ::: ~/.ssh/id_rsa",
            "parallel cat ::: ~/.ssh/id_*",
            "parallel 'rm -rf {//}' ::: /outside/dir/x",
            "parallel ::: 'rm -rf /outside/dir'",
            "parallel cat {1} {2} ::: a b ::: ~/.ssh/id_rsa",
        ],
    );
}

#[test]
fn a_wrapper_that_runs_as_another_user_or_root_asks_for_itself_too() {
    let w = world();
    for (command, why) in [
        ("runuser -u bob -- cat src/main.rs", "via `runuser`"),
        ("runuser -u bob ls", "via `runuser`"),
        ("setpriv --reuid=1000 --clear-groups ls", "via `setpriv`"),
        ("nsenter -t 1 -n ls", "via `nsenter`"),
        ("unshare -r ls", "via `unshare`"),
        ("chroot / ls", "via `chroot`"),
        ("sudo bash -c 'ls'", "via `sudo`"),
        ("sudo -u bob sh -c 'cat src/main.rs'", "via `sudo`"),
        ("runuser bob -c 'ls'", "via `runuser`"),
        ("echo x | xargs sudo sh -c 'ls'", "via `sudo`"),
    ] {
        has_reason(&w, command, Ruling::Ask, why);
    }
    for (command, why, inner) in [
        (
            "runuser -u bob -- rm -rf /outside/dir",
            "via `runuser`",
            "/outside/dir",
        ),
        (
            "setpriv --no-new-privs rm -rf /outside/dir",
            "via `setpriv`",
            "/outside/dir",
        ),
        (
            "nsenter -t 1 -m rm -rf /outside/dir",
            "via `nsenter`",
            "/outside/dir",
        ),
        (
            "unshare -r cat ~/.ssh/id_rsa",
            "via `unshare`",
            "a private key",
        ),
        (
            "chroot / rm -rf /outside/dir",
            "via `chroot`",
            "/outside/dir",
        ),
        (
            "sudo sh -c 'rm -rf /outside/dir'",
            "via `sudo`",
            "/outside/dir",
        ),
    ] {
        has_reason(&w, command, Ruling::Deny, why);
        has_reason(&w, command, Ruling::Deny, inner);
    }
}

#[test]
fn chroot_into_another_directory_never_allows_and_chroot_to_root_runs_at_the_real_root() {
    let w = world();
    has_reason(
        &w,
        "chroot /srv/jail true",
        Ruling::Ask,
        "absolute paths lie under that directory",
    );
    has_reason(
        &w,
        "chroot --skip-chdir /srv/jail true",
        Ruling::Ask,
        "absolute paths lie under that directory",
    );
    // GNU chroot starts the command in the new `/`: a relative path is one under it.
    has_reason(&w, "chroot / rm -rf etc", Ruling::Deny, "/etc");
    check_table(&w, Ruling::Deny, &["chroot / cat ~/.ssh/id_rsa"]);
}

#[test]
fn an_option_a_wrapper_does_not_know_asks_instead_of_guessing() {
    let w = world();
    for (command, option) in [
        ("taskset --frobnicate 0 ls", "--frobnicate"),
        ("chrt -Q 10 ls", "-Q"),
        ("numactl --shm 1 ls", "--shm"),
        ("flock -c F ls", "-c"),
        ("prlimit --bogus=1 ls", "--bogus"),
        ("valgrind --no-such-option=1 ls", "--no-such-option"),
        ("gdb -zz --args ls", "-zz"),
        ("parallel --frob echo ::: a", "--frob"),
        ("strace --nonsense ls", "--nonsense"),
    ] {
        has_reason(&w, command, Ruling::Ask, option);
    }
}

#[test]
fn a_debugger_runs_code_so_it_asks_and_attaching_to_a_process_is_refused() {
    let w = world();
    has_reason(&w, "gdb ./prog", Ruling::Ask, "can run any program or code");
    has_reason(&w, "gdb -batch -ex run ./prog", Ruling::Ask, "can run any");
    has_reason(&w, "gdb --args ls -la", Ruling::Ask, "can run any code");
    has_reason(
        &w,
        "gdb --args rm -rf /outside/dir",
        Ruling::Deny,
        "outside",
    );
    check_table(
        &w,
        Ruling::Deny,
        &[
            "gdb -p 1",
            "gdb --pid=1 -batch -ex 'info proc'",
            "gdb ./prog 1",
            "strace -p 1",
            "strace -f -p 1 -e trace=read",
            "ltrace -p 1",
        ],
    );
    has_reason(
        &w,
        "taskset -p 0x3 1",
        Ruling::Ask,
        "changes a running process",
    );
}

#[test]
fn files_a_wrapper_writes_or_reads_itself_are_judged() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "strace -o ~/.bashrc ls",
            "strace --output=/outside/trace ls",
            "ltrace -o ~/.profile ls",
            "script -c ls ~/.bashrc",
            "script -O /outside/log -c ls",
            "valgrind --log-file=/outside/log ls",
            "xvfb-run -e ~/.bashrc ls",
            "fakeroot -s /outside/state ls",
            "gdb -x ~/.ssh/id_rsa ./prog",
            "parallel --joblog /outside/log echo ::: a",
        ],
    );
    has_reason(&world(), "flock lockfile true", Ruling::Ask, "lockfile");
}

#[test]
fn a_nameref_redirect_target_is_not_taken_for_the_word_it_was_given() {
    let w = world();
    for command in [
        "declare -n r=x; x=~/.bashrc; echo >> $r",
        "typeset -n r=x; x=~/.bashrc; echo hi > \"${r}\"",
    ] {
        let v = w.bash(command);
        assert_ne!(v.ruling, Ruling::Allow, "{command}");
        assert!(
            reasons(&v)
                .iter()
                .any(|r| r.contains("writes a path airlock cannot check")
                    && r.contains("refers to another variable")),
            "{command}: {:#?}",
            reasons(&v)
        );
    }
}

#[test]
fn airlock_reached_through_a_pattern_a_variable_or_a_computed_name_is_refused_like_the_literal() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "touch trust && airlock t?ust",
            "airlock appr?ve X",
            "airlock [a]pprove X",
            "airlock app* X",
            "airlock $(echo approve) X",
            "airlock {approve,x} X",
            "a=approve; airlock $a X",
            "airlock \"$SUB\" X",
            "airlock mcp accept server",
            "airlock mcp acc?pt server",
            "airlock --resume=cockpit-1",
            "airlock --res* cockpit-1",
            "taskset -c 0 airlock approve X",
            "flock F airlock trust",
            "$(which airlock) approve X",
            "\"$AIRLOCK\" approve X",
            "air*ck approve X",
            "~/.cargo/bin/air?ock trust",
            "sudo air*ck deny X",
        ],
    );
}

#[test]
fn airlocks_listings_and_a_computed_name_with_a_harmless_subcommand_keep_their_ruling() {
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "airlock policy check",
            "airlock sessions",
            "airlock approvals list",
            "airlock mcp list",
            "airlock audit verify *.jsonl",
            "$(which airlock) sessions",
            "air*ck sessions",
        ],
    );
}

#[test]
fn a_recursive_search_that_would_read_a_workspace_secret_asks_naming_it() {
    let w = world();
    for command in [
        "grep -r SECRET .",
        "grep -r x",
        "grep -rn --include='*' x .",
        "grep -d recurse x .",
        "egrep -r x .",
        "rg --hidden x",
        "rg -. x",
        "rg -uu x",
        "rg -uuu x",
        "ag -u x",
        "ag --hidden x",
        "ack x",
        "rg --hidden --file patterns.txt",
    ] {
        has_reason(
            &w,
            command,
            Ruling::Ask,
            "so it reads an environment file (.env): .env",
        );
    }
    // It also follows links out of the tree, which reach a private key: refused.
    has_reason(
        &w,
        "grep -R x .",
        Ruling::Deny,
        "reads an environment file (.env): .env",
    );
}

#[test]
fn a_search_that_skips_the_secret_or_never_reaches_it_stays_allowed() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "rg x",
            "rg -u x",
            "rg --files --hidden",
            "rg TODO src",
            "grep -r TODO src",
            "grep -rn --include='*.rs' TODO .",
            "grep -r --exclude=.env x .",
            "grep x .env.example src/main.rs",
            "git grep x",
            "ag x",
        ],
    );
}

#[test]
fn secret_named_files_and_private_keys_under_the_tree_are_found_too() {
    let w = world();
    let ws = w.policy.paths.workspace.clone();
    std::fs::create_dir_all(ws.join("config")).unwrap();
    std::fs::write(ws.join("config/secrets.yaml"), "token: x\n").unwrap();
    has_reason(&w, "rg x", Ruling::Ask, "config/secrets.yaml");
    has_reason(&w, "grep -r x config", Ruling::Ask, "config/secrets.yaml");

    let w = world();
    let ws = w.policy.paths.workspace.clone();
    std::fs::create_dir_all(ws.join("deploy")).unwrap();
    std::fs::write(
        ws.join("deploy/access"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n",
    )
    .unwrap();
    has_reason(&w, "rg x", Ruling::Deny, "deploy/access");
    std::fs::write(ws.join("deploy/server.key"), "x").unwrap();
    has_reason(&w, "grep -r x deploy", Ruling::Deny, "deploy/server.key");
    // Ignored by git, so rg skips it; grep -r does not.
    std::fs::write(ws.join(".gitignore"), "deploy/\n").unwrap();
    check_table(&w, Ruling::Allow, &["rg x"]);
    check_table(&w, Ruling::Deny, &["grep -r x .", "rg -u x"]);
}

#[test]
fn dev_fd_climbs_out_through_proc_self_like_the_kernel_does() {
    let w = world();
    check_table(
        &w,
        Ruling::Deny,
        &[
            "cat /dev/fd/../../1/environ",
            "cat /dev/stdin/../../../1/environ",
            "cat /dev/fd/../../1/mem",
            "cd /dev/fd/../../1 && cat environ",
        ],
    );
    has_reason(
        &w,
        "cat /dev/fd/../environ",
        Ruling::Ask,
        "the process environment",
    );
    check_table(
        &w,
        Ruling::Allow,
        &["cat /dev/fd/0", "echo hi > /dev/stdout"],
    );
}
