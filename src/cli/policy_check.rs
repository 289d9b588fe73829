//! `airlock policy check`: the policy as a filter, JSON lines in, one verdict per line out.
//! A malformed line gets an error line and the run goes on; nothing is ever executed.

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approval::paths::PathContext;
use crate::approval::policy::Policy;
use crate::approval::risk::ToolCatalog;
use crate::approval::rules::Rules;
use crate::cli::PolicyCheckArgs;
use crate::store;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine {
    #[serde(default)]
    id: Value,
    tool: String,
    #[serde(default = "empty_object")]
    args: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// Totals, for the summary on stderr and the exit status.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub allow: usize,
    pub ask: usize,
    pub deny: usize,
    pub errors: usize,
}

pub fn build_policy(args: &PolicyCheckArgs) -> Result<Policy> {
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let paths = PathContext::new(&workspace, &store::home_dir(), &store::state_dir()).with_context(|| {
        format!(
            "the workspace {} does not exist or cannot be read; pass an existing directory with --workspace",
            workspace.display()
        )
    })?;
    let rules = match &args.rules {
        Some(path) => Rules::load(path)?,
        None => Rules::empty(),
    };
    Ok(Policy::new(args.mode, rules, paths, ToolCatalog::builtin()))
}

pub fn run(args: &PolicyCheckArgs, input: impl BufRead, mut out: impl Write) -> Result<Summary> {
    let policy = build_policy(args)?;
    let mut summary = Summary::default();
    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let line = line.with_context(|| format!("cannot read line {number} of standard input"))?;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let result = match serde_json::from_str::<CallLine>(&line) {
            Err(e) => {
                summary.errors += 1;
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").cloned())
                    .unwrap_or(Value::Null);
                json!({
                    "id": id,
                    "error": format!(
                        "line {number}: {e}; expected {{\"id\": ..., \"tool\": \"bash\", \"args\": {{\"command\": \"ls\"}}}}"
                    ),
                })
            }
            Ok(call) => {
                let verdict = policy.assess(&call.tool, &call.args).verdict;
                match verdict.ruling {
                    crate::approval::verdict::Ruling::Allow => summary.allow += 1,
                    crate::approval::verdict::Ruling::Ask => summary.ask += 1,
                    crate::approval::verdict::Ruling::Deny => summary.deny += 1,
                }
                let mut out = json!({
                    "id": call.id,
                    "decision": verdict.ruling,
                    "risk": verdict.risk,
                    "reasons": verdict.reason_lines(),
                    "grant_scope": verdict.session_scopes(),
                });
                if let Some(why) = &verdict.no_session_grant {
                    out["no_grant"] = json!(why);
                }
                if args.explain {
                    out["parts"] = json!(verdict.parts);
                }
                out
            }
        };
        writeln!(out, "{result}").context("cannot write to standard output")?;
        out.flush().context("cannot write to standard output")?;
    }
    Ok(summary)
}
