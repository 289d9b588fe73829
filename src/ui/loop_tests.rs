//! The loop (`drive`) as a person meets it: real frames on a test backend, keys and agent events
//! through channels, model text streaming all the while. Every window a key or the agent opens
//! must be on the very next frame, and the key after it must go to that window: a window that is
//! open in the state but not on screen would eat a key the person meant for something else.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::app::{App, Overlay, Status};
use super::{FrameReport, Watcher, drive};
use crate::output::Thinner;
use crate::protocol::AgentHandle;
use crate::protocol::{AgentEvent, GrantSummary, Op, Stream, TurnOutcome};

/// A test backend that keeps a copy of the screen each time a frame is flushed to it.
struct Recorder {
    screen: TestBackend,
    flushed: Arc<Mutex<String>>,
    /// Text another program writes on the terminal just before the next frame: (column, row,
    /// text).
    scribble: Arc<Mutex<Option<(u16, u16, String)>>>,
}

impl Backend for Recorder {
    type Error = <TestBackend as Backend>::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if let Some((x, y, text)) = self.scribble.lock().unwrap().take() {
            let cells: Vec<(u16, u16, Cell)> = text
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    let mut cell = Cell::default();
                    cell.set_symbol(&c.to_string());
                    (x + i as u16, y, cell)
                })
                .collect();
            self.screen
                .draw(cells.iter().map(|(x, y, cell)| (*x, *y, cell)))?;
        }
        self.screen.draw(content)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.screen.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.screen.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.screen.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.screen.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.screen.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.screen.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.screen.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.screen.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.screen.flush()?;
        *self.flushed.lock().unwrap() = self.screen.to_string();
        Ok(())
    }
}

/// A window, as the state has it and as its title reads on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    Approval,
    Help,
    Grants,
    Agents,
    Inbox,
    Undo,
    Devices,
    Audit,
    ConfirmQuit,
}

impl Window {
    fn of(overlay: &Overlay) -> Window {
        match overlay {
            Overlay::Approval(_) => Window::Approval,
            Overlay::Help(_) => Window::Help,
            Overlay::Grants(_) => Window::Grants,
            Overlay::Agents(_) => Window::Agents,
            Overlay::Inbox(_) => Window::Inbox,
            Overlay::Undo(_) => Window::Undo,
            Overlay::Devices(_) => Window::Devices,
            Overlay::Audit(_) => Window::Audit,
            Overlay::ConfirmQuit(_) => Window::ConfirmQuit,
        }
    }

    /// Text only this window's frame shows.
    fn title(self) -> &'static str {
        match self {
            Window::Approval => "wants to run",
            Window::Help => "every key, mouse too",
            Window::Grants => "session grants (d revokes",
            Window::Agents => "agents (Enter shows one",
            Window::Inbox => "waiting elsewhere",
            Window::Undo => " undo · ",
            Window::Devices => " other devices (",
            Window::Audit => "audit: this session's decisions",
            Window::ConfirmQuit => "quit?",
        }
    }
}

/// One frame the loop drew: the screen, and the state it was drawn from.
#[derive(Debug, Clone)]
struct Frame {
    screen: String,
    keys_handled: u64,
    top: Option<Window>,
    turn_running: bool,
    draft: String,
    /// The approval modal's keys are live.
    keys_live: bool,
}

/// Sends every frame out of the loop as it is drawn.
struct Tap {
    flushed: Arc<Mutex<String>>,
    frames: mpsc::UnboundedSender<Frame>,
    /// What the loop wrote to the terminal besides frames.
    nudged: Arc<Mutex<Vec<u8>>>,
}

impl Watcher for Tap {
    fn nudge(&mut self, bytes: &[u8]) {
        self.nudged.lock().unwrap().extend_from_slice(bytes);
    }

    fn frame(&mut self, app: &App, report: &FrameReport) {
        let _ = self.frames.send(Frame {
            screen: self.flushed.lock().unwrap().clone(),
            keys_handled: report.keys_handled,
            top: app.overlays.last().map(Window::of),
            turn_running: app.turn_running,
            draft: app.draft(),
            keys_live: app.overlays.iter().any(|o| match o {
                Overlay::Approval(a) => app.now >= a.armed_at,
                _ => false,
            }),
        });
    }
}

/// The loop on a 100x30 test screen, with the agent's side played by the test.
struct Cockpit {
    keys: mpsc::UnboundedSender<std::io::Result<Event>>,
    events: mpsc::UnboundedSender<AgentEvent>,
    ops: mpsc::UnboundedReceiver<Op>,
    frames: mpsc::UnboundedReceiver<Frame>,
    keys_sent: u64,
    stream: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    scribble: Arc<Mutex<Option<(u16, u16, String)>>>,
    nudged: Arc<Mutex<Vec<u8>>>,
}

const WAIT: Duration = Duration::from_secs(10);

impl Cockpit {
    /// The loop, a turn under way, and the model's text streaming a word every 2 ms.
    async fn streaming() -> Cockpit {
        Cockpit::streaming_with(None).await
    }

    /// `streaming`, with this inbox.
    async fn streaming_with(inbox: Option<Arc<dyn crate::protocol::InboxSource>>) -> Cockpit {
        let (ops_tx, ops) = mpsc::unbounded_channel();
        let (events, events_rx) = mpsc::unbounded_channel();
        let (keys, mut keys_rx) = mpsc::unbounded_channel::<std::io::Result<Event>>();
        let (frames_tx, frames) = mpsc::unbounded_channel();
        let handle = AgentHandle {
            ops: ops_tx,
            events: events_rx,
            task: tokio::spawn(std::future::pending()),
        };
        let input = futures_util::stream::poll_fn(move |cx| keys_rx.poll_recv(cx));
        let scribble = Arc::new(Mutex::new(None));
        let scribbler = scribble.clone();
        let nudged = Arc::new(Mutex::new(Vec::new()));
        let nudges = nudged.clone();
        let task = tokio::spawn(async move {
            let flushed = Arc::new(Mutex::new(String::new()));
            let backend = Recorder {
                screen: TestBackend::new(100, 30),
                flushed: flushed.clone(),
                scribble: scribbler,
            };
            let mut terminal = Terminal::new(backend)?;
            let mut app = App::new(Status::default(), Instant::now());
            app.inbox_source = inbox;
            app.notifier = Some(super::notify::Notifier::new(
                super::notify::Concrete::Osc9,
                false,
            ));
            let mut tap = Tap {
                flushed,
                frames: frames_tx,
                nudged: nudges,
            };
            drive(&mut terminal, input, handle, app, None, &mut tap).await
        });
        let mut cockpit = Cockpit {
            keys,
            events,
            ops,
            frames,
            keys_sent: 0,
            stream: CancellationToken::new(),
            task,
            scribble,
            nudged,
        };
        cockpit.send(AgentEvent::TurnStarted {
            turn: 1,
            prompt: "fix the failing test".into(),
        });
        let (events, stop) = (cockpit.events.clone(), cockpit.stream.clone());
        tokio::spawn(async move {
            let mut word = 0u64;
            while !stop.is_cancelled() {
                word += 1;
                let text = format!("word{word} ");
                if events.send(AgentEvent::TextDelta { text }).is_err() {
                    break;
                }
                // The model's pace, not a wait for anything.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
        // The text is on screen: the stream is being drawn.
        cockpit.frame_where(|f| f.screen.contains("word")).await;
        cockpit
    }

    fn send(&self, event: AgentEvent) {
        self.events.send(event).expect("the loop listens");
    }

    fn press(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        self.keys_sent += 1;
        self.keys
            .send(Ok(Event::Key(KeyEvent::new(code, modifiers))))
            .expect("the loop listens");
    }

    /// The next frame drawn; every frame must show the window on top of the state.
    async fn next_frame(&mut self) -> Frame {
        let frame = tokio::time::timeout(WAIT, self.frames.recv())
            .await
            .expect("the loop draws while text streams")
            .expect("the loop is running");
        if let Some(top) = frame.top {
            assert!(
                frame.screen.contains(top.title()),
                "{top:?} is open in the state but not on screen:\n{}",
                frame.screen
            );
        }
        frame
    }

    /// The first frame drawn after every key sent so far was handled.
    async fn frame_after_keys(&mut self) -> Frame {
        loop {
            let frame = self.next_frame().await;
            if frame.keys_handled >= self.keys_sent {
                return frame;
            }
        }
    }

    async fn frame_where(&mut self, wanted: impl Fn(&Frame) -> bool) -> Frame {
        loop {
            let frame = self.next_frame().await;
            if wanted(&frame) {
                return frame;
            }
        }
    }

    fn sent_ops(&mut self) -> Vec<Op> {
        let mut sent = Vec::new();
        while let Ok(op) = self.ops.try_recv() {
            sent.push(op);
        }
        sent
    }

    /// Ends the stream and the loop (as the agent does after `Op::Shutdown`).
    async fn stop(self) {
        self.stream.cancel();
        let _ = self.events.send(AgentEvent::ShutdownComplete);
        let ended = tokio::time::timeout(WAIT, self.task)
            .await
            .expect("the loop ends after ShutdownComplete");
        ended
            .expect("the loop did not panic")
            .expect("the loop ended without an error");
    }
}

fn plain(code: KeyCode) -> (KeyCode, KeyModifiers) {
    (code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> (KeyCode, KeyModifiers) {
    (KeyCode::Char(c), KeyModifiers::CONTROL)
}

mod inbox;
mod nudge;
mod windows;
