//! Starting a stdio server: the configured command, in the workspace, in a process group of
//! its own (so `npx` and the node it starts go together), without airlock's key variables, its
//! stderr kept (the last lines explain a failure) instead of painted over the cockpit.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use tokio::io::AsyncBufReadExt;

use crate::mcp::config::ConfiguredServer;
use crate::mcp::handler::{Handler, lock};
use crate::mcp::live::{Live, tail_text};

/// Lines of a server's stderr kept to explain a failure.
const STDERR_LINES: usize = 12;

/// Starts `program` for `configured` and finishes the MCP handshake.
pub(super) async fn start(
    configured: &ConfiguredServer,
    program: &str,
    workspace: &Path,
    hidden_env: &[String],
) -> Result<Live, String> {
    let config = &configured.config;
    let mut command = tokio::process::Command::new(program);
    command
        .args(&config.args)
        .current_dir(workspace)
        .process_group(0)
        .kill_on_drop(true);
    for name in crate::tools::bash::HIDDEN_ENV
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
