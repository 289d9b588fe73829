//! Cockpit sessions: what a cockpit needs to be reopened after it stopped (quit, crash,
//! `kill -9`): its workspace, its conversation (one row per message, `session_messages`) and a
//! spec (where the turn stands, the settings it started with), kept current as the turn moves. A
//! session is `open` while the process named by `owner` ("pid:start time") runs it, `closed`
//! after a clean quit; a session whose owner is gone is taken over by exactly one
//! `airlock --resume`.
//!
//! The row is signed with the state key like a run's checkpoint, over the spec and the count and
//! chain head of its messages: a spec or message edited outside airlock is refused, never
//! resumed. A save is one transaction that writes only if the caller still owns the session, so
//! a process that lost it adds no message either. Rows from before schema 8 hold the whole
//! conversation in the spec (`messages` is `None`) and are signed under their own label, so
//! neither kind of signature can pass for the other. Title and turn count are for the listing
//! only.

use rusqlite::{OptionalExtension, params};

use super::session_messages::MessageChain;
use super::{Store, StoreError};

/// A cockpit session as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub workspace: String,
    /// `open` or `closed`.
    pub state: String,
    pub owner: Option<String>,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// The first prompt (model or person text: shown through `visible_line`).
    pub title: String,
    pub turns: u64,
    pub spec: Option<String>,
    /// Its conversation's messages as rows (read them with `session_messages`); `None` for a
    /// session written before (its spec holds the whole conversation).
    pub messages: Option<MessageChain>,
    /// Its signature verifies: id, workspace, spec and the messages' chain are as airlock wrote
    /// them.
    pub signed: bool,
}

/// One save of where an open session stands.
pub struct SessionSave<'a> {
    pub id: &'a str,
    pub workspace: &'a str,
    pub owner: &'a str,
    pub title: &'a str,
    pub turns: u64,
    pub spec: &'a str,
    /// The messages the session had kept, which stay.
    pub kept: &'a MessageChain,
    /// The messages that follow them, as JSON.
    pub added: &'a [String],
    pub now: u64,
}

/// The signed fields of a session written before schema 8 (whole conversation in the spec).
fn whole_spec_fields<'a>(id: &'a str, workspace: &'a str, spec: Option<&'a str>) -> [&'a [u8]; 4] {
    [
        id.as_bytes(),
        workspace.as_bytes(),
        if spec.is_some() { b"1" } else { b"0" },
        spec.unwrap_or("").as_bytes(),
    ]
}

const WHOLE_SPEC_LABEL: &str = "session";
const SPLIT_LABEL: &str = "session-v2";

impl Store {
    fn session_mac(
        &self,
        id: &str,
        workspace: &str,
        spec: Option<&str>,
        chain: &MessageChain,
    ) -> String {
        let [id, workspace, has_spec, spec] = whole_spec_fields(id, workspace, spec);
        let count = chain.count.to_string();
        let head = chain.head_hex();
        self.key.mac(
            SPLIT_LABEL,
            &[
                id,
                workspace,
                has_spec,
                spec,
                count.as_bytes(),
                head.as_bytes(),
            ],
        )
    }
}

const COLUMNS: &str =
    "id, workspace, state, owner, created_ms, updated_ms, title, turns, spec, mac, messages, chain";

impl Store {
    /// For a connection that only keeps cockpit sessions: commits survive the process being
    /// killed (they are in the WAL) without waiting for the disk on each one; only a power
    /// loss could take the last few back, and a session then reopens a step earlier.
    ///
    /// Its page cache is kept small (512 KiB): each checkpoint rewrites the session's growing
    /// record, and SQLite's default cache (2,000 pages, 8 MiB) kept every page of those writes,
    /// so a long session grew by tens of KiB a run (S5).
    pub fn journal_writes(&self) -> Result<(), StoreError> {
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .and_then(|()| self.conn.pragma_update(None, "cache_size", -512))
            .map_err(|e| self.sqlite(e))
    }

    fn session_row(&self, r: &rusqlite::Row) -> rusqlite::Result<SessionRow> {
        let mut row = SessionRow {
            id: r.get(0)?,
            workspace: r.get(1)?,
            state: r.get(2)?,
            owner: r.get(3)?,
            created_ms: r.get::<_, i64>(4)? as u64,
            updated_ms: r.get::<_, i64>(5)? as u64,
            title: r.get(6)?,
            turns: r.get::<_, i64>(7)? as u64,
            spec: r.get(8)?,
            messages: None,
            signed: false,
        };
        let mac: Option<String> = r.get(9)?;
        let count: Option<i64> = r.get(10)?;
        let head: Option<String> = r.get(11)?;
        row.signed = match (count, head) {
            (None, None) => self.key.verify(
                WHOLE_SPEC_LABEL,
                &whole_spec_fields(&row.id, &row.workspace, row.spec.as_deref()),
                mac.as_deref(),
            ),
            (Some(count), Some(head)) => {
                let chain = u64::try_from(count)
                    .ok()
                    .and_then(|count| MessageChain::stored(count, &head));
                let signed = chain.as_ref().is_some_and(|chain| {
                    mac.as_deref().is_some_and(|mac| {
                        crate::store::key::same_text(
                            &self.session_mac(&row.id, &row.workspace, row.spec.as_deref(), chain),
                            mac,
                        )
                    })
                });
                row.messages = chain;
                signed
            }
            _ => false,
        };
        Ok(row)
    }

    /// Records a new cockpit session, open and owned by `owner`, with nothing in it yet.
    pub fn open_session(
        &self,
        id: &str,
        workspace: &str,
        owner: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        let chain = MessageChain::default();
        let mac = self.session_mac(id, workspace, None, &chain);
        self.conn
            .execute(
                "INSERT INTO sessions (id, workspace, state, owner, created_ms, updated_ms, title, turns, spec, mac, messages, chain)
                 VALUES (?1, ?2, 'open', ?3, ?4, ?4, '', 0, NULL, ?5, 0, ?6)",
                params![id, workspace, owner, now as i64, mac, chain.head_hex()],
            )
            .map(|_| ())
            .map_err(|e| self.sqlite(e))
    }

    /// Keeps where an open session stands: adds `save.added` after the `save.kept` messages
    /// (dropping any row past those) and signs the spec with the new chain, in one transaction
    /// that writes nothing when `save.owner` no longer owns the session (another process took
    /// it over): then `None`, else the chain now kept.
    pub fn save_session(&self, save: &SessionSave<'_>) -> Result<Option<MessageChain>, StoreError> {
        let sqlite = |e| self.sqlite(e);
        let tx = self.write_transaction()?;
        let chain = save
            .added
            .iter()
            .fold(save.kept.clone(), |chain, json| chain.then(json));
        let mac = self.session_mac(save.id, save.workspace, Some(save.spec), &chain);
        let updated = tx
            .prepare_cached(
                "UPDATE sessions SET workspace = ?2, title = ?4, turns = ?5, spec = ?6, mac = ?7,
                    messages = ?8, chain = ?9, updated_ms = ?10
                 WHERE id = ?1 AND owner IS ?3",
            )
            .and_then(|mut s| {
                s.execute(params![
                    save.id,
                    save.workspace,
                    save.owner,
                    save.title,
                    save.turns as i64,
                    save.spec,
                    mac,
                    chain.count as i64,
                    chain.head_hex(),
                    save.now as i64
                ])
            })
            .map_err(sqlite)?;
        if updated != 1 {
            // Dropping the transaction rolls it back: nothing was written.
            return Ok(None);
        }
        Store::append_messages(&tx, save.id, save.kept, save.added).map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        Ok(Some(chain))
    }

    /// Marks a session `owner` runs as closed (a clean quit); nobody owns it any more.
    pub fn close_session(&self, id: &str, owner: &str, now: u64) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE sessions SET state = 'closed', owner = NULL, updated_ms = ?3
                 WHERE id = ?1 AND owner IS ?2",
                params![id, owner, now as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(n == 1)
    }

    /// Takes a session over from `previous` (its owner, whose process is gone, or none after a
    /// clean quit): only one caller wins; `false` for the others.
    pub fn take_session(
        &self,
        id: &str,
        previous: Option<&str>,
        owner: &str,
        now: u64,
    ) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE sessions SET state = 'open', owner = ?3, updated_ms = ?4
                 WHERE id = ?1 AND owner IS ?2",
                params![id, previous, owner, now as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(n == 1)
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
                params![id],
                |r| self.session_row(r),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Cockpit sessions, the most recently used first, at most `limit`.
    pub fn sessions(&self, limit: usize) -> Result<Vec<SessionRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM sessions ORDER BY updated_ms DESC, rowid DESC LIMIT ?1"
            ))
            .map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map(params![limit as i64], |r| self.session_row(r))
            .map_err(|e| self.sqlite(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite(e))
    }

    /// The one-time code of the approval in row `id`, unsealed: only for a signed row still
    /// pending whose sealed code matches its hash (the inbox answers with it, as a person
    /// typing it would).
    pub fn pending_code(&self, id: i64, now: u64) -> Result<Option<String>, StoreError> {
        let found: Option<(String, Option<String>)> = self
            .conn
            .query_row(
                "SELECT code_hash, sealed_code FROM approvals
                 WHERE id = ?1 AND expires_ms > ?2 AND state = 'pending'",
                params![id, now as i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let Some((hash, Some(sealed))) = found else {
            return Ok(None);
        };
        self.unsealed_code(id, &hash, &sealed)
    }

    /// The one-time code of a request asked before for this call of `run_id` with this exact
    /// frozen call (`digest`), if it can still be answered or was answered and not used: so a
    /// reopened cockpit asks with the code it printed before, and an answer given with that code
    /// meanwhile counts. Only a signed row whose sealed code matches its hash qualifies.
    pub fn reusable_code(
        &self,
        run_id: &str,
        call_id: &str,
        digest: &str,
        now: u64,
    ) -> Result<Option<String>, StoreError> {
        let found: Option<(i64, String, Option<String>)> = self
            .conn
            .query_row(
                "SELECT id, code_hash, sealed_code FROM approvals
                 WHERE run_id = ?1 AND call_id = ?2 AND digest = ?3 AND expires_ms > ?4
                   AND state IN ('pending', 'approved', 'denied')
                 ORDER BY id DESC LIMIT 1",
                params![run_id, call_id, digest, now as i64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let Some((id, hash, Some(sealed))) = found else {
            return Ok(None);
        };
        self.unsealed_code(id, &hash, &sealed)
    }

    /// The code sealed in row `id` (whose hash is `hash`): only when it matches the hash and
    /// names that very row, signed. A sealed code and hash copied in from another row would
    /// name that other row, and answer it in place of the one shown.
    fn unsealed_code(
        &self,
        id: i64,
        hash: &str,
        sealed: &str,
    ) -> Result<Option<String>, StoreError> {
        let Some(code) = self
            .key
            .unseal("code", hash.as_bytes(), sealed)
            .and_then(|bytes| String::from_utf8(bytes).ok())
        else {
            return Ok(None);
        };
        if !crate::store::key::same_text(&super::code_hash(&code), hash) {
            return Ok(None);
        }
        let row = self.approval_by_code(&code)?;
        Ok(row.filter(|r| r.signed && r.id == id).map(|_| code))
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::FrozenCall;
    use crate::store::db::{MessageChain, SessionSave, Store};

    /// Saves `spec` with no messages as `owner`: whether it was written.
    fn save_spec(db: &Store, owner: &str, title: &str, turns: u64, spec: &str, now: u64) -> bool {
        db.save_session(&SessionSave {
            id: "s1",
            workspace: "/w",
            owner,
            title,
            turns,
            spec,
            kept: &MessageChain::default(),
            added: &[],
            now,
        })
        .unwrap()
        .is_some()
    }

    #[test]
    fn a_session_keeps_its_latest_spec_and_verifies() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        assert!(save_spec(&db, "1:1", "fix it", 1, "{\"a\":1}", 20));
        let row = db.session("s1").unwrap().unwrap();
        assert_eq!(row.spec.as_deref(), Some("{\"a\":1}"));
        assert_eq!((row.title.as_str(), row.turns), ("fix it", 1));
        assert!(row.signed);
        assert_eq!(row.state, "open");
    }

    #[test]
    fn a_spec_edited_outside_airlock_no_longer_verifies() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        assert!(save_spec(&db, "1:1", "t", 1, "{\"a\":1}", 20));
        db.conn
            .execute("UPDATE sessions SET spec = '{\"a\":2}'", [])
            .unwrap();
        assert!(!db.session("s1").unwrap().unwrap().signed);
    }

    #[test]
    fn a_process_that_lost_the_session_to_another_writes_nothing() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        assert!(db.take_session("s1", Some("1:1"), "2:2", 20).unwrap());
        assert!(!save_spec(&db, "1:1", "t", 1, "{}", 30));
        assert!(!db.close_session("s1", "1:1", 30).unwrap());
        assert_eq!(
            db.session("s1").unwrap().unwrap().owner.as_deref(),
            Some("2:2")
        );
    }

    /// A state database as airlock left it before messages had rows of their own (schema 7),
    /// with one cockpit session `old` whose spec is `spec`.
    fn schema_7_with_a_whole_spec_session(spec: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let conn = rusqlite::Connection::open(dir.path().join("airlock.db")).unwrap();
        for migration in &crate::store::db::MIGRATIONS[..7] {
            conn.execute_batch(migration).unwrap();
        }
        conn.pragma_update(None, "user_version", 7).unwrap();
        let key = crate::store::key::StateKey::load_or_create(dir.path()).unwrap();
        let mac = key.mac(
            super::WHOLE_SPEC_LABEL,
            &super::whole_spec_fields("old", "/w", Some(spec)),
        );
        conn.execute(
            "INSERT INTO sessions (id, workspace, state, owner, created_ms, updated_ms, title, turns, spec, mac)
             VALUES ('old', '/w', 'closed', NULL, 1, 1, 'fix it', 1, ?1, ?2)",
            rusqlite::params![spec, mac],
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_session_kept_whole_before_the_upgrade_still_opens_and_verifies() {
        let dir = schema_7_with_a_whole_spec_session("{\"checkpoint\":1}");
        let db = Store::open(&dir.path().join("airlock.db")).unwrap();
        let row = db.session("old").unwrap().unwrap();
        assert!(row.signed);
        assert_eq!(row.messages, None);
        assert_eq!(row.spec.as_deref(), Some("{\"checkpoint\":1}"));
        // Given a message count and chain by hand, it no longer verifies.
        db.conn
            .execute(
                "UPDATE sessions SET messages = 0, chain = ?1",
                rusqlite::params![MessageChain::default().head_hex()],
            )
            .unwrap();
        assert!(!db.session("old").unwrap().unwrap().signed);
    }

    #[test]
    fn a_session_with_message_rows_cannot_pass_for_one_kept_whole() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        assert!(save_spec(&db, "1:1", "t", 1, "{\"a\":1}", 20));
        db.conn
            .execute("UPDATE sessions SET messages = NULL, chain = NULL", [])
            .unwrap();
        assert!(!db.session("s1").unwrap().unwrap().signed);
        db.conn
            .execute("UPDATE sessions SET chain = 'x'", [])
            .unwrap();
        assert!(!db.session("s1").unwrap().unwrap().signed);
    }

    #[test]
    fn only_one_of_two_resumes_takes_a_session_over() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        assert!(db.take_session("s1", Some("1:1"), "2:2", 20).unwrap());
        assert!(!db.take_session("s1", Some("1:1"), "3:3", 20).unwrap());
    }

    #[test]
    fn a_closed_session_is_taken_over_from_nobody() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("s1", "/w", "1:1", 10).unwrap();
        assert!(db.close_session("s1", "1:1", 20).unwrap());
        let row = db.session("s1").unwrap().unwrap();
        assert_eq!((row.state.as_str(), row.owner), ("closed", None));
        assert!(db.take_session("s1", None, "2:2", 30).unwrap());
    }

    #[test]
    fn sessions_are_listed_most_recent_first() {
        let (_dir, db) = crate::store::db::scratch_store();
        db.open_session("old", "/w", "1:1", 10).unwrap();
        db.open_session("new", "/w", "1:1", 20).unwrap();
        let ids: Vec<String> = db.sessions(10).unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["new", "old"]);
    }

    fn ask(db: &Store, call: &str, args: serde_json::Value) -> (String, FrozenCall) {
        db.save_run("s1", "s1", std::path::Path::new("/w"), "live", None, 1)
            .unwrap();
        let frozen = FrozenCall::freeze("bash", &args);
        let code = db
            .add_approval("s1", "s1", call, &frozen, "{}", 1, 1000)
            .unwrap();
        (code, frozen)
    }

    #[test]
    fn the_code_of_a_request_asked_again_is_the_one_printed_before() {
        let (_dir, db) = crate::store::db::scratch_store();
        let (code, frozen) = ask(&db, "c1", serde_json::json!({"command": "ls"}));
        assert_eq!(
            db.reusable_code("s1", "c1", &frozen.digest, 2).unwrap(),
            Some(code.clone())
        );
        // Answered meanwhile from another terminal: still the one to pick the answer up from.
        db.decide(&code, r#"{"decision":"allow_once"}"#, 3).unwrap();
        assert_eq!(
            db.reusable_code("s1", "c1", &frozen.digest, 4).unwrap(),
            Some(code)
        );
    }

    #[test]
    fn no_code_is_reused_for_other_arguments_an_expired_request_or_a_used_answer() {
        let (_dir, db) = crate::store::db::scratch_store();
        let (code, frozen) = ask(&db, "c1", serde_json::json!({"command": "ls"}));
        let other = FrozenCall::freeze("bash", &serde_json::json!({"command": "rm -rf /"}));
        assert_eq!(
            db.reusable_code("s1", "c1", &other.digest, 2).unwrap(),
            None
        );
        assert_eq!(
            db.reusable_code("s1", "c2", &frozen.digest, 2).unwrap(),
            None
        );
        assert_eq!(
            db.reusable_code("s1", "c1", &frozen.digest, 5000).unwrap(),
            None
        );
        let row = db.decide(&code, r#"{"decision":"allow_once"}"#, 3).unwrap();
        db.consume(&row, 4).unwrap();
        assert_eq!(
            db.reusable_code("s1", "c1", &frozen.digest, 5).unwrap(),
            None
        );
    }

    #[test]
    fn a_sealed_code_swapped_for_another_rows_is_not_reused() {
        let (_dir, db) = crate::store::db::scratch_store();
        let (_, first) = ask(&db, "c1", serde_json::json!({"command": "ls"}));
        let (_, _) = ask(&db, "c2", serde_json::json!({"command": "rm -rf build"}));
        // Move c2's sealed code onto c1: it was sealed for c2's hash, so it does not unseal.
        db.conn
            .execute(
                "UPDATE approvals SET sealed_code = (SELECT sealed_code FROM approvals WHERE call_id = 'c2') WHERE call_id = 'c1'",
                [],
            )
            .unwrap();
        assert_eq!(
            db.reusable_code("s1", "c1", &first.digest, 2).unwrap(),
            None
        );
    }
}
