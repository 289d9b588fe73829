//! The state directory: where airlock keeps what must outlive a process (audit logs, run logs,
//! the state database with checkpoints, pending approvals and grants, and the key that signs
//! them). `$AIRLOCK_HOME` wins; otherwise the XDG state directory (`$XDG_STATE_HOME/airlock`, by
//! default `~/.local/state/airlock`). Its directories are 0700 and its files 0600: nobody else
//! on the machine reads a parked command or forges an approval.
//!
//! Storage only: it never decides anything, and must never import `agent`, `tools`, `ui` or
//! `cli` (the agent reaches the state database through traits `cli` implements).

pub mod db;
pub mod key;
pub mod runs;

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
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

/// Makes `path` an existing regular file with mode 0600 (created empty if missing, never
/// through a symlink); an existing one is tightened to 0600.
pub fn private_file(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// The state directory, from the environment. Not created here.
pub fn state_dir() -> PathBuf {
    state_dir_from(
        std::env::var_os("AIRLOCK_HOME").map(PathBuf::from),
        std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
        home_dir(),
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

/// The user's home directory (`$HOME`, or `/` if unset).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
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
        let file = state.join("f");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        private_file(&file).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn a_state_file_that_is_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("db"), "").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("db"), dir.path().join("db")).unwrap();
        assert!(private_file(&dir.path().join("db")).is_err());
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
