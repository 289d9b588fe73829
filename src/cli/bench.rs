//! `airlock bench-cockpit`: the cockpit without a terminal, for `scripts/bench.sh`. The real
//! session start, agent, tools, app state, render and loop (`ui::drive`) run against a ratatui
//! backend writing to `/dev/null` (bytes counted), with synthetic keys; one JSON object with what
//! was measured is printed at the end. Hidden from `--help`: it is a measuring tool, not a feature.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use super::exec::{self, ExecArgs};
use crate::protocol::{AgentEvent, ApprovalRequest, FrozenCall, Op, Risk, Ruling, Verdict};
use crate::ui::app::{App, Entry, RunStatus, Status};
use crate::ui::overlay::Overlay;
use crate::ui::{FrameReport, Watcher};

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

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// CPU time of the whole process (every thread), from the kernel.
fn cpu_time() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// A field of /proc/self/status in KiB (VmRSS, VmHWM).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn spread(mut values: Vec<f64>) -> Value {
    values.sort_by(f64::total_cmp);
    json!({
        "count": values.len(),
        "p50": percentile(&values, 50.0),
        "p90": percentile(&values, 90.0),
        "p99": percentile(&values, 99.0),
        "max": values.last().copied().unwrap_or(0.0),
    })
}

/// The context switches of each thread of this process so far (voluntary + involuntary, from
/// `/proc/self/task/*/status`), with the thread's name. Every switch is a wake-up: a thread
/// that blocks and is woken again counts one voluntary switch, one preempted counts one
/// involuntary switch.
fn switches() -> BTreeMap<u32, (String, u64)> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        let mut name = String::new();
        let mut count = 0;
        for line in status.lines() {
            if let Some(n) = line.strip_prefix("Name:") {
                name = n.trim().to_string();
            } else if line.starts_with("voluntary_ctxt_switches:")
                || line.starts_with("nonvoluntary_ctxt_switches:")
            {
                count += line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        out.insert(tid, (name, count));
    }
    out
}

/// The context switches between two `switches()` readings: the sum over the threads alive at
/// the end (a thread started in between counts from zero), per thread name, and how many
/// threads ended in between (their switches are lost with them).
fn switches_between(
    before: &BTreeMap<u32, (String, u64)>,
    after: &BTreeMap<u32, (String, u64)>,
) -> Value {
    let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0;
    for (tid, (name, count)) in after {
        let was = before.get(tid).map_or(0, |(_, c)| *c);
        let delta = count.saturating_sub(was);
        total += delta;
        *by_name.entry(name.clone()).or_default() += delta;
    }
    let ended = before.keys().filter(|t| !after.contains_key(t)).count();
    let started = after.keys().filter(|t| !before.contains_key(t)).count();
    json!({
        "total": total,
        "by_thread_name": by_name,
        "threads_at_end": after.len(),
        "threads_started": started,
        "threads_ended": ended,
    })
}

/// Now, as seconds since the Unix epoch (to match strace -ttt's timestamps).
fn epoch_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The approval request the gate makes for `write_file` of `new` over `old` (the file
/// `big.txt`): its preview is the diff. benches/cockpit.rs times the same request.
pub fn write_request(old: &str, new: &str) -> ApprovalRequest {
    let args = json!({"path": "big.txt", "content": new});
    ApprovalRequest {
        call_id: "c1".into(),
        session: "bench".into(),
        tool: "write_file".into(),
        title: crate::tools::registry::title("write_file", &args),
        risk: Risk::Mutating,
        frozen: FrozenCall::freeze("write_file", &args),
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
        preview: Some(crate::facts::diff::unified("big.txt", old, new)),
        deadline_ms: None,
        code: None,
        sandbox: None,
    }
}

/// The median and the least of some times (milliseconds).
fn median_min(mut values: Vec<f64>) -> Value {
    values.sort_by(f64::total_cmp);
    let median = match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    json!({
        "median": median,
        "min": values.first().copied().unwrap_or(0.0),
        "count": values.len(),
    })
}

/// `diff`: the diff alone, and the request (with its diff) taken in by a fresh cockpit state
/// and drawn as the approval modal, each `--repeat` times, in-process; the files are read
/// once, before. A test backend of `--width` x `--height`, as benches/cockpit.rs draws.
fn diff_and_modal_frame(args: &BenchArgs) -> Result<Value> {
    let (Some(old), Some(new)) = (&args.old, &args.new) else {
        bail!("bench-cockpit diff needs --old FILE and --new FILE");
    };
    let read = |path: &std::path::Path| {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let (old, new) = (read(old)?, read(new)?);
    let mut terminal = Terminal::new(TestBackend::new(args.width, args.height))?;
    let (mut diff, mut whole) = (Vec::new(), Vec::new());
    let (mut added, mut removed, mut approximate, mut modal) = (0, 0, false, false);
    for _ in 0..args.repeat.max(1) {
        let t = Instant::now();
        let preview = std::hint::black_box(crate::facts::diff::unified("big.txt", &old, &new));
        diff.push(millis(t.elapsed()));
        if let crate::protocol::Preview::Diff {
            added: a,
            removed: r,
            approximate: x,
            ..
        } = &preview
        {
            (added, removed, approximate) = (*a, *r, *x);
        }
        drop(preview);
        let t = Instant::now();
        {
            let request = write_request(&old, &new);
            let mut app = App::new(Status::default(), Instant::now());
            app.on_agent_event(AgentEvent::ApprovalRequested {
                request: Box::new(request),
            });
            terminal.draw(|frame| {
                crate::ui::render::render(&app, frame);
            })?;
            modal = app.pending_approvals() == 1;
        }
        whole.push(millis(t.elapsed()));
    }
    Ok(json!({
        "diff_ms": median_min(diff),
        "diff_and_modal_frame_ms": median_min(whole),
        "old_lines": old.lines().count(),
        "new_lines": new.lines().count(),
        "added": added,
        "removed": removed,
        "approximate": approximate,
        "modal_drawn": modal,
    }))
}

fn key(c: char) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

/// Watches every frame and plays the measurement: records times, types keys, and asks the agent
/// to shut down when it has what it came for.
struct Probe {
    measure: Measure,
    args_keys: usize,
    every: Duration,
    idle: IdleState,
    seconds: f64,
    started: Instant,
    ops: mpsc::UnboundedSender<Op>,
    keys: mpsc::UnboundedSender<io::Result<Event>>,
    written: Arc<AtomicU64>,
    frames: Arc<AtomicU64>,
    /// When each synthetic key was sent, in order.
    sent: Arc<Mutex<Vec<Instant>>>,
    matched: usize,
    latencies: Vec<f64>,
    frame_times: Vec<Instant>,
    typing: bool,
    finished_runs: usize,
    rss: Vec<(usize, u64)>,
    result: Arc<Mutex<Option<Value>>>,
    done: bool,
    /// The modal's one-time code (`--idle modal`).
    code: Option<String>,
    answer: Arc<Mutex<Answer>>,
    /// Told when the first frame without the modal has been drawn after the answer.
    gone: Arc<Notify>,
}

impl Probe {
    fn finish(&mut self, result: Value) {
        *self.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        self.done = true;
        let _ = self.ops.send(Op::Interrupt);
        let _ = self.ops.send(Op::Shutdown);
    }

    /// The turn has started and ended (both may fall between two frames).
    fn turn_over(&self, app: &App) -> bool {
        let started = app.entries.iter().any(|e| matches!(e, Entry::User(_)));
        started && !app.turn_running && app.running_tools() == 0
    }

    fn start_typing(&mut self) {
        self.typing = true;
        let (keys, sent, count, every) = (
            self.keys.clone(),
            self.sent.clone(),
            self.args_keys,
            self.every,
        );
        tokio::spawn(async move {
            let mut next = tokio::time::Instant::now();
            for i in 0..count {
                next += every;
                tokio::time::sleep_until(next).await;
                // Letters no approval modal takes as an answer (y, a, d, n, N are).
                const TYPED: &[u8] = b"bcefghijklmopqrstuvwxz";
                let c = TYPED[i % TYPED.len()] as char;
                sent.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Instant::now());
                if keys.send(key(c)).is_err() {
                    return;
                }
            }
        });
    }

    /// Starts the idle window: wait for a quiet second, then count CPU time, context switches,
    /// bytes and frames. With a modal up, then answer it from another process and time until it
    /// is gone from the screen.
    fn start_idle_window(&mut self, app: &App) {
        self.typing = true;
        let (ops, written, frames, result, seconds, state) = (
            self.ops.clone(),
            self.written.clone(),
            self.frames.clone(),
            self.result.clone(),
            self.seconds,
            self.idle,
        );
        let (answer, gone) = (self.answer.clone(), self.gone.clone());
        let code = self.code.clone();
        let lines: u64 = app.runs.iter().map(|r| r.output.total_lines()).sum();
        tokio::spawn(async move {
            // Settled means a whole second without a frame (late answers to start-up ops, such
            // as the grants list, land before the window, however slow the machine is).
            loop {
                let before = frames.load(Ordering::Relaxed);
                tokio::time::sleep(Duration::from_secs(1)).await;
                if frames.load(Ordering::Relaxed) == before || state == IdleState::Running {
                    break;
                }
            }
            // The counters are read outside the window's timestamps: the reads are not in it.
            let (switches0, cpu0, bytes0, frames0) = (
                switches(),
                cpu_time(),
                written.load(Ordering::Relaxed),
                frames.load(Ordering::Relaxed),
            );
            let (t0, epoch0) = (Instant::now(), epoch_s());
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            let (wall, epoch1) = (t0.elapsed(), epoch_s());
            let cpu = cpu_time().saturating_sub(cpu0);
            let bytes = written.load(Ordering::Relaxed) - bytes0;
            let drawn = frames.load(Ordering::Relaxed) - frames0;
            let switched = switches_between(&switches0, &switches());
            let mut report = json!({
                "state": format!("{state:?}").to_lowercase(),
                "window_s": wall.as_secs_f64(),
                "window_start_epoch_s": epoch0,
                "window_end_epoch_s": epoch1,
                "cpu_ms": millis(cpu),
                "cpu_percent_of_a_core": 100.0 * cpu.as_secs_f64() / wall.as_secs_f64(),
                "context_switches": switched,
                "bytes_written": bytes,
                "frames": drawn,
                "output_lines_on_screen": lines,
            });
            if state == IdleState::Modal {
                report["answer"] = answer_from_elsewhere(code, &answer, &gone).await;
            }
            *result.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
            let _ = ops.send(Op::Interrupt);
            let _ = ops.send(Op::Shutdown);
        });
    }
}

/// When the answer from another process was given and seen.
#[derive(Debug, Default)]
struct Answer {
    /// `airlock approve` was started.
    spawned: Option<Instant>,
    /// The first frame drawn without the modal after that.
    gone: Option<Instant>,
}

/// Runs the real `airlock approve CODE` as a child (the same binary and AIRLOCK_HOME, as from
/// another terminal) and waits for the first frame drawn without the modal (up to 10 s).
async fn answer_from_elsewhere(
    code: Option<String>,
    answer: &Arc<Mutex<Answer>>,
    gone: &Arc<Notify>,
) -> Value {
    let Some(code) = code else {
        return json!({ "error": "the modal showed no one-time code" });
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return json!({ "error": format!("cannot find airlock's binary: {e}") }),
    };
    let spawned = Instant::now();
    answer.lock().unwrap_or_else(|e| e.into_inner()).spawned = Some(spawned);
    let approve = code.clone();
    let done = tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(exe)
            .args(["approve", &approve])
            .stdin(std::process::Stdio::null())
            .output();
        (out, Instant::now())
    })
    .await;
    let (out, exited) = match done {
        Ok((Ok(out), exited)) => (out, exited),
        Ok((Err(e), _)) => return json!({ "error": format!("airlock approve did not run: {e}") }),
        Err(e) => return json!({ "error": format!("airlock approve's waiter stopped: {e}") }),
    };
    let seen = tokio::time::timeout(Duration::from_secs(10), gone.notified()).await;
    let gone_at = answer.lock().unwrap_or_else(|e| e.into_inner()).gone;
    // The frame may come before this thread saw the child exit: then the time is negative.
    let signed = |from: Instant, to: Instant| match to.checked_duration_since(from) {
        Some(d) => millis(d),
        None => -millis(from - to),
    };
    json!({
        "code": code,
        "approve_exit_code": out.status.code(),
        "approve_stderr": String::from_utf8_lossy(&out.stderr).trim(),
        "approve_ran_ms": millis(exited - spawned),
        "modal_gone": seen.is_ok() && gone_at.is_some(),
        "exit_to_modal_gone_ms": gone_at.map(|g| signed(exited, g)),
        "spawn_to_modal_gone_ms": gone_at.map(|g| signed(spawned, g)),
    })
}

/// The one-time code the front request of the approval modal shows, if there is one.
fn modal_code(app: &App) -> Option<String> {
    app.overlays.iter().find_map(|o| match o {
        Overlay::Approval(a) => a.queue.front().and_then(|r| r.code.clone()),
        _ => None,
    })
}

impl Watcher for Probe {
    fn frame(&mut self, app: &App, report: &FrameReport) {
        self.frames.store(report.frames, Ordering::Relaxed);
        if self.done {
            return;
        }
        let since_start = millis(report.drawn_at - self.started);
        match self.measure {
            Measure::Minimal | Measure::Diff => {}
            Measure::FirstFrame => self.finish(json!({ "first_frame_ms": since_start })),
            Measure::Flood => {
                if self.turn_over(app) {
                    let lines: Vec<u64> = app.runs.iter().map(|r| r.output.total_lines()).collect();
                    let bytes: Vec<u64> = app.runs.iter().map(|r| r.output.total_bytes()).collect();
                    let result = json!({
                        "finished_drawn_ms": since_start,
                        "frames": report.frames,
                        "bytes_written": self.written.load(Ordering::Relaxed),
                        "lines_seen": lines,
                        "bytes_seen": bytes,
                    });
                    self.finish(result);
                }
            }
            Measure::Modal => {
                if app.pending_approvals() > 0 {
                    // When, on the wall clock, so the harness can take it from the moment it
                    // started the process (the pipeline a user waits on ends here; the exit
                    // after it is timed whole by the harness).
                    self.finish(json!({
                        "modal_drawn_ms": since_start,
                        "modal_drawn_unix_s": epoch_s(),
                        "frames": report.frames,
                    }));
                }
            }
            Measure::Keys => {
                // Typing starts once two tools flood: running, and their output on screen (a
                // started tool waits for its decision's audit commit and its sandbox first).
                let flooding = app
                    .runs
                    .iter()
                    .filter(|r| r.output.total_lines() > 0)
                    .count();
                if !self.typing && app.running_tools() >= 2 && flooding >= 2 {
                    self.start_typing();
                }
                if !self.typing {
                    return;
                }
                self.frame_times.push(report.drawn_at);
                let sent = self.sent.lock().unwrap_or_else(|e| e.into_inner()).clone();
                while self.matched < sent.len() && (self.matched as u64) < report.keys_handled {
                    self.latencies
                        .push(millis(report.drawn_at - sent[self.matched]));
                    self.matched += 1;
                }
                if self.matched == self.args_keys {
                    let intervals: Vec<f64> = self
                        .frame_times
                        .windows(2)
                        .map(|w| millis(w[1] - w[0]))
                        .collect();
                    let lines: Vec<u64> = app.runs.iter().map(|r| r.output.total_lines()).collect();
                    let latencies = std::mem::take(&mut self.latencies);
                    let result = json!({
                        "key_to_frame_samples_ms": latencies.clone(),
                        "key_to_frame_ms": spread(latencies),
                        "frame_interval_ms": spread(intervals),
                        "typing_s": (report.drawn_at - self.frame_times[0]).as_secs_f64(),
                        "lines_seen": lines,
                        "draft_chars": app.draft().chars().count(),
                    });
                    self.finish(result);
                }
            }
            Measure::Idle => {
                let settled = match self.idle {
                    IdleState::Prompt => true,
                    IdleState::Output => self.turn_over(app),
                    IdleState::Running => {
                        app.running_tools() == 1
                            && app.runs.iter().any(|r| r.status == RunStatus::Running)
                    }
                    IdleState::Modal => app.pending_approvals() > 0,
                };
                if settled && !self.typing {
                    self.code = modal_code(app);
                    self.start_idle_window(app);
                }
                if self.idle == IdleState::Modal && app.pending_approvals() == 0 {
                    let mut answer = self.answer.lock().unwrap_or_else(|e| e.into_inner());
                    if answer.spawned.is_some() && answer.gone.is_none() {
                        answer.gone = Some(report.drawn_at);
                        self.gone.notify_one();
                    }
                }
            }
            Measure::Runs => {
                let finished = app
                    .runs
                    .iter()
                    .filter(|r| r.status != RunStatus::Running)
                    .count();
                if finished > self.finished_runs {
                    self.finished_runs = finished;
                    self.rss.push((finished, status_kib("VmRSS:")));
                }
                if self.turn_over(app) {
                    let rss = std::mem::take(&mut self.rss);
                    let result = json!({
                        "runs": finished,
                        "rss_kib_after_runs": rss,
                        "peak_rss_kib": status_kib("VmHWM:"),
                        "lines_per_run": app.runs.first().map(|r| r.output.total_lines()),
                    });
                    self.finish(result);
                }
            }
        }
    }
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
