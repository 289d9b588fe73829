//! The hunks of a diff as the approval modal shows them, and the change made of only some of
//! them: what a person keeps is applied to the file as it is now, exactly as it was shown.
//!
//! The shown text is the authority, not a diff made again: every hunk's old side (its context and
//! removed lines) must still be in the file, at the line its header names, byte for byte. A file
//! that changed since the diff was shown fails that check and nothing is built from it. Lines
//! keep their endings (`\n`, `\r\n`, a lone `\r`), and a line shown with "\ No newline at end of
//! file" is taken without the newline the display added, so the result is exact.

use std::borrow::Cow;

use super::anchored::split_lines;

/// The marker the diff writes after a line that has no newline.
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// One hunk of a shown diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    /// Its number as the modal shows it, from 1.
    pub number: usize,
    /// Its `@@ -a,b +c,d @@` line, without the line ending.
    pub header: &'a str,
    /// The display line its header is on (0-based, counting the file headers).
    pub line: usize,
    /// Its whole text as shown: the header and every line after it.
    pub text: &'a str,
    /// Where its old side starts in the file (0-based line index).
    old_at: usize,
    /// Its old side (context and removed lines) and new side (context and added lines), each
    /// line with its ending as in the file.
    old: Vec<Cow<'a, str>>,
    new: Vec<Cow<'a, str>>,
}

impl Hunk<'_> {
    /// Lines it adds and removes.
    pub fn counts(&self) -> (usize, usize) {
        let (mut added, mut removed) = (0, 0);
        for line in split_lines(self.text).iter().skip(1) {
            match line.as_bytes().first() {
                Some(b'+') => added += 1,
                Some(b'-') => removed += 1,
                _ => {}
            }
        }
        (added, removed)
    }
}

/// Why hunks cannot be taken from a diff, or applied to the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HunkError {
    #[error("the diff shown is not one airlock can take apart ({0})")]
    Malformed(String),
    #[error(
        "the file changed since the diff was shown (hunk {0} no longer matches it); nothing was written"
    )]
    Changed(usize),
    #[error("there is no hunk {asked}: the diff has {count}")]
    NoSuchHunk { asked: usize, count: usize },
}

/// The hunks of a unified diff as airlock writes it (file headers, then `@@` hunks).
pub fn parse(unified: &str) -> Result<Vec<Hunk<'_>>, HunkError> {
    let lines = split_lines(unified);
    let mut hunks = Vec::new();
    let mut offset = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !line.starts_with("@@ ") {
            if !hunks.is_empty() {
                return Err(HunkError::Malformed(format!(
                    "line {} is neither a hunk nor inside one",
                    i + 1
                )));
            }
            offset += line.len();
            i += 1;
            continue;
        }
        let header = line.trim_end_matches(['\r', '\n']);
        let (old_start, old_len, new_len) = header_numbers(header)
            .ok_or_else(|| HunkError::Malformed(format!("bad hunk header {header:?}")))?;
        let (start, header_line) = (offset, i);
        offset += line.len();
        i += 1;
        let mut old: Vec<Cow<'_, str>> = Vec::with_capacity(old_len);
        let mut new: Vec<Cow<'_, str>> = Vec::with_capacity(new_len);
        // Which sides the last body line went to, for a "no newline" marker after it.
        let mut last = (false, false);
        while old.len() < old_len || new.len() < new_len || is_marker(lines.get(i)) {
            let Some(line) = lines.get(i) else {
                return Err(HunkError::Malformed(format!(
                    "hunk {} ends before its header says",
                    hunks.len() + 1
                )));
            };
            offset += line.len();
            i += 1;
            if is_marker(Some(line)) {
                for (went, side) in [(last.0, &mut old), (last.1, &mut new)] {
                    if went && let Some(previous) = side.last_mut() {
                        *previous = Cow::Owned(without_display_newline(previous));
                    }
                }
                last = (false, false);
                continue;
            }
            // Every line split off has at least its ending, and its sign is one ASCII byte.
            let (sign, content) = line.split_at(1.min(line.len()));
            last = match sign {
                " " => (true, true),
                "-" => (true, false),
                "+" => (false, true),
                _ => {
                    return Err(HunkError::Malformed(format!(
                        "line {i} of hunk {} has no +, - or space in front",
                        hunks.len() + 1
                    )));
                }
            };
            if last.0 {
                old.push(Cow::Borrowed(content));
            }
            if last.1 {
                new.push(Cow::Borrowed(content));
            }
        }
        if old.len() != old_len || new.len() != new_len {
            return Err(HunkError::Malformed(format!(
                "hunk {} holds other lines than its header says",
                hunks.len() + 1
            )));
        }
        hunks.push(Hunk {
            number: hunks.len() + 1,
            header,
            line: header_line,
            text: &unified[start..offset],
            old_at: if old_len == 0 {
                old_start
            } else {
                old_start.saturating_sub(1)
            },
            old,
            new,
        });
    }
    Ok(hunks)
}

/// The file's content with only the hunks numbered in `keep` applied (every other hunk's lines
/// stay as they are), checked against `current` hunk by hunk.
pub fn apply(hunks: &[Hunk<'_>], current: &str, keep: &[usize]) -> Result<String, HunkError> {
    if let Some(&asked) = keep.iter().find(|&&n| n == 0 || n > hunks.len()) {
        return Err(HunkError::NoSuchHunk {
            asked,
            count: hunks.len(),
        });
    }
    let lines = split_lines(current);
    let mut out = String::with_capacity(current.len());
    let mut at = 0;
    for hunk in hunks {
        let end = hunk.old_at + hunk.old.len();
        if hunk.old_at < at || end > lines.len() {
            return Err(HunkError::Changed(hunk.number));
        }
        if lines[hunk.old_at..end]
            .iter()
            .zip(&hunk.old)
            .any(|(is, was)| *is != was.as_ref())
        {
            return Err(HunkError::Changed(hunk.number));
        }
        lines[at..hunk.old_at].iter().for_each(|l| out.push_str(l));
        let side = if keep.contains(&hunk.number) {
            &hunk.new
        } else {
            &hunk.old
        };
        side.iter().for_each(|l| out.push_str(l));
        at = end;
    }
    lines[at..].iter().for_each(|l| out.push_str(l));
    Ok(out)
}

/// `a`, `b` and `d` of `@@ -a,b +c,d @@` (a missing count is 1).
fn header_numbers(header: &str) -> Option<(usize, usize, usize)> {
    let rest = header.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let ((old_start, old_len), (_, new_len)) = (range(old)?, range(new)?);
    Some((old_start, old_len, new_len))
}

/// Twenty lines, and the same with lines 2, 10 and 18 changed: a change of three hunks, which
/// the tests of every layer that reviews hunks share.
#[cfg(test)]
pub fn three_hunk_change() -> (String, String) {
    let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "LINE 2\n")
        .replace("line 10\n", "LINE 10\n")
        .replace("line 18\n", "LINE 18\n");
    (old, new)
}

fn is_marker(line: Option<&&str>) -> bool {
    line.is_some_and(|l| l.starts_with(NO_NEWLINE))
}

/// A line shown before a "no newline" marker, without the `\n` the display put after it.
fn without_display_newline(line: &str) -> String {
    line.strip_suffix('\n').unwrap_or(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::diff::unified;
    use crate::protocol::Preview;

    fn shown(old: &str, new: &str) -> String {
        match unified("f.txt", old, new) {
            Preview::Diff { unified, .. } => unified,
            other => panic!("not a diff: {other:?}"),
        }
    }

    #[test]
    fn a_three_hunk_change_with_hunk_2_dropped_keeps_exactly_hunks_1_and_3() {
        let (old, new) = three_hunk_change();
        let text = shown(&old, &new);
        let hunks = parse(&text).unwrap();
        assert_eq!(hunks.len(), 3);
        let kept = apply(&hunks, &old, &[1, 3]).unwrap();
        assert!(kept.contains("LINE 2\n") && kept.contains("LINE 18\n"));
        assert!(kept.contains("line 10\n") && !kept.contains("LINE 10"));
        assert_eq!(kept.lines().count(), 20);
        assert_eq!(apply(&hunks, &old, &[1, 2, 3]).unwrap(), new);
        assert_eq!(apply(&hunks, &old, &[]).unwrap(), old);
    }

    #[test]
    fn every_hunk_says_where_it_is_shown_and_what_it_changes() {
        let (old, new) = three_hunk_change();
        let text = shown(&old, &new);
        let hunks = parse(&text).unwrap();
        assert_eq!(hunks[1].header, "@@ -7,7 +7,7 @@");
        assert!(
            text.lines()
                .nth(hunks[1].line)
                .unwrap()
                .starts_with("@@ -7")
        );
        assert!(hunks[1].text.contains("-line 10\n+LINE 10\n"));
        assert_eq!(hunks[1].counts(), (1, 1));
    }

    #[test]
    fn a_file_changed_since_the_diff_was_shown_is_refused_by_the_hunk_it_breaks() {
        let (old, new) = three_hunk_change();
        let text = shown(&old, &new);
        let hunks = parse(&text).unwrap();
        let meanwhile = old.replace("line 9\n", "line nine\n");
        assert_eq!(apply(&hunks, &meanwhile, &[1]), Err(HunkError::Changed(2)));
        assert_eq!(apply(&hunks, "", &[1]), Err(HunkError::Changed(1)));
    }

    #[test]
    fn a_hunk_that_does_not_exist_is_named() {
        let (old, new) = three_hunk_change();
        let text = shown(&old, &new);
        let hunks = parse(&text).unwrap();
        assert_eq!(
            apply(&hunks, &old, &[4]),
            Err(HunkError::NoSuchHunk { asked: 4, count: 3 })
        );
        assert!(apply(&hunks, &old, &[0]).is_err());
    }

    #[test]
    fn missing_final_newlines_and_crlf_lines_come_back_exactly() {
        for (old, new) in [
            ("a\nb\nc", "a\nB\nc"),
            ("a\nb\nc", "a\nb\nc\n"),
            ("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"),
            ("", "new file\nno newline"),
            ("gone\n", ""),
            ("x\ry\rz", "x\rY\rz"),
        ] {
            let text = shown(old, new);
            let hunks = parse(&text).unwrap();
            let all: Vec<usize> = (1..=hunks.len()).collect();
            assert_eq!(apply(&hunks, old, &all).unwrap(), new, "{text:?}");
            assert_eq!(apply(&hunks, old, &[]).unwrap(), old, "{text:?}");
        }
    }

    #[test]
    fn a_large_file_diffed_by_anchors_takes_apart_and_applies_as_well() {
        let old: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..5000)
            .map(|i| match i % 50 {
                0 => format!("LINE {i}\n"),
                _ => format!("line {i}\n"),
            })
            .collect();
        let text = shown(&old, &new);
        let hunks = parse(&text).unwrap();
        assert_eq!(hunks.len(), 100);
        let odd: Vec<usize> = (1..=100).filter(|n| n % 2 == 1).collect();
        let kept = apply(&hunks, &old, &odd).unwrap();
        assert!(kept.contains("LINE 0\n") && kept.contains("line 50\n"));
        assert!(kept.contains("LINE 100\n") && !kept.contains("LINE 150\n"));
    }

    #[test]
    fn a_text_that_is_not_a_diff_is_refused() {
        assert!(parse("@@ -1,2 +1,2 @@\n a\n").is_err());
        assert!(parse("@@ nonsense @@\n").is_err());
        assert!(parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ngarbage\n").is_err());
        assert_eq!(parse("").unwrap(), Vec::new());
    }
}
