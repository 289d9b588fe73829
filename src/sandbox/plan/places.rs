//! What a plan mounts over in the command's mount namespace besides the protected places: other
//! programs' sockets, hidden, and the policy files that lie where the command may write, made
//! read-only.

use std::fs;
use std::path::{Path, PathBuf};

use crate::facts::paths::PathContext;

use super::physical;

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
pub(super) fn sockets_to_hide(write: &[PathBuf], workspace: &Path) -> Vec<PathBuf> {
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
pub(super) fn policy_files_in(
    ctx: &PathContext,
    write: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
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
