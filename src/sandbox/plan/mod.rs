//! What one sandboxed run may touch: the roots it may read, the roots it may write, whether it
//! has the network, and the temp dir it is told to use.
//!
//! Landlock only grants (it has no "everything but"), so "read everything except `~/.ssh`" is
//! made by walking down from `/` only along the directories that hold a protected place and
//! granting every sibling whole: `/` is listed, then the home that holds `.ssh`, and so on;
//! everything else is one rule. Protected places come from the policy's own table (credential
//! stores and keys under every home and `/`, airlock's state directory) and, for the entries the
//! walk lists, from the same per-name judgement the policy uses (`.env`, `id_rsa`, secret-looking
//! names) plus a look at a file's first bytes for a private key. Limits: a protected file deeper
//! than the directories the walk lists (another project's `.env` at `~/src/x/.env`) is read like
//! any file, and so is a hard link to a protected file made elsewhere.
//!
//! Every path is taken physically (symlinks resolved) before it is granted, since Landlock
//! grants the inode a path leads to: a link in the home that points into `~/.ssh` grants nothing.
//!
//! That walk costs one Landlock rule per entry of every directory it lists (`/etc` alone holds
//! a couple of hundred), paid by every command. Where the launcher makes the command a mount
//! namespace of its own (nearly everywhere), it does not need them: each protected place that
//! lies outside the places the command may write is covered instead (an empty read-only
//! directory, or `/dev/null` read-only, mounted over it), and the reads are granted by a walk
//! around `/dev` alone ([`Plan::read_covered`]): a few dozen rules, however full `/etc`, `/tmp`
//! or the home are. A protected place inside a writable root is still walked around (covering
//! it would let the command rename the directory above it). Where no mount namespace can be
//! made, the launcher falls back to the full walk ([`Plan::read`]).
//!
//! A plan holds what the directories it listed held when it was made; [`Plan::is_stale`] says
//! when one of them has changed since (a key or `~/.aws` made later, a new entry to grant), so
//! the session makes the plan again rather than run a command under an old one.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::facts::paths::PathContext;

use super::Profile;
use places::{policy_files_in, sockets_to_hide};
use walk::{Walk, covered_reads, protected_places};

/// How deep the walk goes below `/` before it stops granting (what it has not reached stays
/// unreadable: the walk fails closed).
const MAX_DEPTH: usize = 8;

/// The only devices a command may touch (`> /dev/null`, randomness, shared memory). The rest of
/// `/dev` is out of reach, read or write: above all every terminal (`/dev/tty`, `/dev/pts/*`,
/// `/dev/console`, `/dev/ptmx`), since a command that can draw on or type into the screen a
/// decision is made on can forge that decision; and raw disks. (`/dev/stdout`, `/dev/fd/N`
/// still work: they lead to the command's own pipes.)
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/shm",
];

/// Walked around for reading, whole: only [`DEVICES`] are granted in it.
const DEVICE_DIR: &str = "/dev";

/// The boundary of one run, as the launcher applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub profile: Profile,
    /// Where the command starts (relative paths in its errors are taken from here).
    pub workspace: PathBuf,
    /// Roots (physical) the command may read and execute: the walk around every protected
    /// place, used where the launcher cannot cover them (no mount namespace).
    pub read: Vec<PathBuf>,
    /// The same, where the launcher has covered [`Plan::covers`]: the walk around `/dev` and
    /// the protected places inside writable roots only.
    pub read_covered: Vec<PathBuf>,
    /// The protected places (physical, existing) outside every writable root, that the
    /// launcher covers in the command's mount namespace (see the module's comment).
    pub covers: Vec<PathBuf>,
    /// Roots (physical) the command may read, write, create in and delete from.
    pub write: Vec<PathBuf>,
    pub network: bool,
    /// Set as `TMPDIR` (and `TMP`, `TEMP`) for the command: airlock's own temp dir when the
    /// system's is not writable under this plan.
    pub temp: Option<PathBuf>,
    /// The protected places the walk went around (physical), for explaining refusals.
    pub protected: Vec<PathBuf>,
    /// The user's other programs' sockets, hidden from the command (an empty read-only
    /// directory, or `/dev/null`, mounted over each in a mount namespace of its own): Landlock
    /// does not govern `connect()` to a socket's path.
    pub hidden: Vec<PathBuf>,
    /// The files airlock reads as policy (config, rules) that lie where the command may write:
    /// mounted read-only over themselves.
    pub read_only: Vec<PathBuf>,
    /// The directories above a read-only file that the command could rename (their parent is
    /// writable), mounted over themselves so they cannot be: a renamed directory would let a
    /// new file take the policy file's path outside the command's mount namespace.
    pub pinned: Vec<PathBuf>,
    /// Where the write grants start (the workspace, the temp dirs, the devices): kept
    /// writable in the command's mount namespace, where every other mount is made read-only,
    /// so `chmod`, `chown`, `utime` and extended attributes, which Landlock does not govern,
    /// fail outside them.
    pub writable_mounts: Vec<PathBuf>,
    /// Every directory whose entries the plan was made from, with its modification time then
    /// (`None`: it did not exist): see [`Plan::is_stale`].
    pub listed: Vec<(PathBuf, Option<SystemTime>)>,
    /// When one of them had changed just before it was looked at: the moment from which the
    /// plan counts as stale, to be looked at again once (see [`RACY`]).
    pub racy_until: Option<SystemTime>,
}

/// A directory changed this close to the moment it was looked at may have changed again within
/// the file system's timestamp granularity, unseen: such a plan is used (it holds what was
/// there a moment ago) and made again once this long after.
const RACY: Duration = Duration::from_millis(50);

impl Plan {
    /// The plan for `profile` (not `Off`) in the places of `ctx`. `own_temp` is called only
    /// when the system temp dir would not be writable (a workspace inside `/tmp` makes `/tmp`
    /// its neighbours' place, not scratch space, as the policy judges it).
    pub fn make(
        ctx: &PathContext,
        profile: Profile,
        own_temp: impl FnOnce() -> Result<PathBuf, String>,
    ) -> Result<Plan, String> {
        let system_temp = physical(&std::env::temp_dir());
        let mut own_temp = Some(own_temp);
        // Called at most once, early or late.
        let mut own_dir = || {
            own_temp.take().map_or_else(
                || Err("airlock's own temp dir was asked for twice".to_string()),
                |make| make(),
            )
        };
        let mut own = None;
        // The system temp dir is writable only under a root that holds it. When none can,
        // airlock's own is made now, before anything is listed: made after, in a directory
        // the walk lists (`/tmp`, beside a state dir or workspace there), it would make the
        // plan stale at once, and the session's first command would wait for a second walk.
        let roots = ctx
            .temp_dirs
            .iter()
            .chain(profile.writes_workspace().then_some(&ctx.workspace));
        if !roots
            .map(|r| physical(r))
            .any(|r| system_temp.starts_with(r))
        {
            own = Some(own_dir()?);
        }
        let made = SystemTime::now();
        let (protected, pattern_dirs) = protected_places(ctx);
        let mut walk = Walk::new(ctx, &protected);
        let mut read = Vec::new();
        walk.grant(Path::new("/"), 0, &mut read);

        let mut write = Vec::new();
        let mut writable_mounts = Vec::new();
        if profile.writes_workspace() {
            walk.grant(&ctx.workspace, 0, &mut write);
            writable_mounts.push(physical(&ctx.workspace));
        }
        for temp in &ctx.temp_dirs {
            walk.grant(temp, 0, &mut write);
            writable_mounts.push(physical(temp));
        }
        let temp = if write.iter().any(|w| system_temp.starts_with(w)) {
            None
        } else {
            let own = match own {
                Some(own) => own,
                None => own_dir()?,
            };
            walk.grant(&own, 0, &mut write);
            writable_mounts.push(own.clone());
            Some(own)
        };
        for device in DEVICES {
            let device = Path::new(device);
            if device.exists() {
                write.push(physical(device));
                writable_mounts.push(physical(device));
            }
        }
        write.sort();
        write.dedup();
        let mut protected = protected.clone();
        protected.append(&mut walk.skipped);
        protected.sort();
        protected.dedup();
        let (read_covered, covers, covered_listed) =
            covered_reads(ctx, &protected, &writable_mounts);
        // Each directory with its time as first looked at (before its entries were read).
        let mut listed: BTreeMap<PathBuf, Option<SystemTime>> = BTreeMap::new();
        for (dir, modified) in pattern_dirs
            .into_iter()
            .chain(walk.listed)
            .chain(covered_listed)
        {
            listed.entry(dir).or_insert(modified);
        }
        // A directory changed just before it was looked at may change again unseen within the
        // timestamp's granularity: the plan is made again once, when that time has passed.
        let racy = listed
            .values()
            .any(|modified| modified.is_some_and(|m| m + RACY >= made));
        let racy_until = racy.then(|| SystemTime::now() + RACY);
        let listed = listed.into_iter().collect();
        let (read_only, pinned) = policy_files_in(ctx, &write);
        writable_mounts.retain(|p| fs::symlink_metadata(p).is_ok());
        writable_mounts.sort();
        writable_mounts.dedup();
        Ok(Plan {
            profile,
            workspace: ctx.workspace.clone(),
            read,
            read_covered,
            covers,
            listed,
            racy_until,
            network: profile.has_network(),
            temp,
            protected,
            hidden: sockets_to_hide(&write, &ctx.workspace),
            read_only,
            pinned,
            writable_mounts,
            write,
        })
    }

    /// The launcher's arguments for this plan, up to (not including) `--`.
    pub fn launcher_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![super::LAUNCHER_ARG.into()];
        if !self.network {
            args.push("--no-network".into());
        }
        for (flag, roots) in [
            ("--read", &self.read),
            ("--read-covered", &self.read_covered),
            ("--cover", &self.covers),
            ("--write", &self.write),
            ("--writable", &self.writable_mounts),
            ("--hide", &self.hidden),
            ("--pin", &self.pinned),
            ("--read-only", &self.read_only),
        ] {
            for root in roots {
                args.push(flag.into());
                args.push(root.clone().into_os_string());
            }
        }
        args
    }

    /// True when a directory the plan was made from has changed since (or could have: see
    /// `RACY`): a protected place may have appeared in it, so the plan must be made again.
    pub fn is_stale(&self) -> bool {
        self.racy_until
            .is_some_and(|until| SystemTime::now() >= until)
            || self.listed.iter().any(|(dir, then)| modified(dir) != *then)
    }

    /// True when `path` is in a protected place the walk went around.
    pub fn is_protected(&self, path: &Path) -> bool {
        let physical = physical(path);
        self.protected
            .iter()
            .any(|p| path.starts_with(p) || physical.starts_with(p))
    }

    /// True when the command may read `path`.
    pub fn may_read(&self, path: &Path) -> bool {
        let path = physical(path);
        self.may_write(&path)
            || (!self.is_protected(&path) && self.read.iter().any(|r| path.starts_with(r)))
    }

    /// True when the command may write `path`.
    pub fn may_write(&self, path: &Path) -> bool {
        let path = physical(path);
        self.write.iter().any(|w| path.starts_with(w)) && !self.read_only.contains(&path)
    }
}

/// A directory's modification time, `None` when it cannot be read.
fn modified(dir: &Path) -> Option<SystemTime> {
    fs::metadata(dir).and_then(|m| m.modified()).ok()
}

fn physical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
/// Makes airlock's own temp dir for commands (0700) under `base`.
pub fn make_own_temp(base: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut last = String::new();
    for attempt in 0..16u32 {
        let dir = base.join(format!(
            "airlock-sandbox-{}-{stamp:x}-{attempt}",
            std::process::id()
        ));
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(physical(&dir)),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!(
        "cannot make a temp dir for sandboxed commands in {}: {last}; check that it is writable",
        base.display()
    ))
}

mod places;
#[cfg(test)]
mod tests;
mod walk;
