//! Starting a stdio server: the configured command, in the workspace, through the sandbox
//! launcher under the server's `sandbox` profile (in a session and process group of its own, so
//! `npx` and the node it starts go together, with no terminal), without airlock's key
//! variables, its stderr kept (the last lines explain a failure) instead of painted over the
//! cockpit.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use tokio::io::AsyncBufReadExt;

use crate::mcp::config::ConfiguredServer;
use crate::mcp::handler::{Handler, lock};
use crate::mcp::live::{Live, tail_text};
use crate::sandbox::plan::Plan;
use crate::sandbox::{Profile, Sandbox};

/// Lines of a server's stderr kept to explain a failure.
const STDERR_LINES: usize = 12;

/// How a `command` server starts: always through the sandbox launcher (a session of its own,
/// no terminal), under the plan of its `sandbox` profile, or unconfined when that is `off`.
pub(super) struct Confinement {
    launcher: PathBuf,
    plan: Option<Plan>,
}

impl Confinement {
    /// The confinement of `configured`. Fails closed: a profile the kernel cannot enforce (no
    /// Landlock) does not start the server, and neither does `off` from a project's config.
    pub(super) fn of(configured: &ConfiguredServer, sandbox: &Sandbox) -> Result<Self, String> {
        let profile = configured.config.sandbox();
        let name = &configured.name;
        if profile == Profile::Off {
            if configured.from_project {
                return Err(format!(
                    "`sandbox = \"off\"` in [mcp_servers.{name}] of {} is not taken from a project's config: only your own config may run a server with all of your rights; it was not started",
                    configured.file.display()
                ));
            }
            return Ok(Confinement {
                launcher: sandbox.launcher.clone(),
                plan: None,
            });
        }
        if let Some(why) = sandbox.policy.support.missing() {
            return Err(format!(
                "it cannot be started in its sandbox `{}`: {why}; it was not started (to run it with all of your rights, set `sandbox = \"off\"` in [mcp_servers.{name}] of your own config)",
                profile.as_str()
            ));
        }
        Ok(Confinement {
            launcher: sandbox.launcher.clone(),
            plan: Some(sandbox.plan(profile)?),
        })
    }

    /// What the modal and `airlock mcp list` say about it.
    pub(super) fn profile(&self) -> Profile {
        self.plan.as_ref().map_or(Profile::Off, |p| p.profile)
    }

    fn command(&self, program: &str) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.launcher);
        match &self.plan {
            Some(plan) => {
                command.args(plan.launcher_args());
                if let Some(temp) = &plan.temp {
                    for name in ["TMPDIR", "TMP", "TEMP"] {
                        command.env(name, temp);
                    }
                }
            }
            None => {
                command.args([crate::sandbox::LAUNCHER_ARG, "--unconfined"]);
            }
        }
        command
            .arg("--")
            .arg(program)
            .env("AIRLOCK_SANDBOX", self.profile().as_str());
        command
    }
}

/// Where `program` is, looked up on the `PATH` it will be started with, so a wrong `command`
/// is said before anything starts. A name with a `/` is taken as it is (from the workspace).
fn find(program: &str, path: Option<&str>) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = path
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Starts `program` for `configured` (confined as `confinement` says) and finishes the MCP
/// handshake.
pub(super) async fn start(
    configured: &ConfiguredServer,
    program: &str,
    workspace: &Path,
    hidden_env: &[String],
    confinement: &Confinement,
) -> Result<Live, String> {
    let config = &configured.config;
    let not_found = || {
        format!(
            "cannot start `{}`: not found on PATH; check `command` in [mcp_servers.{}] of {}",
            crate::visible::visible_line(program),
            configured.name,
            configured.file.display()
        )
    };
    let found = find(program, config.env.get("PATH").map(String::as_str)).ok_or_else(not_found)?;
    // The launcher makes the server's session (and so its process group).
    let mut command = confinement.command(&found.to_string_lossy());
    command
        .args(&config.args)
        .current_dir(workspace)
        .kill_on_drop(true);
    for name in crate::facts::envvars::HIDDEN_ENV
        .iter()
        .copied()
        .chain(hidden_env.iter().map(String::as_str))
    {
        command.env_remove(name);
    }
    command.envs(&config.env);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start `{}`: {e}; check `command` in [mcp_servers.{}] of {}",
                crate::visible::visible_line(program),
                configured.name,
                configured.file.display()
            )
        })?;
    let group = transport.id().map(|pid| pid as i32);
    let kept = Arc::new(Mutex::new(VecDeque::new()));
    let (stderr_done, stderr_read) = tokio::sync::watch::channel(stderr.is_none());
    if let Some(stderr) = stderr {
        let kept = kept.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = lock(&kept);
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(crate::visible::visible_line(
                    &line.chars().take(300).collect::<String>(),
                ));
            }
            let _ = stderr_done.send(true);
        });
    }
    let handler = Handler::default();
    let limit = config.startup_timeout();
    let guard = GroupGuard(group);
    let service = tokio::time::timeout(limit, handler.clone().serve(transport))
        .await
        .map_err(|_| {
            format!(
                "it did not finish the MCP handshake within {}s{}",
                limit.as_secs(),
                tail_text(&kept)
            )
        })?
        .map_err(|e| format!("the MCP handshake failed: {e}{}", tail_text(&kept)))?;
    std::mem::forget(guard);
    Ok(Live {
        service,
        handler,
        group,
        stderr: kept,
        stderr_read,
        secrets: Vec::new(),
        plan: confinement.plan.clone(),
    })
}

/// Kills a process group unless forgotten: a server that fails its handshake is not left behind.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
