//! Wrapping by display width, so that nothing is cut at the modal's edge: a row holds as many
//! terminal cells as the modal is wide (a CJK character takes two), and every row after the first
//! starts with a continuation gutter (`↪`) so a wrapped line never reads as two lines.

use ratatui::buffer::CellWidth;

/// Cells `c` takes on a terminal. Text reaching here has been through `visible`, so it holds no
/// control characters; one that slipped through is counted as one cell (it would be dropped by
/// the terminal buffer, never shifting what follows).
pub fn char_width(c: char) -> usize {
    if c.is_ascii() || c.is_control() {
        return 1;
    }
    let mut buf = [0u8; 4];
    usize::from(c.encode_utf8(&mut buf).cell_width())
}

/// Cells a whole string takes.
pub fn text_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// Splits `text` into rows of at most `width` cells; rows after the first start with `cont`
/// (dropped when the width leaves no room for it). A character wider than a row gets a row of
/// its own; zero-width characters stay with the character before them.
pub fn wrap(text: &str, width: usize, cont: &str) -> Vec<String> {
    let width = width.max(1);
    let cont_width = text_width(cont);
    let cont = if width > cont_width + 1 { cont } else { "" };
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    let mut capacity = width;
    for c in text.chars() {
        let w = char_width(c);
        if used + w > capacity && used > 0 {
            rows.push(std::mem::take(&mut row));
            row.push_str(cont);
            used = 0;
            capacity = width - text_width(cont);
        }
        row.push(c);
        used += w;
    }
    rows.push(row);
    rows
}

/// How many rows `wrap` makes, without building them.
pub fn row_count(text: &str, width: usize, cont: &str) -> usize {
    let width = width.max(1);
    let cont_width = text_width(cont);
    let cont_width = if width > cont_width + 1 {
        cont_width
    } else {
        0
    };
    let mut rows = 1;
    let mut used = 0;
    let mut capacity = width;
    for c in text.chars() {
        let w = char_width(c);
        if used + w > capacity && used > 0 {
            rows += 1;
            used = 0;
            capacity = width - cont_width;
        }
        used += w;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_wraps_whole_with_a_marked_continuation() {
        let rows = wrap("abcdefghij", 4, "↪ ");
        assert_eq!(rows, ["abcd", "↪ ef", "↪ gh", "↪ ij"]);
        assert_eq!(row_count("abcdefghij", 4, "↪ "), 4);
        assert_eq!(rows.concat().replace("↪ ", ""), "abcdefghij");
    }

    #[test]
    fn wide_characters_are_wrapped_by_the_cells_they_take() {
        let rows = wrap("世界世界世", 6, "↪ ");
        assert_eq!(rows, ["世界世", "↪ 界世"]);
        assert!(rows.iter().all(|r| text_width(r) <= 6));
        assert_eq!(row_count("世界世界世", 6, "↪ "), 2);
    }

    #[test]
    fn a_line_that_fits_and_an_empty_line_are_one_row() {
        assert_eq!(wrap("abc", 3, "↪ "), ["abc"]);
        assert_eq!(wrap("", 3, "↪ "), [""]);
        assert_eq!(row_count("", 3, "↪ "), 1);
    }

    #[test]
    fn a_width_too_narrow_for_the_gutter_still_shows_every_character() {
        let rows = wrap("abcd", 2, "↪ ");
        assert_eq!(rows.concat(), "abcd");
        assert_eq!(row_count("abcd", 2, "↪ "), rows.len());
    }
}
