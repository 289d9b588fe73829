//! The results pane's body: which runs it shows and how many rows each gets.
//!
//! Every run shown gets its header and a summary: the last lines of its output, under a marker
//! counting the lines above them. The pane's rows are shared out in rounds, one row per run per
//! round: first until every summary has `SHORT_SUMMARY_ROWS`, then to the selected run and the
//! running ones (all of their output), then to the others' summaries (`SUMMARY_ROWS`), then to
//! whatever is still left out. A run's full output is one key
//! away (`Enter` in the results pane, from the key table), and the pane's bottom border says so
//! whenever a summary leaves lines out.

use super::*;
use crate::ui::app::Run;
use crate::ui::keys::{self, Place};

/// Output rows of every run's summary (its marker row included) before the selected and the
/// running runs get the rest of theirs.
const SHORT_SUMMARY_ROWS: usize = 4;

/// Output rows of a summary once the selected and the running runs are shown whole.
const SUMMARY_ROWS: usize = 6;

/// Rows of output any run is sure to get when it is shown at all.
const LEAST_ROWS: usize = 2;

/// What the pane shows, and the hint for its bottom border.
pub(super) struct Body {
    pub lines: Vec<Line<'static>>,
    pub hint: Option<String>,
}

/// The rows a run's output (or its note, when its output was let go; or its change, while it
/// printed nothing) takes below its header.
fn output_rows(app: &App, index: usize, width: usize) -> usize {
    let run = &app.runs[index];
    if run.trimmed {
        trimmed_note(run, width).len()
    } else {
        run.body_len()
    }
}

fn trimmed_note(run: &crate::ui::app::Run, width: usize) -> Vec<String> {
    let path = run
        .log
        .as_ref()
        .map(|p| visible_line(&p.display().to_string()));
    let note = format!(
        "older run: its output is no longer kept in memory; all of it is in {}",
        path.unwrap_or_default()
    );
    wrap_words(&note, width.saturating_sub(2))
}

pub(super) fn body(app: &App, width: usize, height: usize, focused: bool) -> Body {
    if app.runs.is_empty() {
        return Body {
            lines: vec![Line::styled("no tool runs yet", dim())],
            hint: None,
        };
    }
    let expand = keys::key_for(Place::Results, keys::Action::Expand).unwrap_or_default();
    if app.expanded {
        let index = app.selected_run.min(app.runs.len() - 1);
        let lines = run_lines(app, index, height, width, focused);
        return Body {
            lines,
            hint: Some(format!("{expand}: every run")),
        };
    }
    let shown = shown_runs(app, width, height);
    let rows = share_rows(app, &shown, width, height);
    let mut lines: Vec<Line> = Vec::new();
    let mut cut = false;
    for (&(index, _), &rows) in shown.iter().zip(&rows) {
        cut |= rows < 1 + output_rows(app, index, width);
        lines.extend(run_lines(app, index, rows, width, focused));
    }
    let start = lines.len().saturating_sub(height);
    let hint = cut.then(|| {
        if focused {
            format!("{expand}: the selected run in full")
        } else {
            let focus =
                keys::key_for(Place::Anywhere, keys::Action::SwitchFocus).unwrap_or_default();
            format!("{focus}, then {expand}: a run in full")
        }
    });
    Body {
        lines: lines.split_off(start),
        hint,
    }
}

/// The runs the pane shows, oldest first, each with the rows it is sure to get: the latest
/// ones (up to the selected one when not following) for which a header and the first rows of
/// output fit, the last of them (the selected one, or the newest) a short summary; the newer
/// ones too when every older one fits.
fn shown_runs(app: &App, width: usize, height: usize) -> Vec<(usize, usize)> {
    // The runs the filter lets through (every run without one), by their index in `runs`.
    let visible: Vec<usize> = (0..app.runs.len()).filter(|i| app.run_shown(*i)).collect();
    let count = visible.len();
    if count == 0 {
        return Vec::new();
    }
    let least = |at: usize| 1 + output_rows(app, visible[at], width).min(LEAST_ROWS);
    let end = if app.follow {
        count
    } else {
        visible.partition_point(|i| *i <= app.selected_run).max(1)
    };
    // The run the window ends at gets its short summary first; a lone run taller than the pane
    // keeps its header (its rows end at the pane's height).
    let anchor = end - 1;
    let first =
        (1 + output_rows(app, visible[anchor], width).min(SHORT_SUMMARY_ROWS)).min(height.max(1));
    let mut shown = vec![(visible[anchor], first)];
    let mut used = first;
    let mut start = anchor;
    while start > 0 && used + least(start - 1) <= height {
        start -= 1;
        used += least(start);
        shown.insert(0, (visible[start], least(start)));
    }
    let mut end = end;
    while start == 0 && end < count && used + least(end) <= height {
        used += least(end);
        shown.push((visible[end], least(end)));
        end += 1;
    }
    shown
}

/// Whether a run is one whose output matters most now: the selected one, or one still running.
fn favoured(app: &App, index: usize) -> bool {
    index == app.selected_run || app.runs[index].status == RunStatus::Running
}

/// Rows for each of `shown` (header included), starting from the rows each is sure to get and
/// summing to at most `height`.
fn share_rows(app: &App, shown: &[(usize, usize)], width: usize, height: usize) -> Vec<usize> {
    let want: Vec<usize> = shown
        .iter()
        .map(|&(i, _)| 1 + output_rows(app, i, width))
        .collect();
    let mut rows: Vec<usize> = shown.iter().map(|&(_, least)| least).collect();
    let shown: Vec<usize> = shown.iter().map(|&(i, _)| i).collect();
    let mut left = height.saturating_sub(rows.iter().sum());
    // The selected run first, then the running ones, then the rest: newest first in each.
    let running = |k: usize| app.runs[shown[k]].status == RunStatus::Running;
    let selected = |k: usize| shown[k] == app.selected_run;
    let mut order: Vec<usize> = (0..shown.len()).rev().collect();
    order.sort_by_key(|&k| (!selected(k), !running(k)));
    let favoured: Vec<bool> = shown.iter().map(|&i| favoured(app, i)).collect();
    let everyone = vec![true; shown.len()];
    for (which, cap) in [
        (&everyone, 1 + SHORT_SUMMARY_ROWS),
        (&favoured, usize::MAX),
        (&everyone, 1 + SUMMARY_ROWS),
        (&everyone, usize::MAX),
    ] {
        // Rounds of one row each, until none of these runs takes another.
        loop {
            let mut grew = false;
            for &k in order.iter().filter(|&&k| which[k]) {
                if left > 0 && rows[k] < want[k].min(cap) {
                    rows[k] += 1;
                    left -= 1;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
    }
    rows
}

/// A run's header and up to `rows - 1` rows of its output: the latest lines (or those the
/// selected run is scrolled back to), under a marker counting the ones above.
fn run_lines(
    app: &App,
    index: usize,
    rows: usize,
    width: usize,
    focused: bool,
) -> Vec<Line<'static>> {
    let run = &app.runs[index];
    let selected = index == app.selected_run;
    let mut lines = vec![run_header(app, run, selected && focused, selected, width)];
    let room = rows.saturating_sub(1);
    if run.trimmed {
        for l in trimmed_note(run, width).into_iter().take(room) {
            lines.push(Line::styled(format!("  {l}"), dim()));
        }
        return lines;
    }
    // Only the lines shown are read out of the kept output.
    let count = run.body_len();
    let scroll = if app.expanded || selected {
        app.results_scroll as usize
    } else {
        0
    };
    let end = count.saturating_sub(scroll.min(count));
    // A marker hiding two lines to make room for itself is worth it only above two rows.
    let (start, above) = if end <= room || room < 3 {
        (end.saturating_sub(room), 0)
    } else {
        (end - (room - 1), end - (room - 1))
    };
    if above > 0 {
        let word = if above == 1 { "line" } else { "lines" };
        lines.push(Line::styled(
            truncate(&format!("  ⋮ {above} earlier {word}"), width),
            dim(),
        ));
    }
    body_lines(run, start..end, width, &mut lines);
    lines
}

/// A run's first line: its marker, status icon, id and title, what the sandbox refused (or that
/// it ran without one), the sandbox it ran in and its time.
fn run_header(app: &App, run: &Run, marked: bool, selected: bool, width: usize) -> Line<'static> {
    let (icon, style, mut tail) = match run.status {
        RunStatus::Running => ("▶", Style::default().fg(Color::Blue), "running".to_string()),
        RunStatus::Done(status, code) => finished_icon(status, code),
        RunStatus::Interrupted => super::conversation::interrupted_icon(),
    };
    // What the sandbox refused is as much the run's outcome as its exit code; a run without a
    // sandbox says so as loudly.
    let mut warning = false;
    if let Some(note) = &run.refused {
        tail = format!("{tail} · sandbox refused {}", note.refusals);
        warning = true;
    } else if let Some(label) = run.sandbox.as_ref().filter(|l| l.unconfined) {
        tail = format!("{tail} · {}", label.text);
        warning = true;
    }
    if let Some(changes) = run.changes.as_ref().filter(|c| !c.is_empty()) {
        tail = format!("{tail} · {}", changes.words());
    }
    let marker = if marked { "›" } else { " " };
    let when = if run.earlier {
        "earlier".to_string()
    } else {
        elapsed(app, run.started, run.ended)
    };
    // The sandbox it ran in goes with its time, which gives way before the status does (and
    // the sandbox before the title is cut short).
    let with_sandbox = match &run.sandbox {
        Some(label) if !label.unconfined => Some(format!("{}  {when}", visible_line(&label.text))),
        _ => None,
    };
    let times: Vec<&str> = with_sandbox
        .as_deref()
        .into_iter()
        .chain([when.as_str()])
        .collect();
    // The status and time are what a glance is for: the title gives way first.
    let header = fit::fit_header_with(
        &format!(
            "{marker}{icon} {} {}",
            visible_line(&run.short_id),
            match &run.agent {
                Some(agent) => format!("[{}] {}", visible_line(agent), visible_line(&run.title)),
                None => visible_line(&run.title),
            }
        ),
        &times,
        &tail,
        width,
    );
    let header_style = match (selected, warning) {
        (_, true) => Style::default().fg(Color::Red).add_modifier(if selected {
            Modifier::BOLD
        } else {
            Modifier::empty()
        }),
        (true, false) => style.add_modifier(Modifier::BOLD),
        (false, false) => style,
    };
    Line::styled(header, header_style)
}

/// Lines `shown` of a run's body: its output, or, for a file change that printed nothing, the
/// diff the modal showed.
fn body_lines(
    run: &Run,
    shown: std::ops::Range<usize>,
    width: usize,
    lines: &mut Vec<Line<'static>>,
) {
    if let (Some(diff), 0) = (&run.diff, run.output.len()) {
        for text in diff.lines().skip(shown.start).take(shown.len()) {
            let text = crate::visible::visible_output(text);
            lines.push(Line::styled(
                truncate(&format!("  {text}"), width),
                diff_style(&text),
            ));
        }
        return;
    }
    for (text, stream) in shown.filter_map(|i| run.output.line(i)) {
        let style = match stream {
            Some(Stream::Stderr) => Style::default().fg(Color::Red),
            Some(Stream::Stdout) => Style::default(),
            None => dim(),
        };
        // Tool output may hold anything: tabs are laid out, escapes and invisibles shown.
        let text = crate::visible::visible_output(&text);
        // The sandbox's note on what it refused stands out from the output it explains.
        let style = if text.starts_with("[sandbox] ")
            || text.starts_with("  - ") && run.refused.is_some()
        {
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            style
        };
        lines.push(Line::styled(truncate(&format!("  {text}"), width), style));
    }
}

/// A line of a run's changes (hunk headers, added and removed lines: no file headers) as the
/// approval modal colours it.
fn diff_style(line: &str) -> Style {
    if line.starts_with("@@") {
        Style::default().fg(Color::Cyan)
    } else if line.starts_with('+') {
        Style::default().fg(Color::Green)
    } else if line.starts_with('-') {
        Style::default().fg(Color::Red)
    } else {
        Style::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AgentEvent;
    use crate::protocol::ToolStatus;

    /// Runs of `lines` lines each, all finished; the newest selected (following).
    fn runs(lines: &[usize]) -> App {
        let mut app = App::new(crate::ui::app::Status::default(), Instant::now());
        for (n, &count) in lines.iter().enumerate() {
            let call_id = format!("c{n}");
            app.on_agent_event(AgentEvent::ToolStarted {
                call_id: call_id.clone(),
                tool: "bash".into(),
                title: format!("$ job {n}"),
            });
            let text: String = (0..count).map(|i| format!("line {i}\n")).collect();
            app.on_agent_event(AgentEvent::ToolOutput {
                call_id: call_id.clone(),
                stream: Stream::Stdout,
                text,
                skipped: 0,
            });
            app.on_agent_event(AgentEvent::ToolFinished {
                call_id,
                status: ToolStatus::Ok,
                exit_code: Some(0),
                lines: count as u64,
                error: None,
                log: None,
            });
        }
        app
    }

    fn shares(app: &App, height: usize) -> Vec<(usize, usize)> {
        let shown = shown_runs(app, 40, height);
        let rows = share_rows(app, &shown, 40, height);
        shown.iter().map(|&(i, _)| i).zip(rows).collect()
    }

    #[test]
    fn every_run_gets_a_short_summary_before_the_selected_one_gets_the_rest() {
        let app = runs(&[30, 30, 30]);
        // 3 headers + 3 x 4 summary rows = 15; the 5 rows left go to the selected (newest) run.
        assert_eq!(shares(&app, 20), vec![(0, 5), (1, 5), (2, 10)]);
    }

    #[test]
    fn summaries_grow_once_the_selected_run_is_whole() {
        let app = runs(&[30, 30, 3]);
        // The newest shows its 3 lines whole; the others get their summaries (7 rows), then
        // share what is left in rounds.
        assert_eq!(shares(&app, 19), vec![(0, 7), (1, 8), (2, 4)]);
        assert_eq!(shares(&app, 40).iter().map(|s| s.1).sum::<usize>(), 40);
    }

    #[test]
    fn older_runs_are_left_out_before_the_selected_one_loses_its_summary() {
        let mut app = runs(&[30, 30, 30, 30]);
        app.follow = false;
        app.selected_run = 2;
        assert_eq!(shares(&app, 8), vec![(1, 3), (2, 5)]);
    }

    #[test]
    fn a_lone_run_taller_than_the_pane_keeps_its_header_and_says_what_is_above() {
        let app = runs(&[100]);
        let body = body(&app, 40, 4, false);
        let text: Vec<String> = body.lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text.len(), 4, "{text:?}");
        assert!(text[0].contains("c0 $ job 0"), "{text:?}");
        assert!(text[1].contains("⋮ 98 earlier lines"), "{text:?}");
        assert_eq!(text[3], "  line 99");
        assert!(body.hint.is_some_and(|h| h.contains("Enter")));
    }
}
