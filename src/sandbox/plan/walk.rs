//! The walk from `/` down to the protected places, granting every sibling whole: the full walk
//! a plan's Landlock reads come from where nothing can be covered, and the short one around
//! `/dev` where the launcher covers the protected places.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::facts::paths::{
    Listed, PathContext, looks_like_private_key, unreadable_by_name, unreadable_places_and_listed,
};

use super::{DEVICE_DIR, MAX_DEPTH, modified, physical};

/// The protected places that exist, physical: the table's credential stores and keys under each
/// home and `/`, and airlock's state directory.
pub(super) fn protected_places(ctx: &PathContext) -> (Vec<PathBuf>, Listed) {
    let (mut places, listed) = unreadable_places_and_listed(&homes(ctx));
    places.push(ctx.state_dir.clone());
    places.push(PathBuf::from(DEVICE_DIR));
    let mut physical_places: Vec<PathBuf> = places
        .iter()
        .filter(|p| fs::symlink_metadata(p).is_ok())
        .map(|p| physical(p))
        .collect();
    physical_places.sort();
    physical_places.dedup();
    (physical_places, listed)
}

/// The reads where the launcher covers the protected places: the roots ([`Plan::read_covered`]),
/// the places to cover ([`Plan::covers`]: those outside every writable root, outermost only),
/// and the directories that walk listed. `protected` is every protected place, the ones the
/// walk left out by name included.
pub(super) fn covered_reads(
    ctx: &PathContext,
    protected: &[PathBuf],
    write: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>, Listed) {
    let devices = physical(Path::new(DEVICE_DIR));
    let writable = |p: &Path| write.iter().any(|w| p.starts_with(w));
    let mut covers: Vec<PathBuf> = protected
        .iter()
        .filter(|p| fs::symlink_metadata(p).is_ok())
        .map(|p| physical(p))
        .filter(|p| !p.starts_with(&devices) && !writable(p))
        .collect();
    covers.sort();
    covers.dedup();
    let outer = covers.clone();
    covers.retain(|p| !outer.iter().any(|o| o != p && p.starts_with(o)));
    let mut around: Vec<PathBuf> = protected
        .iter()
        .map(|p| physical(p))
        .filter(|p| writable(p))
        .collect();
    around.push(devices);
    around.sort();
    around.dedup();
    let mut walk = Walk::new(ctx, &around);
    let mut read = Vec::new();
    walk.grant(Path::new("/"), 0, &mut read);
    // An entry this walk leaves out by name lies beside `/dev` or inside a writable root: it
    // is not read either way.
    (read, covers, walk.listed)
}

/// The user's home, `/root`, and every directory in `/home`: commands run as a user who may
/// read other homes (root does), so their keys are kept too.
pub(super) fn homes(ctx: &PathContext) -> Vec<PathBuf> {
    let mut homes = vec![ctx.home.clone(), PathBuf::from("/root")];
    if let Ok(entries) = fs::read_dir("/home") {
        homes.extend(entries.flatten().map(|e| e.path()));
    }
    let mut homes: Vec<PathBuf> = homes
        .into_iter()
        .filter(|h| h.is_dir())
        .map(|h| physical(&h))
        .collect();
    homes.sort();
    homes.dedup();
    homes
}

pub(super) struct Walk<'a> {
    ctx: &'a PathContext,
    protected: &'a [PathBuf],
    visited: BTreeSet<PathBuf>,
    /// Every directory listed, across grants, with its modification time just before.
    pub(super) listed: Vec<(PathBuf, Option<SystemTime>)>,
    homes: Vec<PathBuf>,
    /// Entries left out by name or content, as listed and where they lead.
    pub(super) skipped: Vec<PathBuf>,
}

impl<'a> Walk<'a> {
    /// A walk around `protected` (physical) in the places of `ctx`.
    pub(super) fn new(ctx: &'a PathContext, protected: &'a [PathBuf]) -> Walk<'a> {
        Walk {
            ctx,
            protected,
            visited: BTreeSet::new(),
            listed: Vec::new(),
            homes: homes(ctx),
            skipped: Vec::new(),
        }
    }

    /// Grants `path` whole when it holds no protected place; else lists it and grants around.
    pub(super) fn grant(&mut self, path: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if depth == 0 {
            self.visited.clear();
        }
        let Ok(real) = fs::canonicalize(path) else {
            // Dangling or unreadable: nothing to grant.
            return;
        };
        self.grant_physical(path, real, depth, out);
    }

    /// [`Walk::grant`] for `listed`, already known to lead to `real` (physical).
    fn grant_physical(
        &mut self,
        listed: &Path,
        real: PathBuf,
        depth: usize,
        out: &mut Vec<PathBuf>,
    ) {
        if self.protected.iter().any(|p| real.starts_with(p)) {
            return;
        }
        if depth > 0 && self.unreadable(listed, &real) {
            self.skipped.push(listed.to_path_buf());
            self.skipped.push(real);
            return;
        }
        if !self.protected.iter().any(|p| p.starts_with(&real)) {
            out.push(real);
            return;
        }
        if depth >= MAX_DEPTH || !self.visited.insert(real.clone()) {
            return;
        }
        self.listed.push((real.clone(), modified(&real)));
        let Ok(entries) = fs::read_dir(&real) else {
            return;
        };
        for entry in entries.flatten() {
            let listed = entry.path();
            // An entry that is not a link lies where it is listed, in a directory already
            // physical: no need to resolve it (which cost a readlink per component of every
            // entry, tens of milliseconds for a `/tmp` of a few hundred entries). A link, or
            // an entry whose type the directory does not give, is resolved.
            match entry.file_type() {
                Ok(kind) if !kind.is_symlink() => {
                    let real = real.join(entry.file_name());
                    self.grant_physical(&listed, real, depth + 1, out);
                }
                _ => self.grant(&listed, depth + 1, out),
            }
        }
    }

    /// An entry the walk lists that the policy's table marks unreadable by name (as listed, or
    /// where it leads), or a file in a home whose first bytes are a private key.
    fn unreadable(&self, listed: &Path, real: &Path) -> bool {
        unreadable_by_name(self.ctx, listed)
            || (real != listed && unreadable_by_name(self.ctx, real))
            || (self.homes.iter().any(|h| real.starts_with(h)) && looks_like_private_key(real))
    }
}
