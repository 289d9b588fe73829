//! Drawing: a pure function of `&App` onto a frame. Every pane renders only what is visible.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::app::{App, Focus, Overlay, RunStatus};
use super::conversation::{self, finished_icon};
use super::words::wrap_words;
use crate::protocol::Stream;

pub(crate) mod fit;
mod hints;
mod results;

use fit::truncate;

use crate::ui::overlay::approval;
use crate::visible::visible_line;

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

pub(crate) fn dim() -> Style {
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

/// Draws the whole screen. Returns what the approval modal showed (its request and the size of
/// its preview) when the modal is the top overlay, so the state can record what was on screen
/// without laying the modal out a second time.
pub fn render(app: &App, frame: &mut Frame) -> Option<(String, crate::ui::preview::View)> {
    let areas = layout(frame.area(), app.prompt.lines().len());
    // The approval modal is as tall as what it shows and rests on the status bar; the panes are
    // drawn in the rows above it, so they show their latest lines (why the call is made) instead
    // of lines the modal would cover.
    let mut modal = app.overlays.iter().find_map(|o| match o {
        Overlay::Approval(a) => approval::modal(app, a, frame.area()),
        _ => None,
    });
    let (conversation, results) = match &modal {
        Some(m) => beside_modal(&areas, m.area()),
        None => (Some(areas.conversation), Some(areas.results)),
    };
    if let Some(area) = conversation {
        render_conversation(app, frame, area);
    }
    if let Some(area) = results {
        render_results(app, frame, area);
    }
    render_prompt(app, frame, areas.prompt);
    render_status(app, frame, areas.status);
    let mut approval_shown = None;
    for overlay in &app.overlays {
        // An overlay drawn over the modal hides it: only the top one counts as seen.
        approval_shown = None;
        match overlay {
            Overlay::Approval(a) => {
                approval_shown = modal.take().and_then(|m| a.render(app, m, frame))
            }
            Overlay::Help(o) => o.render(frame),
            Overlay::Grants(o) => o.render(app, frame),
            Overlay::Devices(o) => o.render(app, frame),
            Overlay::Agents(o) => o.render(app, frame),
            Overlay::Inbox(o) => o.render(app, frame),
            Overlay::Undo(o) => o.render(app, frame),
            Overlay::Audit(o) => o.render(app, frame),
            Overlay::ConfirmQuit(o) => o.render(app, frame),
        }
    }
    approval_shown
}

/// The panes' areas above a modal at `modal`: each ends where the modal starts, and one left
/// too short to show a line is not drawn. Stacked on a narrow screen, the conversation takes the
/// rows the results pane cannot use: it is what explains the call.
fn beside_modal(areas: &Areas, modal: Rect) -> (Option<Rect>, Option<Rect>) {
    let conversation = approval::above(areas.conversation, modal);
    let results = approval::above(areas.results, modal);
    let stacked = areas.results.y > areas.conversation.y;
    match (conversation, results) {
        (Some(c), None) if stacked => {
            let grown = Rect {
                height: areas.results.bottom().max(c.bottom()) - c.y,
                ..c
            };
            (approval::above(grown, modal), None)
        }
        other => other,
    }
}

fn render_conversation(app: &App, frame: &mut Frame, area: Rect) {
    // With sub-agents, the title says whose conversation this is.
    let title = match app.viewing_name() {
        Some(name) => format!("conversation · {}", visible_line(&name)),
        None if !app.agents.list.is_empty() => "conversation · main".to_string(),
        None => "conversation".to_string(),
    };
    let probe = pane_block(&title, false);
    let inner = probe.inner(area);
    let window = conversation::window(
        &app.entries,
        app.conversation,
        inner.width as usize,
        inner.height as usize,
    );
    let block = if window.more_below {
        probe.title_bottom(Line::styled(
            " ↓ more below · Shift-End: latest ",
            Style::default().fg(Color::Yellow),
        ))
    } else if !app.agents.list.is_empty() {
        use crate::ui::keys::{self, Action, Place};
        let next = keys::key_for(Place::Anywhere, Action::NextAgent).unwrap_or_default();
        let list = keys::key_for(Place::Anywhere, Action::Agents).unwrap_or_default();
        probe.title_bottom(Line::styled(
            format!(" {next}: next agent · {list}: agents "),
            dim(),
        ))
    } else {
        probe
    };
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(window.lines), inner);
}

/// Elapsed time of a run: whole seconds while it runs (the screen changes once a second, not
/// ten times), tenths once it has finished.
fn elapsed(app: &App, started: Instant, ended: Option<Instant>) -> String {
    match ended {
        Some(end) => format!(
            "{:.1}s",
            end.saturating_duration_since(started).as_secs_f64()
        ),
        None => format!("{}s", app.now.saturating_duration_since(started).as_secs()),
    }
}

fn render_results(app: &App, frame: &mut Frame, area: Rect) {
    let focused = app.focus == Focus::Results && app.overlays.is_empty();
    let mut title = if app.follow {
        "results · following".to_string()
    } else {
        "results".to_string()
    };
    if let Some(agent) = &app.run_filter {
        title.push_str(&format!(" · {} only", visible_line(agent)));
    }
    let block = pane_block(&title, focused);
    let inner = block.inner(area);
    let body = results::body(app, inner.width as usize, inner.height as usize, focused);
    let block = match body.hint {
        Some(hint) => block.title_bottom(Line::styled(format!(" {hint} "), dim())),
        None => block,
    };
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(body.lines), inner);
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
    let status = StatusLine {
        model: visible_line(&app.status.model),
        mode: app.status.mode.to_string(),
        workspace: visible_line(&app.status.workspace),
        grants: app.grants.len(),
        // The batch's count, like the modal's "2 of 5": the questions still to come count too.
        pending: app.waiting_calls(),
        by_agent: by_agent(app),
        elsewhere: app.inbox.len(),
        working: app.turn_running,
        hints: hints::hints(app),
    };
    let line = Line::from(status.spans(area.width as usize));
    frame.render_widget(Paragraph::new(line), area);
}

/// What the status bar says, before it is fitted to a width.
struct StatusLine {
    model: String,
    mode: String,
    workspace: String,
    grants: usize,
    pending: usize,
    /// Requests waiting per agent, once a sub-agent's request is in the queue.
    by_agent: String,
    /// Requests waiting elsewhere on this machine (the inbox).
    elsewhere: usize,
    working: bool,
    hints: Vec<hints::Hint>,
}

/// `main 1, a1 2`: the requests in the queue per agent, when a sub-agent's is among them.
fn by_agent(app: &App) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    let requests = app.overlays.iter().flat_map(|o| match o {
        Overlay::Approval(a) => a.queue.iter().collect::<Vec<_>>(),
        _ => Vec::new(),
    });
    for r in requests {
        let agent = r
            .agent
            .as_ref()
            .map_or(crate::protocol::MAIN_AGENT.to_string(), |a| {
                visible_line(&a.id)
            });
        match counts.iter_mut().find(|(a, _)| *a == agent) {
            Some((_, n)) => *n += 1,
            None => counts.push((agent, 1)),
        }
    }
    if counts.iter().all(|(a, _)| a == crate::protocol::MAIN_AGENT) {
        return String::new();
    }
    counts
        .iter()
        .map(|(a, n)| format!("{a} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl StatusLine {
    /// The parts that matter survive narrowing: labels shorten first ("4 waiting for approval"
    /// becomes "4 waiting"), then key hints are dropped whole, the least important first (the
    /// way to the help stays), and the workspace path gives up its beginning.
    fn spans(&self, width: usize) -> Vec<Span<'static>> {
        let len = |s: &str| crate::ui::preview::wrap::text_width(s);
        let mut model = format!(" {} ", self.model);
        let mut working = if self.working { "· working " } else { "" };
        let kept = hints::kept_width(&self.hints);
        // Ever shorter labels, tried in order until the parts that matter fit with some path.
        let ladder = [
            (true, true, true, true),
            (true, false, true, true),
            (false, false, true, true),
            (false, false, false, true),
            (false, false, false, false),
        ];
        let parts =
            |(mode_label, long_pending, zero_grants, per_agent): (bool, bool, bool, bool)| {
                let mode = if mode_label {
                    format!(" mode {} ", self.mode)
                } else {
                    format!(" {} ", self.mode)
                };
                let grants = if self.grants > 0 || zero_grants {
                    format!("· grants {} ", self.grants)
                } else {
                    String::new()
                };
                // Once sub-agents ask, the count says whose requests wait.
                let per = if per_agent && !self.by_agent.is_empty() {
                    format!("({}) ", self.by_agent)
                } else {
                    String::new()
                };
                let mut pending = match (self.pending, long_pending) {
                    (0, _) => String::new(),
                    (n, true) => format!("· {n} waiting for approval {per}"),
                    (n, false) => format!("· {n} waiting {per}"),
                };
                // Requests in other sessions and parked runs (F4 lists them).
                match (self.elsewhere, long_pending) {
                    (0, _) => {}
                    (n, true) => pending.push_str(&format!("· {n} waiting elsewhere (F4) ")),
                    (n, false) => pending.push_str(&format!("· {n} elsewhere ")),
                }
                (mode, grants, pending)
            };
        let path_least = (len(&self.workspace) + 3).min(12);
        let fits = |(mode, grants, pending): &(String, String, String)| {
            len(&model) + len(mode) + len(grants) + len(pending) + len(working) + kept + path_least
                <= width
        };
        let (mode, grants, pending) =
            fit::longest_fitting(ladder.iter().map(|step| parts(*step)), fits)
                .unwrap_or_else(|| parts(ladder[ladder.len() - 1]));
        let mut fixed = len(&model) + len(&mode) + len(&grants) + len(&pending) + len(working);
        // Still too wide for the way to the help: "working" goes when calls wait (they say a
        // turn runs), then the model's name gives up its end.
        if fixed + kept > width && (self.pending > 0 || self.elsewhere > 0) {
            fixed -= len(working);
            working = "";
        }
        if fixed + kept > width {
            let keep = len(&model).saturating_sub(fixed + kept - width).max(4);
            model = format!("{} ", truncate(model.trim_end(), keep - 1));
            fixed = len(&model) + len(&mode) + len(&grants) + len(&pending) + len(working);
        }
        // The hints the bar has room for once the path has its least (a short path, whole).
        let hint_room = width.saturating_sub(fixed + (len(&self.workspace) + 3).min(16));
        let shown = hints::fit(&self.hints, hint_room);
        let hints_width: usize = shown.iter().map(|h| len(&h.text) + 3).sum();
        let path = format!("· {} ", self.workspace);
        let room = width.saturating_sub(fixed + hints_width);
        let path = if len(&path) <= room {
            path
        } else {
            // Keep the end of the path: its last directories say which workspace this is.
            let keep = room.saturating_sub(4);
            let tail: String = {
                let chars: Vec<char> = self.workspace.chars().collect();
                chars[chars.len().saturating_sub(keep)..].iter().collect()
            };
            if keep == 0 {
                String::new()
            } else {
                format!("· …{tail} ")
            }
        };
        let mut spans = vec![
            Span::styled(model, Style::default().add_modifier(Modifier::REVERSED)),
            Span::raw(mode),
            Span::styled(path, dim()),
        ];
        if !grants.is_empty() {
            spans.push(Span::raw(grants));
        }
        if !pending.is_empty() {
            spans.push(Span::styled(pending, Style::default().fg(Color::Yellow)));
        }
        if !working.is_empty() {
            spans.push(Span::styled(working, Style::default().fg(Color::Blue)));
        }
        for hint in shown {
            let style = if hint.urgent {
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD)
            } else {
                dim()
            };
            spans.push(Span::styled(format!("· {} ", hint.text), style));
        }
        spans
    }
}

pub(crate) fn centered(area: Rect, width_pct: u16, height_pct: u16) -> Rect {
    let w = (area.width * width_pct / 100).max(20).min(area.width);
    let h = (area.height * height_pct / 100).max(8).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::visible::visible;

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

    fn screen(app: &App) -> String {
        let backend = ratatui::backend::TestBackend::new(120, 30);
        let mut terminal = ratatui::Terminal::new(backend).expect("a test backend");
        terminal
            .draw(|f| {
                render(app, f);
            })
            .expect("a test backend draws");
        terminal.backend().to_string()
    }

    #[test]
    fn a_tool_title_with_an_escape_a_tab_and_a_zero_width_space_is_shown_in_both_panes() {
        use crate::protocol::AgentEvent;
        let mut app = App::new(super::super::app::Status::default(), Instant::now());
        app.on_agent_event(AgentEvent::ToolStarted {
            call_id: "c\u{1b}]0;x\u{7}1".into(),
            tool: "write_file".into(),
            title: "notes\u{1b}[31m.txt\tb\u{200b}c".into(),
        });
        let shown = screen(&app);
        let conversation_and_results = shown.matches("notes␛[31m.txt⇥b<U+200B>c").count();
        assert_eq!(conversation_and_results, 2, "{shown}");
        assert_eq!(shown.matches("c␛]0;x␇1").count(), 2, "{shown}");
    }

    #[test]
    fn model_text_and_notices_show_their_control_characters() {
        use crate::protocol::AgentEvent;
        let mut app = App::new(super::super::app::Status::default(), Instant::now());
        app.on_agent_event(AgentEvent::TextDelta {
            text: "done\u{1b}[2Jok\u{202e}".into(),
        });
        app.on_agent_event(AgentEvent::Error {
            message: "bad path a\tb".into(),
        });
        let shown = screen(&app);
        assert!(shown.contains("done␛[2Jok<U+202E>"), "{shown}");
        assert!(shown.contains("! bad path a⇥b"), "{shown}");
    }

    fn status_text(width: usize, pending: usize) -> String {
        let hint = |text: &str, rank| hints::Hint {
            text: text.into(),
            rank,
            urgent: false,
        };
        let status = StatusLine {
            model: "scripted: demo".into(),
            mode: "default".into(),
            workspace: "/tmp/airlock-demo/exec-1796104174000-18445".into(),
            grants: 0,
            pending,
            by_agent: String::new(),
            elsewhere: 0,
            working: true,
            hints: vec![
                hint("y allow once", 1),
                hint("n deny", 1),
                hint("? help", hints::KEPT),
            ],
        };
        let text: String = status
            .spans(width)
            .iter()
            .map(|s| s.content.to_string())
            .collect();
        text.chars().take(width).collect()
    }

    #[test]
    fn a_narrow_status_bar_keeps_the_count_and_shortens_the_path_and_labels_first() {
        let wide = status_text(160, 4);
        assert!(wide.contains("4 waiting for approval"), "{wide}");
        assert!(
            wide.contains("/tmp/airlock-demo/exec-1796104174000-18445"),
            "{wide}"
        );
        // The way to the help is kept; the path gives way first.
        let narrow = status_text(60, 4);
        assert!(
            narrow.contains("· 4 waiting · working · ? help"),
            "{narrow}"
        );
        let mid = status_text(100, 1);
        assert!(
            mid.contains("1 waiting for approval · working · ? help"),
            "{mid}"
        );
        assert!(mid.contains("· …74000-18445 "), "{mid}");
    }

    #[test]
    fn at_every_width_the_status_bar_keeps_whole_hints_and_the_way_to_the_help() {
        for width in 30..=200 {
            let text = status_text(width, 2);
            assert!(
                crate::ui::preview::wrap::text_width(&text) <= width,
                "{width}: {text}"
            );
            if width >= 60 {
                assert!(text.trim_end().ends_with("? help"), "{width}: {text}");
            }
            // A hint is there whole or not at all.
            for hint in ["y allow once", "n deny"] {
                let first = hint.split(' ').next().unwrap_or_default();
                let cut = text.contains(&format!("· {first} ")) && !text.contains(hint);
                assert!(!cut, "{width}: {text}");
            }
        }
    }
}
