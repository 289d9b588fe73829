//! The run log: every byte a command prints, on disk, within a cap.
//!
//! A command that floods (`yes`, a runaway loop) must not fill the user's disk: a red team wrote
//! 20 GB in ten seconds before this cap. The log keeps the first `head` bytes as they come and
//! the last `tail` bytes in memory (allocated only once the head is full), and on `finish` writes
//! a line saying how many bytes were left out between them, then the tail. The beginning shows how
//! the command started, the end how it ended, which is what a person reads a log for.

use std::fs::File;
use std::io::Write;

/// How much of a command's output its log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimits {
    pub head: u64,
    pub tail: usize,
}

impl LogLimits {
    /// 16 MiB from the start and 1 MiB from the end: a 17 MiB log at most per command. The tail
    /// is held in memory until the command ends (then written, before its result goes out), so
    /// it is kept small: with 4 MiB, every flood past the head grew airlock by 4 MiB while it ran,
    /// which S5 measures ("flat in the output's size"). 1 MiB is still thousands of lines: how
    /// the command ended. The head was 60 MiB: writing it was a third of what airlock spent on a
    /// 10-million-line flood (S1), for a middle nobody reads; 16 MiB is still a couple of hundred
    /// thousand lines of a build or a test run.
    pub const DEFAULT: LogLimits = LogLimits {
        head: 16 * 1024 * 1024,
        tail: 1024 * 1024,
    };

    pub fn describe(&self) -> String {
        format!(
            "the first {} and the last {}",
            human_bytes(self.head),
            human_bytes(self.tail as u64)
        )
    }
}

pub fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    const KIB: u64 = 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// A command's log being written.
pub struct RunLog {
    file: File,
    limits: LogLimits,
    written: u64,
    /// The last bytes past the head, as a ring: `ring[next..]` then `ring[..next]` once it is
    /// full (allocated when the head fills, never grown).
    ring: Vec<u8>,
    next: usize,
    held: usize,
    /// Bytes that went through the tail and fell out of it.
    dropped: u64,
    /// Set by the first write that fails (disk full): the log stops, the command goes on.
    failed: bool,
}

/// What a finished log holds, for the tool result to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSummary {
    pub left_out: u64,
    pub failed: bool,
}

/// The smallest tail a reader reads straight into ([`RunLog::read_space`]); a smaller one would
/// make every read small.
const READ_INTO_TAIL: usize = 64 * 1024;

impl RunLog {
    pub fn new(file: File, limits: LogLimits) -> RunLog {
        RunLog {
            file,
            limits,
            written: 0,
            ring: Vec::new(),
            next: 0,
            held: 0,
            dropped: 0,
            failed: false,
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        let rest = self.write_head(bytes);
        self.write_tail(rest);
    }

    /// Once the head is full, where the next read can go straight into the tail, up to `most`
    /// bytes: the ring's next free (or oldest) bytes. Past the head, every byte of a flood went
    /// through the tail only for nearly all of them to be pushed out again: 63 MB copied into
    /// the ring for S1's 79 MB. Read into it instead, that copy is gone. Follow a read with
    /// [`RunLog::commit`]; until then this gives the same place again.
    pub fn read_space(&mut self, most: usize) -> Option<&mut [u8]> {
        if !self.reads_into_tail() {
            return None;
        }
        let cap = self.limits.tail;
        if self.ring.is_empty() {
            self.ring = vec![0; cap];
        }
        let end = cap.min(self.next + most);
        Some(&mut self.ring[self.next..end])
    }

    /// Whether reads go straight into the tail now ([`RunLog::read_space`]).
    pub fn reads_into_tail(&self) -> bool {
        self.written >= self.limits.head && self.limits.tail >= READ_INTO_TAIL
    }

    /// Takes the first `len` bytes of [`RunLog::read_space`] into the tail; returns them.
    pub fn commit(&mut self, len: usize) -> &[u8] {
        let cap = self.ring.len();
        let start = self.next;
        let len = len.min(cap - start);
        self.dropped += (self.held + len).saturating_sub(cap) as u64;
        self.held = (self.held + len).min(cap);
        self.next = (start + len) % cap.max(1);
        &self.ring[start..start + len]
    }

    /// Writes what fits of `bytes` into the head; returns the rest.
    fn write_head<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        if self.written >= self.limits.head {
            return bytes;
        }
        let room = (self.limits.head - self.written).min(bytes.len() as u64) as usize;
        if !self.failed && self.file.write_all(&bytes[..room]).is_err() {
            self.failed = true;
        }
        self.written += room as u64;
        &bytes[room..]
    }

    fn write_tail(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let cap = self.limits.tail;
        if cap == 0 {
            self.dropped += bytes.len() as u64;
            return;
        }
        if self.ring.is_empty() {
            self.ring = vec![0; cap];
        }
        if bytes.len() >= cap {
            self.dropped += (self.held + bytes.len() - cap) as u64;
            self.ring.copy_from_slice(&bytes[bytes.len() - cap..]);
            self.next = 0;
            self.held = cap;
            return;
        }
        self.dropped += (self.held + bytes.len()).saturating_sub(cap) as u64;
        self.held = (self.held + bytes.len()).min(cap);
        let first = (cap - self.next).min(bytes.len());
        self.ring[self.next..self.next + first].copy_from_slice(&bytes[..first]);
        let rest = bytes.len() - first;
        self.ring[..rest].copy_from_slice(&bytes[first..]);
        self.next = (self.next + bytes.len()) % cap;
    }

    /// Writes the marker and the kept tail. Returns what the log left out.
    pub fn finish(mut self) -> LogSummary {
        if self.dropped > 0 && !self.failed {
            let marker = format!(
                "\n[airlock: {} bytes of output were left out of this log here; a log keeps {} of a command's output]\n",
                self.dropped,
                self.limits.describe()
            );
            if self.file.write_all(marker.as_bytes()).is_err() {
                self.failed = true;
            }
        }
        // Oldest first: once the ring has wrapped, its oldest byte is at `next`.
        let (a, b) = if self.held == self.ring.len() {
            (&self.ring[self.next..], &self.ring[..self.next])
        } else {
            (&self.ring[..self.held], &self.ring[..0])
        };
        if !self.failed && (self.file.write_all(a).is_err() || self.file.write_all(b).is_err()) {
            self.failed = true;
        }
        LogSummary {
            left_out: self.dropped,
            failed: self.failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(chunks: &[&[u8]], limits: LogLimits) -> (Vec<u8>, LogSummary) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        let mut log: RunLog = RunLog::new(File::create(&path).unwrap(), limits);
        for chunk in chunks {
            log.write(chunk);
        }
        let summary = log.finish();
        (std::fs::read(&path).unwrap(), summary)
    }

    const SMALL: LogLimits = LogLimits { head: 4, tail: 3 };

    #[test]
    fn output_within_the_cap_is_logged_whole_with_no_marker() {
        let (bytes, summary) = log_of(&[b"ab", b"cd", b"efg"], SMALL);
        assert_eq!(bytes, b"abcdefg");
        assert_eq!(summary.left_out, 0);
    }

    #[test]
    fn a_flood_keeps_the_head_and_the_tail_and_says_how_much_was_left_out_between() {
        let (bytes, summary) = log_of(&[b"abc", b"defgh", b"ij", b"klmnop", b"q"], SMALL);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("abcd\n[airlock: 10 bytes of output were left out"));
        assert!(text.contains("the first 4 bytes and the last 3 bytes"));
        assert!(text.ends_with("]\nopq"), "{text}");
        assert_eq!(summary.left_out, 10);
    }

    #[test]
    fn one_write_bigger_than_the_tail_keeps_only_its_end() {
        let (bytes, summary) = log_of(&[b"0123456789abcdef"], SMALL);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("0123\n[airlock: 9 bytes"));
        assert!(text.ends_with("def"));
        assert_eq!(summary.left_out, 9);
    }

    #[test]
    fn the_default_cap_is_described_in_mebibytes() {
        assert_eq!(
            LogLimits::DEFAULT.describe(),
            "the first 16 MiB and the last 1 MiB"
        );
    }

    #[test]
    fn a_log_read_straight_into_holds_exactly_what_copying_every_read_gives() {
        let mut next = crate::output::bounded::xorshift(0x9e37_79b9_7f4a_7c15);
        let dir = tempfile::tempdir().unwrap();
        for case in 0..200 {
            let limits = LogLimits {
                head: next(300_000),
                tail: [1, 7, READ_INTO_TAIL, READ_INTO_TAIL + 999, 200_000][next(5) as usize],
            };
            let (copied, direct) = (dir.path().join("copied"), dir.path().join("direct"));
            let mut by_copy = RunLog::new(File::create(&copied).unwrap(), limits);
            let mut by_reading = RunLog::new(File::create(&direct).unwrap(), limits);
            let mut at = 0u8;
            let mut byte = || {
                at = at.wrapping_add(1);
                at
            };
            for _ in 0..next(60) {
                // Reads of every size, some bigger than the tail, some written the plain way.
                let len = [0, 1, 5, 300, 4096, 70_000, 300_000][next(7) as usize];
                match by_reading.read_space(len) {
                    Some(space) if next(4) != 0 => {
                        let n = space.len().min(len);
                        let read: Vec<u8> = (0..n).map(|_| byte()).collect();
                        space[..n].copy_from_slice(&read);
                        assert_eq!(by_reading.commit(n), read);
                        by_copy.write(&read);
                    }
                    _ => {
                        let read: Vec<u8> = (0..len).map(|_| byte()).collect();
                        by_copy.write(&read);
                        by_reading.write(&read);
                    }
                }
            }
            let (a, b) = (by_copy.finish(), by_reading.finish());
            assert_eq!(a, b, "case {case}, {limits:?}");
            assert_eq!(
                std::fs::read(&copied).unwrap(),
                std::fs::read(&direct).unwrap(),
                "case {case}"
            );
        }
    }

    #[test]
    fn a_log_is_read_straight_into_only_once_its_head_is_full_and_its_tail_is_big_enough() {
        let dir = tempfile::tempdir().unwrap();
        let limits = LogLimits {
            head: 10,
            tail: READ_INTO_TAIL,
        };
        let mut log = RunLog::new(File::create(dir.path().join("a")).unwrap(), limits);
        assert!(log.read_space(100).is_none());
        log.write(b"0123456789");
        assert_eq!(log.read_space(100).map(|s| s.len()), Some(100));
        let small = LogLimits { head: 0, tail: 3 };
        let mut log = RunLog::new(File::create(dir.path().join("b")).unwrap(), small);
        assert!(log.read_space(100).is_none());
    }
}
