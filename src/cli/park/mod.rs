//! Parking and resuming: `airlock exec --approvals park` stores a checkpoint and a pending
//! approval with a one-time code; `airlock approvals list`, `airlock approve CODE`,
//! `airlock deny CODE` decide it from anywhere on the machine; `airlock resume RUN` goes on,
//! running exactly the frozen call (digest re-checked), once (`resume`).
//!
//! What is stored is signed (see `store::key`), and holds what resume needs to judge the call
//! again: the verdict it had when parked (`rejudge`), absolute paths of the scenario and rules.
//! A run being run or resumed names its process (`owner`), so a killed one can be taken over.
//! The run's record itself (spec, checkpoint, code, owner) is written through `cli::runs`,
//! which `exec` uses too; this module reads and decides it.

mod resume;

use std::io::Write;

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

use super::runs::db_path;
use crate::clock::now_ms;
use crate::store::db::Store;
use crate::visible::{visible, visible_line};

pub use resume::resume;

/// Prints the pending approvals. Everything in them came from a model or the database, so all
/// of it is made visible (an escape sequence in a command cannot redraw the listing); a record
/// whose signature does not verify is flagged and its preview not shown.
pub fn list(out: &mut impl Write) -> Result<()> {
    let db = Store::open(&db_path())?;
    let now = now_ms();
    let pending = db.pending(now)?;
    if pending.is_empty() {
        writeln!(out, "no pending approvals")?;
    }
    for row in pending {
        let summary: Value = serde_json::from_str(&row.summary).unwrap_or(Value::Null);
        writeln!(
            out,
            "run {}  call {}  {}  risk {}  expires in {}s",
            visible_line(&row.run_id),
            visible_line(&row.call_id),
            visible_line(&row.tool),
            visible_line(summary["risk"].as_str().unwrap_or("?")),
            row.expires_ms.saturating_sub(now) / 1000
        )?;
        if let Some(why) = db.tampering(&row)? {
            writeln!(
                out,
                "  ! {}; approve and resume refuse it",
                visible_line(&why)
            )?;
            continue;
        }
        for r in summary["reasons"].as_array().into_iter().flatten() {
            writeln!(out, "  • {}", visible_line(r.as_str().unwrap_or("")))?;
        }
        match summary["preview"]["kind"].as_str() {
            Some("command") => writeln!(
                out,
                "  $ {}",
                visible_line(summary["preview"]["command"].as_str().unwrap_or(""))
            )?,
            Some("diff") => {
                for l in visible(summary["preview"]["unified"].as_str().unwrap_or("")).lines() {
                    writeln!(out, "  {l}")?;
                }
            }
            _ => writeln!(out, "  args: {}", visible_line(&row.frozen.canonical))?,
        }
        writeln!(
            out,
            "  (the code was printed when the run parked; it is stored only as a hash)"
        )?;
    }
    Ok(())
}

pub fn decide(
    code: &str,
    allow: bool,
    session_grant: bool,
    reason: Option<String>,
) -> Result<String> {
    let db = Store::open(&db_path())?;
    let decision = if allow {
        json!({"decision": if session_grant { "allow_session" } else { "allow_once" }})
    } else {
        json!({"decision": "deny", "reason": reason})
    };
    let row = db
        .decide(code, &decision.to_string(), now_ms())
        .map_err(|e| anyhow!(visible(&e.to_string())))?;
    let cockpit = crate::cli::sessions::cockpit_session(&db, &row.run_id);
    let (call, tool, run) = (
        visible_line(&row.call_id),
        visible_line(&row.tool),
        visible_line(&row.run_id),
    );
    let verb = if allow { "approved" } else { "denied" };
    match cockpit {
        Some(true) => {
            return Ok(format!(
                "{verb} {call} ({tool}); the running cockpit picks the answer up"
            ));
        }
        Some(false) => {
            return Ok(format!(
                "{verb} {call} ({tool}) of cockpit session {run}, which is not running; reopen it with: airlock --resume {run} (the call is judged again, then the answer applies)"
            ));
        }
        None => {}
    }
    Ok(format!(
        "{verb} {call} ({tool}) in run {run}; go on with: airlock resume {run}"
    ))
}
