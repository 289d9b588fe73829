//! A link the command makes to credential material is judged as reading it: `ln -s ~/.ssh/id_rsa
//! key` leaves the key one `cat key` away, so it gets the deny `cat ~/.ssh/id_rsa` gets, however
//! the link is spelled (options, `--`, relative content, globs, `-t DIR`, `cp -s`). A link to an
//! ordinary file keeps the verdict it had.

use super::*;

#[test]
fn a_symlink_to_a_private_key_is_denied_like_reading_it() {
    let w = world();
    assert_eq!(w.bash("cat ~/.ssh/id_rsa").ruling, Ruling::Deny);
    check_table(
        &w,
        Ruling::Deny,
        &[
            "ln -s ~/.ssh/id_rsa key",
            "ln -sf ~/.ssh/id_rsa key",
            "ln -sfn ~/.ssh/id_rsa src/key",
            "ln -s -- ~/.ssh/id_ed25519 x",
            "ln --symbolic ~/.ssh/id_rsa x",
            "ln --sym ~/.ssh/id_rsa x",
            "ln -s ~/.ssh/id_rsa",
            "ln -s ~/.ssh/id_rsa src/",
            "ln -s -t src ~/.ssh/id_rsa",
            "ln -st src ~/.ssh/id_rsa",
            "ln --target-directory=src -s ~/.ssh/id_rsa",
            "ln -sT ~/.ssh/id_rsa key",
            "ln -sr ~/.ssh/id_rsa key",
            "ln --relative --symbolic ~/.ssh/id_rsa key",
            "cp -s ~/.ssh/id_rsa key",
            "cp --symbolic-link ~/.ssh/id_rsa key",
            "gln -s ~/.ssh/id_rsa key",
            "/bin/ln -s ~/.ssh/id_rsa key",
        ],
    );
}

#[test]
fn a_symlink_to_a_credential_store_is_denied_like_reading_it() {
    let w = world();
    check_table(
        &w,
        Ruling::Deny,
        &[
            "ln -s /home/u/.aws/credentials c",
            "ln -sf /home/u/.aws/credentials c",
            "ln -s ~/.aws/credentials c",
            "ln -s ~/.config/gcloud/credentials.db c",
            "ln -s ~/.ssh ssh",
            "ln -s ~/.gnupg g",
            "ln -s ~/.netrc n",
            "ln -s /etc/shadow s",
            "ln -s /root/.ssh/id_ed25519 k",
        ],
    );
}

#[test]
fn relative_link_content_is_read_from_the_links_own_directory() {
    // The world is `<dir>/ws` (workspace) beside `<dir>/home` (home, with `.ssh/id_rsa`).
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "ln -s ../../.ssh/id_rsa k",
            "ln -s ../home/.ssh/id_rsa k",
            "ln -s ../../home/.ssh/id_rsa src/k",
            "ln -s ../../home/.aws/credentials src/",
            "mkdir d && ln -s ../../home/.aws/credentials d/c",
            "cd src && ln -s ../../home/.ssh/id_rsa k",
            "ln -s ../home/.ssh k",
            // `keys` is a link in the workspace to `~/.ssh`.
            "ln -s keys/id_rsa k",
        ],
    );
}

#[test]
fn a_symlink_to_credentials_named_by_a_glob_or_a_variable_is_denied() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "ln -s ~/.ssh/id_* .",
            "ln -s ~/.ssh/* src/",
            "ln -s ~/.s*/id_rsa k",
            "ln -s $HOME/.ssh/id_rsa k",
            "ln -s \"$HOME/.aws/credentials\" c",
            "ln -s ~/.ssh/{id_rsa,config} src/",
        ],
    );
}

#[test]
fn a_symlink_to_a_credential_inside_a_longer_command_denies_the_whole_command() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "echo ok; ln -s ~/.ssh/id_rsa k",
            "true && ln -s ~/.ssh/id_rsa k",
            "ln -s ~/.ssh/id_rsa k || true",
            "bash -c 'ln -s ~/.ssh/id_rsa k'",
            "sh -c \"ln -sf ~/.aws/credentials c\"",
            "env ln -s ~/.ssh/id_rsa k",
            "command ln -s ~/.ssh/id_rsa k",
            "nice ln -s ~/.ssh/id_rsa k",
            "find . -maxdepth 0 -exec ln -s ~/.ssh/id_rsa k \\;",
            "echo k | xargs ln -s ~/.ssh/id_rsa",
        ],
    );
}

#[test]
fn a_symlink_to_a_credential_spelled_to_slip_past_the_link_parser_is_denied() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            // Options that make `ln` keep a backup (its links are then not placed) or take a value.
            "ln -bs ~/.ssh/id_rsa k",
            "ln -S .bak -s ~/.ssh/id_rsa k",
            "ln -sv ~/.ssh/id_rsa k",
            "ln -s ~/.ssh/id_rsa -- k",
            "ln -s ~/.ssh/id_rsa .",
            "ln -s ~/.ssh/../.ssh/id_rsa k",
            "ln -s ~/.ssh//id_rsa k",
            "ln -s ~/'.ssh'/id_rsa k",
            "ln -s ~root/.ssh/id_rsa k",
            "ln -s /proc/1/environ e",
            // A hard link is a second name for the key.
            "ln ~/.ssh/id_rsa k",
            "link ~/.ssh/id_rsa k",
            // Inside a function, a loop or a substitution.
            "f() { ln -s ~/.ssh/id_rsa k; }; f",
            "for i in 1; do ln -s ~/.ssh/id_rsa k$i; done",
            "echo $(ln -s ~/.ssh/id_rsa k)",
        ],
    );
}

#[test]
fn the_deny_for_a_link_to_a_key_gives_the_reason_reading_the_key_gives() {
    let w = world();
    let read = w.bash("cat ~/.ssh/id_rsa");
    let link = w.bash("ln -s ~/.ssh/id_rsa key");
    assert_eq!(link.ruling, Ruling::Deny);
    let read_reason = read
        .reasons
        .iter()
        .find(|r| r.ruling == Ruling::Deny)
        .expect("reading the key is denied");
    let link_reason = link
        .reasons
        .iter()
        .find(|r| r.ruling == Ruling::Deny)
        .unwrap_or_else(|| panic!("{:#?}", link.reason_lines()));
    assert_eq!(link_reason.code, read_reason.code);
    assert!(
        link_reason.message.starts_with(&read_reason.message)
            && link_reason.message.contains("`key`"),
        "{} / {}",
        link_reason.message,
        read_reason.message
    );
}

#[test]
fn a_link_to_an_ordinary_file_keeps_its_verdict() {
    let w = world();
    check_table(
        &w,
        Ruling::Ask,
        &[
            "ln -s src/main.rs m",
            "ln -sf src/main.rs m",
            "ln -sr src/main.rs m",
            "ln -s ../src src/lib",
            "ln -s /etc/hostname h",
            "ln -s ~/.bashrc b",
            "ln -s ~/.ssh/id_rsa.pub p",
            "ln -s ~/.ssh/known_hosts k",
            "ln -s ../other-project o",
            "ln -s ~/.ssh/*.pub src/",
            "cp -s src/main.rs m",
        ],
    );
    for command in ["ln -s src/main.rs m", "ln -s /etc/hostname h"] {
        let lines = w.bash(command).reason_lines();
        assert!(
            lines.iter().all(|l| !l.contains("makes a link to it")),
            "{command}: {lines:#?}"
        );
    }
}
