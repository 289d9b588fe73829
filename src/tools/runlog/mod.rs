//! The run log: every byte a command prints, on disk, within a cap.
//!
//! A command that floods (`yes`, a runaway loop) must not fill the user's disk: a red team wrote
//! 20 GB in ten seconds before this cap. The log keeps the first `head` bytes as they come and
//! the last `tail` bytes in memory (allocated only once the head is full), and on `finish` writes
//! a line saying how many bytes were left out between them, then the tail. The beginning shows how
//! the command started, the end how it ended, which is what a person reads a log for.

use std::collections::VecDeque;
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

/// A command's log being written. `B` is the read buffer a reader may lend it
/// ([`RunLog::write_lent`]).
pub struct RunLog<B = Vec<u8>> {
    file: File,
    limits: LogLimits,
    written: u64,
    /// The last bytes past the head, as a ring: `ring[next..]` then `ring[..next]` once it is
    /// full (allocated when the head fills, never grown).
    ring: Vec<u8>,
    next: usize,
    held: usize,
    /// Read buffers lent to the tail, oldest first, with the part of each past the head: the
    /// newest bytes, newer than everything in the ring. Each holds at least half a tail, so
    /// there are never more than three.
    lent: VecDeque<(B, std::ops::Range<usize>)>,
    lent_bytes: usize,
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

impl<B: std::ops::Deref<Target = [u8]>> RunLog<B> {
    pub fn new(file: File, limits: LogLimits) -> RunLog<B> {
        RunLog {
            file,
            limits,
            written: 0,
            ring: Vec::new(),
            next: 0,
            held: 0,
            lent: VecDeque::new(),
            lent_bytes: 0,
            dropped: 0,
            failed: false,
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        let rest = self.write_head(bytes);
        if !rest.is_empty() {
            self.return_lent();
            self.write_tail(rest);
        }
    }

    /// Writes `buf[..len]` as [`RunLog::write`] does, but may keep `buf` instead of copying it
    /// into the tail: past the head, every byte of a flood went through the tail's ring, only
    /// for nearly all of them to be pushed out again (63 MB copied for S1's 79). A big read is
    /// lent instead, and dropped uncopied once the reads after it fill the tail. Gives back a
    /// buffer to read into next (this one, or one no longer needed), or `None`.
    pub fn write_lent(&mut self, buf: B, len: usize) -> Option<B> {
        let past_head = len - self.write_head(&buf[..len]).len();
        let part = len - past_head;
        let cap = self.limits.tail;
        if part == 0 {
            return Some(buf);
        }
        if part * 2 < cap {
            self.return_lent();
            self.write_tail(&buf[past_head..len]);
            return Some(buf);
        }
        self.lent.push_back((buf, past_head..len));
        self.lent_bytes += part;
        let mut freed = None;
        while let Some((_, range)) = self.lent.front() {
            let older = range.len();
            if self.lent_bytes - older < cap {
                break;
            }
            // What came after it fills the tail: it, and all the ring holds, fall out unread.
            self.dropped += (self.held + older) as u64;
            self.held = 0;
            self.next = 0;
            self.lent_bytes -= older;
            freed = self.lent.pop_front().map(|(buf, _)| buf);
        }
        freed
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

    /// Copies what is lent into the ring, oldest first (before anything newer goes in).
    fn return_lent(&mut self) {
        while let Some((buf, range)) = self.lent.pop_front() {
            self.lent_bytes -= range.len();
            self.write_tail(&buf[range]);
        }
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
        self.return_lent();
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
    fn a_log_lent_its_big_reads_holds_exactly_what_copying_every_read_gives() {
        let mut next = crate::protocol::xorshift(0x9e37_79b9_7f4a_7c15);
        let dir = tempfile::tempdir().unwrap();
        for case in 0..200 {
            let limits = LogLimits {
                head: next(3000),
                tail: [1, 7, 64, 500, 1024][next(5) as usize],
            };
            let (copied, lent) = (dir.path().join("copied"), dir.path().join("lent"));
            let mut by_copy: RunLog = RunLog::new(File::create(&copied).unwrap(), limits);
            let mut by_lending: RunLog = RunLog::new(File::create(&lent).unwrap(), limits);
            let mut at = 0u8;
            let mut most_lent = 0;
            for _ in 0..next(60) {
                // Reads of every size, some bigger than the tail, some written the plain way.
                let len = [0, 1, 5, 300, 512, 700, 2048][next(7) as usize];
                let read: Vec<u8> = (0..len)
                    .map(|_| {
                        at = at.wrapping_add(1);
                        at
                    })
                    .collect();
                by_copy.write(&read);
                if next(4) == 0 {
                    by_lending.write(&read);
                } else {
                    let _ = by_lending.write_lent(read, len);
                }
                most_lent = most_lent.max(by_lending.lent.len());
            }
            let (a, b) = (by_copy.finish(), by_lending.finish());
            assert_eq!(a, b, "case {case}, {limits:?}");
            assert_eq!(
                std::fs::read(&copied).unwrap(),
                std::fs::read(&lent).unwrap(),
                "case {case}"
            );
            assert!(most_lent <= 3, "{most_lent} buffers lent at once");
        }
    }
}
