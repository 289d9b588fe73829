//! Waiting for the state database to change without polling it: an inotify watch on its
//! directory. A cockpit waiting for an answer from another terminal (`airlock approve CODE`)
//! sleeps until a file there is written, instead of reading the database three times a second.
//! Where inotify cannot be used, the waiter falls back to looking every few seconds.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

/// How long a waiter sleeps at most, even without an event: a change inotify did not report
/// (a file system that does not deliver them, a full event queue) is still seen.
pub const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// A watch on one directory's writes (files written, created, renamed in, deleted).
pub struct DirWatch {
    inotify: Arc<Inotify>,
}

impl DirWatch {
    /// Watches `dir`; `None` when the kernel will not (the waiter then looks every
    /// [`LONGEST_WAIT`]).
    pub fn new(dir: &Path) -> Option<DirWatch> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        inotify
            .add_watch(
                dir,
                AddWatchFlags::IN_MODIFY
                    | AddWatchFlags::IN_CLOSE_WRITE
                    | AddWatchFlags::IN_CREATE
                    | AddWatchFlags::IN_MOVED_TO
                    | AddWatchFlags::IN_DELETE,
            )
            .ok()?;
        Some(DirWatch {
            inotify: Arc::new(inotify),
        })
    }

    /// Resolves once something in the directory was written since the last time it resolved
    /// (those events are consumed), or after [`LONGEST_WAIT`]. The wait sits on a blocking
    /// thread (no timer wakes the runtime); dropping the future leaves that thread to end by
    /// itself, within [`LONGEST_WAIT`].
    pub fn changed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let inotify = self.inotify.clone();
        async move {
            let _ = tokio::task::spawn_blocking(move || wait(&inotify, LONGEST_WAIT)).await;
        }
    }
}

/// Blocks until `inotify` has events or `most` passed, then takes its events.
fn wait(inotify: &Inotify, most: Duration) {
    let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(most).unwrap_or(PollTimeout::MAX);
    let _ = poll(&mut fds, timeout);
    let _ = inotify.read_events();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_in_the_directory_wakes_the_waiter_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let watch = DirWatch::new(dir.path()).expect("inotify works here");
        // Nothing written: still waiting well past the old 300 ms poll. (The same wait goes on
        // below: a dropped wait's thread could take the events a new one waits for.)
        let mut waiting = Box::pin(watch.changed());
        let quiet = tokio::time::timeout(Duration::from_millis(900), &mut waiting).await;
        assert!(quiet.is_err(), "woke with nothing written");
        let path = dir.path().join("airlock.db-wal");
        let writer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            std::fs::write(path, b"x").unwrap();
        });
        let woke = tokio::time::timeout(Duration::from_secs(3), &mut waiting).await;
        assert!(woke.is_ok(), "a write did not wake the waiter");
        writer.await.unwrap();
    }
}
