//! A line diff of two large texts whose lines mostly stay where they were (the usual rewrite of
//! a file: some lines changed in place), without hashing every line.
//!
//! The differ (`similar`) gives each distinct line a number through a hash table before it
//! diffs, which over a 50,000-line file took most of the preview's time. Here lines equal at the
//! same place (after the common head and tail) are taken as they are when they come in runs of
//! at least [`MIN_RUN`]: such a run is what a minimal diff keeps too, unless lines repeat
//! around it. Only the gaps between runs go to the differ, each on its own (small, fast), under
//! the one deadline. When runs do not cover at least half of the lines (lines put in or taken
//! out shift everything after them, or everything changed), there is no anchored diff and the
//! caller diffs the texts whole, as before.
//!
//! The output is the differ's unified diff text, written the same way: the same hunks (grouped
//! with `similar::group_diff_ops`), headers, line prefixes and "\ No newline at end of file".

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Instant;

use similar::{Algorithm, DiffOp, DiffTag};

/// The fewest lines equal at the same place taken as an anchor.
pub const MIN_RUN: usize = 8;

/// Lines as the differ splits them: each keeps its ending (`\n`, `\r\n` or a lone `\r`).
pub fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
    let mut start = 0;
    let mut at = 0;
    while let Some(i) = memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
        let i = at + i;
        let end = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        };
        lines.push(&text[start..end]);
        start = end;
        at = end;
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The diff of `old` and `new` (lines as [`split_lines`] gives them) as the differ's operations,
/// anchored on runs of lines equal at the same place; `None` when such runs cover less than
/// half of the lines between the common head and tail.
pub fn ops(old: &[&str], new: &[&str], deadline: Instant) -> Option<Vec<DiffOp>> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_mid, new_mid) = (prefix..old.len() - suffix, prefix..new.len() - suffix);
    let side = old_mid.len().min(new_mid.len());
    // Runs of lines equal at the same place, as (offset from the middle's start, length).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut k = 0;
    while k < side {
        if old[old_mid.start + k] != new[new_mid.start + k] {
            k += 1;
            continue;
        }
        let start = k;
        while k < side && old[old_mid.start + k] == new[new_mid.start + k] {
            k += 1;
        }
        if k - start >= MIN_RUN {
            runs.push((start, k - start));
        }
    }
    let anchored: usize = runs.iter().map(|(_, len)| len).sum();
    if anchored == 0 || anchored * 2 < old_mid.len().max(new_mid.len()) {
        return None;
    }
    let mut out = Ops::default();
    out.equal(0, 0, prefix);
    let (mut at_old, mut at_new) = (old_mid.start, new_mid.start);
    for (start, len) in runs {
        let (run_old, run_new) = (old_mid.start + start, new_mid.start + start);
        out.gap(old, at_old..run_old, new, at_new..run_new, deadline);
        out.equal(run_old, run_new, len);
        (at_old, at_new) = (run_old + len, run_new + len);
    }
    out.gap(old, at_old..old_mid.end, new, at_new..new_mid.end, deadline);
    out.equal(old_mid.end, new_mid.end, suffix);
    Some(out.ops)
}

/// Operations in order, neighbouring equal ones merged (as one diff of the whole would give
/// them, so hunks are grouped the same).
#[derive(Default)]
struct Ops {
    ops: Vec<DiffOp>,
}

impl Ops {
    fn push(&mut self, op: DiffOp) {
        if let (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) =
            (self.ops.last_mut(), op)
        {
            *len += more;
            return;
        }
        self.ops.push(op);
    }

    fn equal(&mut self, old_index: usize, new_index: usize, len: usize) {
        if len > 0 {
            self.push(DiffOp::Equal {
                old_index,
                new_index,
                len,
            });
        }
    }

    /// The lines between two anchors, diffed on their own.
    fn gap(
        &mut self,
        old: &[&str],
        old_range: Range<usize>,
        new: &[&str],
        new_range: Range<usize>,
        deadline: Instant,
    ) {
        match (old_range.is_empty(), new_range.is_empty()) {
            (true, true) => {}
            (false, true) => self.push(DiffOp::Delete {
                old_index: old_range.start,
                old_len: old_range.len(),
                new_index: new_range.start,
            }),
            (true, false) => self.push(DiffOp::Insert {
                old_index: old_range.start,
                new_index: new_range.start,
                new_len: new_range.len(),
            }),
            (false, false) => {
                let ops = similar::capture_diff_deadline(
                    Algorithm::Myers,
                    old,
                    old_range,
                    new,
                    new_range,
                    Some(deadline),
                );
                for op in ops {
                    self.push(op);
                }
            }
        }
    }
}

/// Lines added and removed by `ops`.
pub fn counts(ops: &[DiffOp]) -> (usize, usize) {
    ops.iter()
        .filter(|op| op.tag() != DiffTag::Equal)
        .fold((0, 0), |(added, removed), op| {
            (added + op.new_range().len(), removed + op.old_range().len())
        })
}

/// The unified diff of `ops` with `context` lines around each change, headed `a/path` and
/// `b/path`, written as the differ writes it (empty when nothing changed).
pub fn unified(path: &str, old: &[&str], new: &[&str], ops: Vec<DiffOp>, context: usize) -> String {
    let mut out = String::new();
    for hunk in similar::group_diff_ops(ops, context) {
        if hunk.is_empty() {
            continue;
        }
        if out.is_empty() {
            let _ = writeln!(out, "--- a/{path}\n+++ b/{path}");
        }
        let _ = writeln!(out, "{}", similar::udiff::UnifiedHunkHeader::new(&hunk));
        for op in &hunk {
            let (old_range, new_range) = (op.old_range(), op.new_range());
            match op.tag() {
                DiffTag::Equal => line_out(&mut out, ' ', &old[old_range]),
                DiffTag::Delete => line_out(&mut out, '-', &old[old_range]),
                DiffTag::Insert => line_out(&mut out, '+', &new[new_range]),
                DiffTag::Replace => {
                    line_out(&mut out, '-', &old[old_range]);
                    line_out(&mut out, '+', &new[new_range]);
                }
            }
        }
    }
    out
}

fn line_out(out: &mut String, sign: char, lines: &[&str]) {
    for line in lines {
        out.push(sign);
        out.push_str(line);
        if !line.ends_with(['\r', '\n']) {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}
