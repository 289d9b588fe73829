//! Which projects the user trusts, kept in `trust.json` in the state directory: per project path,
//! every file its `.airlock/config.toml` pulls in (the config itself and each file a key of it
//! names, wherever it lives), by physical path and SHA-256 of its content.
//!
//! Trust is for those exact contents: a changed file, a file the config newly pulls in, or one it
//! no longer pulls in makes the project untrusted again, and the note says which file. A rules
//! file outside `.airlock/` is covered like the config itself, so editing it cannot loosen a
//! trusted project behind the user's back.
//!
//! Entries written by older airlock versions hold one hash (of the config alone). Such an entry
//! still trusts a config that pulls in no other file and has not changed, because it covered
//! everything that config can affect; a config that names a rules file must be trusted again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::ConfigFile;

/// One file a project config pulls in: physical path and the SHA-256 of its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedFile {
    pub path: PathBuf,
    pub sha256: String,
}

/// A project's entry in `trust.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Entry {
    Files {
        files: Vec<TrustedFile>,
    },
    /// Written by airlock versions that hashed only the config file.
    ConfigOnly(String),
}

/// Whether a project is trusted now, and if it was trusted before but no longer is, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Trusted,
    NeverTrusted,
    /// Trusted before; `note` names every file that differs and says how to trust it again.
    Changed {
        note: String,
    },
}

fn store(state_dir: &Path) -> PathBuf {
    state_dir.join("trust.json")
}

fn read(state_dir: &Path) -> Result<BTreeMap<String, Entry>> {
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

pub fn sha256(bytes: &[u8]) -> String {
    crate::digest::hex(&Sha256::digest(bytes))
}

fn key(workspace: &Path) -> String {
    std::fs::canonicalize(workspace)
        .unwrap_or_else(|_| workspace.to_path_buf())
        .display()
        .to_string()
}

/// Every file the project config at `config_path` (already read as `bytes`, parsed as `config`)
/// pulls in, the config first, each with the hash of its content now. `bytes` are the ones the
/// config was parsed from, so what is hashed is what is used. Fails naming a file that cannot be
/// read: what cannot be read cannot be trusted.
pub fn project_files(
    config_path: &Path,
    bytes: &[u8],
    config: &ConfigFile,
) -> Result<Vec<TrustedFile>> {
    let physical = |path: &Path| {
        std::fs::canonicalize(path).with_context(|| format!("cannot find {}", path.display()))
    };
    let mut files = vec![TrustedFile {
        path: physical(config_path)?,
        sha256: sha256(bytes),
    }];
    // Hooks that could not run once trusted are refused here, with the same words.
    if !config.hooks.is_empty() {
        let workspace = config_path
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        let origin = super::hooks::Origin {
            workspace,
            project: true,
        };
        super::hooks::specs(config_path, origin, &config.hooks)?;
    }
    let mut named = config.named_files(config_path);
    // A project with hooks trusts its `.airlock/` whole: a hook script may source or import
    // its neighbours, and a change to any of them is a change to the hook.
    if !config.hooks.is_empty() {
        for file in super::hooks::project_dir_files(config_path) {
            named.push(("hooks (the .airlock directory)", file));
        }
    }
    for (key, named) in named {
        let path = physical(&named).with_context(|| {
            format!("`{key}` in {} names a missing file", config_path.display())
        })?;
        let content = std::fs::read(&path).with_context(|| {
            format!(
                "cannot read {} (named by `{key}` in {})",
                path.display(),
                config_path.display()
            )
        })?;
        if !files.iter().any(|f| f.path == path) {
            files.push(TrustedFile {
                path,
                sha256: sha256(&content),
            });
        }
    }
    Ok(files)
}

/// Whether the files `current` (from [`project_files`]) are exactly the ones trusted for
/// `workspace`, with the same contents.
pub fn status(state_dir: &Path, workspace: &Path, current: &[TrustedFile]) -> Result<Status> {
    let again = format!(
        "check it, then run `airlock trust` in {} again",
        key(workspace)
    );
    let Some(entry) = read(state_dir)?.remove(&key(workspace)) else {
        return Ok(Status::NeverTrusted);
    };
    let trusted = match entry {
        Entry::Files { files } => files,
        Entry::ConfigOnly(hash) => {
            let Some(config) = current.first() else {
                return Ok(Status::NeverTrusted);
            };
            if config.sha256 != hash {
                return Ok(Status::Changed {
                    note: format!(
                        "{} changed since you trusted this project; {again}",
                        config.path.display()
                    ),
                });
            }
            if current.len() == 1 {
                return Ok(Status::Trusted);
            }
            let named: Vec<String> = current[1..]
                .iter()
                .map(|f| f.path.display().to_string())
                .collect();
            return Ok(Status::Changed {
                note: format!(
                    "your trust in this project covers {} alone, not {} that it pulls in; check {}, then run `airlock trust` in {} again",
                    config.path.display(),
                    named.join(", "),
                    if named.len() == 1 { "it" } else { "them" },
                    key(workspace)
                ),
            });
        }
    };
    let mut problems = Vec::new();
    for file in current {
        match trusted.iter().find(|t| t.path == file.path) {
            Some(t) if t.sha256 == file.sha256 => {}
            Some(_) => problems.push(format!(
                "{} changed since you trusted this project",
                file.path.display()
            )),
            None => problems.push(format!(
                "{} is pulled in by the project config now, and you have not trusted it",
                file.path.display()
            )),
        }
    }
    for gone in trusted
        .iter()
        .filter(|t| !current.iter().any(|c| c.path == t.path))
    {
        problems.push(format!(
            "{} was trusted with this project but is no longer pulled in",
            gone.path.display()
        ));
    }
    Ok(if problems.is_empty() {
        Status::Trusted
    } else {
        Status::Changed {
            note: format!("{}; {again}", problems.join("; ")),
        }
    })
}

/// Trusts `files` (from [`project_files`]) for `workspace`, replacing what was trusted before.
pub fn trust(state_dir: &Path, workspace: &Path, files: &[TrustedFile]) -> Result<()> {
    let mut trusted = read(state_dir)?;
    trusted.insert(
        key(workspace),
        Entry::Files {
            files: files.to_vec(),
        },
    );
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    // The state directory is private to the user (0700), made here when trust comes first.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state_dir)
        .with_context(|| format!("cannot create {}", state_dir.display()))?;
    let tmp = store(state_dir).with_extension("json.tmp");
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(serde_json::to_string_pretty(&trusted)?.as_bytes()))
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, store(state_dir))
        .with_context(|| format!("cannot replace {}", store(state_dir).display()))?;
    Ok(())
}

/// `airlock trust`: trusts the project config of `workspace` and every file it pulls in, as
/// they are now, and says which files those are, with their hashes, so the person sees exactly
/// what they trust.
pub fn trust_project(state_dir: &Path, workspace: &Path) -> Result<String> {
    let config_path = super::project_config_path(workspace);
    let Some((config, bytes)) = ConfigFile::load_bytes(&config_path)? else {
        anyhow::bail!(
            "{} does not exist: there is nothing to trust",
            config_path.display()
        );
    };
    let files = project_files(&config_path, &bytes, &config)?;
    trust(state_dir, workspace, &files)?;
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut out = format!(
        "trusted the project in {} as these files are now (a change to any of them makes it untrusted again):\n",
        crate::visible::visible_line(&root.display().to_string())
    );
    for file in &files {
        let outside = if file.path.starts_with(&root) {
            ""
        } else {
            "  (outside the workspace)"
        };
        out.push_str(&format!(
            "  sha256 {}  {}{outside}\n",
            file.sha256,
            crate::visible::visible_line(&file.path.display().to_string())
        ));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
