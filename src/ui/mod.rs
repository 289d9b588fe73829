//! The cockpit: a full-screen terminal UI over the agent. One task, one `select!` over terminal
//! events, agent events and a tick; bursts of agent events are drained, then one frame is drawn,
//! and only when something changed.
//!
//! The UI talks to the agent only through `protocol` (`Op` out, `AgentEvent` in).

pub mod app;
pub mod keys;
pub mod render;
#[cfg(test)]
mod snapshots;

use std::time::{Duration, Instant};

use anyhow::Result;
use crossterm::event::{Event, EventStream, KeyEventKind};
use futures_util::StreamExt;

use crate::agent::AgentHandle;
use crate::protocol::{AgentEvent, Op};
use app::{App, Status};

/// How often the screen may refresh while something is moving (elapsed times, arm countdown).
const TICK: Duration = Duration::from_millis(100);

/// Restores the terminal however the program ends: normally, on error, on panic (ratatui's hook),
/// and on SIGTERM / SIGHUP.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> Result<(ratatui::DefaultTerminal, TerminalGuard)> {
        let terminal = ratatui::try_init()?;
        crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture)?;
        Ok((terminal, TerminalGuard))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        ratatui::restore();
    }
}

pub async fn run(
    mut handle: AgentHandle,
    status: Status,
    first_prompt: Option<String>,
    notices: Vec<String>,
) -> Result<()> {
    let (mut terminal, guard) = TerminalGuard::enter()?;
    let mut app = App::new(status, Instant::now());
    for notice in notices {
        app.entries.push(app::Entry::Notice(notice));
    }
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut sighup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    if let Some(prompt) = first_prompt {
        let _ = handle.ops.send(Op::Submit { prompt });
    }
    let _ = handle.ops.send(Op::ListGrants);
    let mut dirty = true;
    let mut shutdown_sent = false;
    loop {
        if dirty {
            app.now = Instant::now();
            app.wall_ms = crate::approval::gate::now_ms();
            let size = terminal.size()?;
            let areas = render::layout(
                ratatui::layout::Rect::new(0, 0, size.width, size.height),
                app.prompt.lines().len(),
            );
            app.conversation_area = (
                areas.conversation.x,
                areas.conversation.y,
                areas.conversation.width,
                areas.conversation.height,
            );
            app.results_area = (
                areas.results.x,
                areas.results.y,
                areas.results.width,
                areas.results.height,
            );
            terminal.draw(|frame| render::render(&app, frame))?;
            dirty = false;
        }
        if app.should_quit && !shutdown_sent {
            let _ = handle.ops.send(Op::Shutdown);
            shutdown_sent = true;
        }
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(Event::Key(key))) if key.kind != KeyEventKind::Release => {
                    for op in app.on_key(key, Instant::now()) {
                        let _ = handle.ops.send(op);
                    }
                    dirty = true;
                }
                Some(Ok(Event::Mouse(mouse))) => {
                    app.on_mouse(mouse);
                    dirty = true;
                }
                Some(Ok(Event::Resize(_, _))) => dirty = true,
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
            event = handle.events.recv() => {
                let Some(event) = event else { break };
                let done = matches!(event, AgentEvent::ShutdownComplete);
                app.on_agent_event(event);
                // Drain the burst, then draw once.
                while let Ok(event) = handle.events.try_recv() {
                    app.on_agent_event(event);
                }
                dirty = true;
                if done || (shutdown_sent && app.should_quit && handle.events.is_closed()) {
                    break;
                }
            }
            _ = tick.tick() => {
                // Redraw only while something visibly changes with time.
                if app.running_tools() > 0 || app.pending_approvals() > 0 {
                    dirty = true;
                }
            }
            _ = sigterm.recv() => break,
            _ = sighup.recv() => break,
        }
        if app.should_quit && shutdown_sent && handle.task.is_finished() {
            break;
        }
    }
    drop(guard);
    Ok(())
}
