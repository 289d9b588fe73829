//! Waiting for the state database to change without polling it: an inotify watch on its
//! directory. A cockpit waiting for an answer from another terminal (`airlock approve CODE`)
//! sleeps until a file there is written, instead of reading the database three times a second.
//! Where inotify cannot be used, the waiter falls back to looking every few seconds. A full
//! event queue is itself an event (`IN_Q_OVERFLOW`), so it wakes the waiter too.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

/// How long a waiter sleeps at most where it cannot be woken otherwise: no inotify (the
/// waiter looks this often), or no pipe to end a given-up wait with.
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
    /// (those events are consumed). The wait sits on a blocking thread with no time-out (no
    /// timer wakes anything while nothing is written); dropping the future closes a pipe that
    /// thread also waits on, so it ends at once and takes no events a later wait is owed.
    /// Where no pipe can be made, the thread looks again after [`LONGEST_WAIT`].
    pub fn changed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let inotify = self.inotify.clone();
        let pipe = std::io::pipe().ok();
        async move {
            let (stop, _stopper) = match pipe {
                Some((stop, stopper)) => (Some(stop), Some(stopper)),
                None => (None, None),
            };
            // `_stopper` lives as long as this future: dropped, it ends the thread's wait.
            let _ = tokio::task::spawn_blocking(move || wait(&inotify, stop.as_ref())).await;
        }
    }
}

/// Blocks until `inotify` has events, then takes them; or until `stop`'s writing end is closed
/// (the wait was given up: nothing is taken); or, without `stop`, [`LONGEST_WAIT`] at most.
fn wait(inotify: &Inotify, stop: Option<&std::io::PipeReader>) {
    let mut fds = vec![PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
    if let Some(stop) = stop {
        fds.push(PollFd::new(stop.as_fd(), PollFlags::POLLIN));
    }
    let timeout = match stop {
        Some(_) => PollTimeout::NONE,
        None => PollTimeout::try_from(LONGEST_WAIT).unwrap_or(PollTimeout::MAX),
    };
    loop {
        match poll(&mut fds, timeout) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return,
            Ok(_) => break,
        }
    }
    let stopped = fds
        .get(1)
        .and_then(PollFd::revents)
        .is_some_and(|r| !r.is_empty());
    if !stopped {
        let _ = inotify.read_events();
    }
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

    #[test]
    fn a_wait_given_up_ends_at_once_and_leaves_the_events_to_the_next_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let watch = DirWatch::new(dir.path()).expect("inotify works here");
        // Nothing written: the wait ends only because it was given up.
        let (stop, stopper) = std::io::pipe().unwrap();
        let inotify = watch.inotify.clone();
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            wait(&inotify, Some(&stop));
            done.send(()).unwrap();
        });
        drop(stopper);
        assert!(
            ended.recv_timeout(Duration::from_secs(3)).is_ok(),
            "the given-up wait went on"
        );
        // Written and given up at once: the events stay for whoever waits next.
        std::fs::write(dir.path().join("airlock.db-wal"), b"x").unwrap();
        let (stop, stopper) = std::io::pipe().unwrap();
        drop(stopper);
        wait(&watch.inotify, Some(&stop));
        assert!(!watch.inotify.read_events().unwrap().is_empty());
    }
}
