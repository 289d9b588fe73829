//! Appending, as group commits: a record is staged (its place in the chain fixed in memory), and
//! made durable by a commit that takes every record staged so far.
//!
//! Why: each commit costs four syncs (anchor intended, lines written and synced, anchor
//! confirmed, head file replaced), several milliseconds on a busy disk. Made one record at a time
//! on the agent's task, eight calls from one model turn (a request and a decision each) paid
//! sixteen commits before the last could start. Now the gate stages and goes on, and a call
//! waits, before it runs, for the commit that holds its decision: the first waiter commits what
//! is staged, waiters that come while a commit runs wait for it or lead the next one, so a batch
//! of calls shares one or two commits. What never changes: a call runs only once its decision is
//! durable in the log and anchored (`Receipt::wait` is the gate's `Approved` condition), and the
//! order of the on-disk protocol per commit is the one `anchor` describes, for a group of lines
//! instead of one.
//!
//! Failure: a commit that could not anchor, write or sync leaves the handle broken (the staged
//! records after it chain onto lines that may not be in the file), so every later append and wait
//! fails and nothing more runs. A commit whose lines are durable but whose confirmation or head
//! update failed returns that error to its leader and keeps going, as a single append did.

use std::io::Write;
use std::sync::MutexGuard;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{AuditEntry, AuditError, AuditLog, ChainEnd, Head, canonical_json, encode_err, hex_of};
use super::{io_err, now_ms, write_head};

/// The chain as staged and as durable, behind the log's lock.
pub(super) struct Chain {
    /// The seq the next staged record gets.
    pub(super) next_seq: u64,
    /// The hash of the last staged record (64 zeros before the first).
    pub(super) last_hash: String,
    /// Lines staged and not yet taken by a commit, in chain order.
    pub(super) pending: Vec<u8>,
    /// Records durable in the log (every seq below this one).
    pub(super) durable: u64,
    /// The hash of the last durable record.
    pub(super) durable_hash: String,
    /// A commit is writing: others wait for it instead of starting their own.
    pub(super) committing: bool,
    /// Set when a failed commit may have left the file and the chain apart.
    pub(super) broken: Option<String>,
}

/// A staged record's claim on durability: [`Receipt::wait`] returns once a commit holds it.
#[derive(Clone)]
pub struct Receipt {
    log: std::sync::Arc<AuditLog>,
    seq: u64,
}

impl std::fmt::Debug for Receipt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receipt").field("seq", &self.seq).finish()
    }
}

impl Receipt {
    /// Blocks until the record is durable (committing it, and whatever was staged before it, if
    /// no commit is running). Call from a thread that may block, not from async code directly.
    pub fn wait(&self) -> Result<(), AuditError> {
        self.log.commit_through(self.seq)
    }
}

impl AuditLog {
    /// Appends one record and waits until it is durable: anchored as pending, written, synced,
    /// confirmed, the head file updated (see `anchor` for why in this order), together with
    /// anything staged before it. Returns the record's seq and hash.
    ///
    /// If the anchor cannot be written, nothing is written and the handle refuses further
    /// appends. If the line is written but the confirmation or the head update fails, the
    /// record stays in the log (and the chain continues from it) but the error is returned;
    /// verify accepts the log as it is, and the next commit brings the anchor and the head up to
    /// date.
    pub fn append(&self, kind: &str, body: Value) -> Result<AuditEntry, AuditError> {
        let entry = self.stage(kind, body)?;
        self.commit_through(entry.seq)?;
        Ok(entry)
    }

    /// Stages one record: its seq and hash are fixed now, it reaches the file with the next
    /// commit. The returned receipt waits for that commit.
    pub fn stage_shared(
        self: &std::sync::Arc<Self>,
        kind: &str,
        body: Value,
    ) -> Result<Receipt, AuditError> {
        let entry = self.stage(kind, body)?;
        Ok(Receipt {
            log: self.clone(),
            seq: entry.seq,
        })
    }

    /// Commits everything staged so far.
    pub fn flush(&self) -> Result<(), AuditError> {
        let last = {
            let chain = self.chain()?;
            if chain.next_seq == chain.durable {
                return Ok(());
            }
            chain.next_seq - 1
        };
        self.commit_through(last)
    }

    fn chain(&self) -> Result<MutexGuard<'_, Chain>, AuditError> {
        self.chain.lock().map_err(|_| AuditError::Unusable {
            path: self.path.clone(),
            reason: "a thread panicked while appending".to_owned(),
        })
    }

    fn stage(&self, kind: &str, body: Value) -> Result<AuditEntry, AuditError> {
        // Encode the body before taking the lock; only the chain fields need the lock held.
        let body_text = canonical_json(&body).map_err(|e| encode_err(kind, e))?;
        let mut chain = self.chain()?;
        if let Some(reason) = &chain.broken {
            return Err(self.unusable(reason));
        }
        let seq = chain.next_seq;
        let mut rest = Map::new();
        rest.insert("kind".to_owned(), Value::from(kind));
        rest.insert("prev".to_owned(), Value::from(chain.last_hash.as_str()));
        rest.insert("seq".to_owned(), Value::from(seq));
        rest.insert("session".to_owned(), Value::from(self.session.as_str()));
        rest.insert("ts_ms".to_owned(), Value::from(now_ms()));
        let rest_text = canonical_json(&Value::Object(rest)).map_err(|e| encode_err(kind, e))?;
        // `rest_text` is `{"kind":...}`; keys sort as body < hash < kind, so splicing the
        // body in front (and later the hash between them) keeps the line canonical.
        let rest_members = rest_text.strip_prefix('{').unwrap_or(&rest_text);
        // Hashed and copied in pieces: a body can be a 100 MB write, and each whole-line copy
        // of it would cost as much again.
        let mut hasher = Sha256::new();
        for piece in ["{\"body\":", &body_text, ",", rest_members] {
            hasher.update(piece.as_bytes());
        }
        let hash = hex_of(&hasher.finalize());
        let hash_member = format!(",\"hash\":\"{hash}\",");
        for piece in [
            "{\"body\":",
            body_text.as_str(),
            &hash_member,
            rest_members,
            "\n",
        ] {
            chain.pending.extend_from_slice(piece.as_bytes());
        }
        chain.next_seq = seq + 1;
        chain.last_hash = hash.clone();
        Ok(AuditEntry { seq, hash })
    }

    /// Returns once record `seq` is durable: leads a commit of everything staged when none is
    /// running, else waits for the running one (and leads the next if it did not hold `seq`).
    fn commit_through(&self, seq: u64) -> Result<(), AuditError> {
        let mut chain = self.chain()?;
        loop {
            if chain.durable > seq {
                return Ok(());
            }
            if let Some(reason) = &chain.broken {
                return Err(self.unusable(reason));
            }
            if chain.committing {
                chain = self
                    .committed
                    .wait(chain)
                    .map_err(|_| AuditError::Unusable {
                        path: self.path.clone(),
                        reason: "a thread panicked while committing".to_owned(),
                    })?;
                continue;
            }
            let group = std::mem::take(&mut chain.pending);
            let from = end_of(chain.durable, &chain.durable_hash);
            let to = end_of(chain.next_seq, &chain.last_hash);
            chain.committing = true;
            drop(chain);
            let result = self.write_group(&group, &from, &to);
            chain = self.chain()?;
            chain.committing = false;
            let outcome = match result {
                Written::Durable(outcome) => {
                    chain.durable = to.records;
                    chain.durable_hash = to.last_hash.clone().unwrap_or_default();
                    outcome
                }
                Written::Broken(error) => {
                    chain.broken = Some(error.to_string());
                    Err(error)
                }
            };
            self.committed.notify_all();
            outcome?;
        }
    }

    /// One commit: anchor `to` as pending, write the group, sync, confirm, update the head.
    fn write_group(&self, group: &[u8], from: &ChainEnd, to: &ChainEnd) -> Written {
        let mut anchor = match self.anchor.lock() {
            Ok(anchor) => anchor,
            Err(_) => {
                return Written::Broken(self.unusable("a thread panicked while anchoring"));
            }
        };
        if let Some(anchor) = anchor.as_mut()
            && let Err(reason) = anchor.intend(&self.session, from, to)
        {
            return Written::Broken(AuditError::Anchor {
                place: anchor.place(),
                reason,
            });
        }
        let written = (&self.file)
            .write_all(group)
            .and_then(|()| (&self.file).flush());
        if let Err(source) = written {
            return Written::Broken(self.unusable(&format!(
                "writing records {}..{} failed ({source}), so the log may end in a partial line",
                from.records, to.records
            )));
        }
        if let Err(source) = self.file.sync_data() {
            return Written::Broken(self.unusable(&format!(
                "records {}..{} were written but not synced ({})",
                from.records,
                to.records,
                io_err(&self.path, source)
            )));
        }
        // The lines are durable; the chain continues from them whatever happens next.
        if let Some(anchor) = anchor.as_mut()
            && let Err(reason) = anchor.confirm(&self.session, to)
        {
            return Written::Durable(Err(AuditError::Anchor {
                place: anchor.place(),
                reason,
            }));
        }
        let head = Head {
            seq: to.records.checked_sub(1),
            hash: to.last_hash.clone(),
        };
        Written::Durable(write_head(&self.head_path, &head))
    }

    fn unusable(&self, reason: &str) -> AuditError {
        AuditError::Unusable {
            path: self.path.clone(),
            reason: reason.to_owned(),
        }
    }
}

/// What a commit left: its lines durable (with the confirmation's or head's error, if any), or
/// the handle broken.
enum Written {
    Durable(Result<(), AuditError>),
    Broken(AuditError),
}

fn end_of(records: u64, last_hash: &str) -> ChainEnd {
    ChainEnd {
        records,
        last_hash: (records > 0).then(|| last_hash.to_owned()),
    }
}

impl Drop for AuditLog {
    /// Whatever was staged and never waited for (a denial's record, an outcome) is committed
    /// when the log closes.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
