//! The bash tool: `bash -c` in the workspace, in its own process group, output streamed as it
//! comes, bounded in memory, written in full to a log file. Timeout and cancellation kill the
//! whole group, so nothing the command started outlives it. A sandboxed run starts through
//! airlock's launcher (`crate::sandbox`), which confines bash and everything it starts; what the
//! sandbox refused is told at the end of the result.

mod pump;
mod reading;
pub mod tool;

pub use reading::utf8_ready;
use reading::{Batched, widen};

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use super::runlog::{LogLimits, LogSummary, RunLog, human_bytes};
use super::{OutputSink, ToolError, ToolOutcome, ToolStatus};
use crate::output::BoundedOutput;
use crate::output::{MAX_LINE_BYTES, Thinned};
use crate::protocol::Stream;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio_util::sync::CancellationToken;

/// How long a command may run when the call names no timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest timeout a call may ask for: a bigger `timeout_ms` runs with this one, and the
/// result says so.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// After the shell exits, how long its pipes may stay open (held by something it started in the
/// background) before the group is killed.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The most output handled as one batch: after a read, whatever else is already waiting in the
/// pipe is taken too (without waiting), so a flood is filed, logged and sent on in big batches
/// while a trickle still goes out at once.
const BATCH_BYTES: usize = 512 * 1024;
const ERR_BATCH_BYTES: usize = 128 * 1024;

pub struct BashRun {
    pub command: String,
    pub workspace: PathBuf,
    pub timeout: Duration,
    pub cancel: CancellationToken,
    pub sink: OutputSink,
    pub log: Option<PathBuf>,
    pub log_limits: LogLimits,
    /// Variables removed from the command's environment: [`HIDDEN_ENV`](crate::facts::envvars::HIDDEN_ENV) and the key variables
    /// the configuration names.
    pub hidden_env: Vec<String>,
    /// Said at the top of the result (a timeout that was lowered to the cap).
    pub note: Option<String>,
    /// Through the launcher (a session of its own, and the sandbox's plan when there is one).
    /// `None` runs bash directly, in a process group of its own (tests of the tool alone).
    pub sandbox: Option<SandboxedRun>,
}

/// How a run starts through the launcher (airlock's own binary): always in a session of its own,
/// with no controlling terminal; under `plan` when there is one, else unconfined (the sandbox
/// `off`, or no Landlock).
#[derive(Debug, Clone)]
pub struct SandboxedRun {
    pub launcher: PathBuf,
    pub plan: Option<crate::sandbox::plan::Plan>,
}

fn kill_group(pgid: Option<u32>) {
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
        // The group may already be gone; that is the goal. The launcher itself first: until it
        // has made its session (and so its group) the group does not exist yet.
        let _ = nix::sys::signal::kill(Pid::from_raw(pgid), Signal::SIGKILL);
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// Runs the command to its end (or its timeout, or cancellation): output streamed to the sink
/// and the log as it comes, the model's result made from what was kept.
pub async fn run(spec: BashRun) -> Result<ToolOutcome, ToolError> {
    let mut child = command(&spec)
        .spawn()
        .map_err(|e| ToolError::Io(format!("cannot start bash: {e}")))?;
    let pgid = child.id();
    let log = match open_log(spec.log.as_deref(), spec.log_limits) {
        Ok(log) => log,
        Err(e) => {
            kill_group(pgid);
            return Err(e);
        }
    };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        kill_group(pgid);
        return Err(ToolError::Io(
            "bash started without its output pipes".into(),
        ));
    };
    if let (Some(path), Some(_)) = (&spec.log, &log) {
        // A line cut in the live view says where all of it is.
        spec.sink.keep_note(format!(
            "the run log {} keeps {} of the output",
            path.display(),
            spec.log_limits.describe()
        ));
    }
    let reader = Reader {
        log,
        view: View {
            sink: spec.sink.clone(),
            output: Batched::new(),
            carry: [Vec::new(), Vec::new()],
            cut: false,
        },
    };
    let (reader, exit, status) = reader
        .read_until_done(&mut child, pgid, (stdout, stderr), &spec)
        .await?;
    let (output, cut, logged) = reader.finish();
    let shown = output.render();
    // What the sandbox refused goes to the model with the result, and to the person with the
    // live output (the results pane marks the run "sandbox refused").
    let refused = spec
        .sandbox
        .as_ref()
        .and_then(|s| s.plan.as_ref())
        .and_then(|plan| crate::sandbox::blocked::explain(plan, &shown));
    if let Some(note) = &refused {
        let _ = spec.sink.send(Stream::Stderr, note.as_bytes());
        spec.sink.flush();
    }
    let code = exit.and_then(|s| s.code());
    let status = if status == ToolStatus::Ok && code != Some(0) {
        ToolStatus::Failed
    } else {
        status
    };
    Ok(ToolOutcome {
        status,
        exit_code: code,
        content: result_text(
            &spec,
            status,
            code,
            (&output, &shown, cut),
            logged,
            refused.as_deref(),
        ),
        lines: output.total_lines(),
        log: spec.log.clone(),
    })
}

/// `fd` with `O_NONBLOCK` set: tokio hands its pipes back blocking, and the pump must be able
/// to take what a pipe holds without waiting for more.
fn non_blocking(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(&fd, FcntlArg::F_GETFL)?);
    fcntl(&fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(fd)
}

/// `bash -c` with the command, in the workspace, in its own process group, with the hidden
/// variables removed: through the sandbox's launcher when the run is sandboxed.
fn command(spec: &BashRun) -> tokio::process::Command {
    let mut command = match &spec.sandbox {
        Some(SandboxedRun {
            launcher,
            plan: Some(plan),
        }) => {
            let mut command = tokio::process::Command::new(launcher);
            command
                .args(plan.launcher_args())
                .arg("--")
                .arg("bash")
                .env("AIRLOCK_SANDBOX", plan.profile.as_str());
            if let Some(temp) = &plan.temp {
                for name in ["TMPDIR", "TMP", "TEMP"] {
                    command.env(name, temp);
                }
            }
            command
        }
        Some(SandboxedRun {
            launcher,
            plan: None,
        }) => {
            let mut command = tokio::process::Command::new(launcher);
            command
                .args([crate::sandbox::LAUNCHER_ARG, "--unconfined", "--", "bash"])
                .env("AIRLOCK_SANDBOX", crate::sandbox::Profile::Off.as_str());
            command
        }
        None => {
            let mut command = tokio::process::Command::new("bash");
            command.process_group(0);
            command
        }
    };
    // Through the launcher the command gets its group from the session the launcher makes.
    command
        .arg("-c")
        .arg(&spec.command)
        .current_dir(&spec.workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in crate::facts::envvars::HIDDEN_ENV {
        command.env_remove(name);
    }
    for name in &spec.hidden_env {
        command.env_remove(name);
    }
    command
}

fn open_log(
    path: Option<&std::path::Path>,
    limits: LogLimits,
) -> Result<Option<RunLog>, ToolError> {
    let Some(path) = path else {
        return Ok(None);
    };
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    // Every byte a command printed: for this user's eyes only.
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", path.display())))?;
    Ok(Some(RunLog::new(file, limits)))
}

/// Where a run's output goes as it is read: the log (every byte, within its cap), and the view.
/// Its pump (`pump.rs`) reads on a thread of its own.
struct Reader {
    log: Option<RunLog>,
    view: View,
}

/// The sink (the live view, in whole UTF-8 characters, thinned) and the model's window (the
/// sink's pieces).
struct View {
    sink: OutputSink,
    output: Batched,
    /// Per stream, the bytes of a character split across two reads, waiting for the rest.
    carry: [Vec<u8>; 2],
    /// A line was cut at `MAX_LINE_BYTES` (in what the live view passed on).
    cut: bool,
}

/// Where the next read of stdout goes: straight into the log's tail once the head is full (see
/// [`RunLog::read_space`]), else into `buf`. The same place until something is logged.
fn read_target<'b>(log: &'b mut Option<RunLog>, buf: &'b mut [u8]) -> &'b mut [u8] {
    match log.as_mut().and_then(|log| log.read_space(BATCH_BYTES)) {
        Some(space) => space,
        None => buf,
    }
}

impl Reader {
    /// A read of stderr: logged (copied), shown, filed.
    fn record(&mut self, stream: Stream, bytes: &[u8]) {
        if let Some(log) = self.log.as_mut() {
            log.write(bytes);
        }
        self.view.show(stream, bytes);
    }

    /// A read of `filled` bytes of stdout into [`read_target`]: logged (taken into the tail
    /// where it was read into it, copied otherwise), shown, filed.
    fn record_stdout(&mut self, buf: &[u8], filled: usize) {
        match self.log.as_mut() {
            Some(log) if log.reads_into_tail() => {
                self.view.show(Stream::Stdout, log.commit(filled));
            }
            Some(log) => {
                log.write(&buf[..filled]);
                self.view.show(Stream::Stdout, &buf[..filled]);
            }
            None => self.view.show(Stream::Stdout, &buf[..filled]),
        }
    }
}

impl View {
    /// To the live view (whole UTF-8 characters, thinned) and the model's window.
    fn show(&mut self, stream: Stream, bytes: &[u8]) {
        let pending = &mut self.carry[usize::from(stream == Stream::Stderr)];
        if pending.is_empty() {
            // The usual case: nothing carried over, so the read goes out as it is (no copy).
            let ready = utf8_ready(bytes);
            for piece in self.sink.send_paced(stream, &bytes[..ready]) {
                file(&mut self.output, &mut self.cut, stream, piece);
            }
            pending.extend_from_slice(&bytes[ready..]);
            return;
        }
        pending.extend_from_slice(bytes);
        let ready = utf8_ready(pending);
        for piece in self.sink.send_paced(stream, &pending[..ready]) {
            file(&mut self.output, &mut self.cut, stream, piece);
        }
        pending.drain(..ready);
    }
}

/// A piece the sink sent, into the model's window; whether it cut a line is noted.
fn file(output: &mut Batched, cut: &mut bool, stream: Stream, piece: Thinned<'_>) {
    *cut |= piece.cut > 0;
    output.push(stream, piece);
}

impl Reader {
    /// Reads both pipes (on a thread of its own, see [`Reader::pump`]) until the shell has exited
    /// and its pipes are closed (or the drain grace after its exit ran out, or the timeout, or
    /// cancellation). Returns the reader, how the shell exited, if it did, and the status so far.
    async fn read_until_done(
        self,
        child: &mut tokio::process::Child,
        pgid: Option<u32>,
        (stdout, stderr): (tokio::process::ChildStdout, tokio::process::ChildStderr),
        spec: &BashRun,
    ) -> Result<(Reader, Option<std::process::ExitStatus>, ToolStatus), ToolError> {
        widen(&stdout);
        widen(&stderr);
        let pipes = stdout
            .into_owned_fd()
            .and_then(|out| Ok((non_blocking(out)?, non_blocking(stderr.into_owned_fd()?)?)));
        let stop = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from);
        let ((stdout, stderr), (stop_read, stop_write)) = match (pipes, stop) {
            (Ok(pipes), Ok(stop)) => (pipes, stop),
            (Err(e), _) | (_, Err(e)) => {
                kill_group(pgid);
                return Err(ToolError::Io(format!(
                    "cannot read the command's output: {e}"
                )));
            }
        };
        let mut pump = match self.spawn_pump(stdout, stderr, stop_read) {
            Ok(pump) => pump,
            Err(e) => {
                kill_group(pgid);
                return Err(ToolError::Io(format!(
                    "cannot start reading the command's output: {e}"
                )));
            }
        };
        let deadline = tokio::time::sleep(spec.timeout);
        tokio::pin!(deadline);
        let grace = tokio::time::sleep(Duration::MAX);
        tokio::pin!(grace);
        let mut exit: Option<std::process::ExitStatus> = None;
        let mut pumped = None;
        let mut status = ToolStatus::Ok;
        loop {
            tokio::select! {
                joined = &mut pump, if pumped.is_none() => {
                    // A pump that stopped before both pipes ended (it panicked, or could not
                    // poll) can read no more: the command is ended rather than left running.
                    if !joined.as_ref().is_ok_and(|(_, ended)| *ended) {
                        kill_group(pgid);
                    }
                    pumped = Some(joined);
                    if exit.is_some() {
                        break;
                    }
                }
                status_now = child.wait(), if exit.is_none() => {
                    exit = status_now.ok();
                    if exit.is_none() || pumped.is_some() {
                        break;
                    }
                    grace.as_mut().reset(tokio::time::Instant::now() + DRAIN_GRACE);
                }
                _ = &mut grace, if exit.is_some() => {
                    // The shell is done; whatever it left running in the background goes with it.
                    kill_group(pgid);
                    break;
                }
                _ = &mut deadline => {
                    status = ToolStatus::TimedOut;
                    kill_group(pgid);
                    break;
                }
                _ = spec.cancel.cancelled() => {
                    status = ToolStatus::Cancelled;
                    kill_group(pgid);
                    break;
                }
            }
        }
        // Closing the stop pipe ends the pump at its next look; it hands the reader back.
        drop(stop_write);
        let joined = match pumped {
            Some(joined) => joined,
            None => pump.await,
        };
        if exit.is_none() {
            exit = child.wait().await.ok();
        }
        match joined {
            Ok((reader, _)) => Ok((reader, exit, status)),
            Err(_) => Err(ToolError::Failed(
                "reading the command's output failed: its reader stopped unexpectedly".into(),
            )),
        }
    }

    /// What was still carried goes out as it is, then the marker of a line left cut; the
    /// window and the log are closed. Returns the window, whether a line was cut, and the
    /// log's summary.
    fn finish(self) -> (BoundedOutput, bool, Option<LogSummary>) {
        let mut view = self.view;
        view.sink.flush();
        for (stream, i) in [(Stream::Stdout, 0), (Stream::Stderr, 1)] {
            let pending = std::mem::take(&mut view.carry[i]);
            for piece in view.sink.send(stream, &pending) {
                file(&mut view.output, &mut view.cut, stream, piece);
            }
        }
        for (stream, piece) in view.sink.end() {
            file(&mut view.output, &mut view.cut, stream, piece);
        }
        let cut = view.cut;
        (view.output.finish(), cut, self.log.map(RunLog::finish))
    }
}

/// The model's result: how the command ended, the kept output, what the sandbox refused, and
/// where the full output is (or why it is not all there).
fn result_text(
    spec: &BashRun,
    status: ToolStatus,
    code: Option<i32>,
    (output, shown, cut): (&BoundedOutput, &str, bool),
    logged: Option<LogSummary>,
    refused: Option<&str>,
) -> String {
    let headline = match status {
        ToolStatus::Ok => "exit code 0".to_string(),
        ToolStatus::Failed => match code {
            Some(c) => format!("exit code {c}"),
            None => "killed by a signal".to_string(),
        },
        ToolStatus::Cancelled => "cancelled: the process group was killed".to_string(),
        ToolStatus::TimedOut => format!(
            "timed out after {}s: the process group was killed",
            spec.timeout.as_secs()
        ),
    };
    let mut content = format!("{headline}\n");
    if let Some(note) = &spec.note {
        content.push_str(&format!("({note})\n"));
    }
    content.push_str(shown);
    if let Some(note) = refused {
        content.push_str(note);
    }
    if cut {
        content.push_str(&format!(
            "(lines longer than {} are cut here after their first {} bytes, marked \"… [line cut]\"; the command printed {} bytes in all)\n",
            human_bytes(MAX_LINE_BYTES as u64),
            MAX_LINE_BYTES,
            output.total_bytes()
        ));
    }
    if let (Some(path), Some(logged)) = (&spec.log, logged) {
        if logged.failed {
            content.push_str(&format!(
                "(the output log {} could not be written in full: is the disk full?)\n",
                path.display()
            ));
        } else if logged.left_out > 0 {
            content.push_str(&format!(
                "(output log: {}; it keeps {} of the output, {} bytes between them were left out)\n",
                path.display(),
                spec.log_limits.describe(),
                logged.left_out
            ));
        } else if output.omitted_lines() > 0 || cut {
            content.push_str(&format!("(full output: {})\n", path.display()));
        }
    }
    content
}

#[cfg(test)]
mod tests;
