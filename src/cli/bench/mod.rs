//! `airlock bench-cockpit`: the cockpit without a terminal, for `scripts/bench.sh`. The real
//! session start, agent, tools, app state, render and loop (`ui::drive`) run against a ratatui
//! backend writing to `/dev/null` (bytes counted), with synthetic keys; one JSON object with what
//! was measured is printed at the end. Hidden from `--help`: it is a measuring tool, not a feature.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use crossterm::event::Event;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use super::exec::{self, ExecArgs};
use crate::ui::app::App;
use diff::diff_and_modal_frame;
use measure::millis;
use probe::{Answer, Probe};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Measure {
    /// A minimal ratatui app: one frame, then exit (the floor of `first-frame`).
    Minimal,
    /// Session start to the first frame drawn, then exit.
    FirstFrame,
    /// The scenario's tools run to the end; when everything has finished and been drawn, exit.
    Flood,
    /// Once two tools run and print, type `--keys` keys, one every `--every-ms`; key → frame
    /// latencies.
    Keys,
    /// Until the first approval modal has been drawn (its diff computed), then exit.
    Modal,
    /// Once settled in `--idle` state, CPU time and bytes written over `--seconds`.
    Idle,
    /// The scenario's runs one after another; resident memory after each finished run.
    Runs,
    /// No session: the approval request `write_file` makes for `--new` over `--old` (its diff)
    /// and the modal's frame, in-process, `--repeat` times (what S4 compares with `git diff`).
    Diff,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IdleState {
    /// No turn was started: the prompt waits.
    Prompt,
    /// The turn has finished, its output is on screen.
    Output,
    /// A tool runs and prints nothing.
    Running,
    /// A call waits for approval: the modal is up and nobody answers. After the window the
    /// real `airlock approve CODE` answers it from another process, as from another terminal.
    Modal,
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[arg(value_enum)]
    pub measure: Measure,
    /// The scenario the scripted model plays.
    #[arg(long)]
    pub scenario: Option<std::path::PathBuf>,
    #[arg(long)]
    pub workspace: Option<std::path::PathBuf>,
    /// Keys to type (`keys`).
    #[arg(long, default_value_t = 300)]
    pub keys: usize,
    /// Milliseconds between two keys (`keys`).
    #[arg(long, default_value_t = 10)]
    pub every_ms: u64,
    /// `keys`: typing starts once this many runs stream output.
    #[arg(long, default_value_t = 2)]
    pub flooding: usize,
    #[arg(long, value_enum, default_value = "prompt")]
    pub idle: IdleState,
    /// Length of the measured idle window (`idle`).
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    #[arg(long, default_value_t = 120)]
    pub width: u16,
    #[arg(long, default_value_t = 40)]
    pub height: u16,
    /// Give up (an error) after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub limit: u64,
    /// The file as it is (`diff`).
    #[arg(long)]
    pub old: Option<std::path::PathBuf>,
    /// The content `write_file` would write (`diff`).
    #[arg(long)]
    pub new: Option<std::path::PathBuf>,
    /// How many times the diff and the frame are computed (`diff`).
    #[arg(long, default_value_t = 20)]
    pub repeat: usize,
}

/// `/dev/null`, counting what the terminal backend writes into it.
struct CountingSink {
    file: std::fs::File,
    written: Arc<AtomicU64>,
}

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Buffered as the real cockpit's terminal is (`ui::FRAME_BUFFER`): a frame leaves in one write.
type HeadlessTerminal = Terminal<CrosstermBackend<io::BufWriter<CountingSink>>>;

fn terminal(args: &BenchArgs, written: Arc<AtomicU64>) -> Result<HeadlessTerminal> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .context("cannot open /dev/null")?;
    let backend = CrosstermBackend::new(io::BufWriter::with_capacity(
        crate::ui::FRAME_BUFFER,
        CountingSink { file, written },
    ));
    Ok(Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, args.width, args.height)),
        },
    )?)
}

/// Runs one measurement and returns what it measured.
pub async fn run(args: BenchArgs) -> Result<Value> {
    let started = Instant::now();
    // A measuring run writes audit records and run logs like any session: never into the
    // user's own state directory by accident.
    if std::env::var_os("AIRLOCK_HOME").is_none_or(|h| h.is_empty()) {
        bail!(
            "bench-cockpit writes audit records and run logs like a real session: set AIRLOCK_HOME to a scratch directory (scripts/bench.sh does)"
        );
    }
    let written = Arc::new(AtomicU64::new(0));
    let mut terminal = terminal(&args, written.clone())?;
    if args.measure == Measure::Minimal {
        terminal.draw(|frame| frame.render_widget(Paragraph::new("airlock"), frame.area()))?;
        return Ok(json!({ "first_frame_ms": millis(started.elapsed()) }));
    }
    if args.measure == Measure::Diff {
        return diff_and_modal_frame(&args);
    }
    let exec_args = ExecArgs {
        scenario: args.scenario.clone(),
        workspace: args.workspace.clone(),
        ..ExecArgs::default()
    };
    let session = exec::start(&exec_args, None)?;
    let status = session.status();
    // As the cockpit does, except that an idle prompt is measured before any turn.
    let idle_prompt = args.measure == Measure::Idle && args.idle == IdleState::Prompt;
    let first = session
        .opening_prompt(args.scenario.is_some())
        .filter(|_| !idle_prompt);
    let (keys_tx, mut keys_rx) = mpsc::unbounded_channel::<io::Result<Event>>();
    let input = futures_util::stream::poll_fn(move |cx| keys_rx.poll_recv(cx));
    let result = Arc::new(Mutex::new(None));
    let mut probe = Probe {
        measure: args.measure,
        args_keys: args.keys,
        args_flooding: args.flooding,
        every: Duration::from_millis(args.every_ms),
        idle: args.idle,
        seconds: args.seconds,
        started,
        ops: session.handle.ops.clone(),
        keys: keys_tx,
        written: written.clone(),
        frames: Arc::new(AtomicU64::new(0)),
        sent: Arc::new(Mutex::new(Vec::new())),
        matched: 0,
        latencies: Vec::new(),
        frame_times: Vec::new(),
        typing: false,
        finished_runs: 0,
        rss: Vec::new(),
        result: result.clone(),
        done: false,
        code: None,
        answer: Arc::new(Mutex::new(Answer::default())),
        gone: Arc::new(Notify::new()),
    };
    let app = App::new(status, Instant::now());
    // On the runtime's workers, as `ui::run` runs the real cockpit.
    let limit = Duration::from_secs(args.limit);
    let handle = session.handle;
    let ui = tokio::spawn(async move {
        let drive = crate::ui::drive(&mut terminal, input, handle, app, first, &mut probe);
        tokio::time::timeout(limit, drive).await
    });
    match ui.await? {
        Ok(outcome) => outcome?,
        Err(_) => bail!(
            "bench-cockpit {:?}: nothing to report after {} s (is the scenario right?)",
            args.measure,
            args.limit
        ),
    }
    let measured = result.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Some(mut measured) = measured else {
        bail!(
            "bench-cockpit {:?}: the cockpit stopped before the measurement was complete",
            args.measure
        )
    };
    measured["total_ms"] = json!(millis(started.elapsed()));
    measured["bytes_written_total"] = json!(written.load(Ordering::Relaxed));
    Ok(measured)
}

mod diff;
mod measure;
mod probe;

pub use diff::write_request;
