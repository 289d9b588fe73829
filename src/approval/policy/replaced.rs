//! What a `write_file` over an existing file deletes, counted in lines, for the policy's
//! "large deletion" check.
//!
//! The old content is read as bytes: a file that is not UTF-8 still has lines, and counting it
//! as empty would let a write wipe it without the large-deletion question. Only regular files
//! are read, opened without blocking, so a FIFO or a terminal at the path cannot stall the gate;
//! past a size bound every old line counts as deleted (the write replaces the whole file, so
//! that is what it may delete). A file that cannot be read gives an error the caller turns into
//! a question, never into "nothing deleted".

use std::io::Read;
use std::path::Path;

/// The largest old file compared line by line; beyond it, its lines are counted, not compared.
pub const MAX_COMPARED_BYTES: u64 = 32 * 1024 * 1024;

/// Lines deleted and added when `path` (which exists) is replaced by `new`.
pub fn replaced_lines(path: &Path, new: &str) -> Result<(usize, usize), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        // A device, FIFO or directory holds no lines to lose; the file tools refuse it anyway.
        return Ok((0, count_lines(new.as_bytes())));
    }
    if meta.len() > MAX_COMPARED_BYTES {
        let mut old_lines = 0usize;
        let mut ends_open = false;
        let mut buf = vec![0u8; 1024 * 1024];
        let mut reader = file;
        loop {
            let n = reader.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            old_lines += memchr::memchr_iter(b'\n', &buf[..n]).count();
            ends_open = buf[n - 1] != b'\n';
        }
        return Ok((
            old_lines + usize::from(ends_open),
            count_lines(new.as_bytes()),
        ));
    }
    let mut old = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_COMPARED_BYTES)
        .read_to_end(&mut old)
        .map_err(|e| e.to_string())?;
    Ok(line_changes_bytes(&old, new.as_bytes()))
}

/// Lines as `str::lines` counts them, found with `memchr`.
fn count_lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// Lines as `str::lines` splits them (a final newline ends the last line; `\r\n` counts as one
/// ending), over bytes, found with `memchr`.
fn lines(bytes: &[u8]) -> Lines<'_> {
    Lines {
        rest: (!bytes.is_empty()).then(|| bytes.strip_suffix(b"\n").unwrap_or(bytes)),
    }
}

struct Lines<'a> {
    /// What is left to split (without the text's final newline); `None` once the last line
    /// has been given.
    rest: Option<&'a [u8]>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        let line = match memchr::memchr(b'\n', rest) {
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                &rest[..i]
            }
            None => {
                self.rest = None;
                rest
            }
        };
        Some(without_cr(line))
    }
}

fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// [`super::line_changes`] over bytes: each line of `old` that no line of `new` matches is
/// deleted, each line of `new` that matches none of `old` is added (a line repeated counts once
/// per repeat). Only the lines of the shorter text go into a table; the other is read past it,
/// so a 100 MB write over a small file (or a small edit of a large one) does not put two million
/// lines in a table.
pub fn line_changes_bytes(old: &[u8], new: &[u8]) -> (usize, usize) {
    if new.len() < old.len() {
        let (added, deleted) = unmatched(new, old);
        return (deleted, added);
    }
    unmatched(old, new)
}

/// The lines of `table` that `other` leaves unmatched, and the lines of `other` that match no
/// line of `table`.
///
/// A count over multisets: any line of one text may be matched with any equal line of the
/// other, and which ones are matched never changes the counts. So equal lines are matched off
/// cheaply first, with no table: the common head and tail, then, in the region between them,
/// lines equal at the same place (an edit that changes lines where they stand, the usual
/// rewrite of a file, leaves only the changed lines). Only what is left goes through the table,
/// which keeps the standard library's keyed hash: the lines are the model's, and a hash it could
/// make collide would let it stall the gate.
fn unmatched(table: &[u8], other: &[u8]) -> (usize, usize) {
    use std::collections::HashMap;
    let (table, other) = middles(table, other);
    let mut left: HashMap<&[u8], usize> = HashMap::new();
    for (t, o) in side_by_side(table, other) {
        if let Some(t) = t
            && o != Some(t)
        {
            *left.entry(t).or_default() += 1;
        }
    }
    // The same walk again, so the other text's unmatched lines are never held.
    let mut unmatched_other = 0;
    for (t, o) in side_by_side(table, other) {
        let Some(o) = o else { continue };
        if t == Some(o) {
            continue;
        }
        match left.get_mut(o) {
            Some(n) if *n > 0 => *n -= 1,
            _ => unmatched_other += 1,
        }
    }
    (left.values().sum(), unmatched_other)
}

/// The lines of two texts at the same places, `None` past the end of the shorter.
fn side_by_side<'a>(
    a: &'a [u8],
    b: &'a [u8],
) -> impl Iterator<Item = (Option<&'a [u8]>, Option<&'a [u8]>)> {
    let (mut a, mut b) = (lines(a), lines(b));
    std::iter::from_fn(move || match (a.next(), b.next()) {
        (None, None) => None,
        pair => Some(pair),
    })
}

/// `a` and `b` without the lines they begin and end with in common (as [`lines`] compares
/// them): each rest starts at a line start and ends after a newline or at the text's end, so
/// [`lines`] splits it into exactly the lines left.
fn middles<'a, 'b>(a: &'a [u8], b: &'b [u8]) -> (&'a [u8], &'b [u8]) {
    // The line at `at` (without its ending) and where the next one starts.
    let line_at = |x: &[u8], at: usize| -> Option<(usize, usize)> {
        if at >= x.len() {
            return None;
        }
        Some(match memchr::memchr(b'\n', &x[at..]) {
            Some(i) => (at + i, at + i + 1),
            None => (x.len(), x.len()),
        })
    };
    let (mut head_a, mut head_b) = (0, 0);
    while let (Some((end_a, next_a)), Some((end_b, next_b))) =
        (line_at(a, head_a), line_at(b, head_b))
    {
        if without_cr(&a[head_a..end_a]) != without_cr(&b[head_b..end_b]) {
            break;
        }
        (head_a, head_b) = (next_a, next_b);
    }
    // The line that ends at `end` (a line start or the text's end), not before `from`: where
    // it starts and where its text ends.
    let line_before = |x: &[u8], from: usize, end: usize| -> Option<(usize, usize)> {
        if end <= from {
            return None;
        }
        let text_end = if x[end - 1] == b'\n' { end - 1 } else { end };
        let start = memchr::memrchr(b'\n', &x[from..text_end]).map_or(from, |i| from + i + 1);
        Some((start, text_end))
    };
    let (mut tail_a, mut tail_b) = (a.len(), b.len());
    while let (Some((start_a, text_a)), Some((start_b, text_b))) = (
        line_before(a, head_a, tail_a),
        line_before(b, head_b, tail_b),
    ) {
        if without_cr(&a[start_a..text_a]) != without_cr(&b[start_b..text_b]) {
            break;
        }
        (tail_a, tail_b) = (start_a, start_b);
    }
    (&a[head_a..tail_a], &b[head_b..tail_b])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_lines_split_like_str_lines() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n",
            "\n\n",
            "a\n\nb\n",
        ] {
            let from_bytes: Vec<&[u8]> = lines(text.as_bytes()).collect();
            let from_str: Vec<&[u8]> = text.lines().map(str::as_bytes).collect();
            assert_eq!(from_bytes, from_str, "{text:?}");
        }
    }

    /// The count as a table of both texts' lines made it: old count minus new count per line.
    fn by_both_tables(old: &[u8], new: &[u8]) -> (usize, usize) {
        use std::collections::HashMap;
        let mut counts: HashMap<&[u8], isize> = HashMap::new();
        for l in lines(old) {
            *counts.entry(l).or_default() += 1;
        }
        for l in lines(new) {
            *counts.entry(l).or_default() -= 1;
        }
        let deleted = counts
            .values()
            .filter(|v| **v > 0)
            .map(|v| *v as usize)
            .sum();
        let added = counts
            .values()
            .filter(|v| **v < 0)
            .map(|v| (-*v) as usize)
            .sum();
        (deleted, added)
    }

    #[test]
    fn lines_are_counted_deleted_and_added_as_a_table_of_both_texts_counts_them() {
        let texts = [
            "",
            "a",
            "a\n",
            "a\nb\nc\n",
            "a\nc\nd\n",
            "a\na\n",
            "a\r\nb\n",
            "b\na\na\na\n",
            "\n\n\n",
            "x\ny\nz\nx\ny\n",
            "long line one that is longer than the others\nshort\n",
        ];
        for old in texts {
            for new in texts {
                assert_eq!(
                    line_changes_bytes(old.as_bytes(), new.as_bytes()),
                    by_both_tables(old.as_bytes(), new.as_bytes()),
                    "{old:?} -> {new:?}"
                );
            }
            assert_eq!(count_lines(old.as_bytes()), old.lines().count(), "{old:?}");
        }
        // Generated texts over a few distinct lines, so repeats and partial matches abound.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut text = || {
            let mut out = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for i in 0..seed % 30 {
                out.push_str(["p", "q", "r\r", "", "ss"][((seed >> (i % 50)) % 5) as usize]);
                out.push('\n');
            }
            out
        };
        for _ in 0..500 {
            let (old, new) = (text(), text());
            assert_eq!(
                line_changes_bytes(old.as_bytes(), new.as_bytes()),
                by_both_tables(old.as_bytes(), new.as_bytes()),
                "{old:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn edits_of_a_text_are_counted_as_a_table_of_both_texts_counts_them() {
        // A text and edits of it: lines changed where they stand, blocks put in or taken out,
        // line endings and the final newline changed, lines moved; the head, the tail and the
        // lines at the same place are matched off before the table, with the same counts.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below.max(1)
        };
        for round in 0..400 {
            let count = next(40) as usize;
            let mut old: Vec<String> = (0..count)
                .map(|i| match next(4) {
                    0 => "same".to_string(),
                    1 => String::new(),
                    _ => format!("line {i}"),
                })
                .collect();
            let mut new = old.clone();
            for _ in 0..next(4) {
                let at = next(new.len() as u64 + 1) as usize;
                match next(5) {
                    0 if at < new.len() => new[at] = format!("changed {}", next(3)),
                    1 => new.insert(at, ["same", "", "inserted"][next(3) as usize].to_string()),
                    2 if at < new.len() => {
                        new.remove(at);
                    }
                    3 if at < new.len() => new[at].push('\r'),
                    4 if !new.is_empty() => {
                        let line = new.remove(at.min(new.len() - 1));
                        let to = next(new.len() as u64 + 1) as usize;
                        new.insert(to, line);
                    }
                    _ => {}
                }
            }
            if round % 3 == 0 {
                std::mem::swap(&mut old, &mut new);
            }
            let join = |lines: &[String], open_end: bool| {
                let mut text = lines.join("\n");
                if !open_end && !lines.is_empty() {
                    text.push('\n');
                }
                text
            };
            let old = join(&old, next(4) == 0);
            let new = join(&new, next(4) == 0);
            assert_eq!(
                line_changes_bytes(old.as_bytes(), new.as_bytes()),
                by_both_tables(old.as_bytes(), new.as_bytes()),
                "{old:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn the_common_head_and_tail_are_cut_at_line_starts() {
        let cut = |a: &str, b: &str| {
            let (x, y) = middles(a.as_bytes(), b.as_bytes());
            (
                String::from_utf8(x.to_vec()).unwrap(),
                String::from_utf8(y.to_vec()).unwrap(),
            )
        };
        assert_eq!(cut("a\nb\nc\n", "a\nx\nc\n"), ("b\n".into(), "x\n".into()));
        assert_eq!(cut("x\nb", "y\nb\n"), ("x\n".into(), "y\n".into()));
        assert_eq!(cut("a\r\nb\n", "a\nc\n"), ("b\n".into(), "c\n".into()));
        assert_eq!(cut("p", "p\nq"), (String::new(), "q".into()));
        assert_eq!(cut("a\na\na\n", "a\na\n"), ("a\n".into(), String::new()));
        assert_eq!(cut("\n\n", "\n"), ("\n".into(), String::new()));
        assert_eq!(cut("", "a"), (String::new(), "a".into()));
    }

    #[test]
    fn overwriting_a_file_that_is_not_utf8_counts_its_lines_as_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.bin");
        let mut old = Vec::new();
        for i in 0..300 {
            old.extend_from_slice(format!("row {i} \u{00e9}").as_bytes());
            old.push(0xff);
            old.push(b'\n');
        }
        std::fs::write(&path, &old).unwrap();
        assert_eq!(replaced_lines(&path, "x\n").unwrap(), (300, 1));
    }

    #[test]
    fn a_fifo_at_the_path_is_not_read_and_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(replaced_lines(&path, "a\nb\n").unwrap(), (0, 2));
    }

    #[test]
    fn a_file_too_big_to_compare_counts_every_old_line_as_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let line = "x".repeat(1023) + "\n";
        let count = (MAX_COMPARED_BYTES / 1024 + 1) as usize;
        std::fs::write(&path, line.repeat(count)).unwrap();
        assert_eq!(replaced_lines(&path, &line).unwrap(), (count, 1));
    }

    #[test]
    fn an_unreadable_file_is_an_error_not_an_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        assert!(replaced_lines(&missing, "a").is_err());
    }
}
