//! A run's output as the results pane keeps it: head and tail only, fed by
//! `AgentEvent::ToolOutput` (already thinned by the tools' output sink for a viewer that keeps
//! `OUTPUT_HEAD_LINES` and `OUTPUT_TAIL_LINES`). The type is `output::BoundedOutput`, shared with
//! the bash tool, so the UI imports nothing from `tools`; its behaviour is tested where it lives,
//! in `output::bounded`.
