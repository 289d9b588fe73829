//! The approvals waiting for the driver, by call id: the approver `wait`s for a call's answer,
//! `Op::Decide` `answer`s it. One place owns the map, so a decision can reach only a call that
//! is waiting, once; and an interrupt drops every wait, which the approver reads as "denied"
//! (a dropped answer channel never allows anything).

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use super::lock;
use crate::protocol::{CallId, Decision};

#[derive(Default)]
pub(crate) struct Decisions {
    waiting: Mutex<HashMap<CallId, oneshot::Sender<Decision>>>,
}

/// Why an answer went nowhere.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unanswered {
    /// No approval is waiting for this call (never asked, or already decided).
    NotWaiting,
    /// The call stopped waiting just as the answer came (settled some other way).
    AlreadySettled,
}

impl Decisions {
    /// Starts waiting for `call_id`'s answer; the receiver resolves with it, or fails when the
    /// wait is dropped (`forget`, `drop_all`).
    pub(crate) fn wait(&self, call_id: &str) -> oneshot::Receiver<Decision> {
        let (reply, answer) = oneshot::channel();
        lock(&self.waiting).insert(call_id.to_string(), reply);
        answer
    }

    /// Gives `call_id` its answer; it stops waiting.
    pub(crate) fn answer(&self, call_id: &str, decision: Decision) -> Result<(), Unanswered> {
        let reply = lock(&self.waiting)
            .remove(call_id)
            .ok_or(Unanswered::NotWaiting)?;
        reply.send(decision).map_err(|_| Unanswered::AlreadySettled)
    }

    /// `call_id` no longer waits (it was answered elsewhere, or nobody can answer).
    pub(crate) fn forget(&self, call_id: &str) {
        lock(&self.waiting).remove(call_id);
    }

    /// Every wait ends unanswered: each approval resolves as denied.
    pub(crate) fn drop_all(&self) {
        lock(&self.waiting).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reaches_only_the_call_that_waits_for_it_and_only_once() {
        let decisions = Decisions::default();
        let mut first = decisions.wait("c1");
        assert_eq!(
            decisions.answer("c2", Decision::AllowOnce),
            Err(Unanswered::NotWaiting)
        );
        assert_eq!(decisions.answer("c1", Decision::AllowOnce), Ok(()));
        assert_eq!(first.try_recv(), Ok(Decision::AllowOnce));
        assert_eq!(
            decisions.answer("c1", Decision::AllowOnce),
            Err(Unanswered::NotWaiting)
        );
    }

    #[test]
    fn an_interrupt_leaves_every_waiting_call_unanswered_so_none_is_allowed() {
        let decisions = Decisions::default();
        let mut one = decisions.wait("c1");
        let mut two = decisions.wait("c2");
        decisions.drop_all();
        assert!(one.try_recv().is_err());
        assert!(two.try_recv().is_err());
        assert_eq!(
            decisions.answer("c1", Decision::AllowOnce),
            Err(Unanswered::NotWaiting)
        );
    }

    #[test]
    fn an_answer_to_a_call_that_stopped_waiting_says_it_was_already_settled() {
        let decisions = Decisions::default();
        drop(decisions.wait("c1"));
        assert_eq!(
            decisions.answer("c1", Decision::Deny { reason: None }),
            Err(Unanswered::AlreadySettled)
        );
    }
}
