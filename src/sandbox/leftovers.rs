//! Airlock's own temp dirs for sandboxed commands (`airlock-sandbox-<pid>-...` under the system
//! temp dir) go when their session ends, and those of sessions that died are swept at start.
//!
//! Why it matters beyond tidiness: every session whose workspace sits in `/tmp` makes one, and
//! none was ever removed. 662 had piled up on a test machine, and since a state directory inside
//! `/tmp` makes the sandbox's plan grant each entry of `/tmp` separately, every later command paid
//! for them (1,020 Landlock rules, 20 ms more per command under load).
//!
//! The sweep removes only a directory (not a link) named like ours, owned by this user, whose
//! process is gone: `kill(pid, 0)` says no such process. A reused pid keeps its directory until
//! that process ends too (fail safe: nothing live is ever touched).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub const PREFIX: &str = "airlock-sandbox-";

/// The pid in a name made by `plan::make_own_temp`, if the name is one.
pub fn pid_of(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, tail) = rest.split_once('-')?;
    if tail.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|pid| *pid > 0)
}

fn alive(pid: i32) -> bool {
    use nix::errno::Errno;
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        // It exists but is not ours to signal: alive.
        Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}

/// Removes the temp dirs of sessions whose process is gone, under `base`. Returns how many.
pub fn sweep(base: &Path) -> usize {
    let Ok(entries) = fs::read_dir(base) else {
        return 0;
    };
    let me = nix::unistd::getuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(pid_of) else {
            continue;
        };
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me || pid == std::process::id() as i32 || alive(pid) {
            continue;
        }
        if fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_made_by_airlock_give_a_pid() {
        assert_eq!(pid_of("airlock-sandbox-4242-18ed1a-0"), Some(4242));
        assert_eq!(pid_of("airlock-sandbox-4242-"), None);
        assert_eq!(pid_of("airlock-sandbox-x42-18ed-0"), None);
        assert_eq!(pid_of("airlock-sandbox--1-18ed-0"), None);
        assert_eq!(pid_of("other-4242-18ed-0"), None);
    }

    /// A pid that is surely not running: past the kernel's pid limit.
    const GONE: i32 = 4_194_305;

    #[test]
    fn the_sweep_removes_a_dead_sessions_temp_dir_and_keeps_live_ones_links_and_strangers() {
        let base = tempfile::tempdir().unwrap();
        let dead = base.path().join(format!("{PREFIX}{GONE}-18ed-0"));
        fs::create_dir(&dead).unwrap();
        fs::write(dead.join("left.o"), "x").unwrap();
        let live = base
            .path()
            .join(format!("{PREFIX}{}-18ed-0", std::process::id()));
        fs::create_dir(&live).unwrap();
        let parent = base.path().join(format!("{PREFIX}1-18ed-0"));
        fs::create_dir(&parent).unwrap();
        // A link named like ours, to a directory that must survive.
        let precious = tempfile::tempdir().unwrap();
        fs::write(precious.path().join("keep"), "x").unwrap();
        let link = base.path().join(format!("{PREFIX}{}-18ed-1", GONE - 1));
        std::os::unix::fs::symlink(precious.path(), &link).unwrap();
        let stranger = base.path().join("not-ours");
        fs::create_dir(&stranger).unwrap();

        assert_eq!(sweep(base.path()), 1);
        assert!(!dead.exists(), "the dead session's dir went");
        assert!(live.exists(), "this process's dir stays");
        assert!(parent.exists(), "pid 1 is alive: its dir stays");
        assert!(
            precious.path().join("keep").exists(),
            "a link is not followed"
        );
        assert!(fs::symlink_metadata(&link).is_ok(), "nor removed");
        assert!(stranger.exists());
    }

    #[test]
    fn a_sessions_own_temp_dir_and_what_commands_left_in_it_go_when_its_sandbox_goes() {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("ws");
        fs::create_dir_all(&workspace).unwrap();
        let paths = crate::facts::paths::PathContext::new(
            &workspace,
            &root.path().join("home"),
            &root.path().join("state"),
        )
        .unwrap();
        let policy = super::super::SandboxPolicy {
            default: super::super::Profile::WorkspaceWrite,
            support: super::super::Support::Landlock { abi: 7 },
        };
        let sandbox = super::super::Sandbox::new("airlock-sandbox".into(), policy, paths);
        let dir = sandbox.own_temp().unwrap();
        fs::write(dir.join("build.o"), "x").unwrap();
        assert!(dir.exists());
        drop(sandbox);
        assert!(!dir.exists());
    }
}
