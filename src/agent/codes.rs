//! One-time codes: a request that may also be answered from another terminal (`airlock approve
//! CODE`) gets a code from a `CodeBook`, and whichever answer comes first wins. The agent knows
//! only these traits; the state database behind them is the driver's (`cli::codes`), so the
//! agent never opens SQLite.

use crate::protocol::{ApprovalRequest, Decision};

/// Gives approval requests their one-time codes.
pub trait CodeBook: Send + Sync {
    /// A code for `request` (the same one it had, when this call was asked before in the
    /// session, so a code printed then still answers it); `None` when no code can be given, and
    /// the request is then answered only by the driver.
    fn issue(&self, request: &ApprovalRequest) -> Option<Box<dyn IssuedCode>>;
}

/// The code of one request, while it waits.
pub trait IssuedCode: Send {
    fn code(&self) -> &str;

    /// The answer given with the code elsewhere, if there is one. Only answers airlock signed
    /// count: a record changed behind its back is not an answer.
    fn answered(&self) -> Option<Decision>;

    /// How the answer [`IssuedCode::answered`] gave came, for the audit: `{"channel": "code"}`
    /// (`airlock approve`, another cockpit's inbox) or `{"channel": "page", "device": NAME}`.
    fn via(&self) -> serde_json::Value {
        serde_json::json!({"channel": "code"})
    }

    /// Records the driver's answer, so the code no longer answers anything. When another
    /// terminal answered first, that answer stands and is returned.
    fn settle(&self, decision: &Decision) -> Option<Decision>;

    /// Resolves when an answer may have come (where the codes are kept changed), or after a
    /// while; the waiter then looks with [`IssuedCode::answered`]. By default, every 300 ms.
    fn changes(&self) -> crate::approval::approver::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(std::time::Duration::from_millis(300)))
    }
}
