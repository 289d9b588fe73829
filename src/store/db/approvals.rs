//! Approvals (one-time codes, decisions, consumption) and the refusals kept on record.
//!
//! An approval row is signed when it is made (over run, session, call, tool, digest, frozen text,
//! summary, code hash, times, the hash of the run spec it was made for, and its state) and signed
//! again with its decision. Being consumed only appends `+consumed` to the state, which is not
//! signed: it can only stop a call from running, never make one run.

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::{Store, StoreError, spec_hash};
use crate::digest::hex;
use crate::protocol::FrozenCall;

/// A pending (or decided) approval as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    pub id: i64,
    pub run_id: String,
    pub session: String,
    pub call_id: String,
    pub tool: String,
    pub digest: String,
    pub frozen: FrozenCall,
    /// The frozen call as stored (JSON), which the signature covers.
    pub frozen_text: String,
    /// What a person reads: risk, reasons, preview (JSON).
    pub summary: String,
    pub code_hash: String,
    pub created_ms: u64,
    pub expires_ms: u64,
    pub state: String,
    pub decision: Option<String>,
    /// The hash of the run spec (`super::spec_hash`) the approval was made for.
    pub spec_hash: String,
    /// Its signature verifies: nothing in it was changed outside airlock.
    pub signed: bool,
    mac: Option<String>,
}

impl ApprovalRow {
    /// `pending`, `approved` or `denied`, without the `+consumed` mark.
    pub fn decided_state(&self) -> &str {
        self.state.strip_suffix("+consumed").unwrap_or(&self.state)
    }

    pub fn consumed(&self) -> bool {
        self.state.ends_with("+consumed")
    }
}

/// An answer or resume that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub at_ms: u64,
    pub call_id: Option<String>,
    pub action: String,
    pub reason: String,
}

pub fn code_hash(code: &str) -> String {
    let normal: String = code
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase();
    hex(&Sha256::digest(normal.as_bytes()))
}

/// A fresh one-time code, `XXXX-XXXX` from an alphabet without look-alikes.
pub fn new_code() -> Result<String, StoreError> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    let bytes = super::devices::random_bytes::<8>("a one-time code")?;
    let chars: String = bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    Ok(format!("{}-{}", &chars[..4], &chars[4..]))
}

/// What an approval's signature covers, with `state` and `decision` as given (so a decision can
/// be signed before it is written).
fn approval_mac(store: &Store, row: &ApprovalRow, state: &str, decision: Option<&str>) -> String {
    let created = row.created_ms.to_string();
    let expires = row.expires_ms.to_string();
    store.key.mac(
        "approval",
        &[
            row.run_id.as_bytes(),
            row.session.as_bytes(),
            row.call_id.as_bytes(),
            row.tool.as_bytes(),
            row.digest.as_bytes(),
            row.frozen_text.as_bytes(),
            row.summary.as_bytes(),
            row.code_hash.as_bytes(),
            created.as_bytes(),
            expires.as_bytes(),
            row.spec_hash.as_bytes(),
            state.as_bytes(),
            if decision.is_some() { b"1" } else { b"0" },
            decision.unwrap_or("").as_bytes(),
        ],
    )
}

/// The file written after each new request and each answer is committed (see
/// `Store::ring_bell`).
pub const BELL: &str = "approvals.bell";

/// The message for a row whose signature does not verify.
pub fn tampered(call_id: &str) -> String {
    format!(
        "refused: the approval for {call_id} was changed outside airlock (tampered): its signature does not verify"
    )
}

impl Store {
    const COLUMNS: &'static str = "id, run_id, session, call_id, tool, digest, frozen, summary, code_hash, created_ms, expires_ms, state, decision, spec_hash, mac";

    fn row(r: &rusqlite::Row) -> rusqlite::Result<ApprovalRow> {
        let frozen_text: String = r.get(6)?;
        Ok(ApprovalRow {
            id: r.get(0)?,
            run_id: r.get(1)?,
            session: r.get(2)?,
            call_id: r.get(3)?,
            tool: r.get(4)?,
            digest: r.get(5)?,
            frozen: serde_json::from_str(&frozen_text).unwrap_or(FrozenCall {
                tool: String::new(),
                canonical: frozen_text.clone(),
                digest: String::new(),
            }),
            frozen_text,
            summary: r.get(7)?,
            code_hash: r.get(8)?,
            created_ms: r.get::<_, i64>(9)? as u64,
            expires_ms: r.get::<_, i64>(10)? as u64,
            state: r.get(11)?,
            decision: r.get(12)?,
            spec_hash: r.get::<_, Option<String>>(13)?.unwrap_or_default(),
            signed: false,
            mac: r.get(14)?,
        })
    }

    fn checked(&self, mut row: ApprovalRow) -> ApprovalRow {
        let mac = approval_mac(self, &row, row.decided_state(), row.decision.as_deref());
        row.signed = row
            .mac
            .as_deref()
            .is_some_and(|m| crate::store::key::same_text(&mac, m));
        row
    }

    fn approvals_where(
        &self,
        condition: &str,
        param: &dyn rusqlite::ToSql,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        let sql = format!("SELECT {} FROM approvals WHERE {condition}", Self::COLUMNS);
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map([param], Self::row)
            .map_err(|e| self.sqlite(e))?;
        let rows = rows
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sqlite(e))?;
        Ok(rows.into_iter().map(|r| self.checked(r)).collect())
    }

    /// Records a pending approval for a call of run `run_id`, bound to the run's checkpoint as
    /// stored now; returns its one-time code (only its hash is stored).
    #[allow(clippy::too_many_arguments)]
    pub fn add_approval(
        &self,
        run_id: &str,
        session: &str,
        call_id: &str,
        frozen: &FrozenCall,
        summary: &str,
        now: u64,
        ttl_ms: u64,
    ) -> Result<String, StoreError> {
        let code = new_code()?;
        let frozen_text =
            serde_json::to_string(frozen).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let tx = self.write_transaction()?;
        let checkpoint: Option<String> = tx
            .query_row(
                "SELECT checkpoint FROM runs WHERE id = ?1",
                params![run_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?
            .flatten();
        let mut row = ApprovalRow {
            id: 0,
            run_id: run_id.to_string(),
            session: session.to_string(),
            call_id: call_id.to_string(),
            tool: frozen.tool.clone(),
            digest: frozen.digest.clone(),
            frozen: frozen.clone(),
            frozen_text,
            summary: summary.to_string(),
            code_hash: code_hash(&code),
            created_ms: now,
            expires_ms: now + ttl_ms,
            state: "pending".into(),
            decision: None,
            spec_hash: spec_hash(checkpoint.as_deref()),
            signed: true,
            mac: None,
        };
        let mac = approval_mac(self, &row, "pending", None);
        row.mac = Some(mac);
        // The code itself, readable only with the state key: a reopened cockpit shows it again.
        let sealed = self
            .key
            .seal("code", row.code_hash.as_bytes(), code.as_bytes());
        tx.execute(
            "INSERT INTO approvals (run_id, session, call_id, tool, digest, frozen, summary, code_hash, created_ms, expires_ms, state, spec_hash, mac, sealed_code)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', ?11, ?12, ?13)",
            params![row.run_id, row.session, row.call_id, row.tool, row.digest, row.frozen_text, row.summary, row.code_hash, row.created_ms as i64, row.expires_ms as i64, row.spec_hash, row.mac, sealed],
        )
        .map_err(|e| self.sqlite(e))?;
        tx.commit().map_err(|e| self.sqlite(e))?;
        // Whoever waits for new requests (another cockpit's inbox, the page's nudge) wakes to
        // find this one.
        self.ring_bell();
        Ok(code)
    }

    /// Pending approvals not yet expired, oldest first (tampered ones included, marked).
    pub fn pending(&self, now: u64) -> Result<Vec<ApprovalRow>, StoreError> {
        self.approvals_where(
            "state = 'pending' AND expires_ms > ?1 ORDER BY id",
            &(now as i64),
        )
    }

    /// Which approvals are pending now, as one short text (their ids and states): what a
    /// reader compares before it reads them whole (a row can be megabytes).
    pub fn pending_ids(&self, now: u64) -> Result<String, StoreError> {
        self.conn
            .query_row(
                "SELECT COALESCE(group_concat(id || ':' || state), '') FROM approvals
                 WHERE state = 'pending' AND expires_ms > ?1",
                params![now as i64],
                |r| r.get(0),
            )
            .map_err(|e| self.sqlite(e))
    }

    /// The latest approval of a run.
    pub fn approval_for_run(&self, run_id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        Ok(self
            .approvals_where("run_id = ?1 ORDER BY id DESC LIMIT 1", &run_id)?
            .pop())
    }

    /// The approvals of call `call_id` of run `run_id` made for a call a person changed (their
    /// summary names the call it was changed from), oldest first. Only those rows are read and
    /// verified: a session's other approvals (a write's can hold megabytes) are not.
    pub fn changed_approvals_of_call(
        &self,
        run_id: &str,
        call_id: &str,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        let sql = format!(
            "SELECT {} FROM approvals WHERE run_id = ?1 AND call_id = ?2 \
             AND instr(summary, '\"amended\":') > 0 ORDER BY id",
            Self::COLUMNS
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map(params![run_id, call_id], Self::row)
            .map_err(|e| self.sqlite(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sqlite(e))?;
        Ok(rows.into_iter().map(|r| self.checked(r)).collect())
    }

    pub fn approval_by_code(&self, code: &str) -> Result<Option<ApprovalRow>, StoreError> {
        Ok(self
            .approvals_where("code_hash = ?1", &code_hash(code))?
            .pop())
    }

    /// The state of the approval with this code as stored, nothing else read and nothing
    /// verified: a first look, so a request still pending is not read whole (its frozen call can
    /// be megabytes) every time the state directory changes. Act only on a row read with
    /// [`Store::approval_by_code`], whose signature is checked.
    pub fn approval_state_by_code(&self, code: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT state FROM approvals WHERE code_hash = ?1",
                params![code_hash(code)],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Whether an approval is intact and belongs to its run as stored: both signatures verify
    /// and the run's checkpoint is the one the approval was made for. `None` if so, else why not.
    pub fn tampering(&self, row: &ApprovalRow) -> Result<Option<String>, StoreError> {
        if !row.signed {
            return Ok(Some(tampered(&row.call_id)));
        }
        let run = self.run(&row.run_id)?;
        Ok(match run {
            Some(run) if !run.signed => Some(format!(
                "refused: the checkpoint of run {} was changed outside airlock (tampered): its signature does not verify",
                row.run_id
            )),
            Some(run) if spec_hash(run.checkpoint.as_deref()) != row.spec_hash => Some(format!(
                "refused: the checkpoint of run {} is not the one the approval for {} was made for (tampered)",
                row.run_id, row.call_id
            )),
            Some(_) => None,
            None => Some(format!(
                "refused: the run {} of the approval for {} is gone (tampered)",
                row.run_id, row.call_id
            )),
        })
    }

    /// Decides a pending approval by its code, in one conditional UPDATE: only one caller can ever
    /// win. A refusal says why (unknown, tampered, expired, already decided) and is put on record.
    pub fn decide(&self, code: &str, decision: &str, now: u64) -> Result<ApprovalRow, StoreError> {
        // What the decision says, read as JSON: text elsewhere in it (a device's name, a
        // reason) never turns an allow into a deny or back.
        let said: serde_json::Value = serde_json::from_str(decision).unwrap_or_default();
        let state = if said["decision"] == "deny" {
            "denied"
        } else {
            "approved"
        };
        let action = if state == "denied" { "deny" } else { "approve" };
        let row = self.approval_by_code(code)?;
        let why = match &row {
            None => "no approval has this code; check it and try again".to_string(),
            Some(row) => match self.tampering(row)? {
                Some(tampered) => format!("{tampered}; nothing was decided"),
                None => {
                    let mac = approval_mac(self, row, state, Some(decision));
                    let n = self
                        .conn
                        .execute(
                            "UPDATE approvals SET state = ?2, decision = ?3, decided_ms = ?4, mac = ?5
                             WHERE id = ?1 AND state = 'pending' AND expires_ms > ?4 AND mac IS ?6",
                            params![row.id, state, decision, now as i64, mac, row.mac],
                        )
                        .map_err(|e| self.sqlite(e))?;
                    let latest = self.approval_by_code(code)?;
                    match latest {
                        Some(latest) if n == 1 => {
                            self.ring_bell();
                            return Ok(latest);
                        }
                        Some(latest) if latest.state == "pending" && latest.expires_ms <= now => {
                            format!(
                                "the approval for {} expired; nothing was decided",
                                latest.call_id
                            )
                        }
                        Some(latest) if latest.state == "pending" => tampered(&latest.call_id),
                        Some(latest) => format!(
                            "the approval for {} was already decided ({}); this answer changes nothing",
                            latest.call_id,
                            latest.decided_state()
                        ),
                        None => "no approval has this code; check it and try again".to_string(),
                    }
                }
            },
        };
        self.record_refusal(
            row.as_ref().map(|r| r.run_id.as_str()),
            row.as_ref().map(|r| r.call_id.as_str()),
            action,
            &why,
            now,
        )?;
        Err(StoreError::Refused(why))
    }

    /// Tells whoever waits on the state directory (`super::super::watch`) that a request or an
    /// answer is committed and visible. The commit's own writes to the WAL can wake a waiter
    /// before the WAL index (shared memory, whose writes make no event) names the new frames;
    /// that waiter then reads the old state, and no later event would wake it. This write
    /// comes after the commit, so the wake it makes finds the change.
    fn ring_bell(&self) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(dir) = self.path.parent() {
            let bell = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
                .open(dir.join(BELL));
            if let Ok(mut bell) = bell {
                let _ = bell.write_all(b"1");
            }
        }
    }

    /// Puts an attempt that was refused on record.
    pub fn record_refusal(
        &self,
        run_id: Option<&str>,
        call_id: Option<&str>,
        action: &str,
        reason: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO refusals (at_ms, run_id, call_id, action, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![now as i64, run_id, call_id, action, reason],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// The refusals on record for a run, oldest first.
    pub fn refusals(&self, run_id: &str) -> Result<Vec<Refusal>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT at_ms, call_id, action, reason FROM refusals WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map(params![run_id], |r| {
                Ok(Refusal {
                    at_ms: r.get::<_, i64>(0)? as u64,
                    call_id: r.get(1)?,
                    action: r.get(2)?,
                    reason: r.get(3)?,
                })
            })
            .map_err(|e| self.sqlite(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite(e))
    }

    /// Takes a decided approval for execution, exactly once, and only as it was read (`row`, whose
    /// signature the caller checked).
    pub fn consume(&self, row: &ApprovalRow, now: u64) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE approvals SET state = state || '+consumed', decided_ms = COALESCE(decided_ms, ?2)
                 WHERE id = ?1 AND state IN ('approved', 'denied') AND mac IS ?3",
                params![row.id, now as i64, row.mac],
            )
            .map_err(|e| self.sqlite(e))?;
        if n == 1 {
            Ok(())
        } else {
            Err(StoreError::Refused(
                "this approval was already used; nothing runs twice".into(),
            ))
        }
    }

    /// Gives back an approval this process consumed but never acted on (the resume failed
    /// before the agent started), so a later resume can use it, once.
    pub fn unconsume(&self, row: &ApprovalRow) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE approvals SET state = substr(state, 1, length(state) - 9)
                 WHERE id = ?1 AND state IN ('approved+consumed', 'denied+consumed') AND mac IS ?2",
                params![row.id, row.mac],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(n == 1)
    }
}
