//! A run's output kept bounded, and how live output is thinned for a viewer. The bash tool keeps a
//! `BoundedOutput` for the text the model reads; the cockpit keeps one per run, fed by
//! `AgentEvent::ToolOutput`, which the tools' output sink thins ([`Thinner`]) for a viewer that
//! keeps the first `OUTPUT_HEAD_LINES` lines and the last `OUTPUT_TAIL_LINES`. One
//! implementation, here, so both sides agree on these numbers and on which lines can never be
//! shown.

use std::collections::VecDeque;

use crate::protocol::Stream;

const HEAD_LINES: usize = OUTPUT_HEAD_LINES;
const TAIL_LINES: usize = OUTPUT_TAIL_LINES;

/// Lines a viewer keeps from the start of a run's output.
pub const OUTPUT_HEAD_LINES: usize = 200;
/// Lines a viewer keeps from the end of a run's output.
pub const OUTPUT_TAIL_LINES: usize = 400;

/// Past the head, the lines of `bytes` that can never be shown: all but the last
/// `OUTPUT_TAIL_LINES` complete ones. Returns how many, and where the kept part starts.
///
/// Every byte before the kept part is looked at once (a vectorised count); the kept part is found
/// from the end a block at a time, counting each block's newlines the same way, so short lines
/// (`seq` prints 8 bytes a line) do not cost a search per line.
pub fn unseen_lines(bytes: &[u8]) -> Option<(u64, usize)> {
    const BLOCK: usize = 4096;
    // The newline that ends the last line left out is the (TAIL + 1)-th from the end.
    let mut wanted = OUTPUT_TAIL_LINES + 1;
    let mut end = bytes.len();
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let block = &bytes[start..end];
        let here = memchr::memchr_iter(b'\n', block).count();
        if here >= wanted {
            let last_skipped = start + nth_newline_from_end(block, wanted)?;
            let before = memchr::memchr_iter(b'\n', &bytes[..start]).count();
            let within = here - (wanted - 1);
            return Some(((before + within) as u64, last_skipped + 1));
        }
        wanted -= here;
        end = start;
    }
    None
}

/// Where the `nth` newline from the end of `block` is (`nth` from 1). The block is halved by
/// counting newlines (vectorised) until a small part is left, then searched newline by newline:
/// a tail of short lines would otherwise cost one search per line, 400 per read of a flood.
fn nth_newline_from_end(block: &[u8], mut nth: usize) -> Option<usize> {
    const SEARCHED: usize = 256;
    let (mut start, mut end) = (0, block.len());
    while end - start > SEARCHED {
        let mid = start + (end - start) / 2;
        let upper = memchr::memchr_iter(b'\n', &block[mid..end]).count();
        if upper >= nth {
            start = mid;
        } else {
            nth -= upper;
            end = mid;
        }
    }
    Some(start + memchr::memrchr_iter(b'\n', &block[start..end]).nth(nth.checked_sub(1)?)?)
}

/// Thins a live output stream for a viewer that keeps head and tail windows (a [`BoundedOutput`]):
/// the first `OUTPUT_HEAD_LINES` lines pass, then a read's lines that its own last
/// `OUTPUT_TAIL_LINES` lines would push out of any tail are replaced by their count. A viewer
/// that calls `skip` with the count, `push` with the text and `cut` with a cut line's count keeps
/// exactly what it would have kept from every byte (tested), while a 10-million-line flood
/// crosses the channel as a few kilobytes a read. The full output is in the run's log file.
///
/// Lines are bounded in bytes too: a viewer keeps the first [`MAX_LINE_BYTES`] of a line, so
/// only those pass, and one byte more (`LINE_PASSES`), so that a viewer cuts the line itself,
/// told the count or not; the rest of a longer line is left out and counted, and the count goes
/// out where the line ends (a piece's `cut`). A 1 GB line with no newline crosses as 2 KiB.
///
/// One per running call, for both its streams (the head counts lines of both, as the viewer's
/// does; each stream's line is cut on its own). The tools' output sink thins with it, and a tool
/// that keeps its own window of the same output (bash, for the model's result) files the pieces
/// it got back: one scan of every byte.
#[derive(Debug, Default)]
pub struct Thinner {
    /// Complete lines passed on so far (both streams), while the head is filling.
    lines: usize,
    /// Per stream, the line being passed on.
    line: [LineSoFar; 2],
}

/// How much of a stream's current line has passed, and what was left out of it.
#[derive(Debug, Default, Clone, Copy)]
struct LineSoFar {
    /// Bytes passed on (at most `LINE_PASSES`).
    passed: usize,
    /// The line went past `LINE_PASSES`: its bytes are left out until it ends.
    cutting: bool,
    /// Bytes left out of it so far.
    left_out: u64,
}

/// One piece of thinned output: drop `skipped` lines, take `text`, then, if `cut` is not zero,
/// the line `text` ends in was cut: that many more of its bytes were left out (its newline, if
/// it has one, starts the next piece's text). Only pieces from [`Thinner::thin_stream`] and
/// [`Thinner::end`] cut; what the tools' output sink delivers says the cut in its text instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thinned<'a> {
    pub skipped: u64,
    pub text: &'a [u8],
    pub cut: u64,
}

impl Thinner {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the viewer's head is full: from here on a piece may skip lines.
    pub fn head_is_full(&self) -> bool {
        self.lines >= OUTPUT_HEAD_LINES
    }

    /// [`thin_stream`](Self::thin_stream) for output of one stream.
    pub fn thin<'a>(&mut self, bytes: &'a [u8]) -> Vec<Thinned<'a>> {
        self.thin_stream(Stream::Stdout, bytes)
    }

    /// What of `bytes` (the next read of `stream`) a viewer needs: head lines, then a skip and
    /// the lines a tail can still show, each line cut after `LINE_PASSES` bytes.
    pub fn thin_stream<'a>(&mut self, stream: Stream, bytes: &'a [u8]) -> Vec<Thinned<'a>> {
        let i = index(stream);
        let mut rest = bytes;
        let mut pieces = Vec::with_capacity(2);
        if self.lines < OUTPUT_HEAD_LINES {
            // One pass over the newlines the head still wants (at most `OUTPUT_HEAD_LINES`).
            let wanted = OUTPUT_HEAD_LINES - self.lines;
            let mut newlines = memchr::memchr_iter(b'\n', rest);
            let mut seen = 0;
            let end = newlines.find(|_| {
                seen += 1;
                seen == wanted
            });
            self.lines += seen;
            match end {
                Some(end) => {
                    self.pass(i, &rest[..=end], 0, &mut pieces);
                    rest = &rest[end + 1..];
                }
                None => {
                    self.pass(i, rest, 0, &mut pieces);
                    return pieces;
                }
            }
        }
        match unseen_lines(rest) {
            Some((skipped, kept)) => {
                // The stream's current line ended among the lines left out: its cut with it.
                self.line[i] = LineSoFar::default();
                self.pass(i, &rest[kept..], skipped, &mut pieces);
            }
            None => self.pass(i, rest, 0, &mut pieces),
        }
        pieces
    }

    /// Passes `text` of stream `i` on after `skipped` lines, its lines cut after `LINE_PASSES`.
    /// Short lines are passed over a window at a time (the last newline within a line's room
    /// ends every line before it, all short enough), so a flood of short lines costs a search
    /// per 2 KiB, not one per line.
    fn pass<'a>(&mut self, i: usize, text: &'a [u8], skipped: u64, out: &mut Vec<Thinned<'a>>) {
        let line = &mut self.line[i];
        let mut skipped = skipped;
        // `text[from..]` is not yet in a piece; `at` is where the current line stands.
        let (mut from, mut at) = (0, 0);
        // The last piece is the start of the line being cut (its count goes on it).
        let mut cut_here = false;
        while at < text.len() {
            if line.cutting {
                let Some(k) = memchr::memchr(b'\n', &text[at..]) else {
                    line.left_out += (text.len() - at) as u64;
                    (from, at) = (text.len(), text.len());
                    continue;
                };
                let cut = line.left_out + k as u64;
                match out.last_mut() {
                    Some(last) if cut_here => last.cut = cut,
                    _ => push(out, &mut skipped, &text[..0], cut),
                }
                *line = LineSoFar::default();
                cut_here = false;
                // The newline ends the cut line: the next piece starts with it.
                (from, at) = (at + k, at + k + 1);
                continue;
            }
            let room = LINE_PASSES - line.passed;
            let window = &text[at..text.len().min(at + room + 1)];
            if let Some(k) = memchr::memrchr(b'\n', window) {
                line.passed = 0;
                at += k + 1;
            } else if window.len() <= room {
                line.passed += window.len();
                at += window.len();
            } else {
                // The line goes past its room: what fits passes, the rest is left out.
                let start = &text[from..at + room];
                cut_here = !start.is_empty() || skipped > 0;
                if cut_here {
                    push(out, &mut skipped, start, 0);
                }
                line.passed = LINE_PASSES;
                line.cutting = true;
                (from, at) = (at + room, at + room);
            }
        }
        if from < text.len() || skipped > 0 {
            push(out, &mut skipped, &text[from..], 0);
        }
    }

    /// The output is over: each stream's line still being cut, as a piece that says so.
    pub fn end(&mut self) -> Vec<(Stream, Thinned<'static>)> {
        let mut pieces = Vec::new();
        for stream in [Stream::Stdout, Stream::Stderr] {
            let line = std::mem::take(&mut self.line[index(stream)]);
            if line.cutting {
                pieces.push((
                    stream,
                    Thinned {
                        skipped: 0,
                        text: &[],
                        cut: line.left_out,
                    },
                ));
            }
        }
        pieces
    }
}

/// Adds a piece to `out`, with the lines still to skip (once).
fn push<'a>(out: &mut Vec<Thinned<'a>>, skipped: &mut u64, text: &'a [u8], cut: u64) {
    out.push(Thinned {
        skipped: std::mem::take(skipped),
        text,
        cut,
    });
}

use unseen_lines as skippable;

/// Bytes kept of one line, wherever output is shown: the cockpit's window, `tool_output` events
/// (the [`Thinner`] passes no more) and the model's result. The rest of a longer line is
/// dropped and marked; the run log keeps the bytes, within its own cap.
pub const MAX_LINE_BYTES: usize = 2048;

/// Bytes of a line the [`Thinner`] passes on: one more than a window keeps, so that a window fed
/// the pieces cuts a longer line itself, exactly as from every byte, even where it is never told
/// the count (output that ends mid-line, from a tool that does not call `end`).
const LINE_PASSES: usize = MAX_LINE_BYTES + 1;

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

    /// Counts `bytes` of this stream's current line that were left out right here (a thinned
    /// piece's `cut`): the line is marked cut, as the bytes would have marked it had they come.
    pub fn cut(&mut self, stream: Stream, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.total_bytes += bytes;
        self.partial_cut[index(stream)] = true;
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

    /// The head window is full: from here on, lines only pass through the tail.
    pub fn head_is_full(&self) -> bool {
        self.head.len() >= HEAD_LINES
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

/// For tests here and elsewhere: a xorshift generator, `next(n)` in `0..n`, the same "random"
/// sequence on every run.
#[cfg(test)]
pub fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

#[cfg(test)]
mod tests;
