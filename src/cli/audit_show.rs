//! `airlock audit show [RUN]`: a session's decisions, readably.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::approval::audit;

/// The log of a run (session), or the newest log when none is named.
pub fn log_path(dir: &Path, run: Option<&str>) -> Result<PathBuf> {
    if let Some(run) = run {
        let path = dir.join(format!("{run}.jsonl"));
        if !path.exists() {
            bail!("no audit log for {run} in {}", dir.display());
        }
        return Ok(path);
    }
    let newest = std::fs::read_dir(dir)
        .with_context(|| format!("no audit logs yet in {}", dir.display()))?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok());
    match newest {
        Some(e) => Ok(e.path()),
        None => bail!("no audit logs yet in {}", dir.display()),
    }
}

/// One line per record that says something: requests with their verdict, decisions with their
/// source, outcomes.
pub fn line(record: &Value) -> Option<String> {
    let body = &record["body"];
    let call = body["call_id"].as_str().unwrap_or("?");
    let tool = body["tool"].as_str().unwrap_or("");
    Some(match record["kind"].as_str()? {
        "request" => format!(
            "#{:<4} {call:<8} {tool:<10} asked: {} ({})",
            record["seq"].as_u64().unwrap_or(0),
            body["ruling"].as_str().unwrap_or("?"),
            body["reasons"]
                .as_array()
                .map(|r| r
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("; "))
                .unwrap_or_default()
        ),
        "decision" => format!(
            "#{:<4} {call:<8} {tool:<10} {} by {}{}",
            record["seq"].as_u64().unwrap_or(0),
            body["decision"].as_str().unwrap_or("?"),
            body["source"].as_str().unwrap_or("?"),
            body["message"]
                .as_str()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ),
        "outcome" => format!(
            "#{:<4} {call:<8} {:<10} ran: {} {}",
            record["seq"].as_u64().unwrap_or(0),
            "",
            body["outcome"].as_str().unwrap_or("?"),
            body["detail"]
        ),
        _ => return None,
    })
}

pub fn run(dir: &Path, run: Option<&str>, out: &mut impl Write) -> Result<()> {
    let path = log_path(dir, run)?;
    writeln!(out, "{}", path.display())?;
    for record in audit::read_records(&path)? {
        if let Some(l) = line(&record) {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}
