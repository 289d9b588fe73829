//! The inbox: requests waiting elsewhere on this machine (another cockpit session, a parked
//! headless run), as the cockpit lists them, and the source it reads and answers them through
//! (the state database, behind `cli::inbox`). Only their one-time code answers them: the
//! source answers with the code it keeps sealed, as `airlock approve CODE` would.

use std::future::Future;
use std::pin::Pin;

/// One request waiting elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxEntry {
    /// Which stored request this is (the source's own key).
    pub id: i64,
    /// The cockpit session or headless run it belongs to.
    pub session: String,
    pub call_id: String,
    pub tool: String,
    /// The sub-agent that asks, as `a1 (task)`; `None`: that session's own agent.
    pub agent: Option<String>,
    pub risk: String,
    /// Every reason, one line each.
    pub reasons: Vec<String>,
    /// What would run: `$ command`, a diff's lines, or the arguments (model text: shown through
    /// `visible_line`).
    pub preview: Vec<String>,
    /// When it started waiting, and when it stops (unix milliseconds).
    pub created_ms: u64,
    pub expires_ms: u64,
    /// A headless run parked it (else a cockpit session's modal shows it too).
    pub parked: bool,
}

/// Where the cockpit reads the inbox and answers it.
pub trait InboxSource: Send + Sync {
    /// Every request waiting elsewhere now, oldest first.
    fn list(&self) -> Result<Vec<InboxEntry>, String>;

    /// Answers request `id` (allow once, or deny with a reason), as its one-time code would:
    /// what happened, in words, or why it could not (answered meanwhile, expired, tampered).
    fn answer(&self, id: i64, allow: bool, reason: Option<String>) -> Result<String, String>;

    /// Resolves when the inbox may have changed (a request added or answered anywhere).
    fn changes(&self) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}
