//! Parking and resuming: `airlock exec --approvals park` stores a checkpoint and a pending
//! approval with a one-time code; `airlock approvals list`, `airlock approve CODE`,
//! `airlock deny CODE` decide it from anywhere on the machine; `airlock resume RUN` goes on,
//! running exactly the frozen call (digest re-checked), once (`resume`).
//!
//! What is stored is signed (see `store::key`), and holds what resume needs to judge the call
//! again: the verdict it had when parked (`rejudge`), absolute paths of the scenario and rules.
//! A run being run or resumed names its process (`owner`), so a killed one can be taken over.

pub(crate) mod owner;
mod rejudge;
mod resume;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::exec::{ExecArgs, HeadlessApprovals};
use crate::agent::Checkpoint;
use crate::approval::approver::ApprovalRequest;
use crate::approval::frozen::hex;
use crate::approval::gate::{judged_definition, judged_path, now_ms};
use crate::approval::risk::ToolCatalog;
use crate::config::ConfigFlags;
use crate::protocol::SavedCheckpoint;
use crate::store;
use crate::store::db::Store;
use crate::visible::{visible, visible_line};

pub use rejudge::{ParkedVerdict, stricter};
pub(crate) use resume::kill_leftover;
pub use resume::resume;

/// How long a parked approval waits for a decision, unless `AIRLOCK_APPROVAL_TTL_MS` says.
pub const DEFAULT_TTL_MS: u64 = 24 * 3600 * 1000;

/// Everything `resume` needs, stored with the run. Written with the checkpoint as the agent
/// sealed it (`&SavedCheckpoint`, its JSON embedded as is), read back as a `Checkpoint`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ResumeSpec<C = Checkpoint> {
    pub checkpoint: C,
    pub workspace: PathBuf,
    pub scenario: Option<PathBuf>,
    pub config: ConfigFlags,
    pub approvals: HeadlessApprovals,
    /// For a parked write or edit: the SHA-256 of the file it changes, as it was when parked.
    pub file_hash: Option<(PathBuf, Option<String>)>,
    /// The process that was running the turn (for a run that did not park).
    #[serde(default)]
    pub pid: Option<u32>,
    /// The parked call's verdict when it parked: resume refuses it if it got stricter since.
    #[serde(default)]
    pub verdict: Option<ParkedVerdict>,
    /// For a parked file call: the physical path it was judged on, the only place it may touch
    /// when it resumes (the tool walks it without following symlinks).
    #[serde(default)]
    pub judged_path: Option<PathBuf>,
    /// For a parked MCP call: the digest of the tool definition it was judged on, the only one
    /// it may run against when it resumes.
    #[serde(default)]
    pub mcp_definition: Option<String>,
}

impl<'a> ResumeSpec<&'a SavedCheckpoint> {
    /// A run's spec as `exec` started it (paths made absolute), with nothing parked yet.
    fn of(
        args: &ExecArgs,
        workspace: &Path,
        checkpoint: &'a SavedCheckpoint,
    ) -> ResumeSpec<&'a SavedCheckpoint> {
        let (scenario, config) = absolute_args(args);
        ResumeSpec {
            checkpoint,
            workspace: workspace.to_path_buf(),
            scenario,
            config,
            approvals: args.approvals,
            file_hash: None,
            pid: None,
            verdict: None,
            judged_path: None,
            mcp_definition: None,
        }
    }
}

/// The arguments with the scenario and rules paths made absolute, so a resume from another
/// directory reads the same files.
fn absolute_args(args: &ExecArgs) -> (Option<PathBuf>, ConfigFlags) {
    let absolute = |p: &Path| {
        std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let mut config = args.config.clone();
    config.rules = config.rules.as_deref().map(absolute);
    (args.scenario.as_deref().map(absolute), config)
}

/// The connection a run's checkpoints are kept through: opened once per run (a connection per
/// checkpoint re-created the database's WAL file each time, with a sync of the file and of its
/// directory: 15 opens before the first of S3's eight calls started), committing without a sync
/// each time, like the cockpit's journal (`Store::journal_writes`).
pub fn checkpoint_store() -> Result<Store> {
    let db = Store::open(&db_path())?;
    db.journal_writes()?;
    Ok(db)
}

/// Keeps a running turn's latest checkpoint, so `resume` can go on if this process dies.
pub fn save_running(
    db: &Store,
    args: &ExecArgs,
    session: &str,
    workspace: &Path,
    checkpoint: &SavedCheckpoint,
) -> Result<()> {
    let spec = ResumeSpec {
        pid: Some(std::process::id()),
        ..ResumeSpec::of(args, workspace, checkpoint)
    };
    db.save_checkpoint(
        session,
        session,
        workspace,
        &serde_json::to_string(&spec)?,
        &owner::me(),
        now_ms(),
    )?;
    Ok(())
}

/// Records how a run ended.
pub fn finish(session: &str, state: &str) {
    if let Ok(db) = Store::open(&db_path()) {
        let _ = db.set_run_state(session, state, now_ms());
    }
}

pub fn db_path() -> PathBuf {
    store::state_dir().join("airlock.db")
}

fn file_hash(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| hex(&Sha256::digest(&b)))
}

/// Stores a parked turn; returns the `parked` event to print (with the one-time code).
pub fn park(
    args: &ExecArgs,
    session: &str,
    workspace: &Path,
    checkpoint: &SavedCheckpoint,
    request: &ApprovalRequest,
) -> Result<Value> {
    let judged = judged_path(&request.tool, &request.verdict);
    // The file a writing tool would change: the one it was judged on (`~/x` is under home).
    let writes = ToolCatalog::builtin()
        .get(&request.tool)
        .is_some_and(|tool| tool.writes_a_path());
    let target = judged.clone().filter(|_| writes);
    let spec = ResumeSpec {
        file_hash: target.map(|p| {
            let h = file_hash(&p);
            (p, h)
        }),
        verdict: Some(ParkedVerdict::of(&request.verdict)),
        judged_path: judged,
        mcp_definition: judged_definition(&request.verdict),
        ..ResumeSpec::of(args, workspace, checkpoint)
    };
    let db = Store::open(&db_path())?;
    let ttl = std::env::var("AIRLOCK_APPROVAL_TTL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_TTL_MS);
    let now = now_ms();
    db.save_run(
        session,
        session,
        workspace,
        "parked",
        Some(&serde_json::to_string(&spec)?),
        now,
    )?;
    let summary = json!({
        "risk": request.risk,
        "reasons": request.verdict.reason_lines(),
        "preview": request.preview,
    });
    let code = db.add_approval(
        session,
        session,
        &request.call_id,
        &request.frozen,
        &summary.to_string(),
        now,
        ttl,
    )?;
    Ok(json!({
        "event": "parked",
        "run": session,
        "call_id": request.call_id,
        "tool": request.tool,
        "code": code,
        "expires_in_ms": ttl,
        "reasons": request.verdict.reason_lines(),
        "preview": request.preview,
        "next": format!("airlock approve {code}  (or: airlock deny {code}), then: airlock resume {session}"),
    }))
}

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
