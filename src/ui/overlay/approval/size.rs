//! Where the modal goes and how tall it is. The modal is as tall as what it shows (a one-line
//! command gets a small one) and rests on the status bar across the full width, so the rows
//! above it stay for the panes, which then show their latest lines: the conversation that says
//! why the call is made stays in sight. A preview longer than the screen still gets every row
//! but the status bar's, and scrolls.

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

/// The modal's area on `screen` when its content wants `wanted` rows (borders included).
pub(super) fn modal_area(screen: Rect, wanted: u16) -> Rect {
    // The status bar stays visible (it shows the modal's keys), unless the screen is too short
    // to spare it.
    let most = match screen.height.saturating_sub(1) {
        rows if rows >= MIN_HEIGHT => rows,
        _ => screen.height,
    };
    let mut height = wanted.clamp(MIN_HEIGHT.min(most), most);
    if most - height < MIN_ABOVE {
        height = most;
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

    #[test]
    fn a_modal_that_wants_few_rows_gets_them_and_rests_on_the_status_bar() {
        let area = modal_area(SCREEN, 12);
        assert_eq!(area, Rect::new(0, 17, 100, 12));
        assert_eq!(area.bottom(), 29, "the status bar's row stays visible");
    }

    #[test]
    fn a_modal_never_gets_fewer_rows_than_its_minimum() {
        assert_eq!(modal_area(SCREEN, 3).height, MIN_HEIGHT);
    }

    #[test]
    fn a_modal_that_wants_more_than_the_screen_takes_every_row_but_the_status_bar() {
        assert_eq!(modal_area(SCREEN, 400), Rect::new(0, 0, 100, 29));
    }

    #[test]
    fn a_modal_that_would_leave_too_few_rows_above_to_show_a_line_takes_them_too() {
        assert_eq!(modal_area(SCREEN, 26), Rect::new(0, 0, 100, 29));
        assert_eq!(modal_area(SCREEN, 25), Rect::new(0, 4, 100, 25));
    }

    #[test]
    fn on_a_screen_too_short_to_spare_the_status_bar_the_modal_takes_all_of_it() {
        let short = Rect::new(0, 0, 40, 8);
        assert_eq!(modal_area(short, 5), short);
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
