//! `airlock resume RUN`: goes on with a parked run, or with one whose process stopped.
//!
//! A parked run is claimed (`parked` -> `resuming`, owned by this process), checked (signatures,
//! the approval's state and expiry, the frozen digest, the file a parked edit depends on, the
//! call judged again by the policy as things are now), and only then is its approval consumed and
//! the agent started. Every refusal before that puts the run back to `parked`, nothing used.
//!
//! A run `running` or `resuming` whose owner process is gone (killed, crashed) is taken over: a
//! call that may have started is reported to the model as interrupted and never run again; an
//! approval consumed but never acted on is given back (if the resume failed before the agent
//! started) or settled as it was decided.

use std::io::Write;

use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};

use crate::agent::{ParkedAnswer, Resume};
use crate::approval::gate::judged_path;
use crate::approval::policy::Limits;
use crate::cli::exec::{self, ExecArgs, headless_approver};
use crate::cli::runs::{ResumeSpec, db_path, file_hash, kill_leftover, owner, rejudge};
use crate::clock::now_ms;
use crate::protocol::FrozenCall;
use crate::store::db::{ApprovalRow, RunRow, Store};
use crate::visible::visible;

/// Goes on with run `run`; `accept_changed_policy`: the person has seen that the policy files
/// changed since it started and goes on with them as they are now.
pub async fn resume(run: &str, accept_changed_policy: bool, out: &mut impl Write) -> Result<u8> {
    let db = Store::open(&db_path())?;
    let Some(row) = db.run(run)? else {
        bail!(
            "no run {}: check the id printed when it parked (airlock approvals list)",
            visible(run)
        );
    };
    let me = owner::me();
    match row.state.as_str() {
        "parked" => {
            if !db.transition_run(run, "parked", "resuming", Some(&me), now_ms())? {
                bail!(
                    "run {} is being resumed elsewhere; nothing runs twice",
                    visible(run)
                );
            }
            resume_parked(&db, run, row, &me, accept_changed_policy, out).await
        }
        "running" | "resuming" => {
            if owner::alive(row.owner.as_deref()) {
                bail!(
                    "run {} is still {} (process {}); resume it only after that process stopped",
                    visible(run),
                    if row.state == "running" {
                        "running"
                    } else {
                        "being resumed"
                    },
                    visible(owner::pid(row.owner.as_deref()))
                );
            }
            let now = now_ms();
            if !db.take_over(run, &row.state, row.owner.as_deref(), &me, now)?
                || !(row.state == "resuming"
                    || db.transition_run(run, "running", "resuming", Some(&me), now)?)
            {
                bail!(
                    "run {} is being resumed elsewhere; nothing runs twice",
                    visible(run)
                );
            }
            take_over(&db, run, row, &me, accept_changed_policy, out).await
        }
        other => {
            let call_id = db.approval_for_run(run)?.map(|a| a.call_id);
            let why = format!("run {run} is not parked (it is {other}); nothing runs twice");
            db.record_refusal(Some(run), call_id.as_deref(), "resume", &why, now_ms())?;
            bail!(visible(&why))
        }
    }
}

/// Puts a refusal on record and gives the run back to `parked`, nothing used.
fn refuse(db: &Store, run: &str, call_id: Option<&str>, why: String) -> anyhow::Error {
    let now = now_ms();
    let _ = db.record_refusal(Some(run), call_id, "resume", &why, now);
    let _ = db.transition_run(run, "resuming", "parked", None, now);
    anyhow!(visible(&why))
}

/// Refuses to go on when a file airlock reads as policy changed since the run started (a
/// command may have changed it), unless the person has confirmed the change.
fn policy_unchanged(run: &str, spec: &ResumeSpec, accept: bool) -> Result<(), String> {
    let changes = spec.policy_files.changes_now();
    if changes.is_empty() || accept {
        return Ok(());
    }
    Err(format!(
        "refused: the files airlock reads as policy changed since run {run} started, and a \
         change is never used without you seeing it (a command may have made it):\n  {}\n\
         check them, then go on with: airlock resume {run} --accept-changed-policy; nothing ran",
        changes.join("\n  ")
    ))
}

fn spec_of(run: &str, row: &RunRow) -> Result<ResumeSpec, String> {
    if !row.signed {
        return Err(format!(
            "refused: the checkpoint of run {run} was changed outside airlock (tampered): its signature does not verify; nothing runs"
        ));
    }
    serde_json::from_str(row.checkpoint.as_deref().unwrap_or(""))
        .map_err(|_| format!("the checkpoint of run {run} is missing or unreadable; nothing runs"))
}

/// Resumes a parked run this process has claimed (`resuming`, owned by `me`).
async fn resume_parked(
    db: &Store,
    run: &str,
    row: RunRow,
    me: &str,
    accept_changed_policy: bool,
    out: &mut impl Write,
) -> Result<u8> {
    let now = now_ms();
    let latest = db.approval_for_run(run)?;
    let call_id = latest.as_ref().map(|a| a.call_id.clone());
    let refused = |why: String| refuse(db, run, call_id.as_deref(), why);
    let spec = spec_of(run, &row).map_err(&refused)?;
    policy_unchanged(run, &spec, accept_changed_policy).map_err(&refused)?;
    let Some(approval) = latest else {
        return Err(refused(format!("run {run} has no approval to resume from")));
    };
    if let Some(tampered) = db.tampering(&approval)? {
        return Err(refused(format!("{tampered}; nothing runs")));
    }
    match approval.state.as_str() {
        "pending" if approval.expires_ms <= now => {
            let why = format!(
                "the approval for {} expired before it was decided; nothing runs",
                approval.call_id
            );
            let _ = db.record_refusal(Some(run), Some(&approval.call_id), "resume", &why, now);
            let _ = db.transition_run(run, "resuming", "expired", None, now);
            bail!(visible(&why));
        }
        "pending" => {
            return Err(refused(format!(
                "{} is not decided yet: airlock approve CODE or airlock deny CODE",
                approval.call_id
            )));
        }
        "approved" | "denied" => {}
        other => {
            return Err(refused(format!(
                "the approval for {} is {other}; nothing runs twice",
                approval.call_id
            )));
        }
    }
    // The call that runs is the one that was shown: the stored frozen text must match its digest,
    // the digest approved, and the call in the checkpoint.
    // The call may be a sub-agent's, parked with the whole tree.
    let Some(asking) = spec.checkpoint.asking(&approval.call_id) else {
        return Err(refused(format!(
            "the checkpoint does not hold the parked call {}; nothing runs",
            approval.call_id
        )));
    };
    let parked_call = asking.call;
    let args = match approval.frozen.verified_args() {
        Ok(args) => args,
        Err(e) => return Err(refused(format!("refused: {e}"))),
    };
    // The gate froze the call with the sandbox profile it was to run under (the model's
    // call in the checkpoint may name none): the profile that was approved is the one that runs.
    let expected = match crate::sandbox::profile_arg(&args) {
        Ok(Some(profile)) => FrozenCall::freeze(
            &parked_call.tool,
            &crate::sandbox::with_profile(&parked_call.tool, &parked_call.args, profile),
        ),
        _ => FrozenCall::freeze(&parked_call.tool, &parked_call.args),
    };
    if approval.frozen.digest != approval.digest || approval.digest != expected.digest {
        return Err(refused("refused: the stored call does not match the one that was approved (tampered?); nothing runs".into()));
    }
    let allow = approval.state == "approved";
    if allow {
        if let Some((path, hash)) = &spec.file_hash
            && file_hash(path) != *hash
        {
            return Err(refused(format!(
                "refused: {} changed since the edit was parked; the diff that was approved no longer applies",
                path.display()
            )));
        }
        let limits = match asking.agent {
            Some(agent) => Some(
                Limits::from_names(&agent.mode, agent.sandbox.as_deref()).map_err(|e| {
                    refused(format!(
                        "refused: the checkpoint of sub-agent {} names an {e}; nothing runs",
                        agent.label.id
                    ))
                })?,
            ),
            None => None,
        };
        rejudged(&spec, &approval, &args, limits.as_ref()).map_err(&refused)?;
    }
    if let Err(e) = db.consume(&approval, now) {
        return Err(refused(e.to_string()));
    }
    go_on_answered(db, run, spec, row.session, approval, me, out).await
}

/// Judges the approved call again, as things are now; `Err` says why it may not run.
/// A sub-agent's call is judged under its `limits` (its mode and sandbox), as it was when it
/// parked.
fn rejudged(
    spec: &ResumeSpec,
    approval: &ApprovalRow,
    args: &Value,
    limits: Option<&Limits>,
) -> Result<(), String> {
    let Some(parked) = &spec.verdict else {
        return Err(format!(
            "refused: the checkpoint does not say how {} was judged when it parked; nothing runs",
            approval.call_id
        ));
    };
    let policy = exec::policy_for(&args_of(spec), &spec.workspace).map_err(|e| {
        format!(
            "refused: {} cannot be judged again ({e:#}); nothing runs",
            approval.call_id
        )
    })?;
    if let Some(why) = rejudge::mcp_definition_gone(
        policy.mcp.as_deref(),
        &approval.tool,
        spec.mcp_definition.as_deref(),
    ) {
        return Err(format!(
            "refused: {} ({}) cannot run as it was approved: {why}; nothing runs",
            approval.call_id, approval.tool
        ));
    }
    let verdict = policy.assess_within(&approval.tool, args, limits).verdict;
    let now = rejudge::ParkedVerdict::of(&verdict);
    let why = rejudge::stricter(parked, &now).or_else(|| {
        rejudge::moved(
            &policy.paths,
            spec.judged_path.as_deref(),
            judged_path(&verdict).as_deref(),
        )
    });
    match why {
        Some(why) => Err(format!(
            "refused: {} ({}) was judged again and {why}; nothing runs. If that is expected, run it again and approve the new request",
            approval.call_id, approval.tool
        )),
        None => Ok(()),
    }
}

/// Starts the agent with the parked call's decision (its approval already consumed by this
/// process) and drives the turn. If the agent cannot start, the approval is given back and the
/// run is `parked` again: nothing ran, so a later resume may use it, once.
async fn go_on_answered(
    db: &Store,
    run: &str,
    spec: ResumeSpec,
    session: String,
    approval: ApprovalRow,
    me: &str,
    out: &mut impl Write,
) -> Result<u8> {
    let decision: Value =
        serde_json::from_str(approval.decision.as_deref().unwrap_or("{}")).unwrap_or(Value::Null);
    let allow = approval.decided_state() == "approved";
    let answer = ParkedAnswer {
        call_id: approval.call_id.clone(),
        frozen: approval.frozen.clone(),
        allow,
        session_grant: decision["decision"] == "allow_session",
        reason: decision["reason"].as_str().map(str::to_string),
        judged_path: spec.judged_path.clone(),
        mcp_definition: spec.mcp_definition.clone(),
        change: change_with(&decision, &approval.summary),
    };
    let (args, started) = match go_on(spec, session, Some(answer)) {
        Ok(started) => started,
        Err(e) => {
            let given_back = db.unconsume(&approval).unwrap_or(false)
                && db.transition_run(run, "resuming", "parked", None, now_ms())?;
            let why = format!(
                "the run could not start again ({e:#}); nothing ran{}",
                if given_back {
                    "; the approval is kept: fix this and resume again"
                } else {
                    ""
                }
            );
            let _ = db.record_refusal(Some(run), Some(&approval.call_id), "resume", &why, now_ms());
            bail!(visible(&why));
        }
    };
    writeln!(
        out,
        "{}",
        json!({"event": "resumed", "run": run, "call_id": approval.call_id, "allowed": allow})
    )?;
    drive_to_end(db, run, me, &args, started, out).await
}

/// Drives a started turn and records how the run ended. If this process fails mid-turn, the run
/// stays `resuming` under this process: once it has exited, a later resume takes it over.
async fn drive_to_end(
    db: &Store,
    run: &str,
    me: &str,
    args: &ExecArgs,
    started: exec::Started,
    out: &mut impl Write,
) -> Result<u8> {
    // A run answered on the approval page serves it again for the rest of its turn.
    let _page = super::super::remote::serve_page(args, &started, out).await?;
    let code = exec::drive(args, started, out).await?;
    let state = match code {
        exec::status::PARKED => return Ok(code),
        exec::status::COMPLETED => "done",
        exec::status::INTERRUPTED => "interrupted",
        _ => "failed",
    };
    // `drive` finished the run already; this only covers a turn that ended without saying how.
    let still_mine = db.run(run)?.is_some_and(|r| r.owner.as_deref() == Some(me));
    if still_mine {
        db.set_run_state(run, state, now_ms())?;
    }
    Ok(code)
}

/// Goes on with a run whose owner process is gone; this process owns it now (`resuming`).
async fn take_over(
    db: &Store,
    run: &str,
    row: RunRow,
    me: &str,
    accept_changed_policy: bool,
    out: &mut impl Write,
) -> Result<u8> {
    let mut spec = match spec_of(run, &row)
        .and_then(|spec| policy_unchanged(run, &spec, accept_changed_policy).map(|()| spec))
    {
        Ok(spec) => spec,
        Err(why) => {
            let _ = db.record_refusal(Some(run), None, "resume", &why, now_ms());
            bail!(visible(&why));
        }
    };
    if spec.pid.is_none() {
        // The spec is the parked one: the dead process had claimed the run but saved no
        // checkpoint of its own. Where its approval stands says what it may have done.
        let Some(approval) = db.approval_for_run(run)? else {
            return Err(refuse(
                db,
                run,
                None,
                format!("run {run} has no approval to resume from"),
            ));
        };
        if !approval.consumed() {
            return resume_parked(db, run, row, me, accept_changed_policy, out).await;
        }
        if let Some(tampered) = db.tampering(&approval)? {
            let why = format!("{tampered}; nothing runs");
            let _ = db.record_refusal(Some(run), Some(&approval.call_id), "resume", &why, now_ms());
            bail!(visible(&why));
        }
        if approval.decided_state() != "approved" {
            // A denial runs nothing: hand it to the model again.
            return go_on_answered(db, run, spec, row.session, approval, me, out).await;
        }
        // The approved call may have started: it counts as started, and never runs again
        // (in the agent it belongs to: the session's own, or a parked sub-agent).
        if !spec.checkpoint.count_as_started(&approval.call_id) {
            let why = format!(
                "the checkpoint of run {run} does not hold the parked call {}; nothing runs",
                approval.call_id
            );
            let _ = db.record_refusal(Some(run), Some(&approval.call_id), "resume", &why, now_ms());
            bail!(visible(&why));
        }
    }
    // A command the dead process had started may still be running on its own (it had its own
    // process group). It is reported as interrupted, so it must not go on either: stop it.
    for call in spec.checkpoint.started_calls() {
        if call.tool == "bash"
            && let Some(command) = call.args["command"].as_str()
        {
            kill_leftover(command, &spec.workspace);
        }
    }
    let (args, started) = go_on(spec, row.session.clone(), None).map_err(|e| {
        anyhow!(visible(&format!(
            "run {run} could not start again ({e:#}); fix this and resume again"
        )))
    })?;
    writeln!(
        out,
        "{}",
        json!({"event": "resumed", "run": run, "after": "the process running it stopped"})
    )?;
    drive_to_end(db, run, me, &args, started, out).await
}

fn args_of(spec: &ResumeSpec) -> ExecArgs {
    ExecArgs {
        workspace: Some(spec.workspace.clone()),
        scenario: spec.scenario.clone(),
        config: spec.config.clone(),
        approvals: spec.approvals,
        prompt: Some("(resumed)".into()),
        human: false,
    }
}

/// Starts the agent again on a stored run, from its checkpoint, with the parked call's answer.
/// The change given with a code (`airlock approve CODE --hunks ...` or `--command ...`), with
/// the preview the code showed.
fn change_with(
    decision: &Value,
    summary: &str,
) -> Option<(crate::protocol::Amendment, Option<crate::protocol::Preview>)> {
    let amendment = serde_json::from_value(decision.get("amend")?.clone()).ok()?;
    let summary: Value = serde_json::from_str(summary).unwrap_or(Value::Null);
    let shown = crate::protocol::Preview::from_stored(&summary["preview"]);
    Some((amendment, shown))
}

fn go_on(
    spec: ResumeSpec,
    session: String,
    answer: Option<ParkedAnswer>,
) -> Result<(ExecArgs, exec::Started)> {
    let args = args_of(&spec);
    let started = exec::start_with(
        &args,
        Some(headless_approver(spec.approvals)),
        Some(session),
        Some(Resume {
            checkpoint: spec.checkpoint,
            answer,
            show_history: false,
        }),
    )?;
    Ok((args, started))
}
