//! Other devices (F6) on screen, pinned at 100x30 and 60x20: the approval page's pairing code
//! as a QR code (real encoder) and link, the paired devices (a name with an escape sequence
//! shown, not obeyed), `d` revoking one, `p` a new code; and F6 with no page says how to serve
//! one.

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::overlay::Overlay;
use super::snapshots::{app, both_sizes, conversation, draw, press};
use crate::ui::testing::MemoryPairing;

const NOW_MS: u64 = 1_800_000_000_000;

#[test]
fn f6_shows_the_pairing_code_and_the_paired_devices_and_d_revokes_one() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    app.wall_ms = NOW_MS;
    let pairing = Arc::new(MemoryPairing::with_two_devices(NOW_MS));
    app.remote = Some(pairing.clone());
    press(&mut app, KeyCode::F(6), t0);
    assert!(matches!(app.overlays.last(), Some(Overlay::Devices(_))));
    both_sizes("devices", &app);
    // A 100-character link's code (37 modules, 21 rows) is shown whole where it fits.
    let tall = draw(&app, 120, 40);
    assert!(tall.contains("█▀▀▀▀▀█"), "the QR code fits 120x40:\n{tall}");
    let screen = draw(&app, 100, 30);
    assert!(
        screen.contains("█▀▀▀▀▀█"),
        "the QR code fits 100x30:\n{screen}"
    );
    assert!(screen.contains("tablet␛[2J"), "{screen}");
    // A new code: another token.
    press(&mut app, KeyCode::Char('p'), t0);
    assert_eq!(*pairing.offers.lock().unwrap(), 2);
    assert!(draw(&app, 120, 40).contains("token=00000000000000000000000000000002"));
    // The second device, revoked.
    press(&mut app, KeyCode::Char('j'), t0);
    press(&mut app, KeyCode::Char('d'), t0);
    assert_eq!(pairing.devices.lock().unwrap().len(), 1);
    press(&mut app, KeyCode::Esc, t0);
    both_sizes("devices_revoked", &app);
    assert!(draw(&app, 100, 30).contains("device #2 (tablet␛[2J) revoked"));
}

#[test]
fn f6_without_the_page_says_how_to_serve_it() {
    let t0 = Instant::now();
    let mut app = app(t0);
    press(&mut app, KeyCode::F(6), t0);
    assert!(app.overlays.is_empty());
    assert!(draw(&app, 100, 30).contains("the approval page is off"));
}

#[test]
fn f6_over_the_modal_pairs_a_phone_and_esc_brings_the_modal_back_armed_again() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    app.wall_ms = NOW_MS;
    app.remote = Some(Arc::new(MemoryPairing::with_two_devices(NOW_MS)));
    super::snapshots::ask(
        &mut app,
        crate::ui::testing::command_request("c1", "rm -rf build"),
    );
    super::snapshots::frame(&mut app, 100, 30);
    let later = t0 + std::time::Duration::from_secs(2);
    press(&mut app, KeyCode::F(6), later);
    assert!(matches!(app.overlays.last(), Some(Overlay::Devices(_))));
    both_sizes("devices_over_the_modal", &app);
    press(&mut app, KeyCode::Esc, later);
    let Some(Overlay::Approval(modal)) = app.overlays.last() else {
        panic!("the modal is not back on top");
    };
    assert!(
        modal.armed_at > later,
        "the modal arms again before its keys go live"
    );
    // Its `y` pressed at once answers nothing.
    assert!(press(&mut app, KeyCode::Char('y'), later).is_empty());
}
