use serde_json::json;

use super::*;
use crate::protocol::FrozenCall;

fn frozen() -> FrozenCall {
    FrozenCall::freeze("bash", &json!({"command": "cargo test"}))
}

fn store(dir: &Path) -> Store {
    Store::open(&dir.join("state.db")).unwrap()
}

#[test]
fn reopening_a_database_keeps_its_data_and_schema() {
    let dir = tempfile::tempdir().unwrap();
    let code = {
        let s = store(dir.path());
        s.save_run("r1", "s", Path::new("/w"), "parked", Some("{}"), 1)
            .unwrap();
        s.add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
            .unwrap()
    };
    let s = store(dir.path());
    assert_eq!(s.pending(2).unwrap().len(), 1);
    assert!(s.approval_by_code(&code).unwrap().is_some());
    assert!(
        s.approval_by_code(&code.to_lowercase().replace('-', ""))
            .unwrap()
            .is_some(),
        "codes ignore case and dashes"
    );
}

#[test]
fn a_code_decides_once_and_a_second_answer_is_told_it_was_already_decided() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run("r1", "s", Path::new("/w"), "parked", None, 1)
        .unwrap();
    let code = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    s.decide(&code, r#"{"decision":"allow_once"}"#, 5).unwrap();
    let err = s
        .decide(&code, r#"{"decision":"deny"}"#, 6)
        .unwrap_err()
        .to_string();
    assert!(err.contains("already decided (approved)"), "{err}");
    assert!(
        s.decide("ZZZZ-ZZZZ", "{}", 6)
            .unwrap_err()
            .to_string()
            .contains("no approval")
    );
}

#[test]
fn an_expired_code_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run("r1", "s", Path::new("/w"), "parked", None, 1)
        .unwrap();
    let code = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 100)
        .unwrap();
    let err = s
        .decide(&code, r#"{"decision":"allow_once"}"#, 500)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expired"), "{err}");
    assert!(s.pending(500).unwrap().is_empty());
}

#[test]
fn a_decided_approval_is_consumed_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run("r1", "s", Path::new("/w"), "parked", None, 1)
        .unwrap();
    let code = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    let pending = s.approval_by_code(&code).unwrap().unwrap();
    assert!(
        s.consume(&pending, 2).is_err(),
        "a pending approval cannot be consumed"
    );
    let row = s.decide(&code, r#"{"decision":"allow_once"}"#, 5).unwrap();
    s.consume(&row, 6).unwrap();
    assert!(
        s.consume(&row, 7)
            .unwrap_err()
            .to_string()
            .contains("already used")
    );
}

#[test]
fn thirty_two_concurrent_approvals_of_one_code_have_exactly_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let code = {
        let s = store(dir.path());
        s.save_run("r1", "s", Path::new("/w"), "parked", None, 1)
            .unwrap();
        s.add_approval("r1", "s", "c1", &frozen(), "{}", 1, 60_000)
            .unwrap()
    };
    let path = dir.path().join("state.db");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(32));
    let handles: Vec<_> = (0..32)
        .map(|i| {
            let (path, code, barrier) = (path.clone(), code.clone(), barrier.clone());
            std::thread::spawn(move || {
                let s = Store::open(&path).unwrap();
                barrier.wait();
                s.decide(
                    &code,
                    &format!(r#"{{"decision":"allow_once","by":{i}}}"#),
                    10,
                )
                .is_ok()
            })
        })
        .collect();
    let wins = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|w| *w)
        .count();
    assert_eq!(wins, 1);
    let refused = Store::open(&path).unwrap().refusals("r1").unwrap();
    assert_eq!(refused.len(), 31, "every losing answer is on record");
}

#[test]
fn a_replayed_or_expired_answer_is_refused_and_put_on_record() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run("r1", "s", Path::new("/w"), "parked", None, 1)
        .unwrap();
    let replayed = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    s.decide(&replayed, r#"{"decision":"allow_once"}"#, 5)
        .unwrap();
    s.decide(&replayed, r#"{"decision":"allow_once"}"#, 6)
        .unwrap_err();
    let expired = s
        .add_approval("r1", "s", "c2", &frozen(), "{}", 1, 10)
        .unwrap();
    s.decide(&expired, r#"{"decision":"deny"}"#, 20)
        .unwrap_err();
    let refusals = s.refusals("r1").unwrap();
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert_eq!(refusals[0].call_id.as_deref(), Some("c1"));
    assert_eq!(refusals[0].action, "approve");
    assert!(refusals[0].reason.contains("already decided"));
    assert_eq!(refusals[1].call_id.as_deref(), Some("c2"));
    assert_eq!(refusals[1].action, "deny");
    assert!(refusals[1].reason.contains("expired"));
}

fn raw(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("state.db")).unwrap()
}

#[test]
fn what_airlock_writes_verifies_and_stays_verified_through_decision_and_use() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run(
        "r1",
        "s",
        Path::new("/w"),
        "parked",
        Some("{\"spec\":1}"),
        1,
    )
    .unwrap();
    assert!(s.run("r1").unwrap().unwrap().signed);
    let code = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    let row = s.approval_by_code(&code).unwrap().unwrap();
    assert!(row.signed);
    assert_eq!(s.tampering(&row).unwrap(), None);
    let row = s.decide(&code, r#"{"decision":"allow_once"}"#, 5).unwrap();
    assert!(row.signed, "re-signed with its decision");
    s.consume(&row, 6).unwrap();
    let used = s.approval_by_code(&code).unwrap().unwrap();
    assert!(used.signed && used.consumed());
    assert_eq!(used.decided_state(), "approved");
}

#[test]
fn every_kind_of_change_to_a_pending_approval_makes_approve_refuse_it_as_tampered() {
    let changes = [
        "UPDATE approvals SET frozen = replace(frozen, 'cargo test', 'rm -rf ~')",
        "UPDATE approvals SET expires_ms = expires_ms + 100000000",
        "UPDATE approvals SET summary = '{\"preview\":\"harmless\"}'",
        "UPDATE approvals SET call_id = 'c9'",
        "UPDATE approvals SET run_id = 'r2'",
        "UPDATE approvals SET mac = NULL",
        "UPDATE runs SET checkpoint = replace(checkpoint, 'park', 'dangerously-allow-all') WHERE id = 'r1'",
    ];
    for change in changes {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        for run in ["r1", "r2"] {
            s.save_run(
                run,
                "s",
                Path::new("/w"),
                "parked",
                Some(r#"{"approvals":"park"}"#),
                1,
            )
            .unwrap();
        }
        let code = s
            .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
            .unwrap();
        assert_eq!(raw(dir.path()).execute(change, []).unwrap(), 1, "{change}");
        let err = s
            .decide(&code, r#"{"decision":"allow_once"}"#, 5)
            .unwrap_err()
            .to_string();
        assert!(err.contains("tampered"), "{change}: {err}");
        let row = s.approval_by_code(&code).unwrap().unwrap();
        assert_eq!(row.state, "pending", "{change}: nothing was decided");
    }
}

#[test]
fn a_state_set_to_approved_behind_airlocks_back_does_not_verify() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run("r1", "s", Path::new("/w"), "parked", Some("{}"), 1)
        .unwrap();
    let code = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    raw(dir.path())
        .execute(
            r#"UPDATE approvals SET state = 'approved', decision = '{"decision":"allow_once"}'"#,
            [],
        )
        .unwrap();
    let row = s.approval_by_code(&code).unwrap().unwrap();
    assert!(!row.signed);
    assert!(s.tampering(&row).unwrap().unwrap().contains("tampered"));
}

#[test]
fn an_approval_copied_with_its_signature_onto_another_run_does_not_verify() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    for run in ["r1", "r2"] {
        s.save_run(run, "s", Path::new("/w"), "parked", Some("{}"), 1)
            .unwrap();
    }
    s.add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    raw(dir.path())
        .execute(
            "INSERT INTO approvals (run_id, session, call_id, tool, digest, frozen, summary, code_hash, created_ms, expires_ms, state, spec_hash, mac)
             SELECT 'r2', session, call_id, tool, digest, frozen, summary, 'other', created_ms, expires_ms, state, spec_hash, mac FROM approvals",
            [],
        )
        .unwrap();
    assert!(!s.approval_for_run("r2").unwrap().unwrap().signed);
}

#[test]
fn a_run_checkpoint_changed_behind_airlocks_back_does_not_verify() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run(
        "r1",
        "s",
        Path::new("/w"),
        "parked",
        Some(r#"{"approvals":"park"}"#),
        1,
    )
    .unwrap();
    raw(dir.path())
        .execute(
            "UPDATE runs SET checkpoint = '{\"approvals\":\"dangerously-allow-all\"}'",
            [],
        )
        .unwrap();
    assert!(!s.run("r1").unwrap().unwrap().signed);
    raw(dir.path())
        .execute(
            "UPDATE runs SET checkpoint = '{\"approvals\":\"park\"}', workspace = '/'",
            [],
        )
        .unwrap();
    assert!(
        !s.run("r1").unwrap().unwrap().signed,
        "the workspace is signed too"
    );
}

#[test]
fn grants_added_behind_airlocks_back_are_refused_as_tampered() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_grants("s", "[]", 1).unwrap();
    assert_eq!(s.grants("s").unwrap().as_deref(), Some("[]"));
    raw(dir.path())
        .execute(
            r#"UPDATE session_grants SET grants = '[{"scope":{"kind":"directory","path":"/"}}]'"#,
            [],
        )
        .unwrap();
    let err = s.grants("s").unwrap_err().to_string();
    assert!(err.contains("tampered"), "{err}");
    assert_eq!(s.grants("nobody").unwrap(), None);
}

#[test]
fn a_consumed_approval_given_back_can_be_consumed_once_more_and_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_run("r1", "s", Path::new("/w"), "parked", Some("{}"), 1)
        .unwrap();
    let code = s
        .add_approval("r1", "s", "c1", &frozen(), "{}", 1, 1000)
        .unwrap();
    let row = s.decide(&code, r#"{"decision":"allow_once"}"#, 5).unwrap();
    s.consume(&row, 6).unwrap();
    assert!(s.unconsume(&row).unwrap());
    assert!(!s.unconsume(&row).unwrap(), "nothing to give back twice");
    let back = s.approval_by_code(&code).unwrap().unwrap();
    assert!(back.signed && !back.consumed());
    s.consume(&back, 7).unwrap();
    assert!(s.consume(&back, 8).is_err());
}

#[test]
fn a_checkpoint_saved_while_resuming_keeps_the_run_resuming_and_names_its_owner() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_checkpoint("r1", "s", Path::new("/w"), "{}", "1:1", 1)
        .unwrap();
    let run = s.run("r1").unwrap().unwrap();
    assert_eq!(
        (run.state.as_str(), run.owner.as_deref()),
        ("running", Some("1:1"))
    );
    assert!(run.signed);
    assert!(
        s.transition_run("r1", "running", "resuming", Some("2:2"), 2)
            .unwrap()
    );
    s.save_checkpoint("r1", "s", Path::new("/w"), "{}", "2:2", 3)
        .unwrap();
    assert_eq!(s.run("r1").unwrap().unwrap().state, "resuming");
}

#[test]
fn of_two_processes_taking_over_a_dead_owners_run_only_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.save_checkpoint("r1", "s", Path::new("/w"), "{}", "dead:1", 1)
        .unwrap();
    assert!(
        s.take_over("r1", "running", Some("dead:1"), "a:1", 2)
            .unwrap()
    );
    assert!(
        !s.take_over("r1", "running", Some("dead:1"), "b:1", 2)
            .unwrap()
    );
    assert_eq!(s.run("r1").unwrap().unwrap().owner.as_deref(), Some("a:1"));
}

#[test]
fn the_database_its_wal_and_shm_and_the_key_are_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = Store::open(&state.join("airlock.db")).unwrap();
    s.save_run("r1", "s", Path::new("/w"), "parked", None, 1)
        .unwrap();
    let mode = |name: &str| {
        std::fs::metadata(state.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("."), 0o700);
    for file in [
        "airlock.db",
        "airlock.db-wal",
        "airlock.db-shm",
        "airlock.key",
    ] {
        assert_eq!(mode(file), 0o600, "{file}");
    }
}

#[test]
fn processes_opening_a_new_database_together_migrate_it_once_and_all_open_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(12));
    let handles: Vec<_> = (0..12)
        .map(|_| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                Store::open(&path).map(|_| ()).map_err(|e| e.to_string())
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap().unwrap();
    }
    let s = store(dir.path());
    let version: i64 = s
        .conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, MIGRATIONS.len() as i64);
}

#[test]
fn approvals_added_while_other_connections_write_never_fail_as_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    store(dir.path())
        .save_run("r0", "s", Path::new("/w"), "parked", Some("{}"), 1)
        .unwrap();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                let s = Store::open(&path).unwrap();
                barrier.wait();
                for i in 0..25 {
                    let run = format!("r{t}-{i}");
                    s.save_run(&run, "s", Path::new("/w"), "parked", Some("{}"), 1)
                        .map_err(|e| e.to_string())?;
                    s.add_approval(&run, "s", "c1", &frozen(), "{}", 1, 60_000)
                        .map_err(|e| e.to_string())?;
                    s.pending(2).map_err(|e| e.to_string())?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap().unwrap();
    }
    assert_eq!(store(dir.path()).pending(2).unwrap().len(), 200);
}

#[test]
fn a_new_database_has_large_pages_and_an_old_one_keeps_its_own_and_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let page_size = |path: &Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .unwrap()
    };
    // Made by this airlock: large pages, and what is written is there after reopening.
    let big = "x".repeat(300_000);
    {
        let s = store(dir.path());
        s.save_run("r1", "s", Path::new("/w"), "parked", Some(&big), 1)
            .unwrap();
    }
    let path = dir.path().join("state.db");
    assert_eq!(page_size(&path), PAGE_SIZE);
    let row = store(dir.path()).run("r1").unwrap().unwrap();
    assert!(row.signed);
    assert_eq!(row.checkpoint.as_deref(), Some(big.as_str()));
    // Made before, with 4 KiB pages: it keeps them, and its data.
    let old_dir = tempfile::tempdir().unwrap();
    let old_path = old_dir.path().join("state.db");
    {
        let raw = rusqlite::Connection::open(&old_path).unwrap();
        raw.pragma_update(None, "page_size", 4096).unwrap();
        raw.pragma_update(None, "journal_mode", "WAL").unwrap();
        raw.execute_batch("CREATE TABLE early (x)").unwrap();
    }
    {
        let s = store(old_dir.path());
        s.save_run("r1", "s", Path::new("/w"), "parked", Some(&big), 1)
            .unwrap();
    }
    assert_eq!(page_size(&old_path), 4096);
    let row = store(old_dir.path()).run("r1").unwrap().unwrap();
    assert!(row.signed);
    assert_eq!(row.checkpoint.as_deref(), Some(big.as_str()));
}
