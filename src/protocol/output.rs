//! How live output is thinned for a viewer: the agent sends `AgentEvent::ToolOutput` for a
//! viewer that keeps the first `OUTPUT_HEAD_LINES` lines and the last `OUTPUT_TAIL_LINES`, so
//! both sides must agree on these numbers, and on which lines can never be shown.

/// Lines a viewer keeps from the start of a run's output.
pub const OUTPUT_HEAD_LINES: usize = 200;
/// Lines a viewer keeps from the end of a run's output.
pub const OUTPUT_TAIL_LINES: usize = 400;

/// Past the head, the lines of `bytes` that can never be shown: all but the last
/// `OUTPUT_TAIL_LINES` complete ones. Returns how many, and where the kept part starts.
pub fn unseen_lines(bytes: &[u8]) -> Option<(u64, usize)> {
    let last_skipped = memchr::memrchr_iter(b'\n', bytes).nth(OUTPUT_TAIL_LINES)?;
    let skipped = memchr::memchr_iter(b'\n', &bytes[..=last_skipped]).count();
    Some((skipped as u64, last_skipped + 1))
}
