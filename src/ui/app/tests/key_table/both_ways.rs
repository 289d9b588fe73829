//! The key tables checked both ways, in every context the cockpit has: each key that does
//! something (sends an op or changes any state) is listed in the tables that context looks keys
//! up in, and each press a table lists does something there. The help is drawn from the same
//! tables (`the_help_shows_every_binding_of_the_key_table`), so it can neither miss a key that
//! works nor list one that does nothing.

use crossterm::event::{MouseEvent, MouseEventKind};

use super::*;
use crate::ui::keys::{Binding, Press};
use crate::ui::overlay::{AuditOverlay, ConfirmQuitOverlay, GrantsOverlay, HelpOverlay};

/// A state to press keys in, made fresh for every key.
type State = Box<dyn Fn() -> (App, Instant)>;

/// One context: the places its keys are looked up in (in the dispatcher's order), the places
/// whose presses must all work in it, and states in which they do (a press must do something
/// in at least one; a key that does something in any must be listed).
struct Context {
    name: &'static str,
    chain: &'static [Place],
    own: &'static [Place],
    states: Vec<State>,
}

/// Every key worth trying: letters, digits, punctuation, named keys, F1..F12, each plain and
/// with Shift, Ctrl and Alt.
fn every_key() -> Vec<KeyEvent> {
    let mut codes: Vec<KeyCode> = ('a'..='z')
        .chain('A'..='Z')
        .chain('0'..='9')
        .chain("?/!-+ ".chars())
        .map(KeyCode::Char)
        .collect();
    codes.extend([
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Insert,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::PageDown,
    ]);
    codes.extend((1..=12).map(KeyCode::F));
    let mut keys = Vec::new();
    for code in codes {
        for modifiers in [
            KeyModifiers::NONE,
            KeyModifiers::SHIFT,
            KeyModifiers::CONTROL,
            KeyModifiers::ALT,
        ] {
            keys.push(KeyEvent::new(code, modifiers));
        }
    }
    keys
}

/// Everything a key can change.
fn fingerprint(app: &App) -> String {
    format!(
        "{:?} {:?} {} {} {} {:?} {} {} {:?} {:?}",
        app.overlays,
        app.focus,
        app.selected_run,
        app.expanded,
        app.follow,
        app.conversation,
        app.results_scroll,
        app.should_quit,
        app.prompt.lines(),
        app.entries,
    )
}

/// An inbox answering from memory.
struct Inbox(std::sync::Mutex<Vec<crate::protocol::InboxEntry>>);

impl crate::protocol::InboxSource for Inbox {
    fn list(&self) -> Result<Vec<crate::protocol::InboxEntry>, String> {
        Ok(self.0.lock().unwrap().clone())
    }

    fn answer(&self, id: i64, _allow: bool, _reason: Option<String>) -> Result<String, String> {
        self.0.lock().unwrap().retain(|e| e.id != id);
        Ok(format!("answered {id}"))
    }

    fn changes(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(std::future::pending())
    }
}

/// The other-devices window over a pairing with two devices, device `selected` selected.
fn devices_state(selected: usize) -> (App, Instant) {
    let (mut app, t) = with_overlay(Overlay::Inbox(crate::ui::overlay::InboxOverlay::default()));
    app.overlays.clear();
    app.remote = Some(std::sync::Arc::new(
        crate::ui::testing::MemoryPairing::with_two_devices(1_800_000_000_000),
    ));
    app.open_devices();
    if let Some(Overlay::Devices(d)) = app.overlays.last_mut() {
        d.selected = selected;
    }
    (app, t)
}

/// The inbox open on three requests, the second selected; with `open`, that one open whole,
/// armed, scrolled to row `open` of a preview longer than the window.
fn inbox_state(open: Option<usize>) -> (App, Instant) {
    let (mut app, t) = with_overlay(Overlay::Inbox(crate::ui::overlay::InboxOverlay {
        selected: 1,
        open: None,
    }));
    let entries: Vec<_> = (1..=3)
        .map(|id| crate::protocol::InboxEntry {
            id,
            session: format!("exec-{id}"),
            call_id: "c1".into(),
            tool: "bash".into(),
            agent: None,
            risk: "mutating".into(),
            reasons: vec!["ask: it writes".into()],
            preview: (0..40).map(|i| format!("$ step {i}")).collect(),
            created_ms: 0,
            expires_ms: u64::MAX,
            parked: true,
        })
        .collect();
    app.inbox_source = Some(std::sync::Arc::new(Inbox(std::sync::Mutex::new(entries))));
    app.refresh_inbox();
    if let Some(scroll) = open {
        app.overlays.pop();
        app.overlays
            .push(Overlay::Inbox(crate::ui::overlay::InboxOverlay {
                selected: 1,
                open: Some((2, t, scroll)),
            }));
    }
    (app, t + std::time::Duration::from_secs(1))
}

fn t0() -> Instant {
    Instant::now()
}

/// The selected run (of three) has finished: `u` can undo it.
fn results_with_a_finished_run() -> App {
    let mut app = results_focused(0);
    app.on_agent_event(AgentEvent::ToolFinished {
        call_id: "c2".into(),
        status: crate::protocol::ToolStatus::Ok,
        exit_code: Some(0),
        lines: 0,
        error: None,
        log: None,
    });
    app.selected_run = 1;
    app
}

/// The undo window over a plan longer than the window, with a file in conflict; armed,
/// scrolled to row `scroll`.
fn undo_state(scroll: usize) -> (App, Instant) {
    let plan = crate::protocol::UndoPlan {
        call_id: "c2".into(),
        and_later: false,
        calls: vec![("c2".into(), "$ rm -rf src".into())],
        files: (0..30)
            .map(|i| crate::protocol::FileUndo {
                path: format!("src/f{i}.txt"),
                action: crate::protocol::UndoAction::BringBack,
                diff: vec![format!("+line {i}")],
                conflict: (i == 0).then(|| "changed since by someone else".to_string()),
                not_kept: false,
            })
            .collect(),
        notes: vec!["writes to temp are not undone".into()],
        digest: "d".into(),
    };
    let t = t0();
    let mut overlay = crate::ui::overlay::UndoOverlay::new(plan, t);
    overlay.scroll = scroll;
    let (app, _) = with_overlay(Overlay::Undo(Box::new(overlay)));
    (app, t + std::time::Duration::from_secs(1))
}

/// The demo's file change, judged once (the policy runs on a temporary workspace).
fn edit_request() -> crate::protocol::ApprovalRequest {
    static REQUEST: std::sync::OnceLock<crate::protocol::ApprovalRequest> =
        std::sync::OnceLock::new();
    REQUEST
        .get_or_init(crate::ui::testing::edit_request)
        .clone()
}

fn mid_conversation() -> App {
    let mut app = scrolled_app();
    app.on_key(with(KeyCode::PageUp, KeyModifiers::NONE), t0());
    app
}

fn with_draft(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(c), t0());
    }
}

fn results_focused(scroll: u16) -> App {
    let mut app = mid_conversation();
    app.focus = Focus::Results;
    for id in ["c1", "c2", "c3"] {
        app.on_agent_event(AgentEvent::ToolStarted {
            call_id: id.into(),
            tool: "bash".into(),
            title: "$ make".into(),
        });
    }
    app.follow = false;
    app.selected_run = 1;
    app.results_scroll = scroll;
    app
}

/// A modal over a long diff, armed and scrolled to its middle: nothing of it is all seen.
fn long_modal() -> (App, Instant) {
    let mut long = edit_request();
    let script: String = (1..=80).map(|i| format!("echo step {i}\n")).collect();
    long.preview = Some(crate::facts::diff::unified("run.sh", "", &script));
    let t0 = t0();
    let mut app = App::new(Status::default(), t0);
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(long),
    });
    frame(&mut app, 100, 30);
    let later = t0 + Duration::from_secs(2);
    app.on_key(with(KeyCode::PageDown, KeyModifiers::NONE), later);
    frame(&mut app, 100, 30);
    (app, later)
}

/// A small file change with a one-time code, seen whole and armed: every answer works.
fn seen_modal() -> (App, Instant) {
    let mut request = edit_request();
    request.code = Some("J74G-N2P8".into());
    let t0 = t0();
    let mut app = App::new(Status::default(), t0);
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(request),
    });
    frame(&mut app, 100, 30);
    (app, t0 + Duration::from_secs(2))
}

/// A three-hunk file change, seen whole and armed, its second hunk current: the hunk keys work.
fn hunks_modal() -> (App, Instant) {
    let mut request = edit_request();
    let (old, new) = crate::facts::diff::hunks::three_hunk_change();
    request.preview = Some(crate::facts::diff::unified("f.txt", &old, &new));
    let t0 = t0();
    let mut app = App::new(Status::default(), t0);
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(request),
    });
    frame(&mut app, 100, 40);
    let at = t0 + Duration::from_secs(2);
    app.on_key(key(']'), at);
    frame(&mut app, 100, 40);
    (app, at)
}

/// A command, armed: `e` edits it.
fn command_modal() -> (App, Instant) {
    let t0 = t0();
    let mut app = App::new(Status::default(), t0);
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(crate::ui::testing::command_request(
            "c1",
            "cargo test --locked",
        )),
    });
    frame(&mut app, 100, 30);
    (app, t0 + Duration::from_secs(2))
}

/// The command being edited (after `e`), a new word typed.
fn editing_a_command() -> (App, Instant) {
    let (mut app, at) = command_modal();
    app.on_key(key('e'), at);
    app.on_key(key('x'), at);
    (app, at)
}

fn typing_a_reason() -> (App, Instant) {
    let (mut app, at) = seen_modal();
    app.on_key(key('N'), at);
    app.on_key(key('x'), at);
    (app, at)
}

fn with_overlay(overlay: Overlay) -> (App, Instant) {
    let mut app = App::new(Status::default(), t0());
    frame(&mut app, 60, 20);
    app.grants = (1..=3)
        .map(|id| GrantSummary {
            id,
            tool: "bash".into(),
            scope: "`make *`".into(),
            expires_in_ms: None,
            uses: 0,
        })
        .collect();
    app.overlays.push(overlay);
    (app, t0())
}

fn contexts() -> Vec<Context> {
    vec![
        Context {
            name: "prompt",
            chain: &[Place::Anywhere, Place::Conversation, Place::Prompt],
            own: &[Place::Anywhere, Place::Conversation, Place::Prompt],
            states: vec![
                Box::new(|| (mid_conversation(), t0())),
                Box::new(|| {
                    let mut app = mid_conversation();
                    with_draft(&mut app, "fix it");
                    (app, t0())
                }),
                Box::new(|| {
                    let mut app = mid_conversation();
                    app.turn_running = true;
                    (app, t0())
                }),
            ],
        },
        Context {
            name: "results pane",
            chain: &[Place::Anywhere, Place::Conversation, Place::Results],
            own: &[Place::Results],
            states: vec![
                Box::new(|| (results_focused(0), t0())),
                Box::new(|| (results_focused(5), t0())),
                Box::new(|| (results_with_a_finished_run(), t0())),
            ],
        },
        Context {
            name: "other devices",
            chain: &[Place::Devices],
            own: &[Place::Devices],
            states: vec![Box::new(|| devices_state(0)), Box::new(|| devices_state(1))],
        },
        Context {
            name: "undo",
            chain: &[Place::Undo],
            own: &[Place::Undo],
            states: vec![
                Box::new(|| undo_state(0)),
                Box::new(|| undo_state(5)),
                Box::new(|| undo_state(1000)),
            ],
        },
        Context {
            name: "approval",
            chain: &[Place::Approval],
            own: &[Place::Approval],
            states: vec![
                Box::new(long_modal),
                Box::new(seen_modal),
                Box::new(hunks_modal),
                Box::new(command_modal),
            ],
        },
        Context {
            name: "approval, editing the command",
            chain: &[Place::EditCommand],
            own: &[Place::EditCommand],
            states: vec![Box::new(editing_a_command)],
        },
        Context {
            name: "approval, typing a reason",
            chain: &[Place::Reason],
            own: &[Place::Reason],
            states: vec![Box::new(typing_a_reason)],
        },
        Context {
            name: "help",
            chain: &[Place::Help],
            own: &[Place::Help],
            states: vec![Box::new(|| {
                with_overlay(Overlay::Help(HelpOverlay { scroll: 5 }))
            })],
        },
        Context {
            name: "grants",
            chain: &[Place::Grants],
            own: &[Place::Grants],
            states: vec![Box::new(|| {
                with_overlay(Overlay::Grants(GrantsOverlay { selected: 1 }))
            })],
        },
        Context {
            name: "agents",
            chain: &[Place::Agents],
            own: &[Place::Agents],
            states: vec![Box::new(|| {
                let (mut app, t) =
                    with_overlay(Overlay::Agents(crate::ui::overlay::AgentsOverlay {
                        selected: 1,
                    }));
                for id in ["a1", "a2"] {
                    app.on_agent_event(crate::protocol::AgentEvent::AgentStarted {
                        agent: crate::protocol::AgentLabel {
                            id: id.into(),
                            parent: "main".into(),
                            task: "run the tests".into(),
                        },
                        call_id: format!("c-{id}"),
                        depth: 1,
                        mode: "default".into(),
                        sandbox: None,
                    });
                }
                (app, t)
            })],
        },
        Context {
            name: "inbox",
            chain: &[Place::Inbox],
            own: &[Place::Inbox],
            states: vec![
                Box::new(|| inbox_state(None)),
                Box::new(|| inbox_state(Some(0))),
                Box::new(|| inbox_state(Some(100))),
            ],
        },
        Context {
            name: "audit",
            chain: &[Place::Audit],
            own: &[Place::Audit],
            states: vec![Box::new(|| {
                with_overlay(Overlay::Audit(AuditOverlay { scroll: 2 }))
            })],
        },
        Context {
            name: "quit?",
            chain: &[Place::ConfirmQuit],
            own: &[Place::ConfirmQuit],
            states: vec![Box::new(|| {
                with_overlay(Overlay::ConfirmQuit(ConfirmQuitOverlay))
            })],
        },
    ]
}

/// Whether pressing `key` in a fresh copy of `state` does anything.
fn reacts(state: &State, key: KeyEvent) -> (bool, Vec<Op>) {
    let (mut app, at) = state();
    let before = fingerprint(&app);
    let ops = app.on_key(key, at);
    (!ops.is_empty() || fingerprint(&app) != before, ops)
}

/// Whether turning the wheel over `place`'s pane (or window) in a fresh copy of `state` does
/// anything.
fn wheel_reacts(state: &State, place: Place, up: bool) -> bool {
    let (mut app, _) = state();
    let (x, y, w, h) = match place {
        Place::Conversation => app.conversation_area,
        Place::Results => app.results_area,
        _ => (0, 0, app.screen.0, app.screen.1),
    };
    let before = fingerprint(&app);
    app.on_mouse(MouseEvent {
        kind: if up {
            MouseEventKind::ScrollUp
        } else {
            MouseEventKind::ScrollDown
        },
        column: x + w / 2,
        row: y + h / 2,
        modifiers: KeyModifiers::NONE,
    });
    fingerprint(&app) != before
}

/// The key a press stands for; for `Other`, a key no named press of the chain takes.
fn pressed(press: Press, chain: &[Place]) -> KeyEvent {
    match press {
        Press::Key(code, modifiers) => KeyEvent::new(code, modifiers),
        Press::AnyModifiers(code) => KeyEvent::new(code, KeyModifiers::NONE),
        Press::Ctrl(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
        Press::Other | Press::WheelUp | Press::WheelDown => ['z', 'Z', '#', '0']
            .into_iter()
            .map(key)
            .find(|k| !chain.iter().any(|p| keys::names(*p, k)))
            .unwrap_or_else(|| panic!("every test key is named in {chain:?}")),
    }
}

#[test]
fn every_key_a_window_reacts_to_is_in_the_table() {
    for context in contexts() {
        for state in &context.states {
            for key in every_key() {
                let (reacted, ops) = reacts(state, key);
                let listed = context
                    .chain
                    .iter()
                    .any(|p| keys::action(*p, &key).is_some());
                assert!(
                    !reacted || listed,
                    "{}: {key:?} does something ({ops:?}) that the key table (and so the help) \
                     does not list",
                    context.name
                );
            }
        }
    }
}

#[test]
fn every_press_a_table_lists_does_something_where_it_is_listed() {
    let mut checked = Vec::new();
    for context in contexts() {
        for place in context.own {
            checked.push(*place);
            let bindings: &[Binding] = keys::table(*place);
            for binding in bindings {
                for (press, action) in binding.presses {
                    let works = match press {
                        Press::WheelUp | Press::WheelDown => context
                            .states
                            .iter()
                            .any(|s| wheel_reacts(s, *place, *press == Press::WheelUp)),
                        _ => {
                            let key = pressed(*press, context.chain);
                            context.states.iter().any(|s| reacts(s, key).0)
                        }
                    };
                    assert!(
                        works,
                        "{}: `{}` lists {press:?} ({action:?}) but it does nothing there",
                        context.name, binding.keys
                    );
                }
            }
        }
    }
    for place in Place::ALL {
        assert!(checked.contains(&place), "{place:?} is never checked");
    }
}
