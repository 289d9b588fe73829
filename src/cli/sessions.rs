//! Cockpit sessions that outlive their process: each cockpit keeps its session in the state
//! database as the turn moves (`CockpitJournal`, the agent's `Journal`), `airlock sessions`
//! lists them, and `airlock --resume [SESSION]` reopens one: the conversation is shown again,
//! requests that were waiting are asked again with the same one-time codes, and a call that was
//! running when the process stopped is reported to the model as interrupted, never run again.
//!
//! A session is owned by the process running it (`park::owner`); only a session whose owner is
//! gone is reopened, by exactly one process. The spec is signed; one edited outside airlock is
//! refused.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::exec_args::ExecArgs;
use super::runs::{db_path, owner};
use crate::agent::{Checkpoint, Journal, Resume};
use crate::approval::gate::now_ms;
use crate::config::ConfigFlags;
use crate::store::db::{SessionRow, Store};
use crate::visible::visible_line;

/// What a cockpit session is reopened from.
#[derive(Debug, Serialize, Deserialize)]
pub struct SessionSpec {
    pub checkpoint: Checkpoint,
    pub workspace: PathBuf,
    /// The flags it was started with (the config files are read again when it reopens).
    pub config: ConfigFlags,
    pub scenario: Option<PathBuf>,
}

/// Keeps a cockpit session in the state database.
pub struct CockpitJournal {
    db: Mutex<Store>,
    session: String,
    workspace: PathBuf,
    owner: String,
    config: ConfigFlags,
    scenario: Option<PathBuf>,
}

impl CockpitJournal {
    /// The journal of `session`, recorded as open and owned by this process: a new session is
    /// added; a reopened one must already have been taken over by this process.
    pub fn open(args: &ExecArgs, session: &str, workspace: &Path) -> Result<CockpitJournal> {
        let db = Store::open(&db_path())?;
        db.journal_writes()?;
        let me = owner::me();
        let shown = workspace.display().to_string();
        match db.session(session)? {
            None => db.open_session(session, &shown, &me, now_ms())?,
            Some(row) if row.owner.as_deref() == Some(me.as_str()) => {}
            Some(_) => bail!(
                "session {} is run by another process; nothing was reopened",
                visible_line(session)
            ),
        }
        let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut config = args.config.clone();
        config.rules = config.rules.as_deref().map(absolute);
        Ok(CockpitJournal {
            db: Mutex::new(db),
            session: session.to_string(),
            workspace: workspace.to_path_buf(),
            owner: me,
            config,
            scenario: args.scenario.as_deref().map(absolute),
        })
    }

    /// A clean quit: the session stays, to be reopened.
    pub fn close(&self) {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        let _ = db.close_session(&self.session, &self.owner, now_ms());
    }
}

/// The first prompt of a conversation, on one line, for the listing.
fn title_of(checkpoint: &Checkpoint) -> String {
    checkpoint
        .conversation
        .iter()
        .find_map(|m| match m {
            crate::model::Message::User { text } => Some(text.lines().next().unwrap_or("")),
            _ => None,
        })
        .unwrap_or("")
        .chars()
        .take(120)
        .collect()
}

impl Journal for CockpitJournal {
    fn save(&self, checkpoint: &Checkpoint) -> Result<(), String> {
        let spec = SessionSpec {
            checkpoint: checkpoint.clone(),
            workspace: self.workspace.clone(),
            config: self.config.clone(),
            scenario: self.scenario.clone(),
        };
        let text = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        let kept = db
            .save_session(
                &self.session,
                &self.workspace.display().to_string(),
                &self.owner,
                &title_of(checkpoint),
                checkpoint.turn,
                &text,
                now_ms(),
            )
            .map_err(|e| e.to_string())?;
        if !kept {
            return Err("another process has taken this session over".into());
        }
        Ok(())
    }
}

/// A session taken over by this process, ready to start from.
pub struct Reopened {
    pub session: String,
    pub args: ExecArgs,
    pub resume: Resume,
}

/// Takes over `wanted` (or the most recent session no process runs) for this process.
pub fn reopen(wanted: Option<&str>, flags: &ConfigFlags) -> Result<Reopened> {
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
    if !row.signed {
        bail!(
            "refused: session {} was changed outside airlock (tampered): its signature does not verify; nothing was reopened",
            visible_line(&id)
        );
    }
    let Some(text) = row.spec.as_deref() else {
        bail!(
            "session {} stopped before anything was kept; there is nothing to reopen",
            visible_line(&id)
        );
    };
    let spec: SessionSpec = serde_json::from_str(text).with_context(|| {
        format!(
            "the kept state of session {} cannot be read (from another airlock version?)",
            visible_line(&id)
        )
    })?;
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
    let spec: Option<SessionSpec> = row
        .spec
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok());
    let idle = spec.as_ref().is_none_or(|s| s.checkpoint.idle);
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
