//! Unified diffs for the approval modal. A file change is shown as what it really does, whatever
//! the file holds and however large it is:
//!
//! - text is diffed line by line with a deadline (past it, the diff is approximate and says so);
//! - a large file is diffed only over the region that changed (the common head and tail are
//!   cut off first, which is exact); when even that region is too large, it is summarised: sizes,
//!   line counts and SHA-256 of both sides, the region's first and last lines, every line in it
//!   counted as replaced, and the preview marked approximate;
//! - old content that is not UTF-8 is never taken as empty: binary content (a NUL byte) is shown
//!   as "binary file, N bytes, sha256 …" with its lines counted as removed; other undecodable
//!   bytes are decoded lossily (as U+FFFD) and the header says so. The lossy diff is used only
//!   when the new text holds no U+FFFD, so a line with undecodable bytes can never look
//!   unchanged; otherwise the binary summary is shown;
//! - a file that cannot be read, is not a regular file, or is larger than `MAX_READ` is named
//!   as such (with size, lines and hash where they can be had, streamed) and never read whole.
//!
//! Peak memory stays near the two contents themselves: nothing above `EXACT_LIMIT` bytes reaches
//! the line differ, whose tables cost many times their input.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

use crate::protocol::Preview;
use sha2::{Digest, Sha256};
use similar::{ChangeTag, TextDiff};

/// How long a diff may take before it settles for an approximate answer.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(500);
/// Longest diff text kept for display.
pub const MAX_DIFF_BYTES: usize = 2 << 20;
/// Most bytes (old and new together) diffed line by line; a larger changed region is summarised.
pub const EXACT_LIMIT: usize = 8 << 20;
/// Lines shown from each end of a region too large to diff.
pub const EDGE_LINES: usize = 100;
/// Longest line shown in a summary (in bytes, cut at a character boundary).
const SHOWN_LINE_BYTES: usize = 1000;
/// Largest current file read whole for a diff; a larger one is summarised, streamed.
pub const MAX_READ: u64 = 256 << 20;
/// Lines of context around a change.
const CONTEXT: usize = 3;

/// The bounds a preview works within (the constants above; tests shrink them).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub exact: usize,
    pub edge_lines: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            exact: EXACT_LIMIT,
            edge_lines: EDGE_LINES,
        }
    }
}

/// The preview of writing `new` over the file at `path` (shown as `shown`), whatever is there now.
pub fn write_preview(shown: &str, path: &Path, new: &str) -> Preview {
    let unreadable = |what: String| current_not_shown(shown, &what, new, Limits::default());
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return file_change(shown, None, new),
        Err(e) => return unreadable(format!("cannot be read: {e}")),
    };
    if !meta.is_file() {
        return unreadable(format!(
            "not a regular file ({}): not read",
            if meta.is_dir() {
                "a directory"
            } else {
                "a device, FIFO or socket"
            }
        ));
    }
    if meta.len() > MAX_READ {
        return match streamed_summary(path) {
            Ok(summary) => unreadable(format!("too large to diff: {summary}")),
            Err(e) => unreadable(format!("cannot be read: {e}")),
        };
    }
    match std::fs::read(path) {
        Ok(old) => file_change(shown, Some(&old), new),
        Err(e) => unreadable(format!("cannot be read: {e}")),
    }
}

/// The preview of writing `new` to `path`, whose current content is `old` (`None`: the file
/// does not exist).
pub fn file_change(path: &str, old: Option<&[u8]>, new: &str) -> Preview {
    file_change_within(path, old, new, Limits::default())
}

pub fn file_change_within(path: &str, old: Option<&[u8]>, new: &str, limits: Limits) -> Preview {
    let Some(old) = old else {
        let mut preview = text_change(path, "", new, limits);
        if let Preview::Diff { unified, .. } = &mut preview {
            mark_header(unified, path, "does not exist: a new file");
        }
        return preview;
    };
    match std::str::from_utf8(old) {
        Ok(text) => text_change(path, text, new, limits),
        Err(_) if memchr::memchr(0, old).is_some() || new.contains('\u{FFFD}') => {
            binary_change(path, old, new, limits)
        }
        Err(first) => {
            let decoded = String::from_utf8_lossy(old);
            let undecodable = old
                .utf8_chunks()
                .filter(|c| !c.invalid().is_empty())
                .count();
            let mut preview = text_change(path, &decoded, new, limits);
            if let Preview::Diff { unified, .. } = &mut preview {
                mark_header(
                    unified,
                    path,
                    &format!(
                        "not valid UTF-8 from byte {}: {undecodable} undecodable sequence(s) shown as \u{FFFD}; {}",
                        first.valid_up_to(),
                        size_and_hash(old)
                    ),
                );
            }
            preview
        }
    }
}

/// A plain unified diff of two texts, with the deadline and the display cut.
pub fn unified(path: &str, old: &str, new: &str) -> Preview {
    let (unified, added, removed, approximate) = line_diff(path, old, new, 0);
    Preview::Diff {
        path: path.to_string(),
        unified,
        added,
        removed,
        approximate,
    }
}

/// Text to text: exact over the changed region when it fits, summarised when it does not.
fn text_change(path: &str, old: &str, new: &str, limits: Limits) -> Preview {
    if old.len() + new.len() <= limits.exact {
        return unified(path, old, new);
    }
    let region = changed_region(old, new, CONTEXT);
    let (old_mid, new_mid) = (&old[region.old.clone()], &new[region.new.clone()]);
    if old_mid.len() + new_mid.len() <= limits.exact {
        let (unified, added, removed, approximate) =
            line_diff(path, old_mid, new_mid, region.lines_before);
        return Preview::Diff {
            path: path.to_string(),
            unified,
            added,
            removed,
            approximate,
        };
    }
    // Summarised: the region without context, so only lines that differ are counted.
    let region = changed_region(old, new, 0);
    let (old_mid, new_mid) = (&old[region.old.clone()], &new[region.new.clone()]);
    let (removed, added) = (count_lines(old_mid), count_lines(new_mid));
    let mut text = format!(
        "--- a/{path}  ({})\n+++ b/{path}  ({})\n",
        size_and_hash(old.as_bytes()),
        size_and_hash(new.as_bytes())
    );
    let start = region.lines_before + 1;
    let _ = writeln!(text, "@@ -{start},{removed} +{start},{added} @@");
    edge_lines(&mut text, '-', old_mid, removed, limits.edge_lines);
    edge_lines(&mut text, '+', new_mid, added, limits.edge_lines);
    Preview::Diff {
        path: path.to_string(),
        unified: cut_for_display(text).0,
        added,
        removed,
        approximate: true,
    }
}

/// The current content is not shown (`what` says why); every line of the new one is added.
fn current_not_shown(path: &str, what: &str, new: &str, limits: Limits) -> Preview {
    let added = count_lines(new);
    let mut text = format!(
        "--- a/{path}  ({what})\n+++ b/{path}  ({})\n@@ -1 +1,{added} @@\n",
        size_and_hash(new.as_bytes())
    );
    let _ = writeln!(text, "-[the current file, {what}: replaced, not shown]");
    edge_lines(&mut text, '+', new, added, limits.edge_lines);
    Preview::Diff {
        path: path.to_string(),
        unified: cut_for_display(text).0,
        added,
        removed: 0,
        approximate: true,
    }
}

/// Size, lines and hash of a file, read in chunks.
fn streamed_summary(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let (mut bytes, mut newlines, mut last) = (0u64, 0usize, b'\n');
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        newlines += memchr::memchr_iter(b'\n', &buf[..n]).count();
        bytes += n as u64;
        last = buf[n - 1];
    }
    let lines = newlines + usize::from(bytes > 0 && last != b'\n');
    Ok(format!(
        "{bytes} bytes, {lines} line(s), sha256 {}…",
        short_hex(&hasher.finalize())
    ))
}

/// Binary old content: named with its size and hash, every line of it counted as removed.
fn binary_change(path: &str, old: &[u8], new: &str, limits: Limits) -> Preview {
    let removed = count_lines_bytes(old);
    let added = count_lines(new);
    let mut text = format!(
        "--- a/{path}  (binary: {})\n+++ b/{path}  ({})\n",
        size_and_hash(old),
        size_and_hash(new.as_bytes())
    );
    let _ = writeln!(
        text,
        "@@ -1,{removed} +{},{added} @@",
        if added == 0 { 0 } else { 1 }
    );
    let _ = writeln!(
        text,
        "-[binary file, {}: all {removed} line(s) replaced, not shown]",
        size_and_hash(old)
    );
    edge_lines(&mut text, '+', new, added, limits.edge_lines);
    Preview::Diff {
        path: path.to_string(),
        unified: cut_for_display(text).0,
        added,
        removed,
        approximate: true,
    }
}

/// Diffs two texts line by line; hunk headers are shifted by `lines_before` (the lines cut off
/// in front). Returns (text, added, removed, approximate).
fn line_diff(
    path: &str,
    old: &str,
    new: &str,
    lines_before: usize,
) -> (String, usize, usize, bool) {
    let started = std::time::Instant::now();
    let (mut text, added, removed) = match anchored_diff(path, old, new, started + DIFF_DEADLINE) {
        Some(done) => done,
        None => whole_diff(path, old, new, started + DIFF_DEADLINE),
    };
    if lines_before > 0 {
        text = shift_hunks(&text, lines_before);
    }
    let late = started.elapsed() >= DIFF_DEADLINE;
    let (text, cut) = cut_for_display(text);
    (text, added, removed, late || cut)
}

/// Below this many lines (old and new together) a diff is always made whole.
const ANCHORED_FROM_LINES: usize = 2000;

/// A large diff anchored on lines equal where they stand (see `anchored`); `None` when the
/// texts are small or do not line up that way.
fn anchored_diff(
    path: &str,
    old: &str,
    new: &str,
    deadline: std::time::Instant,
) -> Option<(String, usize, usize)> {
    let cheap = memchr::memchr_iter(b'\n', old.as_bytes()).count()
        + memchr::memchr_iter(b'\n', new.as_bytes()).count();
    if cheap < ANCHORED_FROM_LINES {
        return None;
    }
    let (old_lines, new_lines) = (anchored::split_lines(old), anchored::split_lines(new));
    let ops = anchored::ops(&old_lines, &new_lines, deadline)?;
    let (added, removed) = anchored::counts(&ops);
    let text = anchored::unified(path, &old_lines, &new_lines, ops, CONTEXT);
    Some((text, added, removed))
}

/// The differ's line diff of the texts whole: (text, added, removed).
fn whole_diff(
    path: &str,
    old: &str,
    new: &str,
    deadline: std::time::Instant,
) -> (String, usize, usize) {
    let diff = TextDiff::configure()
        .deadline(deadline)
        .diff_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    (text, added, removed)
}

/// Where two texts differ: byte ranges in each (starting and ending at line boundaries, with
/// `CONTEXT` unchanged lines kept on each side) and how many lines come before.
struct Region {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    lines_before: usize,
}

fn changed_region(old: &str, new: &str, context: usize) -> Region {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    // Back to the start of the line the first difference is on, then CONTEXT lines more.
    let mut start = a[..prefix]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = a[..start - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    let room = a.len().min(b.len()) - start;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    // The common tail must begin at a line start in both texts: if it does not already, move
    // to just after its first newline (the same newline precedes that point in both), then
    // `context` lines more.
    let line_start = |x: &[u8], at: usize| at == 0 || x[at - 1] == b'\n';
    let tail = &a[a.len() - suffix..];
    let mut skip = if line_start(a, a.len() - suffix) && line_start(b, b.len() - suffix) {
        0
    } else {
        tail.iter()
            .position(|&c| c == b'\n')
            .map_or(suffix, |i| i + 1)
    };
    for _ in 0..context {
        match tail[skip..].iter().position(|&c| c == b'\n') {
            Some(i) if skip < suffix => skip += i + 1,
            _ => break,
        }
    }
    let kept = suffix - skip;
    Region {
        old: start..a.len() - kept,
        new: start..b.len() - kept,
        lines_before: memchr::memchr_iter(b'\n', &a[..start]).count(),
    }
}

/// Adds `by` to the start line of each hunk header `@@ -a[,b] +c[,d] @@`. Only headers start with
/// `@@`: every other line of a hunk starts with ' ', '+' or '-'.
fn shift_hunks(text: &str, by: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        match shifted_header(line, by) {
            Some(header) => out.push_str(&header),
            None => out.push_str(line),
        }
    }
    out
}

fn shifted_header(line: &str, by: usize) -> Option<String> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, tail) = rest.split_once(" @@")?;
    let shift = |range: &str| -> Option<String> {
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s, Some(l)),
            None => (range, None),
        };
        let start = start.parse::<usize>().ok()? + by;
        Some(match len {
            Some(len) => format!("{start},{len}"),
            None => start.to_string(),
        })
    };
    Some(format!("@@ -{} +{} @@{tail}", shift(old)?, shift(new)?))
}

/// Writes the first and last `edge` of a region's `total` lines, each prefixed with `sign`, with
/// a marker for what is left out between them.
fn edge_lines(out: &mut String, sign: char, region: &str, total: usize, edge: usize) {
    let mut push = |line: &str| {
        out.push(sign);
        out.push_str(&shown_line(line));
        out.push('\n');
    };
    if total <= 2 * edge {
        region.lines().for_each(&mut push);
        return;
    }
    region.lines().take(edge).for_each(&mut push);
    let head_end = nth_line_end(region, edge);
    let tail_start = region.len() - nth_line_end_from_back(region, edge);
    let _ = writeln!(
        out,
        "{sign}[… {} more line(s), {} bytes, not shown …]",
        total - 2 * edge,
        tail_start.saturating_sub(head_end)
    );
    region[tail_start..].lines().for_each(|line| {
        out.push(sign);
        out.push_str(&shown_line(line));
        out.push('\n');
    });
}

/// Byte offset just past the `n`th newline (or the end).
fn nth_line_end(text: &str, n: usize) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(n.saturating_sub(1))
        .map_or(text.len(), |i| i + 1)
}

/// How many bytes the last `n` lines take.
fn nth_line_end_from_back(text: &str, n: usize) -> usize {
    let bytes = text.as_bytes();
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    memchr::memrchr_iter(b'\n', body)
        .nth(n.saturating_sub(1))
        .map_or(bytes.len(), |i| bytes.len() - i - 1)
}

fn shown_line(line: &str) -> String {
    if line.len() <= SHOWN_LINE_BYTES {
        return line.to_string();
    }
    let mut cut = SHOWN_LINE_BYTES;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}[… {} more bytes on this line]",
        &line[..cut],
        line.len() - cut
    )
}

/// Lines as a diff counts them: a last line without a newline counts too.
fn count_lines(text: &str) -> usize {
    count_lines_bytes(text.as_bytes())
}

fn count_lines_bytes(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

fn size_and_hash(bytes: &[u8]) -> String {
    format!(
        "{} bytes, {} line(s), sha256 {}…",
        bytes.len(),
        count_lines_bytes(bytes),
        short_hex(&Sha256::digest(bytes))
    )
}

/// The first 16 hex digits of a digest.
fn short_hex(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(16);
    for byte in digest.iter().take(8) {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Appends `note` to the old side's header line (`--- a/path`), writing the headers when the
/// diff is empty (no line changed), so what the file is still shows.
fn mark_header(unified: &mut String, path: &str, note: &str) {
    if unified.is_empty() {
        *unified = format!("--- a/{path}\n+++ b/{path}\n");
    }
    if let Some(end) = unified
        .starts_with("--- ")
        .then(|| unified.find('\n'))
        .flatten()
    {
        unified.insert_str(end, &format!("  ({note})"));
    }
}

/// Cuts a diff longer than `MAX_DIFF_BYTES`; says whether it did.
fn cut_for_display(mut text: String) -> (String, bool) {
    if text.len() <= MAX_DIFF_BYTES {
        return (text, false);
    }
    let mut cut = MAX_DIFF_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str("\n… diff cut: too long to show in full\n");
    (text, true)
}

mod anchored;
pub mod hunks;

pub use anchored::split_lines;

#[cfg(test)]
mod tests;
