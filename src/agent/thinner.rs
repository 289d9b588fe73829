//! Live output thinned for the driver: a flood of output crosses the channel as what a head and
//! tail view can still show, plus counts of what it never could. The agent is its only user.

use crate::protocol::{OUTPUT_HEAD_LINES, unseen_lines};

/// Thins a live output stream for a viewer that keeps head and tail windows (a `protocol::BoundedOutput`): the first `OUTPUT_HEAD_LINES`
/// lines pass whole; after that, a read's lines that its own last `OUTPUT_TAIL_LINES` lines would push
/// out of any tail are replaced by their count. A viewer that calls `skip` with the count and
/// then `push` with the text keeps exactly what it would have kept from every byte (tested),
/// while a 10-million-line flood crosses the channel as a few kilobytes a read. The full output
/// is in the run's log file.
#[derive(Debug, Default)]
pub struct Thinner {
    /// Complete lines passed on so far (both streams), while the head is filling.
    lines: usize,
}

/// One piece of thinned output: drop `skipped` lines, then take `text`.
#[derive(Debug, PartialEq, Eq)]
pub struct Thinned<'a> {
    pub skipped: u64,
    pub text: &'a [u8],
}

impl Thinner {
    pub fn new() -> Self {
        Self::default()
    }

    /// What of `bytes` a viewer needs, as one or two pieces (head lines whole, then a skip).
    pub fn thin<'a>(&mut self, bytes: &'a [u8]) -> Vec<Thinned<'a>> {
        let mut rest = bytes;
        let mut pieces = Vec::with_capacity(2);
        if self.lines < OUTPUT_HEAD_LINES {
            let wanted = OUTPUT_HEAD_LINES - self.lines;
            match memchr::memchr_iter(b'\n', rest).nth(wanted - 1) {
                Some(end) => {
                    self.lines = OUTPUT_HEAD_LINES;
                    pieces.push(Thinned {
                        skipped: 0,
                        text: &rest[..=end],
                    });
                    rest = &rest[end + 1..];
                }
                None => {
                    self.lines += memchr::memchr_iter(b'\n', rest).count();
                    return vec![Thinned {
                        skipped: 0,
                        text: rest,
                    }];
                }
            }
        }
        match unseen_lines(rest) {
            Some((skipped, kept)) => pieces.push(Thinned {
                skipped,
                text: &rest[kept..],
            }),
            None if !rest.is_empty() => pieces.push(Thinned {
                skipped: 0,
                text: rest,
            }),
            None => {}
        }
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::BoundedOutput;
    use crate::protocol::Stream;

    #[test]
    fn a_viewer_fed_thinned_output_keeps_exactly_what_every_byte_would_have_given_it() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut text = Vec::new();
        for i in 0..30_000u64 {
            text.extend((0..next(30)).map(|k| b'a' + ((i + k) % 26) as u8));
            text.push(b'\n');
        }
        text.extend_from_slice(b"tail without newline");
        let (mut whole, mut thinned) = (BoundedOutput::new(), BoundedOutput::new());
        let mut thinner = Thinner::new();
        let mut sent = 0;
        let mut at = 0;
        while at < text.len() {
            let end = (at + [5, 900, 16_384, 65_536][next(4) as usize]).min(text.len());
            let stream = if next(6) == 0 {
                Stream::Stderr
            } else {
                Stream::Stdout
            };
            let chunk = &text[at..end];
            whole.push(stream, chunk);
            for piece in thinner.thin(chunk) {
                thinned.skip(stream, piece.skipped);
                thinned.push(stream, piece.text);
                sent += piece.text.len();
            }
            at = end;
        }
        assert_eq!(thinned.lines(), whole.lines());
        assert_eq!(thinned.total_lines(), whole.total_lines());
        assert_eq!(thinned.omitted_lines(), whole.omitted_lines());
        assert!(sent < text.len() / 4, "sent {sent} of {} bytes", text.len());
    }
}
