//! What a tool is: the one trait each tool implements next to its code, so everything airlock
//! says or decides about a tool (the schema offered to the model, its declared risk, which
//! arguments are paths, a call's title in the cockpit, the modal's preview, how it runs) comes
//! from one place. The gate never sees this trait: it sees the [`ToolDescriptor`] made from it
//! (`approval` does not import `tools`); the registry (`tools::registry`) lists the built-ins.

use std::borrow::Cow;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::files::Place;
use super::{OutputSink, ToolError, ToolOutcome, ToolRegistry};
use crate::approval::approver::{AmendRequest, Amended};
use crate::approval::gate::Approved;
use crate::facts::catalog::{PathArg, ToolDescriptor};
use crate::protocol::Preview;
use crate::protocol::Risk;

/// A running tool's work: boxed, so the registry can hold tools of different types.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutcome, ToolError>> + Send + 'a>>;

pub trait Tool: Send + Sync {
    /// The name the model calls it by, which rules and grants name too.
    fn name(&self) -> &str;

    /// What the model is told the tool does.
    fn description(&self) -> Cow<'_, str>;

    /// The JSON schema of its arguments, offered to the model.
    fn schema(&self) -> Value;

    /// How much harm a call can do, before the policy looks at its arguments.
    fn risk(&self) -> Risk;

    /// The arguments that name a path, and what the tool does to what they name.
    fn paths(&self) -> &'static [PathArg] {
        &[]
    }

    /// The argument that holds a shell command the tool runs, if it runs one.
    fn command(&self) -> Option<&'static str> {
        None
    }

    /// The arguments [`Tool::title`] reads (string values only): the title of a frozen call is
    /// read from its canonical text without building the rest (a write's content can be huge).
    fn title_fields(&self) -> &'static [&'static str] {
        &[]
    }

    /// A one-line title of a call, for the cockpit (conversation and results pane).
    fn title(&self, args: &ArgText<'_>) -> String {
        let _ = args;
        self.name().to_string()
    }

    /// The title of a refused call: a refusal may be about any part of a call, so a tool may
    /// show more of it here than its running title does.
    fn refused_title(&self, args: &ArgText<'_>) -> String {
        self.title(args)
    }

    /// What the approval modal shows of a call: the diff it would make, the command it would run.
    fn preview(&self, args: &Value, at: PreviewAt<'_>) -> Option<Preview> {
        let _ = (args, at);
        None
    }

    /// The call as a person changed it before approving (see `Previewer::amend`): its new
    /// arguments and what to say of the change, or why this change cannot be made. By default
    /// a tool's calls cannot be changed.
    fn amend(&self, change: AmendRequest<'_>, at: PreviewAt<'_>) -> Result<Amended, String> {
        let _ = at;
        Err(format!(
            "`{}` calls cannot be changed before approving; approve or deny this one as proposed",
            change.tool
        ))
    }

    /// Runs an approved call.
    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a>;
}

/// The gate's view of a tool: what it declares, nothing of how it runs.
pub fn descriptor(tool: &dyn Tool) -> ToolDescriptor {
    ToolDescriptor {
        name: tool.name().to_string(),
        description: tool.description().into_owned(),
        schema: tool.schema(),
        risk: Some(tool.risk()),
        paths: tool.paths().to_vec(),
        command: tool.command(),
    }
}

/// The string arguments of a call as a title reads them: a missing or non-string one reads as
/// empty.
pub struct ArgText<'a> {
    read: &'a dyn Fn(&str) -> Option<&'a str>,
}

impl<'a> ArgText<'a> {
    pub fn new(read: &'a dyn Fn(&str) -> Option<&'a str>) -> Self {
        ArgText { read }
    }

    pub fn get(&self, key: &str) -> &'a str {
        (self.read)(key).unwrap_or("")
    }

    /// A path argument that may be left out: `.` when it is.
    pub fn path_or_here(&self, key: &str) -> &'a str {
        match self.get(key) {
            "" => ".",
            path => path,
        }
    }
}

/// Where a preview is made: the workspace, and the physical path the policy judged for a file
/// call (the file the tool would change, the same one it opens).
#[derive(Debug, Clone, Copy)]
pub struct PreviewAt<'a> {
    pub workspace: &'a Path,
    pub judged: Option<&'a Path>,
}

impl<'a> PreviewAt<'a> {
    /// Where a file tool's preview reads, or the preview saying there is nothing to show.
    pub fn place(&self, tool: &str) -> Result<Place<'a>, Box<Preview>> {
        match self.judged {
            Some(judged) => Ok(Place {
                workspace: self.workspace,
                judged,
            }),
            None => Err(Box::new(Preview::Error {
                message: format!(
                    "`{tool}` was not judged on a path, so there is nothing to preview"
                ),
            })),
        }
    }
}

/// One approved call, handed to its tool: the arguments from the frozen text (re-checked against
/// the approved digest), and what the registry provides around it.
pub struct ToolRun<'a> {
    pub tools: &'a ToolRegistry,
    pub approved: Approved,
    pub args: Value,
    pub cancel: CancellationToken,
    pub sink: OutputSink,
    /// Who starts sub-agents for an `agent` call (`None` outside an agent's turn).
    pub agents: Option<&'a dyn super::agent::SubAgents>,
}

impl ToolRun<'_> {
    /// Where a file tool works: the physical path the gate judged for this call. A call
    /// approved without one runs nothing.
    pub fn place(&self) -> Result<Place<'_>, ToolError> {
        let judged = self.approved.judged_path().ok_or_else(|| {
            ToolError::Tampered(format!(
                "`{}` was approved without the path it was judged on; nothing ran",
                self.approved.tool()
            ))
        })?;
        Ok(Place {
            workspace: &self.tools.workspace,
            judged,
        })
    }
}

/// The schema of an object with these properties, these of them required, and no others.
pub fn object_schema(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The schema of a path argument.
pub fn path_schema() -> Value {
    json!({"type": "string", "description": "path, relative to the workspace or absolute"})
}
