//! Reading a command's output: the pipes widened, read buffers from a pool, what the pipe holds
//! taken in one batch, a flood read in big batches, whole UTF-8 characters for the live view,
//! and the result's copy filed in big batches from what the live view was sent.

use std::time::Duration;

use crate::output::BoundedOutput;
use crate::output::Thinned;
use crate::protocol::Stream;

/// The result's copy of the output, filed in big batches, from the pieces the output sink
/// thinned (so every byte is scanned once, by the sink's thinner). A flood can arrive in reads
/// of a few kilobytes (when the reader keeps up), and filing a read files its last lines, the
/// ones that could still end up in the tail, one by one: for `seq 1 10000000` that was 3,500
/// reads and 1.4 million lines filed to keep 400. Pieces of one stream are gathered up to
/// [`FILE_BATCH`] bytes and filed together; a piece that skips lines makes what waits unfiled
/// of its stream fall out of the tail, so that is counted, never filed.
pub(super) struct Batched {
    output: BoundedOutput,
    /// From the read-buffer pool (see [`BUFFERS`]): a buffer allocated and freed per run grew
    /// the process by tens of KiB a run (glibc keeps such memory), measured by S5.
    pending: Buffer,
    used: usize,
    stream: Stream,
}

pub(super) const FILE_BATCH: usize = 256 * 1024;

impl Batched {
    pub(super) fn new() -> Batched {
        Batched {
            output: BoundedOutput::new(),
            pending: Buffer::take(FILE_BATCH),
            used: 0,
            stream: Stream::Stdout,
        }
    }

    /// One piece of `stream` as the sink thinned it: `skipped` lines left out, then `text`,
    /// then `cut` bytes of its last line.
    pub(super) fn push(&mut self, stream: Stream, piece: Thinned<'_>) {
        if piece.skipped > 0 {
            self.skip(stream, piece.skipped);
        }
        let bytes = piece.text;
        if stream != self.stream || self.used + bytes.len() > FILE_BATCH {
            self.file();
        }
        self.stream = stream;
        if bytes.len() >= FILE_BATCH {
            self.output.push(stream, bytes);
        } else {
            self.pending[self.used..self.used + bytes.len()].copy_from_slice(bytes);
            self.used += bytes.len();
        }
        if piece.cut > 0 {
            // The line the text ends in was cut: it is filed as cut.
            self.file();
            self.output.cut(stream, piece.cut);
        }
    }

    /// `lines` of `stream` left out here. Once the head is full they push every line the tail
    /// holds out of it, and so the lines waiting unfiled of the same stream: those are counted
    /// with them (filing them and then dropping them would give the same window, slower).
    fn skip(&mut self, stream: Stream, lines: u64) {
        if self.used > 0 && self.stream == stream && self.output.head_is_full() {
            let waiting = memchr::memchr_iter(b'\n', &self.pending[..self.used]).count();
            self.used = 0;
            self.output.skip(stream, lines + waiting as u64);
        } else {
            self.file();
            self.output.skip(stream, lines);
        }
    }

    fn file(&mut self) {
        if self.used > 0 {
            self.output.push(self.stream, &self.pending[..self.used]);
            self.used = 0;
        }
    }

    /// Everything filed, partial lines ended: the output as the result reports it.
    pub(super) fn finish(mut self) -> BoundedOutput {
        self.file();
        self.output.finish();
        self.output
    }
}

/// How much a command's output pipe holds: the most Linux lets a user set by default
/// (`/proc/sys/fs/pipe-max-size`). With the default 64 KiB a flooding command was put to sleep
/// each time 64 KiB waited unread.
pub(super) const PIPE_BYTES: i32 = 1024 * 1024;

/// Makes `pipe` hold up to [`PIPE_BYTES`]; returns its size after. A refusal (a lower limit set
/// by the administrator) leaves it as it was: only speed depends on it.
pub(super) fn widen(pipe: &impl std::os::fd::AsFd) -> Option<i32> {
    use nix::fcntl::{FcntlArg, fcntl};
    let _ = fcntl(pipe, FcntlArg::F_SETPIPE_SZ(PIPE_BYTES));
    fcntl(pipe, FcntlArg::F_GETPIPE_SZ).ok()
}

/// Read buffers kept for the next run. Without them every run allocated and freed its big
/// buffers, and glibc's allocator, which raises its mmap threshold after such a free, kept the
/// freed memory: 200 runs of 1M lines grew by 38 KiB a run; with the pool they stay flat.
static BUFFERS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// At most this many idle buffers are kept (8 concurrent tools' worth of each of the three
/// sizes: stdout and stderr reads, and the result's batch).
const POOLED: usize = 24;

/// A read buffer from the pool, given back when dropped (whatever way the run ends).
pub(super) struct Buffer(Vec<u8>);

impl Buffer {
    pub(super) fn take(size: usize) -> Buffer {
        let mut pool = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
        match pool.iter().position(|b| b.len() == size) {
            Some(i) => Buffer(pool.swap_remove(i)),
            None => Buffer(vec![0u8; size]),
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let mut pool = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOLED {
            pool.push(std::mem::take(&mut self.0));
        }
    }
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::DerefMut for Buffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// A batch this big or bigger that still did not fill its buffer is a flood's: the pump waits
/// [`LINGER`] before it reads again.
pub(super) const FLOOD_READ: usize = 8 * 1024;

/// How long the pump waits between reads of a flood. A reader that keeps up with a flooding
/// command is woken for every 4 KiB it writes: `seq 1 10000000` cost 4,000-6,000 wake-ups, and
/// waking, not reading, was most of what airlock spent on it with another core busy. Waiting
/// this long lets a read take hundreds of kilobytes at once; even at 1 GB/s, far less than the
/// 1 MiB pipe fills meanwhile, so the command never blocks on it. A trickle (small reads) is
/// never held.
pub(super) const LINGER: Duration = Duration::from_micros(200);

/// Reads what the non-blocking pipe `fd` holds into `buf`, until it is empty or `buf` is full.
/// Returns the bytes read and whether the pipe has ended (or failed).
pub(super) fn read_batch(fd: std::os::fd::BorrowedFd<'_>, buf: &mut [u8]) -> (usize, bool) {
    use nix::errno::Errno;
    let mut filled = 0;
    while filled < buf.len() {
        match nix::unistd::read(fd, &mut buf[filled..]) {
            Ok(0) => return (filled, true),
            Ok(n) => filled += n,
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => break,
            Err(_) => return (filled, true),
        }
    }
    (filled, false)
}

/// How many leading bytes can be sent now: all of them, unless they end inside a UTF-8 character
/// (then that character's bytes wait for the next read). Only the end is looked at, so an invalid
/// byte earlier in a big batch does not stop a split character at its end from waiting.
pub fn utf8_ready(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=n.min(4) {
        let b = bytes[n - back];
        if b & 0xC0 == 0x80 {
            // A continuation byte: its lead byte is further back.
            continue;
        }
        let needs = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            // ASCII, or a byte that cannot start a character: nothing to wait for.
            _ => 1,
        };
        return if needs > back { n - back } else { n };
    }
    n
}
