//! Attacks on path resolution: lexical tricks, tilde forms, symlinks.

use super::*;

// -- lexical attacks ---------------------------------------------------

#[test]
fn dot_dot_out_of_the_workspace_is_outside() {
    let w = World::new();
    fs::create_dir_all(w.root.join("ws-other")).unwrap();
    let raw = format!("{}/../ws-other/x", w.ws().display());
    let r = w.resolve(&raw);
    assert_eq!(r.path, w.root.join("ws-other/x"));
    assert_eq!(r.location, Location::Outside);
    assert!(!r.is_symlink_escape);
}

#[test]
fn a_sibling_sharing_the_workspace_prefix_is_not_inside() {
    let w = World::new();
    fs::create_dir_all(w.root.join("ws-evil")).unwrap();
    let r = w.resolve(w.root.join("ws-evil/x").to_str().unwrap());
    assert_eq!(r.location, Location::Outside);
}

#[test]
fn relative_dot_dot_chains_resolve_against_cwd() {
    let w = World::new();
    let cases = [
        (
            "./../../etc/passwd",
            w.root.parent().unwrap().join("etc/passwd"),
        ),
        ("src/../../x", w.root.join("x")),
        ("src/./../src//lib.rs", w.ws().join("src/lib.rs")),
    ];
    for (raw, expected) in cases {
        let r = w.resolve(raw);
        assert_eq!(r.path, expected, "{raw}");
    }
    assert_eq!(w.resolve("./../../etc/passwd").location, Location::Outside);
    assert_eq!(w.resolve("src/../../x").location, Location::Outside);
    assert_eq!(
        w.resolve("src/./../src//lib.rs").location,
        Location::Workspace
    );
}

#[test]
fn dot_dot_never_climbs_above_root() {
    let w = World::new();
    let raw = format!("{}etc/passwd", "../".repeat(64));
    let r = w.resolve(&raw);
    assert_eq!(r.path, PathBuf::from("/etc/passwd"));
    assert_eq!(r.sensitivity, vec![SystemDir]);
    assert_eq!(w.resolve("/../../..").path, PathBuf::from("/"));
}

#[test]
fn doubled_slashes_are_ignored() {
    let w = World::new();
    let r = w.resolve("//etc//shadow");
    assert_eq!(r.path, PathBuf::from("/etc/shadow"));
    assert_eq!(r.sensitivity, vec![CredentialStore, SystemDir]);
    assert_eq!(r.location, Location::Outside);
}

#[test]
fn empty_and_dot_name_the_cwd() {
    let w = World::new();
    for raw in ["", ".", "./", "src/.."] {
        let r = w.resolve(raw);
        assert_eq!(r.path, w.ws(), "{raw:?}");
        assert_eq!(r.location, Location::Workspace);
        assert!(r.exists);
    }
}

#[test]
fn a_trailing_slash_is_the_same_path() {
    let w = World::new();
    w.link("/etc", "ws/etc_link");
    let r = w.resolve("src/");
    assert_eq!(r.path, w.ws().join("src"));
    assert_eq!(r.location, Location::Workspace);
    let r = w.resolve("etc_link/");
    assert_eq!(r.path, PathBuf::from("/etc"));
    assert_eq!(r.location, Location::Outside);
    assert!(r.sensitivity.contains(&SystemDir));
    assert!(r.is_symlink_escape);
}

#[test]
fn relative_cwd_is_taken_relative_to_the_workspace() {
    let w = World::new();
    let r = resolve(&w.ctx, Path::new("src"), "main.rs");
    assert_eq!(r.path, w.ws().join("src/main.rs"));
}

// -- tilde -------------------------------------------------------------

#[test]
fn tilde_forms_expand_against_home() {
    let w = World::new();
    let home = w.ctx.home.clone();
    let cases = [
        ("~", home.clone()),
        ("~/", home.clone()),
        ("~/notes.txt", home.join("notes.txt")),
        ("~//etc/shadow", home.join("etc/shadow")),
        ("~alice/.ssh/id_rsa", w.root.join("alice/.ssh/id_rsa")),
        ("~alice", w.root.join("alice")),
    ];
    for (raw, expected) in cases {
        assert_eq!(w.resolve(raw).path, expected, "{raw}");
    }
    assert_eq!(w.resolve("~alice/x").location, Location::Outside);
}

#[test]
fn ssh_dot_dot_back_into_ssh_is_still_a_key() {
    let w = World::new();
    let r = w.resolve("~/.ssh/../.ssh/id_rsa");
    assert_eq!(r.path, w.ctx.home.join(".ssh/id_rsa"));
    assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore]);
}

#[test]
fn another_users_ssh_key_is_a_key() {
    let w = World::new();
    let r = w.resolve("~alice/.ssh/id_ed25519_sk");
    assert_eq!(r.sensitivity, vec![PrivateKey]);
    let r = w.resolve("/home/alice/.ssh/id_ed25519");
    assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore]);
}

// -- symlinks ----------------------------------------------------------

#[test]
fn a_workspace_symlink_to_etc_escapes() {
    let w = World::new();
    w.link("/etc", "ws/etc_link");
    let r = w.resolve("etc_link/shadow");
    assert_eq!(r.path, PathBuf::from("/etc/shadow"));
    assert_eq!(r.location, Location::Outside);
    assert!(r.is_symlink_escape);
    assert_eq!(r.sensitivity, vec![CredentialStore, SystemDir]);
}

#[test]
fn a_workspace_symlink_to_home_ssh_escapes_to_a_key() {
    let w = World::new();
    w.link(w.ctx.home.join(".ssh"), "ws/keys");
    let r = w.resolve("keys/id_ed25519");
    assert_eq!(r.path, w.ctx.home.join(".ssh/id_ed25519"));
    assert!(r.is_symlink_escape);
    assert_eq!(r.location, Location::Outside);
    assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore]);
}

#[test]
fn a_symlink_staying_inside_is_not_an_escape() {
    let w = World::new();
    w.link("src", "ws/alias");
    w.write("ws/src/lib.rs", "");
    let r = w.resolve("alias/lib.rs");
    assert_eq!(r.path, w.ws().join("src/lib.rs"));
    assert_eq!(r.location, Location::Workspace);
    assert!(!r.is_symlink_escape);
    assert!(r.exists);
}

#[test]
fn a_symlink_chain_is_followed_to_its_end() {
    let w = World::new();
    fs::create_dir_all(w.root.join("outside")).unwrap();
    fs::create_dir_all(w.ws().join("sub")).unwrap();
    w.link("b", "ws/a");
    w.link("sub/../c", "ws/b");
    w.link(w.root.join("outside"), "ws/c");
    let r = w.resolve("a/.env");
    assert_eq!(r.path, w.root.join("outside/.env"));
    assert!(r.is_symlink_escape);
    assert_eq!(r.location, Location::Outside);
    assert_eq!(r.sensitivity, vec![EnvFile]);
}

#[test]
fn a_symlink_loop_is_outside_and_missing() {
    let w = World::new();
    w.link("loop2", "ws/loop1");
    w.link("loop1", "ws/loop2");
    w.link("self", "ws/self");
    for raw in ["loop1/x", "self", "loop2"] {
        let r = w.resolve(raw);
        assert_eq!(r.location, Location::Outside, "{raw}");
        assert!(!r.exists, "{raw}");
        assert!(r.is_symlink_escape, "{raw}");
    }
}

#[test]
fn forty_hops_resolve_and_forty_one_do_not() {
    let w = World::new();
    fs::create_dir_all(w.ws().join("end")).unwrap();
    // l0 -> l1 -> ... -> l39 -> end : 40 hops
    for i in 0..40 {
        let target = if i == 39 {
            "end".to_string()
        } else {
            format!("l{}", i + 1)
        };
        w.link(target, &format!("ws/l{i}"));
    }
    let r = w.resolve("l0/x");
    assert_eq!(r.path, w.ws().join("end/x"));
    assert_eq!(r.location, Location::Workspace);
    w.link("l0", "ws/m");
    let r = w.resolve("m/x");
    assert_eq!(r.location, Location::Outside);
    assert!(!r.exists);
}

#[test]
fn dot_dot_after_a_symlinked_dir_climbs_the_target() {
    let w = World::new();
    fs::create_dir_all(w.root.join("outside/deep/er")).unwrap();
    w.link(w.root.join("outside/deep/er"), "ws/deep");
    let r = w.resolve("deep/../secret.txt");
    assert_eq!(r.path, w.root.join("outside/deep/secret.txt"));
    assert_eq!(r.location, Location::Outside);
    assert!(r.is_symlink_escape);
    assert_eq!(r.sensitivity, vec![SecretFile]);

    w.link("/etc/ssh", "ws/sshd");
    let r = w.resolve("sshd/../shadow");
    assert_eq!(r.path, PathBuf::from("/etc/shadow"));
    assert!(r.sensitivity.contains(&CredentialStore));
}

#[test]
fn dot_dot_that_escapes_only_lexically_is_still_outside() {
    // ws/a -> ws/b/c. The kernel reads a/../../x as ws/x; a tool that
    // normalises first reads it as <root>/x. The worse reading wins.
    let w = World::new();
    fs::create_dir_all(w.ws().join("b/c")).unwrap();
    w.link(w.ws().join("b/c"), "ws/a");
    let r = w.resolve("a/../../x");
    assert_eq!(r.path, w.root.join("x"));
    assert_eq!(r.location, Location::Outside);
}

#[test]
fn a_missing_component_makes_the_rest_lexical() {
    let w = World::new();
    let r = w.resolve("nope/deeper/../file.txt");
    assert_eq!(r.path, w.ws().join("nope/file.txt"));
    assert_eq!(r.location, Location::Workspace);
    assert!(!r.exists);
}

#[test]
fn a_missing_dir_then_dot_dot_still_follows_links() {
    let w = World::new();
    w.link("/etc", "ws/etc_link");
    let r = w.resolve("nope/../etc_link/shadow");
    assert_eq!(r.path, PathBuf::from("/etc/shadow"));
    assert!(r.is_symlink_escape);
}

#[test]
fn an_absolute_path_through_a_workspace_alias_is_inside() {
    let w = World::new();
    w.link(w.ws(), "ws_alias");
    let raw = format!("{}/src/x.rs", w.root.join("ws_alias").display());
    let r = w.resolve(&raw);
    assert_eq!(r.path, w.ws().join("src/x.rs"));
    assert_eq!(r.location, Location::Workspace);
    assert!(!r.is_symlink_escape);
}

#[test]
fn a_symlinked_git_hook_carries_the_hook_sensitivity() {
    // Writing through .git/hooks/pre-commit rewrites the hook even
    // though the bytes land in an ordinary file.
    let w = World::new();
    w.write("ws/scripts/hook.sh", "#!/bin/sh\n");
    w.link(w.ws().join("scripts/hook.sh"), "ws/.git/hooks/pre-commit");
    let r = w.resolve(".git/hooks/pre-commit");
    assert_eq!(r.path, w.ws().join("scripts/hook.sh"));
    assert_eq!(r.sensitivity, vec![GitInternals]);
}
