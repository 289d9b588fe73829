//! The red team's attack on the rules: an agent that edits the rules file it is judged by (one
//! outside `.airlock/`, one outside the workspace, the user config) by any route gets a hard deny;
//! a toml file next to it that airlock does not use is judged as before.

use super::*;
use crate::facts::paths::ActiveFile;
use crate::protocol::ReasonCode;

/// A world whose session uses `policy/rules.toml`, a rules file in the scratch temp dir, the
/// project config, a user config in an unusual place (`$XDG_CONFIG_HOME` inside the workspace)
/// and a user rules file in home.
fn guarded(mode: Mode) -> World {
    let mut w = world_with(mode, Rules::empty());
    let ws = w.policy.paths.workspace.clone();
    for dir in ["policy", "sub/deep", "xdg/airlock", ".airlock"] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
    }
    std::fs::write(ws.join("policy/rules.toml"), "deny = [\"bash(curl *)\"]\n").unwrap();
    std::fs::write(ws.join("policy/other.toml"), "x = 1\n").unwrap();
    std::fs::write(
        ws.join(".airlock/config.toml"),
        "rules = \"../policy/rules.toml\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("xdg/airlock/config.toml"), "mode = \"default\"\n").unwrap();
    std::fs::write(w.tmp().join("shared-rules.toml"), "ask = [\"bash\"]\n").unwrap();
    std::os::unix::fs::symlink("policy/rules.toml", ws.join("rules-link")).unwrap();
    std::os::unix::fs::symlink("policy", ws.join("policy-link")).unwrap();
    std::os::unix::fs::symlink("sub/deep", ws.join("deep-link")).unwrap();
    std::fs::hard_link(ws.join("policy/rules.toml"), ws.join("notes.txt")).unwrap();
    let home = w.policy.paths.home.clone();
    std::fs::create_dir_all(home.join(".config/airlock")).unwrap();
    std::fs::write(home.join(".config/airlock/rules.toml"), "").unwrap();
    let active = vec![
        home.join(".config/airlock/rules.toml"),
        ws.join("xdg/airlock/config.toml"),
        ws.join(".airlock/config.toml"),
        ws.join(".airlock/../policy/rules.toml"),
        w.tmp().join("shared-rules.toml"),
    ];
    w.policy.paths = w.policy.paths.clone().with_protected_files(&active);
    w
}

fn assert_tampering_denied(v: &Verdict, what: &str) {
    assert_eq!(v.ruling, Ruling::Deny, "{what}: {:#?}", v.reason_lines());
    assert!(
        v.reasons
            .iter()
            .any(|r| r.code == ReasonCode::TampersWithAirlock && r.ruling == Ruling::Deny),
        "{what}: {:#?}",
        v.reason_lines()
    );
}

#[test]
fn write_file_and_edit_file_on_the_active_rules_file_are_denied_even_in_auto_edit() {
    let w = guarded(Mode::AutoEdit);
    let write = w.tool(
        "write_file",
        json!({"path": "policy/rules.toml", "content": "allow = [\"bash(git *)\"]\n"}),
    );
    assert_tampering_denied(&write, "write_file");
    let message = &write.reasons[0].message;
    assert!(
        message.contains("policy/rules.toml") && message.contains("airlock is using"),
        "{message}"
    );
    let edit = w.tool(
        "edit_file",
        json!({"path": "policy/rules.toml", "old": "deny", "new": "allow"}),
    );
    assert_tampering_denied(&edit, "edit_file");
    for path in ["xdg/airlock/config.toml", ".airlock/config.toml"] {
        let v = w.tool("write_file", json!({"path": path, "content": ""}));
        assert_tampering_denied(&v, path);
    }
}

#[test]
fn a_toml_file_next_to_the_active_rules_file_is_judged_as_before() {
    let w = guarded(Mode::AutoEdit);
    let v = w.tool(
        "write_file",
        json!({"path": "policy/other.toml", "content": "x = 2\n"}),
    );
    assert_eq!(v.ruling, Ruling::Allow, "{:#?}", v.reason_lines());
    let plain = world_with(Mode::Default, Rules::empty());
    std::fs::create_dir_all(plain.policy.paths.workspace.join("policy")).unwrap();
    let w = guarded(Mode::Default);
    for command in [
        "echo x >> policy/other.toml",
        "sed -i s/1/2/ policy/other.toml",
        "mv x policy/other.toml",
        "rm policy/other.toml",
    ] {
        let (got, before) = (w.bash(command), plain.bash(command));
        assert_eq!(
            (got.ruling, got.risk),
            (before.ruling, before.risk),
            "{command}: {:#?}",
            got.reason_lines()
        );
        assert_eq!(got.ruling, Ruling::Ask, "{command}");
    }
    assert_eq!(w.bash("cat policy/rules.toml").ruling, Ruling::Allow);
    assert_eq!(
        w.tool("read_file", json!({"path": "policy/rules.toml"}))
            .ruling,
        Ruling::Allow
    );
}

#[test]
fn shell_writes_deletes_and_renames_over_the_active_rules_file_are_denied() {
    let w = guarded(Mode::Default);
    for command in [
        "echo 'allow = [\"bash(git *)\"]' >> policy/rules.toml",
        "sed -i s/deny/allow/ policy/rules.toml",
        "mv x policy/rules.toml",
        "rm policy/rules.toml",
        "rm -f ./policy//rules.toml",
        "mv policy/rules.toml policy/old.toml",
        "cp /dev/null policy/rules.toml",
        "tee policy/rules.toml < x",
        "truncate -s 0 policy/rules.toml",
        "ln -sf /dev/null policy/rules.toml",
        "cd policy; echo x > rules.toml",
        "echo x > sub/../policy/rules.toml",
        "echo x > POLICY/RULES.TOML",
        "echo x >> {tmp}/shared-rules.toml",
        "rm {tmp}/shared-rules.toml",
        "echo mode = 1 > xdg/airlock/config.toml",
    ] {
        let v = w.bash(command);
        assert_tampering_denied(&v, command);
    }
}

#[test]
fn deleting_or_moving_a_directory_that_holds_the_active_rules_file_is_denied() {
    let w = guarded(Mode::Default);
    for command in [
        "rm -rf policy",
        "mv policy policy.old",
        "rm -rf .",
        "rm -r xdg",
    ] {
        let v = w.bash(command);
        assert_tampering_denied(&v, command);
    }
}

#[test]
fn writes_through_a_symlink_or_a_hard_link_to_the_active_rules_file_are_denied() {
    let w = guarded(Mode::AutoEdit);
    for path in ["rules-link", "policy-link/rules.toml", "notes.txt"] {
        let v = w.tool(
            "write_file",
            json!({"path": path, "content": "allow = []\n"}),
        );
        assert_tampering_denied(&v, path);
        let v = w.bash(&format!("echo x >> {path}"));
        assert_tampering_denied(&v, path);
    }
    // Only the normalising reading lands on the rules file: `deep-link/..` is `sub` to the kernel.
    let v = w.bash("echo x > deep-link/../policy/rules.toml");
    assert_tampering_denied(&v, "deep-link/../policy/rules.toml");
}

#[test]
fn writing_into_a_directory_that_holds_an_active_file_asks_and_says_it_may_replace_it() {
    let w = guarded(Mode::AutoEdit);
    for command in ["cp /dev/null policy/", "tar -xf a.tar", "mv x policy-link"] {
        let v = w.bash(command);
        assert_eq!(v.ruling, Ruling::Ask, "{command}: {:#?}", v.reason_lines());
        assert!(
            v.reasons
                .iter()
                .any(|r| r.code == ReasonCode::TampersWithAirlock
                    && r.message.contains("may replace")),
            "{command}: {:#?}",
            v.reason_lines()
        );
    }
    // A deny for another reason keeps its own words.
    let v = w.bash("rm -rf ~");
    assert_eq!(v.ruling, Ruling::Deny);
    assert!(
        v.reasons
            .iter()
            .all(|r| r.code != ReasonCode::TampersWithAirlock),
        "{:#?}",
        v.reason_lines()
    );
    // Never looser than without the active file: a write into the state directory stays denied.
    let mut w = guarded(Mode::Default);
    let state = w.policy.paths.state_dir.clone();
    std::fs::write(state.join("held.toml"), "").unwrap();
    w.policy.paths = w
        .policy
        .paths
        .clone()
        .with_protected_files(&[state.join("held.toml")]);
    assert_eq!(
        w.bash(&format!("cp /dev/null {}/", state.display())).ruling,
        Ruling::Deny
    );
}

#[test]
fn the_path_facts_name_the_active_file_a_path_lands_on() {
    let w = guarded(Mode::Default);
    let ctx = &w.policy.paths;
    let rules = ctx.workspace.join("policy/rules.toml");
    let at = |raw: &str| crate::facts::paths::resolve(ctx, &ctx.workspace, raw).active_file;
    assert_eq!(at("rules-link"), Some(ActiveFile::Is(rules.clone())));
    assert_eq!(at("notes.txt"), Some(ActiveFile::Is(rules.clone())));
    assert_eq!(at("policy"), Some(ActiveFile::Holds(rules)));
    assert_eq!(at("policy/other.toml"), None);
    assert_eq!(at("src/main.rs"), None);
}

#[test]
fn making_a_hard_link_to_a_file_counts_as_writing_it() {
    let w = guarded(Mode::Default);
    for command in [
        "ln policy/rules.toml x && echo y >> x",
        "link policy/rules.toml x",
        "cp -l policy/rules.toml x",
        "cp --link policy/rules.toml x",
        "ln -t sub policy/rules.toml",
    ] {
        assert_tampering_denied(&w.bash(command), command);
    }
    // Outside the workspace, a hard link would be a way to edit a file there from inside.
    assert_eq!(w.bash("ln ~/.bashrc x").ruling, Ruling::Deny);
    // A symbolic link gives no new way in: writes through it are judged where they land.
    for command in [
        "ln -s policy/rules.toml x",
        "ln --symbolic policy/rules.toml x",
    ] {
        let v = w.bash(command);
        assert_eq!(v.ruling, Ruling::Ask, "{command}: {:#?}", v.reason_lines());
    }
}
