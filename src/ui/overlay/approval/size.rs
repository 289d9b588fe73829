//! Where the modal goes and how tall it is. The modal is as tall as what it shows (a one-line
//! command gets a small one) and rests on the status bar across the full width, so the rows
//! above it stay for the panes, which then show their latest lines: the conversation that says
//! why the call is made stays in sight. A preview longer than the screen scrolls in a modal that
//! still leaves the conversation's latest lines above it (`KEEP_ABOVE`), as long as the preview
//! keeps a usable window (`MIN_PREVIEW`); on a screen too short for both, the preview gets every
//! row but the status bar's.

use ratatui::layout::Rect;

/// The smallest modal: its borders, the title, the preview's border and a few rows, the options.
pub(super) const MIN_HEIGHT: u16 = 8;

/// Rows above the modal that are worth leaving: a pane's two borders and two lines of it (the
/// conversation's last line is the blank one after its latest entry). Fewer would show nothing,
/// so the modal takes them.
pub(super) const MIN_ABOVE: u16 = 4;

/// Rows above the modal the queue of calls still to decide does not take: a pane's borders and
/// three lines of the conversation.
pub(super) const CONTEXT: u16 = 5;

/// Rows above a modal whose preview scrolls that are left to the panes: a pane's borders and
/// five lines, enough for the conversation's last sentences and the call's own line (why the
/// call is made); fewer when the conversation has fewer (see `keep_above`).
pub(super) const KEEP_ABOVE: u16 = 7;

/// The rows to leave above a modal whose preview scrolls, for a conversation that takes
/// `conversation` rows at its pane's width: its borders and its lines, `KEEP_ABOVE` at most.
pub(super) fn keep_above(conversation: usize) -> u16 {
    if conversation == 0 {
        return 0;
    }
    (conversation.min(usize::from(KEEP_ABOVE)) as u16 + 2).clamp(MIN_ABOVE, KEEP_ABOVE)
}

/// Rows of preview (its marker row included) a modal that leaves `KEEP_ABOVE` rows must still
/// have; with fewer, the preview takes the rows instead.
pub(super) const MIN_PREVIEW: u16 = 6;

/// The rows the modal may take at most: all but the status bar's, unless the screen is too
/// short to spare it.
fn most(screen: Rect) -> u16 {
    match screen.height.saturating_sub(1) {
        rows if rows >= MIN_HEIGHT => rows,
        _ => screen.height,
    }
}

/// Whether a modal wanting `wanted` rows is drawn whole with `keep` rows left above it.
pub(super) fn fits_whole(screen: Rect, wanted: u16, keep: u16) -> bool {
    wanted <= most(screen).saturating_sub(keep)
}

/// The modal's area on `screen` when its content wants `wanted` rows (borders included), of
/// which `fixed` are not the preview's, leaving `keep` rows above when the preview scrolls.
pub(super) fn modal_area(screen: Rect, wanted: u16, fixed: u16, keep: u16) -> Rect {
    // The status bar stays visible (it shows the modal's keys), unless the screen is too short
    // to spare it.
    let most = most(screen);
    let mut height = wanted.clamp(MIN_HEIGHT.min(most), most);
    if most - height < MIN_ABOVE {
        height = most;
    }
    // A preview that scrolls anyway leaves the conversation its latest lines, if it keeps a
    // window worth reading (the preview's border is one of the fixed rows).
    let capped = most.saturating_sub(keep);
    if height > capped && capped >= fixed.saturating_add(MIN_PREVIEW).max(MIN_HEIGHT) {
        height = capped;
    }
    Rect {
        x: screen.x,
        y: screen.y + most - height,
        width: screen.width,
        height,
    }
}

/// `pane` cut to end where the modal starts: `None` when too little of it is left to show a line.
pub(crate) fn above(pane: Rect, modal: Rect) -> Option<Rect> {
    let bottom = pane.bottom().min(modal.y);
    let height = bottom.saturating_sub(pane.y);
    (height >= MIN_ABOVE).then_some(Rect { height, ..pane })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Rect = Rect {
        x: 0,
        y: 0,
        width: 100,
        height: 30,
    };

    /// Rows of a modal that are not its preview, in these tests.
    const FIXED: u16 = 10;

    #[test]
    fn a_modal_that_wants_few_rows_gets_them_and_rests_on_the_status_bar() {
        let area = modal_area(SCREEN, 12, FIXED, KEEP_ABOVE);
        assert_eq!(area, Rect::new(0, 17, 100, 12));
        assert_eq!(area.bottom(), 29, "the status bar's row stays visible");
    }

    #[test]
    fn a_modal_never_gets_fewer_rows_than_its_minimum() {
        assert_eq!(modal_area(SCREEN, 3, 3, KEEP_ABOVE).height, MIN_HEIGHT);
    }

    #[test]
    fn a_long_preview_scrolls_under_the_conversations_latest_lines() {
        assert_eq!(
            modal_area(SCREEN, 400, FIXED, KEEP_ABOVE),
            Rect::new(0, KEEP_ABOVE, 100, 29 - KEEP_ABOVE)
        );
        // 80x24: the demo's first modal leaves the conversation five lines.
        let demo = Rect::new(0, 0, 80, 24);
        assert_eq!(
            modal_area(demo, 23, FIXED, KEEP_ABOVE),
            Rect::new(0, 7, 80, 16)
        );
    }

    #[test]
    fn a_short_conversation_keeps_only_the_rows_it_fills_and_an_empty_one_none() {
        assert_eq!(keep_above(0), 0);
        assert_eq!(keep_above(1), MIN_ABOVE);
        assert_eq!(keep_above(3), 5);
        assert_eq!(keep_above(40), KEEP_ABOVE);
        assert_eq!(
            modal_area(SCREEN, 400, FIXED, keep_above(0)),
            Rect::new(0, 0, 100, 29)
        );
    }

    #[test]
    fn on_a_screen_too_short_for_both_the_preview_takes_every_row_but_the_status_bar() {
        let narrow = Rect::new(0, 0, 60, 20);
        assert_eq!(
            modal_area(narrow, 90, FIXED, KEEP_ABOVE),
            Rect::new(0, 0, 60, 19)
        );
    }

    #[test]
    fn a_modal_that_fits_whole_but_would_leave_too_few_rows_above_takes_them_too() {
        assert_eq!(
            modal_area(SCREEN, 26, 26, KEEP_ABOVE),
            Rect::new(0, 0, 100, 29)
        );
        assert_eq!(
            modal_area(SCREEN, 25, 25, KEEP_ABOVE),
            Rect::new(0, 4, 100, 25)
        );
    }

    #[test]
    fn on_a_screen_too_short_to_spare_the_status_bar_the_modal_takes_all_of_it() {
        let short = Rect::new(0, 0, 40, 8);
        assert_eq!(modal_area(short, 5, 5, KEEP_ABOVE), short);
    }

    #[test]
    fn a_pane_above_the_modal_ends_where_it_starts_or_is_left_out() {
        let modal = Rect::new(0, 17, 100, 12);
        let pane = Rect::new(0, 0, 50, 26);
        assert_eq!(above(pane, modal), Some(Rect::new(0, 0, 50, 17)));
        let lower = Rect::new(0, 14, 60, 8);
        assert_eq!(above(lower, modal), None);
        let short = Rect::new(0, 0, 50, 10);
        assert_eq!(above(short, modal), Some(short));
    }
}
