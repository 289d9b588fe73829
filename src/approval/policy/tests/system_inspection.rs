//! Programs that only look at the running system or format text: open files and sockets
//! (`lsof`, `ss`, `netstat`), one batch snapshot of the processes (`top -b -n N`, `ps`), manual
//! pages (`man`, `apropos`, `whatis`), the text formatters and `stat` with a format. Their
//! read-only forms are allowed; the forms that run a program, write a file, signal a process or
//! take the terminal still ask, and a credential file they are pointed at is denied as any read.

use super::*;

#[test]
fn listing_open_files_and_sockets_is_allowed() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "lsof -i :8080",
            "lsof -i tcp:443 -n -P",
            "lsof -nP -iTCP -sTCP:LISTEN",
            "lsof -t -i :3000",
            "lsof -p 123",
            "lsof -u root -a -c cargo",
            "lsof +D src",
            "lsof +d src",
            "lsof src/main.rs",
            "lsof -- src/main.rs",
            "ss -tlnp",
            "ss -s",
            "ss -tan state established",
            "ss -lntu '( sport = :8080 )'",
            "netstat -an",
            "netstat -tlnp",
            "netstat -rn",
            "netstat -i",
        ],
    );
}

#[test]
fn a_batch_snapshot_of_the_processes_is_allowed() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "top -b -n 1",
            "top -bn1",
            "top -bn 1",
            "top -n 1 -b",
            "top -b -n1 -o %MEM",
            "top -b -n 2 -d 0.5",
            "top -bn1 -u root",
            "top -b -n 1 -p 123 -H -c",
            "top -b -n 1 -w 200",
            "ps -eo pid,user,comm",
            "ps -o pid,etime,cmd -p 1",
            "ps -u steve",
            "ps o pid,user",
            "ps aux --sort=-%mem",
            "ps -ef --forest",
            "ps -C cargo -o pid=",
        ],
    );
}

#[test]
fn top_that_keeps_running_or_takes_the_screen_asks() {
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "top",
            "top -b",
            "top -n 1",
            "top -d 1",
            "top -b -n 0x",
            "top -b -n 1 -Z",
            "top -b -n 1 src/main.rs",
        ],
    );
}

#[test]
fn ps_that_prints_other_processes_environments_is_still_denied() {
    check_table(
        &world(),
        Ruling::Deny,
        &["ps axe", "ps eww", "ps e", "ps -o pid e", "ps o pid,user e"],
    );
}

#[test]
fn looking_up_a_manual_page_is_allowed() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "man ls",
            "man 2 open",
            "man -k socket",
            "man -f ls",
            "man -w ls",
            "man -a printf",
            "man -s 3 printf",
            "man --sections=3 printf",
            "MANPAGER=cat man ls",
            "MANWIDTH=80 man ls",
            "man ls | cat",
            "apropos socket",
            "apropos -s 2 open",
            "apropos -r '^open'",
            "whatis ls",
            "whatis -w 'ls*'",
            "man -l src/main.rs",
        ],
    );
}

#[test]
fn a_manual_lookup_that_runs_a_program_asks() {
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "man -P 'sh -c id' ls",
            "man -Pcat ls",
            "man --pager=evil ls",
            "man --pager evil ls",
            "man -H ls",
            "man -Hfirefox ls",
            "man --html=firefox ls",
            "man -X ls",
            "man -C evil.conf ls",
            "man --config-file=evil.conf ls",
            "MANPAGER='sh -c id' man ls",
            "PAGER=./evil man ls",
            "MANOPT=-Pevil man ls",
            "BROWSER=./x man -H ls",
            "apropos -C evil.conf x",
            "less src/main.rs",
        ],
    );
}

#[test]
fn a_manual_page_given_as_a_file_is_read_under_the_normal_rules() {
    let w = world();
    check_table(
        &w,
        Ruling::Deny,
        &[
            "man ~/.ssh/id_rsa",
            "man -l ~/.ssh/id_rsa",
            "man --local-file ~/.aws/credentials",
            "man ./keys/id_rsa",
        ],
    );
    check_table(
        &w,
        Ruling::Ask,
        &["man /etc/hostname", "man -l ../other-project/x.1"],
    );
}

#[test]
fn text_formatters_read_files_under_the_normal_rules() {
    let w = world();
    check_table(
        &w,
        Ruling::Allow,
        &[
            "fmt src/main.rs",
            "fmt -w 72 src/main.rs",
            "fmt --width=72 -u src/main.rs",
            "fold -w 40 src/main.rs",
            "fold -sw40 src/main.rs",
            "column -t src/main.rs",
            "column -s , -t src/main.rs",
            "pr src/main.rs",
            "pr -2 -t src/main.rs",
            "pr -h /etc/shadow src/main.rs",
            "pr --header=title -l 40 -w 100 src/main.rs",
            "pr -n -o 4 src/main.rs",
            "pr +2 src/main.rs",
            "nl src/main.rs",
            "nl -ba -w3 src/main.rs",
            "expand src/main.rs",
            "expand -t 4 src/main.rs",
            "unexpand -a src/main.rs",
            "cat src/main.rs | fmt",
        ],
    );
    check_table(
        &w,
        Ruling::Deny,
        &[
            "fmt ~/.ssh/id_rsa",
            "fmt -w 72 ~/.ssh/id_rsa",
            "fold ~/.ssh/id_rsa",
            "column ~/.aws/credentials",
            "pr ~/.ssh/id_rsa",
            "pr -h x ~/.ssh/id_rsa",
            // `-n` takes what follows it in the word as its own value: `h` is not `-h`.
            "pr -nh ~/.ssh/id_rsa",
            "pr -n: ~/.ssh/id_rsa",
            "nl ~/.ssh/id_rsa",
            "expand ~/.ssh/id_rsa",
            "unexpand ~/.ssh/id_rsa",
        ],
    );
    check_table(
        &w,
        Ruling::Ask,
        &["pr /etc/hostname", "fmt src/main.rs > out.txt"],
    );
}

#[test]
fn stat_with_a_format_only_looks_at_metadata() {
    let w = world();
    check_table(
        &w,
        Ruling::Allow,
        &[
            "stat src/main.rs",
            "stat -c %s src/main.rs",
            "stat -c '%U %G' src/main.rs",
            "stat --format=%U src/main.rs",
            "stat --format %U src/main.rs",
            "stat --printf='%s\\n' src/main.rs",
            "stat -L src/main.rs",
            "stat -f src",
            "stat -L -c %s src/main.rs",
            "stat -c %t /dev/null",
            // A disk's node: its type and numbers, not what it holds.
            "stat -c %t /dev/sda",
        ],
    );
    // Another file outside the workspace asks; a credential is denied.
    check_table(&w, Ruling::Ask, &["stat -c %s /etc/hostname"]);
    check_table(
        &w,
        Ruling::Deny,
        &["stat -c %s ~/.ssh/id_rsa", "stat -L keys/id_rsa"],
    );
}

#[test]
fn system_inspection_options_that_write_or_signal_still_ask() {
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "ss -K dst 10.0.0.1",
            "ss --kill state established",
            "ss -D out.bin",
            "ss --diag=out.bin",
            "lsof -D b",
            "lsof -D u",
        ],
    );
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "ss -D ~/.bashrc",
            "ss -F ~/.ssh/id_rsa",
            "lsof +D ~/.ssh",
            "lsof ~/.ssh/id_rsa",
        ],
    );
}
