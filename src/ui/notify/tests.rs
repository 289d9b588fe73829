use super::*;
use std::collections::HashMap;

fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    let map: HashMap<&str, &str> = vars.iter().copied().collect();
    move |name| map.get(name).map(|v| v.to_string())
}

fn auto_in(vars: &[(&str, &str)]) -> Concrete {
    resolve(NotifyMethod::Auto, &env_of(vars))
}

fn unfocused(method: Concrete) -> Notifier {
    let mut n = Notifier::new(method, false);
    n.on_focus(false);
    n
}

#[test]
fn osc9_is_escape_bracket_9_the_body_and_a_bell() {
    assert_eq!(
        encode(Concrete::Osc9, "airlock", "claude waits", false),
        b"\x1b]9;claude waits\x07"
    );
}

#[test]
fn osc777_is_notify_with_the_title_and_the_body() {
    assert_eq!(
        encode(Concrete::Osc777, "airlock", "claude waits", false),
        b"\x1b]777;notify;airlock;claude waits\x07"
    );
}

#[test]
fn the_bell_is_one_byte_and_off_is_nothing() {
    assert_eq!(encode(Concrete::Bell, "t", "b", false), vec![0x07]);
    assert_eq!(encode(Concrete::Bell, "t", "b", true), vec![0x07]);
    assert!(encode(Concrete::Off, "t", "b", false).is_empty());
    assert!(encode(Concrete::Off, "t", "b", true).is_empty());
}

#[test]
fn tmux_wrapping_doubles_every_escape_and_ends_with_string_terminator() {
    assert_eq!(
        encode(Concrete::Osc9, "airlock", "hi", true),
        b"\x1bPtmux;\x1b\x1b]9;hi\x07\x1b\\"
    );
    assert_eq!(
        encode(Concrete::Osc777, "airlock", "hi", true),
        b"\x1bPtmux;\x1b\x1b]777;notify;airlock;hi\x07\x1b\\"
    );
}

#[test]
fn control_bidi_and_zero_width_characters_are_stripped() {
    let body = "a\u{1b}]0;x\u{7}b\u{7f}c\u{9b}d\u{202e}e\u{2066}f\u{200b}g\u{feff}h\u{0}i";
    let bytes = encode(Concrete::Osc9, "", body, false);
    assert_eq!(bytes, b"\x1b]9;a]0;xbcdefghi\x07");
    // Only the sequence's own ESC and BEL are left.
    let inner = &bytes[2..bytes.len() - 1];
    assert!(inner.iter().all(|&b| b >= 0x20 && b != 0x7f), "{inner:?}");
}

#[test]
fn line_breaks_and_tabs_become_single_spaces_and_the_ends_are_trimmed() {
    assert_eq!(
        clean_field("  one\ntwo\tthree\r\nfour \u{200b} five\n"),
        "one two three four five"
    );
}

#[test]
fn a_semicolon_in_an_osc777_field_is_replaced() {
    assert_eq!(
        encode(Concrete::Osc777, "air;lock", "a;b;c", false),
        b"\x1b]777;notify;air,lock;a,b,c\x07"
    );
}

#[test]
fn osc9_text_never_starts_with_a_digit() {
    assert_eq!(
        encode(Concrete::Osc9, "", "4;1;50", false),
        b"\x1b]9; 4;1;50\x07"
    );
    assert_eq!(
        encode(Concrete::Osc9, "", "\u{200b}5 agents", false),
        b"\x1b]9; 5 agents\x07"
    );
}

#[test]
fn a_long_field_is_cut_on_a_character_boundary() {
    let long = "é".repeat(500);
    let cleaned = clean_field(&long);
    assert_eq!(cleaned.chars().count(), FIELD_CHARS);
    assert!(cleaned.ends_with('…'));
    assert_eq!(
        clean_field(&"x".repeat(FIELD_CHARS)),
        "x".repeat(FIELD_CHARS)
    );
}

#[test]
fn an_unfocused_terminal_gets_one_osc9_per_request() {
    let mut n = unfocused(Concrete::Osc9);
    assert_eq!(
        n.waiting("r1", "claude", "bash"),
        Some(b"\x1b]9;claude is waiting for your approval to run bash\x07".to_vec())
    );
    assert_eq!(n.waiting("r1", "claude", "bash"), None);
}

#[test]
fn an_unfocused_terminal_gets_osc777_with_airlock_as_the_title() {
    let mut n = unfocused(Concrete::Osc777);
    assert_eq!(
        n.waiting("r1", "claude", "edit_file"),
        Some(
            b"\x1b]777;notify;airlock;claude is waiting for your approval to run edit_file\x07"
                .to_vec()
        )
    );
}

#[test]
fn a_notifier_in_tmux_wraps_what_it_sends() {
    let mut n = Notifier::new(Concrete::Osc9, true);
    n.on_focus(false);
    let bytes = n.waiting("r1", "claude", "bash").unwrap();
    assert!(bytes.starts_with(b"\x1bPtmux;\x1b\x1b]9;claude"));
    assert!(bytes.ends_with(b"\x07\x1b\\"));
}

#[test]
fn nothing_is_sent_while_the_terminal_is_focused() {
    let mut n = Notifier::new(Concrete::Osc9, false);
    assert!(n.focused(), "focus starts as focused");
    assert_eq!(n.waiting("r1", "claude", "bash"), None);
    n.on_focus(false);
    n.on_focus(true);
    assert_eq!(n.waiting("r2", "claude", "bash"), None);
}

#[test]
fn nothing_is_sent_when_notifications_are_off() {
    let mut n = unfocused(Concrete::Off);
    assert_eq!(n.waiting("r1", "claude", "bash"), None);
}

#[test]
fn a_second_nudge_for_the_same_request_sends_nothing_even_after_focus_comes_and_goes() {
    let mut n = unfocused(Concrete::Bell);
    assert_eq!(n.waiting("r1", "claude", "bash"), Some(vec![0x07]));
    n.on_focus(true);
    n.on_focus(false);
    assert_eq!(n.waiting("r1", "claude", "bash"), None);
}

#[test]
fn a_new_request_after_focus_is_lost_again_is_nudged() {
    let mut n = unfocused(Concrete::Osc9);
    assert!(n.waiting("r1", "claude", "bash").is_some());
    n.on_focus(true);
    assert_eq!(n.waiting("r2", "claude", "bash"), None);
    n.on_focus(false);
    assert!(n.waiting("r3", "claude", "bash").is_some());
}

#[test]
fn a_request_first_seen_while_focused_is_nudged_if_still_waiting_once_focus_is_lost() {
    let mut n = Notifier::new(Concrete::Osc9, false);
    assert_eq!(n.waiting("r1", "claude", "bash"), None);
    n.on_focus(false);
    assert!(n.waiting("r1", "claude", "bash").is_some());
}

#[test]
fn the_oldest_request_is_forgotten_past_the_limit() {
    let mut n = unfocused(Concrete::Bell);
    for i in 0..=REMEMBERED_REQUESTS {
        assert!(n.waiting(&format!("r{i}"), "a", "t").is_some());
    }
    // r0 was pushed out; the newest is still remembered.
    assert!(n.waiting("r0", "a", "t").is_some());
    assert_eq!(
        n.waiting(&format!("r{REMEMBERED_REQUESTS}"), "a", "t"),
        None
    );
    assert!(n.order.len() <= REMEMBERED_REQUESTS);
    assert_eq!(n.order.len(), n.nudged.len());
}

#[test]
fn the_message_names_the_agent_and_the_tool_cleaned_and_short() {
    assert_eq!(
        waiting_body("claude\u{1b}[2J", "bash\u{202e}"),
        "claude[2J is waiting for your approval to run bash"
    );
    assert_eq!(
        waiting_body("", ""),
        "An agent is waiting for your approval"
    );
    let body = waiting_body(&"a".repeat(300), "bash");
    assert!(body.ends_with("to run bash"), "{body}");
}

#[test]
fn methods_parse_from_their_config_names_and_back() {
    for m in NotifyMethod::ALL {
        assert_eq!(m.as_str().parse::<NotifyMethod>(), Ok(m));
    }
    assert_eq!(NotifyMethod::default(), NotifyMethod::Auto);
}

#[test]
fn parse_errors_name_the_bad_value_and_the_allowed_ones() {
    let err = NotifyMethod::parse("osc99").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown notification method \"osc99\": use one of auto, osc9, osc777, bell, off"
    );
    let err = "Bell".parse::<NotifyMethod>().unwrap_err();
    assert!(err.to_string().contains("\"Bell\""), "{err}");
    let err = NotifyMethod::parse("x\u{1b}[2J").unwrap_err();
    assert!(!err.to_string().contains('\u{1b}'), "{err}");
}

#[test]
fn serde_reads_the_same_names_and_the_same_error() {
    #[derive(Deserialize)]
    struct Config {
        notify: NotifyMethod,
    }
    let c: Config = serde_json::from_str(r#"{"notify":"osc777"}"#).unwrap();
    assert_eq!(c.notify, NotifyMethod::Osc777);
    let err = serde_json::from_str::<Config>(r#"{"notify":"loud"}"#)
        .err()
        .unwrap();
    assert!(err.to_string().contains("\"loud\""), "{err}");
    assert!(
        err.to_string().contains("auto, osc9, osc777, bell, off"),
        "{err}"
    );
}

#[test]
fn a_chosen_method_is_used_whatever_the_terminal() {
    let env = env_of(&[("TERM_PROGRAM", "iTerm.app")]);
    assert_eq!(resolve(NotifyMethod::Osc777, &env), Concrete::Osc777);
    assert_eq!(resolve(NotifyMethod::Bell, &env), Concrete::Bell);
    assert_eq!(resolve(NotifyMethod::Off, &env), Concrete::Off);
    assert_eq!(resolve(NotifyMethod::Osc9, &env_of(&[])), Concrete::Osc9);
}

#[test]
fn auto_picks_by_the_terminal() {
    let table: &[(&[(&str, &str)], Concrete)] = &[
        (&[("TERM_PROGRAM", "iTerm.app")], Concrete::Osc9),
        (&[("LC_TERMINAL", "iTerm2")], Concrete::Osc9),
        (&[("TERM_PROGRAM", "ghostty")], Concrete::Osc9),
        (
            &[("GHOSTTY_RESOURCES_DIR", "/usr/share/ghostty")],
            Concrete::Osc9,
        ),
        (&[("TERM", "xterm-ghostty")], Concrete::Osc9),
        (&[("TERM_PROGRAM", "WezTerm")], Concrete::Osc777),
        (&[("WEZTERM_PANE", "0")], Concrete::Osc777),
        (&[("KITTY_WINDOW_ID", "1")], Concrete::Osc777),
        (&[("TERM", "xterm-kitty")], Concrete::Osc777),
        (&[("TERM_PROGRAM", "vscode")], Concrete::Bell),
        (&[("TERM_PROGRAM", "Apple_Terminal")], Concrete::Bell),
        (&[("WT_SESSION", "abc")], Concrete::Bell),
        (
            &[("VTE_VERSION", "7600"), ("TERM", "xterm-256color")],
            Concrete::Osc777,
        ),
        (&[("TERM", "foot")], Concrete::Osc777),
        (&[("TERM", "foot-extra")], Concrete::Osc777),
        (&[("TERM", "rxvt-unicode-256color")], Concrete::Osc777),
        (&[("TERM", "xterm-256color")], Concrete::Bell),
        (&[("TERM", "alacritty")], Concrete::Bell),
        (&[], Concrete::Bell),
    ];
    for (vars, want) in table {
        assert_eq!(auto_in(vars), *want, "{vars:?}");
    }
}

#[test]
fn auto_trusts_the_running_terminal_before_inherited_markers() {
    // kitty started from GNOME Terminal inherits VTE_VERSION.
    assert_eq!(
        auto_in(&[("KITTY_WINDOW_ID", "1"), ("VTE_VERSION", "7600")]),
        Concrete::Osc777
    );
    // iTerm2 started from a shell in kitty inherits KITTY_WINDOW_ID.
    assert_eq!(
        auto_in(&[("TERM_PROGRAM", "iTerm.app"), ("KITTY_WINDOW_ID", "1")]),
        Concrete::Osc9
    );
    // An empty variable counts as unset.
    assert_eq!(auto_in(&[("KITTY_WINDOW_ID", "")]), Concrete::Bell);
}

#[test]
fn auto_inside_tmux_looks_past_tmux_to_the_outer_terminal_or_rings() {
    let tmux = [
        ("TMUX", "/tmp/tmux-1000/default,1234,0"),
        ("TERM_PROGRAM", "tmux"),
        ("TERM", "tmux-256color"),
    ];
    assert_eq!(auto_in(&tmux), Concrete::Bell);
    let mut iterm = tmux.to_vec();
    iterm.push(("LC_TERMINAL", "iTerm2"));
    assert_eq!(auto_in(&iterm), Concrete::Osc9);
    let mut kitty = tmux.to_vec();
    kitty.push(("KITTY_WINDOW_ID", "3"));
    assert_eq!(auto_in(&kitty), Concrete::Osc777);
}

#[test]
fn auto_under_screen_or_zellij_rings() {
    assert_eq!(
        auto_in(&[("STY", "123.pts-0.host"), ("KITTY_WINDOW_ID", "1")]),
        Concrete::Bell
    );
    assert_eq!(
        auto_in(&[("ZELLIJ", "0"), ("TERM_PROGRAM", "iTerm.app")]),
        Concrete::Bell
    );
}
