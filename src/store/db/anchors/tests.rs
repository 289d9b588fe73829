use super::*;

fn end(records: u64, hash: Option<&str>) -> ChainEnd {
    ChainEnd {
        records,
        last_hash: hash.map(str::to_owned),
    }
}

fn h(c: char) -> String {
    c.to_string().repeat(64)
}

#[test]
fn an_intended_end_is_pending_until_confirmed_and_every_write_is_signed() {
    let (_dir, s) = crate::store::db::scratch_store();
    assert_eq!(s.audit_anchor("s1").unwrap(), None);
    s.anchor_intend("s1", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    assert_eq!(
        s.audit_anchor("s1").unwrap(),
        Some(Anchor {
            confirmed: end(0, None),
            pending: Some(end(1, Some(&h('a')))),
            signed: true,
        })
    );
    s.anchor_confirm("s1", &end(1, Some(&h('a'))), 2).unwrap();
    assert_eq!(
        s.audit_anchor("s1").unwrap(),
        Some(Anchor {
            confirmed: end(1, Some(&h('a'))),
            pending: None,
            signed: true,
        })
    );
}

#[test]
fn an_intent_from_an_end_the_anchor_does_not_hold_is_refused() {
    let (_dir, s) = crate::store::db::scratch_store();
    s.anchor_intend("s1", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    s.anchor_confirm("s1", &end(1, Some(&h('a'))), 1).unwrap();
    // A writer that believes the log is shorter, or ends elsewhere, cannot move the anchor back.
    for stale in [end(0, None), end(1, Some(&h('b'))), end(2, Some(&h('a')))] {
        let err = s
            .anchor_intend("s1", &stale, &end(stale.records + 1, Some(&h('c'))), 2)
            .unwrap_err();
        assert!(err.to_string().contains("another process"), "{err}");
    }
    assert_eq!(
        s.audit_anchor("s1").unwrap().unwrap().confirmed,
        end(1, Some(&h('a')))
    );
}

#[test]
fn an_intent_from_an_unconfirmed_pending_end_is_taken() {
    let (_dir, s) = crate::store::db::scratch_store();
    s.anchor_intend("s1", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    // The confirmation never came; the line was written, so the next writer goes on from it.
    s.anchor_intend("s1", &end(1, Some(&h('a'))), &end(2, Some(&h('b'))), 2)
        .unwrap();
    let anchor = s.audit_anchor("s1").unwrap().unwrap();
    assert_eq!(anchor.confirmed, end(1, Some(&h('a'))));
    assert_eq!(anchor.pending, Some(end(2, Some(&h('b')))));
}

#[test]
fn confirming_an_end_that_is_not_pending_is_refused() {
    let (_dir, s) = crate::store::db::scratch_store();
    s.anchor_intend("s1", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    assert!(s.anchor_confirm("s1", &end(1, Some(&h('b'))), 2).is_err());
    assert!(s.anchor_confirm("s2", &end(1, Some(&h('a'))), 2).is_err());
}

#[test]
fn an_anchor_edited_into_nonsense_is_reported_not_trusted() {
    let (_dir, s) = crate::store::db::scratch_store();
    s.conn
        .execute(
            "INSERT INTO audit_anchors (session, records, last_hash, updated_ms)
             VALUES ('s1', 3, 'not a hash', 0)",
            [],
        )
        .unwrap();
    let err = s.audit_anchor("s1").unwrap_err();
    assert!(err.to_string().contains("not valid"), "{err}");
}

/// An anchor at two records, both ends signed, the way the writer leaves it.
fn anchored_at_two(s: &Store) {
    s.anchor_intend("s1", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    s.anchor_confirm("s1", &end(1, Some(&h('a'))), 1).unwrap();
    s.anchor_intend("s1", &end(1, Some(&h('a'))), &end(2, Some(&h('b'))), 2)
        .unwrap();
    s.anchor_confirm("s1", &end(2, Some(&h('b'))), 2).unwrap();
}

fn assert_tampered(s: &Store, session: &str) {
    match s.audit_anchor(session) {
        Err(err @ StoreError::Tampered(_)) => {
            let text = err.to_string();
            assert!(text.contains("changed outside airlock"), "{text}");
            assert!(text.contains(&format!("{session:?}")), "{text}");
        }
        other => panic!("expected the anchor refused as tampered, got {other:?}"),
    }
}

#[test]
fn an_anchor_rewritten_with_sqlite_is_refused_as_tampered_never_used() {
    let edits = [
        // Rewound to an earlier end: the log was truncated to match.
        format!(
            "UPDATE audit_anchors SET records = 1, last_hash = '{}'",
            h('a')
        ),
        // Moved to a forged log's end, same length.
        format!("UPDATE audit_anchors SET last_hash = '{}'", h('f')),
        // One record more, and a pending end that was never intended.
        format!(
            "UPDATE audit_anchors SET records = 3, last_hash = '{}'",
            h('c')
        ),
        format!(
            "UPDATE audit_anchors SET pending_records = 3, pending_hash = '{}'",
            h('c')
        ),
        // Rewritten into nonsense: the signature is judged before the contents.
        "UPDATE audit_anchors SET last_hash = 'not a hash'".to_owned(),
        // The signature itself replaced.
        format!("UPDATE audit_anchors SET mac = '{}'", h('0')),
    ];
    for edit in edits {
        let (_dir, s) = crate::store::db::scratch_store();
        anchored_at_two(&s);
        assert_eq!(s.conn.execute(&edit, []).unwrap(), 1, "{edit}");
        assert_tampered(&s, "s1");
    }
}

#[test]
fn another_sessions_signed_anchor_copied_in_place_is_refused_as_tampered() {
    let (_dir, s) = crate::store::db::scratch_store();
    anchored_at_two(&s);
    s.anchor_intend("s2", &end(0, None), &end(1, Some(&h('e'))), 3)
        .unwrap();
    s.conn
        .execute("DELETE FROM audit_anchors WHERE session = 's2'", [])
        .unwrap();
    s.conn
        .execute(
            "INSERT INTO audit_anchors (session, records, last_hash, pending_records, pending_hash, updated_ms, mac)
             SELECT 's2', records, last_hash, pending_records, pending_hash, updated_ms, mac
             FROM audit_anchors WHERE session = 's1'",
            [],
        )
        .unwrap();
    assert_tampered(&s, "s2");
}

#[test]
fn an_unsigned_anchor_from_before_signing_is_read_as_unsigned_and_signed_by_the_next_write() {
    let (_dir, s) = crate::store::db::scratch_store();
    anchored_at_two(&s);
    // What an anchor written before migration 9 looks like.
    s.conn
        .execute("UPDATE audit_anchors SET mac = NULL", [])
        .unwrap();
    let unsigned = s.audit_anchor("s1").unwrap().unwrap();
    assert!(!unsigned.signed);
    assert_eq!(unsigned.confirmed, end(2, Some(&h('b'))));

    s.anchor_intend("s1", &end(2, Some(&h('b'))), &end(3, Some(&h('c'))), 3)
        .unwrap();
    assert!(s.audit_anchor("s1").unwrap().unwrap().signed);
    s.anchor_confirm("s1", &end(3, Some(&h('c'))), 3).unwrap();
    let anchor = s.audit_anchor("s1").unwrap().unwrap();
    assert!(anchor.signed);
    assert_eq!(anchor.confirmed, end(3, Some(&h('c'))));
}

#[test]
fn the_database_knows_a_session_by_its_cockpit_session_run_approval_or_grants() {
    let (_dir, s) = crate::store::db::scratch_store();
    let statements = [
        (
            "by-session",
            "INSERT INTO sessions (id, workspace, state, created_ms, updated_ms, title, turns) VALUES ('by-session', '/w', 'idle', 0, 0, '', 0)",
        ),
        (
            "by-run-id",
            "INSERT INTO runs (id, session, workspace, state, created_ms, updated_ms) VALUES ('by-run-id', 'other', '/w', 'live', 0, 0)",
        ),
        (
            "by-run-session",
            "INSERT INTO runs (id, session, workspace, state, created_ms, updated_ms) VALUES ('r2', 'by-run-session', '/w', 'live', 0, 0)",
        ),
        (
            "by-approval",
            "INSERT INTO approvals (run_id, session, call_id, tool, digest, frozen, summary, code_hash, created_ms, expires_ms, state) VALUES ('r2', 'by-approval', 'c', 'bash', 'd', '{}', '', 'x', 0, 0, 'pending')",
        ),
        (
            "by-grants",
            "INSERT INTO session_grants (session, grants, updated_ms) VALUES ('by-grants', '[]', 0)",
        ),
    ];
    for (session, insert) in statements {
        assert!(!s.knows_session(session).unwrap(), "{session} before");
        s.conn.execute(insert, []).unwrap();
        assert!(s.knows_session(session).unwrap(), "{session} after");
    }
    // An anchor alone is not knowing the session: it is what verify asks about.
    s.anchor_intend("only-anchored", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    assert!(!s.knows_session("only-anchored").unwrap());
}
