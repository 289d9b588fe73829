//! `search`: the lines matching a regular expression, in one file or a directory tree walked
//! with `.gitignore` honoured.

use std::borrow::Cow;
use std::io::Read;

use nix::sys::stat::SFlag;
use serde_json::{Value, json};

use super::held::{self, Verb};
use super::{Place, string};
use crate::facts::catalog::{PathAccess, PathArg, PathTarget};
use crate::output::{ToolError, ToolOutcome};
use crate::protocol::Risk;
use crate::tools::tool::{ArgText, Tool, ToolFuture, ToolRun, object_schema, path_schema};

const NAME: &str = "search";

pub struct Search;

impl Tool for Search {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'_, str> {
        "Search file contents with a regular expression, respecting .gitignore.".into()
    }

    fn schema(&self) -> Value {
        object_schema(
            &[
                ("pattern", json!({"type": "string"})),
                ("path", path_schema()),
            ],
            &["pattern"],
        )
    }

    fn risk(&self) -> Risk {
        Risk::Safe
    }

    fn paths(&self) -> &'static [PathArg] {
        &[PathArg {
            key: "path",
            names: PathTarget::Tree,
            access: PathAccess::Read { verb: "search" },
            default: Some("."),
        }]
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["pattern", "path"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        format!(
            "search /{}/ in {}",
            args.get("pattern"),
            args.path_or_here("path")
        )
    }

    /// A walk of a big tree takes a while: it runs off the async threads.
    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move {
            let place = run.place()?;
            let (workspace, judged) = (place.workspace.to_path_buf(), place.judged.to_path_buf());
            let args = run.args;
            tokio::task::spawn_blocking(move || {
                let place = Place {
                    workspace: &workspace,
                    judged: &judged,
                };
                search(place, &args)
            })
            .await
            .map_err(|e| ToolError::Failed(format!("search stopped: {e}")))?
        })
    }
}

/// Most matches `search` reports.
pub const MAX_MATCHES: usize = 200;

/// Searches the judged path (a file, or a directory walked with `.gitignore` honoured). The walk
/// lists names; every file is then opened from the held directory without following a link, so
/// a directory swapped for a symlink while the search runs is skipped, not searched.
pub fn search(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let pattern = string(args, "pattern", NAME)?;
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let regex = regex::Regex::new(pattern).map_err(|e| {
        ToolError::InvalidArguments(format!(
            "`{pattern}` is not a valid regular expression: {e}"
        ))
    })?;
    let judged = place.judged(raw, Verb::Search);
    let held = judged.hold(false)?;
    let mut found = Matches::default();
    let is_dir = held
        .stat()?
        .is_some_and(|stat| held::kind(&stat) == SFlag::S_IFDIR);
    if is_dir {
        for entry in ignore::WalkBuilder::new(place.judged)
            .hidden(false)
            .build()
            .flatten()
        {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(place.judged) else {
                continue;
            };
            let Ok(Some(file)) = held.open_below(rel) else {
                continue;
            };
            if found.search(&judged.shown(entry.path()), file, &regex) {
                break;
            }
        }
    } else {
        // One file: a missing path or a FIFO is an error worth telling, not "no matches".
        let (file, _) = held.open_regular()?;
        found.search(&judged.shown(place.judged), file, &regex);
    }
    Ok(ToolOutcome::text(found.report()))
}

/// What `search` found so far.
#[derive(Default)]
struct Matches {
    out: String,
    count: usize,
    more: bool,
}

impl Matches {
    /// Adds the matching lines of one file; true once there are more than can be shown.
    fn search(&mut self, shown: &str, mut file: std::fs::File, regex: &regex::Regex) -> bool {
        let mut text = String::new();
        if file.read_to_string(&mut text).is_err() {
            return false;
        }
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if self.count == MAX_MATCHES {
                    self.more = true;
                    return true;
                }
                self.count += 1;
                self.out
                    .push_str(&format!("{shown}:{}: {line}\n", number + 1));
            }
        }
        false
    }

    fn report(mut self) -> String {
        if self.more {
            self.out.push_str(&format!(
                "… more than {MAX_MATCHES} matches; narrow the pattern or path\n"
            ));
        } else if self.count == 0 {
            self.out.push_str("no matches\n");
        }
        self.out
    }
}
