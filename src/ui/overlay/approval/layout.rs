//! Where each piece of the approval modal goes: a title line, the preview document (reasons,
//! parts, the command or the diff; see `ui::preview`), the calls of the batch still to decide
//! after this one, and the footer (options, countdowns, what must still be seen). It is as tall
//! as all of that wants and rests on the status bar, under the conversation that asked for the
//! call (`size`). The layout also tells the loop the preview's size, so the state can record what
//! was on screen.

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders};

use super::draw::{preview_block, title_line};
use super::queue::Waiting;
use super::{ApprovalOverlay, foot, queue, size};
use crate::protocol::ApprovalRequest;
use crate::ui::app::App;
use crate::ui::preview::{Doc, MustSee, Scroll, Slice, View};

/// Where each piece of the modal goes on a screen of a given size.
pub(crate) struct Modal<'a> {
    pub(super) area: Rect,
    pub(super) title: Rect,
    pub(super) preview: Rect,
    pub(super) queue: Rect,
    pub(super) queue_lines: Vec<Line<'static>>,
    pub(super) foot: Rect,
    pub(super) reason: Rect,
    pub(super) foot_lines: Vec<Line<'static>>,
    pub(super) doc: Doc<'a>,
    pub(super) view: View,
    /// The document does not fit: the preview's last row is the marker row.
    pub(super) hinted: bool,
    /// The preview's window: its top and the rows of each line it shows.
    pub(super) top: Scroll,
    pub(super) window: Vec<Slice>,
}

/// The modal's layout. The footer says what must still be seen once this frame has been drawn,
/// which depends on the window, which depends on the footer's height: laid out without that
/// line first, then with it when something stays unseen.
///
/// The queue of calls still to decide gets only rows the preview and the conversation above the
/// modal can spare: as many as still let the whole document fit and leave the conversation a
/// few lines (`size::CONTEXT`); when none can be spared, one row (the count and titles on one
/// line), and only if every must-see item the preview shows at its top without the queue is
/// still shown whole.
pub(crate) fn modal<'a>(
    app: &App,
    overlay: &'a ApprovalOverlay,
    screen: Rect,
) -> Option<Modal<'a>> {
    let request = overlay.queue.front()?;
    // The calls still to decide, named by the ids the screen shows them with.
    let waiting = waiting(app, overlay, request);
    let without = settle(app, overlay, request, overlay.doc()?, screen, &waiting, 0);
    let wanted = queue::wanted(&waiting);
    if wanted == 0 {
        return Some(without);
    }
    let must = shown_at_top(&without);
    let context = (without.area.y - screen.y).min(size::CONTEXT);
    let mut doc = without.doc;
    for rows in (1..=wanted).rev().filter(|r| queue::useful(*r, &waiting)) {
        let m = settle(app, overlay, request, doc, screen, &waiting, rows);
        let leaves_context = m.area.y - screen.y >= context;
        if leaves_context && (!m.hinted || (rows == 1 && must.is_subset(&shown_at_top(&m)))) {
            return Some(m);
        }
        doc = m.doc;
    }
    Some(settle(app, overlay, request, doc, screen, &waiting, 0))
}

/// The calls still to decide after `request`: the rest of its batch, by the ids the screen
/// shows; once a sub-agent's request is in the queue, every other request of the whole queue,
/// each named with its agent.
fn waiting(app: &App, overlay: &ApprovalOverlay, request: &ApprovalRequest) -> Waiting {
    let shared = overlay.queue.iter().any(|r| r.agent.is_some());
    if !shared {
        return Waiting {
            calls: app
                .batch
                .place(&request.call_id)
                .map(|p| p.waiting)
                .unwrap_or_default()
                .into_iter()
                .map(|(id, title)| (app.short_id(&id).to_string(), title))
                .collect(),
            whole_queue: false,
        };
    }
    Waiting {
        calls: overlay
            .queue
            .iter()
            .skip(1)
            .map(|r| {
                let agent = r
                    .agent
                    .as_ref()
                    .map_or(crate::protocol::MAIN_AGENT, |a| a.id.as_str());
                (
                    app.short_id(&r.call_id).to_string(),
                    format!("[{agent}] {}", r.title),
                )
            })
            .collect(),
        whole_queue: true,
    }
}

impl Modal<'_> {
    /// The whole modal, borders included.
    pub(crate) fn area(&self) -> Rect {
        self.area
    }
}

/// Lays the modal out with `queue_rows` rows for the queue, settling the footer's gate line.
fn settle<'a>(
    app: &App,
    overlay: &ApprovalOverlay,
    request: &ApprovalRequest,
    doc: Doc<'a>,
    screen: Rect,
    waiting: &Waiting,
    queue_rows: usize,
) -> Modal<'a> {
    let queue = (waiting, queue_rows);
    let mut m = place(app, overlay, request, doc, screen, None, queue);
    let mut gate = None;
    for _ in 0..2 {
        let still = unseen_after(overlay, &m);
        let next = foot::gate(overlay, &still, m.top.line);
        if next == gate {
            break;
        }
        gate = next;
        m = place(app, overlay, request, m.doc, screen, gate.clone(), queue);
    }
    m
}

/// The must-see items a layout's preview shows whole when scrolled to the top.
fn shown_at_top(m: &Modal) -> std::collections::BTreeSet<MustSee> {
    let mut seen = crate::ui::preview::Seen::default();
    seen.record(&m.doc, &m.doc.window(Scroll::TOP, m.view), m.view.width);
    m.doc
        .must_see()
        .iter()
        .map(|(_, item)| *item)
        .filter(|item| seen.contains(item))
        .collect()
}

/// Must-see items (and their lines) not seen before and not shown whole by this layout.
fn unseen_after(overlay: &ApprovalOverlay, m: &Modal) -> Vec<(usize, MustSee)> {
    let mut seen = overlay.seen.clone();
    seen.record(&m.doc, &m.window, m.view.width);
    m.doc
        .must_see()
        .iter()
        .filter(|(_, item)| !seen.contains(item))
        .copied()
        .collect()
}

/// The rows the conversation fills at its pane's width on `screen`, counted up to what a modal
/// would leave it.
fn conversation_rows(app: &App, screen: Rect) -> usize {
    let pane = crate::ui::render::layout(screen, app.prompt.lines().len()).conversation;
    crate::ui::conversation::rows_up_to(
        &app.entries,
        usize::from(pane.width.saturating_sub(2)),
        usize::from(size::KEEP_ABOVE),
    )
}

fn place<'a>(
    app: &App,
    overlay: &ApprovalOverlay,
    request: &ApprovalRequest,
    doc: Doc<'a>,
    screen: Rect,
    gate: Option<(Vec<String>, Style)>,
    (waiting, queue_rows): (&Waiting, usize),
) -> Modal<'a> {
    // Full width, inside the borders; the preview has only a top border, so it is as wide.
    let width = screen.width.saturating_sub(2) as usize;
    // The title wraps rather than lose the tool's name or the digest on a narrow screen.
    let title_rows = title_line(request, app.short_id(&request.call_id))
        .width()
        .div_ceil(width.max(1))
        .clamp(1, 3) as u16;
    let reason_height: u16 = match (&overlay.reason, &overlay.editing) {
        (Some(_), _) => 3,
        (None, Some(edit)) => (edit.lines().len() as u16 + 2).clamp(3, 10),
        (None, None) => 0,
    };
    let chrome = 2 + title_rows as usize + 1 + reason_height as usize;
    let doc_rows = doc.rows_up_to(width, screen.height as usize);
    // Everything but the preview, and the modal's whole height, with a footer of `lines`.
    let sizes = |lines: &Vec<Line<'static>>| {
        let fixed = chrome + queue_rows + lines.len();
        let wanted = (fixed + doc_rows).min(usize::from(u16::MAX)) as u16;
        (fixed.min(usize::from(u16::MAX)) as u16, wanted)
    };
    let mut foot_lines = foot::lines(app, overlay, request, gate.clone(), (width, false));
    let (mut fixed, mut wanted) = sizes(&foot_lines);
    let keep = size::keep_above(conversation_rows(app, screen));
    if !size::fits_whole(screen, wanted, keep) {
        // The preview will scroll: the options take their shortest labels, so it gets the rows.
        foot_lines = foot::lines(app, overlay, request, gate, (width, true));
        (fixed, wanted) = sizes(&foot_lines);
    }
    let area = size::modal_area(screen, wanted, fixed, keep);
    let inner = Block::default().borders(Borders::ALL).inner(area);
    // The title, the preview's border and at least one row of it stay; the footer gets the rest.
    let foot_height =
        (foot_lines.len() as u16 + reason_height).min(inner.height.saturating_sub(2 + title_rows));
    // The queue never takes the preview's last two rows or the footer's.
    let queue_height =
        (queue_rows as u16).min(inner.height.saturating_sub(2 + title_rows + foot_height));
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(title_rows),
            Constraint::Min(2),
            Constraint::Length(queue_height),
            Constraint::Length(foot_height),
        ])
        .split(inner);
    let foot_rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Min(0), Constraint::Length(reason_height)])
        .split(rows[3]);
    let preview_inner = preview_block().inner(rows[1]);
    let (view, hinted) = doc.view(preview_inner.width as usize, preview_inner.height as usize);
    let top = doc.clamp(overlay.scroll, view);
    let window = doc.window(top, view);
    Modal {
        area,
        title: rows[0],
        preview: rows[1],
        queue: rows[2],
        queue_lines: queue::lines(waiting, queue_height as usize, width),
        foot: foot_rows[0],
        reason: foot_rows[1],
        foot_lines,
        doc,
        view,
        hinted,
        top,
        window,
    }
}
