//! Drawing the approval modal as `layout` placed it: the border with where the request stands
//! in its batch ("approval 2 of 5"), the title (who wants to run what, the risk badge, the
//! digest, the sandbox), the preview's window with its marker row, the queue, the footer and the
//! reason box.
//!
//! The preview wraps every line instead of cutting it and scrolls by rows; its last row is a
//! marker whenever something does not fit, counting the asking, denying and allowed items above
//! and below.

use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{ApprovalOverlay, Modal, foot};
use crate::protocol::ApprovalRequest;
use crate::protocol::Risk;
use crate::ui::app::App;
use crate::ui::preview::{Doc, Slice, View, wrap};
use crate::ui::render::dim;
use crate::visible::visible_line;

pub(super) fn preview_block() -> Block<'static> {
    Block::default().borders(Borders::TOP).border_style(dim())
}

impl ApprovalOverlay {
    /// Draws the modal laid out by `modal`; returns the request it showed and the size its preview
    /// was drawn at.
    pub(crate) fn render(&self, app: &App, m: Modal, frame: &mut Frame) -> Option<(String, View)> {
        let overlay = self;
        let request = overlay.queue.front()?;
        frame.render_widget(Clear, m.area);
        // Where this request stands in its batch; a request from outside it (none known) counts
        // within the modal's own queue.
        let (index, total) = match app.batch.place(&request.call_id) {
            Some(place) => (place.index, place.total),
            None => (overlay.answered + 1, overlay.answered + overlay.queue.len()),
        };
        // Once sub-agents ask, the queue is shared: where this one stands in all of it.
        let shared = overlay.queue.iter().any(|r| r.agent.is_some());
        let title = match (shared, total > 1) {
            (true, _) if overlay.queue.len() > 1 => {
                format!(" approval · 1 of {} waiting ", overlay.queue.len())
            }
            (true, _) => " approval · the only one waiting ".to_string(),
            (false, true) => format!(" approval {index} of {total} "),
            (false, false) => " approval ".to_string(),
        };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .title(title)
            .border_style(Style::default().fg(Color::Yellow));
        // Until the keys are live, the bottom border counts down (a row of its own would make
        // the modal shrink, and the panes above it move, the moment it armed).
        if let Some(arming) = foot::arming(app, overlay, m.area.width as usize) {
            block = block.title_bottom(Line::styled(arming, dim()));
        }
        frame.render_widget(block, m.area);
        frame.render_widget(
            Paragraph::new(title_line(request, app.short_id(&request.call_id)))
                .wrap(Wrap { trim: false }),
            m.title,
        );

        let mut shown = preview_rows(&m.doc, &m.window, m.view);
        if m.hinted {
            shown.push(foot::marker_row(&m.doc, &m.window, m.view.width));
        }
        let block = preview_block();
        let inner = block.inner(m.preview);
        frame.render_widget(block, m.preview);
        frame.render_widget(Paragraph::new(shown), inner);
        frame.render_widget(Paragraph::new(m.queue_lines), m.queue);
        frame.render_widget(Paragraph::new(m.foot_lines), m.foot);
        if let Some(reason) = &overlay.reason {
            let mut reason = reason.clone();
            let title = if overlay.noting {
                " note for the model (allows once) "
            } else {
                " reason for the model "
            };
            reason.set_block(Block::default().borders(Borders::ALL).title(title));
            frame.render_widget(&reason, m.reason);
        } else if let Some(edit) = &overlay.editing {
            let mut edit = edit.clone();
            edit.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(Style::default().fg(Color::Yellow))
                    .title(
                        " edit the command: Enter judges it again, Alt-Enter new line, Esc back ",
                    ),
            );
            frame.render_widget(&edit, m.reason);
        }
        Some((request.call_id.clone(), m.view))
    }
}

/// Who wants to run what (the call by the id the screen shows it with), the risk badge, the
/// digest and the sandbox.
pub(super) fn title_line(request: &ApprovalRequest, shown_id: &str) -> Line<'static> {
    let (label, color) = match request.risk {
        Risk::Safe => (" SAFE ", Color::Green),
        Risk::Mutating => (" MUTATING ", Color::Yellow),
        Risk::Dangerous => (" DANGEROUS ", Color::Red),
    };
    // A sub-agent's request names it and its task first: which agent asks is part of what
    // is decided.
    let (agent, task) = match &request.agent {
        Some(a) => (
            Span::styled(
                format!("{} ", visible_line(&a.id)),
                Style::default().fg(Color::Magenta).bold(),
            ),
            Span::styled(
                format!(
                    "({}) · ",
                    crate::ui::render::fit::truncate(&visible_line(&a.task), 40)
                ),
                Style::default().fg(Color::Magenta),
            ),
        ),
        None => (Span::raw(""), Span::raw("")),
    };
    Line::from(vec![
        agent,
        task,
        Span::raw(format!("{} wants to run ", visible_line(shown_id))),
        Span::raw(visible_line(&request.tool)).bold(),
        Span::raw("  "),
        Span::styled(
            label,
            Style::default().fg(color).add_modifier(Modifier::REVERSED),
        ),
        Span::styled(format!("  {}", request.frozen.short_digest()), dim()),
        match &request.sandbox {
            Some(label) if label.unconfined => Span::styled(
                format!("  {}", label.text),
                Style::default().fg(Color::Red).bold(),
            ),
            Some(label) => Span::raw(format!("  {}", label.text)),
            None => Span::raw(""),
        },
    ])
}

/// The rows a window shows, each logical line wrapped to the width; continuation rows keep the
/// line's colour with their `↪` gutter dimmed.
fn preview_rows(doc: &Doc, window: &[Slice], view: View) -> Vec<Line<'static>> {
    let mut rows = Vec::with_capacity(view.rows + 1);
    for slice in window {
        let Some(line) = doc.line(slice.line) else {
            continue;
        };
        let wrapped = wrap::wrap(&line.text, view.width, line.cont);
        for (i, row) in wrapped.into_iter().enumerate() {
            if !slice.rows.contains(&i) {
                continue;
            }
            match row.strip_prefix(line.cont).filter(|_| i > 0) {
                Some(rest) if !line.cont.is_empty() => rows.push(Line::from(vec![
                    Span::styled(line.cont, dim()),
                    Span::styled(rest.to_string(), line.style),
                ])),
                _ => rows.push(Line::styled(row, line.style)),
            }
        }
    }
    rows
}
