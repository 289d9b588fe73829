//! A headless run's record in the state database: where it is kept (`db_path`), its latest
//! checkpoint while it runs (`save_running`), the parked turn and its one-time code when it
//! parks (`park`), how it ended (`finish`), and which process owns it (`owner`). Both `exec`
//! (which writes it) and `park` (which decides and resumes it) use this module; it uses
//! neither, so the two do not import each other.

pub(crate) mod kept;
pub(crate) mod owner;
pub(crate) mod rejudge;

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::exec_args::{ExecArgs, HeadlessApprovals};
use crate::agent::Checkpoint;
use crate::approval::gate::{judged_definition, judged_path};
use crate::clock::now_ms;
use crate::config::ConfigFlags;
use crate::config::fingerprint::PolicyFingerprint;
use crate::digest::hex;
use crate::facts::catalog::ToolCatalog;
use crate::protocol::SavedCheckpoint;
use crate::store;
use crate::store::db::Store;

use crate::protocol::ApprovalRequest;
pub use kept::RunCheckpoints;
pub(crate) use owner::kill_leftover;
pub use rejudge::{ParkedVerdict, stricter};

/// How long a parked approval waits for a decision, unless `AIRLOCK_APPROVAL_TTL_MS` says.
pub const DEFAULT_TTL_MS: u64 = 24 * 3600 * 1000;

/// Everything `resume` needs, stored with the run. Written with the checkpoint as the agent
/// sealed it (`&SavedCheckpoint`, its JSON embedded as is, or where its file is: `kept`), read
/// back as a `Checkpoint` (from its file, checked against its digest, when it has one).
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound(deserialize = "C: serde::de::DeserializeOwned"))]
pub struct ResumeSpec<C = Checkpoint> {
    #[serde(deserialize_with = "kept::checkpoint")]
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
    /// The policy files in force when the run started, with their content's hashes: a run that
    /// goes on later refuses to use them changed unless the person confirms.
    #[serde(default)]
    pub policy_files: PolicyFingerprint,
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
pub fn checkpoint_store(db: &Path) -> Result<Store> {
    let db = Store::open(db)?;
    db.journal_writes()?;
    Ok(db)
}

/// Keeps a running turn's latest checkpoint (sealed by `keeper`), so `resume` can go on if
/// this process dies.
fn save_running(db: &Store, keeper: &RunCheckpoints, checkpoint: &SavedCheckpoint) -> Result<()> {
    let spec = ResumeSpec {
        pid: Some(std::process::id()),
        ..keeper.spec(checkpoint)
    };
    let (session, workspace) = keeper.run();
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

/// Records how a run ended; its checkpoint files go (nothing goes on from an ended run).
pub fn finish(session: &str, state: &str) {
    if let Ok(db) = Store::open(&db_path())
        && db.set_run_state(session, state, now_ms()).is_ok()
    {
        kept::remove_run(session);
    }
}

pub fn db_path() -> PathBuf {
    store::state_dir().join("airlock.db")
}

pub(crate) fn file_hash(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| hex(&Sha256::digest(&b)))
}

/// Stores a parked turn (its checkpoint sealed by `keeper`); returns the `parked` event to
/// print (with the one-time code).
pub fn park(
    keeper: &RunCheckpoints,
    checkpoint: &SavedCheckpoint,
    request: &ApprovalRequest,
) -> Result<Value> {
    let (session, workspace) = keeper.run();
    let judged = judged_path(&request.verdict);
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
        ..keeper.spec(checkpoint)
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
    // The row names the parked checkpoint now: the running one's file goes.
    keeper.tidy(checkpoint);
    // A sub-agent's request names it wherever it is listed (`airlock inbox`, the cockpit), and
    // the approval page marks the parts of a command that ask.
    let mut summary = super::codes::summary_of(request);
    if let Some(fields) = summary.as_object_mut() {
        // A parked request is resumed as it was parked; a change is made again on resume.
        fields.remove("amended");
    }
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
        "agent": request.agent.as_ref().map_or(crate::protocol::MAIN_AGENT, |a| a.id.as_str()),
        "call_id": request.call_id,
        "tool": request.tool,
        "code": code,
        "expires_in_ms": ttl,
        "reasons": request.verdict.reason_lines(),
        "preview": request.preview,
        "next": format!("airlock approve {code}  (or: airlock deny {code}), then: airlock resume {session}"),
    }))
}
