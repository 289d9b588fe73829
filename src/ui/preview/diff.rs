//! An index over a unified diff: where each line starts, what it is and the line number it shows:
//! the line's number in the new file, for added and context lines. A removed line is in no line
//! of the new file and shows none (one column, one meaning: what the file will read).
//! Built once when a request comes to the front of the approval queue (one walk over the text),
//! so that every frame after it reads only the lines it shows: line numbers depend on every line
//! before, and a 50,000-line change must not be walked, let alone styled, per frame.

use std::ops::Range;

/// What one line of a unified diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// `---` / `+++` before the first hunk.
    FileHeader,
    /// `@@ -a,b +c,d @@`.
    Hunk,
    Added,
    Removed,
    Context,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexedLine {
    start: usize,
    end: usize,
    /// The line's number in the new file; 0 (none shown) for headers and removed lines.
    number: usize,
    kind: DiffKind,
    /// The hunk it belongs to, from 1 (0 for the file headers).
    hunk: usize,
}

/// A person's review of a diff hunk by hunk: the hunk the keys act on, and the hunks dropped
/// (numbered from 1; every other one is kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// The current hunk, from 0.
    pub current: usize,
    pub dropped: std::collections::BTreeSet<usize>,
}

impl Review {
    /// The hunks kept, of `count`, numbered from 1.
    pub fn kept(&self, count: usize) -> Vec<usize> {
        (1..=count).filter(|n| !self.dropped.contains(n)).collect()
    }
}

/// The index of one request's diff; `call_id` says which, so a stale index is never used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffIndex {
    pub call_id: String,
    lines: Vec<IndexedLine>,
    /// The first and last added or removed line.
    changed: Option<(usize, usize)>,
    /// Where each hunk's header is.
    hunks: Vec<usize>,
    /// The review hunk by hunk, where the diff can be answered that way.
    pub review: Option<Review>,
}

impl DiffIndex {
    pub fn build(call_id: &str, unified: &str) -> DiffIndex {
        let mut lines = Vec::new();
        let mut new = 0usize;
        let mut in_hunks = false;
        let mut changed: Option<(usize, usize)> = None;
        let mut start = 0;
        let mut hunks = Vec::new();
        for raw in unified.split_inclusive('\n') {
            let end = start + raw.len();
            // As `str::lines`: the line ending (`\n` or `\r\n`) is not part of the line.
            let text = raw
                .strip_suffix('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .unwrap_or(raw);
            let text_end = start + text.len();
            let (kind, number) = if let Some((_, to)) = hunk_starts(text) {
                in_hunks = true;
                new = to;
                hunks.push(lines.len());
                (DiffKind::Hunk, 0)
            } else if !in_hunks && (text.starts_with("--- ") || text.starts_with("+++ ")) {
                // File headers come before the first hunk only: inside a hunk, `--- x` is a
                // removed line that reads `-- x` (a SQL or Lua comment).
                (DiffKind::FileHeader, 0)
            } else {
                match text.as_bytes().first() {
                    Some(b'+') => {
                        new += 1;
                        (DiffKind::Added, new - 1)
                    }
                    Some(b'-') => (DiffKind::Removed, 0),
                    _ => {
                        new += 1;
                        (DiffKind::Context, new - 1)
                    }
                }
            };
            if matches!(kind, DiffKind::Added | DiffKind::Removed) {
                let i = lines.len();
                changed = Some(changed.map_or((i, i), |(first, _)| (first, i)));
            }
            lines.push(IndexedLine {
                start,
                end: text_end,
                number,
                kind,
                hunk: hunks.len(),
            });
            start = end;
        }
        DiffIndex {
            call_id: call_id.to_string(),
            lines,
            changed,
            hunks,
            review: None,
        }
    }

    /// How many hunks the diff has.
    pub fn hunk_count(&self) -> usize {
        self.hunks.len()
    }

    /// The line hunk `i` (from 0) starts on.
    pub fn hunk_line(&self, i: usize) -> Option<usize> {
        self.hunks.get(i).copied()
    }

    /// The hunk line `i` belongs to (from 1; 0 before the first).
    pub fn hunk_of(&self, i: usize) -> usize {
        self.lines.get(i).map_or(0, |l| l.hunk)
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The first and last changed line, if anything changes.
    pub fn changed(&self) -> Option<(usize, usize)> {
        self.changed
    }

    /// Line `i`: its text in `unified` (the text the index was built from), its kind and number.
    pub fn line<'a>(&self, unified: &'a str, i: usize) -> Option<(&'a str, DiffKind, usize)> {
        let l = self.lines.get(i)?;
        let text = unified.get(Range {
            start: l.start,
            end: l.end,
        })?;
        Some((text, l.kind, l.number))
    }
}

/// The old and new start lines of a hunk header `@@ -a[,b] +c[,d] @@` (a range of one line has
/// no `,len`).
pub fn hunk_starts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let start = |range: &str| range.split(',').next()?.parse::<usize>().ok();
    Some((start(old)?, start(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(unified: &str) -> Vec<(String, DiffKind, usize)> {
        let index = DiffIndex::build("c1", unified);
        (0..index.len())
            .filter_map(|i| index.line(unified, i))
            .map(|(t, k, n)| (t.to_string(), k, n))
            .collect()
    }

    #[test]
    fn a_one_line_hunk_range_numbers_lines_from_its_start() {
        // similar writes `@@ -1 +1,3 @@`: a range of one line has no length.
        let crate::protocol::Preview::Diff { unified, .. } =
            crate::facts::diff::unified("f", "a\n", "a\nb\nc\n")
        else {
            panic!("a diff")
        };
        let shown = lines(&unified);
        assert!(shown.iter().any(|l| l.0.starts_with("@@ -1 +1,3 @@")));
        assert!(shown.contains(&(" a".into(), DiffKind::Context, 1)));
        assert!(shown.contains(&("+b".into(), DiffKind::Added, 2)));
        assert!(shown.contains(&("+c".into(), DiffKind::Added, 3)));
    }

    #[test]
    fn a_removed_line_that_looks_like_a_file_header_is_a_removal() {
        let unified = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n select 1;\n--- c\n";
        let shown = lines(unified);
        assert_eq!(shown[0].1, DiffKind::FileHeader);
        assert_eq!(shown[4], ("--- c".into(), DiffKind::Removed, 0));
        assert_eq!(DiffIndex::build("c", unified).changed(), Some((4, 4)));
    }

    #[test]
    fn line_endings_are_not_part_of_a_line_and_a_last_line_without_one_is_kept() {
        let unified = "@@ -1 +1 @@\r\n-a\r\n+b";
        let shown = lines(unified);
        assert_eq!(shown[1].0, "-a");
        assert_eq!(shown[2], ("+b".into(), DiffKind::Added, 1));
    }

    #[test]
    fn hunk_headers_are_read_with_and_without_lengths() {
        assert_eq!(hunk_starts("@@ -3,7 +3,8 @@"), Some((3, 3)));
        assert_eq!(hunk_starts("@@ -1 +1,3 @@"), Some((1, 1)));
        assert_eq!(hunk_starts("@@ -0,0 +1 @@ fn main"), Some((0, 1)));
        assert_eq!(hunk_starts("@@@ not a hunk"), None);
        assert_eq!(hunk_starts(" @@ -1 +1 @@"), None);
    }
}
