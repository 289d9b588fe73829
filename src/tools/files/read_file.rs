//! `read_file`: a text file, whole up to a bound, from the path the gate judged.

use std::borrow::Cow;
use std::io::Read;

use serde_json::Value;

use super::held::Verb;
use super::{Place, string};
use crate::facts::catalog::{PathAccess, PathArg, PathTarget};
use crate::output::{ToolError, ToolOutcome};
use crate::protocol::Risk;
use crate::tools::tool::{ArgText, Tool, ToolFuture, ToolRun, object_schema, path_schema};

const NAME: &str = "read_file";

pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'_, str> {
        "Read a text file.".into()
    }

    fn schema(&self) -> Value {
        object_schema(&[("path", path_schema())], &["path"])
    }

    fn risk(&self) -> Risk {
        Risk::Safe
    }

    fn paths(&self) -> &'static [PathArg] {
        &[PathArg {
            key: "path",
            names: PathTarget::OneFile,
            access: PathAccess::Read { verb: "read" },
            default: None,
        }]
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["path"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        format!("read {}", args.get("path"))
    }

    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move { read_file(run.place()?, &run.args) })
    }
}

/// Largest file `read_file` returns in full; beyond it, the head and a note.
pub const MAX_READ_BYTES: usize = 256 * 1024;

pub fn read_file(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", NAME)?;
    let held = place.judged(raw, Verb::Read).hold(false)?;
    let (file, size) = held.open_regular()?;
    let mut bytes = Vec::with_capacity(size.min(MAX_READ_BYTES as u64) as usize);
    // Read no more than is shown: a file that grows while it is read cannot grow the read.
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| held.judged.cannot(e))?;
    let shown = &bytes[..bytes.len().min(MAX_READ_BYTES)];
    let mut text = String::from_utf8_lossy(shown).into_owned();
    if bytes.len() > MAX_READ_BYTES {
        let total = size.max(bytes.len() as u64);
        text.push_str(&format!(
            "\n… {} more bytes not shown (file is {} bytes)\n",
            total - MAX_READ_BYTES as u64,
            total
        ));
    }
    Ok(ToolOutcome::text(text))
}
