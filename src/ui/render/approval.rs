//! The approval modal: the request, its reasons, the preview (diff or command), the keys.

use super::*;

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

pub(super) fn render_approval(app: &App, overlay: &ApprovalOverlay, frame: &mut Frame) {
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

    // The preview: scrollable. A diff's lines are styled only where the window shows them (a
    // 50,000-line change costs a walk over its text per frame, not 50,000 styled lines).
    let mut body: Vec<Line> = Vec::new();
    let mut diff: Option<&str> = None;
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
            diff = Some(unified.as_str());
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
    let preview_block = Block::default().borders(Borders::TOP).border_style(dim());
    let preview_inner = preview_block.inner(rows[1]);
    let body_height = preview_inner.height as usize;
    let body_len = body.len() + diff.map_or(0, |d| d.lines().count());
    // When the preview does not fit, its last row is the scroll hint and the content gets the
    // rows above it: every line, the last one included, can be scrolled into view.
    let hinted = body_len > body_height && body_height >= 2;
    let content_rows = if hinted { body_height - 1 } else { body_height };
    let max_scroll = body_len.saturating_sub(content_rows);
    let scroll = (overlay.scroll as usize).min(max_scroll);
    let before = body.len();
    let mut shown: Vec<Line> = body.into_iter().skip(scroll).take(content_rows).collect();
    if let Some(unified) = diff {
        let skip = scroll.saturating_sub(before);
        let take = content_rows - shown.len();
        shown.extend(diff_window(unified, skip, take, width));
    }
    if hinted {
        let more = format!(
            " lines {}-{} of {} (j/k to scroll) ",
            scroll + 1,
            scroll + shown.len(),
            body_len
        );
        shown.push(Line::styled(
            truncate(&more, width),
            dim().add_modifier(Modifier::REVERSED),
        ));
    }
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

/// Lines `skip..skip + take` of a unified diff, styled, with old / new line numbers (which
/// depend on every line before, so the walk starts at the top but styles nothing it skips).
fn diff_window(unified: &str, skip: usize, take: usize, width: usize) -> Vec<Line<'static>> {
    let mut shown = Vec::with_capacity(take);
    let (mut old, mut new) = (0usize, 0usize);
    let mut in_hunks = false;
    for (index, l) in unified.lines().enumerate() {
        if shown.len() == take {
            break;
        }
        let wanted = index >= skip;
        if let Some((from, to)) = hunk_starts(l) {
            in_hunks = true;
            old = from;
            new = to;
            if wanted {
                shown.push(Line::styled(
                    truncate(l, width),
                    Style::default().fg(Color::Cyan),
                ));
            }
            continue;
        }
        // File headers come before the first hunk only: inside a hunk, `--- x` is a removed
        // line that reads `-- x` (a SQL or Lua comment), and it is drawn as a removal.
        if !in_hunks && (l.starts_with("--- ") || l.starts_with("+++ ")) {
            if wanted {
                shown.push(Line::styled(truncate(l, width), dim()));
            }
            continue;
        }
        let (number, style) = match l.as_bytes().first() {
            Some(b'+') => {
                new += 1;
                (new - 1, Style::default().fg(Color::Green))
            }
            Some(b'-') => {
                old += 1;
                (old - 1, Style::default().fg(Color::Red))
            }
            _ => {
                old += 1;
                new += 1;
                (new - 1, Style::default())
            }
        };
        if wanted {
            shown.push(Line::styled(
                truncate(&format!("{number:>5} {}", visible(l)), width),
                style,
            ));
        }
    }
    shown
}

/// The old and new start lines of a hunk header `@@ -a[,b] +c[,d] @@` (a range of one line has
/// no `,len`).
fn hunk_starts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let start = |range: &str| range.split(',').next()?.parse::<usize>().ok();
    Some((start(old)?, start(new)?))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn a_one_line_hunk_range_numbers_lines_from_its_start() {
        // similar writes `@@ -1 +1,3 @@`: a range of one line has no length.
        let crate::approval::approver::Preview::Diff { unified, .. } =
            crate::tools::diff::unified("f", "a\n", "a\nb\nc\n")
        else {
            panic!("a diff")
        };
        let shown = texts(&diff_window(&unified, 0, 20, 80));
        assert!(
            shown.iter().any(|l| l.starts_with("@@ -1 +1,3 @@")),
            "{shown:?}"
        );
        assert!(shown.contains(&"    1  a".to_string()), "{shown:?}");
        assert!(shown.contains(&"    2 +b".to_string()), "{shown:?}");
        assert!(shown.contains(&"    3 +c".to_string()), "{shown:?}");
    }

    #[test]
    fn a_removed_line_that_looks_like_a_file_header_is_drawn_as_a_removal() {
        let unified = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n select 1;\n--- c\n";
        let shown = diff_window(unified, 0, 20, 80);
        let removed = shown.last().expect("lines");
        assert_eq!(removed.to_string(), "    2 --- c");
        assert_eq!(removed.style.fg, Some(Color::Red));
        // The real headers before the first hunk stay headers.
        assert_eq!(shown[0].style, dim());
    }

    #[test]
    fn hunk_headers_are_read_with_and_without_lengths() {
        assert_eq!(hunk_starts("@@ -3,7 +3,8 @@"), Some((3, 3)));
        assert_eq!(hunk_starts("@@ -1 +1,3 @@"), Some((1, 1)));
        assert_eq!(hunk_starts("@@ -0,0 +1 @@ fn main"), Some((0, 1)));
        assert_eq!(hunk_starts("@@@ not a hunk"), None);
        assert_eq!(hunk_starts(" @@ -1 +1 @@"), None);
    }
}
