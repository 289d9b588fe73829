//! The probe: watches every frame of the headless cockpit and plays a measurement (times,
//! typed keys, idle windows, an answer from another process), then asks the agent to stop.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use crate::protocol::Op;
use crate::ui::app::{App, Entry, RunStatus};
use crate::ui::overlay::Overlay;
use crate::ui::{FrameReport, Watcher};

use super::measure::{cpu_time, epoch_s, millis, spread, status_kib, switches, switches_between};
use super::{IdleState, Measure};

pub(super) fn key(c: char) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

/// Watches every frame and plays the measurement: records times, types keys, and asks the agent
/// to shut down when it has what it came for.
pub(super) struct Probe {
    pub(super) measure: Measure,
    pub(super) args_keys: usize,
    /// Typing starts once this many runs stream output.
    pub(super) args_flooding: usize,
    pub(super) every: Duration,
    pub(super) idle: IdleState,
    pub(super) seconds: f64,
    pub(super) started: Instant,
    pub(super) ops: mpsc::UnboundedSender<Op>,
    pub(super) keys: mpsc::UnboundedSender<io::Result<Event>>,
    pub(super) written: Arc<AtomicU64>,
    pub(super) frames: Arc<AtomicU64>,
    /// When each synthetic key was sent, in order.
    pub(super) sent: Arc<Mutex<Vec<Instant>>>,
    pub(super) matched: usize,
    pub(super) latencies: Vec<f64>,
    pub(super) frame_times: Vec<Instant>,
    pub(super) typing: bool,
    pub(super) finished_runs: usize,
    pub(super) rss: Vec<(usize, u64)>,
    pub(super) result: Arc<Mutex<Option<Value>>>,
    pub(super) done: bool,
    /// The modal's one-time code (`--idle modal`).
    pub(super) code: Option<String>,
    pub(super) answer: Arc<Mutex<Answer>>,
    /// Told when the first frame without the modal has been drawn after the answer.
    pub(super) gone: Arc<Notify>,
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
pub(super) struct Answer {
    /// `airlock approve` was started.
    pub(super) spawned: Option<Instant>,
    /// The first frame drawn without the modal after that.
    pub(super) gone: Option<Instant>,
}

/// Runs the real `airlock approve CODE` as a child (the same binary and AIRLOCK_HOME, as from
/// another terminal) and waits for the first frame drawn without the modal (up to 10 s).
pub(super) async fn answer_from_elsewhere(
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
pub(super) fn modal_code(app: &App) -> Option<String> {
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
                let floods = self.args_flooding;
                if !self.typing && app.running_tools() >= floods && flooding >= floods {
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
                        "runs": app.runs.len(),
                        "peak_rss_kib": status_kib("VmHWM:"),
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
