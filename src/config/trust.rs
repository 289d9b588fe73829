//! Which projects the user trusts: project path → SHA-256 of its `.airlock/config.toml`, kept in
//! the state directory. Trust is for one exact file content; a changed file is not trusted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

fn store(state_dir: &Path) -> PathBuf {
    state_dir.join("trust.json")
}

fn read(state_dir: &Path) -> Result<BTreeMap<String, String>> {
    match std::fs::read_to_string(store(state_dir)) {
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not valid; delete it to start over",
                store(state_dir).display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", store(state_dir).display())),
    }
}

fn digest(file: &Path) -> Result<String> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok(crate::approval::frozen::hex(&Sha256::digest(&bytes)))
}

fn key(workspace: &Path) -> String {
    std::fs::canonicalize(workspace)
        .unwrap_or_else(|_| workspace.to_path_buf())
        .display()
        .to_string()
}

pub fn is_trusted(state_dir: &Path, workspace: &Path, project_file: &Path) -> Result<bool> {
    let trusted = read(state_dir)?;
    Ok(match trusted.get(&key(workspace)) {
        Some(hash) => *hash == digest(project_file)?,
        None => false,
    })
}

/// Trusts the project's current config file content.
pub fn trust(state_dir: &Path, workspace: &Path, project_file: &Path) -> Result<String> {
    let mut trusted = read(state_dir)?;
    let hash = digest(project_file)?;
    trusted.insert(key(workspace), hash.clone());
    std::fs::create_dir_all(state_dir)
        .with_context(|| format!("cannot create {}", state_dir.display()))?;
    let tmp = store(state_dir).with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&trusted)?)?;
    std::fs::rename(&tmp, store(state_dir))?;
    Ok(hash)
}
