use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use serde_json::json;

use super::*;
use crate::protocol::FrozenCall;

/// A database holding one parked run with its waiting approval, and enough runs to span pages.
fn filled(dir: &Path) -> PathBuf {
    let path = dir.join("airlock.db");
    let store = Store::open(&path).unwrap();
    store
        .save_run("r1", "s", Path::new("/w"), "parked", Some("{}"), 1)
        .unwrap();
    let frozen = FrozenCall::freeze("bash", &json!({"command": "cargo test"}));
    store
        .add_approval("r1", "s", "c1", &frozen, "{}", 1, u64::MAX / 4)
        .unwrap();
    for i in 0..200 {
        let checkpoint = "x".repeat(200);
        store
            .save_run(
                &format!("filler-{i}"),
                "s",
                Path::new("/w"),
                "done",
                Some(&checkpoint),
                1,
            )
            .unwrap();
    }
    drop(store);
    path
}

/// Writes junk over every page but the first (which holds the schema), as a failing disk would;
/// no connection is open meanwhile.
fn damage(path: &Path) {
    let len = std::fs::metadata(path).unwrap().len();
    assert!(len > 8192, "the database spans several pages ({len} bytes)");
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(4096)).unwrap();
    file.write_all(&vec![0xA5; (len - 4096) as usize]).unwrap();
}

#[test]
fn a_whole_database_checks_whole_and_a_repair_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = filled(dir.path());
    let health = check(&path).unwrap();
    assert!(health.whole(), "{:?}", health.problems);
    assert_eq!(health.held.waiting_approvals, Some(1));
    assert_eq!(health.held.parked_runs, Some(1));
    assert!(matches!(repair(&path, "t").unwrap(), Repair::NothingToDo));
    assert!(!dir.path().join("airlock.db.damaged-t").exists());
    assert_eq!(Store::open(&path).unwrap().pending(2).unwrap().len(), 1);
}

#[test]
fn there_is_nothing_to_check_where_no_database_was_ever_made() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(check(&dir.path().join("airlock.db")), None);
}

#[test]
fn using_a_damaged_database_fails_with_an_error_that_says_how_to_recover() {
    let dir = tempfile::tempdir().unwrap();
    let path = filled(dir.path());
    damage(&path);
    let error = Store::open(&path)
        .and_then(|store| store.pending(2))
        .expect_err("a damaged database is never read as empty");
    let text = error.to_string();
    assert!(text.contains("airlock state check"), "{text}");
    assert!(text.contains("airlock state repair"), "{text}");
    assert!(text.contains("nothing is approved"), "{text}");
}

#[test]
fn a_damaged_database_is_kept_aside_as_found_replaced_by_an_empty_one_and_its_losses_told() {
    let dir = tempfile::tempdir().unwrap();
    let path = filled(dir.path());
    damage(&path);
    let damaged_bytes = std::fs::read(&path).unwrap();
    let health = check(&path).unwrap();
    assert!(!health.whole());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        damaged_bytes,
        "checking changes nothing"
    );

    let Repair::Rebuilt { kept, lost } = repair(&path, "20261202T000000Z").unwrap() else {
        panic!("a damaged database is rebuilt");
    };
    assert_eq!(kept, dir.path().join("airlock.db.damaged-20261202T000000Z"));
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        damaged_bytes,
        "kept as found"
    );
    assert_eq!(lost, health.held);
    assert_eq!(lost.lines().len(), 6);
    assert!(
        lost.lines()[0].contains("unknown number (unreadable)"),
        "a count the damage hides is said to be unknown, never zero: {:?}",
        lost.lines()
    );

    let fresh = check(&path).unwrap();
    assert!(fresh.whole(), "{:?}", fresh.problems);
    assert_eq!(fresh.held.waiting_approvals, Some(0));
    let store = Store::open(&path).unwrap();
    assert!(store.pending(2).unwrap().is_empty());
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
}

#[test]
fn a_repair_is_refused_while_another_process_uses_the_state_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = filled(dir.path());
    damage(&path);
    let lock = dir.path().join(crate::store::users::LOCK_FILE);
    let mut other = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec 9<\"$1\"; flock -s 9; echo held; exec sleep 30")
        .arg("sh")
        .arg(&lock)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut held = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(other.stdout.take().unwrap()),
        &mut held,
    )
    .unwrap();
    let refused = repair(&path, "t");
    other.kill().unwrap();
    other.wait().unwrap();
    let error = refused.expect_err("refused while in use");
    assert!(matches!(error, RepairError::InUse { .. }), "{error}");
    assert!(error.to_string().contains("quit them"), "{error}");
    assert!(path.exists() && !dir.path().join("airlock.db.damaged-t").exists());
    assert!(matches!(
        repair(&path, "t").unwrap(),
        Repair::Rebuilt { .. }
    ));
}
