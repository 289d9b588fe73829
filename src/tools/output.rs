//! Bounded tool output: what a run printed, kept in memory as bytes with a line index, head and
//! tail only. Whatever a tool prints, memory stays bounded; what was dropped is counted and said.

use std::collections::VecDeque;

use serde::Serialize;

/// Lines kept from the start of the output.
pub const HEAD_LINES: usize = 200;
/// Lines kept from the end of the output.
pub const TAIL_LINES: usize = 400;
/// Bytes kept of one line; the rest of an overlong line is dropped and marked.
pub const MAX_LINE_BYTES: usize = 2048;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A window of lines stored back to back in one buffer, with where each starts.
#[derive(Debug, Default, Clone)]
struct Lines {
    bytes: VecDeque<u8>,
    /// Length of each line in `bytes`, in order (the newline is not stored).
    lens: VecDeque<usize>,
    /// Per line: it came from stderr / it was cut at `MAX_LINE_BYTES`.
    flags: VecDeque<(Stream, bool)>,
}

impl Lines {
    fn push(&mut self, line: &[u8], stream: Stream, cut: bool) {
        self.bytes.extend(line);
        self.lens.push_back(line.len());
        self.flags.push_back((stream, cut));
    }

    fn pop_front(&mut self) {
        if let Some(len) = self.lens.pop_front() {
            self.bytes.drain(..len);
            self.flags.pop_front();
        }
    }

    fn len(&self) -> usize {
        self.lens.len()
    }

    fn iter(&self) -> impl Iterator<Item = (Vec<u8>, Stream, bool)> + '_ {
        let mut offset = 0;
        self.lens
            .iter()
            .zip(&self.flags)
            .map(move |(len, (stream, cut))| {
                let line: Vec<u8> = self.bytes.range(offset..offset + len).copied().collect();
                offset += len;
                (line, *stream, *cut)
            })
    }
}

/// Output of one run: head and tail windows, the count of lines between them, and partial lines
/// still being assembled per stream.
#[derive(Debug, Default, Clone)]
pub struct BoundedOutput {
    head: Lines,
    tail: Lines,
    omitted: u64,
    total_lines: u64,
    total_bytes: u64,
    partial: [Vec<u8>; 2],
    partial_cut: [bool; 2],
}

fn index(stream: Stream) -> usize {
    match stream {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}

impl BoundedOutput {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a chunk as it arrived; complete lines are filed, a trailing partial line waits.
    pub fn push(&mut self, stream: Stream, chunk: &[u8]) {
        self.total_bytes += chunk.len() as u64;
        let i = index(stream);
        let mut rest = chunk;
        while let Some(pos) = rest.iter().position(|b| *b == b'\n') {
            let (piece, after) = rest.split_at(pos);
            self.extend_partial(i, piece);
            // The partial buffer is lent out and handed back cleared: no allocation per line.
            let mut line = std::mem::take(&mut self.partial[i]);
            let cut = std::mem::take(&mut self.partial_cut[i]);
            self.file_line(&line, stream, cut);
            line.clear();
            self.partial[i] = line;
            rest = &after[1..];
        }
        self.extend_partial(i, rest);
    }

    fn extend_partial(&mut self, i: usize, piece: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.partial[i].len());
        if piece.len() > room {
            self.partial_cut[i] = true;
        }
        self.partial[i].extend_from_slice(&piece[..piece.len().min(room)]);
    }

    fn file_line(&mut self, line: &[u8], stream: Stream, cut: bool) {
        self.total_lines += 1;
        if self.head.len() < HEAD_LINES {
            self.head.push(line, stream, cut);
            return;
        }
        self.tail.push(line, stream, cut);
        if self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
            self.omitted += 1;
        }
    }

    /// Files any partial lines (call when the run has ended).
    pub fn finish(&mut self) {
        for stream in [Stream::Stdout, Stream::Stderr] {
            let i = index(stream);
            if !self.partial[i].is_empty() {
                let line = std::mem::take(&mut self.partial[i]);
                let cut = std::mem::take(&mut self.partial_cut[i]);
                self.file_line(&line, stream, cut);
            }
        }
    }

    pub fn total_lines(&self) -> u64 {
        self.total_lines
    }

    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    pub fn omitted_lines(&self) -> u64 {
        self.omitted
    }

    /// Bytes held in memory, for tests and benchmarks.
    pub fn retained_bytes(&self) -> usize {
        self.head.bytes.len()
            + self.tail.bytes.len()
            + self.partial[0].len()
            + self.partial[1].len()
    }

    /// The kept lines, in order, with the omitted-lines marker where lines were dropped and any
    /// unfinished last line. For the results pane: at most HEAD + TAIL + 3 entries.
    pub fn lines(&self) -> Vec<(String, Option<Stream>)> {
        let mut out = Vec::with_capacity(self.head.len() + self.tail.len() + 3);
        let text = |bytes: &[u8], cut: bool| {
            let mut s = String::from_utf8_lossy(bytes).into_owned();
            if cut {
                s.push_str(" … [line cut]");
            }
            s
        };
        for (bytes, stream, cut) in self.head.iter() {
            out.push((text(&bytes, cut), Some(stream)));
        }
        if self.omitted > 0 {
            out.push((format!("… {} lines omitted …", self.omitted), None));
        }
        for (bytes, stream, cut) in self.tail.iter() {
            out.push((text(&bytes, cut), Some(stream)));
        }
        for stream in [Stream::Stdout, Stream::Stderr] {
            let i = index(stream);
            if !self.partial[i].is_empty() {
                out.push((text(&self.partial[i], self.partial_cut[i]), Some(stream)));
            }
        }
        out
    }

    /// The kept output as text for the model or a log: head, an explicit marker for what was
    /// dropped, tail. Stderr lines are prefixed so the two streams stay distinguishable.
    pub fn render(&self) -> String {
        fn line(out: &mut String, bytes: &[u8], stream: Stream, cut: bool) {
            if stream == Stream::Stderr {
                out.push_str("[stderr] ");
            }
            out.push_str(&String::from_utf8_lossy(bytes));
            if cut {
                out.push_str(" … [line cut]");
            }
            out.push('\n');
        }
        let mut out = String::new();
        for (bytes, stream, cut) in self.head.iter() {
            line(&mut out, &bytes, stream, cut);
        }
        if self.omitted > 0 {
            out.push_str(&format!("… {} lines omitted …\n", self.omitted));
        }
        for (bytes, stream, cut) in self.tail.iter() {
            line(&mut out, &bytes, stream, cut);
        }
        for stream in [Stream::Stdout, Stream::Stderr] {
            let i = index(stream);
            if !self.partial[i].is_empty() {
                line(&mut out, &self.partial[i], stream, self.partial_cut[i]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_output_keeps_head_and_tail_and_says_what_it_dropped() {
        let mut out = BoundedOutput::new();
        for i in 0..100_000 {
            out.push(Stream::Stdout, format!("line {i}\n").as_bytes());
        }
        out.finish();
        let text = out.render();
        assert!(text.starts_with("line 0\nline 1\n"));
        assert!(text.ends_with("line 99999\n"));
        let dropped = 100_000 - HEAD_LINES - TAIL_LINES;
        assert!(
            text.contains(&format!("… {dropped} lines omitted …")),
            "{}",
            &text[..200]
        );
        assert_eq!(out.omitted_lines(), dropped as u64);
        assert_eq!(out.total_lines(), 100_000);
        assert!(out.retained_bytes() < (HEAD_LINES + TAIL_LINES) * 16);
    }

    #[test]
    fn a_huge_line_is_cut_and_memory_stays_bounded() {
        let mut out = BoundedOutput::new();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..64 {
            out.push(Stream::Stdout, &chunk);
        }
        out.push(Stream::Stdout, b"\n");
        out.finish();
        assert!(out.retained_bytes() <= MAX_LINE_BYTES);
        assert!(out.render().contains("[line cut]"));
        assert_eq!(out.total_bytes(), (64 << 20) + 1);
    }

    #[test]
    fn lines_split_across_chunks_are_joined_and_streams_stay_apart() {
        let mut out = BoundedOutput::new();
        out.push(Stream::Stdout, b"hel");
        out.push(Stream::Stderr, b"oops\n");
        out.push(Stream::Stdout, b"lo\n");
        out.finish();
        assert_eq!(out.render(), "[stderr] oops\nhello\n");
    }
}
