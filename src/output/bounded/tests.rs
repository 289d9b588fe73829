//! `BoundedOutput`, tested once for both of its readers: the line view the results pane draws
//! (`line`, `lines`) and the text the model reads (`render`); and the thinning that feeds it.

use super::*;

const HEAD: usize = OUTPUT_HEAD_LINES;
const TAIL: usize = OUTPUT_TAIL_LINES;

#[test]
fn the_output_keeps_head_and_tail_and_says_what_it_dropped() {
    let mut out = BoundedOutput::new();
    for i in 0..100_000 {
        out.push(Stream::Stdout, format!("line {i}\n").as_bytes());
    }
    out.finish();
    let dropped = 100_000 - HEAD - TAIL;
    let lines = out.lines();
    assert_eq!(lines[0], ("line 0".into(), Some(Stream::Stdout)));
    assert_eq!(lines[1].0, "line 1");
    assert_eq!(lines.last().map(|l| l.0.as_str()), Some("line 99999"));
    assert_eq!(lines[HEAD], (format!("… {dropped} lines omitted …"), None));
    let text = out.render();
    assert!(text.starts_with("line 0\nline 1\n"));
    assert!(text.ends_with("line 99999\n"));
    assert!(
        text.contains(&format!(
            "\nline {}\n… {dropped} lines omitted …\nline {}\n",
            HEAD - 1,
            100_000 - TAIL
        )),
        "{}",
        &text[..200]
    );
    assert_eq!(out.omitted_lines(), dropped as u64);
    assert_eq!(out.total_lines(), 100_000);
    assert!(out.retained_bytes() < (HEAD + TAIL) * 16);
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
    assert_eq!(all.len(), HEAD + 1 + TAIL + 1);
    for (i, line) in all.iter().enumerate() {
        assert_eq!(out.line(i).as_ref(), Some(line), "line {i}");
    }
    assert_eq!(out.line(all.len()), None);
    assert_eq!(all[HEAD], ("… 4400 lines omitted …".into(), None));
    assert_eq!(all[HEAD + 1].0, format!("{}4600", "x".repeat(4600 % 13)));
    assert_eq!(all[HEAD + TAIL].0, "x".repeat(4999 % 13) + "4999");
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
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
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
    assert_eq!(fast.lines(), slow.lines());
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
    assert!(out.lines()[0].0.ends_with(" … [line cut]"));
    assert!(out.render().ends_with(" … [line cut]\n"));
    assert_eq!(out.total_bytes(), (64 << 20) + 1);
}

#[test]
fn lines_split_across_chunks_are_joined_and_streams_stay_apart() {
    let mut out = BoundedOutput::new();
    out.push(Stream::Stdout, b"hel");
    out.push(Stream::Stderr, b"oops\n");
    out.push(Stream::Stdout, b"lo\n");
    out.finish();
    assert_eq!(
        out.lines(),
        vec![
            ("oops".into(), Some(Stream::Stderr)),
            ("hello".into(), Some(Stream::Stdout))
        ]
    );
    assert_eq!(out.render(), "[stderr] oops\nhello\n");
}

/// What `unseen_lines` must answer, the plain way: a search per newline from the end.
fn unseen_lines_plainly(bytes: &[u8]) -> Option<(u64, usize)> {
    let last_skipped = memchr::memrchr_iter(b'\n', bytes).nth(OUTPUT_TAIL_LINES)?;
    let skipped = memchr::memchr_iter(b'\n', &bytes[..=last_skipped]).count();
    Some((skipped as u64, last_skipped + 1))
}

#[test]
fn the_lines_a_tail_can_never_show_are_found_by_blocks_exactly_as_by_searching_each_newline() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
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
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
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

#[test]
fn the_nth_newline_from_the_end_is_found_by_halving_exactly_where_a_plain_search_finds_it() {
    let mut next = xorshift(0x0dd_ba11);
    for case in 0..500 {
        let len = next(9000) as usize;
        let density = 1 + next(40);
        let block: Vec<u8> = (0..len)
            .map(|_| if next(density) == 0 { b'\n' } else { b'x' })
            .collect();
        let newlines = memchr::memchr_iter(b'\n', &block).count();
        for nth in [0, 1, 2, newlines / 2, newlines, newlines + 1] {
            let plainly = nth
                .checked_sub(1)
                .and_then(|i| memchr::memrchr_iter(b'\n', &block).nth(i));
            assert_eq!(
                super::nth_newline_from_end(&block, nth),
                plainly,
                "case {case}: newline {nth} of {newlines}"
            );
        }
    }
}

/// A viewer fed what a thinner gave: lines skipped, text taken, cut lines counted as cut.
fn apply(viewer: &mut BoundedOutput, stream: Stream, pieces: &[Thinned<'_>]) -> usize {
    let mut sent = 0;
    for piece in pieces {
        viewer.skip(stream, piece.skipped);
        viewer.push(stream, piece.text);
        viewer.cut(stream, piece.cut);
        sent += piece.text.len();
    }
    sent
}

#[test]
fn a_line_of_many_mebibytes_crosses_as_its_first_two_kibibytes_and_the_count_of_the_rest() {
    let mut thinner = Thinner::new();
    let (mut whole, mut thinned) = (BoundedOutput::new(), BoundedOutput::new());
    let read = vec![b'x'; 512 * 1024];
    let mut sent = 0;
    let mut cut = 0;
    // 16 MiB in one line, in reads of 512 KiB; then its newline and a short line.
    for chunk in std::iter::repeat_n(&read[..], 32).chain([&b"\nafter\n"[..]]) {
        whole.push(Stream::Stdout, chunk);
        let pieces = thinner.thin_stream(Stream::Stdout, chunk);
        cut += pieces.iter().map(|p| p.cut).sum::<u64>();
        sent += apply(&mut thinned, Stream::Stdout, &pieces);
    }
    assert_eq!(cut, (16 << 20) - LINE_PASSES as u64);
    assert_eq!(sent, LINE_PASSES + "\nafter\n".len());
    assert_eq!(thinned.lines(), whole.lines());
    assert_eq!(thinned.total_bytes(), whole.total_bytes());
    assert!(thinned.lines()[0].0.ends_with(" … [line cut]"));
    assert_eq!(thinned.lines()[1].0, "after");
}

#[test]
fn a_line_that_never_ends_is_counted_when_the_output_ends() {
    let mut thinner = Thinner::new();
    let (mut whole, mut thinned) = (BoundedOutput::new(), BoundedOutput::new());
    let read = vec![b'y'; 300_000];
    let mut sent = 0;
    for _ in 0..10 {
        whole.push(Stream::Stderr, &read);
        sent += apply(
            &mut thinned,
            Stream::Stderr,
            &thinner.thin_stream(Stream::Stderr, &read),
        );
    }
    let ended = thinner.end();
    assert_eq!(
        ended,
        [(
            Stream::Stderr,
            Thinned {
                skipped: 0,
                text: &[],
                cut: 3_000_000 - LINE_PASSES as u64
            }
        )]
    );
    apply(&mut thinned, Stream::Stderr, &[ended[0].1]);
    assert_eq!(sent, LINE_PASSES);
    whole.finish();
    thinned.finish();
    assert_eq!(thinned.lines(), whole.lines());
    assert_eq!(thinned.render(), whole.render());
    assert!(thinner.end().is_empty(), "said once");
}

#[test]
fn the_head_of_two_hundred_long_lines_crosses_as_two_kibibytes_a_line() {
    let mut thinner = Thinner::new();
    let line = [vec![b'z'; 1 << 20], vec![b'\n']].concat();
    let mut sent = 0;
    for _ in 0..OUTPUT_HEAD_LINES {
        sent += thinner
            .thin_stream(Stream::Stdout, &line)
            .iter()
            .map(|p| p.text.len())
            .sum::<usize>();
    }
    assert!(thinner.head_is_full());
    assert_eq!(sent, OUTPUT_HEAD_LINES * (LINE_PASSES + 1));
}

#[test]
fn a_viewer_fed_thinned_output_keeps_what_every_byte_gives_with_long_lines_on_both_streams() {
    let mut next = xorshift(0x1234_5678_9abc_def1);
    for case in 0..40 {
        let mut thinner = Thinner::new();
        let (mut whole, mut thinned) = (BoundedOutput::new(), BoundedOutput::new());
        let mut sent = 0;
        let mut total = 0;
        // Each stream's text on its own, read in pieces of every size, the streams interleaved.
        let mut texts: [Vec<u8>; 2] = Default::default();
        for (s, text) in texts.iter_mut().enumerate() {
            // Mostly short lines, so that big reads skip some, and now and then a long one.
            for i in 0..(100 + next(4000)) {
                let len = match next(40) {
                    0 => MAX_LINE_BYTES as u64 + next(3) - 1,
                    1 => MAX_LINE_BYTES as u64 * (2 + next(20)),
                    _ => next(60),
                };
                text.extend((0..len).map(|k| b'a' + ((i + k + s as u64) % 26) as u8));
                text.push(b'\n');
            }
            if next(2) == 0 {
                text.extend(std::iter::repeat_n(
                    b'q',
                    next(3 * MAX_LINE_BYTES as u64) as usize,
                ));
            }
        }
        let mut at = [0, 0];
        while at[0] < texts[0].len() || at[1] < texts[1].len() {
            let s = next(2) as usize;
            let stream = [Stream::Stdout, Stream::Stderr][s];
            let size = [1, 100, 2047, 2049, 4096, 65_536, 512 * 1024][next(7) as usize];
            let end = (at[s] + size).min(texts[s].len());
            let chunk = &texts[s][at[s]..end];
            at[s] = end;
            whole.push(stream, chunk);
            total += chunk.len();
            sent += apply(&mut thinned, stream, &thinner.thin_stream(stream, chunk));
        }
        for (stream, piece) in thinner.end() {
            apply(&mut thinned, stream, &[piece]);
        }
        assert_eq!(thinned.lines(), whole.lines(), "case {case}");
        assert_eq!(thinned.total_lines(), whole.total_lines(), "case {case}");
        assert_eq!(
            thinned.omitted_lines(),
            whole.omitted_lines(),
            "case {case}"
        );
        whole.finish();
        thinned.finish();
        assert_eq!(thinned.render(), whole.render(), "case {case}");
        assert!(sent <= total, "case {case}");
    }
}

#[test]
fn a_long_line_shows_as_cut_even_to_a_viewer_never_told_how_much_was_left_out() {
    // Output that ends mid-line, from a tool that never calls `end`: no count comes.
    let mut thinner = Thinner::new();
    let mut viewer = BoundedOutput::new();
    for piece in thinner.thin(&[b'w'; 10_000]) {
        viewer.push(Stream::Stdout, piece.text);
    }
    viewer.finish();
    let shown = format!("{} … [line cut]", "w".repeat(MAX_LINE_BYTES));
    assert_eq!(viewer.lines(), [(shown, Some(Stream::Stdout))]);
}
