//! The modal's queue rows: the calls of this batch still to decide after the one on screen, one
//! line each (cut with `…`, the rest counted on a marker row), or all on one line when only one
//! row is free. The layout gives these rows only what the preview can spare (see `modal`): the
//! current call's asking parts and reasons always come first.

use ratatui::text::Line;

use crate::ui::render::dim;
use crate::ui::render::fit::truncate;
use crate::visible::visible_line;

/// The calls still to decide after the one on screen (by the id the screen shows, with their
/// titles): the rest of its batch, or, once sub-agents ask too, the rest of the whole queue
/// (each title naming its agent).
#[derive(Debug, Clone, Default)]
pub(crate) struct Waiting {
    pub calls: Vec<(String, String)>,
    pub whole_queue: bool,
}

impl std::ops::Deref for Waiting {
    type Target = [(String, String)];

    fn deref(&self) -> &Self::Target {
        &self.calls
    }
}

/// At most this many rows: a heading, then the calls (the last row a marker when more wait).
pub(super) const MOST_ROWS: usize = 6;

/// The rows the queue would like: none when nothing waits.
pub(super) fn wanted(waiting: &[(String, String)]) -> usize {
    if waiting.is_empty() {
        0
    } else {
        (waiting.len() + 1).min(MOST_ROWS)
    }
}

/// Whether `rows` rows show the queue better than one: two rows would hold only the heading and
/// a marker when more than one call waits.
pub(super) fn useful(rows: usize, waiting: &[(String, String)]) -> bool {
    rows != 2 || waiting.len() == 1
}

/// The queue in `rows` rows of `width` columns.
pub(super) fn lines(waiting: &Waiting, rows: usize, width: usize) -> Vec<Line<'static>> {
    if waiting.is_empty() || rows == 0 {
        return Vec::new();
    }
    let entry =
        |(id, title): &(String, String)| format!("{}  {}", visible_line(id), visible_line(title));
    let heading = if waiting.whole_queue {
        format!("{} more in the queue after this one", waiting.len())
    } else {
        format!(
            "{} more of this batch to decide after this one",
            waiting.len()
        )
    };
    if rows == 1 || !useful(rows, &waiting.calls) {
        let all: Vec<String> = waiting.iter().map(entry).collect();
        let text = format!("{heading}: {}", all.join(" · "));
        return vec![Line::styled(truncate(&text, width), dim())];
    }
    let mut out = vec![Line::styled(truncate(&format!("{heading}:"), width), dim())];
    let room = rows - 1;
    let (shown, rest) = if waiting.len() <= room {
        (waiting.len(), 0)
    } else {
        (room - 1, waiting.len() - (room - 1))
    };
    for call in &waiting[..shown] {
        out.push(Line::styled(
            truncate(&format!("  {}", entry(call)), width),
            dim(),
        ));
    }
    if rest > 0 {
        out.push(Line::styled(
            truncate(&format!("  … and {rest} more"), width),
            dim(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::preview::wrap::text_width;

    fn waiting(n: usize) -> Waiting {
        Waiting {
            calls: (0..n)
                .map(|i| (format!("c{}", i + 2), format!("$ step {}", i + 2)))
                .collect(),
            whole_queue: false,
        }
    }

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn every_waiting_call_gets_its_row_when_they_fit() {
        let rows = text(&lines(&waiting(2), wanted(&waiting(2)), 60));
        assert_eq!(
            rows,
            vec![
                "2 more of this batch to decide after this one:",
                "  c2  $ step 2",
                "  c3  $ step 3",
            ]
        );
    }

    #[test]
    fn calls_past_the_rows_given_are_counted_on_a_marker_row() {
        let rows = text(&lines(&waiting(9), wanted(&waiting(9)), 60));
        assert_eq!(rows.len(), MOST_ROWS);
        assert_eq!(rows[4], "  c5  $ step 5");
        assert_eq!(rows[5], "  … and 5 more");
    }

    #[test]
    fn two_rows_for_many_calls_are_shown_as_one_rather_than_a_heading_and_a_marker() {
        let rows = text(&lines(&waiting(4), 2, 200));
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert!(rows[0].contains("c2  $ step 2 · c3  $ step 3"), "{rows:?}");
        assert!(!useful(2, &waiting(4)));
        assert!(useful(2, &waiting(1)) && useful(3, &waiting(4)) && useful(1, &waiting(4)));
    }

    #[test]
    fn one_row_holds_the_count_and_as_many_titles_as_fit() {
        let rows = text(&lines(&waiting(3), 1, 50));
        assert_eq!(rows.len(), 1);
        assert!(rows[0].starts_with("3 more of this batch"), "{rows:?}");
        assert!(rows[0].ends_with('…'), "{rows:?}");
        assert_eq!(text_width(&rows[0]), 50);
    }

    #[test]
    fn once_sub_agents_ask_the_rows_count_the_whole_queue() {
        let whole = Waiting {
            whole_queue: true,
            ..waiting(2)
        };
        let rows = text(&lines(&whole, 3, 60));
        assert_eq!(rows[0], "2 more in the queue after this one:");
    }

    #[test]
    fn a_title_shows_its_hidden_characters_and_stays_on_one_row() {
        let sneaky = Waiting {
            calls: vec![(
                "c2".to_string(),
                "$ echo ok\u{1b}[2J\u{202e}\u{200b}\tdone".to_string(),
            )],
            whole_queue: false,
        };
        let rows = text(&lines(&sneaky, 2, 80));
        assert_eq!(rows.len(), 2);
        assert!(
            !rows[1]
                .chars()
                .any(|c| c == '\u{1b}' || c == '\u{202e}' || c == '\u{200b}' || c == '\t'),
            "{rows:?}"
        );
    }
}
