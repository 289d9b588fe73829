//! The state directory: where airlock keeps what must outlive a process (audit logs, run logs,
//! the state database with checkpoints, pending approvals and grants, and the key that signs
//! them). `$AIRLOCK_HOME` wins; otherwise the XDG state directory (`$XDG_STATE_HOME/airlock`, by
//! default `~/.local/state/airlock`). Its directories are 0700 and its files 0600: nobody else
//! on the machine reads a parked command or forges an approval.
//!
//! Storage only: it never decides anything, and must never import `agent`, `tools`, `model`,
//! `sandbox`, `output`, `config`, `ui`, `cli` or `demo` (the agent reaches the state database
//! through traits `cli` implements; the MCP client through `mcp::pins::PinBook`, implemented
//! here).

pub mod db;
pub mod key;
pub mod runs;
pub mod users;
pub mod watch;

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Makes `dir` (and any missing parent) with mode 0700; an existing one of this user is
/// tightened to 0700.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("it is not a directory"));
    }
    if meta.uid() == nix::unistd::geteuid().as_raw() && meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Makes the SQLite database at `db` exist as a regular file of mode 0600, and tightens its WAL
/// and SHM files (when there are any) to 0600, **without opening any of them**. On Linux, closing
/// any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included: a
/// process that opened and closed `airlock.db-shm` next to its own live connection made the
/// next process to close believe it was SQLite's last user, checkpoint, and unlink the WAL under
/// a running cockpit. So a missing database is made with `mknod` (an empty regular file, no
/// descriptor), and an existing file is checked with `lstat` (a symlink or anything but a regular
/// file is refused) and tightened with `chmod` by path. SQLite gives the WAL and SHM files the
/// database file's mode when it makes them.
pub fn private_db_files(db: &Path) -> std::io::Result<()> {
    use nix::sys::stat::{Mode, SFlag, mknod};
    match mknod(db, SFlag::S_IFREG, Mode::S_IRUSR | Mode::S_IWUSR, 0) {
        Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let me = nix::unistd::geteuid().as_raw();
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        let meta = match std::fs::symlink_metadata(&file) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !suffix.is_empty() => continue,
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_file() {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file (a symlink or a device?)",
                file.display()
            )));
        }
        if meta.uid() == me && meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// The state directory, from the environment. Not created here.
pub fn state_dir() -> PathBuf {
    state_dir_from(
        std::env::var_os("AIRLOCK_HOME").map(PathBuf::from),
        std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
        crate::facts::paths::home_dir(),
    )
}

pub fn state_dir_from(
    airlock_home: Option<PathBuf>,
    xdg_state: Option<PathBuf>,
    home: PathBuf,
) -> PathBuf {
    match (airlock_home, xdg_state) {
        (Some(dir), _) if !dir.as_os_str().is_empty() => dir,
        (_, Some(dir)) if dir.is_absolute() => dir.join("airlock"),
        _ => home.join(".local/state/airlock"),
    }
}

/// Where the audit logs of every session live.
pub fn audit_dir(state: &std::path::Path) -> PathBuf {
    state.join("audit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_directories_and_files_are_private_to_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("a/state");
        private_dir(&state).unwrap();
        assert_eq!(std::fs::metadata(&state).unwrap().mode() & 0o777, 0o700);
        let loose = dir.path().join("loose");
        std::fs::create_dir(&loose).unwrap();
        std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&loose).unwrap();
        assert_eq!(std::fs::metadata(&loose).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_missing_database_is_made_empty_and_private_and_loose_ones_are_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("airlock.db");
        private_db_files(&db).unwrap();
        let meta = std::fs::metadata(&db).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.len(), 0);
        assert_eq!(meta.mode() & 0o777, 0o600);
        for file in ["airlock.db", "airlock.db-wal", "airlock.db-shm"] {
            let file = dir.path().join(file);
            std::fs::write(&file, "x").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        private_db_files(&db).unwrap();
        for file in ["airlock.db", "airlock.db-wal", "airlock.db-shm"] {
            let file = dir.path().join(file);
            assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        }
    }

    #[test]
    fn a_database_file_that_is_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("db"), "").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("db"), dir.path().join("db")).unwrap();
        assert!(private_db_files(&dir.path().join("db")).is_err());
        std::fs::write(dir.path().join("ok"), "").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("db"), dir.path().join("ok-wal")).unwrap();
        assert!(private_db_files(&dir.path().join("ok")).is_err());
    }

    #[test]
    fn airlock_home_wins_then_xdg_state_then_the_default_under_home() {
        let home = PathBuf::from("/home/u");
        assert_eq!(
            state_dir_from(Some("/a".into()), Some("/x".into()), home.clone()),
            PathBuf::from("/a")
        );
        assert_eq!(
            state_dir_from(None, Some("/x".into()), home.clone()),
            PathBuf::from("/x/airlock")
        );
        assert_eq!(
            state_dir_from(None, Some("relative".into()), home.clone()),
            PathBuf::from("/home/u/.local/state/airlock")
        );
        assert_eq!(
            state_dir_from(None, None, home),
            PathBuf::from("/home/u/.local/state/airlock")
        );
    }
}
