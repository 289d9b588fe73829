use super::*;
use serde_json::{Map, json};
use std::sync::Arc;

/// A log in a fresh temp dir with `n` records of kind "decision".
fn log_with(n: u64) -> (tempfile::TempDir, AuditLog) {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path(), "s1").unwrap();
    for i in 0..n {
        log.append(
            "decision",
            json!({"tool": "bash", "n": i, "allow": i % 2 == 0}),
        )
        .unwrap();
    }
    (dir, log)
}

fn read_lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    fs::write(path, text).unwrap();
}

/// Asserts `verify` fails with `Tampered` at `line` with a problem containing `needle`.
fn assert_tampered(path: &Path, line: usize, needle: &str) {
    match verify(path) {
        Err(AuditError::Tampered { line: got, problem }) => {
            assert_eq!(got, line, "wrong line for problem {problem:?}");
            assert!(
                problem.contains(needle),
                "problem {problem:?} does not mention {needle:?}"
            );
        }
        other => panic!("expected Tampered at line {line}, got {other:?}"),
    }
}

#[test]
fn audit_log_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<AuditLog>();
}

#[test]
fn a_fresh_log_of_several_appends_verifies() {
    let (dir, log) = log_with(5);
    assert_eq!(log.path(), dir.path().join("s1.jsonl"));
    let report = verify(log.path()).unwrap();
    assert_eq!(report.records, 5);

    let records = read_records(log.path()).unwrap();
    assert_eq!(records.len(), 5);
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec["seq"], json!(i));
        assert_eq!(rec["session"], json!("s1"));
        assert_eq!(rec["kind"], json!("decision"));
        assert_eq!(rec["body"]["n"], json!(i));
        assert!(rec["ts_ms"].as_u64().unwrap() > 0);
    }
    assert_eq!(records[0]["prev"], json!(GENESIS_PREV));
    for pair in records.windows(2) {
        assert_eq!(pair[1]["prev"], pair[0]["hash"]);
    }
    assert_eq!(report.last_hash.as_deref(), records[4]["hash"].as_str());
}

#[test]
fn append_returns_the_seq_and_hash_written_to_the_log() {
    let (_dir, log) = log_with(2);
    let entry = log.append("note", json!({"x": 1})).unwrap();
    assert_eq!(entry.seq, 2);
    assert_eq!(entry.hash.len(), 64);
    assert!(
        entry
            .hash
            .chars()
            .all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    );
    let records = read_records(log.path()).unwrap();
    assert_eq!(records[2]["hash"], json!(entry.hash));
}

#[test]
fn the_stored_hash_is_sha256_of_the_canonical_record_without_hash() {
    let (_dir, log) = log_with(1);
    let mut rec = read_records(log.path()).unwrap().remove(0);
    let stored = rec["hash"].as_str().unwrap().to_owned();
    rec.as_object_mut().unwrap().remove("hash");
    let text = canonical_json(&rec).unwrap();
    assert!(text.starts_with("{\"body\":"));
    let expected: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(stored, expected);
}

#[test]
fn reopening_a_log_continues_the_chain_and_still_verifies() {
    let (dir, log) = log_with(3);
    let last = verify(log.path()).unwrap().last_hash.unwrap();
    drop(log);

    let log = AuditLog::open(dir.path(), "s1").unwrap();
    let entry = log.append("decision", json!({"after": "reopen"})).unwrap();
    assert_eq!(entry.seq, 3);
    let records = read_records(log.path()).unwrap();
    assert_eq!(records.len(), 4);
    assert_eq!(records[3]["prev"], json!(last));
    let report = verify(log.path()).unwrap();
    assert_eq!(report.records, 4);
    assert_eq!(report.last_hash, Some(entry.hash));
}

#[test]
fn open_creates_missing_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a").join("b");
    let log = AuditLog::open(&nested, "s1").unwrap();
    log.append("k", json!({})).unwrap();
    assert!(nested.join("s1.jsonl").is_file());
    assert!(nested.join("s1.jsonl.head").is_file());
}

#[test]
fn verify_detects_an_edited_body_value() {
    let (_dir, log) = log_with(4);
    let mut lines = read_lines(log.path());
    let mut rec: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(rec["body"]["allow"], json!(false));
    rec["body"]["allow"] = json!(true);
    lines[1] = canonical_json(&rec).unwrap();
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 2, "hash does not match its contents");
}

#[test]
fn verify_detects_an_edited_hash() {
    let (_dir, log) = log_with(4);
    let mut lines = read_lines(log.path());
    let mut rec: Value = serde_json::from_str(&lines[2]).unwrap();
    rec["hash"] = json!("ab".repeat(32));
    lines[2] = canonical_json(&rec).unwrap();
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 3, "hash does not match its contents");
}

#[test]
fn verify_detects_an_edited_record_whose_hash_was_recomputed() {
    let (_dir, log) = log_with(4);
    let mut lines = read_lines(log.path());
    let mut rec: Value = serde_json::from_str(&lines[1]).unwrap();
    rec["body"]["tool"] = json!("rm -rf /");
    rec.as_object_mut().unwrap().remove("hash");
    let hash = hash_hex(&canonical_json(&rec).unwrap());
    rec["hash"] = json!(hash);
    lines[1] = canonical_json(&rec).unwrap();
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 3, "prev does not match the hash of line 2");
}

#[test]
fn verify_detects_two_records_swapped() {
    let (_dir, log) = log_with(5);
    let mut lines = read_lines(log.path());
    lines.swap(1, 2);
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 2, "seq 2 follows seq 0");
}

#[test]
fn verify_detects_a_record_removed_from_the_middle() {
    let (_dir, log) = log_with(5);
    let mut lines = read_lines(log.path());
    lines.remove(2);
    write_lines(log.path(), &lines);
    assert_tampered(
        log.path(),
        3,
        "seq 3 follows seq 1 (record removed or reordered?)",
    );
}

#[test]
fn verify_detects_the_first_record_removed() {
    let (_dir, log) = log_with(3);
    let mut lines = read_lines(log.path());
    lines.remove(0);
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 1, "first record has seq 1");
}

#[test]
fn verify_detects_whole_trailing_records_removed_via_the_head_file() {
    let (_dir, log) = log_with(5);
    let mut lines = read_lines(log.path());
    lines.truncate(3);
    write_lines(log.path(), &lines);
    assert_tampered(
        log.path(),
        4,
        "log ends at seq 2 but head file says seq 4 (log truncated?)",
    );
}

#[test]
fn verify_detects_all_records_removed_via_the_head_file() {
    let (_dir, log) = log_with(2);
    fs::write(log.path(), "").unwrap();
    assert_tampered(log.path(), 1, "log is empty but head file says seq 1");
}

#[test]
fn verify_detects_a_replaced_last_record_via_the_head_file() {
    let (_dir, log) = log_with(3);
    let mut lines = read_lines(log.path());
    // Rebuild a self-consistent last record with different contents.
    let mut rec: Value = serde_json::from_str(&lines[2]).unwrap();
    rec["body"]["allow"] = json!(false);
    rec.as_object_mut().unwrap().remove("hash");
    let hash = hash_hex(&canonical_json(&rec).unwrap());
    rec["hash"] = json!(hash);
    lines[2] = canonical_json(&rec).unwrap();
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 4, "different hash than the head file");
}

#[test]
fn verify_detects_a_partially_written_last_line() {
    let (_dir, log) = log_with(3);
    let text = fs::read_to_string(log.path()).unwrap();
    let cut = text.len() - 20;
    fs::write(log.path(), &text[..cut]).unwrap();
    assert_tampered(log.path(), 3, "not valid JSON (partial write or edit)");
}

#[test]
fn verify_detects_a_last_line_missing_its_newline() {
    let (_dir, log) = log_with(3);
    let text = fs::read_to_string(log.path()).unwrap();
    fs::write(log.path(), text.trim_end_matches('\n')).unwrap();
    assert_tampered(log.path(), 3, "no trailing newline");
}

#[test]
fn verify_detects_a_missing_head_file() {
    let (_dir, log) = log_with(3);
    let head = head_path_for(log.path());
    fs::remove_file(&head).unwrap();
    assert_tampered(
        log.path(),
        4,
        "cannot confirm the log is complete: head file",
    );
    let Err(err) = verify(log.path()) else {
        panic!("expected an error")
    };
    assert!(err.to_string().contains(&head.display().to_string()));
    assert!(err.to_string().contains("is missing"));
}

#[test]
fn verify_detects_a_record_from_another_session() {
    let (_dir, log) = log_with(3);
    let mut lines = read_lines(log.path());
    let mut rec: Value = serde_json::from_str(&lines[1]).unwrap();
    rec["session"] = json!("other");
    rec.as_object_mut().unwrap().remove("hash");
    let hash = hash_hex(&canonical_json(&rec).unwrap());
    rec["hash"] = json!(hash);
    lines[1] = canonical_json(&rec).unwrap();
    write_lines(log.path(), &lines);
    // The line itself is self-consistent; its session is the first thing that is wrong.
    assert_tampered(log.path(), 2, "session \"other\" differs from \"s1\"");
}

#[test]
fn an_empty_log_verifies_only_without_a_head_or_with_an_empty_head() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path(), "s1").unwrap();
    let report = verify(log.path()).unwrap();
    assert_eq!(
        report,
        VerifyReport {
            records: 0,
            last_hash: None
        }
    );

    let head = head_path_for(log.path());
    fs::write(&head, "{\"seq\":null,\"hash\":null}\n").unwrap();
    assert_eq!(verify(log.path()).unwrap().records, 0);

    fs::write(&head, "{\"seq\":0,\"hash\":\"00\"}\n").unwrap();
    assert_tampered(log.path(), 1, "log is empty but head file says seq 0");
}

#[test]
fn verify_of_a_missing_log_reports_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.jsonl");
    let err = verify(&path).unwrap_err();
    assert!(matches!(err, AuditError::Io { .. }));
    assert!(err.to_string().contains(&path.display().to_string()));
}

#[test]
fn open_refuses_to_append_to_a_log_that_does_not_verify() {
    let (dir, log) = log_with(4);
    let path = log.path().to_path_buf();
    drop(log);
    let mut lines = read_lines(&path);
    lines.remove(1);
    write_lines(&path, &lines);
    let before = fs::read(&path).unwrap();

    let err = AuditLog::open(dir.path(), "s1").unwrap_err();
    match &err {
        AuditError::BrokenChain { source, .. } => {
            assert!(matches!(**source, AuditError::Tampered { line: 2, .. }));
        }
        other => panic!("expected BrokenChain, got {other:?}"),
    }
    assert!(err.to_string().contains(&path.display().to_string()));
    assert_eq!(
        fs::read(&path).unwrap(),
        before,
        "log must be left untouched"
    );
}

#[test]
fn open_refuses_a_deleted_log_whose_head_remains() {
    let (dir, log) = log_with(2);
    let path = log.path().to_path_buf();
    drop(log);
    fs::remove_file(&path).unwrap();
    let err = AuditLog::open(dir.path(), "s1").unwrap_err();
    assert!(matches!(err, AuditError::BrokenChain { .. }), "{err:?}");
    assert!(!path.exists());
}

#[test]
fn open_refuses_a_log_written_for_another_session() {
    let (dir, log) = log_with(2);
    let path = log.path().to_path_buf();
    drop(log);
    fs::rename(&path, dir.path().join("s2.jsonl")).unwrap();
    fs::rename(head_path_for(&path), dir.path().join("s2.jsonl.head")).unwrap();
    let err = AuditLog::open(dir.path(), "s2").unwrap_err();
    assert!(
        matches!(&err, AuditError::SessionMismatch { expected, found, .. } if expected == "s2" && found == "s1"),
        "{err:?}"
    );
}

#[test]
fn open_rejects_session_ids_that_are_not_plain_file_names() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "",
        "../x",
        "a/b",
        "a\\b",
        ".hidden",
        "x y",
        &"a".repeat(201),
    ] {
        let err = AuditLog::open(dir.path(), bad).unwrap_err();
        assert!(
            matches!(err, AuditError::InvalidSessionId { .. }),
            "{bad:?}: {err:?}"
        );
    }
    assert!(AuditLog::open(dir.path(), "2024-05-01T12.00_abc-9").is_ok());
}

#[test]
fn concurrent_appends_from_8_threads_of_50_records_all_land_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(AuditLog::open(dir.path(), "s1").unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                (0..50)
                    .map(|i| {
                        log.append("decision", json!({"thread": t, "i": i}))
                            .unwrap()
                            .seq
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut seqs: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..400).collect::<Vec<u64>>());

    let report = verify(log.path()).unwrap();
    assert_eq!(report.records, 400);
    let records = read_records(log.path()).unwrap();
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec["seq"], json!(i));
    }
    let mut seen: Vec<(u64, u64)> = records
        .iter()
        .map(|r| {
            (
                r["body"]["thread"].as_u64().unwrap(),
                r["body"]["i"].as_u64().unwrap(),
            )
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 400, "every (thread, i) pair lands exactly once");
}

#[test]
fn canonical_json_sorts_keys_recursively_without_whitespace() {
    let mut inner = Map::new();
    inner.insert("zeta".to_owned(), json!(1));
    inner.insert("alpha".to_owned(), json!([{"y": 1, "x": 2}]));
    let mut outer = Map::new();
    outer.insert("b".to_owned(), Value::Object(inner));
    outer.insert("a".to_owned(), json!("s p a c e"));
    outer.insert("C".to_owned(), json!(null));
    let text = canonical_json(&Value::Object(outer)).unwrap();
    assert_eq!(
        text,
        r#"{"C":null,"a":"s p a c e","b":{"alpha":[{"x":2,"y":1}],"zeta":1}}"#
    );
}

#[test]
fn log_lines_are_written_in_canonical_form() {
    let (_dir, log) = log_with(2);
    for line in read_lines(log.path()) {
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(canonical_json(&value).unwrap(), line);
    }
}

#[test]
fn bodies_with_awkward_floats_and_unicode_still_verify() {
    let (_dir, log) = log_with(0);
    let floats = [
        0.1,
        1.0 / 3.0,
        2.2250738585072014e-308,
        1.7976931348623157e308,
        -0.0,
        123456.789e-200,
        9007199254740993.0,
        5e-324,
        // serde_json's default (non-`float_roundtrip`) parser reads these back one ulp off.
        1.0715660391465826e-75,
        -1.81996730402717e-179,
        -1.603964615428183e143,
        -9.643915712060552e-234,
    ];
    for (i, f) in floats.iter().enumerate() {
        log.append("f", json!({"v": f, "i": i, "s": "é \"q\" \n\t\u{1}"}))
            .unwrap();
    }
    assert_eq!(verify(log.path()).unwrap().records, floats.len() as u64);
}

#[test]
fn a_body_of_many_arbitrary_floats_still_verifies() {
    let (_dir, log) = log_with(0);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut floats = Vec::new();
    while floats.len() < 2000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = f64::from_bits(x);
        if f.is_finite() {
            floats.push(f);
        }
    }
    log.append("floats", json!({ "v": floats })).unwrap();
    assert_eq!(verify(log.path()).unwrap().records, 1);
}

#[test]
fn bodies_that_contain_a_hash_key_of_their_own_still_verify() {
    let (_dir, log) = log_with(0);
    let fake = "0".repeat(64);
    log.append(
        "k",
        json!({"hash": fake, "nested": {"a": 1, "hash": "x"}, "s": ",\"hash\":\""}),
    )
    .unwrap();
    log.append("k", json!([{"z": 1, "hash": fake}])).unwrap();
    assert_eq!(verify(log.path()).unwrap().records, 2);
}

#[test]
fn verify_detects_a_record_reformatted_without_changing_its_meaning() {
    let (_dir, log) = log_with(3);
    let mut lines = read_lines(log.path());
    lines[1] = lines[1].replacen("{\"body\":", "{ \"body\": ", 1);
    write_lines(log.path(), &lines);
    assert_tampered(log.path(), 2, "hash does not match its contents");
}

#[test]
fn read_records_reports_the_line_that_is_not_json() {
    let (_dir, log) = log_with(2);
    let mut lines = read_lines(log.path());
    lines.insert(1, "{not json".to_owned());
    write_lines(log.path(), &lines);
    match read_records(log.path()) {
        Err(AuditError::Tampered { line: 2, problem }) => {
            assert!(problem.contains("not valid JSON"));
        }
        other => panic!("expected Tampered at line 2, got {other:?}"),
    }
}

#[test]
fn tampered_errors_say_what_and_where() {
    let err = AuditError::Tampered {
        line: 3,
        problem: "hash does not match its contents (record edited?)".to_owned(),
    };
    assert_eq!(
        err.to_string(),
        "audit log does not verify: line 3: hash does not match its contents (record edited?)"
    );
}
