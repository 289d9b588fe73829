use super::*;

/// A xorshift generator: the same "random" output on every run.
fn generator(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

/// What `unseen_lines` must answer, the plain way: a search per newline from the end.
fn unseen_lines_plainly(bytes: &[u8]) -> Option<(u64, usize)> {
    let last_skipped = memchr::memrchr_iter(b'\n', bytes).nth(OUTPUT_TAIL_LINES)?;
    let skipped = memchr::memchr_iter(b'\n', &bytes[..=last_skipped]).count();
    Some((skipped as u64, last_skipped + 1))
}

#[test]
fn the_lines_a_tail_can_never_show_are_found_by_blocks_exactly_as_by_searching_each_newline() {
    let mut next = generator(0x9e37_79b9_7f4a_7c15);
    for case in 0..300u64 {
        // Short lines (many a block), long ones (several blocks a line), empty ones, and counts
        // around the tail's size.
        let longest = [1, 9, 80, 5000, 20_000][(case % 5) as usize];
        let lines = [0, 1, 399, 400, 401, 402, 3000][next(7) as usize];
        let mut text = Vec::new();
        for _ in 0..lines {
            text.extend(std::iter::repeat_n(b'x', next(longest) as usize));
            text.push(b'\n');
        }
        text.extend(std::iter::repeat_n(b'y', next(longest) as usize));
        assert_eq!(
            unseen_lines(&text),
            unseen_lines_plainly(&text),
            "case {case}: {lines} lines of up to {longest} bytes"
        );
    }
}

#[test]
fn a_viewer_fed_thinned_output_keeps_exactly_what_every_byte_would_have_given_it() {
    let mut next = generator(0x2545_f491_4f6c_dd1d);
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
