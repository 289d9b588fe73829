//! Unified diffs for the approval modal, computed with a deadline so a huge fully-changed file
//! cannot stall anything: past the deadline the diff is approximate, and it says so.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use crate::approval::approver::Preview;

/// How long a diff may take before it settles for an approximate answer.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(500);
/// Longest diff text kept for display.
pub const MAX_DIFF_BYTES: usize = 2 << 20;

pub fn unified(path: &str, old: &str, new: &str) -> Preview {
    let started = std::time::Instant::now();
    let diff = TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let mut unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let mut approximate = started.elapsed() >= DIFF_DEADLINE;
    if unified.len() > MAX_DIFF_BYTES {
        let mut cut = MAX_DIFF_BYTES;
        while !unified.is_char_boundary(cut) {
            cut -= 1;
        }
        unified.truncate(cut);
        unified.push_str("\n… diff cut: too long to show in full\n");
        approximate = true;
    }
    Preview::Diff {
        path: path.to_string(),
        unified,
        added,
        removed,
        approximate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_has_headers_hunks_and_counts() {
        let Preview::Diff {
            unified,
            added,
            removed,
            approximate,
            ..
        } = unified("src/a.rs", "a\nb\nc\n", "a\nB\nc\n")
        else {
            panic!("not a diff")
        };
        assert!(
            unified.starts_with("--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n"),
            "{unified}"
        );
        assert!(unified.contains("-b\n+B\n"));
        assert_eq!((added, removed, approximate), (1, 1, false));
    }
}
