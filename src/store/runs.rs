//! Run logs (`runs/<session>/<call>.log`): every byte a tool printed. They are kept for a while
//! and within a disk budget, oldest sessions first out, so a few floods cannot fill the disk.
//! The running session's logs are never touched; nothing outside `runs/` is.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Session logs older than this go.
pub const MAX_AGE: Duration = Duration::from_secs(14 * 24 * 3600);
/// Past this many bytes of logs in all, the oldest sessions go until the rest fits.
pub const BUDGET_BYTES: u64 = 2 << 30;
/// Sessions written to more recently than this are never removed for the budget: another
/// cockpit may still be running them.
pub const RECENT: Duration = Duration::from_secs(24 * 3600);

/// What pruning removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub sessions: usize,
    pub bytes: u64,
}

/// Where the run logs of every session live.
pub fn runs_dir(state: &Path) -> PathBuf {
    state.join("runs")
}

struct Session {
    dir: PathBuf,
    bytes: u64,
    newest: SystemTime,
}

fn session(dir: PathBuf) -> Option<Session> {
    let mut bytes = 0;
    let mut newest = std::fs::symlink_metadata(&dir).ok()?.modified().ok()?;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        bytes += meta.len();
        if let Ok(modified) = meta.modified() {
            newest = newest.max(modified);
        }
    }
    Some(Session { dir, bytes, newest })
}

/// Removes the session log directories in `runs` last written before `now - max_age`, then the
/// oldest others until the rest is within `budget` bytes, never the one named `keep`. Only plain
/// directories directly under `runs` are considered (a symlink is never followed).
pub fn prune(runs: &Path, keep: &str, now: SystemTime, max_age: Duration, budget: u64) -> Pruned {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Pruned::default();
    };
    let mut sessions: Vec<Session> = entries
        .flatten()
        .filter(|e| e.file_name() != keep)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| session(e.path()))
        .collect();
    // Oldest first.
    sessions.sort_by_key(|s| s.newest);
    let mut total: u64 = sessions.iter().map(|s| s.bytes).sum();
    let oldest_kept = now.checked_sub(max_age).unwrap_or(SystemTime::UNIX_EPOCH);
    let recent = now.checked_sub(RECENT).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut pruned = Pruned::default();
    for s in sessions {
        let too_old = s.newest < oldest_kept;
        let over_budget = total > budget && s.newest < recent;
        if !too_old && !over_budget {
            break;
        }
        if std::fs::remove_dir_all(&s.dir).is_ok() {
            pruned.sessions += 1;
            pruned.bytes += s.bytes;
            total -= s.bytes;
        }
    }
    pruned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session_with(runs: &Path, name: &str, bytes: usize, age_days: u64, now: SystemTime) {
        let dir = runs.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c1.log");
        std::fs::write(&file, vec![b'x'; bytes]).unwrap();
        let when = now - Duration::from_secs(age_days * 24 * 3600);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(when)
            .unwrap();
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    fn left(runs: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(runs)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn sessions_older_than_the_age_limit_go_and_recent_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        session_with(dir.path(), "old", 10, 20, now);
        session_with(dir.path(), "recent", 10, 2, now);
        let pruned = prune(dir.path(), "current", now, MAX_AGE, BUDGET_BYTES);
        assert_eq!(
            pruned,
            Pruned {
                sessions: 1,
                bytes: 10
            }
        );
        assert_eq!(left(dir.path()), ["recent"]);
    }

    #[test]
    fn over_the_budget_the_oldest_sessions_go_until_the_rest_fits() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        session_with(dir.path(), "a", 400, 4, now);
        session_with(dir.path(), "b", 400, 3, now);
        session_with(dir.path(), "c", 400, 2, now);
        let pruned = prune(dir.path(), "current", now, MAX_AGE, 900);
        assert_eq!(
            pruned,
            Pruned {
                sessions: 1,
                bytes: 400
            }
        );
        assert_eq!(left(dir.path()), ["b", "c"]);
    }

    #[test]
    fn a_session_written_to_today_stays_even_over_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        session_with(dir.path(), "other-live-cockpit", 5000, 0, now);
        let pruned = prune(dir.path(), "current", now, MAX_AGE, 100);
        assert_eq!(pruned, Pruned::default());
        assert_eq!(left(dir.path()), ["other-live-cockpit"]);
    }

    #[test]
    fn the_running_session_is_never_pruned_however_old_or_big() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        session_with(dir.path(), "current", 5000, 30, now);
        let pruned = prune(dir.path(), "current", now, MAX_AGE, 100);
        assert_eq!(pruned, Pruned::default());
        assert_eq!(left(dir.path()), ["current"]);
    }

    #[test]
    fn a_symlink_in_the_runs_directory_is_not_followed_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        std::fs::write(elsewhere.path().join("precious.txt"), "keep me").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("link")).unwrap();
        session_with(dir.path(), "old", 10, 20, now);
        prune(dir.path(), "current", now, MAX_AGE, 0);
        assert_eq!(left(dir.path()), ["link"]);
        assert!(elsewhere.path().join("precious.txt").exists());
    }

    #[test]
    fn no_runs_directory_is_nothing_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let pruned = prune(
            &dir.path().join("runs"),
            "current",
            SystemTime::now(),
            MAX_AGE,
            BUDGET_BYTES,
        );
        assert_eq!(pruned, Pruned::default());
    }
}
