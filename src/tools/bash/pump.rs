//! The pump: a command's two pipes read on a thread of its own, with `poll`. A runtime worker
//! woken for every 4 KiB a flooding command writes spent more on waking than on reading, and
//! tokio's timers cannot wait less than a millisecond, which is long enough for a flood to fill
//! the pipe and stop. Here a flood is read in big batches ([`LINGER`] between them), a trickle
//! as it comes, and paced live output goes out when it is due.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::reading::{Buffer, FLOOD_READ, LINGER, read_batch};
use super::{BATCH_BYTES, ERR_BATCH_BYTES, Reader, Stream, read_target};

/// How much lower than airlock's other threads a pump runs (Linux `nice` is per thread). Reading
/// a flood is background work: when many commands flood a machine with few cores, the cockpit's
/// keys and frames come first (32 floods on 2 cores: key -> frame p99 from 350 ms to under 50).
/// Only contention changes anything: alone, a niced pump reads as fast.
pub(super) const PUMP_NICE: i32 = 10;

impl Reader {
    /// Starts the pump on a thread of its own (not the runtime's blocking pool: its lower
    /// priority must not outlive it on a thread that later does other work). The receiver gets
    /// what `pump` returns; it errs if the pump panicked.
    pub(super) fn spawn_pump(
        self,
        stdout: OwnedFd,
        stderr: OwnedFd,
        stop: OwnedFd,
    ) -> std::io::Result<tokio::sync::oneshot::Receiver<(Reader, bool)>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("airlock-pump".into())
            .spawn(move || {
                // A pump that cannot lower its priority still reads.
                let _ = rustix::process::nice(PUMP_NICE);
                let _ = tx.send(self.pump(&stdout, &stderr, &stop));
            })?;
        Ok(rx)
    }

    /// Reads `stdout` and `stderr` (non-blocking) until both have ended, or until `stop` is
    /// readable or closed (then what the pipes still hold is taken, one batch each); returns
    /// the reader with everything read recorded and sent, and whether both pipes ended.
    pub(super) fn pump(
        mut self,
        stdout: &OwnedFd,
        stderr: &OwnedFd,
        stop: &OwnedFd,
    ) -> (Reader, bool) {
        let mut out_buf = Buffer::take(BATCH_BYTES);
        let mut err_buf = Buffer::take(ERR_BATCH_BYTES);
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            let (out_ready, err_ready) = {
                let mut fds = vec![PollFd::new(stop.as_fd(), PollFlags::POLLIN)];
                let out_at = out_open.then(|| {
                    fds.push(PollFd::new(stdout.as_fd(), PollFlags::POLLIN));
                    fds.len() - 1
                });
                let err_at = err_open.then(|| {
                    fds.push(PollFd::new(stderr.as_fd(), PollFlags::POLLIN));
                    fds.len() - 1
                });
                match poll(&mut fds, self.flush_timeout()) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                    // Polling itself failed: nothing more can be read (the caller ends the
                    // command, since its pipes did not end).
                    Err(_) => break,
                }
                let ready = |at: Option<usize>| at.is_some_and(|i| fds[i].any() == Some(true));
                if ready(Some(0)) {
                    // Stopped (the command was ended): what its pipes still hold is its last
                    // word, so it is taken, one batch each (a writer outside the group cannot
                    // keep the pump going).
                    (out_open, err_open) = (
                        out_open && !self.batch(stdout, Stream::Stdout, &mut out_buf).0,
                        err_open && !self.batch(stderr, Stream::Stderr, &mut err_buf).0,
                    );
                    break;
                }
                (ready(out_at), ready(err_at))
            };
            let mut flooding = false;
            if out_ready {
                let (ended, flood) = self.batch(stdout, Stream::Stdout, &mut out_buf);
                out_open = !ended;
                flooding |= flood && !ended;
            }
            if err_ready {
                let (ended, flood) = self.batch(stderr, Stream::Stderr, &mut err_buf);
                err_open = !ended;
                flooding |= flood && !ended;
            }
            if flooding {
                std::thread::sleep(LINGER);
            }
            if self.view.sink.due().is_some_and(|at| at <= Instant::now()) {
                self.view.sink.flush();
            }
        }
        // Whatever paced output is held goes out now, not when the shell ends: the pipes may
        // end long before it does (`exec >&-`).
        self.view.sink.flush();
        (self, !out_open && !err_open)
    }

    /// One batch of what `pipe` holds, recorded (stdout straight into the log's tail once its
    /// head is full). Returns whether the pipe ended, and whether the batch was a flood's: big,
    /// yet short of the room it had, so the reader is keeping up and woke for little.
    fn batch(&mut self, pipe: &OwnedFd, stream: Stream, buf: &mut [u8]) -> (bool, bool) {
        let (filled, room, ended) = match stream {
            Stream::Stdout => {
                let target = read_target(&mut self.log, buf);
                let room = target.len();
                let (filled, ended) = read_batch(pipe.as_fd(), target);
                (filled, room, ended)
            }
            Stream::Stderr => {
                let (filled, ended) = read_batch(pipe.as_fd(), buf);
                (filled, buf.len(), ended)
            }
        };
        if filled > 0 {
            match stream {
                Stream::Stdout => self.record_stdout(buf, filled),
                Stream::Stderr => self.record(Stream::Stderr, &buf[..filled]),
            }
        }
        (ended, filled >= FLOOD_READ && filled < room)
    }

    /// How long `poll` may wait: until paced output is due, or for as long as it takes.
    fn flush_timeout(&self) -> PollTimeout {
        match self.view.sink.due() {
            None => PollTimeout::NONE,
            Some(at) => {
                let wait = at.saturating_duration_since(Instant::now());
                // Rounded up: a wait rounded down to 0 ms would spin until the moment comes.
                let ms = wait.as_micros().div_ceil(1000);
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            }
        }
    }
}
