//! The places a sandboxed command may never read, from the sensitivity table: what the sandbox
//! (`crate::sandbox::plan`) grants reads around.

use std::fs;
use std::path::Path;

use super::Sensitivity::{self, AirlockConfig, CredentialStore, EnvFile, PrivateKey, SecretFile};
use super::sensitivity::{Anchor, RULES, glob};

/// What a sandboxed command may never read: keys, credential stores, secret-looking files,
/// `.env` files and airlock's own configuration and state.
pub const UNREADABLE: &[Sensitivity] = &[
    PrivateKey,
    CredentialStore,
    SecretFile,
    EnvFile,
    AirlockConfig,
];

/// The places of the table's home- and root-anchored keys, credential stores and airlock config
/// rows that exist: under each of `homes` and under `/`. A glob component (`etc/ssh/*_key`) is
/// matched against the directory's real entries, case-insensitively like the table, and a row
/// ending in `**` names its directory. The sandbox grants reads around these.
pub fn unreadable_places(homes: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    unreadable_places_and_listed(homes).0
}

/// [`unreadable_places`], and every directory whose entries were looked at to find them, with
/// its modification time taken just before (`None`: it could not be read): a place made later
/// can only appear in one of them, so a sandbox plan made from this answer is stale once one of
/// them changes.
pub fn unreadable_places_and_listed(
    homes: &[std::path::PathBuf],
) -> (Vec<std::path::PathBuf>, Listed) {
    let mut listings: std::collections::HashMap<std::path::PathBuf, Listing> =
        std::collections::HashMap::new();
    let mut found = Vec::new();
    let bases: Vec<(Anchor, &Path)> = homes
        .iter()
        .map(|h| (Anchor::Home, h.as_path()))
        .chain(std::iter::once((Anchor::Root, Path::new("/"))))
        .collect();
    for rule in RULES {
        if !matches!(
            rule.sensitivity,
            PrivateKey | CredentialStore | AirlockConfig
        ) {
            continue;
        }
        let pattern: Vec<&str> = rule.pattern.split('/').filter(|c| *c != "**").collect();
        for (anchor, base) in &bases {
            let same = matches!(
                (anchor, rule.anchor),
                (Anchor::Home, Anchor::Home) | (Anchor::Root, Anchor::Root)
            );
            if !same {
                continue;
            }
            let mut level = vec![base.to_path_buf()];
            for component in &pattern {
                let mut next = Vec::new();
                for dir in &level {
                    let (_, entries) = listings.entry(dir.clone()).or_insert_with(|| {
                        let modified = fs::metadata(dir).and_then(|m| m.modified()).ok();
                        let entries = fs::read_dir(dir)
                            .map(|rd| {
                                rd.flatten()
                                    .map(|e| {
                                        (e.file_name().to_string_lossy().to_lowercase(), e.path())
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        (modified, entries)
                    });
                    next.extend(
                        entries
                            .iter()
                            .filter(|(name, _)| glob(component, name))
                            .map(|(_, path)| path.clone()),
                    );
                }
                level = next;
            }
            found.extend(level);
        }
    }
    found.sort();
    found.dedup();
    let mut listed: Listed = listings
        .into_iter()
        .map(|(dir, (modified, _))| (dir, modified))
        .collect();
    listed.sort();
    (found, listed)
}

/// Directories looked at, each with its modification time just before.
pub type Listed = Vec<(std::path::PathBuf, Option<std::time::SystemTime>)>;

/// A directory's modification time and its entries (lower-cased name, path).
type Listing = (
    Option<std::time::SystemTime>,
    Vec<(String, std::path::PathBuf)>,
);
