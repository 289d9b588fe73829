//! Running the person's hooks (`[[hooks]]`): each matching hook of an event is started with its
//! input as JSON on standard input (Claude Code's fields, see `claude`), in its own process
//! group, in the workspace, with the user's rights (they are the user's code) but without
//! airlock's keys in its environment; stopped at its time limit (the whole group); read as
//! Claude Code reads a hook. A hook that times out, crashes or answers garbage has no say, and
//! its outcome says why. Each hook's last result is kept in the state directory for `airlock
//! hooks list`.
//!
//! Imports only `protocol`, `clock`, `digest` and `visible`.

pub mod claude;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::protocol::{HookEvent, HookInput, HookOutcome, HookSpec, Hooks};

/// What a hook may print on each stream. A hook that prints more has no say (an answer cut
/// short could read as another answer); its standard error past this is dropped.
const OUTPUT_LIMIT: u64 = 1024 * 1024;

/// The hooks in force, ready to run.
pub struct HookRunner {
    specs: Vec<HookSpec>,
    /// Each spec's matcher, compiled once (`Err`: it matches nothing; the config refuses such a
    /// matcher before it gets here).
    matchers: Vec<Result<Option<regex::Regex>, regex::Error>>,
    /// Environment variables no hook sees (the providers' and servers' keys).
    hidden_env: Vec<String>,
    /// Where each hook's last result is kept (`None`: nowhere).
    last: Option<PathBuf>,
}

impl HookRunner {
    pub fn new(specs: Vec<HookSpec>, hidden_env: Vec<String>, last: Option<PathBuf>) -> Self {
        let matchers = specs
            .iter()
            .map(|s| {
                s.matcher
                    .as_ref()
                    .map(|m| regex::Regex::new(&format!("^(?:{m})$")))
                    .transpose()
            })
            .collect();
        HookRunner {
            specs,
            matchers,
            hidden_env,
            last,
        }
    }

    pub fn specs(&self) -> &[HookSpec] {
        &self.specs
    }

    /// Whether `spec` applies to this input: its tool matches (airlock's name or Claude Code's),
    /// and for `bash`, some simple command of the line starts with its prefix (or cannot be
    /// known before it runs: the hook is asked rather than skipped).
    fn matches(
        spec: &HookSpec,
        matcher: &Result<Option<regex::Regex>, regex::Error>,
        input: &HookInput,
    ) -> bool {
        let Some(tool) = &input.tool else {
            return spec.matcher.is_none() && spec.command_prefix.is_none();
        };
        match matcher {
            Err(_) => return false,
            Ok(Some(re))
                if !re.is_match(tool) && !re.is_match(&crate::protocol::claude_tool_name(tool)) =>
            {
                return false;
            }
            Ok(_) => {}
        }
        match &spec.command_prefix {
            None => true,
            Some(prefix) => {
                tool == "bash"
                    && commands_of(input)
                        .iter()
                        .any(|argv| argv.as_ref().is_none_or(|argv| starts_with(argv, prefix)))
            }
        }
    }

    /// Whether a hook's allow covers the whole call: with a `command_prefix`, every simple
    /// command of the line starts with it (a line that also runs something else, or a word
    /// only known when it runs, is not what the hook was written to allow).
    fn allow_covers(spec: &HookSpec, input: &HookInput) -> bool {
        match &spec.command_prefix {
            None => true,
            Some(prefix) => {
                let commands = commands_of(input);
                !commands.is_empty()
                    && commands
                        .iter()
                        .all(|argv| argv.as_ref().is_some_and(|argv| starts_with(argv, prefix)))
            }
        }
    }

    /// Runs one hook on `stdin`.
    pub async fn run_one(&self, spec: &HookSpec, event: HookEvent, stdin: &Value) -> HookOutcome {
        let mut outcome = HookOutcome {
            hook: spec.name.clone(),
            digest: spec.digest.clone(),
            say: None,
            reason: None,
            note: None,
            failure: None,
        };
        match self.spawn(spec, stdin).await {
            Err(why) => outcome.failure = Some(why),
            Ok((code, stdout, stderr)) => match claude::output(event, code, &stdout, &stderr) {
                Ok(said) => {
                    outcome.say = said.say.filter(|_| event.decides());
                    outcome.reason = said.reason;
                    outcome.note = said.note;
                }
                Err(why) => outcome.failure = Some(why),
            },
        }
        self.keep_last(event, &outcome);
        outcome
    }

    /// Starts the hook, feeds it, and waits for it up to its time limit: its exit code and
    /// output, or why there is none.
    async fn spawn(&self, spec: &HookSpec, stdin: &Value) -> Result<(i32, String, String), String> {
        let Some((program, args)) = spec.argv.split_first() else {
            return Err("it has no program".into());
        };
        let cwd = stdin["cwd"].as_str().unwrap_or(".");
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(cwd)
            .env("CLAUDE_PROJECT_DIR", cwd)
            .env(
                "AIRLOCK_HOOK_EVENT",
                stdin["hook_event_name"].as_str().unwrap_or(""),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for name in &self.hidden_env {
            command.env_remove(name);
        }
        // It runs in the workspace, which the agent writes: Python (the hook, or a program it
        // starts) would import a module the agent left there (`json.py`) before the standard
        // library's. With this, neither the working directory nor a script's own is searched.
        command.env("PYTHONSAFEPATH", "1");
        // Nor is a program found through the workspace: a search path entry inside it (an
        // activated virtualenv's bin/, a relative one) is dropped, and so is the virtualenv.
        if let Some(path) = std::env::var_os("PATH") {
            let kept: Vec<PathBuf> = std::env::split_paths(&path)
                .filter(|dir| dir.is_absolute() && !dir.starts_with(cwd))
                .collect();
            if let Ok(joined) = std::env::join_paths(kept) {
                command.env("PATH", joined);
            }
        }
        command.env_remove("VIRTUAL_ENV");
        let mut child = command
            .spawn()
            .map_err(|e| format!("it cannot be started ({program}: {e})"))?;
        let group = child.id();
        let input = stdin.to_string();
        let mut pipe_in = child.stdin.take();
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let work = async {
            if let Some(pipe) = pipe_in.as_mut() {
                // A hook that does not read its input is not an error.
                let _ = pipe.write_all(input.as_bytes()).await;
            }
            drop(pipe_in.take());
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            let read_out = async {
                if let Some(pipe) = out.as_mut() {
                    // One byte past the limit tells a whole answer from a cut one.
                    let _ = pipe.take(OUTPUT_LIMIT + 1).read_to_end(&mut stdout).await;
                }
            };
            let read_err = async {
                if let Some(pipe) = err.as_mut() {
                    let _ = pipe.take(OUTPUT_LIMIT).read_to_end(&mut stderr).await;
                }
            };
            tokio::join!(read_out, read_err);
            let status = child.wait().await;
            (status, stdout, stderr)
        };
        let limit = Duration::from_millis(spec.timeout_ms);
        match tokio::time::timeout(limit, work).await {
            Ok((Ok(status), stdout, stderr)) => {
                use std::os::unix::process::ExitStatusExt;
                let code = match (status.code(), status.signal()) {
                    (Some(code), _) => code,
                    (None, Some(signal)) => {
                        return Err(format!("it was killed by signal {signal}"));
                    }
                    (None, None) => return Err("it ended without an exit code".into()),
                };
                if stdout.len() as u64 > OUTPUT_LIMIT {
                    return Err(format!(
                        "it printed more than {} MiB, so its answer was not read",
                        OUTPUT_LIMIT / (1024 * 1024)
                    ));
                }
                let stdout = String::from_utf8(stdout)
                    .map_err(|_| "its output is not UTF-8 text, so it was not read".to_string())?;
                Ok((code, stdout, String::from_utf8_lossy(&stderr).into_owned()))
            }
            Ok((Err(e), _, _)) => Err(format!("it could not be waited for: {e}")),
            Err(_) => {
                // The whole group, and every process below the hook that left it (`setsid`):
                // found before the group goes, while they are still the hook's descendants.
                if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
                    use nix::sys::signal::{Signal, kill, killpg};
                    use nix::unistd::Pid;
                    let below = descendants(pid);
                    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                    for child in below {
                        let _ = kill(Pid::from_raw(child), Signal::SIGKILL);
                    }
                }
                Err(format!(
                    "it timed out after {} and was stopped",
                    seconds(spec.timeout_ms)
                ))
            }
        }
    }

    /// Keeps `outcome` as its hook's last result (best effort: a listing, not a record).
    fn keep_last(&self, event: HookEvent, outcome: &HookOutcome) {
        let Some(path) = &self.last else {
            return;
        };
        let mut all: serde_json::Map<String, Value> = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        all.insert(
            format!("{}:{}", outcome.hook, outcome.digest),
            json!({"at_ms": crate::clock::now_ms(), "event": event.as_str(), "outcome": outcome}),
        );
        if let Some(dir) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
        let temp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&temp, Value::Object(all).to_string()).is_ok() {
            let _ = std::fs::rename(&temp, path);
        }
    }
}

/// Every process below `root` (children, theirs, …), read from `/proc`: each process's parent
/// is the fourth field of its `stat`, after the name in parentheses.
fn descendants(root: i32) -> Vec<i32> {
    let mut parents: Vec<(i32, i32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(parent) = parent {
            parents.push((pid, parent));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let of = found[i];
        found.extend(parents.iter().filter(|(_, p)| *p == of).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// The simple commands of a `bash` call: as the gate parsed them, else (no parse given, as in
/// `airlock hooks test`) the line split at its words, as one command.
fn commands_of(input: &HookInput) -> Vec<Option<Vec<String>>> {
    if let Some(commands) = &input.commands {
        return commands.clone();
    }
    let line = input
        .args
        .as_ref()
        .and_then(|a| a["command"].as_str())
        .unwrap_or("");
    vec![Some(line.split_whitespace().map(str::to_string).collect())]
}

/// Whether `argv` starts with the words of `prefix` (`"git push"` matches `git push origin`,
/// and `git  push`; `"cargo "` matches `cargo build`, not `cargo-audit`).
fn starts_with(argv: &[String], prefix: &str) -> bool {
    let words: Vec<&str> = prefix.split_whitespace().collect();
    !words.is_empty() && argv.len() >= words.len() && argv.iter().zip(&words).all(|(a, w)| a == w)
}

impl Hooks for HookRunner {
    fn any(&self, event: HookEvent) -> bool {
        self.specs.iter().any(|s| s.event == event)
    }

    fn run(
        &self,
        event: HookEvent,
        input: HookInput,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<HookOutcome>> + Send + '_>> {
        Box::pin(async move {
            let stdin = claude::input(event, &input);
            let runs = self
                .specs
                .iter()
                .zip(&self.matchers)
                .filter(|(s, m)| s.event == event && Self::matches(s, m, &input))
                .map(|(spec, _)| async {
                    let mut outcome = self.run_one(spec, event, &stdin).await;
                    if outcome.say == Some(crate::protocol::HookSay::Allow)
                        && !Self::allow_covers(spec, &input)
                    {
                        let prefix = spec.command_prefix.as_deref().unwrap_or("");
                        outcome.say = None;
                        outcome.failure = Some(format!(
                            "its allow is for commands that start with `{}`, and this line runs \
                             others too",
                            prefix.trim()
                        ));
                    }
                    outcome
                });
            futures_util::future::join_all(runs).await
        })
    }
}

/// A hook's last result as kept, by name and digest: `(at_ms, event, outcome)`.
pub fn last_results(path: &std::path::Path) -> serde_json::Map<String, Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests;
