//! Where a server's notifications go: progress to the output of the call that asked for it
//! (by progress token), a changed tool list to a flag the next call reads (it lists again).
//! One handler per connection, whatever the transport.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::ProgressNotificationParam;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};

use crate::output::OutputSink;
use crate::protocol::Stream;

/// Progress notifications and list changes from the server, routed to whoever waits for them.
#[derive(Clone, Default)]
pub(super) struct Handler {
    pub(super) progress: Arc<Mutex<Progress>>,
    pub(super) list_changed: Arc<AtomicBool>,
}

/// Where each call's progress goes. A server may report progress before the call that asked
/// for it is registered (the request is on its way while its handle is made): those lines wait
/// in `early`, bounded, and go to the call's output when it registers.
#[derive(Default)]
pub(super) struct Progress {
    sinks: HashMap<String, OutputSink>,
    early: HashMap<String, Vec<String>>,
}

/// At most this many unclaimed progress tokens, and lines per token, are kept.
const EARLY_PROGRESS: usize = 32;

impl Progress {
    fn report(&mut self, token: String, line: String) {
        if let Some(sink) = self.sinks.get(&token) {
            sink.send(Stream::Stderr, line.as_bytes());
            return;
        }
        if self.early.len() >= EARLY_PROGRESS && !self.early.contains_key(&token) {
            self.early.clear();
        }
        let lines = self.early.entry(token).or_default();
        if lines.len() < EARLY_PROGRESS {
            lines.push(line);
        }
    }

    pub(super) fn register(&mut self, token: String, sink: OutputSink) {
        for line in self.early.remove(&token).unwrap_or_default() {
            sink.send(Stream::Stderr, line.as_bytes());
        }
        self.sinks.insert(token, sink);
    }

    pub(super) fn unregister(&mut self, token: &str) {
        self.sinks.remove(token);
        self.early.remove(token);
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn token_key(token: &impl serde::Serialize) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl ClientHandler for Handler {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let total = params.total.map(|t| format!("/{t}")).unwrap_or_default();
        let message = params
            .message
            .map(|m| format!(": {}", crate::visible::visible_line(&m)))
            .unwrap_or_default();
        let line = format!("progress {}{total}{message}\n", params.progress);
        lock(&self.progress).report(token_key(&params.progress_token), line);
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.list_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> (OutputSink, Arc<Mutex<String>>) {
        let seen = Arc::new(Mutex::new(String::new()));
        let into = seen.clone();
        let sink = OutputSink::new(move |_, piece| {
            lock(&into).push_str(&String::from_utf8_lossy(piece.text));
        });
        (sink, seen)
    }

    #[test]
    fn progress_reported_before_its_call_is_registered_reaches_the_call_in_order() {
        let mut progress = Progress::default();
        progress.report("1".into(), "progress 1/3\n".into());
        let (sink, seen) = recording();
        progress.register("1".into(), sink);
        progress.report("1".into(), "progress 2/3\n".into());
        assert_eq!(*lock(&seen), "progress 1/3\nprogress 2/3\n");
        progress.unregister("1");
        progress.report("1".into(), "late\n".into());
        assert_eq!(*lock(&seen), "progress 1/3\nprogress 2/3\n");
    }

    #[test]
    fn unclaimed_progress_is_bounded() {
        let mut progress = Progress::default();
        for token in 0..1000 {
            for line in 0..100 {
                progress.report(token.to_string(), format!("{line}\n"));
            }
        }
        assert!(progress.early.len() <= EARLY_PROGRESS);
        assert!(progress.early.values().all(|l| l.len() <= EARLY_PROGRESS));
    }
}
