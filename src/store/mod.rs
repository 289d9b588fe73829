//! The state directory: where airlock keeps what must outlive a process (audit logs now; sessions,
//! checkpoints and pending approvals later). `$AIRLOCK_HOME` wins; otherwise the XDG state
//! directory (`$XDG_STATE_HOME/airlock`, by default `~/.local/state/airlock`).

pub mod db;
pub mod runs;

use std::path::PathBuf;

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
