//! Who uses the state directory. Every process that opens the state database holds a shared
//! `flock` on `airlock.lock` in that directory until it exits; `airlock state repair`, which moves
//! a damaged database aside, takes it exclusively, so it never pulls a database from under a
//! running cockpit, and processes that start meanwhile wait for the repair to end.
//!
//! A BSD `flock`, not a POSIX lock: it belongs to the open file description, so it is neither
//! dropped by closing some other descriptor of the file nor mixed up with the POSIX locks SQLite
//! takes on the database files (which this module never touches).

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::fcntl::{Flock, FlockArg};

pub const LOCK_FILE: &str = "airlock.lock";

/// This process's lock on each state directory it uses, held until it exits.
static HELD: Mutex<Option<HashMap<PathBuf, Flock<File>>>> = Mutex::new(None);

fn open_lock(dir: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(dir.join(LOCK_FILE))
}

fn with_held<T>(f: impl FnOnce(&mut HashMap<PathBuf, Flock<File>>) -> T) -> T {
    let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let held = held.get_or_insert_with(HashMap::new);
    // A directory removed since (a test's scratch state) gives its descriptor back.
    held.retain(|dir, _| dir.join(LOCK_FILE).exists());
    f(held)
}

/// Marks this process as a user of the state directory `dir` (once; later calls return at
/// once). Waits while a repair holds the directory.
pub fn join(dir: &Path) -> std::io::Result<()> {
    with_held(|held| {
        if held.contains_key(dir) {
            return Ok(());
        }
        let lock = Flock::lock(open_lock(dir)?, FlockArg::LockShared)
            .map_err(|(_, errno)| std::io::Error::from(errno))?;
        held.insert(dir.to_path_buf(), lock);
        Ok(())
    })
}

/// The state directory held by this process alone, until the guard drops (then shared again).
pub struct Alone {
    dir: PathBuf,
}

impl Drop for Alone {
    fn drop(&mut self) {
        with_held(|held| {
            if let Some(lock) = held.get(&self.dir) {
                let _ = lock.relock(FlockArg::LockShared);
            }
        });
    }
}

/// Takes `dir` for this process alone, without waiting: `Err` with the ids of the other
/// processes using it (as far as `/proc/locks` tells) when any does.
pub fn alone(dir: &Path) -> Result<Alone, Vec<u32>> {
    let taken = with_held(|held| -> std::io::Result<bool> {
        if !held.contains_key(dir) {
            let lock = Flock::lock(open_lock(dir)?, FlockArg::LockExclusiveNonblock);
            return match lock {
                Ok(lock) => {
                    held.insert(dir.to_path_buf(), lock);
                    Ok(true)
                }
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(false),
                Err((_, errno)) => Err(errno.into()),
            };
        }
        match held[dir].relock(FlockArg::LockExclusiveNonblock) {
            Ok(()) => Ok(true),
            Err(nix::errno::Errno::EWOULDBLOCK) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    });
    match taken {
        Ok(true) => Ok(Alone {
            dir: dir.to_path_buf(),
        }),
        Ok(false) => Err(others_using(dir)),
        Err(_) => Err(Vec::new()),
    }
}

/// The other processes holding a lock on `dir`'s lock file, from `/proc/locks`.
fn others_using(dir: &Path) -> Vec<u32> {
    let Ok(inode) = std::fs::metadata(dir.join(LOCK_FILE)).map(|m| m.ino()) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut pids: Vec<u32> = std::fs::read_to_string("/proc/locks")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let on_it = fields
                .get(5)
                .and_then(|f| f.rsplit(':').next())
                .is_some_and(|ino| ino == inode.to_string());
            let pid = fields.get(4)?.parse().ok()?;
            (fields.get(1) == Some(&"FLOCK") && on_it && pid != me).then_some(pid)
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_another_process_uses_cannot_be_taken_alone_and_names_that_process() {
        let dir = tempfile::tempdir().unwrap();
        join(dir.path()).unwrap();
        // Another process joins: a shell holding a shared flock on the same file.
        let mut other = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 9<\"$1\"; flock -s 9; exec sleep 30")
            .arg("sh")
            .arg(dir.path().join(LOCK_FILE))
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let refused = loop {
            match alone(dir.path()) {
                Err(pids) if !pids.is_empty() => break pids,
                Ok(guard) => drop(guard),
                Err(_) => {}
            }
            assert!(std::time::Instant::now() < deadline, "flock never held");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(!refused.contains(&std::process::id()), "{refused:?}");
        other.kill().unwrap();
        other.wait().unwrap();
        let guard = alone(dir.path()).expect("nobody else uses it now");
        drop(guard);
        // Shared again: joining is instant and another shared holder is welcome.
        join(dir.path()).unwrap();
    }
}
