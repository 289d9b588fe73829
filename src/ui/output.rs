//! A run's output as the results pane keeps it: head and tail only, fed by
//! `AgentEvent::ToolOutput` (already thinned by the tools' output sink for a viewer that keeps the protocol's
//! `OUTPUT_HEAD_LINES` and `OUTPUT_TAIL_LINES`). The type is the protocol's, shared with the
//! bash tool, so the UI imports nothing from `tools`.

pub use crate::protocol::{BoundedOutput, MAX_LINE_BYTES};
#[cfg(test)]
use crate::protocol::{OUTPUT_HEAD_LINES as HEAD_LINES, OUTPUT_TAIL_LINES as TAIL_LINES, Stream};

#[cfg(test)]
mod tests;
