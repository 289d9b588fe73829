//! A cockpit session's conversation, one row per message (`session_messages`: session, index,
//! JSON), so each checkpoint adds the messages that are new instead of rewriting the whole
//! conversation (benchmark S5: rewriting it made a long session grow with every run's output).
//!
//! Integrity comes from the session's signed row, not from the message rows: it names how many
//! messages the session has and the head of a hash chain over them, `h_0 = SHA-256(label)`,
//! `h_i = SHA-256(h_{i-1} || json_i)`. A row edited, removed, reordered or put in from another
//! session changes the chain (or leaves a gap) and the conversation is refused as tampered;
//! rows past the count (left by a writer that stopped before its spec, or put there by hand) are
//! never read, and the next save of the session removes them. Only this module reads the rows.

use rusqlite::params;
use sha2::{Digest, Sha256};

use super::{Store, StoreError};
use crate::digest::hex;
use crate::visible::visible_line;

const CHAIN_LABEL: &[u8] = b"airlock session messages v1";

/// How many messages a session has kept and the hash chain's head over them, as its signed row
/// names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageChain {
    pub count: u64,
    head: [u8; 32],
}

impl Default for MessageChain {
    fn default() -> Self {
        MessageChain {
            count: 0,
            head: Sha256::digest(CHAIN_LABEL).into(),
        }
    }
}

impl MessageChain {
    /// The chain as stored (count and hex head); `None` if the head is not 32 bytes of hex.
    pub(super) fn stored(count: u64, head: &str) -> Option<MessageChain> {
        let bytes = head.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let text = std::str::from_utf8(pair).ok()?;
            out[i] = u8::from_str_radix(text, 16).ok()?;
        }
        Some(MessageChain { count, head: out })
    }

    pub fn head_hex(&self) -> String {
        hex(&self.head)
    }

    /// The chain with `json` added as the next message.
    pub fn then(&self, json: &str) -> MessageChain {
        let mut hasher = Sha256::new();
        hasher.update(self.head);
        hasher.update(json.as_bytes());
        MessageChain {
            count: self.count + 1,
            head: hasher.finalize().into(),
        }
    }
}

impl Store {
    /// Puts `messages` after the `kept.count` the session has (inside the caller's transaction),
    /// removing any row at or past that index first.
    pub(super) fn append_messages(
        tx: &rusqlite::Transaction<'_>,
        session: &str,
        kept: &MessageChain,
        messages: &[String],
    ) -> rusqlite::Result<()> {
        tx.prepare_cached("DELETE FROM session_messages WHERE session = ?1 AND idx >= ?2")?
            .execute(params![session, kept.count as i64])?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO session_messages (session, idx, json) VALUES (?1, ?2, ?3)",
        )?;
        for (i, json) in messages.iter().enumerate() {
            insert.execute(params![session, (kept.count + i as u64) as i64, json])?;
        }
        Ok(())
    }

    /// The first `chain.count` messages of `session`, in order, each as the JSON airlock wrote;
    /// refused as tampered when one is missing or they do not hash to `chain` (take `chain` only
    /// from a row whose signature verified).
    pub fn session_messages(
        &self,
        session: &str,
        chain: &MessageChain,
    ) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT idx, json FROM session_messages WHERE session = ?1 AND idx < ?2
                 ORDER BY idx",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map(params![session, chain.count as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.sqlite(e))?;
        let tampered = |what: String| {
            StoreError::Tampered(format!(
                "refused: session {} was changed outside airlock (tampered): {what}; nothing was reopened",
                visible_line(session)
            ))
        };
        let mut found = MessageChain::default();
        let mut messages = Vec::with_capacity(chain.count.min(1 << 16) as usize);
        for row in rows {
            let (idx, json) = row.map_err(|e| self.sqlite(e))?;
            if idx != found.count as i64 {
                return Err(tampered(format!(
                    "message {} of its conversation is missing",
                    found.count + 1
                )));
            }
            found = found.then(&json);
            messages.push(json);
        }
        if found.count != chain.count {
            return Err(tampered(format!(
                "its conversation has {} of its {} messages",
                found.count, chain.count
            )));
        }
        if !crate::store::key::same_text(&found.head_hex(), &chain.head_hex()) {
            return Err(tampered(
                "its conversation's messages are not the ones it signed (edited, reordered or swapped)"
                    .into(),
            ));
        }
        Ok(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::{SessionSave, StoreError};

    /// Adds `added` after `kept` in session `id`, owned by "1:1": the chain now kept.
    fn save(db: &Store, id: &str, kept: &MessageChain, added: &[&str]) -> Option<MessageChain> {
        let added: Vec<String> = added.iter().map(|m| m.to_string()).collect();
        db.save_session(&SessionSave {
            id,
            workspace: "/w",
            owner: "1:1",
            title: "t",
            turns: 1,
            spec: "{}",
            kept,
            added: &added,
            now: 20,
        })
        .unwrap()
    }

    /// A session "s1" with three messages saved over two checkpoints.
    fn three_messages() -> (tempfile::TempDir, Store, MessageChain) {
        let (dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        let first = save(&db, "s1", &MessageChain::default(), &["\"a\"", "\"b\""]).unwrap();
        let chain = save(&db, "s1", &first, &["\"c\""]).unwrap();
        (dir, db, chain)
    }

    /// The chain the session's signed row names.
    fn signed_chain(db: &Store, id: &str) -> MessageChain {
        let row = db.session(id).unwrap().unwrap();
        assert!(row.signed, "{row:?}");
        row.messages.unwrap()
    }

    fn refused(db: &Store) -> String {
        match db.session_messages("s1", &signed_chain(db, "s1")) {
            Err(StoreError::Tampered(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn messages_saved_over_several_checkpoints_come_back_in_order_under_the_signed_chain() {
        let (_dir, db, chain) = three_messages();
        assert_eq!(chain.count, 3);
        assert_eq!(signed_chain(&db, "s1"), chain);
        assert_eq!(
            db.session_messages("s1", &chain).unwrap(),
            ["\"a\"", "\"b\"", "\"c\""]
        );
    }

    #[test]
    fn a_message_row_edited_outside_airlock_is_refused() {
        let (_dir, db, _) = three_messages();
        db.conn
            .execute(
                "UPDATE session_messages SET json = '\"rm -rf\"' WHERE idx = 1",
                [],
            )
            .unwrap();
        assert!(refused(&db).contains("not the ones it signed"));
    }

    #[test]
    fn a_message_row_removed_outside_airlock_is_refused() {
        let (_dir, db, _) = three_messages();
        db.conn
            .execute("DELETE FROM session_messages WHERE idx = 2", [])
            .unwrap();
        assert!(refused(&db).contains("has 2 of its 3 messages"));
        db.conn
            .execute("DELETE FROM session_messages WHERE idx = 0", [])
            .unwrap();
        assert!(refused(&db).contains("message 1 of its conversation is missing"));
    }

    #[test]
    fn message_rows_reordered_outside_airlock_are_refused() {
        let (_dir, db, _) = three_messages();
        db.conn
            .execute_batch(
                "UPDATE session_messages SET idx = 9 WHERE idx = 0;
                 UPDATE session_messages SET idx = 0 WHERE idx = 1;
                 UPDATE session_messages SET idx = 1 WHERE idx = 9;",
            )
            .unwrap();
        assert!(refused(&db).contains("not the ones it signed"));
    }

    #[test]
    fn message_rows_copied_from_another_session_are_refused() {
        let (_dir, db, _) = three_messages();
        db.open_session("s2", "/w", "1:1", 10).unwrap();
        save(
            &db,
            "s2",
            &MessageChain::default(),
            &["\"x\"", "\"y\"", "\"z\""],
        )
        .unwrap();
        db.conn
            .execute_batch(
                "DELETE FROM session_messages WHERE session = 's1';
                 UPDATE session_messages SET session = 's1' WHERE session = 's2';",
            )
            .unwrap();
        assert!(refused(&db).contains("not the ones it signed"));
    }

    #[test]
    fn a_message_count_or_chain_changed_outside_airlock_no_longer_verifies() {
        let (_dir, db, _) = three_messages();
        db.conn
            .execute("UPDATE sessions SET messages = 2", [])
            .unwrap();
        assert!(!db.session("s1").unwrap().unwrap().signed);
        let (_dir, db, _) = three_messages();
        let other = MessageChain::default().then("\"a\"");
        db.conn
            .execute("UPDATE sessions SET chain = ?1", params![other.head_hex()])
            .unwrap();
        assert!(!db.session("s1").unwrap().unwrap().signed);
    }

    #[test]
    fn a_row_added_past_the_count_is_never_read_and_the_next_save_removes_it() {
        // What a writer that stopped between its messages and its spec would leave (or a hand
        // adding a message): the session reopens at its last signed spec.
        let (_dir, db, chain) = three_messages();
        db.conn
            .execute(
                "INSERT INTO session_messages (session, idx, json) VALUES ('s1', 3, '\"extra\"')",
                [],
            )
            .unwrap();
        assert_eq!(db.session_messages("s1", &chain).unwrap().len(), 3);
        let next = save(&db, "s1", &chain, &["\"d\""]).unwrap();
        assert_eq!(
            db.session_messages("s1", &next).unwrap(),
            ["\"a\"", "\"b\"", "\"c\"", "\"d\""]
        );
        let rows: i64 = db
            .conn
            .query_row("SELECT COUNT(*) FROM session_messages", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 4);
    }

    #[test]
    fn a_save_that_starts_over_replaces_every_message() {
        let (_dir, db, _) = three_messages();
        let chain = save(&db, "s1", &MessageChain::default(), &["\"z\""]).unwrap();
        assert_eq!(db.session_messages("s1", &chain).unwrap(), ["\"z\""]);
        assert_eq!(signed_chain(&db, "s1"), chain);
    }

    #[test]
    fn a_process_that_lost_the_session_adds_no_message() {
        let (_dir, db, chain) = three_messages();
        assert!(db.take_session("s1", Some("1:1"), "2:2", 30).unwrap());
        assert_eq!(save(&db, "s1", &chain, &["\"late\""]), None);
        // Nor does one that overwrites from an older count.
        assert_eq!(save(&db, "s1", &MessageChain::default(), &["\"x\""]), None);
        assert_eq!(
            db.session_messages("s1", &signed_chain(&db, "s1")).unwrap(),
            ["\"a\"", "\"b\"", "\"c\""]
        );
    }

    #[test]
    fn the_chain_reads_back_as_it_was_written() {
        let chain = MessageChain::default().then("\"a\"").then("\"b\"");
        assert_eq!(
            MessageChain::stored(2, &chain.head_hex()),
            Some(chain.clone())
        );
        assert_eq!(MessageChain::stored(2, "zz"), None);
        assert_eq!(MessageChain::stored(2, &"g".repeat(64)), None);
        assert_ne!(
            MessageChain::default().then("ab").head_hex(),
            MessageChain::default().then("a").then("b").head_hex(),
        );
    }
}
