//! Bounded tool output: what a run printed, kept in memory as bytes with a line index, head and
//! tail only. Whatever a tool prints, memory stays bounded; what was dropped is counted and said.
//! The type is shared with the cockpit and lives (and is tested) in `protocol::output`.
