//! One-time codes kept in the state database: the `agent::CodeBook` a cockpit gives its agent,
//! so a request can be answered from another terminal (`airlock approve CODE`). Each request
//! opens the database once and keeps that connection while it waits.

use std::path::PathBuf;

use crate::agent::{CodeBook, IssuedCode};
use crate::clock::now_ms;
use crate::protocol::{ApprovalRequest, Decision};
use crate::store::db::Store;

/// How long a code answers when its request has no deadline of its own.
const CODE_TTL_MS: u64 = 24 * 3600 * 1000;

/// The codes of one session's requests, in the state database at `db`.
#[derive(Clone, Debug)]
pub struct StateDbCodes {
    pub db: PathBuf,
    pub session: String,
    /// The run its requests are kept under: the session itself for a cockpit; a headless run
    /// answered on the approval page keeps them beside its own run (whose checkpoint moves as
    /// it goes), so an answer is not refused as made for another checkpoint.
    pub run: String,
    pub workspace: PathBuf,
}

/// What a person reads about a request, as stored with its code: risk, reasons, preview, the
/// sub-agent that asks, a change made to it, and the parts of a command that ask or are denied
/// (each with its byte range, which the approval page marks).
pub fn summary_of(request: &ApprovalRequest) -> serde_json::Value {
    use crate::protocol::{PartKind, Ruling};
    // What the person's hooks said (a hook that asks, one that failed) is a reason too:
    // whoever answers later (`airlock approvals list`, the inbox, the page) sees it as the
    // modal shows it.
    let mut reasons = request.verdict.reason_lines();
    reasons.extend(request.hooks.iter().map(|line| format!("⚑ {line}")));
    let mut summary = serde_json::json!({
        "risk": request.risk,
        "reasons": reasons,
        "preview": request.preview,
    });
    if let Some(agent) = &request.agent {
        summary["agent"] = serde_json::json!({"id": agent.id, "task": agent.task});
    }
    if let Some(amended) = &request.amended {
        summary["amended"] = serde_json::json!({
            "original_digest": amended.original_digest,
            "amendment": amended.amendment,
        });
    }
    let parts: Vec<serde_json::Value> = request
        .verdict
        .parts
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            matches!(
                p.kind,
                PartKind::Command | PartKind::Redirect | PartKind::Script
            )
        })
        .map(|(index, p)| {
            let why: Vec<&str> = request
                .verdict
                .reasons
                .iter()
                .filter(|r| r.part == Some(index) && p.ruling != Ruling::Allow)
                .map(|r| r.message.as_str())
                .collect();
            serde_json::json!({
                "label": p.label,
                "ruling": p.ruling,
                "span": p.span.as_ref().map(|s| [s.start, s.end]),
                "why": why,
            })
        })
        .collect();
    if !parts.is_empty() {
        summary["parts"] = serde_json::Value::Array(parts);
    }
    summary
}

impl CodeBook for StateDbCodes {
    fn issue(&self, request: &ApprovalRequest) -> Option<Box<dyn IssuedCode>> {
        let store = Store::open(&self.db).ok()?;
        let now = now_ms();
        let (session, workspace, run) = (&self.session, &self.workspace, &self.run);
        store
            .save_run(run, session, workspace, "live", None, now)
            .ok()?;
        let ttl = request
            .deadline_ms
            .map(|d| d.saturating_sub(now))
            .unwrap_or(CODE_TTL_MS);
        let (call_id, frozen) = (&request.call_id, &request.frozen);
        let watch = || {
            self.db
                .parent()
                .and_then(crate::store::watch::DirWatch::new)
        };
        // Changed by a person in an earlier run of this session and left waiting (parked, or
        // the cockpit quit): asked about as changed, with the change's own code.
        if request.amended.is_none()
            && let Some((code, amendment)) =
                changed_before(&store, run, call_id, &frozen.digest, now)
        {
            let watch = watch();
            return Some(Box::new(ChangedCode {
                code: StoredCode::new(store, code, watch),
                amendment,
            }));
        }
        let summary = summary_of(request).to_string();
        let run = &self.run;
        // Asked before for exactly this call (a reopened session): the same code, so the one
        // printed then still answers it, and an answer given with it meanwhile counts.
        let code = match store.reusable_code(run, call_id, &frozen.digest, now) {
            Ok(Some(code)) => code,
            _ => store
                .add_approval(run, session, call_id, frozen, &summary, now, ttl)
                .ok()?,
        };
        // Woken by writes to the database's directory, not by a timer.
        let watch = watch();
        Some(Box::new(StoredCode::new(store, code, watch)))
    }
}

/// The newest change a person made to the call asked about as `digest`, kept in a signed
/// approval of this session not yet used: its code and the change.
fn changed_before(
    store: &Store,
    session: &str,
    call_id: &str,
    digest: &str,
    now: u64,
) -> Option<(String, crate::protocol::Amendment)> {
    let rows = store.changed_approvals_of_call(session, call_id).ok()?;
    rows.iter().rev().find_map(|row| {
        if !row.signed || row.consumed() {
            return None;
        }
        let summary: serde_json::Value = serde_json::from_str(&row.summary).ok()?;
        let amended = summary.get("amended")?;
        if amended["original_digest"] != digest {
            return None;
        }
        let amendment = serde_json::from_value(amended["amendment"].clone()).ok()?;
        let code = store
            .reusable_code(session, call_id, &row.digest, now)
            .ok()??;
        Some((code, amendment))
    })
}

/// The code of a call's change made in an earlier run: the call is answered at once with the
/// change, so the gate makes it again and asks about the changed call (with this code), or
/// settles it with the answer the code got meanwhile.
struct ChangedCode {
    code: StoredCode,
    amendment: crate::protocol::Amendment,
}

impl IssuedCode for ChangedCode {
    fn code(&self) -> &str {
        self.code.code()
    }

    fn answered(&self) -> Option<Decision> {
        Some(Decision::Amend {
            amendment: self.amendment.clone(),
            answer: self.code.answered().map(Box::new),
        })
    }

    fn settle(&self, _decision: &Decision) -> Option<Decision> {
        self.answered()
    }

    fn via(&self) -> serde_json::Value {
        self.code.via()
    }
}

struct StoredCode {
    store: Store,
    code: String,
    watch: Option<crate::store::watch::DirWatch>,
    /// How the last answer read came (the `by` its decision names: a paired device).
    via: std::sync::Mutex<Option<serde_json::Value>>,
}

impl StoredCode {
    fn new(store: Store, code: String, watch: Option<crate::store::watch::DirWatch>) -> Self {
        StoredCode {
            store,
            code,
            watch,
            via: std::sync::Mutex::new(None),
        }
    }
}

impl IssuedCode for StoredCode {
    fn code(&self) -> &str {
        &self.code
    }

    fn answered(&self) -> Option<Decision> {
        // A first look at the state alone: a request still pending (what it is at every look
        // but the last) is not read whole and verified each time the state directory changes.
        // Only "approved" or "denied" can be an answer; whatever the look says, only a row
        // whose signature verifies is acted on.
        let state = self
            .store
            .approval_state_by_code(&self.code)
            .ok()
            .flatten()?;
        if !matches!(state.as_str(), "approved" | "denied") {
            return None;
        }
        // Only an answer airlock signed counts: a row set to approved with sqlite3 is not one.
        let row = self.store.approval_by_code(&self.code).ok().flatten()?;
        let decision: serde_json::Value =
            serde_json::from_str(row.decision.as_deref().unwrap_or("{}")).unwrap_or_default();
        if row.signed {
            *self.via.lock().unwrap_or_else(|e| e.into_inner()) = Some(
                decision
                    .get("by")
                    .cloned()
                    .unwrap_or(serde_json::json!({"channel": "code"})),
            );
        }
        row.signed
            .then(|| stored_decision(&row.state, row.decision.as_deref()))
            .flatten()
    }

    fn via(&self) -> serde_json::Value {
        self.via
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or(serde_json::json!({"channel": "code"}))
    }

    fn settle(&self, decision: &Decision) -> Option<Decision> {
        match self
            .store
            .decide(&self.code, &decision_json(decision), now_ms())
        {
            Ok(_) => None,
            Err(_) => self.answered(),
        }
    }

    fn changes(&self) -> crate::approval::approver::BoxFuture<'static, ()> {
        match &self.watch {
            Some(watch) => Box::pin(watch.changed()),
            None => Box::pin(tokio::time::sleep(crate::store::watch::LONGEST_WAIT)),
        }
    }
}

/// The decision a stored answer stands for.
fn stored_decision(state: &str, json: Option<&str>) -> Option<Decision> {
    let value: serde_json::Value = serde_json::from_str(json.unwrap_or("{}")).unwrap_or_default();
    let answer = match state {
        "approved" => match (value["decision"].as_str(), value["note"].as_str()) {
            (Some("allow_session"), _) => Decision::AllowSession { directory: false },
            (_, Some(note)) => Decision::AllowNoted {
                note: note.to_string(),
            },
            _ => Decision::AllowOnce,
        },
        "denied" => Decision::Deny {
            reason: value["reason"].as_str().map(str::to_string),
        },
        _ => return None,
    };
    // Approved with a change (`airlock approve CODE --hunks` / `--command`): the gate makes the
    // change and judges it again, then settles it with the answer.
    match value.get("amend") {
        Some(amend) if state == "approved" => Some(Decision::Amend {
            amendment: serde_json::from_value(amend.clone()).ok()?,
            answer: Some(Box::new(answer)),
        }),
        _ => Some(answer),
    }
}

fn decision_json(decision: &Decision) -> String {
    match decision {
        Decision::AllowOnce => r#"{"decision":"allow_once"}"#.to_string(),
        Decision::AllowSession { .. } => r#"{"decision":"allow_session"}"#.to_string(),
        Decision::Deny { reason } => {
            serde_json::json!({"decision": "deny", "reason": reason}).to_string()
        }
        Decision::AllowNoted { note } => {
            serde_json::json!({"decision": "allow_once", "note": note}).to_string()
        }
        // The call this code was for is not the one that runs now: the changed call is asked
        // about again with a code of its own, and this one answers nothing any more.
        Decision::Amend { .. } => serde_json::json!({
            "decision": "deny",
            "reason": "changed before it was answered: the changed call has a code of its own",
        })
        .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::FrozenCall;

    fn issued(store: Store, call_id: &str) -> StoredCode {
        let frozen = FrozenCall::freeze("bash", &serde_json::json!({"command": "make"}));
        store
            .save_run("s", "s", std::path::Path::new("/w"), "live", None, 1)
            .unwrap();
        let code = store
            .add_approval("s", "s", call_id, &frozen, "{}", 1, 1 << 40)
            .unwrap();
        StoredCode::new(store, code, None)
    }

    /// The request the gate makes for `command` (call `c1`), changed from `from` if given.
    fn request(command: &str, from: Option<&ApprovalRequest>) -> ApprovalRequest {
        let mut request = crate::ui::testing::command_request("c1", command);
        request.frozen = FrozenCall::freeze("bash", &serde_json::json!({"command": command}));
        request.amended = from.map(|original| crate::protocol::AmendedCall {
            original_digest: original.frozen.digest.clone(),
            change: "command edited by the user".into(),
            told: String::new(),
            amendment: Some(crate::protocol::Amendment::Command {
                command: command.into(),
            }),
        });
        request
    }

    #[test]
    fn a_call_changed_in_an_earlier_run_is_asked_about_again_as_changed_with_its_own_code() {
        let dir = tempfile::tempdir().unwrap();
        let book = StateDbCodes {
            db: dir.path().join("airlock.db"),
            session: "s".into(),
            run: "s".into(),
            workspace: dir.path().to_path_buf(),
        };
        let original = request("make", None);
        let first = book.issue(&original).unwrap();
        // The person edits the command: the original's code is closed, the change gets one.
        let change = Decision::Amend {
            amendment: crate::protocol::Amendment::Command {
                command: "make -j2".into(),
            },
            answer: None,
        };
        assert_eq!(first.settle(&change), None);
        let changed = request("make -j2", Some(&original));
        let second = book.issue(&changed).unwrap();
        assert_ne!(first.code(), second.code());
        // The cockpit quits; reopened, the gate asks about the call as the model proposed it.
        let again = book.issue(&original).unwrap();
        assert_eq!(
            again.code(),
            second.code(),
            "the change's code still answers it"
        );
        let Some(Decision::Amend { amendment, answer }) = again.answered() else {
            panic!("not answered with the change");
        };
        assert_eq!(
            amendment,
            crate::protocol::Amendment::Command {
                command: "make -j2".into()
            }
        );
        assert_eq!(answer, None, "the change still waits for its answer");
        // Answered from another terminal meanwhile: settled with that answer.
        let store = Store::open(&book.db).unwrap();
        store
            .decide(second.code(), r#"{"decision":"allow_once"}"#, now_ms())
            .unwrap();
        let Some(Decision::Amend { answer, .. }) = book.issue(&original).unwrap().answered() else {
            panic!("not answered with the change");
        };
        assert_eq!(answer, Some(Box::new(Decision::AllowOnce)));
    }

    #[test]
    fn only_a_signed_decision_is_an_answer_and_a_pending_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("airlock.db");
        let decided = issued(Store::open(&db).unwrap(), "c1");
        assert_eq!(decided.answered(), None);
        decided
            .store
            .decide(&decided.code, r#"{"decision":"allow_once"}"#, 5)
            .unwrap();
        assert_eq!(decided.answered(), Some(Decision::AllowOnce));
        // Set to approved outside airlock: the state says approved, the signature does not.
        let forged = issued(Store::open(&db).unwrap(), "c2");
        let raw = rusqlite::Connection::open(&db).unwrap();
        raw.execute(
            "UPDATE approvals SET state = 'approved', decision = '{\"decision\":\"allow_once\"}' WHERE call_id = 'c2'",
            [],
        )
        .unwrap();
        assert_eq!(
            forged.store.approval_state_by_code(&forged.code).unwrap(),
            Some("approved".to_string())
        );
        assert_eq!(forged.answered(), None);
        // Used once it was decided: no longer an answer.
        let row = decided
            .store
            .approval_by_code(&decided.code)
            .unwrap()
            .unwrap();
        decided.store.consume(&row, 6).unwrap();
        assert_eq!(decided.answered(), None);
    }
}
