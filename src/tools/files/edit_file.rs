//! `edit_file`: one exact piece of text replaced (or every occurrence) in the file the gate
//! judged; its preview is the diff of the edit applied to the file as it is now.

use std::borrow::Cow;
use std::io::Read;

use serde_json::{Value, json};

use super::held::Verb;
use super::{Place, amend, string};
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

const NAME: &str = "edit_file";

pub struct EditFile;

impl Tool for EditFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'_, str> {
        "Replace an exact, unique string in a file.".into()
    }

    fn schema(&self) -> Value {
        object_schema(
            &[
                ("path", path_schema()),
                ("old", json!({"type": "string"})),
                ("new", json!({"type": "string"})),
                ("replace_all", json!({"type": "boolean"})),
            ],
            &["path", "old", "new"],
        )
    }

    fn risk(&self) -> Risk {
        Risk::Mutating
    }

    fn paths(&self) -> &'static [PathArg] {
        &[PathArg {
            key: "path",
            names: PathTarget::OneFile,
            access: PathAccess::Edit {
                old: "old",
                new: "new",
            },
            default: None,
        }]
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["path"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        format!("edit {}", args.get("path"))
    }

    fn preview(&self, args: &Value, at: PreviewAt<'_>) -> Option<Preview> {
        let text = |key: &str| args.get(key).and_then(Value::as_str);
        let raw = text("path")?;
        let place = match at.place(NAME) {
            Ok(place) => place,
            Err(unjudged) => return Some(*unjudged),
        };
        // The file the edit would change, opened as the tool opens it (no link followed), if it
        // is a regular file of a size a preview can hold.
        let current = match current_text(place, raw, diff::MAX_READ) {
            Ok(current) => current,
            Err(message) => return Some(Preview::Error { message }),
        };
        let replace_all = args
            .get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        match apply_edit(&current, text("old")?, text("new")?, replace_all) {
            Ok(updated) => Some(diff::file_change(raw, Some(current.as_bytes()), &updated)),
            Err(message) => Some(Preview::Error { message }),
        }
    }

    fn amend(&self, change: AmendRequest<'_>, at: PreviewAt<'_>) -> Result<Amended, String> {
        let raw = change
            .args
            .get("path")
            .and_then(Value::as_str)
            .ok_or("the call has no path")?;
        match change.amendment {
            // Only some hunks: the smallest unique edit that makes the file with them.
            Amendment::Hunks { keep } => {
                let place = at
                    .place(NAME)
                    .map_err(|_| "the call was not judged on a path")?;
                let current = current_text(place, raw, diff::MAX_READ)?;
                let kept = amend::keep_hunks(raw, &current, change.shown, keep)?;
                let (old, new) = amend::edit_between(&current, &kept.content)?;
                Ok(Amended {
                    args: json!({"path": raw, "old": old, "new": new}),
                    change: kept.change,
                    told: kept.told,
                })
            }
            // The replacement text, edited: the same text replaced, by what the person wrote.
            Amendment::Content { content } => {
                let mut args = change.args.clone();
                args["new"] = Value::String(content.clone());
                Ok(Amended {
                    args,
                    change: "replacement text edited by the user".into(),
                    told: amend::edited_told(raw),
                })
            }
            Amendment::Command { .. } => Err("a file change has no command to edit".into()),
        }
    }

    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move { edit_file(run.place()?, &run.args) })
    }
}

/// Largest file `edit_file` reads to change.
pub const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;

/// Replaces one exact piece of text (or every occurrence), reading and writing the file in the
/// same held directory.
pub fn edit_file(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", NAME)?;
    let old = string(args, "old", NAME)?;
    let new = string(args, "new", NAME)?;
    let replace_all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let held = place.judged(raw, Verb::Edit).hold(false)?;
    let (file, size) = held.open_regular()?;
    if size > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "{raw} is {size} bytes; edit_file changes files up to {MAX_EDIT_BYTES} bytes (use bash with a streaming tool such as sed for bigger ones)"
        )));
    }
    let mut current = String::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_string(&mut current)
        .map_err(|e| held.judged.cannot(e))?;
    let updated = apply_edit(&current, old, new, replace_all)
        .map_err(|why| ToolError::Failed(format!("{raw}: {why}")))?;
    held.replace(updated.as_bytes())?;
    Ok(ToolOutcome::text(format!("edited {raw}\n")))
}

/// The new content an edit produces, or why it cannot be applied.
pub fn apply_edit(
    current: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<String, String> {
    if old.is_empty() {
        return Err("`old` is empty; give the exact text to replace".into());
    }
    let count = current.matches(old).count();
    match (count, replace_all) {
        (0, _) => Err("the text to replace was not found in the file; read the file again and copy the text exactly".into()),
        (1, _) | (_, true) => Ok(current.replace(old, new)),
        (n, false) => Err(format!(
            "the text to replace appears {n} times; include more surrounding text to make it unique, or set replace_all"
        )),
    }
}

/// The text of the judged file, as `edit_file` would read it, for a preview: `Err` says why
/// there is none (not a regular file, larger than `max` bytes, a link, unreadable).
pub fn current_text(place: Place, raw: &str, max: u64) -> Result<String, String> {
    let held = place
        .judged(raw, Verb::Read)
        .hold(false)
        .map_err(|e| e.to_string())?;
    let (file, size) = held.open_regular().map_err(|e| e.to_string())?;
    if size > max {
        return Err(format!(
            "{raw} is {size} bytes, larger than an edit can be previewed ({max} bytes)"
        ));
    }
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| held.judged.cannot(e).to_string())?;
    Ok(text)
}
