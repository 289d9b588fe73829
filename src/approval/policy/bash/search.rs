//! What a recursive search would print: the files under its tree the policy marks sensitive
//! (`.env` files, files named like secrets, private keys by name or by content). `grep -r x .`
//! prints a workspace's `.env` as surely as `cat .env` does, so it is judged the same way.
//!
//! The walk skips what the search skips (hidden files and ignored files for rg and ag without
//! `-u`, the globs it is given) and nothing else, and it runs on every judged search, so it is
//! bounded: past [`MAX_ENTRIES`] entries it stops and the search asks, since what it did not
//! look at may hold a secret.

use std::path::Path;

use crate::approval::policy::judge::{self, Access, Finding};
use crate::facts::paths::{self, PathContext, ResolvedPath};
use crate::facts::programs::Search;
use crate::protocol::Ruling;

/// Most directory entries one search's walk looks at before it gives up.
const MAX_ENTRIES: usize = 5_000;

/// Most files one walk opens to look for a private key; past this it stops, as past
/// [`MAX_ENTRIES`].
const MAX_SNIFFS: usize = 1_000;

/// Files bigger than this are not opened to look for a private key: keys are a few KiB.
const MAX_SNIFF_SIZE: u64 = 64 * 1024;

/// The extensions under which a file is opened to look for a private key (besides none at all):
/// where keys are kept. Source code is not opened: code that mentions a key's marker is not a
/// key, and opening every file of a tree on every search would cost too much.
const KEY_EXTENSIONS: &[&str] = &[
    "pem", "key", "der", "crt", "cer", "priv", "private", "asc", "gpg", "pgp", "p8", "pk8", "json",
    "txt", "sec", "secret",
];

/// Every file under `root` the search would read that reading on its own would not allow, with
/// what reading it calls for; `Err` when the tree is too large to look through.
pub(super) fn sensitive_files(
    ctx: &PathContext,
    root: &Path,
    search: &Search,
) -> Result<Vec<(ResolvedPath, Finding)>, String> {
    look_through(ctx, root, search, MAX_ENTRIES)
}

fn look_through(
    ctx: &PathContext,
    root: &Path,
    search: &Search,
    max_entries: usize,
) -> Result<Vec<(ResolvedPath, Finding)>, String> {
    let mut walk = ignore::WalkBuilder::new(root);
    walk.standard_filters(false)
        .hidden(!search.hidden)
        .follow_links(false);
    if search.ignores {
        // ripgrep's own rules, which it reads with this same crate.
        walk.ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(true)
            .parents(true)
            .add_custom_ignore_filename(".rgignore");
    }
    if !search.globs.is_empty() {
        let mut overrides = ignore::overrides::OverrideBuilder::new(root);
        let mut usable = true;
        for glob in &search.globs {
            usable &= overrides.add(glob).is_ok();
        }
        // A glob the walker cannot read would skip nothing here: read it as no glob at all.
        if usable && let Ok(overrides) = overrides.build() {
            walk.overrides(overrides);
        }
    }
    // Git's object store is compressed: nothing in it is read out as text.
    walk.filter_entry(|entry| {
        !(entry.file_name() == "objects"
            && entry
                .path()
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|parent| parent == ".git"))
    });
    let mut found = Vec::new();
    let mut sniffs = 0;
    for (seen, entry) in walk.build().enumerate() {
        if seen >= max_entries {
            return Err(format!(
                "it holds more than {max_entries} entries for airlock to look through for secrets"
            ));
        }
        if sniffs > MAX_SNIFFS {
            return Err(format!(
                "it holds more than {MAX_SNIFFS} files airlock would open to look for private keys"
            ));
        }
        let Ok(entry) = entry else {
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if !worth_judging(ctx, path, &entry, &mut sniffs) {
            continue;
        }
        let resolved = paths::resolve(ctx, &ctx.workspace, &path.to_string_lossy());
        let finding = judge::judge(ctx, Access::Read, &resolved);
        if finding.ruling != Ruling::Allow {
            found.push((resolved, finding));
        }
    }
    Ok(found)
}

/// A cheap first look: the name says it holds secrets, or (for a small file kept where keys
/// are kept) its first bytes are a private key. Only those are resolved and judged in full.
fn worth_judging(
    ctx: &PathContext,
    path: &Path,
    entry: &ignore::DirEntry,
    sniffs: &mut usize,
) -> bool {
    if paths::unreadable_by_name(ctx, path) {
        return true;
    }
    let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
    let key_like = match name.rsplit_once('.') {
        Some((stem, extension)) => !stem.is_empty() && KEY_EXTENSIONS.contains(&extension),
        None => true,
    };
    if !key_like
        || !entry
            .metadata()
            .is_ok_and(|m| m.len() > 0 && m.len() <= MAX_SNIFF_SIZE)
    {
        return false;
    }
    *sniffs += 1;
    paths::looks_like_private_key(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::shell::Word;

    #[test]
    fn a_walk_cut_short_is_an_error_not_an_empty_answer() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c", "d"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let ctx = PathContext::new(dir.path(), dir.path(), &dir.path().join("state")).unwrap();
        let search = Search {
            root: Word::lit("."),
            hidden: true,
            ignores: false,
            globs: Vec::new(),
        };
        let root = ctx.workspace.clone();
        assert!(look_through(&ctx, &root, &search, 3).is_err());
        assert!(look_through(&ctx, &root, &search, 10).is_ok_and(|found| found.is_empty()));
    }
}
