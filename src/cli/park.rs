//! Parking and resuming: `airlock exec --approvals park` stores a checkpoint and a pending
//! approval with a one-time code; `airlock approvals list`, `airlock approve CODE`,
//! `airlock deny CODE` decide it from anywhere on the machine; `airlock resume RUN` goes on,
//! running exactly the frozen call (digest re-checked), once.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::exec::{self, ExecArgs, HeadlessApprovals, headless_approver};
use crate::agent::{Checkpoint, ParkedAnswer, Resume};
use crate::approval::approver::ApprovalRequest;
use crate::approval::frozen::{FrozenCall, hex};
use crate::approval::gate::now_ms;
use crate::config::ConfigFlags;
use crate::store;
use crate::store::db::Store;

/// How long a parked approval waits for a decision, unless `AIRLOCK_APPROVAL_TTL_MS` says.
pub const DEFAULT_TTL_MS: u64 = 24 * 3600 * 1000;

/// Everything `resume` needs, stored with the run.
#[derive(Debug, Serialize, Deserialize)]
pub struct ResumeSpec {
    pub checkpoint: Checkpoint,
    pub workspace: PathBuf,
    pub scenario: Option<PathBuf>,
    pub config: ConfigFlags,
    pub approvals: HeadlessApprovals,
    /// For a parked write or edit: the SHA-256 of the file it changes, as it was when parked.
    pub file_hash: Option<(PathBuf, Option<String>)>,
    /// The process that was running the turn (for a run that did not park).
    #[serde(default)]
    pub pid: Option<u32>,
}

/// Keeps a running turn's latest checkpoint, so `resume` can go on if this process dies.
pub fn save_running(
    args: &ExecArgs,
    session: &str,
    workspace: &Path,
    checkpoint: &Checkpoint,
) -> Result<()> {
    let spec = ResumeSpec {
        checkpoint: checkpoint.clone(),
        workspace: workspace.to_path_buf(),
        scenario: args.scenario.clone(),
        config: args.config.clone(),
        approvals: args.approvals,
        file_hash: None,
        pid: Some(std::process::id()),
    };
    let db = Store::open(&db_path())?;
    db.save_run(
        session,
        session,
        workspace,
        "running",
        Some(&serde_json::to_string(&spec)?),
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

fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_string()))
        .is_some_and(|r| !r.starts_with('Z') && !r.starts_with('X'))
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
    checkpoint: &Checkpoint,
    request: &ApprovalRequest,
) -> Result<Value> {
    let target = match request.tool.as_str() {
        "write_file" | "edit_file" => serde_json::from_str::<Value>(&request.frozen.canonical)
            .ok()
            .and_then(|a| a["path"].as_str().map(|p| workspace.join(p))),
        _ => None,
    };
    let spec = ResumeSpec {
        checkpoint: checkpoint.clone(),
        workspace: workspace.to_path_buf(),
        scenario: args.scenario.clone(),
        config: args.config.clone(),
        approvals: args.approvals,
        file_hash: target.map(|p| {
            let h = file_hash(&p);
            (p, h)
        }),
        pid: None,
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
            row.run_id,
            row.call_id,
            row.tool,
            summary["risk"],
            row.expires_ms.saturating_sub(now) / 1000
        )?;
        for r in summary["reasons"].as_array().into_iter().flatten() {
            writeln!(out, "  • {}", r.as_str().unwrap_or(""))?;
        }
        match summary["preview"]["kind"].as_str() {
            Some("command") => writeln!(
                out,
                "  $ {}",
                summary["preview"]["command"].as_str().unwrap_or("")
            )?,
            Some("diff") => {
                for l in summary["preview"]["unified"].as_str().unwrap_or("").lines() {
                    writeln!(out, "  {l}")?;
                }
            }
            _ => writeln!(out, "  args: {}", row.frozen.canonical)?,
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
    let row = db.decide(code, &decision.to_string(), now_ms())?;
    let live = db.run(&row.run_id)?.is_some_and(|r| r.state == "live");
    if live {
        return Ok(format!(
            "{} {} ({}); the running cockpit picks the answer up",
            if allow { "approved" } else { "denied" },
            row.call_id,
            row.tool
        ));
    }
    Ok(format!(
        "{} {} ({}) in run {}; go on with: airlock resume {}",
        if allow { "approved" } else { "denied" },
        row.call_id,
        row.tool,
        row.run_id,
        row.run_id
    ))
}

pub async fn resume(run: &str, out: &mut impl Write) -> Result<u8> {
    let db = Store::open(&db_path())?;
    let now = now_ms();
    let Some(row) = db.run(run)? else {
        bail!("no run {run}: check the id printed when it parked (airlock approvals list)");
    };
    if row.state == "running" {
        return resume_stopped(&db, run, row, out).await;
    }
    let call_id = db.approval_for_run(run)?.map(|a| a.call_id);
    if !db.transition_run(run, "parked", "resuming", now)? {
        let why = format!(
            "run {run} is not parked (it is {}); nothing runs twice",
            row.state
        );
        db.record_refusal(Some(run), call_id.as_deref(), "resume", &why, now)?;
        bail!(why);
    }
    let refuse = |why: String| -> Result<u8> {
        let _ = db.record_refusal(Some(run), call_id.as_deref(), "resume", &why, now);
        let _ = db.transition_run(run, "resuming", "parked", now);
        bail!(why)
    };
    let Ok(spec) = serde_json::from_str::<ResumeSpec>(row.checkpoint.as_deref().unwrap_or(""))
    else {
        return refuse(format!(
            "the checkpoint of run {run} is missing or unreadable; nothing runs"
        ));
    };
    let Some(approval) = db.approval_for_run(run)? else {
        return refuse(format!("run {run} has no approval to resume from"));
    };
    match approval.state.as_str() {
        "pending" if approval.expires_ms <= now => {
            let why = format!(
                "the approval for {} expired before it was decided; nothing runs",
                approval.call_id
            );
            let _ = db.record_refusal(Some(run), Some(&approval.call_id), "resume", &why, now);
            let _ = db.transition_run(run, "resuming", "expired", now);
            bail!(why);
        }
        "pending" => {
            return refuse(format!(
                "{} is not decided yet: airlock approve CODE or airlock deny CODE",
                approval.call_id
            ));
        }
        "approved" | "denied" => {}
        other => {
            return refuse(format!(
                "the approval for {} is {other}; nothing runs twice",
                approval.call_id
            ));
        }
    }
    // The call that runs is the one that was shown: the stored frozen text must match its digest,
    // the digest approved, and the call in the checkpoint.
    let Some(parked_call) = spec.checkpoint.calls.get(spec.checkpoint.parked) else {
        return refuse("the checkpoint does not hold the parked call".into());
    };
    let expected = FrozenCall::freeze(&parked_call.tool, &parked_call.args);
    if let Err(e) = approval.frozen.verified_args() {
        return refuse(format!("refused: {e}"));
    }
    if approval.frozen.digest != approval.digest || approval.digest != expected.digest {
        return refuse("refused: the stored call does not match the one that was approved (tampered?); nothing runs".into());
    }
    if let Some((path, hash)) = &spec.file_hash {
        if file_hash(path) != *hash {
            return refuse(format!(
                "refused: {} changed since the edit was parked; the diff that was approved no longer applies",
                path.display()
            ));
        }
    }
    if let Err(e) = db.consume(approval.id, now) {
        return refuse(e.to_string());
    }
    let decision: Value =
        serde_json::from_str(approval.decision.as_deref().unwrap_or("{}")).unwrap_or(Value::Null);
    let allow = approval.state == "approved";
    let reason = decision["reason"].as_str().map(str::to_string);
    let session_grant = decision["decision"] == "allow_session";
    let (args, started) = go_on(
        spec,
        row.session.clone(),
        Some(ParkedAnswer {
            call_id: approval.call_id.clone(),
            frozen: approval.frozen,
            allow,
            session_grant,
            reason,
        }),
    )?;
    writeln!(
        out,
        "{}",
        json!({"event": "resumed", "run": run, "call_id": approval.call_id, "allowed": allow})
    )?;
    let code = exec::drive(&args, started, out).await?;
    let state = if code == exec::status::PARKED {
        "parked"
    } else if code == exec::status::COMPLETED {
        "done"
    } else {
        "failed"
    };
    // A run that parked again was saved by `drive` under the same id; only finish the others.
    if state != "parked" {
        let _ = db.transition_run(run, "resuming", state, now_ms());
    }
    Ok(code)
}

/// Goes on with a run whose process stopped (killed, crashed) mid-turn: calls that had started are
/// reported as interrupted and never run again; the rest of the batch is gated again.
async fn resume_stopped(
    db: &Store,
    run: &str,
    row: crate::store::db::RunRow,
    out: &mut impl Write,
) -> Result<u8> {
    let spec: ResumeSpec = serde_json::from_str(row.checkpoint.as_deref().unwrap_or(""))
        .with_context(|| format!("the checkpoint of run {run} is missing or unreadable"))?;
    if spec.pid.is_some_and(process_alive) {
        bail!(
            "run {run} is still running (process {}); resume it only after it stopped",
            spec.pid.unwrap_or(0)
        );
    }
    if !db.transition_run(run, "running", "resuming", now_ms())? {
        bail!("run {run} is being resumed elsewhere; nothing runs twice");
    }
    // A command the dead process had started may still be running on its own (it had its own
    // process group). It is reported as interrupted, so it must not go on either: stop it.
    for &index in &spec.checkpoint.started {
        if let Some(call) = spec.checkpoint.calls.get(index) {
            if call.tool == "bash" {
                if let Some(command) = call.args["command"].as_str() {
                    kill_leftover(command, &spec.workspace);
                }
            }
        }
    }
    let (args, started) = go_on(spec, row.session.clone(), None)?;
    writeln!(
        out,
        "{}",
        json!({"event": "resumed", "run": run, "after": "the process running it stopped"})
    )?;
    exec::drive(&args, started, out).await
}

/// Starts the agent again on a stored run, from its checkpoint, with the parked call's answer.
fn go_on(
    spec: ResumeSpec,
    session: String,
    answer: Option<ParkedAnswer>,
) -> Result<(ExecArgs, exec::Started)> {
    let args = ExecArgs {
        workspace: Some(spec.workspace),
        scenario: spec.scenario,
        config: spec.config,
        approvals: spec.approvals,
        prompt: Some("(resumed)".into()),
        human: false,
    };
    let started = exec::start_with(
        &args,
        Some(headless_approver(spec.approvals)),
        Some(session),
        Some(Resume {
            checkpoint: spec.checkpoint,
            answer,
        }),
    )?;
    Ok((args, started))
}

/// Kills the process group of a `bash -c COMMAND` still running in `workspace` (the tool starts
/// each command as the leader of its own group, so its pid is the group id).
fn kill_leftover(command: &str, workspace: &Path) {
    let wanted = format!("bash\0-c\0{command}\0");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline != wanted.as_bytes() {
            continue;
        }
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        let here = std::fs::canonicalize(workspace).ok();
        if cwd.is_some() && cwd == here {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
