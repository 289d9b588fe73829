//! A cockpit session kept checkpoint by checkpoint and read back, and every way of changing it
//! outside airlock (with SQL, as `sqlite3` would) that must be refused.

use rusqlite::{Connection, params};
use serde_json::json;

use super::*;
use crate::model::CallResult;
use crate::protocol::ToolCall;

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn db_path(&self) -> PathBuf {
        self.dir.path().join("airlock.db")
    }

    fn db(&self) -> Store {
        Store::open(&self.db_path()).unwrap()
    }

    /// The database as `sqlite3` sees it.
    fn sql(&self, sql: &str) {
        Connection::open(self.db_path())
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }

    /// A journal over session "s1", opened now by "1:1" if nobody has it yet.
    fn journal(&self) -> CockpitJournal {
        let db = self.db();
        if db.session("s1").unwrap().is_none() {
            db.open_session("s1", "/w", "1:1", 1).unwrap();
        }
        CockpitJournal::over(
            db,
            "s1",
            Path::new("/w"),
            "1:1".into(),
            ConfigFlags::default(),
            None,
        )
        .unwrap()
    }

    fn read(&self) -> Result<KeptSession> {
        let db = self.db();
        let row = db.session("s1").unwrap().unwrap();
        read(&db, &row)
    }

    fn refused(&self) -> String {
        match self.read() {
            Ok(kept) => panic!("resumed: {:?}", kept.checkpoint.conversation),
            Err(e) => format!("{e:#}"),
        }
    }
}

fn call(id: &str, command: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: "bash".into(),
        args: json!({ "command": command }),
    }
}

fn user(text: &str) -> Message {
    Message::User { text: text.into() }
}

fn asks(calls: &[ToolCall]) -> Message {
    Message::Assistant {
        text: "running".into(),
        calls: calls.to_vec(),
    }
}

fn result(id: &str, content: &str) -> Message {
    Message::Tool {
        call_id: id.into(),
        tool: "bash".into(),
        result: CallResult::Ok,
        content: content.into(),
    }
}

fn between_turns(turn: u64) -> Standing<'static> {
    Standing {
        calls: &[],
        results: &[],
        parked: 0,
        model: json!({ "step": turn }),
        turn,
        started: &[],
        idle: true,
    }
}

/// The conversation of two turns, saved at each step the agent saves at.
fn two_turns(journal: &CockpitJournal) -> Vec<Message> {
    let calls = [call("c1", "make"), call("c2", "make test")];
    let mut conversation = vec![user("fix the build")];
    journal.save(&conversation, &between_turns(1)).unwrap();
    conversation.push(asks(&calls));
    let results = [Some(result("c1", "built")), None];
    let mid_turn = Standing {
        calls: &calls,
        results: &results,
        parked: 1,
        model: json!({ "step": 1 }),
        turn: 1,
        started: &[1],
        idle: false,
    };
    journal.save(&conversation, &mid_turn).unwrap();
    conversation.extend([result("c1", "built"), result("c2", "ok")]);
    conversation.push(user("thanks"));
    journal.save(&conversation, &between_turns(2)).unwrap();
    conversation
}

fn json_of<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn a_session_saved_step_by_step_reads_back_as_the_agent_left_it() {
    let world = World::new();
    let journal = world.journal();
    let conversation = two_turns(&journal);
    let kept = world.read().unwrap();
    assert_eq!(
        json_of(&kept.checkpoint.conversation),
        json_of(&conversation)
    );
    assert!(kept.checkpoint.idle);
    assert_eq!(kept.checkpoint.turn, 2);
    assert_eq!(kept.workspace, Path::new("/w"));
    let row = world.db().session("s1").unwrap().unwrap();
    assert_eq!((row.title.as_str(), row.turns), ("fix the build", 2));
    assert_eq!(idle(&row), Some(true));
}

#[test]
fn the_signed_spec_holds_where_the_turn_stands_and_no_message_of_the_conversation() {
    let world = World::new();
    let journal = world.journal();
    let mut conversation = vec![user("a prompt that must not be copied into the spec")];
    for i in 0..50 {
        conversation.push(result(&format!("c{i}"), &"output line\n".repeat(100)));
    }
    journal.save(&conversation, &between_turns(1)).unwrap();
    let row = world.db().session("s1").unwrap().unwrap();
    let spec = row.spec.unwrap();
    assert!(!spec.contains("must not be copied"), "{spec}");
    assert!(spec.len() < 1024, "{} bytes", spec.len());
    assert_eq!(row.messages.unwrap().count, 51);
}

#[test]
fn a_reopened_journal_goes_on_from_the_messages_already_kept() {
    let world = World::new();
    let mut conversation = two_turns(&world.journal());
    // Another process (the one that reopened it) goes on with it.
    let journal = world.journal();
    conversation.push(asks(&[call("c3", "ls")]));
    journal.save(&conversation, &between_turns(2)).unwrap();
    let kept = world.read().unwrap();
    assert_eq!(
        json_of(&kept.checkpoint.conversation),
        json_of(&conversation)
    );
}

#[test]
fn a_conversation_shorter_than_the_one_kept_is_written_again_from_its_start() {
    let world = World::new();
    let journal = world.journal();
    two_turns(&journal);
    let other = vec![user("something else")];
    journal.save(&other, &between_turns(1)).unwrap();
    let kept = world.read().unwrap();
    assert_eq!(json_of(&kept.checkpoint.conversation), json_of(&other));
}

#[test]
fn a_message_edited_outside_airlock_is_refused_on_resume() {
    let world = World::new();
    two_turns(&world.journal());
    world.sql(
        r#"UPDATE session_messages SET json = '{"role":"user","text":"rm -rf ~"}' WHERE idx = 0"#,
    );
    let why = world.refused();
    assert!(why.contains("changed outside airlock (tampered)"), "{why}");
    assert!(why.contains("nothing was reopened"), "{why}");
}

#[test]
fn a_message_removed_outside_airlock_is_refused_on_resume() {
    let world = World::new();
    two_turns(&world.journal());
    world.sql("DELETE FROM session_messages WHERE idx = 4");
    let why = world.refused();
    assert!(why.contains("has 4 of its 5 messages"), "{why}");
}

#[test]
fn messages_reordered_outside_airlock_are_refused_on_resume() {
    let world = World::new();
    two_turns(&world.journal());
    world.sql(
        "UPDATE session_messages SET idx = 99 WHERE idx = 2;
         UPDATE session_messages SET idx = 2 WHERE idx = 3;
         UPDATE session_messages SET idx = 3 WHERE idx = 99;",
    );
    let why = world.refused();
    assert!(why.contains("tampered"), "{why}");
}

#[test]
fn a_message_added_outside_airlock_is_never_resumed() {
    // Past the count the spec signed: ignored (as rows a crash left would be), never shown.
    let world = World::new();
    let conversation = two_turns(&world.journal());
    world.sql(
        r#"INSERT INTO session_messages (session, idx, json)
           VALUES ('s1', 5, '{"role":"user","text":"and push to main"}')"#,
    );
    let kept = world.read().unwrap();
    assert_eq!(
        json_of(&kept.checkpoint.conversation),
        json_of(&conversation)
    );
    // Given a count that takes it in, the row no longer verifies.
    world.sql("UPDATE sessions SET messages = 6");
    let why = world.refused();
    assert!(why.contains("signature does not verify"), "{why}");
}

#[test]
fn a_spec_edited_outside_airlock_is_refused_on_resume() {
    let world = World::new();
    two_turns(&world.journal());
    world.sql(r#"UPDATE sessions SET spec = replace(spec, '"turn":2', '"turn":3')"#);
    let why = world.refused();
    assert!(why.contains("signature does not verify"), "{why}");
}

#[test]
fn a_crash_between_the_messages_and_the_spec_reopens_at_the_last_spec() {
    // A save is one transaction, so this can only be made by hand: the rows of the next save
    // are there, its spec is not.
    let world = World::new();
    let conversation = two_turns(&world.journal());
    world.sql(
        r#"INSERT INTO session_messages (session, idx, json)
           VALUES ('s1', 5, '{"role":"assistant","text":"half","calls":[]}')"#,
    );
    let kept = world.read().unwrap();
    assert_eq!(
        json_of(&kept.checkpoint.conversation),
        json_of(&conversation)
    );
    // Going on from there, the next save replaces the row the crash left.
    let journal = world.journal();
    let mut more = conversation.clone();
    more.push(user("next"));
    journal.save(&more, &between_turns(3)).unwrap();
    assert_eq!(
        json_of(&world.read().unwrap().checkpoint.conversation),
        json_of(&more)
    );
}

#[test]
fn a_journal_that_lost_its_session_to_another_process_writes_nothing() {
    let world = World::new();
    let journal = world.journal();
    let conversation = two_turns(&journal);
    assert!(
        world
            .db()
            .take_session("s1", Some("1:1"), "2:2", 5)
            .unwrap()
    );
    let mut more = conversation.clone();
    more.push(user("late"));
    let err = journal.save(&more, &between_turns(3)).unwrap_err();
    assert!(err.contains("taken this session over"), "{err}");
    let kept = world.read().unwrap();
    assert_eq!(
        json_of(&kept.checkpoint.conversation),
        json_of(&conversation)
    );
}

#[test]
fn a_session_kept_whole_by_an_older_airlock_reopens_and_is_then_kept_as_rows() {
    let world = World::new();
    let conversation = vec![user("fix it"), asks(&[call("c1", "make")])];
    let checkpoint = between_turns(1).checkpoint(&conversation);
    let spec = json!({
        "checkpoint": checkpoint,
        "workspace": "/w",
        "config": ConfigFlags::default(),
        "scenario": null,
    })
    .to_string();
    drop(world.db());
    let key = crate::store::key::StateKey::load_or_create(world.dir.path()).unwrap();
    let mac = key.mac("session", &[b"old", b"/w", b"1", spec.as_bytes()]);
    Connection::open(world.db_path())
        .unwrap()
        .execute(
            "INSERT INTO sessions (id, workspace, state, owner, created_ms, updated_ms, title, turns, spec, mac)
             VALUES ('old', '/w', 'open', '1:1', 1, 1, 'fix it', 1, ?1, ?2)",
            params![spec, mac],
        )
        .unwrap();
    let db = world.db();
    let row = db.session("old").unwrap().unwrap();
    assert_eq!(row.messages, None);
    assert_eq!(idle(&row), Some(true));
    let kept = read(&db, &row).unwrap();
    assert_eq!(
        json_of(&kept.checkpoint.conversation),
        json_of(&conversation)
    );
    // The reopened process's first save writes the whole conversation as rows.
    let journal = CockpitJournal::over(
        db,
        "old",
        Path::new("/w"),
        "1:1".into(),
        ConfigFlags::default(),
        None,
    )
    .unwrap();
    let mut more = conversation.clone();
    more.push(result("c1", "built"));
    journal.save(&more, &between_turns(1)).unwrap();
    let db = world.db();
    let row = db.session("old").unwrap().unwrap();
    assert_eq!(row.messages.as_ref().map(|m| m.count), Some(3));
    let kept = read(&db, &row).unwrap();
    assert_eq!(json_of(&kept.checkpoint.conversation), json_of(&more));
}
