//! Word wrapping for prose (the conversation, help descriptions, notes): rows break between
//! words, and only a word wider than the whole row is cut. Widths are terminal cells (a CJK
//! character takes two), measured as the approval preview measures them.
//!
//! Text reaching here has been through `visible`, so it holds no tabs or control characters.
//! Spaces inside a row are kept as written (indentation, aligned columns); the spaces at a break
//! are dropped, since a row must not start with the gap that separated it from the previous one.

use super::preview::wrap::{char_width, text_width};

/// Splits `text` into rows of at most `width` cells, each `\n` starting a new row.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    for paragraph in text.split('\n') {
        wrap_paragraph(paragraph, width, &mut rows);
    }
    rows
}

fn wrap_paragraph(paragraph: &str, width: usize, rows: &mut Vec<String>) {
    let mut row = String::new();
    let mut used = 0;
    // Leading spaces are indentation: they stay with the first word.
    let body = paragraph.trim_start_matches(' ');
    let indent = &paragraph[..paragraph.len() - body.len()];
    // Indentation never fills a row on its own (spaces are one byte and one cell each).
    let indent = &indent[..indent.len().min(width - 1)];
    let mut gap = indent;
    for (word, next_gap) in words(body) {
        let gap_width = gap.len();
        let word_width = text_width(word);
        if used > 0 && used + gap_width + word_width > width {
            rows.push(std::mem::take(&mut row));
            used = 0;
        } else {
            row.push_str(gap);
            used += gap_width;
        }
        if used + word_width <= width {
            row.push_str(word);
            used += word_width;
        } else {
            // Wider than a row (or than what indentation left of it): cut by cells.
            for c in word.chars() {
                let w = char_width(c);
                if used + w > width && used > 0 {
                    rows.push(std::mem::take(&mut row));
                    used = 0;
                }
                row.push(c);
                used += w;
            }
        }
        gap = next_gap;
    }
    // Trailing spaces are kept only where they fit.
    if used + gap.len() <= width {
        row.push_str(gap);
    }
    rows.push(row);
}

/// The words of `text` (which starts with a non-space, or is empty), each with the run of
/// spaces after it.
fn words(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let word_end = rest.find(' ').unwrap_or(rest.len());
        let (word, after) = rest.split_at(word_end);
        let gap_end = after.len() - after.trim_start_matches(' ').len();
        let (gap, next) = after.split_at(gap_end);
        rest = next;
        Some((word, gap))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_break_between_words_never_inside_one() {
        let text = "nothing outside the workspace is read";
        let rows = wrap_words(text, 12);
        assert_eq!(rows, ["nothing", "outside the", "workspace is", "read"]);
        assert!(rows.iter().all(|r| text_width(r) <= 12));
    }

    #[test]
    fn only_a_word_wider_than_the_row_is_cut() {
        let rows = wrap_words("see https://example.com/a/very/long/path now", 10);
        assert_eq!(
            rows,
            [
                "see",
                "https://ex",
                "ample.com/",
                "a/very/lon",
                "g/path now"
            ]
        );
    }

    #[test]
    fn wide_characters_count_the_cells_they_take() {
        let rows = wrap_words("世界 世界世 ab", 6);
        assert_eq!(rows, ["世界", "世界世", "ab"]);
        assert!(rows.iter().all(|r| text_width(r) <= 6));
        let cut = wrap_words("世界世界世界世", 6);
        assert_eq!(cut, ["世界世", "界世界", "世"]);
    }

    #[test]
    fn newlines_indentation_and_inner_spaces_are_kept() {
        let rows = wrap_words("def add(a, b):\n    return a  +  b\n\nend", 40);
        assert_eq!(rows, ["def add(a, b):", "    return a  +  b", "", "end"]);
    }

    #[test]
    fn the_spaces_at_a_break_are_dropped() {
        assert_eq!(wrap_words("aaaa    bbbb", 6), ["aaaa", "bbbb"]);
        assert_eq!(wrap_words("aaaa ", 4), ["aaaa"]);
        assert_eq!(wrap_words("", 4), [""]);
        assert_eq!(wrap_words("        deep", 6), ["     d", "eep"]);
    }

    #[test]
    fn nothing_is_lost_but_the_spaces_at_breaks() {
        let text = "The tests fail because add() subtracts; fix: return a + b. \
                    Supercalifragilisticexpialidocious words survive too.";
        for width in 1..40 {
            let rows = wrap_words(text, width);
            assert!(
                rows.iter().all(|r| text_width(r) <= width),
                "{width}: {rows:?}"
            );
            let squeeze = |s: &str| s.replace(' ', "");
            assert_eq!(squeeze(&rows.concat()), squeeze(text), "{width}");
        }
    }
}
