//! `airlock policy check`: the policy as a filter, JSON lines in, one verdict per line out.
//! A malformed line (not JSON, not a call, not UTF-8) gets an error line naming it and the run
//! goes on; nothing is ever executed. Input is read as bytes, line by line, so one bad line
//! cannot end the run.

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approval::policy::Policy;
use crate::approval::rules::Rules;
use crate::cli::PolicyCheckArgs;
use crate::facts::catalog::ToolCatalog;
use crate::facts::paths::PathContext;
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
    let paths = PathContext::new(&workspace, &crate::facts::paths::home_dir(), &store::state_dir()).with_context(|| {
        format!(
            "the workspace {} does not exist or cannot be read; pass an existing directory with --workspace",
            workspace.display()
        )
    })?;
    // The files a session in this workspace would be judged by (user and project config, their
    // rules files, `--rules`): writes to them are refused here as they would be there.
    let config = crate::config::resolve(
        &paths.workspace,
        &crate::config::ConfigFlags {
            rules: args.rules.clone(),
            ..Default::default()
        },
        &crate::config::ProcessEnv,
        &store::state_dir(),
    )?;
    let paths = paths.with_protected_files(&config.active_files());
    let rules = match &args.rules {
        Some(path) => Rules::load(path)?,
        None => Rules::empty(),
    };
    let policy = Policy::new(args.mode, rules, paths, ToolCatalog::builtin()).with_sandbox(
        crate::sandbox::SandboxPolicy {
            default: config.sandbox.value,
            support: crate::sandbox::Support::current(),
        },
    );
    // MCP tools are judged as last listed (their pins); nothing is started.
    Ok(match config.mcp_servers.is_empty() {
        true => policy,
        false => policy.with_mcp(crate::mcp::catalog_from_pins(
            &config.mcp_servers,
            &crate::store::db::StatePins(super::runs::db_path()),
        )),
    })
}

pub fn run(
    args: &PolicyCheckArgs,
    mut input: impl BufRead,
    mut out: impl Write,
) -> Result<Summary> {
    let policy = build_policy(args)?;
    let mut summary = Summary::default();
    let mut number = 0usize;
    let mut offset = 0usize;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = input
            .read_until(b'\n', &mut bytes)
            .with_context(|| format!("cannot read line {} of standard input", number + 1))?;
        if read == 0 {
            break;
        }
        number += 1;
        let line_start = offset;
        offset += read;
        let raw = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = match std::str::from_utf8(raw) {
            Ok(line) => line,
            Err(e) => {
                summary.errors += 1;
                let at = e.valid_up_to();
                let result = json!({
                    "id": id_despite_bad_bytes(raw),
                    "error": format!(
                        "line {number}: not valid UTF-8 at byte {at} of the line (byte {} of the input); save the input as UTF-8",
                        line_start + at
                    ),
                });
                write_line(&mut out, &result)?;
                continue;
            }
        };
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let result = match serde_json::from_str::<CallLine>(line) {
            Err(e) => {
                summary.errors += 1;
                let id = serde_json::from_str::<Value>(line)
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
                // `mcp:SERVER/TOOL` is how rules and listings name the tool `SERVER__TOOL`.
                let tool = crate::mcp::definition::from_rule_name(&call.tool)
                    .unwrap_or_else(|| call.tool.clone());
                let verdict = policy.assess(&tool, &call.args).verdict;
                match verdict.ruling {
                    crate::protocol::Ruling::Allow => summary.allow += 1,
                    crate::protocol::Ruling::Ask => summary.ask += 1,
                    crate::protocol::Ruling::Deny => summary.deny += 1,
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
        write_line(&mut out, &result)?;
    }
    Ok(summary)
}

/// Writes one JSON line, with the characters some line-based readers split on (U+2028, U+2029,
/// U+0085) escaped, so a record can never be cut in two. serde_json escapes everything below
/// U+0020 already, and outside strings it writes only ASCII, so each of these can only be
/// inside a string, where `\uXXXX` means the same character.
fn write_line(out: &mut impl Write, value: &Value) -> Result<()> {
    let text = value.to_string();
    let mut safe = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2028}' => safe.push_str("\\u2028"),
            '\u{2029}' => safe.push_str("\\u2029"),
            '\u{0085}' => safe.push_str("\\u0085"),
            c => safe.push(c),
        }
    }
    writeln!(out, "{safe}").context("cannot write to standard output")?;
    out.flush().context("cannot write to standard output")
}

/// The `id` of a line that is not valid UTF-8, when it can be read for certain: from the line
/// decoded with replacement characters, unless the id itself holds one (it may have been
/// altered by the decoding). `null` otherwise.
fn id_despite_bad_bytes(raw: &[u8]) -> Value {
    serde_json::from_str::<Value>(&String::from_utf8_lossy(raw))
        .ok()
        .and_then(|v| v.get("id").cloned())
        .filter(|id| !id.to_string().contains('\u{FFFD}'))
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_separators_are_written_escaped_and_read_back_the_same() {
        let value = json!({"id": "a\u{2028}b\u{2029}c\u{0085}d"});
        let mut out = Vec::new();
        write_line(&mut out, &value).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "{\"id\":\"a\\u2028b\\u2029c\\u0085d\"}\n");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }

    #[test]
    fn an_id_that_the_bad_bytes_may_have_altered_is_not_reported() {
        assert_eq!(
            id_despite_bad_bytes(b"{\"id\":7,\"tool\":\"bash\",\"x\":\"\xff\"}"),
            json!(7)
        );
        assert_eq!(id_despite_bad_bytes(b"{\"id\":\"a\xffb\"}"), Value::Null);
        assert_eq!(id_despite_bad_bytes(b"\xff not json"), Value::Null);
    }
}
