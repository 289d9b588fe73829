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
fn an_intended_end_is_pending_until_confirmed() {
    let (_dir, s) = crate::store::db::scratch_store();
    assert_eq!(s.audit_anchor("s1").unwrap(), None);
    s.anchor_intend("s1", &end(0, None), &end(1, Some(&h('a'))), 1)
        .unwrap();
    assert_eq!(
        s.audit_anchor("s1").unwrap(),
        Some(Anchor {
            confirmed: end(0, None),
            pending: Some(end(1, Some(&h('a')))),
        })
    );
    s.anchor_confirm("s1", &end(1, Some(&h('a'))), 2).unwrap();
    assert_eq!(
        s.audit_anchor("s1").unwrap(),
        Some(Anchor {
            confirmed: end(1, Some(&h('a'))),
            pending: None,
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
