//! A glob is judged by every path it could name, not only by what it matches on this machine:
//! `cat ~/.ssh/id_*` is denied whether `~/.ssh` holds keys, only public keys, or nothing at all,
//! because where the key exists, that is what it reads. The expansion is judged too, so a glob
//! that names nothing sensitive keeps its verdict.

use super::*;
use crate::protocol::ReasonCode;

/// A world whose `~/.ssh` holds only what is not credential material.
fn world_with_only_public_keys() -> World {
    let w = world();
    let ssh = w.policy.paths.home.join(".ssh");
    std::fs::remove_file(ssh.join("id_rsa")).unwrap();
    std::fs::write(ssh.join("id_rsa.pub"), "ssh-rsa AAAA\n").unwrap();
    std::fs::write(ssh.join("known_hosts"), "host ssh-rsa AAAA\n").unwrap();
    w
}

/// A world whose home has no `.ssh` at all (the workspace link `keys` to it dangles).
fn world_without_ssh() -> World {
    let w = world();
    std::fs::remove_dir_all(w.policy.paths.home.join(".ssh")).unwrap();
    w
}

/// Globs that spell a credential path, each denied wherever they may match it.
const CREDENTIAL_GLOBS: &[&str] = &[
    "cat ~/.ssh/id_*",
    "cat ~/.ssh/*",
    "tar czf x.tgz ~/.aws/*",
    "cat /home/*/.ssh/id_rsa",
    "cat /home/*/.aws/*",
    "head ~/.gnupg/*.gpg",
    "cat ~/.ssh/id_[rd]sa",
    "cat ~/.ssh/id_?sa",
    "cat ~/.ssh/id_[!x]sa",
    "cat ~/.ssh/id_e*",
    "cat ~/.s*/*",
    "cat ~/.ss?/config",
    "cat ~/.aw?/credentials",
    "cat ~/.*/credentials",
    "cat /h*/*/.aws/credentials",
    "cat ~/.config/gcloud/*",
    "cat ~/.ssh/{id_*,known_hosts}",
    "base64 ~/.ssh/id_*",
    "grep -h . ~/.ssh/id_*",
    "cp ~/.ssh/id_* src/",
    "cat < ~/.ssh/id_*",
    "cat ~/.env*",
    "cat ../other-project/.env*",
];

#[test]
fn a_glob_that_spells_a_credential_path_is_denied_where_it_matches_nothing() {
    check_table(&world_without_ssh(), Ruling::Deny, CREDENTIAL_GLOBS);
}

#[test]
fn a_glob_that_spells_a_credential_path_is_denied_where_it_matches_only_harmless_files() {
    check_table(
        &world_with_only_public_keys(),
        Ruling::Deny,
        CREDENTIAL_GLOBS,
    );
}

#[test]
fn a_glob_that_spells_a_credential_path_is_denied_where_the_credential_exists() {
    check_table(&world(), Ruling::Deny, CREDENTIAL_GLOBS);
}

#[test]
fn a_glob_through_a_workspace_link_to_the_ssh_directory_is_denied_even_when_it_is_empty() {
    let w = world_with_only_public_keys();
    check_table(
        &w,
        Ruling::Deny,
        &["cat keys/*", "cat ke*/*", "cat keys/id_*"],
    );
}

#[test]
fn a_credential_glob_spelled_another_way_is_denied_where_it_matches_nothing() {
    check_table(
        &world_without_ssh(),
        Ruling::Deny,
        &[
            "cat ~/.ssh/\"id_\"*",
            "cat ~/'.ssh'/*",
            "cat $HOME/.ssh/id_*",
            "cat \"$HOME\"/.ssh/id_*",
            "cat ~/.SSH/ID_*",
            "cat ~/.ssh/id_{rsa,ed}*",
            "cat ~/.ssh/./id_*",
            "cat ~/.ssh//id_*",
            "cat ~/.ssh/../.ssh/id_*",
            "cat ~/.[s]sh/config",
            "cat /root/.ssh/*",
            "cat /Users/*/.ssh/*",
            "cat /*/*/.aws/credentials",
            "cat /etc/sha*",
            "cd ~ && cat .ssh/id_*",
            "cd ~/.aws && cat *",
            "cat x ~/.ssh/id_* 2>/dev/null",
            "grep -r KEY ~/.s*",
            "for f in ~/.ssh/id_*; do cat \"$f\"; done",
            "ln -s ~/.ssh/* src/",
            "ln -s ~/.aws/cred* c",
        ],
    );
}

#[test]
fn the_deny_for_a_glob_gives_the_reason_reading_the_credential_gives() {
    let w = world_without_ssh();
    let v = w.bash("cat ~/.ssh/id_*");
    let deny = v
        .reasons
        .iter()
        .find(|r| r.ruling == Ruling::Deny)
        .unwrap_or_else(|| panic!("{:#?}", v.reason_lines()));
    assert_eq!(deny.code, ReasonCode::CredentialMaterial);
    assert!(deny.message.contains("~/.ssh/id_*"), "{}", deny.message);
}

#[test]
fn a_glob_that_can_only_name_public_keys_or_ordinary_files_keeps_its_verdict() {
    let w = world_with_only_public_keys();
    check_table(
        &w,
        Ruling::Ask,
        &[
            "cat ~/.ssh/*.pub",
            "cat ~/.ssh/id_*.pub",
            "cat ~/*.txt",
            "ls ~/*",
            "du -sh ~/*",
            "cat ../other-project/*.md",
        ],
    );
    check_table(
        &w,
        Ruling::Allow,
        &[
            "cat src/*",
            "cat src/*.rs",
            "wc -l src/*.rs",
            "ls src/*",
            "du -sh src/*",
            "head -n 3 src/*.r?",
            "cat src/[mt]*.rs",
        ],
    );
}
