//! What the approval modal is shown for a file write, through the tool registry: never a new
//! file for a write over one that exists, whatever it holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock::approval::approver::Previewer;
use airlock::protocol::Preview;
use airlock::tools::ToolRegistry;
use serde_json::json;

fn registry(dir: &std::path::Path) -> ToolRegistry {
    ToolRegistry::new(dir.to_path_buf(), dir.to_path_buf(), None)
}

fn counts(preview: Option<Preview>) -> (String, usize, usize) {
    match preview {
        Some(Preview::Diff {
            unified,
            added,
            removed,
            ..
        }) => (unified, added, removed),
        other => panic!("expected a diff, got {other:?}"),
    }
}

#[test]
fn a_write_over_a_file_that_is_not_utf8_previews_its_lines_as_removed_not_as_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("data.bin"),
        b"\x89PNG\r\n\x1a\n\x00\x00\xff\xd8 rest\n",
    )
    .unwrap();
    let args = json!({"path": "data.bin", "content": "replaced\n"});
    let (text, added, removed) = counts(registry(dir.path()).preview(
        "write_file",
        &args,
        Some(&dir.path().join("data.bin")),
    ));
    assert_eq!((added, removed), (1, 3), "{text}");
    assert!(!text.contains("@@ -0,0"), "{text}");
    assert!(text.contains("binary file, 18 bytes"), "{text}");
}

#[test]
fn a_write_over_a_latin1_text_file_previews_a_marked_lossy_diff() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.txt"), b"one\ntw\xf6\nthree\n").unwrap();
    let args = json!({"path": "old.txt", "content": "one\nthree\n"});
    let (text, added, removed) = counts(registry(dir.path()).preview(
        "write_file",
        &args,
        Some(&dir.path().join("old.txt")),
    ));
    assert_eq!((added, removed), (0, 1), "{text}");
    assert!(text.contains("not valid UTF-8 from byte 6"), "{text}");
    assert!(text.contains("-tw\u{FFFD}\n"), "{text}");
}

#[test]
fn previewing_a_write_or_an_edit_of_a_fifo_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reg = registry(dir.path());
    let (text, ..) = counts(reg.preview(
        "write_file",
        &json!({"path": "pipe", "content": "x"}),
        Some(&fifo),
    ));
    assert!(text.contains("not a regular file"), "{text}");
    let edit = reg.preview(
        "edit_file",
        &json!({"path": "pipe", "old": "a", "new": "b"}),
        Some(&fifo),
    );
    assert!(
        matches!(&edit, Some(Preview::Error { message }) if message.contains("not a regular file")),
        "{edit:?}"
    );
}
