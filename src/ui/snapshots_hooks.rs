//! What the person's hooks said, on the modal, pinned at 100x30 and 60x20: a hook that asks (with
//! its reason) and one that failed and so has no say, above everything else of the request.

use std::time::Instant;

use super::snapshots::{app, ask, both_sizes, conversation, draw};

#[test]
fn the_modal_says_which_hook_asks_and_which_failed_and_has_no_say() {
    let t0 = Instant::now();
    let mut app = app(t0);
    conversation(&mut app);
    let mut request = crate::ui::testing::command_request("c1", "git push origin feature");
    request.hooks = vec![
        "hook review-gate asks: pushes are looked at by a person here".into(),
        "hook lint.py has no say: it timed out after 10 s and was stopped".into(),
    ];
    ask(&mut app, request);
    both_sizes("hooks_on_the_modal", &app);
    let screen = draw(&app, 100, 30);
    assert!(screen.contains("⚑ hook review-gate asks"), "{screen}");
    assert!(screen.contains("⚑ hook lint.py has no say"), "{screen}");
}
