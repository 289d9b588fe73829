//! `write_file`: a file created or replaced whole, atomically, at the path the gate judged; its
//! preview is the diff against what is there now.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::held::Verb;
use super::{Place, amend, current_text, string};
use crate::approval::approver::{AmendRequest, Amended};
use crate::facts::catalog::{PathAccess, PathArg, PathTarget};
use crate::facts::diff;
use crate::output::{ToolError, ToolOutcome};
use crate::protocol::Amendment;
use crate::protocol::Preview;
use crate::protocol::Risk;
use crate::tools::tool::{
    ArgText, PreviewAt, Tool, ToolFuture, ToolRun, object_schema, path_schema,
};

const NAME: &str = "write_file";

pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'_, str> {
        "Create or replace a file with the given content.".into()
    }

    fn schema(&self) -> Value {
        object_schema(
            &[
                ("path", path_schema()),
                ("content", json!({"type": "string"})),
            ],
            &["path", "content"],
        )
    }

    fn risk(&self) -> Risk {
        Risk::Mutating
    }

    fn paths(&self) -> &'static [PathArg] {
        &[PathArg {
            key: "path",
            names: PathTarget::OneFile,
            access: PathAccess::Replace { content: "content" },
            default: None,
        }]
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["path"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        format!("write {}", args.get("path"))
    }

    fn preview(&self, args: &Value, at: PreviewAt<'_>) -> Option<Preview> {
        let text = |key: &str| args.get(key).and_then(Value::as_str);
        let raw = text("path")?;
        let place = match at.place(NAME) {
            Ok(place) => place,
            Err(unjudged) => return Some(*unjudged),
        };
        Some(diff::write_preview(raw, place.judged, text("content")?))
    }

    fn amend(&self, change: AmendRequest<'_>, at: PreviewAt<'_>) -> Result<Amended, String> {
        let raw = change
            .args
            .get("path")
            .and_then(Value::as_str)
            .ok_or("the call has no path")?;
        let place = at
            .place(NAME)
            .map_err(|_| "the call was not judged on a path")?;
        let mut args = change.args.clone();
        match change.amendment {
            Amendment::Hunks { keep } => {
                let current = match std::fs::symlink_metadata(place.judged) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                    _ => current_text(place, raw, diff::MAX_READ)?,
                };
                let kept = amend::keep_hunks(raw, &current, change.shown, keep)?;
                args["content"] = Value::String(kept.content);
                Ok(Amended {
                    args,
                    change: kept.change,
                    told: kept.told,
                })
            }
            Amendment::Content { content } => {
                args["content"] = Value::String(content.clone());
                Ok(Amended {
                    args,
                    change: "content edited by the user".into(),
                    told: amend::edited_told(raw),
                })
            }
            Amendment::Command { .. } => Err("a file change has no command to edit".into()),
        }
    }

    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move { write_file(run.place()?, &run.args) })
    }
}

/// Writes the file whole, atomically (a temporary file, then a rename), creating missing
/// directories on the way; an existing file keeps its permissions.
pub fn write_file(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", NAME)?;
    let content = string(args, "content", NAME)?;
    let held = place.judged(raw, Verb::Write).hold(true)?;
    let existed = held.replace(content.as_bytes())?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(ToolOutcome::text(format!(
        "{verb} {raw} ({} lines)\n",
        content.lines().count()
    )))
}
