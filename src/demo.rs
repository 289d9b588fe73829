//! The offline demo: a scenario and a small project, built into the binary, played on a scratch
//! copy in the state directory, never on the user's files. Imports nothing of the crate.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub const SCENARIO: &str = include_str!("../assets/scenarios/demo.json");

/// Every file of `assets/demo-workspace`, by relative path.
pub const WORKSPACE: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../assets/demo-workspace/README.md"),
    ),
    ("calc.py", include_str!("../assets/demo-workspace/calc.py")),
    (
        "test_calc.py",
        include_str!("../assets/demo-workspace/test_calc.py"),
    ),
];

/// Where scratch copies go: under the system temp directory, outside airlock's state directory
/// (which the policy guards from the agent).
pub fn scratch_root() -> PathBuf {
    std::env::temp_dir().join("airlock-demo")
}

/// Writes a fresh copy of the demo project under `<root>/<name>` and returns its path.
pub fn scratch_copy(root: &Path, name: &str) -> Result<PathBuf> {
    let dir = root.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot clear the old scratch copy {}", dir.display()))?;
    }
    for (relative, content) in WORKSPACE {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, content)
            .with_context(|| format!("cannot write the demo file {}", path.display()))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_demo_holds_every_file_of_the_demo_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo-workspace");
        let mut on_disk: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut built_in: Vec<String> = WORKSPACE.iter().map(|(p, _)| p.to_string()).collect();
        built_in.sort();
        assert_eq!(built_in, on_disk);
        for (relative, content) in WORKSPACE {
            assert_eq!(
                std::fs::read_to_string(root.join(relative)).unwrap(),
                *content
            );
        }
    }

    #[test]
    fn the_built_in_scenario_parses() {
        crate::model::scripted::Scenario::parse(SCENARIO, "demo.json").unwrap();
    }
}
