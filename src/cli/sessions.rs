//! Cockpit sessions that outlive their process: each cockpit keeps its session in the state
//! database as the turn moves (`CockpitJournal`, the agent's `Journal`), `airlock sessions`
//! lists them, and `airlock --resume [SESSION]` reopens one: the conversation is shown again,
//! requests that were waiting are asked again with the same one-time codes, and a call that was
//! running when the process stopped is reported to the model as interrupted, never run again.
//!
//! A session is owned by the process running it (`park::owner`); only a session whose owner is
//! gone is reopened, by exactly one process. The spec and the conversation are signed; a session
//! edited outside airlock is refused (`cockpit_journal` keeps and reads them).

use std::io::Write;

use anyhow::{Context, Result, bail};

use super::cockpit_journal;
pub use super::cockpit_journal::CockpitJournal;
use super::exec_args::ExecArgs;
use super::runs::{db_path, owner};
use crate::agent::Resume;
use crate::clock::now_ms;
use crate::config::ConfigFlags;
use crate::store::db::{SessionRow, Store};
use crate::visible::visible_line;

/// A session taken over by this process, ready to start from.
pub struct Reopened {
    pub session: String,
    pub args: ExecArgs,
    pub resume: Resume,
}

/// Takes over `wanted` (or the most recent session no process runs) for this process. Refused,
/// taking nothing, when a file airlock reads as policy changed since the session last ran,
/// unless `accept_changed_policy` (the person has seen the change).
pub fn reopen(
    wanted: Option<&str>,
    flags: &ConfigFlags,
    accept_changed_policy: bool,
) -> Result<Reopened> {
    let db = Store::open(&db_path())?;
    let row = match wanted {
        Some(id) => db.session(id)?.with_context(|| {
            format!(
                "no cockpit session {}: `airlock sessions` lists them",
                visible_line(id)
            )
        })?,
        None => db
            .sessions(200)?
            .into_iter()
            .find(|r| !owner::alive(r.owner.as_deref()))
            .context(
                "no cockpit session to reopen (none was kept, or every one is open in a running airlock): `airlock sessions` lists them",
            )?,
    };
    let id = row.id.clone();
    if owner::alive(row.owner.as_deref()) {
        bail!(
            "session {} is open in a running airlock (process {}); quit that one first",
            visible_line(&id),
            visible_line(owner::pid(row.owner.as_deref()))
        );
    }
    let spec = cockpit_journal::read(&db, &row)?;
    let changes = spec.policy_files.changes_now();
    if !changes.is_empty() && !accept_changed_policy {
        bail!(
            "refused: the files airlock reads as policy changed since session {id} last ran, and a \
             change is never used without you seeing it (a command may have made it):\n  {}\n\
             check them, then reopen it with: airlock --resume {id} --accept-changed-policy",
            changes.join("\n  "),
            id = visible_line(&id)
        );
    }
    if !spec.workspace.is_dir() {
        bail!(
            "the workspace of session {} is gone: {}",
            visible_line(&id),
            visible_line(&spec.workspace.display().to_string())
        );
    }
    if !db.take_session(&id, row.owner.as_deref(), &owner::me(), now_ms())? {
        bail!(
            "session {} is being reopened by another airlock; nothing runs twice",
            visible_line(&id)
        );
    }
    // A command that was running when the process died may still be: it is reported as
    // interrupted, so whatever it left running is stopped too.
    let checkpoint = &spec.checkpoint;
    for &index in &checkpoint.started {
        if let Some(call) = checkpoint.calls.get(index)
            && call.tool == "bash"
            && checkpoint.results.get(index).is_none_or(Option::is_none)
            && let Some(command) = call.args.get("command").and_then(|c| c.as_str())
        {
            super::runs::kill_leftover(command, &spec.workspace);
        }
    }
    let mut config = spec.config;
    // Flags given now win over the ones the session started with.
    let given = flags.clone();
    config.provider = given.provider.or(config.provider);
    config.model = given.model.or(config.model);
    config.base_url = given.base_url.or(config.base_url);
    config.mode = given.mode.or(config.mode);
    config.rules = given.rules.or(config.rules);
    Ok(Reopened {
        session: id,
        args: ExecArgs {
            workspace: Some(spec.workspace),
            scenario: spec.scenario,
            config,
            ..ExecArgs::default()
        },
        resume: Resume {
            checkpoint: spec.checkpoint,
            answer: None,
            show_history: true,
        },
    })
}

/// Whether `id` is a cockpit session, and if so whether a running airlock has it open.
pub fn cockpit_session(db: &Store, id: &str) -> Option<bool> {
    let row = db.session(id).ok()??;
    Some(owner::alive(row.owner.as_deref()))
}

fn ago(now: u64, then: u64) -> String {
    let s = now.saturating_sub(then) / 1000;
    match s {
        0..60 => format!("{s}s ago"),
        60..3600 => format!("{} min ago", s / 60),
        3600..86400 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86400),
    }
}

/// Where a session stands, in a few words.
fn standing(row: &SessionRow, waiting: usize) -> String {
    if owner::alive(row.owner.as_deref()) {
        return format!("open (process {})", owner::pid(row.owner.as_deref()));
    }
    let idle = cockpit_journal::idle(row).unwrap_or(true);
    let how = if row.state == "closed" {
        "quit"
    } else {
        "stopped"
    };
    match (idle, waiting) {
        (true, _) => format!("{how} between turns"),
        (false, 0) => format!("{how} mid-turn"),
        (false, n) => format!(
            "{how} mid-turn, {n} request{} waiting",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// `airlock sessions`: the kept cockpit sessions, most recent first. Codes are never printed
/// (an agent running this would read them); the cockpit shows them.
pub fn list(out: &mut impl Write) -> Result<()> {
    let db = Store::open(&db_path())?;
    let now = now_ms();
    let rows = db.sessions(50)?;
    if rows.is_empty() {
        writeln!(
            out,
            "no cockpit sessions yet: every `airlock` cockpit is kept here as it runs"
        )?;
        return Ok(());
    }
    let pending = db.pending(now)?;
    for row in &rows {
        let waiting = pending.iter().filter(|p| p.run_id == row.id).count();
        writeln!(
            out,
            "{}  {}  {}  {} turn{}",
            visible_line(&row.id),
            standing(row, waiting),
            ago(now, row.updated_ms),
            row.turns,
            if row.turns == 1 { "" } else { "s" }
        )?;
        if !row.signed {
            writeln!(
                out,
                "  ! changed outside airlock (tampered): --resume refuses it"
            )?;
            continue;
        }
        if !row.title.is_empty() {
            writeln!(out, "  > {}", visible_line(&row.title))?;
        }
        writeln!(out, "  in {}", visible_line(&row.workspace))?;
    }
    writeln!(
        out,
        "\nreopen one with: airlock --resume SESSION  (no SESSION: the most recent one not open)"
    )?;
    Ok(())
}
