//! Where a running tool's live output goes. Whatever a tool sends is thinned here, on its way
//! out (one [`Thinner`] per call, shared by its two streams), so a flood crosses to the driver as
//! what a head-and-tail view can still show, whichever tool printed it. The pieces go back to the
//! sender too: a tool that keeps its own window of the same output (bash, for the model's result)
//! files them without looking at every byte a second time.
//!
//! A tool that reads a flood in many small reads can also have it *paced* ([`OutputSink::send_paced`]):
//! past the head, what it sends is held and merged, and goes out at most once every [`PACE`] (a
//! frame of the cockpit), instead of as one event per read. `seq 1 10000000` was read in 3,000 to
//! 6,000 reads, and each became an event the cockpit woke up for and filed.
//!
//! Lines are bounded in bytes on the way out too: the thinner passes the first
//! [`MAX_LINE_BYTES`](crate::output::MAX_LINE_BYTES) of a line (and one byte more) and counts
//! the rest, and what is delivered says so in the text, where the line ends (or the output:
//! [`OutputSink::end`]): ` … [airlock: N more bytes of this line left out; …]`, with where the
//! whole output is when the tool said ([`OutputSink::keep_note`]). A viewer keeps no more of a
//! line than `MAX_LINE_BYTES` anyway, so the marker is past what it shows (it shows the line as
//! cut).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::bounded::{OUTPUT_TAIL_LINES, Thinned, Thinner, unseen_lines};
use crate::protocol::Stream;

type Deliver = dyn Fn(Stream, Thinned<'_>) + Send + Sync;

/// The most often paced output goes out while a tool keeps sending: one frame of the cockpit,
/// which draws output no more often than that anyway.
pub const PACE: Duration = Duration::from_millis(16);

/// A call's live output: thinned, then handed to `deliver` (the agent turns each piece into an
/// `AgentEvent::ToolOutput`).
#[derive(Clone)]
pub struct OutputSink {
    state: Arc<Mutex<State>>,
    deliver: Arc<Deliver>,
}

#[derive(Default)]
struct State {
    thinner: Thinner,
    held: Option<Held>,
    /// When output last went out.
    sent: Option<Instant>,
    /// Where the whole output is, said where a line was cut.
    kept: Option<String>,
}

/// Appends what delivered text says where `bytes` of a line were left out.
fn cut_marker(text: &mut Vec<u8>, bytes: u64, kept: Option<&str>) {
    use std::io::Write;
    let _ = write!(
        text,
        " … [airlock: {bytes} more bytes of this line left out"
    );
    if let Some(kept) = kept {
        let _ = write!(text, "; {kept}");
    }
    text.push(b']');
}

/// Paced output waiting to go out, merged the way a viewer applies pieces: drop `skipped` lines,
/// then take `text`. Only output past the head is held, so a skip pushes every held line out of
/// the viewer's tail (they are counted with it), and no more than a tail's worth of complete
/// lines is kept (more could never be shown).
struct Held {
    stream: Stream,
    skipped: u64,
    text: Vec<u8>,
    /// Newlines in `text`.
    lines: usize,
}

impl Held {
    fn add(&mut self, piece: Thinned<'_>, kept: Option<&str>) {
        if piece.skipped > 0 {
            self.skipped += self.lines as u64 + piece.skipped;
            self.text.clear();
            self.lines = 0;
        }
        self.text.extend_from_slice(piece.text);
        if piece.cut > 0 {
            cut_marker(&mut self.text, piece.cut, kept);
        }
        self.lines += memchr::memchr_iter(b'\n', piece.text).count();
        if self.lines > OUTPUT_TAIL_LINES
            && let Some((unseen, kept)) = unseen_lines(&self.text)
        {
            self.skipped += unseen;
            self.lines -= unseen as usize;
            self.text.drain(..kept);
        }
    }
}

impl State {
    /// Sends what is held, if anything.
    fn flush(&mut self, deliver: &Deliver, now: Instant) {
        if let Some(held) = self.held.take() {
            deliver(
                held.stream,
                Thinned {
                    skipped: held.skipped,
                    text: &held.text,
                    cut: 0,
                },
            );
            self.sent = Some(now);
        }
    }

    /// Holds `piece` with what is held; output of the other stream first goes out.
    fn hold(&mut self, stream: Stream, piece: Thinned<'_>, deliver: &Deliver, now: Instant) {
        if self.held.as_ref().is_some_and(|h| h.stream != stream) {
            self.flush(deliver, now);
        }
        self.held
            .get_or_insert_with(|| Held {
                stream,
                skipped: 0,
                text: Vec::new(),
                lines: 0,
            })
            .add(piece, self.kept.as_deref());
    }

    /// Delivers `pieces` of `stream` as they are, or, where a line was cut, with the marker in
    /// the text: one delivery per skip, as the thinner gave them.
    fn deliver(&self, deliver: &Deliver, stream: Stream, pieces: &[Thinned<'_>]) {
        for group in pieces.chunk_by(|_, next| next.skipped == 0) {
            if let [piece] = group
                && piece.cut == 0
            {
                deliver(stream, *piece);
                continue;
            }
            let mut text = Vec::new();
            for piece in group {
                text.extend_from_slice(piece.text);
                if piece.cut > 0 {
                    cut_marker(&mut text, piece.cut, self.kept.as_deref());
                }
            }
            deliver(
                stream,
                Thinned {
                    skipped: group[0].skipped,
                    text: &text,
                    cut: 0,
                },
            );
        }
    }
}

impl OutputSink {
    pub fn new(deliver: impl Fn(Stream, Thinned<'_>) + Send + Sync + 'static) -> OutputSink {
        OutputSink {
            state: Arc::new(Mutex::new(State::default())),
            deliver: Arc::new(deliver),
        }
    }

    /// A sink that shows nothing (tests, and runs nobody watches).
    pub fn discard() -> OutputSink {
        OutputSink::new(|_, _| {})
    }

    /// Says where the whole output is kept (the run log), for the marker of a cut line.
    pub fn keep_note(&self, kept: impl Into<String>) {
        self.state().kept = Some(kept.into());
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `bytes` of `stream`, thinned, at once (after anything held); returns the pieces as
    /// they were delivered.
    pub fn send<'a>(&self, stream: Stream, bytes: &'a [u8]) -> Vec<Thinned<'a>> {
        self.send_now(&mut self.state(), stream, bytes, Instant::now())
    }

    fn send_now<'a>(
        &self,
        state: &mut State,
        stream: Stream,
        bytes: &'a [u8],
        now: Instant,
    ) -> Vec<Thinned<'a>> {
        state.flush(&*self.deliver, now);
        let pieces = state.thinner.thin_stream(stream, bytes);
        state.deliver(&*self.deliver, stream, &pieces);
        if !pieces.is_empty() {
            state.sent = Some(now);
        }
        pieces
    }

    /// Like [`send`](Self::send), but once the head is full the pieces are held and go out at
    /// most once every [`PACE`]. The caller flushes ([`flush`](Self::flush)) when [`due`](Self::due)
    /// says, and the agent flushes when the call ends, so nothing held is lost. The pieces are
    /// returned as thinned, whether they went out now or not.
    pub fn send_paced<'a>(&self, stream: Stream, bytes: &'a [u8]) -> Vec<Thinned<'a>> {
        self.send_paced_at(stream, bytes, Instant::now())
    }

    fn send_paced_at<'a>(&self, stream: Stream, bytes: &'a [u8], now: Instant) -> Vec<Thinned<'a>> {
        let mut state = self.state();
        if !state.thinner.head_is_full() {
            return self.send_now(&mut state, stream, bytes, now);
        }
        let pieces = state.thinner.thin_stream(stream, bytes);
        for piece in &pieces {
            state.hold(stream, *piece, &*self.deliver, now);
        }
        if state.sent.is_none_or(|sent| now >= sent + PACE) {
            state.flush(&*self.deliver, now);
        }
        pieces
    }

    /// When what is held should go out, if anything is.
    pub fn due(&self) -> Option<Instant> {
        let state = self.state();
        state.held.as_ref()?;
        Some(state.sent.map_or_else(Instant::now, |sent| sent + PACE))
    }

    /// Sends what is held now.
    pub fn flush(&self) {
        self.flush_at(Instant::now());
    }

    fn flush_at(&self, now: Instant) {
        self.state().flush(&*self.deliver, now);
    }

    /// The tool's output is over: what is held goes out, then the marker of each line that was
    /// still being cut (output that ends without a newline). Returns those lines' pieces.
    pub fn end(&self) -> Vec<(Stream, Thinned<'static>)> {
        let mut state = self.state();
        let now = Instant::now();
        state.flush(&*self.deliver, now);
        let pieces = state.thinner.end();
        for (stream, piece) in &pieces {
            state.deliver(&*self.deliver, *stream, std::slice::from_ref(piece));
            state.sent = Some(now);
        }
        pieces
    }
}

impl std::fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSink")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{BoundedOutput, MAX_LINE_BYTES, OUTPUT_HEAD_LINES};

    /// What a watched sink delivered: filed into a viewer, how many deliveries, how many bytes.
    type Seen = Arc<Mutex<(BoundedOutput, usize, usize)>>;

    /// A sink that files what it delivers into a viewer, and counts deliveries and bytes.
    fn watched() -> (OutputSink, Seen) {
        let seen: Seen = Arc::new(Mutex::new((BoundedOutput::new(), 0, 0)));
        let into = seen.clone();
        let sink = OutputSink::new(move |stream, piece| {
            let mut seen = into.lock().unwrap();
            seen.0.skip(stream, piece.skipped);
            seen.0.push(stream, piece.text);
            seen.1 += 1;
            seen.2 += piece.text.len();
        });
        (sink, seen)
    }

    #[test]
    fn a_flood_sent_through_a_sink_arrives_thinned_and_a_window_fed_either_way_keeps_the_same() {
        let (sink, delivered) = watched();
        let (mut whole, mut from_pieces) = (BoundedOutput::new(), BoundedOutput::new());
        let text: String = (0..100_000).map(|i| format!("{i}\n")).collect();
        for chunk in text.as_bytes().chunks(64 * 1024) {
            whole.push(Stream::Stdout, chunk);
            for piece in sink.send(Stream::Stdout, chunk) {
                from_pieces.skip(Stream::Stdout, piece.skipped);
                from_pieces.push(Stream::Stdout, piece.text);
            }
        }
        let seen = delivered.lock().unwrap();
        assert_eq!(seen.0.lines(), whole.lines());
        assert_eq!(from_pieces.lines(), whole.lines());
        assert_eq!(seen.0.total_lines(), 100_000);
        assert!(whole.lines().len() > OUTPUT_HEAD_LINES);
        assert!(
            seen.2 < text.len() / 10,
            "{} of {} bytes crossed",
            seen.2,
            text.len()
        );
    }

    #[test]
    fn paced_output_leaves_a_viewer_exactly_as_every_byte_would_whatever_the_reads_and_timing() {
        let mut next = crate::output::bounded::xorshift(0x5eed_cafe);
        for case in 0..60 {
            let (sink, seen) = watched();
            let mut whole = BoundedOutput::new();
            let mut now = Instant::now();
            let mut line = 0u64;
            for _ in 0..(20 + next(200)) {
                let stream = if next(5) == 0 {
                    Stream::Stderr
                } else {
                    Stream::Stdout
                };
                let mut chunk = String::new();
                let most = if next(3) == 0 { 2000 } else { 40 };
                for _ in 0..next(most) {
                    line += 1;
                    chunk.push_str(&format!("{case}-{line}\n"));
                }
                if next(4) == 0 {
                    chunk.push_str("partial ");
                }
                whole.push(stream, chunk.as_bytes());
                sink.send_paced_at(stream, chunk.as_bytes(), now);
                now += Duration::from_micros(next(9000));
                if next(10) == 0 && sink.due().is_some() {
                    sink.flush_at(now);
                }
            }
            sink.flush_at(now);
            let seen = seen.lock().unwrap();
            assert_eq!(seen.0.lines(), whole.lines(), "case {case}");
            assert_eq!(seen.0.total_lines(), whole.total_lines(), "case {case}");
            assert_eq!(seen.0.omitted_lines(), whole.omitted_lines(), "case {case}");
        }
    }

    #[test]
    fn a_flood_read_in_many_small_reads_goes_out_once_a_pace_not_once_a_read() {
        let (sink, seen) = watched();
        let start = Instant::now();
        let head: String = (0..OUTPUT_HEAD_LINES).map(|i| format!("{i}\n")).collect();
        sink.send_paced_at(Stream::Stdout, head.as_bytes(), start);
        let after_head = seen.lock().unwrap().1;
        // 1,000 reads of 1,000 lines, one every 40 µs: 40 ms of flood.
        for read in 0..1_000u64 {
            let chunk: String = (0..1_000).map(|i| format!("{read}:{i}\n")).collect();
            sink.send_paced_at(
                Stream::Stdout,
                chunk.as_bytes(),
                start + Duration::from_micros(40 * (read + 1)),
            );
        }
        let during = seen.lock().unwrap().1 - after_head;
        assert!(during <= 3, "{during} deliveries in 40 ms of flood");
        let due = sink.due().expect("the last reads are held");
        assert!(due <= start + Duration::from_millis(40) + PACE);
        sink.flush_at(due);
        assert_eq!(sink.due(), None);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.0.total_lines(), (OUTPUT_HEAD_LINES + 1_000_000) as u64);
        assert_eq!(seen.0.lines().last().unwrap().0, "999:999");
    }

    #[test]
    fn output_that_trickles_goes_out_at_once_and_held_output_says_when_it_is_due() {
        let (sink, seen) = watched();
        let start = Instant::now();
        let head: String = (0..OUTPUT_HEAD_LINES).map(|i| format!("{i}\n")).collect();
        sink.send_paced_at(Stream::Stdout, head.as_bytes(), start);
        let mut at = start;
        for i in 0..5 {
            at += PACE;
            sink.send_paced_at(Stream::Stdout, format!("tick {i}\n").as_bytes(), at);
            assert_eq!(sink.due(), None, "a line a frame apart went out at once");
        }
        let delivered = seen.lock().unwrap().1;
        sink.send_paced_at(
            Stream::Stdout,
            b"soon after\n",
            at + Duration::from_millis(1),
        );
        assert_eq!(seen.lock().unwrap().1, delivered, "held");
        assert_eq!(sink.due(), Some(at + PACE));
        sink.flush_at(at + PACE);
        assert_eq!(
            seen.lock().unwrap().0.lines().last().unwrap().0,
            "soon after"
        );
    }

    /// A sink that keeps every delivered text, joined.
    fn recorded() -> (OutputSink, Arc<Mutex<Vec<u8>>>) {
        let text = Arc::new(Mutex::new(Vec::new()));
        let into = text.clone();
        let sink = OutputSink::new(move |_, piece| {
            into.lock().unwrap().extend_from_slice(piece.text);
        });
        (sink, text)
    }

    #[test]
    fn a_long_line_goes_out_as_its_first_two_kibibytes_and_says_how_much_was_left_out_and_where() {
        let (sink, text) = recorded();
        sink.keep_note("the run log /runs/c1.log keeps it");
        let read = vec![b'x'; 64 * 1024];
        for _ in 0..80 {
            sink.send(Stream::Stdout, &read);
        }
        sink.send(Stream::Stdout, b"\nnext\n");
        // What passes of a line: one byte past what a viewer keeps, so the viewer cuts it.
        let passes = MAX_LINE_BYTES + 1;
        let left_out = 80 * 64 * 1024 - passes;
        let expected = format!(
            "{} … [airlock: {left_out} more bytes of this line left out; the run log \
             /runs/c1.log keeps it]\nnext\n",
            "x".repeat(passes)
        );
        assert_eq!(
            String::from_utf8(text.lock().unwrap().clone()).unwrap(),
            expected
        );
    }

    #[test]
    fn a_long_line_held_by_the_pace_reaches_a_viewer_as_every_byte_would_and_the_end_says_its_count()
     {
        let (sink, seen) = watched();
        let (recording, text) = recorded();
        let mut whole = BoundedOutput::new();
        let start = Instant::now();
        let head: String = (0..OUTPUT_HEAD_LINES).map(|i| format!("{i}\n")).collect();
        let mut reads = vec![head.into_bytes()];
        // Past the head: a long line ended by a newline, then one the output ends in.
        reads.extend(std::iter::repeat_n(vec![b'y'; 100_000], 30));
        reads.push(b"\nshort\n".to_vec());
        reads.extend(std::iter::repeat_n(vec![b'z'; 100_000], 30));
        for (i, read) in reads.iter().enumerate() {
            whole.push(Stream::Stderr, read);
            let at = start + Duration::from_micros(100 * i as u64);
            sink.send_paced_at(Stream::Stderr, read, at);
            recording.send_paced_at(Stream::Stderr, read, at);
        }
        assert!(sink.due().is_some(), "the last reads are held");
        assert_eq!(sink.end().len(), 1, "one line was still being cut");
        recording.end();
        whole.finish();
        let mut seen = seen.lock().unwrap();
        seen.0.finish();
        assert_eq!(seen.0.lines(), whole.lines());
        assert!(seen.2 < 10_000, "{} bytes crossed", seen.2);
        let text = String::from_utf8(text.lock().unwrap().clone()).unwrap();
        assert!(text.contains(" … [airlock: 2997951 more bytes of this line left out]\n"));
        assert!(text.ends_with(&format!(
            "\n{} … [airlock: 2997951 more bytes of this line left out]",
            "z".repeat(MAX_LINE_BYTES + 1)
        )));
    }

    #[test]
    fn output_sent_unpaced_goes_out_after_whatever_was_held() {
        let (sink, seen) = watched();
        let start = Instant::now();
        let head: String = (0..OUTPUT_HEAD_LINES).map(|i| format!("{i}\n")).collect();
        sink.send_paced_at(Stream::Stdout, head.as_bytes(), start);
        sink.send_paced_at(Stream::Stdout, b"held\n", start);
        sink.send(Stream::Stderr, b"progress\n");
        assert_eq!(sink.due(), None);
        let lines = seen.lock().unwrap().0.lines();
        let last: Vec<&str> = lines[lines.len() - 2..]
            .iter()
            .map(|l| l.0.as_str())
            .collect();
        assert_eq!(last, ["held", "progress"]);
    }
}
