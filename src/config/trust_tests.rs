use std::path::{Path, PathBuf};

use super::*;
use crate::config::{ConfigFlags, Env, Resolved, resolve};

struct HomeOnly(String);

impl Env for HomeOnly {
    fn var(&self, name: &str) -> Option<String> {
        (name == "HOME").then(|| self.0.clone())
    }
}

/// A project whose config names `rules` (relative to `.airlock/`), with that rules file written.
struct Project {
    dir: tempfile::TempDir,
    ws: PathBuf,
    state: PathBuf,
    env: HomeOnly,
}

const LOOSE: &str = "allow = [\"bash(curl *)\"]\ndeny = [\"bash(rm *)\"]\n";

fn project(rules_key: &str, rules_file: Option<&Path>) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".airlock")).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::write(
        ws.join(".airlock/config.toml"),
        format!("rules = {rules_key:?}\nbase_url = \"http://127.0.0.1:4010/v1\"\n"),
    )
    .unwrap();
    if let Some(file) = rules_file {
        let file = if file.is_absolute() {
            file.to_path_buf()
        } else {
            ws.join(file)
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, LOOSE).unwrap();
    }
    Project {
        state: dir.path().join("state"),
        env: HomeOnly(dir.path().join("home").display().to_string()),
        ws,
        dir,
    }
}

impl Project {
    fn resolved(&self) -> Resolved {
        resolve(&self.ws, &ConfigFlags::default(), &self.env, &self.state).unwrap()
    }

    fn allows(&self) -> usize {
        let rules = self.resolved().load_rules().unwrap();
        rules
            .rules
            .iter()
            .filter(|r| r.action == crate::approval::rules::Action::Allow)
            .count()
    }
}

#[test]
fn a_changed_rules_file_outside_airlock_dir_untrusts_the_project_and_the_note_names_it() {
    let p = project("../policy/rules.toml", Some(Path::new("policy/rules.toml")));
    trust_project(&p.state, &p.ws).unwrap();
    let r = p.resolved();
    assert!(r.project_trusted && r.trust_note.is_none());
    assert_eq!(p.allows(), 1);

    std::fs::write(
        p.ws.join("policy/rules.toml"),
        "allow = [\"bash(git *)\"]\n",
    )
    .unwrap();
    let r = p.resolved();
    assert!(!r.project_trusted);
    assert!(
        r.base_url.is_none(),
        "an untrusted project cannot redirect the model"
    );
    let note = r.trust_note.unwrap();
    let rules = std::fs::canonicalize(p.ws.join("policy/rules.toml")).unwrap();
    assert!(note.contains(&rules.display().to_string()), "{note}");
    assert!(
        note.contains("changed") && note.contains("airlock trust"),
        "{note}"
    );
    assert_eq!(p.allows(), 0, "the edited file's allow rules do not apply");
}

#[test]
fn a_changed_rules_file_outside_the_workspace_untrusts_the_project() {
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("shared/rules.toml");
    let p = project(file.to_str().unwrap(), Some(&file));
    let listing = trust_project(&p.state, &p.ws).unwrap();
    assert!(listing.contains("(outside the workspace)"), "{listing}");
    assert!(p.resolved().project_trusted);

    std::fs::write(&file, "allow = [\"bash(git *)\"]\n").unwrap();
    let note = p.resolved().trust_note.unwrap();
    let physical = std::fs::canonicalize(&file).unwrap();
    assert!(note.contains(&physical.display().to_string()), "{note}");
}

#[test]
fn trust_lists_every_file_it_trusts_with_its_full_hash() {
    let p = project("../policy/rules.toml", Some(Path::new("policy/rules.toml")));
    let listing = trust_project(&p.state, &p.ws).unwrap();
    let config = std::fs::canonicalize(p.ws.join(".airlock/config.toml")).unwrap();
    let rules = std::fs::canonicalize(p.ws.join("policy/rules.toml")).unwrap();
    for (path, bytes) in [
        (&config, std::fs::read(&config).unwrap()),
        (&rules, LOOSE.as_bytes().to_vec()),
    ] {
        let line = format!("sha256 {}  {}", sha256(&bytes), path.display());
        assert!(listing.contains(&line), "{line}\n{listing}");
    }
    assert!(!listing.contains("outside the workspace"), "{listing}");
}

#[test]
fn repointing_a_symlink_to_another_rules_file_untrusts_the_project_even_with_equal_content() {
    let p = project("../current/rules.toml", None);
    for v in ["v1", "v2"] {
        std::fs::create_dir_all(p.ws.join(v)).unwrap();
        std::fs::write(p.ws.join(v).join("rules.toml"), LOOSE).unwrap();
    }
    std::os::unix::fs::symlink("v1", p.ws.join("current")).unwrap();
    trust_project(&p.state, &p.ws).unwrap();
    assert!(p.resolved().project_trusted);

    std::fs::remove_file(p.ws.join("current")).unwrap();
    std::os::unix::fs::symlink("v2", p.ws.join("current")).unwrap();
    let note = p.resolved().trust_note.unwrap();
    let v2 = std::fs::canonicalize(p.ws.join("v2/rules.toml")).unwrap();
    let v1 = std::fs::canonicalize(p.ws.join("v1/rules.toml")).unwrap();
    assert!(note.contains(&v2.display().to_string()), "{note}");
    assert!(note.contains(&v1.display().to_string()), "{note}");
}

#[test]
fn a_config_edited_to_pull_in_a_new_rules_file_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".airlock")).unwrap();
    let config = ws.join(".airlock/config.toml");
    std::fs::write(&config, "mode = \"auto-edit\"\n").unwrap();
    let state = dir.path().join("state");
    let env = HomeOnly(dir.path().display().to_string());
    trust_project(&state, &ws).unwrap();
    std::fs::write(ws.join("rules.toml"), LOOSE).unwrap();
    std::fs::write(&config, "mode = \"auto-edit\"\nrules = \"../rules.toml\"\n").unwrap();
    let r = resolve(&ws, &ConfigFlags::default(), &env, &state).unwrap();
    assert!(!r.project_trusted);
    let note = r.trust_note.unwrap();
    let rules = std::fs::canonicalize(ws.join("rules.toml")).unwrap();
    assert!(note.contains(&rules.display().to_string()), "{note}");
    assert!(note.contains("config.toml changed"), "{note}");
}

#[test]
fn a_missing_rules_file_cannot_be_trusted_and_the_error_names_it() {
    let p = project("../policy/rules.toml", None);
    let err = format!("{:#}", trust_project(&p.state, &p.ws).unwrap_err());
    assert!(
        err.contains("policy/rules.toml") && err.contains("`rules`"),
        "{err}"
    );
    assert!(!p.state.join("trust.json").exists());
}

#[test]
fn a_rules_file_that_disappears_after_trust_untrusts_the_project() {
    let p = project("../policy/rules.toml", Some(Path::new("policy/rules.toml")));
    trust_project(&p.state, &p.ws).unwrap();
    std::fs::remove_file(p.ws.join("policy/rules.toml")).unwrap();
    let r = p.resolved();
    assert!(!r.project_trusted);
    let note = r.trust_note.unwrap();
    assert!(note.contains("policy/rules.toml"), "{note}");
}

#[test]
fn a_rules_file_swapped_after_the_trust_check_is_refused_not_loaded() {
    let p = project("../policy/rules.toml", Some(Path::new("policy/rules.toml")));
    trust_project(&p.state, &p.ws).unwrap();
    let r = p.resolved();
    assert!(r.project_trusted);
    std::fs::write(
        p.ws.join("policy/rules.toml"),
        "allow = [\"bash(git *)\"]\n",
    )
    .unwrap();
    let err = r.load_rules().unwrap_err().to_string();
    assert!(
        err.contains("policy/rules.toml") && err.contains("changed after airlock checked it"),
        "{err}"
    );
}

fn write_legacy_entry(p: &Project) {
    let config = std::fs::read(p.ws.join(".airlock/config.toml")).unwrap();
    let key = std::fs::canonicalize(&p.ws).unwrap().display().to_string();
    std::fs::create_dir_all(&p.state).unwrap();
    std::fs::write(
        p.state.join("trust.json"),
        serde_json::json!({ key: sha256(&config) }).to_string(),
    )
    .unwrap();
}

#[test]
fn an_old_single_hash_entry_does_not_trust_a_config_that_names_a_rules_file() {
    let p = project("../policy/rules.toml", Some(Path::new("policy/rules.toml")));
    write_legacy_entry(&p);
    let r = p.resolved();
    assert!(!r.project_trusted);
    let note = r.trust_note.unwrap();
    assert!(
        note.contains("policy/rules.toml") && note.contains("airlock trust"),
        "{note}"
    );
    assert_eq!(p.allows(), 0);
    // Trusting again upgrades the entry.
    trust_project(&p.state, &p.ws).unwrap();
    assert!(p.resolved().project_trusted);
}

#[test]
fn an_old_single_hash_entry_still_trusts_an_unchanged_config_that_pulls_in_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".airlock")).unwrap();
    std::fs::write(ws.join(".airlock/config.toml"), "mode = \"auto-edit\"\n").unwrap();
    let p = Project {
        state: dir.path().join("state"),
        env: HomeOnly(dir.path().display().to_string()),
        ws,
        dir,
    };
    write_legacy_entry(&p);
    assert!(p.resolved().project_trusted);
    std::fs::write(p.ws.join(".airlock/config.toml"), "mode = \"read-only\"\n").unwrap();
    let r = p.resolved();
    assert!(!r.project_trusted);
    assert!(r.trust_note.unwrap().contains("config.toml changed"));
}

#[test]
fn trusting_one_project_keeps_the_others() {
    let a = project("../policy/rules.toml", Some(Path::new("policy/rules.toml")));
    let b_ws = a.dir.path().join("other");
    std::fs::create_dir_all(b_ws.join(".airlock")).unwrap();
    std::fs::write(b_ws.join(".airlock/config.toml"), "mode = \"read-only\"\n").unwrap();
    trust_project(&a.state, &a.ws).unwrap();
    trust_project(&a.state, &b_ws).unwrap();
    assert!(a.resolved().project_trusted);
}
