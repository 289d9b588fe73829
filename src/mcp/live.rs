//! One connection to a server, whatever carries it: the rmcp service, the handler its
//! notifications reach, and for a server airlock started (stdio) its process group and the last
//! lines of its stderr, which explain a failure. Dropping it kills that process group; a remote
//! (HTTP) server has none, and its connection simply closes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::RunningService;

use crate::mcp::handler::{Handler, lock};

pub(super) struct Live {
    pub(super) service: RunningService<RoleClient, Handler>,
    pub(super) handler: Handler,
    pub(super) group: Option<i32>,
    pub(super) stderr: Arc<Mutex<VecDeque<String>>>,
    /// Becomes true once the server's stderr is read to its end (the process is gone).
    pub(super) stderr_read: tokio::sync::watch::Receiver<bool>,
    /// Texts never shown in an error (the values of a remote server's headers and token): an
    /// error from the HTTP stack may quote a request.
    pub(super) secrets: Vec<String>,
    /// The sandbox plan a server airlock started runs under (`None`: a remote server, or `off`):
    /// its refusals are explained to the model like a command's.
    pub(super) plan: Option<crate::sandbox::plan::Plan>,
}

impl Live {
    /// A connection to a server airlock did not start (nothing to kill, no stderr).
    pub(super) fn remote(
        service: RunningService<RoleClient, Handler>,
        handler: Handler,
        secrets: Vec<String>,
    ) -> Live {
        let (_, stderr_read) = tokio::sync::watch::channel(true);
        Live {
            service,
            handler,
            group: None,
            stderr: Arc::default(),
            stderr_read,
            secrets,
            plan: None,
        }
    }

    /// The name the server gave itself at the handshake (`serverInfo.name`).
    pub(super) fn server_name(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()))
    }

    pub(super) fn alive(&self) -> bool {
        !self.service.is_closed() && !self.service.peer().is_transport_closed()
    }

    pub(super) fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }

    /// `error` with what the server's stderr said, secrets hidden.
    pub(super) fn explain(&self, error: &str) -> String {
        hide(&format!("{error}{}", self.stderr_tail()), &self.secrets)
    }

    /// The stderr tail of a server that stopped, once its last lines are read (a moment at
    /// most: they are what explains the crash).
    pub(super) async fn last_words(&self) -> String {
        let mut read = self.stderr_read.clone();
        let _ = tokio::time::timeout(Duration::from_millis(500), read.wait_for(|done| *done)).await;
        self.stderr_tail()
    }
}

pub(super) fn tail_text(lines: &Mutex<VecDeque<String>>) -> String {
    let lines = lock(lines);
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "; its last stderr lines: {}",
            lines.iter().cloned().collect::<Vec<_>>().join(" | ")
        )
    }
}

/// `text` with every secret replaced by `[hidden]`.
pub(super) fn hide(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(text.to_string(), |text, secret| {
            text.replace(secret.as_str(), "[hidden]")
        })
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            // The group may be gone already; then there is nothing to stop.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
