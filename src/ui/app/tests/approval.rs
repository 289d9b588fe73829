//! The approval modal's keys: only plain keys answer, and allowing waits until everything that
//! asks has been on screen; denying always works.

use super::*;

/// A file change the gate offers both session grants for: `a` (the file) and `d` (its directory).
fn file_request(call_id: &str) -> ApprovalRequest {
    let mut req = request(call_id, "unused", true);
    req.tool = "edit_file".into();
    req.session_scopes = Some(vec![GrantScope::Path {
        path: "/work/demo/src/notes.txt".into(),
    }]);
    req.directory_scope = Some(GrantScope::Directory {
        path: "/work/demo/src".into(),
    });
    req.preview = None;
    req
}

#[test]
fn d_allows_the_files_directory_for_the_session() {
    let mut rig = Rig::new();
    rig.ask(file_request("c1"));
    let ops = rig.press(key('d'), 1000);
    assert_eq!(
        decided(&ops),
        vec![("c1".into(), Decision::AllowSession { directory: true })]
    );
}

#[test]
fn a_chord_never_answers_the_modal_whatever_option_key_it_holds() {
    let chords = [
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
        KeyModifiers::SUPER,
        KeyModifiers::HYPER,
        KeyModifiers::META,
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        KeyModifiers::ALT | KeyModifiers::SHIFT,
        KeyModifiers::CONTROL | KeyModifiers::ALT,
        KeyModifiers::SUPER | KeyModifiers::SHIFT,
    ];
    let options = [
        KeyCode::Char('y'),
        KeyCode::Char('a'),
        KeyCode::Char('d'),
        KeyCode::Char('n'),
        KeyCode::Char('N'),
        KeyCode::Char('p'),
        KeyCode::Esc,
    ];
    for code in options {
        for modifiers in chords {
            let mut rig = Rig::new();
            rig.ask(file_request("c1"));
            let ops = rig.press(KeyEvent::new(code, modifiers), 1000);
            assert!(ops.is_empty(), "{modifiers:?} {code:?} answered: {ops:?}");
            let Some(Overlay::Approval(overlay)) = rig.app.overlays.last() else {
                panic!("{modifiers:?} {code:?} closed the modal");
            };
            assert!(
                overlay.reason.is_none(),
                "{modifiers:?} {code:?} opened the reason box"
            );
            assert_eq!(rig.app.pending_approvals(), 1);
            assert!(!rig.app.should_quit, "{modifiers:?} {code:?} quit");
        }
    }
}

#[test]
fn shift_answers_only_where_the_key_is_a_capital_letter() {
    // Shift-y, Shift-a, Shift-d, Shift-n and Shift-Esc are not the plain keys the modal shows.
    for code in [
        KeyCode::Char('y'),
        KeyCode::Char('a'),
        KeyCode::Char('d'),
        KeyCode::Char('n'),
        KeyCode::Esc,
    ] {
        let mut rig = Rig::new();
        rig.ask(file_request("c1"));
        let ops = rig.press(KeyEvent::new(code, KeyModifiers::SHIFT), 1000);
        assert!(ops.is_empty(), "Shift {code:?} answered: {ops:?}");
        assert_eq!(rig.app.pending_approvals(), 1);
    }
    // `N` arrives with Shift from most terminals and without it from some: both open the box.
    for modifiers in [KeyModifiers::SHIFT, KeyModifiers::NONE] {
        let mut rig = Rig::new();
        rig.ask(file_request("c1"));
        rig.press(KeyEvent::new(KeyCode::Char('N'), modifiers), 1000);
        let Some(Overlay::Approval(overlay)) = rig.app.overlays.last() else {
            panic!("the modal closed");
        };
        assert!(overlay.reason.is_some(), "{modifiers:?} N");
    }
}

#[test]
fn ctrl_d_over_the_modal_neither_grants_a_directory_nor_quits() {
    let mut rig = Rig::new();
    rig.ask(file_request("c1"));
    let ops = rig.press(ctrl('d'), 1000);
    assert!(ops.is_empty(), "{ops:?}");
    assert!(!rig.app.should_quit);
    // The plain key still works afterwards.
    let ops = rig.press(key('d'), 1100);
    assert_eq!(
        decided(&ops),
        vec![("c1".into(), Decision::AllowSession { directory: true })]
    );
}

fn thirty_touches() -> ApprovalRequest {
    let touches: Vec<String> = (1..=30).map(|i| format!("touch out{i}.txt")).collect();
    crate::ui::testing::command_request("c1", &touches.join(" && "))
}

fn overlay(app: &App) -> &ApprovalOverlay {
    match app.overlays.last() {
        Some(Overlay::Approval(a)) => a,
        _ => panic!("no approval modal"),
    }
}

#[test]
fn y_a_and_d_are_refused_until_every_asking_part_has_been_on_screen() {
    let mut rig = Rig::new();
    let mut req = thirty_touches();
    req.directory_scope = Some(GrantScope::Directory {
        path: "/work/demo".into(),
    });
    rig.ask(req);
    assert!(!overlay(&rig.app).unseen().is_empty());
    for c in ['y', 'a', 'd'] {
        assert!(rig.press(key(c), 1000).is_empty(), "{c} answered unseen");
        assert_eq!(overlay(&rig.app).refused, Some(c));
    }
    // Page down until the last asking part and the end of the command have been drawn.
    let mut pages = 0;
    while !overlay(&rig.app).unseen().is_empty() {
        rig.press(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE), 1100);
        pages += 1;
        assert!(pages < 10, "paging never showed everything");
    }
    let ops = rig.press(key('y'), 1200);
    assert_eq!(decided(&ops), vec![("c1".into(), Decision::AllowOnce)]);
}

#[test]
fn denying_always_works_before_anything_has_been_scrolled() {
    for k in [key('n'), KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)] {
        let mut rig = Rig::new();
        rig.ask(thirty_touches());
        let ops = rig.press(k, 1000);
        assert_eq!(
            decided(&ops),
            vec![("c1".into(), Decision::Deny { reason: None })]
        );
    }
    let mut rig = Rig::new();
    rig.ask(thirty_touches());
    rig.press(key('N'), 1000);
    rig.type_text("too many", 1100);
    let ops = rig.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), 1200);
    assert!(matches!(decided(&ops)[0].1, Decision::Deny { .. }));
    let mut rig = Rig::new();
    rig.ask(thirty_touches());
    assert_eq!(rig.press(ctrl('c'), 1000).last(), Some(&Op::Interrupt));
}

#[test]
fn a_modal_no_frame_has_shown_allows_nothing() {
    let mut app = App::new(Status::default(), Instant::now());
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(request("c1", "cargo test", true)),
    });
    let later = app.now + Duration::from_secs(2);
    assert!(app.on_key(key('y'), later).is_empty());
    assert_eq!(app.pending_approvals(), 1);
}

#[test]
fn a_frame_of_another_request_counts_for_nothing() {
    let mut app = App::new(Status::default(), Instant::now());
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(request("c1", "cargo test", true)),
    });
    let view = crate::ui::preview::View {
        width: 80,
        rows: 20,
    };
    app.approval_drawn(Some(("c9".into(), view)));
    assert!(!overlay(&app).unseen().is_empty());
    app.approval_drawn(Some(("c1".into(), view)));
    assert!(overlay(&app).unseen().is_empty());
}

#[test]
fn the_next_request_in_the_queue_starts_unseen_at_the_top() {
    let mut rig = Rig::new();
    rig.ask(request("c1", "cargo test", true));
    let mut second = thirty_touches();
    second.call_id = "c2".into();
    rig.ask(second);
    rig.press(KeyEvent::new(KeyCode::End, KeyModifiers::NONE), 900);
    assert_eq!(decided(&rig.press(key('y'), 1000))[0].0, "c1");
    assert_eq!(overlay(&rig.app).scroll, crate::ui::preview::Scroll::TOP);
    assert!(
        rig.press(key('y'), 1500).is_empty(),
        "c2 was never scrolled"
    );
    assert_eq!(overlay(&rig.app).refused, Some('y'));
}

/// A 50,000-line file with one line in fifty changed, as the benchmark has it.
fn huge_edit() -> ApprovalRequest {
    let old: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
    let new: String = (0..50_000)
        .map(|i| {
            if i % 50 == 0 {
                format!("line {i} changed\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    let mut req = request("c1", "unused", true);
    req.tool = "write_file".into();
    req.preview = Some(crate::facts::diff::unified("big.txt", &old, &new));
    req
}

#[test]
fn a_50k_line_diff_is_approvable_once_end_has_shown_its_last_change() {
    let mut rig = Rig::new();
    rig.ask(huge_edit());
    assert!(rig.press(key('y'), 1000).is_empty());
    rig.press(KeyEvent::new(KeyCode::End, KeyModifiers::NONE), 1100);
    assert!(overlay(&rig.app).unseen().is_empty());
    let ops = rig.press(key('y'), 1200);
    assert_eq!(decided(&ops), vec![("c1".into(), Decision::AllowOnce)]);
}

#[test]
fn up_after_end_moves_from_the_real_bottom() {
    let mut rig = Rig::new();
    rig.ask(huge_edit());
    rig.press(KeyEvent::new(KeyCode::End, KeyModifiers::NONE), 100);
    let bottom = overlay(&rig.app).scroll;
    // The arrows scroll at once; j and k only once the modal is armed (before, they are typing
    // meant for the prompt).
    rig.press(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE), 200);
    let up = overlay(&rig.app).scroll;
    assert!(up < bottom, "{up:?} {bottom:?}");
    rig.press(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE), 300);
    assert_eq!(overlay(&rig.app).scroll, bottom);
}

#[test]
fn mouse_wheel_scrolls_the_preview_by_rows() {
    let mut rig = Rig::new();
    rig.ask(huge_edit());
    let wheel = |kind| MouseEvent {
        kind,
        column: 10,
        row: 10,
        modifiers: KeyModifiers::NONE,
    };
    rig.app.on_mouse(wheel(MouseEventKind::ScrollDown));
    let down = overlay(&rig.app).scroll;
    assert!(down > crate::ui::preview::Scroll::TOP);
    rig.app.on_mouse(wheel(MouseEventKind::ScrollUp));
    assert_eq!(overlay(&rig.app).scroll, crate::ui::preview::Scroll::TOP);
}

#[test]
fn keys_typed_as_the_modal_appears_are_dropped_counted_and_never_answer_it() {
    let mut rig = Rig::new();
    rig.ask(file_request("c1"));
    let mut ops = Vec::new();
    for (i, c) in "yes, just kidding".chars().enumerate() {
        ops.extend(rig.press(key(c), 10 * i as u64));
    }
    assert!(decided(&ops).is_empty(), "a typed key answered the modal");
    // Not in the draft the modal hides: it would reach the model with the next prompt.
    assert_eq!(rig.app.draft(), "");
    assert_eq!(overlay(&rig.app).ignored, 17);
    assert_eq!(rig.app.pending_approvals(), 1);
    // Once the typing has stopped for the arming delay, the modal answers as usual.
    let ops = rig.press(key('n'), 10 * 17 + 1000);
    assert_eq!(
        decided(&ops),
        vec![("c1".into(), Decision::Deny { reason: None })]
    );
    assert_eq!(rig.app.draft(), "");
}

#[test]
fn help_opens_over_the_modal_and_esc_then_closes_only_the_help() {
    let mut rig = Rig::new();
    rig.ask(file_request("c1"));
    // F1 at any time, `?` once armed.
    assert!(
        rig.press(KeyEvent::new(KeyCode::F(1), KeyModifiers::NONE), 1000)
            .is_empty()
    );
    assert!(matches!(rig.app.overlays.last(), Some(Overlay::Help(_))));
    let ops = rig.press(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), 1100);
    assert!(
        ops.is_empty(),
        "Esc over the help answered the modal: {ops:?}"
    );
    assert!(matches!(
        rig.app.overlays.last(),
        Some(Overlay::Approval(_))
    ));
    assert_eq!(rig.app.pending_approvals(), 1);
    // A second Esc right after, meant for the help too, finds the modal arming again.
    let ops = rig.press(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), 1200);
    assert!(decided(&ops).is_empty(), "{ops:?}");
    assert_eq!(rig.app.pending_approvals(), 1);
    assert!(rig.press(key('?'), 3000).is_empty());
    assert!(matches!(rig.app.overlays.last(), Some(Overlay::Help(_))));
    rig.press(key('q'), 3100);
    // Armed again after the delay: the modal answers.
    let ops = rig.press(key('n'), 4000);
    assert_eq!(
        decided(&ops),
        vec![("c1".into(), Decision::Deny { reason: None })]
    );
}

#[test]
fn ctrl_u_in_the_reason_box_deletes_to_the_start_of_the_line() {
    let mut rig = Rig::new();
    rig.ask(file_request("c1"));
    rig.press(key('N'), 1000);
    for c in "not this".chars() {
        rig.press(key(c), 1000);
    }
    rig.press(
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
        1000,
    );
    for c in "use make".chars() {
        rig.press(key(c), 1000);
    }
    let ops = rig.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), 1000);
    assert_eq!(
        decided(&ops),
        vec![(
            "c1".into(),
            Decision::Deny {
                reason: Some("use make".into())
            }
        )]
    );
}

#[test]
fn parking_a_request_closes_the_modal_decides_nothing_and_says_how_to_answer_it_later() {
    let mut rig = Rig::new();
    let mut req = file_request("c1");
    req.code = Some("ABCD-EFGH".into());
    rig.ask(req);
    let ops = rig.press(key('p'), 1000);
    assert!(ops.is_empty(), "parking answered: {ops:?}");
    assert_eq!(rig.app.pending_approvals(), 0);
    assert!(rig.app.overlays.is_empty());
    let said =
        rig.app.entries.iter().any(
            |e| matches!(e, Entry::Notice(n) if n.contains("airlock approve ABCD-EFGH --resume")),
        );
    assert!(said, "{:?}", rig.app.entries);
}

#[test]
fn a_request_without_a_code_cannot_be_parked() {
    let mut rig = Rig::new();
    rig.ask(file_request("c1"));
    let ops = rig.press(key('p'), 1000);
    assert!(ops.is_empty());
    assert_eq!(rig.app.pending_approvals(), 1);
}

#[test]
fn parking_the_first_of_two_requests_brings_the_second_up_unarmed() {
    let mut rig = Rig::new();
    let mut first = file_request("c1");
    first.code = Some("ABCD-EFGH".into());
    rig.ask(first);
    rig.ask(file_request("c2"));
    rig.press(key('p'), 1000);
    assert_eq!(rig.app.pending_approvals(), 1);
    // Right after, a `y` is too soon to answer the request that just came up.
    let ops = rig.press(key('y'), 1010);
    assert!(decided(&ops).is_empty(), "{ops:?}");
}
