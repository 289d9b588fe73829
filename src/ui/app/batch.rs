//! The batch of calls the model asked for in one step, as the approval modal counts it: which of
//! them ask for a decision, which were asked, which are settled. The agent gates one call at a
//! time, so without this every modal would be "1 of 1"; with it the modal says "2 of 5" and
//! names the calls still to decide.
//!
//! The agent's forecast (`QueuedCall::needs_decision`) is corrected by what happens: a call
//! that asks counts even if it was not forecast to, and one settled without a question (a grant
//! given earlier in the batch covered it) stops counting.

use crate::protocol::QueuedCall;

#[derive(Debug, Clone, Default)]
pub struct Batch {
    calls: Vec<BatchCall>,
}

#[derive(Debug, Clone)]
struct BatchCall {
    call_id: String,
    title: String,
    /// Asks for a decision: forecast to, or did.
    asks: bool,
    /// An approval request came for it.
    asked: bool,
    /// It started or was denied.
    settled: bool,
}

/// Where one request stands in its batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// 1-based, among the calls of the batch that ask.
    pub index: usize,
    pub total: usize,
    /// The calls after it still to decide, in model order: (call id, one-line title), both as
    /// the model sent them (show them through `visible_line`).
    pub waiting: Vec<(String, String)>,
}

impl Batch {
    pub fn new(calls: Vec<QueuedCall>) -> Batch {
        Batch {
            calls: calls
                .into_iter()
                .map(|c| BatchCall {
                    call_id: c.call_id,
                    // Where a command would run is part of what it is.
                    title: match c.sandbox {
                        Some(label) => format!("{}  ({})", c.title, label.text),
                        None => c.title,
                    },
                    asks: c.needs_decision,
                    asked: false,
                    settled: false,
                })
                .collect(),
        }
    }

    fn find(&mut self, call_id: &str) -> Option<&mut BatchCall> {
        self.calls.iter_mut().find(|c| c.call_id == call_id)
    }

    /// An approval request came for `call_id`.
    pub fn asked(&mut self, call_id: &str) {
        if let Some(call) = self.find(call_id) {
            call.asks = true;
            call.asked = true;
        }
    }

    /// `call_id` started or was denied; one never asked no longer counts as a question.
    pub fn settled(&mut self, call_id: &str) {
        if let Some(call) = self.find(call_id) {
            call.settled = true;
            if !call.asked {
                call.asks = false;
            }
        }
    }

    /// How many calls of the batch still wait for a person's decision (asked or forecast to).
    pub fn undecided(&self) -> usize {
        self.calls.iter().filter(|c| c.asks && !c.settled).count()
    }

    /// Where the request for `call_id` stands; `None` when it is not in this batch.
    pub fn place(&self, call_id: &str) -> Option<Place> {
        let asking: Vec<&BatchCall> = self.calls.iter().filter(|c| c.asks).collect();
        let at = asking.iter().position(|c| c.call_id == call_id)?;
        Some(Place {
            index: at + 1,
            total: asking.len(),
            waiting: asking[at + 1..]
                .iter()
                .filter(|c| !c.settled)
                .map(|c| (c.call_id.clone(), c.title.clone()))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(forecast: &[bool]) -> Batch {
        Batch::new(
            forecast
                .iter()
                .enumerate()
                .map(|(i, asks)| QueuedCall {
                    call_id: format!("c{}", i + 1),
                    tool: "bash".into(),
                    title: format!("$ step {}", i + 1),
                    needs_decision: *asks,
                    sandbox: None,
                })
                .collect(),
        )
    }

    fn waiting(place: &Place) -> Vec<&str> {
        place.waiting.iter().map(|(id, _)| id.as_str()).collect()
    }

    #[test]
    fn a_request_is_counted_among_the_calls_of_its_batch_that_ask() {
        let mut b = batch(&[false, true, true, false, true]);
        b.settled("c1");
        b.asked("c2");
        let place = b.place("c2").unwrap();
        assert_eq!((place.index, place.total), (1, 3));
        assert_eq!(waiting(&place), vec!["c3", "c5"]);
        assert_eq!(place.waiting[0].1, "$ step 3");
        b.settled("c2");
        b.asked("c3");
        let place = b.place("c3").unwrap();
        assert_eq!((place.index, place.total), (2, 3));
        assert_eq!(waiting(&place), vec!["c5"]);
    }

    #[test]
    fn a_call_settled_without_a_question_stops_counting_and_an_unforeseen_question_starts() {
        let mut b = batch(&[true, true, false]);
        b.asked("c1");
        b.settled("c1");
        // A grant given for c1 covered c2: it ran without asking.
        b.settled("c2");
        // c3 was not forecast to ask, but did.
        b.asked("c3");
        let place = b.place("c3").unwrap();
        assert_eq!((place.index, place.total), (2, 2));
        assert!(place.waiting.is_empty());
    }

    #[test]
    fn a_request_from_outside_the_batch_has_no_place() {
        let b = batch(&[true]);
        assert_eq!(b.place("c9"), None);
        assert_eq!(Batch::default().place("c1"), None);
    }

    #[test]
    fn a_command_waiting_in_the_batch_is_named_with_the_sandbox_it_would_run_in() {
        let queued = |id: &str, profile: &str| QueuedCall {
            call_id: id.into(),
            tool: "bash".into(),
            title: "$ curl https://example.com".into(),
            needs_decision: true,
            sandbox: Some(crate::protocol::SandboxLabel {
                text: format!("sandbox {profile}"),
                unconfined: false,
            }),
        };
        let batch = Batch::new(vec![
            queued("c1", "workspace-write"),
            queued("c2", "network"),
        ]);
        let place = batch.place("c1").unwrap();
        assert_eq!(
            place.waiting,
            vec![(
                "c2".to_string(),
                "$ curl https://example.com  (sandbox network)".to_string()
            )]
        );
    }
}
