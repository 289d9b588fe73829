//! The cockpit's `Journal`: keeps a cockpit session in the state database as the turn moves,
//! and reads it back for `airlock --resume`.
//!
//! A save writes what changed: the conversation's new messages as rows of their own and a small
//! signed spec (where the turn stands, the workspace and the flags it started with) that names
//! how many messages there are and their hash chain (`store::db::session_messages`). Rewriting
//! the whole conversation at every checkpoint (several per tool call) made a long session's
//! memory grow with every run's output (benchmark S5). The journal remembers how many messages
//! it has written; it serializes only the ones past those, and never copies the conversation.
//!
//! Sessions written before (the whole conversation in one signed spec) are read as before; the
//! first save after one is reopened writes its messages as rows.

use crate::config::fingerprint::PolicyFingerprint;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::exec_args::ExecArgs;
use super::runs::{db_path, owner};
use crate::agent::{Checkpoint, Journal, KeptStanding, Standing, StandingBeside};
use crate::clock::now_ms;
use crate::config::ConfigFlags;
use crate::model::Message;
use crate::store::db::{MessageChain, SessionRow, SessionSave, Store};
use crate::visible::visible_line;

/// A session as read back: what `airlock --resume` starts from.
#[derive(Debug)]
pub struct KeptSession {
    pub checkpoint: Checkpoint,
    pub workspace: PathBuf,
    /// The flags it was started with (the config files are read again when it reopens).
    pub config: ConfigFlags,
    pub scenario: Option<PathBuf>,
    /// The policy files in force when it last ran, with their hashes (none for a session kept
    /// before they were recorded).
    pub policy_files: PolicyFingerprint,
}

/// The spec of a session written before messages had rows: everything in one.
#[derive(Deserialize)]
struct WholeSpec {
    checkpoint: Checkpoint,
    workspace: PathBuf,
    config: ConfigFlags,
    scenario: Option<PathBuf>,
}

/// The spec kept beside a session's message rows, as written.
#[derive(Serialize)]
struct SpecOut<'a> {
    standing: StandingBeside<'a>,
    workspace: &'a Path,
    config: &'a ConfigFlags,
    scenario: Option<&'a Path>,
    policy_files: &'a PolicyFingerprint,
}

/// The spec kept beside a session's message rows, as read.
#[derive(Deserialize)]
struct SpecIn {
    standing: KeptStanding,
    workspace: PathBuf,
    config: ConfigFlags,
    scenario: Option<PathBuf>,
    #[serde(default)]
    policy_files: PolicyFingerprint,
}

/// Whether a kept session was between turns, from either kind of spec, without reading its
/// conversation.
#[derive(Deserialize)]
struct SpecIdle {
    #[serde(alias = "checkpoint")]
    standing: Idle,
}

#[derive(Deserialize)]
struct Idle {
    #[serde(default)]
    idle: bool,
}

/// Whether the session in `row` stopped between turns (`None`: nothing kept, or unreadable).
pub fn idle(row: &SessionRow) -> Option<bool> {
    let spec: SpecIdle = serde_json::from_str(row.spec.as_deref()?).ok()?;
    Some(spec.standing.idle)
}

/// Reads the session in `row` back, refusing it when its signature does not verify or its
/// conversation is not the one it signed.
pub fn read(db: &Store, row: &SessionRow) -> Result<KeptSession> {
    let id = visible_line(&row.id);
    if !row.signed {
        bail!(
            "refused: session {id} was changed outside airlock (tampered): its signature does not verify; nothing was reopened"
        );
    }
    let Some(text) = row.spec.as_deref() else {
        bail!("session {id} stopped before anything was kept; there is nothing to reopen");
    };
    let unreadable =
        || format!("the kept state of session {id} cannot be read (from another airlock version?)");
    let Some(chain) = &row.messages else {
        let spec: WholeSpec = serde_json::from_str(text).with_context(unreadable)?;
        return Ok(KeptSession {
            checkpoint: spec.checkpoint,
            workspace: spec.workspace,
            config: spec.config,
            scenario: spec.scenario,
            policy_files: PolicyFingerprint::default(),
        });
    };
    let spec: SpecIn = serde_json::from_str(text).with_context(unreadable)?;
    let conversation = db
        .session_messages(&row.id, chain)?
        .iter()
        .enumerate()
        .map(|(i, json)| {
            serde_json::from_str::<Message>(json)
                .with_context(|| format!("{} (message {})", unreadable(), i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(KeptSession {
        checkpoint: spec
            .standing
            .with_conversation(conversation)
            .map_err(|e| anyhow::anyhow!("{} ({e})", unreadable()))?,
        workspace: spec.workspace,
        config: spec.config,
        scenario: spec.scenario,
        policy_files: spec.policy_files,
    })
}

/// The first prompt of a conversation, on one line, for the listing.
fn title_of(conversation: &[Message]) -> String {
    conversation
        .iter()
        .find_map(|m| match m {
            Message::User { text } => Some(text.lines().next().unwrap_or("")),
            _ => None,
        })
        .unwrap_or("")
        .chars()
        .take(120)
        .collect()
}

/// The database and what of the conversation is in it.
struct Written {
    db: Store,
    kept: MessageChain,
}

/// Keeps a cockpit session in the state database.
pub struct CockpitJournal {
    written: Mutex<Written>,
    session: String,
    workspace: PathBuf,
    owner: String,
    config: ConfigFlags,
    scenario: Option<PathBuf>,
    policy: PolicyFingerprint,
}

impl CockpitJournal {
    /// The same journal, keeping `policy` (the policy files in force, hashed) with the session.
    pub fn with_policy(mut self, policy: PolicyFingerprint) -> CockpitJournal {
        self.policy = policy;
        self
    }

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
        let scenario = args.scenario.as_deref().map(absolute);
        CockpitJournal::over(db, session, workspace, me, config, scenario)
    }

    /// The journal of `session` in `db`, which `owner` must already own (it opened the session
    /// or took it over). It goes on from the messages the session's signed row names; from none
    /// for a session kept whole (written before) or one whose row does not verify.
    pub fn over(
        db: Store,
        session: &str,
        workspace: &Path,
        owner: String,
        config: ConfigFlags,
        scenario: Option<PathBuf>,
    ) -> Result<CockpitJournal> {
        let row = db.session(session)?.with_context(|| {
            format!(
                "session {} is not in the state database",
                visible_line(session)
            )
        })?;
        let kept = match row.messages {
            Some(chain) if row.signed => chain,
            _ => MessageChain::default(),
        };
        Ok(CockpitJournal {
            written: Mutex::new(Written { db, kept }),
            session: session.to_string(),
            workspace: workspace.to_path_buf(),
            owner,
            config,
            scenario,
            policy: PolicyFingerprint::default(),
        })
    }

    /// A clean quit: the session stays, to be reopened.
    pub fn close(&self) {
        let written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        let _ = written
            .db
            .close_session(&self.session, &self.owner, now_ms());
    }
}

impl Journal for CockpitJournal {
    fn save(&self, conversation: &[Message], standing: &Standing<'_>) -> Result<(), String> {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        // A conversation shorter than what was written is not the one written: start over.
        let kept = match usize::try_from(written.kept.count) {
            Ok(count) if count <= conversation.len() => written.kept.clone(),
            _ => MessageChain::default(),
        };
        let added = conversation
            .get(kept.count as usize..)
            .unwrap_or_default()
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| e.to_string())?;
        // The batch's calls are in the conversation's last message: the spec says so instead of
        // writing them (a 3 MB write_file) a second time.
        let spec = serde_json::to_string(&SpecOut {
            standing: standing.beside(conversation),
            workspace: &self.workspace,
            config: &self.config,
            scenario: self.scenario.as_deref(),
            policy_files: &self.policy,
        })
        .map_err(|e| e.to_string())?;
        let saved = written
            .db
            .save_session(&SessionSave {
                id: &self.session,
                workspace: &self.workspace.display().to_string(),
                owner: &self.owner,
                title: &title_of(conversation),
                turns: standing.turn,
                spec: &spec,
                kept: &kept,
                added: &added,
                now: now_ms(),
            })
            .map_err(|e| e.to_string())?;
        match saved {
            Some(chain) => {
                written.kept = chain;
                Ok(())
            }
            None => Err("another process has taken this session over".into()),
        }
    }
}

#[cfg(test)]
mod tests;
