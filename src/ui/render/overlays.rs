//! The smaller overlays: help, session grants, the audit trail, confirm quit.

use super::*;

pub(super) fn render_help(frame: &mut Frame) {
    let area = centered(frame.area(), 80, 85);
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" keys (Esc closes) ");
    let mut lines: Vec<Line> = Vec::new();
    for (title, table) in [
        ("prompt", keys::PROMPT_KEYS),
        ("results pane", keys::RESULTS_KEYS),
        ("approval", keys::APPROVAL_KEYS),
        ("grants", keys::GRANTS_KEYS),
    ] {
        lines.push(Line::raw(title).bold());
        for b in table {
            lines.push(Line::from(vec![
                Span::styled(
                    format!("  {:<28}", b.keys),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::raw(b.does),
            ]));
        }
        lines.push(Line::raw(""));
    }
    frame.render_widget(
        Paragraph::new(Text::from(lines))
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

pub(super) fn render_grants(app: &App, selected: usize, frame: &mut Frame) {
    let area = centered(frame.area(), 80, 60);
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" session grants (d revokes, Esc closes) ");
    let mut lines: Vec<Line> = Vec::new();
    if app.grants.is_empty() {
        lines.push(Line::styled("no grants: every ask asks again", dim()));
    }
    for (i, g) in app.grants.iter().enumerate() {
        let expiry = match g.expires_in_ms {
            Some(ms) => format!("expires in {}s", ms / 1000),
            None => "until the session ends".to_string(),
        };
        let text = format!(
            "{} #{} {} {}  · {} · used {}",
            if i == selected { "›" } else { " " },
            g.id,
            visible_line(&g.tool),
            visible_line(&g.scope),
            expiry,
            g.uses
        );
        let style = if i == selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        lines.push(Line::styled(text, style));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub(super) fn render_audit(app: &App, scroll: u16, frame: &mut Frame) {
    let area = centered(frame.area(), 90, 80);
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" audit: this session's decisions and their source (Esc closes) ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line> = app
        .audit
        .iter()
        .map(|l| {
            let style = if l.contains(" deny by ") {
                Style::default().fg(Color::Red)
            } else if l.contains(" allow by ") {
                Style::default().fg(Color::Green)
            } else {
                dim()
            };
            Line::styled(truncate(&visible_line(l), width), style)
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("nothing decided yet", dim()));
    }
    let height = inner.height as usize;
    let end = lines
        .len()
        .saturating_sub((scroll as usize).min(lines.len().saturating_sub(height.min(lines.len()))));
    let start = end.saturating_sub(height);
    frame.render_widget(
        Paragraph::new(lines.drain(start..end).collect::<Vec<_>>()),
        inner,
    );
}

pub(super) fn render_confirm_quit(app: &App, frame: &mut Frame) {
    let area = centered(frame.area(), 60, 20);
    frame.render_widget(Clear, area);
    let block = Block::default().borders(Borders::ALL).title(" quit? ");
    let text = format!(
        "{} tool(s) running{}. Quitting kills them.\ny / q quit · any other key stays",
        app.running_tools(),
        if app.turn_running {
            " and a turn in progress"
        } else {
            ""
        }
    );
    frame.render_widget(
        Paragraph::new(text).block(block).wrap(Wrap { trim: false }),
        area,
    );
}
