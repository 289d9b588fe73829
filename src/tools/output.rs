//! Bounded tool output: what a run printed, kept in memory as bytes with a line index, head and
//! tail only. Whatever a tool prints, memory stays bounded; what was dropped is counted and said.

use std::collections::VecDeque;

pub use crate::protocol::{
    OUTPUT_HEAD_LINES as HEAD_LINES, OUTPUT_TAIL_LINES as TAIL_LINES, Stream,
    unseen_lines as skippable,
};
/// Bytes kept of one line; the rest of an overlong line is dropped and marked.
pub const MAX_LINE_BYTES: usize = 2048;

/// A window of lines stored back to back in one buffer, with where each starts: any line is
/// read without walking the others (the results pane reads only what it shows).
#[derive(Debug, Default, Clone)]
struct Lines {
    bytes: VecDeque<u8>,
    /// Absolute offset of each line's first byte (the newline is not stored); offsets only grow,
    /// `dropped` is the absolute offset of `bytes[0]`.
    starts: VecDeque<u64>,
    dropped: u64,
    /// Per line: it came from stderr / it was cut at `MAX_LINE_BYTES`.
    flags: VecDeque<(Stream, bool)>,
}

impl Lines {
    fn push(&mut self, line: &[u8], stream: Stream, cut: bool) {
        self.starts
            .push_back(self.dropped + self.bytes.len() as u64);
        self.bytes.extend(line);
        self.flags.push_back((stream, cut));
    }

    fn pop_front(&mut self) {
        if self.starts.pop_front().is_some() {
            let next = self
                .starts
                .front()
                .copied()
                .unwrap_or(self.dropped + self.bytes.len() as u64);
            let len = (next - self.dropped) as usize;
            self.bytes.drain(..len);
            self.dropped = next;
            self.flags.pop_front();
        }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.starts.shrink_to_fit();
        self.flags.shrink_to_fit();
    }

    fn clear(&mut self) {
        self.dropped += self.bytes.len() as u64;
        self.bytes.clear();
        self.starts.clear();
        self.flags.clear();
    }

    /// Line `i`'s bytes (as up to two slices: the ring may wrap), stream and cut flag.
    fn get(&self, i: usize) -> Option<(Vec<u8>, Stream, bool)> {
        let start = (*self.starts.get(i)? - self.dropped) as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.bytes.len(), |s| (s - self.dropped) as usize);
        let (stream, cut) = self.flags[i];
        Some((self.bytes.range(start..end).copied().collect(), stream, cut))
    }

    fn iter(&self) -> impl Iterator<Item = (Vec<u8>, Stream, bool)> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
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
    ///
    /// Once the head is full, only the last `TAIL_LINES` lines of a chunk can still be shown, so
    /// the lines before them are counted (a vectorised newline count) and never copied: a flood
    /// costs a scan of its bytes, not work per line.
    pub fn push(&mut self, stream: Stream, chunk: &[u8]) {
        self.total_bytes += chunk.len() as u64;
        let i = index(stream);
        let mut rest = chunk;
        while self.head.len() < HEAD_LINES {
            let Some(pos) = memchr::memchr(b'\n', rest) else {
                self.extend_partial(i, rest);
                return;
            };
            self.file_piece(i, stream, &rest[..pos]);
            rest = &rest[pos + 1..];
        }
        if let Some((skipped, kept)) = skippable(rest) {
            self.skip(stream, skipped);
            rest = &rest[kept..];
        }
        while let Some(pos) = memchr::memchr(b'\n', rest) {
            self.file_piece(i, stream, &rest[..pos]);
            rest = &rest[pos + 1..];
        }
        self.extend_partial(i, rest);
    }

    /// Counts `lines` that were dropped unseen right here (the head must be full): they end
    /// this stream's partial line and push every kept tail line out.
    pub fn skip(&mut self, stream: Stream, lines: u64) {
        if lines == 0 {
            return;
        }
        let i = index(stream);
        self.total_lines += lines;
        self.omitted += self.tail.len() as u64 + lines;
        self.tail.clear();
        self.partial[i].clear();
        self.partial_cut[i] = false;
    }

    /// Ends the partial line of stream `i` with `piece` and files it.
    fn file_piece(&mut self, i: usize, stream: Stream, piece: &[u8]) {
        if self.partial[i].is_empty() && piece.len() <= MAX_LINE_BYTES {
            // A whole line in one read (the usual case): filed straight from the read.
            self.file_line(piece, stream, false);
            return;
        }
        self.extend_partial(i, piece);
        // The partial buffer is lent out and handed back cleared: no allocation per line.
        let mut line = std::mem::take(&mut self.partial[i]);
        let cut = std::mem::take(&mut self.partial_cut[i]);
        self.file_line(&line, stream, cut);
        line.clear();
        self.partial[i] = line;
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

    /// Gives back spare capacity (for a finished run that is kept for display).
    pub fn shrink_to_fit(&mut self) {
        self.head.shrink_to_fit();
        self.tail.shrink_to_fit();
        for partial in &mut self.partial {
            partial.shrink_to_fit();
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

    /// How many lines `line` can show: head, the omitted-lines marker if lines were dropped,
    /// tail, and any unfinished last lines.
    pub fn len(&self) -> usize {
        self.head.len()
            + usize::from(self.omitted > 0)
            + self.tail.len()
            + self.partial.iter().filter(|p| !p.is_empty()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` of what `len` counts, as text with its stream (`None` for the marker). Costs
    /// only that line: the results pane draws what is visible, however much was kept.
    pub fn line(&self, i: usize) -> Option<(String, Option<Stream>)> {
        let text = |bytes: &[u8], cut: bool| {
            let mut s = String::from_utf8_lossy(bytes).into_owned();
            if cut {
                s.push_str(" … [line cut]");
            }
            s
        };
        if i < self.head.len() {
            let (bytes, stream, cut) = self.head.get(i)?;
            return Some((text(&bytes, cut), Some(stream)));
        }
        let mut i = i - self.head.len();
        if self.omitted > 0 {
            if i == 0 {
                return Some((format!("… {} lines omitted …", self.omitted), None));
            }
            i -= 1;
        }
        if i < self.tail.len() {
            let (bytes, stream, cut) = self.tail.get(i)?;
            return Some((text(&bytes, cut), Some(stream)));
        }
        i -= self.tail.len();
        [Stream::Stdout, Stream::Stderr]
            .into_iter()
            .filter(|s| !self.partial[index(*s)].is_empty())
            .nth(i)
            .map(|stream| {
                let j = index(stream);
                (text(&self.partial[j], self.partial_cut[j]), Some(stream))
            })
    }

    /// Every line `line` can show, in order.
    pub fn lines(&self) -> Vec<(String, Option<Stream>)> {
        (0..self.len()).filter_map(|i| self.line(i)).collect()
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
    fn each_line_reads_on_its_own_and_matches_the_whole_listing() {
        let mut out = BoundedOutput::new();
        for i in 0..5_000 {
            let stream = if i % 7 == 0 {
                Stream::Stderr
            } else {
                Stream::Stdout
            };
            out.push(stream, format!("{}{i}\n", "x".repeat(i % 13)).as_bytes());
        }
        out.push(Stream::Stdout, b"unfinished");
        let all = out.lines();
        assert_eq!(all.len(), out.len());
        assert_eq!(all.len(), HEAD_LINES + 1 + TAIL_LINES + 1);
        for (i, line) in all.iter().enumerate() {
            assert_eq!(out.line(i).as_ref(), Some(line), "line {i}");
        }
        assert_eq!(out.line(all.len()), None);
        assert_eq!(all[HEAD_LINES], ("… 4400 lines omitted …".into(), None));
        assert_eq!(
            all[HEAD_LINES + 1].0,
            format!("{}4600", "x".repeat(4600 % 13))
        );
        assert_eq!(
            all[HEAD_LINES + TAIL_LINES].0,
            "x".repeat(4999 % 13) + "4999"
        );
        assert_eq!(all.last().unwrap().0, "unfinished");
    }

    /// Files every byte on its own: the plain line-by-line path, for comparison.
    fn byte_by_byte(pushes: &[(Stream, Vec<u8>)]) -> BoundedOutput {
        let mut out = BoundedOutput::new();
        for (stream, chunk) in pushes {
            for b in chunk {
                out.push(*stream, std::slice::from_ref(b));
            }
        }
        out
    }

    #[test]
    fn skipping_the_middle_of_a_big_chunk_keeps_exactly_what_line_by_line_filing_keeps() {
        // Pseudo-random chunk sizes and streams, lines of varying length, some overlong.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut text = Vec::new();
        for i in 0..20_000u64 {
            let len = if i % 997 == 0 {
                MAX_LINE_BYTES as u64 + 50
            } else {
                next(40)
            };
            text.extend((0..len).map(|k| b'a' + ((i + k) % 26) as u8));
            text.push(b'\n');
        }
        text.extend_from_slice(b"no newline at the end");
        let mut pushes = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let size = [1, 7, 300, 4096, 65536, 200_000][next(6) as usize];
            let end = (at + size).min(text.len());
            let stream = if next(5) == 0 {
                Stream::Stderr
            } else {
                Stream::Stdout
            };
            pushes.push((stream, text[at..end].to_vec()));
            at = end;
        }
        let mut fast = BoundedOutput::new();
        for (stream, chunk) in &pushes {
            fast.push(*stream, chunk);
        }
        let slow = byte_by_byte(&pushes);
        assert_eq!(fast.lines(), slow.lines());
        assert_eq!(fast.total_lines(), slow.total_lines());
        assert_eq!(fast.omitted_lines(), slow.omitted_lines());
        assert_eq!(fast.total_bytes(), slow.total_bytes());
        let (mut fast, mut slow) = (fast, slow);
        fast.finish();
        slow.finish();
        assert_eq!(fast.render(), slow.render());
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
