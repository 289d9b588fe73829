//! The cockpit: a full-screen terminal UI over the agent. One task, one `select!` over terminal
//! events, agent events and the clock; bursts of agent events are drained, then one frame is drawn,
//! and only when something changed.
//!
//! The UI talks to the agent only through `protocol` (`Op` out, `AgentEvent` in: the request
//! carries everything it draws, the verdict and the sandbox label included), and keeps its own
//! view of output (`output`). Outside test fixtures it imports only `protocol`, `output`,
//! `clock` and `visible`. The loop
//! (`drive`) takes any ratatui backend and any stream of terminal events: the real cockpit gives it
//! the terminal, the benchmarks (`cli::bench`) a backend writing to `/dev/null` and synthetic keys.

pub mod app;
pub mod conversation;
mod editor;
pub mod keys;
#[cfg(test)]
mod loop_tests;
pub mod notify;
pub mod output;
pub mod overlay;
pub mod preview;
pub mod render;
#[cfg(test)]
mod screen_snapshots;
#[cfg(test)]
mod snapshots;
#[cfg(test)]
mod snapshots_agents;
#[cfg(test)]
mod snapshots_devices;
#[cfg(test)]
mod snapshots_hooks;
#[cfg(test)]
mod snapshots_inbox;
#[cfg(test)]
mod snapshots_layout;
#[cfg(test)]
mod snapshots_mcp;
#[cfg(test)]
mod snapshots_queue;
#[cfg(test)]
mod snapshots_review;
#[cfg(test)]
mod snapshots_round3;
#[cfg(test)]
mod snapshots_sessions;
#[cfg(test)]
mod snapshots_undo;
#[cfg(test)]
pub(crate) mod testing;
pub mod words;

use std::io;
use std::time::{Duration, Instant};

use anyhow::Result;
use crossterm::event::{Event, EventStream, KeyEventKind};
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::layout::Rect;

use crate::protocol::AgentHandle;
use crate::protocol::{AgentEvent, Op};
use app::{App, Status};

/// Output alone redraws at most this often (frame coalescing): a flood of tool output costs
/// about 60 frames a second, however many chunks arrive. Keys and state changes draw at once.
const FRAME: Duration = Duration::from_millis(16);

/// At most this many agent events are applied between two looks at the keyboard, so a flood
/// never delays a key by more than one batch.
const DRAIN: usize = 256;

/// The real terminal, written through a buffer that holds a whole frame: ratatui flushes the
/// backend once per frame, so a frame leaves in one write (std's stdout alone flushed every
/// KiB, a dozen writes for a busy frame, each a chance for the terminal to show half of it).
type CockpitTerminal = Terminal<CrosstermBackend<io::BufWriter<io::Stdout>>>;

/// Bytes of frame buffered before a write (a full 200x60 frame with colours fits).
pub const FRAME_BUFFER: usize = 64 * 1024;

/// Restores the terminal however the program ends: normally, on error, on panic (ratatui's hook),
/// and on SIGTERM / SIGHUP.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> Result<(CockpitTerminal, TerminalGuard)> {
        // Raw mode, the alternate screen and the panic hook that restores them.
        drop(ratatui::try_init()?);
        let guard = TerminalGuard;
        crossterm::execute!(
            std::io::stdout(),
            crossterm::event::EnableMouseCapture,
            crossterm::event::EnableFocusChange
        )?;
        let backend =
            CrosstermBackend::new(io::BufWriter::with_capacity(FRAME_BUFFER, io::stdout()));
        Ok((Terminal::new(backend)?, guard))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = crossterm::execute!(
            std::io::stdout(),
            crossterm::event::DisableFocusChange,
            crossterm::event::DisableMouseCapture
        );
        ratatui::restore();
    }
}

/// What the loop says after each frame it draws (for the benchmarks and their tests).
#[derive(Debug, Clone, Copy)]
pub struct FrameReport {
    /// When the frame had been handed to the backend and flushed.
    pub drawn_at: Instant,
    /// Keys (and mouse events) applied before this frame.
    pub keys_handled: u64,
    /// Frames drawn so far, this one included.
    pub frames: u64,
}

/// Watches the loop from outside: gets the state after every frame. The cockpit uses `()`.
pub trait Watcher {
    fn frame(&mut self, app: &App, report: &FrameReport);

    /// Bytes for the terminal besides its frames (a desktop notification), written between
    /// two frames. The cockpit writes them to the terminal; by default they go nowhere.
    fn nudge(&mut self, bytes: &[u8]) {
        let _ = bytes;
    }
}

/// The real terminal's watcher: it sees no frames, and writes nudges to the terminal.
struct TerminalNudges;

impl Watcher for TerminalNudges {
    fn frame(&mut self, _: &App, _: &FrameReport) {}

    fn nudge(&mut self, bytes: &[u8]) {
        use std::io::Write as _;
        // The frame buffer is flushed after every frame, so these never land inside one.
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }
}

impl Watcher for () {
    fn frame(&mut self, _: &App, _: &FrameReport) {}
}

/// What the cockpit reads and changes outside the agent, each when there is one.
#[derive(Default)]
pub struct Sources {
    /// Requests waiting elsewhere on this machine (F4).
    pub inbox: Option<std::sync::Arc<dyn crate::protocol::InboxSource>>,
    /// The session's workspace history (`u`).
    pub undo: Option<std::sync::Arc<dyn crate::protocol::UndoSource>>,
    /// The approval page for other devices (F6).
    pub remote: Option<std::sync::Arc<dyn crate::protocol::RemotePairing>>,
}

/// The cockpit on the real terminal.
pub async fn run(
    handle: AgentHandle,
    status: Status,
    first_prompt: Option<String>,
    notices: Vec<String>,
    notify: notify::NotifyMethod,
    sources: Sources,
) -> Result<()> {
    let (mut terminal, guard) = TerminalGuard::enter()?;
    let mut app = App::new(status, Instant::now());
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let method = notify::resolve(notify, &env);
    app.notifier = Some(notify::Notifier::new(method, env("TMUX").is_some()));
    app.inbox_source = sources.inbox;
    app.undo_source = sources.undo;
    app.remote = sources.remote;
    app.refresh_inbox();
    for notice in notices {
        app.entries.push(app::Entry::Notice(notice));
    }
    // The loop runs on the runtime's workers, next to the agent and its tools, rather than on
    // the thread that started the runtime: an agent event then wakes it without a cross-thread
    // wake-up each time (a 10-million-line flood: 1.29x -> 1.10x of `seq | cat`).
    let ui = tokio::spawn(async move {
        drive_editing(
            &mut terminal,
            EventStream::new(),
            handle,
            app,
            first_prompt,
            &mut TerminalNudges,
            &mut editor::edit,
        )
        .await
    });
    let result = match ui.await {
        Ok(result) => result,
        Err(e) => Err(anyhow::anyhow!("the cockpit stopped unexpectedly: {e}")),
    };
    drop(guard);
    result
}

/// Opens a proposal's text in the person's editor, with the screen suspended meanwhile: the
/// edited text, or why there is none.
pub type Editor<'a, B, S> = dyn FnMut(&mut Terminal<B>, &mut S, &app::EditorJob) -> std::result::Result<String, String>
    + Send
    + 'a;

/// The loop: terminal events, agent events and the clock in, frames out, until the agent has
/// shut down (or the input ends, or SIGTERM / SIGHUP). With no terminal to suspend (a test
/// backend), a file change cannot be opened in an editor and the modal says so.
pub async fn drive<B, S, W>(
    terminal: &mut Terminal<B>,
    input: S,
    handle: AgentHandle,
    app: App,
    first_prompt: Option<String>,
    watcher: &mut W,
) -> Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
    W: Watcher + ?Sized,
{
    let mut no_editor = |_: &mut Terminal<B>, _: &mut S, _: &app::EditorJob| {
        Err("this screen cannot open an editor; nothing changed".to_string())
    };
    drive_editing(
        terminal,
        input,
        handle,
        app,
        first_prompt,
        watcher,
        &mut no_editor,
    )
    .await
}

/// `drive`, opening file changes in the person's editor through `editor`.
pub async fn drive_editing<B, S, W>(
    terminal: &mut Terminal<B>,
    mut input: S,
    mut handle: AgentHandle,
    mut app: App,
    first_prompt: Option<String>,
    watcher: &mut W,
    editor: &mut Editor<'_, B, S>,
) -> Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
    W: Watcher + ?Sized,
{
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut sighup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    if let Some(prompt) = first_prompt {
        let _ = handle.ops.send(Op::Submit { prompt });
    }
    let _ = handle.ops.send(Op::ListGrants);
    // `dirty`: something changed; `urgent`: it is a key or a state change (not a flood of output),
    // so it is drawn at once instead of in the next frame slot.
    let mut dirty = true;
    let mut urgent = true;
    let mut last_frame = Instant::now();
    let mut shown_clock: Vec<u64> = Vec::new();
    let mut keys_handled: u64 = 0;
    let mut frames: u64 = 0;
    let mut shutdown_sent = false;
    // The inbox is read again when the state directory changes, at most twice a second (a
    // turn writes its journal there often), and never on a timer while nothing changes.
    let mut inbox_wait = app.inbox_source.as_ref().map(|s| s.changes());
    let mut inbox_settling = false;
    loop {
        let now = Instant::now();
        if app.take_full_repaint(now) {
            forget_the_screen(terminal)?;
            dirty = true;
            urgent = true;
        }
        if dirty && (urgent || now >= last_frame + FRAME) {
            draw_frame(terminal, &mut app, now)?;
            shown_clock = app.clock_face(app.now, app.wall_ms);
            last_frame = Instant::now();
            frames += 1;
            watcher.frame(
                &app,
                &FrameReport {
                    drawn_at: last_frame,
                    keys_handled,
                    frames,
                },
            );
            dirty = false;
            urgent = false;
        }
        if app.should_quit && !shutdown_sent {
            let _ = handle.ops.send(Op::Shutdown);
            shutdown_sent = true;
        }
        let clock_due = app
            .next_clock_change(Instant::now(), crate::clock::now_ms())
            .map(tokio::time::Instant::from_std);
        let frame_due = tokio::time::Instant::from_std(last_frame + FRAME);
        let inbox_due = app
            .next_inbox_expiry(Instant::now(), crate::clock::now_ms())
            .map(tokio::time::Instant::from_std);
        tokio::select! {
            biased;
            event = input.next() => match event {
                Some(Ok(Event::Key(key))) if key.kind != KeyEventKind::Release => {
                    app.now = Instant::now();
                    // A modal that went live since the last frame is repainted whole before
                    // it takes a key.
                    let now = app.now;
                    if app.take_full_repaint(now) {
                        forget_the_screen(terminal)?;
                        draw_frame(terminal, &mut app, now)?;
                    }
                    for op in app.on_key(key, app.now) {
                        let _ = handle.ops.send(op);
                    }
                    // `e` on a file change: the screen is the editor's until it exits.
                    if let Some(job) = app.take_editor_job() {
                        let edited = editor(terminal, &mut input, &job);
                        app.now = Instant::now();
                        for op in app.editor_done(job, edited) {
                            let _ = handle.ops.send(op);
                        }
                        forget_the_screen(terminal)?;
                    }
                    keys_handled += 1;
                    dirty = true;
                    urgent = true;
                }
                Some(Ok(Event::Mouse(mouse))) => {
                    app.on_mouse(mouse);
                    keys_handled += 1;
                    dirty = true;
                    urgent = true;
                }
                Some(Ok(Event::Resize(_, _))) => {
                    dirty = true;
                    urgent = true;
                }
                Some(Ok(Event::FocusGained)) => app.on_focus(true),
                Some(Ok(Event::FocusLost)) => app.on_focus(false),
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
            _ = sigterm.recv() => break,
            _ = sighup.recv() => break,
            event = handle.events.recv() => {
                let Some(event) = event else { break };
                let (done, changed, ops) = apply_burst(&mut app, &mut handle.events, event);
                for op in ops {
                    let _ = handle.ops.send(op);
                }
                if !app.nudges.is_empty() {
                    watcher.nudge(&std::mem::take(&mut app.nudges));
                }
                urgent |= changed;
                dirty = true;
                if done || (shutdown_sent && app.should_quit && handle.events.is_closed()) {
                    break;
                }
            }
            // Coalesced output: the frame it waits for is due.
            _ = tokio::time::sleep_until(frame_due), if dirty => {}
            () = wait_some(&mut inbox_wait), if inbox_wait.is_some() => {
                let before = app.inbox.clone();
                app.refresh_inbox();
                if app.inbox != before {
                    dirty = true;
                    urgent = true;
                }
                inbox_settling = !inbox_settling;
                inbox_wait = match (&app.inbox_source, inbox_settling) {
                    (Some(_), true) => Some(Box::pin(tokio::time::sleep(INBOX_SETTLE))),
                    (Some(source), false) => Some(source.changes()),
                    (None, _) => None,
                };
            }
            // A request of the inbox expired: it leaves the list (nothing was written).
            _ = sleep_until_some(inbox_due), if inbox_due.is_some() => {
                let before = app.inbox.clone();
                app.refresh_inbox();
                if app.inbox != before {
                    dirty = true;
                    urgent = true;
                }
            }
            _ = sleep_until_some(clock_due), if clock_due.is_some() => {
                // Redraw only when what the clock shows has changed.
                if app.clock_face(Instant::now(), crate::clock::now_ms()) != shown_clock {
                    dirty = true;
                }
            }
        }
        if app.should_quit && shutdown_sent && handle.task.is_finished() {
            break;
        }
    }
    Ok(())
}

/// Blanks the screen and forgets what is on it, so the next frame writes every cell (in the
/// same write as the blanking: no flicker). Not `Terminal::clear`, which asks the terminal
/// where its cursor is, a question the event stream would swallow the answer to.
fn forget_the_screen<B>(terminal: &mut Terminal<B>) -> Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
{
    terminal
        .backend_mut()
        .clear_region(ratatui::backend::ClearType::All)?;
    // Each swap resets the buffer it leaves behind: after two, the frame drawn last is gone.
    terminal.swap_buffers();
    terminal.swap_buffers();
    Ok(())
}

/// Draws one frame at `now` and records what it showed: the panes' areas (for the mouse), the
/// screen's size (for the help), and what of the approval modal was on screen.
fn draw_frame<B>(terminal: &mut Terminal<B>, app: &mut App, now: Instant) -> Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
{
    app.now = now;
    app.wall_ms = crate::clock::now_ms();
    let mut approval_shown = None;
    terminal.draw(|frame| {
        let areas = render::layout(frame.area(), app.prompt.lines().len());
        app.conversation_area = rect_tuple(areas.conversation);
        app.results_area = rect_tuple(areas.results);
        app.screen = (frame.area().width, frame.area().height);
        approval_shown = render::render(app, frame);
    })?;
    // What the approval modal showed counts as seen only once it has been drawn.
    app.approval_drawn(approval_shown);
    Ok(())
}

/// Applies `first` and the burst queued behind it (bounded, so keys stay prompt); the loop then
/// draws once. Returns whether the agent has shut down, whether anything but a flood (output,
/// text) came, which is drawn at once, and the ops the events asked for.
fn apply_burst(
    app: &mut App,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    first: AgentEvent,
) -> (bool, bool, Vec<Op>) {
    // The state's clock is the arrival time: an approval's arm delay counts from when it
    // arrived, not from the last frame (which may be a second old).
    app.now = Instant::now();
    app.wall_ms = crate::clock::now_ms();
    let mut done = false;
    let mut urgent = false;
    let mut ops = Vec::new();
    let mut next = Some(first);
    for _ in 0..DRAIN {
        let Some(event) = next.take().or_else(|| events.try_recv().ok()) else {
            break;
        };
        done |= matches!(event, AgentEvent::ShutdownComplete);
        urgent |= !streams(&event);
        for op in app.on_agent_event(event) {
            // One grant list a burst is enough.
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    (done, urgent, ops)
}

/// Events that come in floods (output, text deltas) wait for the next frame slot; any other
/// (an approval, a tool finishing, the turn ending) is drawn at once.
fn streams(event: &AgentEvent) -> bool {
    match event {
        // A sub-agent's output and text stream like the session's agent's.
        AgentEvent::Agent { event, .. } => streams(event),
        AgentEvent::ToolOutput { .. } | AgentEvent::TextDelta { .. } => true,
        _ => false,
    }
}

/// How long the inbox waits after a change before it reads again (and then listens again).
const INBOX_SETTLE: Duration = Duration::from_millis(500);

/// Waits for `f`, or forever when there is none.
async fn wait_some(
    f: &mut Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
) {
    match f {
        Some(f) => f.as_mut().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn rect_tuple(r: Rect) -> (u16, u16, u16, u16) {
    (r.x, r.y, r.width, r.height)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use ratatui::backend::TestBackend;
    use tokio::sync::mpsc;

    use super::*;
    use crate::protocol::FrozenCall;
    use crate::protocol::Risk;
    use crate::protocol::{ApprovalRequest, Preview};
    use crate::protocol::{Ruling, Verdict};

    #[test]
    fn a_sub_agents_output_waits_for_the_next_frame_like_any_other_flood() {
        let output = AgentEvent::ToolOutput {
            call_id: "a1-c1".into(),
            stream: crate::protocol::Stream::Stdout,
            text: "1\n".into(),
            skipped: 0,
        };
        let wrapped = |event: AgentEvent| AgentEvent::Agent {
            agent: "a1".into(),
            event: Box::new(event),
        };
        assert!(streams(&output));
        assert!(streams(&wrapped(output)));
        assert!(streams(&wrapped(AgentEvent::TextDelta {
            text: "x".into()
        })));
        assert!(!streams(&wrapped(AgentEvent::Error {
            message: "x".into()
        })));
    }

    fn request() -> ApprovalRequest {
        let args = serde_json::json!({"command": "rm -rf build"});
        ApprovalRequest {
            call_id: "c2".into(),
            session: "s".into(),
            tool: "bash".into(),
            title: crate::tools::registry::title("bash", &args),
            risk: Risk::Mutating,
            frozen: FrozenCall::freeze("bash", &args),
            verdict: Verdict {
                ruling: Ruling::Ask,
                risk: Risk::Mutating,
                reasons: Vec::new(),
                parts: Vec::new(),
                no_session_grant: None,
            },
            session_scopes: None,
            no_session_grant: None,
            directory_scope: None,
            preview: Some(Preview::Command {
                command: "rm -rf build".into(),
                cwd: "/w".into(),
            }),
            deadline_ms: None,
            code: None,
            sandbox: None,
            amended: None,
            notice: None,
            hooks: Vec::new(),
            agent: None,
        }
    }

    /// What a frame showed: keys handled before it, tools running, whether the modal was up.
    struct Drawn(mpsc::UnboundedSender<(u64, usize, bool)>);

    impl Watcher for Drawn {
        fn frame(&mut self, app: &App, report: &FrameReport) {
            let modal = app.pending_approvals() > 0;
            let _ = self
                .0
                .send((report.keys_handled, app.running_tools(), modal));
        }
    }

    /// The next frame for which `wanted` holds (failing after 10 s without one).
    async fn frame_where(
        frames: &mut mpsc::UnboundedReceiver<(u64, usize, bool)>,
        wanted: impl Fn(&(u64, usize, bool)) -> bool,
    ) {
        let found = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(frame) = frames.recv().await {
                if wanted(&frame) {
                    return;
                }
            }
            panic!("the loop ended");
        });
        found.await.expect("no such frame within 10 s");
    }

    #[tokio::test]
    async fn a_key_right_after_an_approval_arrives_is_not_an_answer_however_long_the_screen_was_still()
     {
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (keys_tx, mut keys_rx) = mpsc::unbounded_channel::<std::io::Result<Event>>();
        let (frames_tx, mut frames) = mpsc::unbounded_channel();
        let handle = AgentHandle {
            ops: ops_tx,
            events: events_rx,
            task: tokio::spawn(async {}),
        };
        let input = futures_util::stream::poll_fn(move |cx| keys_rx.poll_recv(cx));
        let loop_task = tokio::spawn(async move {
            let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("test backend");
            let app = App::new(Status::default(), Instant::now());
            drive(
                &mut terminal,
                input,
                handle,
                app,
                None,
                &mut Drawn(frames_tx),
            )
            .await
        });
        // A silent tool runs: the screen changes only once a second.
        events_tx
            .send(AgentEvent::ToolStarted {
                call_id: "c1".into(),
                tool: "bash".into(),
                title: "$ sleep 60".into(),
            })
            .expect("the loop listens");
        frame_where(&mut frames, |&(_, running, _)| running == 1).await;
        // Real time on purpose, not a wait for anything: the screen stays still for longer than
        // the arm delay (the loop reads the real clock, so paused tokio time would not do).
        tokio::time::sleep(Duration::from_millis(600)).await;
        events_tx
            .send(AgentEvent::ApprovalRequested {
                request: Box::new(request()),
            })
            .expect("the loop listens");
        // The key comes as soon as the modal is drawn (keys go before agent events, so it must
        // not be sent before).
        frame_where(&mut frames, |&(_, _, modal)| modal).await;
        keys_tx
            .send(Ok(Event::Key(KeyEvent::new(
                KeyCode::Char('y'),
                KeyModifiers::NONE,
            ))))
            .expect("the loop listens");
        // Whatever the key did was sent before the frame drawn after it.
        frame_where(&mut frames, |&(keys, _, _)| keys >= 1).await;
        let mut sent = Vec::new();
        while let Ok(op) = ops_rx.try_recv() {
            sent.push(op);
        }
        assert!(
            !sent.iter().any(|op| matches!(op, Op::Decide { .. })),
            "a key right after the modal appeared answered it: {sent:?}"
        );
        events_tx
            .send(AgentEvent::ShutdownComplete)
            .expect("the loop listens");
        let _ = tokio::time::timeout(Duration::from_secs(5), loop_task).await;
    }
}
