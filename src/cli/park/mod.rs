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
use crate::protocol::Amendment;
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
        let sandbox = row
            .frozen
            .verified_args()
            .ok()
            .and_then(|args| crate::sandbox::profile_arg(&args).ok().flatten())
            .map(|p| format!("  sandbox {}", p.as_str()))
            .unwrap_or_default();
        writeln!(
            out,
            "run {}  call {}  {}  risk {}{sandbox}  expires in {}",
            visible_line(&row.run_id),
            visible_line(&row.call_id),
            visible_line(&row.tool),
            visible_line(summary["risk"].as_str().unwrap_or("?")),
            duration_words(row.expires_ms.saturating_sub(now) / 1000)
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
            Some("diff") => numbered_diff(out, &summary["preview"])?,
            Some("mcp") if summary["preview"]["change"]["kind"] == "diff" => {
                writeln!(out, "  args: {}", visible_line(&row.frozen.canonical))?;
                numbered_diff(out, &summary["preview"]["change"])?;
            }
            _ => writeln!(out, "  args: {}", visible_line(&row.frozen.canonical))?,
        }
        // A cockpit's request is kept under its session and still waits in its modal.
        let live = db.run(&row.run_id)?.is_some_and(|run| run.state == "live");
        let shown = if live {
            "the code is in the cockpit's approval modal"
        } else {
            "the code was printed when the run parked"
        };
        writeln!(out, "  ({shown}; it is stored only as a hash)")?;
    }
    Ok(())
}

/// A stored diff preview, its hunks numbered as `airlock approve CODE --hunks 1,3` takes them.
fn numbered_diff(out: &mut impl Write, preview: &Value) -> Result<()> {
    let mut hunk = 0;
    for l in visible(preview["unified"].as_str().unwrap_or("")).lines() {
        if crate::ui::preview::diff::hunk_starts(l).is_some() {
            hunk += 1;
            writeln!(out, "  {l}   [hunk {hunk}]")?;
        } else {
            writeln!(out, "  {l}")?;
        }
    }
    Ok(())
}

/// `seconds` as a person reads a wait: "40 s", "5 min", "23 h 59 min".
pub(crate) fn duration_words(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s % 3600 < 60 => format!("{} h", s / 3600),
        s => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// The change `airlock approve` was given: `--hunks 1,3` (kept hunks) or `--command '...'`.
pub fn change_given(hunks: Option<String>, command: Option<String>) -> Result<Option<Amendment>> {
    if let Some(command) = command {
        if command.trim().is_empty() {
            return Err(anyhow!(
                "--command is empty: give the command to run instead, or leave --command out to approve the one proposed"
            ));
        }
        return Ok(Some(Amendment::Command { command }));
    }
    let Some(hunks) = hunks else {
        return Ok(None);
    };
    let mut keep = Vec::new();
    for part in hunks.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<usize>() {
            Ok(n) if n > 0 => keep.push(n),
            _ => {
                return Err(anyhow!(
                    "--hunks {}: {} is not a hunk number; give the numbers `airlock approvals list` shows, e.g. --hunks 1,3",
                    visible_line(&hunks),
                    visible_line(part)
                ));
            }
        }
    }
    if keep.is_empty() {
        return Err(anyhow!(
            "--hunks names no hunk: to keep none, deny the call (`airlock deny CODE`)"
        ));
    }
    keep.sort_unstable();
    keep.dedup();
    Ok(Some(Amendment::Hunks { keep }))
}

pub fn decide(
    code: &str,
    allow: bool,
    session_grant: bool,
    reason: Option<String>,
    change: Option<Amendment>,
) -> Result<String> {
    decide_in(&db_path(), code, allow, session_grant, reason, change)
}

/// [`decide`], in the state database at `db`.
pub fn decide_in(
    db: &std::path::Path,
    code: &str,
    allow: bool,
    session_grant: bool,
    reason: Option<String>,
    change: Option<Amendment>,
) -> Result<String> {
    let db = Store::open(db)?;
    let mut decision = if allow {
        json!({"decision": if session_grant { "allow_session" } else { "allow_once" }})
    } else {
        json!({"decision": "deny", "reason": reason})
    };
    if let Some(change) = &change {
        decision["amend"] = serde_json::to_value(change)?;
    }
    let row = db
        .decide(code, &decision.to_string(), now_ms())
        .map_err(|e| anyhow!(visible(&e.to_string())))?;
    let cockpit = crate::cli::sessions::cockpit_session(&db, &row.run_id);
    let (call, tool, run) = (
        visible_line(&row.call_id),
        visible_line(&row.tool),
        visible_line(&row.run_id),
    );
    let verb = match &change {
        Some(Amendment::Hunks { keep }) => format!(
            "approved with only {} kept (the file as it is then must still match the diff shown)",
            crate::tools::files::amend::hunk_list(keep)
        ),
        Some(Amendment::Command { .. }) => {
            "approved with your command instead (judged again before it runs)".to_string()
        }
        Some(Amendment::Content { .. }) => "approved with your content instead".to_string(),
        None if allow => "approved".to_string(),
        None => "denied".to_string(),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_reads_in_hours_minutes_or_seconds() {
        assert_eq!(duration_words(86_389), "23 h 59 min");
        assert_eq!(duration_words(7_200), "2 h");
        assert_eq!(duration_words(300), "5 min");
        assert_eq!(duration_words(40), "40 s");
    }
}
