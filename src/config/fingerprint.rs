//! The files airlock reads as policy (the user and project config, every rules file in force),
//! with the SHA-256 of each as a session found it. A run that goes on later (a parked run
//! resumed, a run taken over after its process died) compares them with the files as they are
//! then: a change is never used silently, it is shown and must be confirmed. The sandbox keeps
//! commands from writing these files; this is what catches a change made some other way.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Each policy file in force and the SHA-256 of its content (`None`: there was no such file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyFingerprint(pub Vec<(PathBuf, Option<String>)>);

fn sha256(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(
        Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

impl PolicyFingerprint {
    /// The files as they are now.
    pub fn of(files: &[PathBuf]) -> PolicyFingerprint {
        let mut seen: Vec<(PathBuf, Option<String>)> = Vec::new();
        for file in files {
            if !seen.iter().any(|(p, _)| p == file) {
                seen.push((file.clone(), sha256(file)));
            }
        }
        PolicyFingerprint(seen)
    }

    /// What changed in these files since `self` was taken, one line per file, for a person.
    pub fn changes_now(&self) -> Vec<String> {
        let short = |h: &Option<String>| match h {
            Some(h) => format!("sha256 {}", &h[..h.len().min(12)]),
            None => "no file".into(),
        };
        self.0
            .iter()
            .filter_map(|(path, then)| {
                let now = sha256(path);
                (now != *then).then(|| {
                    format!(
                        "{}: {} then, {} now",
                        crate::visible::visible_line(&path.display().to_string()),
                        short(then),
                        short(&now)
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_file_edited_created_or_removed_since_is_reported_and_an_unchanged_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (rules, config, later) = (
            dir.path().join("rules.toml"),
            dir.path().join("config.toml"),
            dir.path().join("later.toml"),
        );
        std::fs::write(&rules, "deny = []\n").unwrap();
        std::fs::write(&config, "mode = \"default\"\n").unwrap();
        let taken = PolicyFingerprint::of(&[rules.clone(), config.clone(), later.clone()]);
        assert!(taken.changes_now().is_empty());
        std::fs::write(&rules, "allow = [\"bash(curl *)\"]\n").unwrap();
        std::fs::write(&later, "x = 1\n").unwrap();
        let changes = taken.changes_now();
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(changes[0].contains("rules.toml") && changes[0].contains("then"));
        assert!(
            changes[1].contains("later.toml: no file then"),
            "{changes:?}"
        );
        std::fs::remove_file(&config).unwrap();
        assert!(taken.changes_now()[1].contains("config.toml"));
    }
}
