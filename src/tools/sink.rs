//! Where a running tool's live output goes. Whatever a tool sends is thinned here, on its way
//! out (one [`Thinner`] per call, shared by its two streams), so a flood crosses to the driver as
//! what a head-and-tail view can still show, whichever tool printed it. The pieces go back to the
//! sender too: a tool that keeps its own window of the same output (bash, for the model's result)
//! files them without looking at every byte a second time.

use std::sync::{Arc, Mutex};

use crate::protocol::{Stream, Thinned, Thinner};

type Deliver = dyn Fn(Stream, Thinned<'_>) + Send + Sync;

/// A call's live output: thinned, then handed to `deliver` (the agent turns each piece into an
/// `AgentEvent::ToolOutput`).
#[derive(Clone)]
pub struct OutputSink {
    thinner: Arc<Mutex<Thinner>>,
    deliver: Arc<Deliver>,
}

impl OutputSink {
    pub fn new(deliver: impl Fn(Stream, Thinned<'_>) + Send + Sync + 'static) -> OutputSink {
        OutputSink {
            thinner: Arc::new(Mutex::new(Thinner::new())),
            deliver: Arc::new(deliver),
        }
    }

    /// A sink that shows nothing (tests, and runs nobody watches).
    pub fn discard() -> OutputSink {
        OutputSink::new(|_, _| {})
    }

    /// Sends `bytes` of `stream`, thinned; returns the pieces as they were delivered.
    pub fn send<'a>(&self, stream: Stream, bytes: &'a [u8]) -> Vec<Thinned<'a>> {
        let pieces = self
            .thinner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .thin(bytes);
        for piece in &pieces {
            (self.deliver)(stream, *piece);
        }
        pieces
    }
}

impl std::fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSink")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{BoundedOutput, OUTPUT_HEAD_LINES};

    #[test]
    fn a_flood_sent_through_a_sink_arrives_thinned_and_a_window_fed_either_way_keeps_the_same() {
        let delivered = Arc::new(Mutex::new((BoundedOutput::new(), 0usize)));
        let into = delivered.clone();
        let sink = OutputSink::new(move |stream, piece| {
            let mut seen = into.lock().unwrap();
            seen.0.skip(stream, piece.skipped);
            seen.0.push(stream, piece.text);
            seen.1 += piece.text.len();
        });
        let (mut whole, mut from_pieces) = (BoundedOutput::new(), BoundedOutput::new());
        let text: String = (0..100_000).map(|i| format!("{i}\n")).collect();
        for chunk in text.as_bytes().chunks(64 * 1024) {
            whole.push(Stream::Stdout, chunk);
            for piece in sink.send(Stream::Stdout, chunk) {
                from_pieces.skip(Stream::Stdout, piece.skipped);
                from_pieces.push(Stream::Stdout, piece.text);
            }
        }
        let seen = delivered.lock().unwrap();
        assert_eq!(seen.0.lines(), whole.lines());
        assert_eq!(from_pieces.lines(), whole.lines());
        assert_eq!(seen.0.total_lines(), 100_000);
        assert!(whole.lines().len() > OUTPUT_HEAD_LINES);
        assert!(
            seen.1 < text.len() / 10,
            "{} of {} bytes crossed",
            seen.1,
            text.len()
        );
    }
}
