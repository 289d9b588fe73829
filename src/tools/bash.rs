//! The bash tool: `bash -c` in the workspace, in its own process group, output streamed as it
//! comes, bounded in memory, written in full to a log file. Timeout and cancellation kill the
//! whole group, so nothing the command started outlives it. A sandboxed run starts through
//! airlock's launcher (`crate::sandbox`), which confines bash and everything it starts; what the
//! sandbox refused is told at the end of the result.

mod reading;
pub mod tool;

pub use reading::utf8_ready;
use reading::{Batched, Buffer, Pace, top_up, widen};

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::output::BoundedOutput;
use super::output::Stream;
use super::runlog::{LogLimits, LogSummary, RunLog};
use super::{OutputSink, ToolError, ToolOutcome, ToolStatus};

/// Environment variables never handed to the commands an agent runs, whatever the config says:
/// the key variables of every provider airlock knows, and `AIRLOCK_HOME`, which would tell a
/// command where the state database and its signing key live.
pub const HIDDEN_ENV: &[&str] = &[
    "AIRLOCK_HOME",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "AIRLOCK_API_KEY",
    "GEMINI_API_KEY",
];

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
    /// Variables removed from the command's environment: [`HIDDEN_ENV`] and the key variables
    /// the configuration names.
    pub hidden_env: Vec<String>,
    /// Said at the top of the result (a timeout that was lowered to the cap).
    pub note: Option<String>,
    /// Run in the sandbox: through this launcher, under this plan. `None` runs bash directly.
    pub sandbox: Option<SandboxedRun>,
}

/// How a sandboxed run starts: the launcher (airlock's own binary) and the plan it applies.
#[derive(Debug, Clone)]
pub struct SandboxedRun {
    pub launcher: PathBuf,
    pub plan: crate::sandbox::plan::Plan,
}

fn kill_group(pgid: Option<u32>) {
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
        // The group may already be gone; that is the goal.
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
    let mut reader = Reader {
        sink: &spec.sink,
        log,
        output: Batched::new(),
        carry: [Vec::new(), Vec::new()],
    };
    let (exit, status) = reader
        .read_until_done(&mut child, pgid, (stdout, stderr), &spec)
        .await;
    let (output, logged) = reader.finish();
    let code = exit.and_then(|s| s.code());
    let status = if status == ToolStatus::Ok && code != Some(0) {
        ToolStatus::Failed
    } else {
        status
    };
    Ok(ToolOutcome {
        status,
        exit_code: code,
        content: result_text(&spec, status, code, &output, logged),
        lines: output.total_lines(),
        log: spec.log.clone(),
    })
}

/// `bash -c` with the command, in the workspace, in its own process group, with the hidden
/// variables removed: through the sandbox's launcher when the run is sandboxed.
fn command(spec: &BashRun) -> tokio::process::Command {
    let mut command = match &spec.sandbox {
        Some(sandboxed) => {
            let mut command = tokio::process::Command::new(&sandboxed.launcher);
            command
                .args(sandboxed.plan.launcher_args())
                .arg("--")
                .arg("bash")
                .env("AIRLOCK_SANDBOX", sandboxed.plan.profile.as_str());
            if let Some(temp) = &sandboxed.plan.temp {
                for name in ["TMPDIR", "TMP", "TEMP"] {
                    command.env(name, temp);
                }
            }
            command
        }
        None => tokio::process::Command::new("bash"),
    };
    command
        .arg("-c")
        .arg(&spec.command)
        .current_dir(&spec.workspace)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in HIDDEN_ENV {
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
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    let file = std::fs::File::create(path)
        .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", path.display())))?;
    Ok(Some(RunLog::new(file, limits)))
}

/// Where a run's output goes as it is read: the log (every byte, within its cap), the sink (the
/// live view, in whole UTF-8 characters, thinned) and the model's window (the sink's pieces).
struct Reader<'a> {
    sink: &'a OutputSink,
    log: Option<RunLog>,
    output: Batched,
    /// Per stream, the bytes of a character split across two reads, waiting for the rest.
    carry: [Vec<u8>; 2],
}

impl Reader<'_> {
    fn record(&mut self, stream: Stream, bytes: &[u8]) {
        if let Some(log) = self.log.as_mut() {
            log.write(bytes);
        }
        let pending = &mut self.carry[usize::from(stream == Stream::Stderr)];
        if pending.is_empty() {
            // The usual case: nothing carried over, so the read goes out as it is (no copy).
            let ready = utf8_ready(bytes);
            for piece in self.sink.send(stream, &bytes[..ready]) {
                self.output.push(stream, piece);
            }
            pending.extend_from_slice(&bytes[ready..]);
            return;
        }
        pending.extend_from_slice(bytes);
        let ready = utf8_ready(pending);
        for piece in self.sink.send(stream, &pending[..ready]) {
            self.output.push(stream, piece);
        }
        pending.drain(..ready);
    }

    /// Reads both pipes until the shell has exited and its pipes are closed (or the drain grace
    /// after its exit ran out, or the timeout, or cancellation). Returns how it exited, if it
    /// did, and the status so far.
    async fn read_until_done(
        &mut self,
        child: &mut tokio::process::Child,
        pgid: Option<u32>,
        (mut stdout, mut stderr): (tokio::process::ChildStdout, tokio::process::ChildStderr),
        spec: &BashRun,
    ) -> (Option<std::process::ExitStatus>, ToolStatus) {
        widen(&stdout);
        widen(&stderr);
        let mut out_buf = Buffer::take(BATCH_BYTES);
        let mut err_buf = Buffer::take(ERR_BATCH_BYTES);
        let (mut out_open, mut err_open) = (true, true);
        let deadline = tokio::time::sleep(spec.timeout);
        tokio::pin!(deadline);
        let mut exit: Option<std::process::ExitStatus> = None;
        let grace = tokio::time::sleep(Duration::MAX);
        tokio::pin!(grace);
        let mut status = ToolStatus::Ok;
        let mut pace = Pace::new();
        while out_open || err_open || exit.is_none() {
            tokio::select! {
                n = stdout.read(&mut out_buf), if out_open => match n {
                    Ok(0) | Err(_) => out_open = false,
                    Ok(n) => {
                        let (filled, ended) = top_up(&mut stdout, &mut out_buf, n);
                        self.record(Stream::Stdout, &out_buf[..filled]);
                        out_open = !ended;
                        pace.after_read(filled, out_buf.len()).await;
                    }
                },
                n = stderr.read(&mut err_buf), if err_open => match n {
                    Ok(0) | Err(_) => err_open = false,
                    Ok(n) => {
                        let (filled, ended) = top_up(&mut stderr, &mut err_buf, n);
                        self.record(Stream::Stderr, &err_buf[..filled]);
                        err_open = !ended;
                        pace.after_read(filled, err_buf.len()).await;
                    }
                },
                status_now = child.wait(), if exit.is_none() => {
                    exit = status_now.ok();
                    if exit.is_none() {
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
        if exit.is_none() {
            exit = child.wait().await.ok();
        }
        (exit, status)
    }

    /// What was still carried goes out as it is; the window and the log are closed.
    fn finish(mut self) -> (BoundedOutput, Option<LogSummary>) {
        for (stream, i) in [(Stream::Stdout, 0), (Stream::Stderr, 1)] {
            let pending = std::mem::take(&mut self.carry[i]);
            for piece in self.sink.send(stream, &pending) {
                self.output.push(stream, piece);
            }
        }
        (self.output.finish(), self.log.map(RunLog::finish))
    }
}

/// The model's result: how the command ended, the kept output, what the sandbox refused, and
/// where the full output is (or why it is not all there).
fn result_text(
    spec: &BashRun,
    status: ToolStatus,
    code: Option<i32>,
    output: &BoundedOutput,
    logged: Option<LogSummary>,
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
    let shown = output.render();
    content.push_str(&shown);
    if let Some(note) = spec
        .sandbox
        .as_ref()
        .and_then(|s| crate::sandbox::blocked::explain(&s.plan, &shown))
    {
        content.push_str(&note);
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
        } else if output.omitted_lines() > 0 {
            content.push_str(&format!("(full output: {})\n", path.display()));
        }
    }
    content
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::tools::output::BoundedOutput;
    use reading::{FILE_BATCH, PIPE_BYTES};

    fn spec(command: &str, dir: &std::path::Path, timeout: Duration, sink: OutputSink) -> BashRun {
        BashRun {
            command: command.into(),
            workspace: dir.to_path_buf(),
            timeout,
            cancel: CancellationToken::new(),
            sink,
            log: Some(dir.join("run.log")),
            log_limits: LogLimits::DEFAULT,
            hidden_env: Vec::new(),
            note: None,
            sandbox: None,
        }
    }

    #[test]
    fn output_filed_in_batches_from_thinned_pieces_reads_exactly_as_every_byte_filed_read_by_read()
    {
        let mut reads: Vec<(Stream, Vec<u8>)> = Vec::new();
        for i in 0..3000u32 {
            let stream = if i % 7 == 0 {
                Stream::Stderr
            } else {
                Stream::Stdout
            };
            // Reads that end mid-line, some bigger than a batch, streams interleaved.
            let text = format!("line {i} {}\npart of {i}", "x".repeat((i % 13) as usize));
            reads.push((stream, text.into_bytes()));
            if i % 500 == 0 {
                reads.push((Stream::Stdout, "y\n".repeat(FILE_BATCH).into_bytes()));
            }
            // A flood read in small reads of a few hundred lines each: pieces that skip lines
            // while the kept part of earlier reads still waits unfiled.
            if i % 700 == 3 {
                for k in 0..50u32 {
                    let lines: String = (0..300 + k * 7).map(|n| format!("{k}.{n}\n")).collect();
                    reads.push((Stream::Stdout, lines.into_bytes()));
                }
            }
        }
        let mut direct = BoundedOutput::new();
        let mut batched = Batched::new();
        let mut thinner = crate::protocol::Thinner::new();
        for (stream, bytes) in &reads {
            direct.push(*stream, bytes);
            for piece in thinner.thin(bytes) {
                batched.push(*stream, piece);
            }
        }
        direct.finish();
        let batched = batched.finish();
        assert_eq!(batched.render(), direct.render());
        assert_eq!(batched.total_lines(), direct.total_lines());
        assert_eq!(batched.omitted_lines(), direct.omitted_lines());
    }

    #[test]
    fn an_output_pipe_is_widened_to_a_mebibyte_where_the_system_allows_it() {
        let (read, _write) = nix::unistd::pipe().unwrap();
        let before = nix::fcntl::fcntl(&read, nix::fcntl::FcntlArg::F_GETPIPE_SZ).unwrap();
        let allowed: i32 = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(before);
        let after = widen(&read).unwrap();
        assert_eq!(after, allowed.min(PIPE_BYTES).max(before));
    }

    #[test]
    fn a_read_buffer_given_back_is_handed_out_again_instead_of_a_new_one() {
        // A size no run uses, so other tests cannot take it in between.
        let first = Buffer::take(4321);
        let address = first.as_ptr();
        drop(first);
        let again = Buffer::take(4321);
        assert_eq!(again.as_ptr(), address);
        assert_eq!(again.len(), 4321);
    }

    #[test]
    fn a_character_split_across_reads_waits_for_its_last_byte() {
        let e = "é".as_bytes();
        assert_eq!(utf8_ready(&[b'a', e[0]]), 1);
        assert_eq!(utf8_ready(&[b'a', e[0], e[1]]), 3);
        assert_eq!(utf8_ready(&[b'a', 0xff]), 2);
        let crab = "🦀".as_bytes();
        assert_eq!(utf8_ready(&[b'a', crab[0], crab[1], crab[2]]), 1);
        assert_eq!(utf8_ready(crab), 4);
        assert_eq!(utf8_ready(&[]), 0);
    }

    #[test]
    fn an_invalid_byte_early_in_a_batch_does_not_let_a_split_character_at_its_end_through() {
        let e = "é".as_bytes();
        let mut batch = vec![b'x', 0xff, b'y'];
        batch.push(e[0]);
        assert_eq!(utf8_ready(&batch), 3);
    }

    #[tokio::test]
    async fn output_streams_while_the_command_is_still_running() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let sink = OutputSink::new(move |_, piece| {
            let _ = tx.send(String::from_utf8_lossy(piece.text).into_owned());
        });
        // The command waits for a file the test creates only after it has seen the first line:
        // if output were held until the end, this would time out instead.
        let run = tokio::spawn(run(spec(
            "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second",
            dir.path(),
            Duration::from_secs(20),
            sink,
        )));
        let first = rx.recv().await.unwrap();
        assert_eq!(first, "first\n");
        std::fs::write(dir.path().join("go"), "").unwrap();
        let outcome = run.await.unwrap().unwrap();
        assert_eq!(outcome.status, ToolStatus::Ok);
        assert_eq!(outcome.content, "exit code 0\nfirst\nsecond\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("run.log")).unwrap(),
            "first\nsecond\n"
        );
    }

    #[tokio::test]
    async fn a_flood_written_in_small_pieces_is_read_in_few_big_ones() {
        let dir = tempfile::tempdir().unwrap();
        let deliveries = Arc::new(Mutex::new(0usize));
        let counted = deliveries.clone();
        let sink = OutputSink::new(move |_, _| *counted.lock().unwrap() += 1);
        // Each `echo` is a write of its own: 20,000 small writes as fast as bash makes them.
        let outcome = run(spec(
            "for i in $(seq 20000); do echo \"line $i\"; done",
            dir.path(),
            Duration::from_secs(60),
            sink,
        ))
        .await
        .unwrap();
        assert_eq!(outcome.lines, 20_000);
        let deliveries = *deliveries.lock().unwrap();
        assert!(
            deliveries < 2_000,
            "{deliveries} deliveries for 20,000 writes: the reader did not wait for bigger reads"
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(Mutex::new(String::new()));
        let sink_seen = seen.clone();
        let sink = OutputSink::new(move |_, piece| {
            sink_seen
                .lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(piece.text));
        });
        let outcome = run(spec(
            "sleep 300 & echo $! > child.pid; wait",
            dir.path(),
            Duration::from_millis(300),
            sink,
        ))
        .await
        .unwrap();
        assert_eq!(outcome.status, ToolStatus::TimedOut);
        assert!(
            outcome.content.starts_with("timed out after 0s"),
            "{}",
            outcome.content
        );
        let pid = std::fs::read_to_string(dir.path().join("child.pid")).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        let mut gone = false;
        for _ in 0..100 {
            gone = std::fs::read_to_string(&stat)
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            if gone {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(gone, "the background child outlived the timeout");
    }

    #[tokio::test]
    async fn a_flood_fills_the_log_only_to_its_cap_and_the_result_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let sink = OutputSink::discard();
        let mut run_spec = spec(
            "yes | head -c 5000000",
            dir.path(),
            Duration::from_secs(60),
            sink,
        );
        run_spec.log_limits = LogLimits {
            head: 64 * 1024,
            tail: 16 * 1024,
        };
        let outcome = run(run_spec).await.unwrap();
        let log = std::fs::read(dir.path().join("run.log")).unwrap();
        assert!(
            log.len() < 100 * 1024,
            "the log grew to {} bytes",
            log.len()
        );
        let text = String::from_utf8(log).unwrap();
        let left_out = 5_000_000 - 64 * 1024 - 16 * 1024;
        assert!(
            text.contains(&format!(
                "[airlock: {left_out} bytes of output were left out"
            )),
            "{}",
            &text[64 * 1024..64 * 1024 + 200]
        );
        assert!(text.ends_with("y\ny\n"));
        assert!(
            outcome.content.contains(&format!(
                "it keeps the first 64 KiB and the last 16 KiB of the output, {left_out} bytes between them were left out"
            )),
            "{}",
            outcome.content
        );
    }

    #[tokio::test]
    async fn a_command_never_sees_a_hidden_variable_the_config_names() {
        let dir = tempfile::tempdir().unwrap();
        let sink = OutputSink::discard();
        let mut run_spec = spec(
            "echo \"[${HOME:+home}] [${PATH:+path}] [${AIRLOCK_TEST_HIDDEN-unset}]\"",
            dir.path(),
            Duration::from_secs(20),
            sink,
        );
        run_spec.hidden_env = vec!["HOME".into()];
        let outcome = run(run_spec).await.unwrap();
        assert_eq!(outcome.content, "exit code 0\n[] [path] [unset]\n");
    }
}
