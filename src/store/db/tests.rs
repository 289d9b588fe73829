use serde_json::json;

use super::*;

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
    assert!(
        s.consume(1, 2).is_err(),
        "a pending approval cannot be consumed"
    );
    let row = s.decide(&code, r#"{"decision":"allow_once"}"#, 5).unwrap();
    s.consume(row.id, 6).unwrap();
    assert!(
        s.consume(row.id, 7)
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
