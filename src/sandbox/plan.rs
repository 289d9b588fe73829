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

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::facts::paths::{
    Listed, PathContext, looks_like_private_key, unreadable_by_name, unreadable_places_and_listed,
};

use super::Profile;

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
        let system_temp = physical(&std::env::temp_dir());
        let temp = if write.iter().any(|w| system_temp.starts_with(w)) {
            None
        } else {
            let own = own_temp()?;
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

/// Where other programs of the user keep the sockets that take commands: terminal
/// multiplexers (`tmux`, `screen`: `send-keys` types into any pane, the cockpit's too), agents
/// (`ssh-agent`, `gpg-agent`), the session bus, X11, the per-user runtime directory (Wayland,
/// PipeWire, rootless containers), container engines, and any the environment points at.
const SOCKET_PLACES: &[&str] = &[
    "/tmp/tmux-*",
    "/tmp/ssh-*",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
    "/run/user/*",
    "/run/screen",
    "/var/run/screen",
    "/run/dbus",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
];

/// Environment variables that name a socket (or `unix:` address) of another program: its
/// directory is hidden too (tmux's `$TMUX` is `socket,pid,session`).
const SOCKET_VARIABLES: &[&str] = &[
    "TMUX",
    "SSH_AUTH_SOCK",
    "DOCKER_HOST",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// The socket places that exist here, physical. A place that holds the workspace or a place
/// the command may write is left alone (hiding it would hide them).
fn sockets_to_hide(write: &[PathBuf], workspace: &Path) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = Vec::new();
    for pattern in SOCKET_PLACES {
        match pattern.strip_suffix('*') {
            Some(prefix) => {
                let (dir, start) = prefix.rsplit_once('/').unwrap_or(("/", prefix));
                let dir = if dir.is_empty() { "/" } else { dir };
                for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
                    if entry.file_name().to_string_lossy().starts_with(start) {
                        places.push(entry.path());
                    }
                }
            }
            None => places.push(PathBuf::from(pattern)),
        }
    }
    for name in SOCKET_VARIABLES {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        let value = value.to_string_lossy();
        let value = value.split(',').next().unwrap_or("");
        let value = value
            .strip_prefix("unix:path=")
            .or_else(|| value.strip_prefix("unix://"))
            .or_else(|| value.strip_prefix("unix:"))
            .unwrap_or(value);
        let value = value.split(',').next().unwrap_or("");
        let path = Path::new(value);
        if !path.is_absolute() {
            continue;
        }
        let is_dir = fs::metadata(path).is_ok_and(|m| m.is_dir());
        places.push(if is_dir {
            path.to_path_buf()
        } else {
            path.parent().map_or(path.to_path_buf(), Path::to_path_buf)
        });
    }
    let mut hidden: Vec<PathBuf> = places
        .iter()
        .filter(|p| fs::symlink_metadata(p).is_ok())
        .map(|p| physical(p))
        .filter(|p| p.components().count() > 2)
        .filter(|p| !workspace.starts_with(p) && !write.iter().any(|w| w.starts_with(p)))
        .collect();
    hidden.sort();
    hidden.dedup();
    // A place inside another hidden one is hidden with it.
    let outer = hidden.clone();
    hidden.retain(|p| !outer.iter().any(|o| o != p && p.starts_with(o)));
    hidden
}

/// The policy files (config, rules: `ctx.protected_files`) the command could write under
/// `write`, and the directories above them it could rename (see [`Plan::pinned`]), outermost
/// first. Physical, existing regular files only.
fn policy_files_in(ctx: &PathContext, write: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let writable = |p: &Path| write.iter().any(|w| p.starts_with(w));
    let mut read_only: Vec<PathBuf> = ctx
        .protected_files
        .iter()
        .filter_map(|f| fs::canonicalize(f).ok())
        .filter(|f| fs::metadata(f).is_ok_and(|m| m.is_file()))
        .filter(|f| writable(f))
        .collect();
    read_only.sort();
    read_only.dedup();
    let mut pinned: Vec<PathBuf> = Vec::new();
    for file in &read_only {
        for dir in file.ancestors().skip(1) {
            if dir.parent().is_some_and(writable) && !pinned.iter().any(|p| p == dir) {
                pinned.push(dir.to_path_buf());
            }
        }
    }
    pinned.sort_by_key(|p| p.components().count());
    (read_only, pinned)
}

/// The protected places that exist, physical: the table's credential stores and keys under each
/// home and `/`, and airlock's state directory.
fn protected_places(ctx: &PathContext) -> (Vec<PathBuf>, Listed) {
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
fn covered_reads(
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

/// A directory's modification time, `None` when it cannot be read.
fn modified(dir: &Path) -> Option<SystemTime> {
    fs::metadata(dir).and_then(|m| m.modified()).ok()
}

/// The user's home, `/root`, and every directory in `/home`: commands run as a user who may
/// read other homes (root does), so their keys are kept too.
fn homes(ctx: &PathContext) -> Vec<PathBuf> {
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

fn physical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

struct Walk<'a> {
    ctx: &'a PathContext,
    protected: &'a [PathBuf],
    visited: BTreeSet<PathBuf>,
    /// Every directory listed, across grants, with its modification time just before.
    listed: Vec<(PathBuf, Option<SystemTime>)>,
    homes: Vec<PathBuf>,
    /// Entries left out by name or content, as listed and where they lead.
    skipped: Vec<PathBuf>,
}

impl<'a> Walk<'a> {
    /// A walk around `protected` (physical) in the places of `ctx`.
    fn new(ctx: &'a PathContext, protected: &'a [PathBuf]) -> Walk<'a> {
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
    fn grant(&mut self, path: &Path, depth: usize, out: &mut Vec<PathBuf>) {
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
            || unreadable_by_name(self.ctx, real)
            || (self.homes.iter().any(|h| real.starts_with(h)) && looks_like_private_key(real))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn context(root: &Path) -> PathContext {
        let workspace = root.join("ws");
        let home = root.join("home");
        fs::create_dir_all(&workspace).unwrap();
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::create_dir_all(home.join(".config/gcloud")).unwrap();
        fs::create_dir_all(home.join(".config/editor")).unwrap();
        fs::create_dir_all(home.join("notes")).unwrap();
        fs::write(home.join(".ssh/id_ed25519"), "k").unwrap();
        fs::write(home.join(".netrc"), "machine x").unwrap();
        fs::write(home.join(".env"), "A=1").unwrap();
        fs::write(
            home.join("mystery"),
            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        )
        .unwrap();
        fs::write(home.join("readme.txt"), "hi").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("innocent")).unwrap();
        PathContext::new(&workspace, &home, &root.join("state")).unwrap()
    }

    #[test]
    fn reads_are_granted_around_every_protected_place_in_the_home_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
        let home = &ctx.home;
        for secret in [
            ".ssh",
            ".ssh/id_ed25519",
            ".config/gcloud",
            ".netrc",
            ".env",
            "mystery",
        ] {
            assert!(
                plan.is_protected(&home.join(secret)),
                "{secret} is protected"
            );
            assert!(!plan.may_read(&home.join(secret)), "{secret} is readable");
        }
        for open in ["notes", "readme.txt", ".config/editor"] {
            assert!(plan.may_read(&home.join(open)), "{open} is not readable");
        }
        // The link leads into ~/.ssh: granting it would grant the directory.
        assert!(!plan.read.iter().any(|r| r.ends_with("innocent")));
        assert!(plan.read.contains(&PathBuf::from("/usr")));
    }

    #[test]
    fn writes_go_to_the_workspace_and_a_temp_dir_only_and_read_only_leaves_out_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let own = dir.path().join("own-temp");
        fs::create_dir_all(&own).unwrap();
        let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(own.clone())).unwrap();
        assert!(plan.may_write(&ctx.workspace.join("src/x.py")));
        assert!(!plan.may_write(&ctx.home.join("x")));
        assert!(!plan.network);
        // The workspace is inside the system temp dir, so it is not scratch space: the run gets
        // a temp dir of its own.
        assert_eq!(plan.temp.as_deref(), Some(own.as_path()));
        assert!(plan.may_write(&own.join("f")));
        let read_only = Plan::make(&ctx, Profile::ReadOnly, || Ok(own.clone())).unwrap();
        assert!(!read_only.may_write(&ctx.workspace.join("src/x.py")));
        assert!(read_only.may_write(&own.join("f")));
        assert!(
            Plan::make(&ctx, Profile::Network, || Ok(own.clone()))
                .unwrap()
                .network
        );
    }

    #[test]
    fn where_places_are_covered_the_read_rules_do_not_grow_with_the_entries_beside_them() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let temp = || Ok(dir.path().join("t"));
        let before = Plan::make(&ctx, Profile::WorkspaceWrite, temp).unwrap();
        for i in 0..300 {
            fs::write(ctx.home.join(format!("file-{i}")), "x").unwrap();
            fs::create_dir_all(dir.path().join(format!("beside-{i}"))).unwrap();
        }
        let after = Plan::make(&ctx, Profile::WorkspaceWrite, temp).unwrap();
        // The full walk grants each entry beside a protected place: one rule each.
        assert!(after.read.len() >= before.read.len() + 300);
        assert_eq!(after.read_covered, before.read_covered);
        assert!(after.read_covered.len() < 64, "{:?}", after.read_covered);
        // What the short walk does not go around is covered instead, outermost only.
        let home = &ctx.home;
        for secret in [".ssh", ".config/gcloud", ".netrc", ".env", "mystery"] {
            assert!(
                after.covers.contains(&home.join(secret)),
                "{secret} is not covered"
            );
        }
        assert!(!after.covers.contains(&home.join(".ssh/id_ed25519")));
        assert!(!after.covers.iter().any(|c| c.starts_with("/dev")));
        let args = after.launcher_args();
        let count = |flag: &str| args.iter().filter(|a| *a == flag).count();
        assert_eq!(count("--read-covered"), after.read_covered.len());
        assert_eq!(count("--cover"), after.covers.len());
    }

    #[test]
    fn a_protected_place_inside_a_writable_root_is_walked_around_not_covered() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        fs::create_dir_all(workspace.join("state")).unwrap();
        let ctx = PathContext::new(&workspace, dir.path(), &workspace.join("state")).unwrap();
        let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
        let state = fs::canonicalize(workspace.join("state")).unwrap();
        assert!(!plan.covers.contains(&state));
        let ws = fs::canonicalize(&workspace).unwrap();
        assert!(!plan.read_covered.iter().any(|r| state.starts_with(r)));
        assert!(!plan.read_covered.contains(&ws));
    }

    #[test]
    fn a_plan_is_stale_once_a_credential_store_appears_in_a_home_it_listed() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        // Looked at long after its last change (a directory changed within `RACY` of the plan
        // is taken as stale once, by design).
        let old = SystemTime::now() - Duration::from_secs(60);
        fs::File::open(&ctx.home)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
        let home = plan.listed.iter().find(|(d, _)| *d == ctx.home).unwrap();
        assert_eq!(home.1, Some(old));
        fs::create_dir_all(ctx.home.join(".aws")).unwrap();
        fs::write(ctx.home.join(".aws/credentials"), "k").unwrap();
        assert!(plan.is_stale());
        let again = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
        assert!(again.covers.contains(&ctx.home.join(".aws")));
        assert!(!again.may_read(&ctx.home.join(".aws/credentials")));
    }

    #[test]
    fn a_directory_changed_just_before_the_plan_makes_it_stale_once_a_moment_later() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        fs::write(ctx.home.join("fresh"), "x").unwrap();
        let mut plan =
            Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
        let until = plan
            .racy_until
            .expect("a directory changed just before counts as racy");
        // Used as it is for a moment (the commands of a batch do not each make it again)...
        assert!(until > SystemTime::now());
        // ...and stale from then on.
        plan.racy_until = Some(SystemTime::now() - Duration::from_millis(1));
        assert!(plan.is_stale());
    }

    #[test]
    fn airlocks_state_directory_inside_a_writable_root_is_neither_readable_nor_writable() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        fs::create_dir_all(workspace.join("state")).unwrap();
        fs::create_dir_all(workspace.join("src")).unwrap();
        let ctx = PathContext::new(&workspace, dir.path(), &workspace.join("state")).unwrap();
        let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
        let state = fs::canonicalize(workspace.join("state")).unwrap();
        assert!(!plan.may_write(&state.join("airlock.db")));
        assert!(plan.is_protected(&state.join("airlock.key")));
        assert!(plan.may_write(&workspace.join("src/a.rs")));
    }
}
