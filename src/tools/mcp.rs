//! An MCP server's tool as a [`Tool`]: what it declares (its server's description and schema,
//! the risk its annotations give), its preview (server, tool, annotations, the arguments
//! pretty-printed), and its run, sent to its server against the definition it was judged on.
//! Its title is its name. The server and its connection stay in `crate::mcp`; this is only the
//! face every tool shows.

use std::borrow::Cow;

use crate::approval::approver::{AmendRequest, Amended};
use crate::mcp::McpTool;
use crate::protocol::Amendment;
use crate::protocol::Preview;
use crate::protocol::Risk;
use crate::tools::tool::{PreviewAt, Tool, ToolFuture, ToolRun};
use serde_json::Value;

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.exposed
    }

    fn description(&self) -> Cow<'_, str> {
        self.described().into()
    }

    fn schema(&self) -> Value {
        self.definition.input_schema.clone()
    }

    fn risk(&self) -> Risk {
        McpTool::risk(self)
    }

    fn preview(&self, args: &Value, at: PreviewAt<'_>) -> Option<Preview> {
        Some(crate::mcp::preview::preview(self, args, at.workspace))
    }

    /// A whole-file write of a known file tool (`mcp::file_tools`) can keep only some hunks
    /// of its change; any other MCP call is answered whole.
    fn amend(&self, change: AmendRequest<'_>, at: PreviewAt<'_>) -> Result<Amended, String> {
        let (Some(file_tool), Amendment::Hunks { keep }) = (&self.file_tool, change.amendment)
        else {
            return Err(format!(
                "`{}` is an MCP server's tool: only a whole-file write of a known file tool can \
                 be changed (hunk by hunk); approve or deny this call as proposed",
                self.exposed
            ));
        };
        let shown = match change.shown {
            Some(Preview::Mcp {
                change: Some(diff), ..
            }) => Some(diff.as_ref()),
            other => other,
        };
        let replaced = crate::mcp::file_tools::replaced(file_tool, change.args, at.workspace)?;
        let kept = crate::tools::files::amend::keep_hunks(
            &replaced.shown,
            &replaced.current,
            shown,
            keep,
        )?;
        let mut args = change.args.clone();
        args[replaced.content_key.as_str()] = Value::String(kept.content);
        Ok(Amended {
            args,
            change: kept.change,
            told: kept.told,
        })
    }

    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(
            run.tools
                .execute_mcp(run.approved, run.args, run.cancel, run.sink),
        )
    }
}
