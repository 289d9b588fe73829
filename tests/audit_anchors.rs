//! The red team's attacks on the audit anchor in the state database, with the real binary: a
//! parked run's log forged with its anchor rewritten to match, its anchor deleted, and an anchor
//! from before anchors were signed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{World, stderr, stdout};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const TOUCH: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "done", "expect": ["ok"]}
]}"#;

/// A parked run and its audit log.
fn parked() -> (World, String, PathBuf) {
    let w = World::new(TOUCH);
    let (run, _) = w.park(&[]);
    let log = w.path(&format!("state/audit/{run}.jsonl"));
    assert!(
        verify(&w, &log).status.success(),
        "an untouched log verifies"
    );
    (w, run, log)
}

fn verify(w: &World, log: &std::path::Path) -> Output {
    w.airlock(&["audit", "verify", log.to_str().unwrap()], &[])
}

/// Rewrites the log with its first record's body changed and the chain and head file
/// recomputed, as a forger with write access to the audit directory can; returns the new end.
fn forge_first_record(log: &std::path::Path) -> (usize, String) {
    let text = std::fs::read_to_string(log).unwrap();
    let mut prev = "0".repeat(64);
    let mut out = String::new();
    let mut count = 0;
    for (seq, line) in text.lines().enumerate() {
        let mut record: Value = serde_json::from_str(line).unwrap();
        if seq == 0 {
            record["body"]["forged"] = json!(true);
        }
        let map = record.as_object_mut().unwrap();
        map.remove("hash");
        map.insert("prev".into(), json!(prev));
        let hash: String =
            Sha256::digest(airlock::approval::audit::canonical_json(&record).unwrap())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
        record["hash"] = json!(hash);
        out.push_str(&airlock::approval::audit::canonical_json(&record).unwrap());
        out.push('\n');
        prev = hash;
        count = seq + 1;
    }
    std::fs::write(log, out).unwrap();
    std::fs::write(
        log.with_extension("jsonl.head"),
        format!("{{\"seq\":{},\"hash\":\"{prev}\"}}\n", count - 1),
    )
    .unwrap();
    (count, prev)
}

#[test]
fn a_forged_log_whose_anchor_row_was_rewritten_to_match_fails_as_tampered() {
    let (w, run, log) = parked();
    let (records, last_hash) = forge_first_record(&log);
    let changed = w.sql(&format!(
        "UPDATE audit_anchors SET records = {records}, last_hash = '{last_hash}',
             pending_records = NULL, pending_hash = NULL
         WHERE session = '{run}'"
    ));
    assert_eq!(changed, 1);
    let out = verify(&w, &log);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let why = stderr(&out);
    assert!(
        why.contains("changed outside airlock") && why.contains("was not verified"),
        "{why}"
    );
}

#[test]
fn a_deleted_anchor_row_of_a_session_the_database_knows_fails_as_missing() {
    let (w, run, log) = parked();
    let deleted = w.sql(&format!(
        "DELETE FROM audit_anchors WHERE session = '{run}'"
    ));
    assert_eq!(deleted, 1);
    let out = verify(&w, &log);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let why = stderr(&out);
    assert!(
        why.contains("anchor is missing") && why.contains("deleted outside airlock"),
        "{why}"
    );
    // Forged as well: still missing, never "ok".
    forge_first_record(&log);
    let out = verify(&w, &log);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("anchor is missing"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unsigned_anchor_from_before_signing_fails_verify_until_the_session_writes_again() {
    let w = World::new(TOUCH);
    let (run, code) = w.park(&[]);
    let log = w.path(&format!("state/audit/{run}.jsonl"));
    // What an anchor written before anchors were signed looks like.
    let changed = w.sql(&format!(
        "UPDATE audit_anchors SET mac = NULL WHERE session = '{run}'"
    ));
    assert_eq!(changed, 1);
    let out = verify(&w, &log);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let why = stderr(&out);
    assert!(
        why.contains("the end matches the anchor") && why.contains("that anchor is unsigned"),
        "{why}"
    );
    // Resuming the run appends to its log, and that signs the anchor again.
    assert!(w.airlock(&["approve", &code], &[]).status.success());
    let resumed = w.airlock(&["resume", &run], &[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let out = verify(&w, &log);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("the end matches the anchor"),
        "{}",
        stdout(&out)
    );
}
