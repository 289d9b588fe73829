use super::*;

#[test]
fn every_press_is_named_in_the_keys_its_binding_shows() {
    for (place, binding) in all() {
        for (press, _) in binding.presses {
            let name = press.name();
            assert!(
                binding.keys.split(' ').any(|token| token == name),
                "{place:?} `{}` does not show {name}",
                binding.keys
            );
        }
    }
}

#[test]
fn no_press_means_two_things_where_a_key_is_looked_up() {
    // The places one key goes through, in the dispatcher's order (the first takes it).
    let chains: &[&[Place]] = &[
        &[Place::Anywhere, Place::Conversation, Place::Prompt],
        &[Place::Anywhere, Place::Conversation, Place::Results],
        &[Place::Approval],
        &[Place::Reason],
        &[Place::EditCommand],
        &[Place::Help],
        &[Place::Grants],
        &[Place::Audit],
        &[Place::ConfirmQuit],
    ];
    for chain in chains {
        let presses: Vec<Press> = chain
            .iter()
            .flat_map(|p| bindings(*p))
            .flat_map(|b| b.presses.iter().map(|(press, _)| *press))
            // The wheel goes to the pane under the pointer, not through this chain.
            .filter(|press| !matches!(press, Press::WheelUp | Press::WheelDown))
            .collect();
        for (i, press) in presses.iter().enumerate() {
            assert!(
                !presses[i + 1..].contains(press),
                "{press:?} is bound twice in {chain:?}"
            );
        }
    }
}

#[test]
fn every_place_is_in_the_help_once() {
    // A new place does not compile here until it is numbered; then it must be in `ALL`.
    let number = |place: Place| match place {
        Place::Anywhere => 0,
        Place::Conversation => 1,
        Place::Prompt => 2,
        Place::Results => 3,
        Place::Approval => 4,
        Place::Help => 5,
        Place::Grants => 6,
        Place::Audit => 7,
        Place::ConfirmQuit => 8,
        Place::Reason => 9,
        Place::EditCommand => 10,
        Place::Agents => 11,
        Place::Inbox => 12,
        Place::Undo => 13,
        Place::Devices => 14,
    };
    let mut listed: Vec<usize> = Place::ALL.iter().map(|p| number(*p)).collect();
    listed.sort();
    assert_eq!(listed, (0..=14).collect::<Vec<_>>());
}

#[test]
fn shift_is_part_of_a_character_but_a_modifier_of_an_arrow() {
    let shifted = |code| KeyEvent::new(code, KeyModifiers::SHIFT);
    assert_eq!(
        action(Place::Results, &shifted(KeyCode::Char('?'))),
        Some(Action::Help)
    );
    assert_eq!(
        action(Place::Conversation, &shifted(KeyCode::Up)),
        Some(Action::Up(1))
    );
    assert_eq!(
        action(
            Place::Conversation,
            &KeyEvent::new(KeyCode::Up, KeyModifiers::NONE)
        ),
        None
    );
    assert_eq!(
        action(Place::Anywhere, &shifted(KeyCode::BackTab)),
        Some(Action::SwitchFocus)
    );
    assert_eq!(
        action(
            Place::Anywhere,
            &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::ALT)
        ),
        None
    );
}

#[test]
fn an_other_binding_takes_only_what_no_named_press_takes() {
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    assert_eq!(action(Place::ConfirmQuit, &key('y')), Some(Action::Quit));
    assert_eq!(action(Place::ConfirmQuit, &key('x')), Some(Action::Close));
    assert_eq!(action(Place::Prompt, &key('?')), Some(Action::Help));
    assert_eq!(action(Place::Prompt, &key('x')), Some(Action::Edit));
    assert!(!names(Place::Prompt, &key('x')));
    assert_eq!(action(Place::Grants, &key('x')), None);
}
