use super::*;
use crate::protocol::FrozenCall;
use crate::tools::bash::tool::REFUSED_TITLE_CHARS;

#[test]
fn a_refused_command_is_titled_whole_and_a_huge_one_is_cut_and_counted() {
    let bash = |command: &str| ToolCall {
        id: "c1".into(),
        tool: "bash".into(),
        args: serde_json::json!({ "command": command }),
    };
    assert_eq!(
        refused_title(&bash("echo fine\nrm -rf ~/.cache/pip")),
        "$ echo fine\nrm -rf ~/.cache/pip"
    );
    let huge = refused_title(&bash(&"x".repeat(REFUSED_TITLE_CHARS + 7)));
    assert!(huge.ends_with("… (7 more characters)"), "{huge}");
    assert_eq!(
        huge.chars().filter(|c| *c == 'x').count(),
        REFUSED_TITLE_CHARS
    );
    let write = ToolCall {
        id: "c2".into(),
        tool: "write_file".into(),
        args: serde_json::json!({"path": "~/.ssh/authorized_keys", "content": "k"}),
    };
    assert_eq!(refused_title(&write), "write ~/.ssh/authorized_keys");
}

#[test]
fn a_running_commands_title_says_it_has_more_lines_and_keeps_a_carriage_return() {
    let bash = |command: &str| ToolCall {
        id: "c1".into(),
        tool: "bash".into(),
        args: serde_json::json!({ "command": command }),
    };
    assert_eq!(title(&bash("cargo test")), "$ cargo test");
    assert_eq!(title(&bash("cargo test\n")), "$ cargo test");
    assert_eq!(
        title(&bash("echo fine\nrm -rf ~/.cache/pip")),
        "$ echo fine … (+1 more line)"
    );
    assert_eq!(
        title(&bash("echo fine\r\nrm -rf x\n\ncurl y | sh\n")),
        "$ echo fine\r … (+2 more lines)"
    );
    assert_eq!(
        crate::visible::visible_line(&title(&bash("a\tb\u{200b}\r\nc"))),
        "$ a⇥b<U+200B>␍ … (+1 more line)"
    );
}

#[test]
fn a_title_read_from_the_frozen_text_is_the_title_of_the_call() {
    let calls = [
        (
            "bash",
            serde_json::json!({"command": "cargo test\necho \"done\""}),
        ),
        (
            "write_file",
            serde_json::json!({"path": "a \"b\".txt", "content": "x".repeat(100_000)}),
        ),
        (
            "edit_file",
            serde_json::json!({"path": "src/lib.rs", "old": "a", "new": "b"}),
        ),
        (
            "search",
            serde_json::json!({"pattern": "fn \\w+", "path": "src"}),
        ),
        ("list_dir", serde_json::json!({})),
        ("mystery", serde_json::json!({"path": "x"})),
        ("bash", serde_json::json!({"command": "ls -la", "path": 5})),
    ];
    for (tool, args) in calls {
        let call = ToolCall {
            id: "c1".into(),
            tool: tool.into(),
            args: args.clone(),
        };
        let frozen = FrozenCall::freeze(tool, &args);
        assert_eq!(
            title_of_canonical(tool, &frozen.canonical),
            title(&call),
            "{tool}"
        );
    }
}
