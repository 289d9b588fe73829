//! Output events of one burst, merged before they are applied: a flood read in small pieces
//! arrives as many `ToolOutput` events between two frames, each holding the last lines of its
//! read, and filing each would file nearly every line of the flood. Merged, the lines a later
//! event skips are only counted: what the run's window keeps is exactly what applying each event
//! would have kept (tested).

use crate::protocol::AgentEvent;

use super::app::App;

/// Merges `next` into `held` when both are output of the same call and stream: text after text
/// is one text; a skip after held text (once that run's head is full) pushes the held text out
/// of the tail, so its lines are counted with the skip. Gives `next` back when it cannot.
pub(super) fn merge(app: &App, held: &mut AgentEvent, next: AgentEvent) -> Option<AgentEvent> {
    let AgentEvent::ToolOutput {
        call_id,
        stream,
        text,
        skipped,
    } = held
    else {
        return Some(next);
    };
    let AgentEvent::ToolOutput {
        call_id: next_call,
        stream: next_stream,
        text: next_text,
        skipped: next_skipped,
    } = next
    else {
        return Some(next);
    };
    let unmerged = |text, skipped| {
        Some(AgentEvent::ToolOutput {
            call_id: next_call.clone(),
            stream: next_stream,
            text,
            skipped,
        })
    };
    if *call_id != next_call || *stream != next_stream {
        return unmerged(next_text, next_skipped);
    }
    if next_skipped == 0 {
        text.push_str(&next_text);
    } else if head_is_full(app, call_id) {
        *skipped += memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64 + next_skipped;
        *text = next_text;
    } else {
        return unmerged(next_text, next_skipped);
    }
    None
}

fn head_is_full(app: &App, call_id: &str) -> bool {
    app.runs
        .iter()
        .rev()
        .find(|r| r.call_id == call_id)
        .is_some_and(|r| r.output.head_is_full())
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::protocol::{Stream, Thinner};
    use crate::ui::app::Status;

    fn started(app: &mut App, id: &str) {
        app.on_agent_event(AgentEvent::ToolStarted {
            call_id: id.into(),
            tool: "bash".into(),
            title: format!("$ {id}"),
        });
    }

    #[test]
    fn output_merged_in_a_burst_leaves_each_run_exactly_as_applying_every_event_would() {
        let mut next = crate::protocol::xorshift(0x853c_49e6_748f_ea9b);
        // Two runs flooding at once, on both streams, in reads of every size: thinned as the
        // tools' sink thins them (one thinner per run).
        let mut thinners = [Thinner::new(), Thinner::new()];
        let mut events = Vec::new();
        for round in 0..3000u64 {
            let run = next(2) as usize;
            let stream = if next(5) == 0 {
                Stream::Stderr
            } else {
                Stream::Stdout
            };
            let lines = [0, 1, 3, 150, 450, 2000][next(6) as usize];
            let mut text: String = (0..lines).map(|i| format!("{round}.{i}\n")).collect();
            if next(3) == 0 {
                text.push_str("partial ");
            }
            for piece in thinners[run].thin(text.as_bytes()) {
                events.push(AgentEvent::ToolOutput {
                    call_id: format!("c{run}"),
                    stream,
                    text: String::from_utf8(piece.text.to_vec()).unwrap(),
                    skipped: piece.skipped,
                });
            }
        }
        let mut one_by_one = App::new(Status::default(), Instant::now());
        let mut in_bursts = App::new(Status::default(), Instant::now());
        for app in [&mut one_by_one, &mut in_bursts] {
            started(app, "c0");
            started(app, "c1");
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for event in events {
            one_by_one.on_agent_event(event.clone());
            tx.send(event).unwrap();
        }
        drop(tx);
        while let Ok(first) = rx.try_recv() {
            crate::ui::apply_burst(&mut in_bursts, &mut rx, first);
        }
        for (a, b) in one_by_one.runs.iter().zip(&in_bursts.runs) {
            assert_eq!(a.output.lines(), b.output.lines(), "{}", a.call_id);
            assert_eq!(a.output.total_lines(), b.output.total_lines());
            assert_eq!(a.output.omitted_lines(), b.output.omitted_lines());
        }
        assert!(one_by_one.runs[0].output.omitted_lines() > 0);
    }
}
