//! Drawing: a pure function of `&App` onto a frame. Every pane renders only what is visible.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::app::{App, ApprovalOverlay, Entry, Focus, Overlay, RunStatus, ToolLine};
use super::keys::{self, APPROVAL_OPTIONS, ApprovalChoice, Binding};
use crate::approval::approver::Preview;
use crate::approval::risk::Risk;
use crate::approval::verdict::{PartKind, Ruling};
use crate::tools::{Stream, ToolStatus};

pub struct Areas {
    pub conversation: Rect,
    pub results: Rect,
    pub prompt: Rect,
    pub status: Rect,
}

pub fn layout(area: Rect, prompt_lines: usize) -> Areas {
    let prompt_height = (prompt_lines.clamp(1, 6) + 2) as u16;
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Min(3),
            Constraint::Length(prompt_height),
            Constraint::Length(1),
        ])
        .split(area);
    let narrow = area.width < 80;
    let panes = Layout::default()
        .direction(if narrow {
            Direction::Vertical
        } else {
            Direction::Horizontal
        })
        .constraints([Constraint::Percentage(50), Constraint::Percentage(50)])
        .split(rows[0]);
    Areas {
        conversation: panes[0],
        results: panes[1],
        prompt: rows[1],
        status: rows[2],
    }
}

fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

fn pane_block(title: &str, focused: bool) -> Block<'static> {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {title} "));
    if focused {
        block.border_style(Style::default().fg(Color::Blue))
    } else {
        block.border_style(dim())
    }
}

/// Wraps text to a width, by characters (long words are cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for raw in text.split('\n') {
        let chars: Vec<char> = raw.chars().collect();
        if chars.is_empty() {
            out.push(String::new());
            continue;
        }
        for chunk in chars.chunks(width) {
            out.push(chunk.iter().collect());
        }
    }
    out
}

pub fn render(app: &App, frame: &mut Frame) {
    let areas = layout(frame.area(), app.prompt.lines().len());
    render_conversation(app, frame, areas.conversation);
    render_results(app, frame, areas.results);
    render_prompt(app, frame, areas.prompt);
    render_status(app, frame, areas.status);
    for overlay in &app.overlays {
        match overlay {
            Overlay::Approval(a) => render_approval(app, a, frame),
            Overlay::Help => render_help(frame),
            Overlay::Grants { selected } => render_grants(app, *selected, frame),
            Overlay::Audit { scroll } => render_audit(app, *scroll, frame),
            Overlay::ConfirmQuit => render_confirm_quit(app, frame),
        }
    }
}

fn render_conversation(app: &App, frame: &mut Frame, area: Rect) {
    let block = pane_block("conversation", false);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    for entry in &app.entries {
        match entry {
            Entry::User(text) => {
                for (i, l) in wrap(text, width.saturating_sub(2)).into_iter().enumerate() {
                    let lead = if i == 0 { "> " } else { "  " };
                    lines.push(Line::from(vec![
                        Span::raw(lead).bold(),
                        Span::raw(l).bold(),
                    ]));
                }
            }
            Entry::Assistant(text) => {
                for l in wrap(text, width) {
                    lines.push(Line::raw(l));
                }
            }
            Entry::Tool {
                call_id,
                title,
                state,
            } => {
                let (icon, style, tail) = match state {
                    ToolLine::Asking => (
                        "?",
                        Style::default().fg(Color::Yellow),
                        "waiting for approval".to_string(),
                    ),
                    ToolLine::Denied(message) => {
                        ("✗", Style::default().fg(Color::Red), message.clone())
                    }
                    ToolLine::Running => {
                        ("▶", Style::default().fg(Color::Blue), "running".to_string())
                    }
                    ToolLine::Finished(status, code) => finished_icon(*status, *code),
                };
                let text = format!("{icon} {call_id} {title} — {tail}");
                for (i, l) in wrap(&text, width).into_iter().enumerate() {
                    let style = if i == 0 {
                        style
                    } else {
                        style.add_modifier(Modifier::DIM)
                    };
                    lines.push(Line::styled(l, style));
                }
            }
            Entry::Notice(text) => {
                for l in wrap(&format!("! {text}"), width) {
                    lines.push(Line::styled(l, dim().add_modifier(Modifier::ITALIC)));
                }
            }
        }
        lines.push(Line::raw(""));
    }
    let height = inner.height as usize;
    let scroll = app.conversation_scroll as usize;
    let end = lines
        .len()
        .saturating_sub(scroll.min(lines.len().saturating_sub(height.min(lines.len()))));
    let start = end.saturating_sub(height);
    let visible: Vec<Line> = lines.drain(start..end).collect();
    frame.render_widget(Paragraph::new(visible), inner);
}

fn finished_icon(status: ToolStatus, code: Option<i32>) -> (&'static str, Style, String) {
    let code = code
        .map(|c| format!("exit {c}"))
        .unwrap_or_else(|| "done".into());
    match status {
        ToolStatus::Ok => ("✓", Style::default().fg(Color::Green), code),
        ToolStatus::Failed => ("✗", Style::default().fg(Color::Red), code),
        ToolStatus::Cancelled => ("⊘", Style::default().fg(Color::Yellow), "cancelled".into()),
        ToolStatus::TimedOut => ("⏱", Style::default().fg(Color::Yellow), "timed out".into()),
    }
}

fn elapsed(app: &App, started: Instant, ended: Option<Instant>) -> String {
    let end = ended.unwrap_or(app.now);
    let d = end.saturating_duration_since(started);
    format!("{:.1}s", d.as_secs_f64())
}

fn render_results(app: &App, frame: &mut Frame, area: Rect) {
    let focused = app.focus == Focus::Results && app.overlays.is_empty();
    let title = if app.follow {
        "results · following"
    } else {
        "results"
    };
    let block = pane_block(title, focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.runs.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("no tool runs yet", dim())),
            inner,
        );
        return;
    }
    let height = inner.height as usize;
    let width = inner.width as usize;
    let shown: Vec<usize> = if app.expanded {
        vec![app.selected_run.min(app.runs.len() - 1)]
    } else {
        // As many of the latest runs as fit with at least two lines each.
        let fit = (height / 3).max(1);
        let last = app.runs.len();
        let end = if app.follow {
            last
        } else {
            (app.selected_run + 1).max(fit.min(last)).min(last)
        };
        (end.saturating_sub(fit)..end).collect()
    };
    let per_run = (height / shown.len().max(1)).max(2);
    let mut lines: Vec<Line> = Vec::new();
    for index in shown {
        let run = &app.runs[index];
        let (icon, style, tail) = match run.status {
            RunStatus::Running => ("▶", Style::default().fg(Color::Blue), "running".to_string()),
            RunStatus::Done(status, code) => finished_icon(status, code),
        };
        let selected = index == app.selected_run;
        let marker = if selected && focused { "›" } else { " " };
        let header = format!(
            "{marker}{icon} {} {}  {}  {}",
            run.call_id,
            run.title,
            elapsed(app, run.started, run.ended),
            tail
        );
        let header_style = if selected {
            style.add_modifier(Modifier::BOLD)
        } else {
            style
        };
        lines.push(Line::styled(truncate(&header, width), header_style));
        let output = run.output.lines();
        let room = per_run.saturating_sub(1);
        let scroll = if app.expanded || selected {
            app.results_scroll as usize
        } else {
            0
        };
        let end = output.len().saturating_sub(scroll.min(output.len()));
        let start = end.saturating_sub(room);
        for (text, stream) in &output[start..end] {
            let style = match stream {
                Some(Stream::Stderr) => Style::default().fg(Color::Red),
                Some(Stream::Stdout) => Style::default(),
                None => dim(),
            };
            lines.push(Line::styled(truncate(&format!("  {text}"), width), style));
        }
    }
    let start = lines.len().saturating_sub(height);
    frame.render_widget(Paragraph::new(lines.split_off(start)), inner);
}

/// Cuts a line to a width, visibly.
fn truncate(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn render_prompt(app: &App, frame: &mut Frame, area: Rect) {
    let focused = app.focus == Focus::Prompt && app.overlays.is_empty();
    let mut prompt = app.prompt.clone();
    prompt.set_block(pane_block("prompt", focused));
    if !focused {
        prompt.set_cursor_style(Style::default());
    }
    frame.render_widget(&prompt, area);
}

fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![
        Span::styled(
            format!(" {} ", app.status.model),
            Style::default().add_modifier(Modifier::REVERSED),
        ),
        Span::raw(format!(" mode {} ", app.status.mode)),
        Span::styled(format!("· {} ", app.status.workspace), dim()),
        Span::raw(format!("· grants {} ", app.grants.len())),
    ];
    let pending = app.pending_approvals();
    if pending > 0 {
        spans.push(Span::styled(
            format!("· {pending} waiting for approval "),
            Style::default().fg(Color::Yellow),
        ));
    }
    if app.turn_running {
        spans.push(Span::styled("· working ", Style::default().fg(Color::Blue)));
    }
    let hints: &[Binding] = match (app.overlays.last(), app.focus) {
        (Some(Overlay::Approval(_)), _) => keys::APPROVAL_KEYS,
        (Some(Overlay::Grants { .. }), _) => keys::GRANTS_KEYS,
        (Some(_), _) => &[],
        (None, Focus::Prompt) => keys::PROMPT_KEYS,
        (None, Focus::Results) => keys::RESULTS_KEYS,
    };
    spans.push(Span::styled(format!("· {}", keys::hint(hints, 4)), dim()));
    let line = Line::from(spans);
    frame.render_widget(Paragraph::new(line), area);
}

fn centered(area: Rect, width_pct: u16, height_pct: u16) -> Rect {
    let w = (area.width * width_pct / 100).max(20).min(area.width);
    let h = (area.height * height_pct / 100).max(8).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Shows what a terminal would hide: tabs, control characters, invisible and bidi Unicode.
pub fn visible(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push('⇥'),
            c if (c as u32) < 0x20 => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('�')),
            '\u{7f}' => out.push('␡'),
            '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
            | '\u{00ad}' => {
                out.push_str(&format!("<U+{:04X}>", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

fn ruling_style(r: Ruling) -> Style {
    match r {
        Ruling::Deny => Style::default().fg(Color::Red),
        Ruling::Ask => Style::default().fg(Color::Yellow),
        Ruling::Allow => dim(),
    }
}

/// A grant scope as a person reads it: paths inside the workspace shown relative to it.
fn scope_text(app: &App, scope: &crate::approval::grants::GrantScope) -> String {
    let text = scope.describe();
    let prefix = format!("{}/", app.status.workspace.trim_end_matches('/'));
    let shown = text.replace(&prefix, "");
    if shown.ends_with("under /")
        || shown.ends_with("under ")
        || shown.trim_end().ends_with("under")
    {
        return "anything in the workspace".to_string();
    }
    shown.replace("anything under ./", "anything in the workspace")
}

fn render_approval(app: &App, overlay: &ApprovalOverlay, frame: &mut Frame) {
    let Some(request) = overlay.queue.front() else {
        return;
    };
    let area = centered(frame.area(), 92, 90);
    frame.render_widget(Clear, area);
    let total = overlay.answered + overlay.queue.len();
    let position = overlay.answered + 1;
    let title = if total > 1 {
        format!(" approval {position} of {total} ")
    } else {
        " approval ".to_string()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(Style::default().fg(Color::Yellow));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;

    let mut head: Vec<Line> = Vec::new();
    let badge = match request.risk {
        Risk::Safe => Span::styled(
            " SAFE ",
            Style::default()
                .fg(Color::Green)
                .add_modifier(Modifier::REVERSED),
        ),
        Risk::Mutating => Span::styled(
            " MUTATING ",
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::REVERSED),
        ),
        Risk::Dangerous => Span::styled(
            " DANGEROUS ",
            Style::default()
                .fg(Color::Red)
                .add_modifier(Modifier::REVERSED),
        ),
    };
    head.push(Line::from(vec![
        Span::raw(format!("{} wants to run ", request.call_id)),
        Span::raw(request.tool.clone()).bold(),
        Span::raw("  "),
        badge,
        Span::styled(format!("  {}", request.frozen.short_digest()), dim()),
    ]));
    for reason in &request.verdict.reasons {
        for (i, l) in wrap(&reason.line(), width.saturating_sub(2))
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { "• " } else { "  " };
            head.push(Line::styled(
                format!("{lead}{l}"),
                ruling_style(reason.ruling),
            ));
        }
    }

    // The preview: scrollable.
    let mut body: Vec<Line> = Vec::new();
    match &request.preview {
        Some(Preview::Command { command, cwd }) => {
            body.push(Line::styled(format!("command, in {cwd}:"), dim()));
            for l in visible(command).split('\n') {
                body.push(Line::raw(format!("  {l}")).bold());
            }
            let commands: Vec<_> = request
                .verdict
                .parts
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    matches!(
                        p.kind,
                        PartKind::Command | PartKind::Redirect | PartKind::Script
                    )
                })
                .collect();
            if commands.len() > 1 || commands.iter().any(|(_, p)| p.ruling != Ruling::Allow) {
                body.push(Line::styled("each part:", dim()));
                for (index, part) in commands {
                    let icon = match part.ruling {
                        Ruling::Allow => "✓",
                        Ruling::Ask => "?",
                        Ruling::Deny => "✗",
                    };
                    let why: Vec<&str> = request
                        .verdict
                        .reasons
                        .iter()
                        .filter(|r| r.part == Some(index) && r.ruling == part.ruling)
                        .map(|r| r.message.as_str())
                        .collect();
                    let text = format!("  {icon} {} — {}", visible(&part.label), why.join("; "));
                    for l in wrap(&text, width) {
                        body.push(Line::styled(l, ruling_style(part.ruling)));
                    }
                }
            }
        }
        Some(Preview::Diff {
            unified,
            added,
            removed,
            approximate,
            path,
        }) => {
            let note = if *approximate {
                " (approximate: the diff hit its deadline or was cut)"
            } else {
                ""
            };
            body.push(Line::styled(
                format!("{path}: +{added} -{removed}{note}"),
                dim(),
            ));
            let (mut old, mut new) = (0usize, 0usize);
            for l in unified.lines() {
                if let Some(rest) = l.strip_prefix("@@ ") {
                    // @@ -a,b +c,d @@
                    let nums: Vec<usize> = rest
                        .split(|c: char| !c.is_ascii_digit())
                        .filter(|s| !s.is_empty())
                        .filter_map(|s| s.parse().ok())
                        .collect();
                    old = nums.first().copied().unwrap_or(1);
                    new = nums.get(2).copied().unwrap_or(1);
                    body.push(Line::styled(
                        truncate(l, width),
                        Style::default().fg(Color::Cyan),
                    ));
                    continue;
                }
                if l.starts_with("--- ") || l.starts_with("+++ ") {
                    body.push(Line::styled(truncate(l, width), dim()));
                    continue;
                }
                let (number, style) = match l.chars().next() {
                    Some('+') => {
                        new += 1;
                        (
                            format!("{:>5} ", new - 1),
                            Style::default().fg(Color::Green),
                        )
                    }
                    Some('-') => {
                        old += 1;
                        (format!("{:>5} ", old - 1), Style::default().fg(Color::Red))
                    }
                    _ => {
                        old += 1;
                        new += 1;
                        (format!("{:>5} ", new - 1), Style::default())
                    }
                };
                body.push(Line::styled(
                    truncate(&format!("{number}{}", visible(l)), width),
                    style,
                ));
            }
        }
        Some(Preview::Error { message }) => {
            body.push(Line::styled(
                format!("this change cannot be applied: {message}"),
                Style::default().fg(Color::Red),
            ));
        }
        None => {
            body.push(Line::styled("arguments:", dim()));
            for l in wrap(&visible(&request.frozen.canonical), width) {
                body.push(Line::raw(l));
            }
        }
    }

    // Options, from the one table.
    let mut options: Vec<Span> = Vec::new();
    for option in APPROVAL_OPTIONS {
        let label = match option.choice {
            ApprovalChoice::AllowSession => match &request.session_scopes {
                Some(scopes) => {
                    let what: Vec<String> = scopes.iter().map(|s| scope_text(app, s)).collect();
                    format!(
                        "allow {} in this workspace for this session",
                        what.join(" and ")
                    )
                }
                None => continue,
            },
            _ => option.label.to_string(),
        };
        options.push(Span::styled(
            format!("{}", option.key),
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ));
        options.push(Span::raw(format!(" {label}   ")));
    }
    if let (Some(dir), Some(_)) = (&request.directory_scope, &request.session_scopes) {
        options.push(Span::styled(
            "d",
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ));
        options.push(Span::raw(format!(
            " allow {} for the session   ",
            scope_text(app, dir)
        )));
    }
    let mut foot: Vec<Line> = Vec::new();
    for l in wrap_spans(options, width) {
        foot.push(l);
    }
    // Lines longer than the modal wrap when drawn; count the rows they take.
    let rows_of = |line: &Line| -> u16 {
        let chars: usize = line.spans.iter().map(|s| s.content.chars().count()).sum();
        chars.div_ceil(width.max(1)).max(1) as u16
    };
    if let Some(code) = &request.code {
        foot.push(Line::styled(
            format!("or from another terminal: airlock approve {code}  (or airlock deny {code}); the first answer wins"),
            dim(),
        ));
    }
    if let Some(deadline) = request.deadline_ms {
        let left = deadline.saturating_sub(app.wall_ms) / 1000;
        foot.push(Line::styled(
            format!("times out in {left}s, then it is denied as timed out"),
            Style::default().fg(Color::Yellow),
        ));
    }
    if let Some(why) = &request.no_session_grant {
        foot.push(Line::styled(format!("no session grant: {why}"), dim()));
    }
    if app.now < overlay.armed_at {
        let left = overlay.armed_at.saturating_duration_since(app.now);
        foot.push(Line::styled(
            format!(
                "keys are live in {:.1}s (so a key meant for the prompt cannot answer this)",
                left.as_secs_f64()
            ),
            dim(),
        ));
    }
    if overlay.reason.is_some() {
        foot.push(Line::raw(""));
    }

    let reason_height = if overlay.reason.is_some() { 3 } else { 0 };
    let foot_rows_needed: u16 = foot.iter().map(rows_of).sum();
    let foot_height = foot_rows_needed + reason_height;
    let head_height = (head.len() as u16).min(inner.height.saturating_sub(foot_height + 3));
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(head_height),
            Constraint::Min(2),
            Constraint::Length(foot_height),
        ])
        .split(inner);
    frame.render_widget(Paragraph::new(head), rows[0]);
    let body_height = rows[1].height as usize;
    let max_scroll = body.len().saturating_sub(body_height);
    let scroll = (overlay.scroll as usize).min(max_scroll);
    let mut shown: Vec<Line> = body.into_iter().skip(scroll).take(body_height).collect();
    if max_scroll > 0 {
        let more = format!(
            " lines {}-{} of {} (j/k to scroll) ",
            scroll + 1,
            scroll + shown.len(),
            max_scroll + body_height
        );
        if let Some(last) = shown.last_mut() {
            *last = Line::styled(
                truncate(&more, width),
                dim().add_modifier(Modifier::REVERSED),
            );
        }
    }
    let preview_block = Block::default().borders(Borders::TOP).border_style(dim());
    let preview_inner = preview_block.inner(rows[1]);
    frame.render_widget(preview_block, rows[1]);
    frame.render_widget(Paragraph::new(shown), preview_inner);
    let foot_rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(foot.len() as u16),
            Constraint::Length(reason_height),
        ])
        .split(rows[2]);
    frame.render_widget(Paragraph::new(foot), foot_rows[0]);
    if let Some(reason) = &overlay.reason {
        let mut reason = reason.clone();
        reason.set_block(
            Block::default()
                .borders(Borders::ALL)
                .title(" reason for the model "),
        );
        frame.render_widget(&reason, foot_rows[1]);
    }
}

/// Lays out option spans in pairs (key, label), moving a whole pair to the next line when it
/// does not fit, so a key is never separated from what it does.
fn wrap_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut current: Vec<Span> = Vec::new();
    let mut used = 0;
    let mut spans = spans.into_iter();
    while let Some(key) = spans.next() {
        let label = spans.next();
        let len =
            key.content.chars().count() + label.as_ref().map_or(0, |l| l.content.chars().count());
        if used + len > width && !current.is_empty() {
            lines.push(Line::from(std::mem::take(&mut current)));
            used = 0;
        }
        used += len;
        current.push(key);
        current.extend(label);
    }
    if !current.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}

fn render_help(frame: &mut Frame) {
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

fn render_grants(app: &App, selected: usize, frame: &mut Frame) {
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
            g.tool,
            g.scope,
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

fn render_audit(app: &App, scroll: u16, frame: &mut Frame) {
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
            Line::styled(truncate(l, width), style)
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

fn render_confirm_quit(app: &App, frame: &mut Frame) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_in_a_command_are_made_visible() {
        assert_eq!(visible("a\tb"), "a⇥b");
        assert_eq!(visible("rm\u{1b}[2K x"), "rm␛[2K x");
        assert_eq!(
            visible("ls\u{200b} \u{202e}fdp.exe"),
            "ls<U+200B> <U+202E>fdp.exe"
        );
        assert_eq!(visible("a\u{7f}"), "a␡");
        assert_eq!(visible("one\ntwo"), "one\ntwo");
    }

    #[test]
    fn a_long_line_is_cut_visibly() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
