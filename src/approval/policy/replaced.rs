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
/// ending), over bytes.
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    body.split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(move |_| !empty)
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
fn unmatched(table: &[u8], other: &[u8]) -> (usize, usize) {
    use std::collections::HashMap;
    let mut left: HashMap<&[u8], usize> = HashMap::new();
    for l in lines(table) {
        *left.entry(l).or_default() += 1;
    }
    let mut unmatched_other = 0;
    for l in lines(other) {
        match left.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => unmatched_other += 1,
        }
    }
    (left.values().sum(), unmatched_other)
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
