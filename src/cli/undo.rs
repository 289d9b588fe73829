//! `airlock undo`: what each call of a session changed in the workspace, and undoing one (or
//! one and every later one) after showing what it would do, file by file.

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::{Result, bail};

use crate::protocol::{UndoPlan, UndoSource};
use crate::undo::History;
use crate::visible::{visible, visible_line};

/// What `airlock undo` was asked.
pub struct UndoArgs {
    pub session: Option<String>,
    pub call: Option<String>,
    pub and_later: bool,
    pub yes: bool,
    pub overwrite: bool,
}

/// The sessions with a kept history, newest first.
fn sessions(state: &Path) -> Vec<String> {
    let Ok(dirs) = std::fs::read_dir(state.join("undo")) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, String)> = dirs
        .flatten()
        .filter(|d| d.file_name() != "objects")
        .filter_map(|d| {
            let records = d.path().join("records.jsonl");
            let when = std::fs::metadata(&records)
                .and_then(|m| m.modified())
                .ok()?;
            Some((when, d.file_name().to_string_lossy().into_owned()))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, s)| s).collect()
}

pub fn run(args: UndoArgs, input: &mut impl BufRead, out: &mut impl Write) -> Result<u8> {
    let state = crate::store::state_dir();
    let session = match args.session {
        Some(s) => s,
        None => match sessions(&state).into_iter().next() {
            Some(s) => s,
            None => {
                writeln!(
                    out,
                    "no session has changed a workspace yet: nothing to undo"
                )?;
                return Ok(0);
            }
        },
    };
    if session.is_empty() || session.contains('/') || session.starts_with('.') {
        bail!(
            "{} is not a session id (`airlock undo` lists the newest session's calls)",
            visible_line(&session)
        );
    }
    let Some(workspace) = History::workspace_of(&state, &session) else {
        bail!(
            "no history for session {}: check the id (`airlock undo` lists the newest session's calls)",
            visible_line(&session)
        );
    };
    let history = History::open(&state, &session, &workspace).map_err(anyhow::Error::msg)?;
    let Some(call) = args.call else {
        list(&history, &session, out)?;
        return Ok(0);
    };
    let plan = history
        .plan(&call, args.and_later)
        .map_err(|e| anyhow::anyhow!(visible(&e)))?;
    show(&plan, out)?;
    let conflicts = plan.files.iter().filter(|f| f.conflict.is_some()).count();
    if conflicts > 0 && !args.overwrite {
        writeln!(
            out,
            "{conflicts} file(s) changed since are left as they are (--overwrite puts them back too)"
        )?;
    }
    if !args.yes {
        write!(out, "undo? [y/N] ")?;
        out.flush()?;
        let mut answer = String::new();
        input.read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            writeln!(out, "nothing was undone")?;
            return Ok(1);
        }
    }
    let said = history
        .apply(&plan, args.overwrite)
        .map_err(|e| anyhow::anyhow!(visible(&e)))?;
    writeln!(out, "{}", visible_line(&said))?;
    Ok(0)
}

fn list(history: &History, session: &str, out: &mut impl Write) -> Result<()> {
    let records = history.records();
    writeln!(
        out,
        "session {} (workspace {}): {} call(s) changed it",
        visible_line(session),
        history.workspace().display(),
        records.len()
    )?;
    for record in &records {
        let undoes = if record.undoes.is_empty() {
            String::new()
        } else {
            format!("  [undid {}]", record.undoes.join(", "))
        };
        writeln!(
            out,
            "  {:<10} {}  {}{undoes}",
            visible_line(&record.call_id),
            visible_line(&record.count().words()),
            visible_line(&record.title),
        )?;
    }
    writeln!(
        out,
        "undo one with: airlock undo {} CALL   (--and-later: it and every call after it)",
        visible_line(session)
    )?;
    Ok(())
}

fn show(plan: &UndoPlan, out: &mut impl Write) -> Result<()> {
    let calls: Vec<String> = plan
        .calls
        .iter()
        .map(|(id, title)| format!("{} ({})", visible_line(id), visible_line(title)))
        .collect();
    writeln!(out, "undo {}:", calls.join(", "))?;
    for file in &plan.files {
        writeln!(
            out,
            "\n{} {}{}",
            file.action.as_str(),
            visible_line(&file.path),
            if file.not_kept {
                "  (its content was not kept: it cannot be brought back)"
            } else {
                ""
            }
        )?;
        if let Some(conflict) = &file.conflict {
            writeln!(out, "  ! conflict: {}", visible_line(conflict))?;
        }
        for line in &file.diff {
            writeln!(out, "  {}", visible_line(line))?;
        }
    }
    for note in &plan.notes {
        writeln!(out, "\nnote: {}", visible_line(note))?;
    }
    Ok(())
}
