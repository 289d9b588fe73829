use super::*;

fn diff_of(preview: &Preview) -> (&str, usize, usize, bool) {
    let Preview::Diff {
        unified,
        added,
        removed,
        approximate,
        ..
    } = preview
    else {
        panic!("not a diff: {preview:?}")
    };
    (unified.as_str(), *added, *removed, *approximate)
}

fn small(exact: usize) -> Limits {
    Limits {
        exact,
        edge_lines: 2,
    }
}

fn numbered(n: usize) -> String {
    (0..n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn a_diff_has_headers_hunks_and_counts() {
    let preview = unified("src/a.rs", "a\nb\nc\n", "a\nB\nc\n");
    let (text, added, removed, approximate) = diff_of(&preview);
    assert!(
        text.starts_with("--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n"),
        "{text}"
    );
    assert!(text.contains("-b\n+B\n"));
    assert_eq!((added, removed, approximate), (1, 1, false));
}

#[test]
fn an_overwrite_of_a_binary_file_never_looks_like_a_new_file() {
    let old = b"\x00\x01\xff\xfe\nsecond\nthird".to_vec();
    let preview = file_change("blob.bin", Some(&old), "hello\n");
    let (text, added, removed, approximate) = diff_of(&preview);
    assert_eq!((added, removed), (1, 3), "{text}");
    assert!(approximate);
    assert!(!text.contains("@@ -0,0"), "{text}");
    assert!(
        text.contains(&format!(
            "binary file, {} bytes, 3 line(s), sha256 ",
            old.len()
        )),
        "{text}"
    );
    let digest = short_hex(&Sha256::digest(&old));
    assert!(text.contains(&digest), "{text}");
    assert!(text.contains("\n+hello\n"), "{text}");
}

#[test]
fn an_overwrite_of_a_latin1_file_shows_its_lines_decoded_lossily_and_marked() {
    let old = b"caf\xe9\nplain\nna\xefve\n".to_vec();
    let preview = file_change("notes.txt", Some(&old), "café\nplain\nnaïve\n");
    let (text, added, removed, approximate) = diff_of(&preview);
    assert_eq!((added, removed, approximate), (2, 2, false), "{text}");
    assert!(
        text.starts_with("--- a/notes.txt  (not valid UTF-8 from byte 3: 2 undecodable"),
        "{text}"
    );
    assert!(
        text.contains("-caf\u{FFFD}\n") && text.contains(" plain\n"),
        "{text}"
    );
}

#[test]
fn undecodable_bytes_cannot_be_hidden_behind_a_replacement_character_in_the_new_text() {
    // Lossily decoded, the old line would read exactly like the new one.
    let old = b"key = \xff\n".to_vec();
    let preview = file_change("k.conf", Some(&old), "key = \u{FFFD}\n");
    let (text, added, removed, _) = diff_of(&preview);
    assert_eq!((added, removed), (1, 1), "{text}");
    assert!(text.contains("binary file"), "{text}");
}

#[test]
fn a_write_over_a_file_that_cannot_be_read_says_so_instead_of_showing_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let preview = write_preview("sub", dir.path(), "x\n");
    let (text, added, _, approximate) = diff_of(&preview);
    assert!(approximate);
    assert_eq!(added, 1);
    assert!(text.contains("not a regular file (a directory)"), "{text}");
    assert!(text.contains("-[the current file"), "{text}");
}

#[test]
fn a_write_to_a_missing_file_is_marked_as_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let preview = write_preview("new.txt", &dir.path().join("new.txt"), "a\nb\n");
    let (text, added, removed, _) = diff_of(&preview);
    assert_eq!((added, removed), (2, 0));
    assert!(
        text.starts_with("--- a/new.txt  (does not exist: a new file)\n"),
        "{text}"
    );
}

#[test]
fn a_write_over_an_existing_file_reads_it_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    std::fs::write(&path, b"\x00\xffold\n").unwrap();
    let preview = write_preview("f.bin", &path, "new\n");
    let (text, added, removed, _) = diff_of(&preview);
    assert_eq!((added, removed), (1, 1), "{text}");
    assert!(text.contains("binary"), "{text}");
}

#[test]
fn a_large_file_with_a_small_change_is_diffed_exactly_over_the_changed_region() {
    let old = numbered(1000);
    let new = old.replace("line 500\n", "line five hundred\n");
    let whole = unified("f", &old, &new);
    let bounded = file_change_within("f", Some(old.as_bytes()), &new, small(2000));
    assert_eq!(bounded, whole, "the same diff, from a window of the file");
    let (text, added, removed, approximate) = diff_of(&bounded);
    assert_eq!((added, removed, approximate), (1, 1, false));
    assert!(text.contains("@@ -498,7 +498,7 @@"), "{text}");
}

#[test]
fn changes_at_the_very_start_and_end_of_a_large_file_are_diffed_exactly() {
    let old = numbered(1000);
    for new in [
        format!("first\n{old}"),
        format!("{old}last\n"),
        old.replacen("line 0\n", "", 1),
        old.trim_end_matches('\n').to_owned(),
    ] {
        let whole = unified("f", &old, &new);
        let bounded = file_change_within("f", Some(old.as_bytes()), &new, small(2000));
        assert_eq!(bounded, whole, "{new:.40}");
    }
}

#[test]
fn a_changed_region_too_large_to_diff_is_summarised_with_every_line_counted() {
    let old = format!("{}{}{}", numbered(10), "old\n".repeat(500), numbered(10));
    let new = format!("{}{}{}", numbered(10), "new\n".repeat(300), numbered(10));
    let preview = file_change_within("f", Some(old.as_bytes()), &new, small(1000));
    let (text, added, removed, approximate) = diff_of(&preview);
    assert_eq!((added, removed, approximate), (300, 500, true), "{text}");
    assert!(text.contains("@@ -11,500 +11,300 @@"), "{text}");
    assert!(
        text.contains("-[… 496 more line(s), 1984 bytes, not shown …]"),
        "{text}"
    );
    assert!(
        text.contains("+[… 296 more line(s), 1184 bytes, not shown …]"),
        "{text}"
    );
    assert!(
        text.starts_with(&format!(
            "--- a/f  ({} bytes, 520 line(s), sha256 ",
            old.len()
        )),
        "{text}"
    );
    assert!(text.lines().count() < 20, "{text}");
}

#[test]
fn a_huge_new_file_is_summarised_by_its_first_and_last_lines() {
    let new = numbered(10_000);
    let preview = file_change_within("f", None, &new, small(1000));
    let (text, added, removed, approximate) = diff_of(&preview);
    assert_eq!((added, removed, approximate), (10_000, 0, true));
    assert!(
        text.contains("+line 0\n+line 1\n+[… 9996 more line(s)"),
        "{text}"
    );
    assert!(text.ends_with("+line 9998\n+line 9999\n"), "{text}");
    assert!(text.contains("does not exist: a new file"), "{text}");
}

#[test]
fn a_single_enormous_line_is_shown_cut_with_its_length() {
    let new = "x".repeat(50_000);
    let preview = file_change_within("f", None, &new, small(1000));
    let (text, ..) = diff_of(&preview);
    assert!(
        text.contains("[… 49000 more bytes on this line]"),
        "{text:.200}"
    );
    assert!(text.len() < 2000);
}

#[test]
fn hunk_headers_are_shifted_by_the_lines_cut_off_in_front() {
    assert_eq!(
        shift_hunks("--- a/f\n+++ b/f\n@@ -1,3 +1 @@\n-a\n", 10),
        "--- a/f\n+++ b/f\n@@ -11,3 +11 @@\n-a\n"
    );
}

#[test]
fn random_edits_of_a_large_file_give_the_same_diff_as_the_whole_file() {
    let old_lines: Vec<String> = (0..400).map(|i| format!("line {i}")).collect();
    let old = old_lines.join("\n") + "\n";
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut summarised = 0;
    for round in 0..200 {
        let mut lines = old_lines.clone();
        for edit in 0..1 + next(3) {
            let at = next(lines.len());
            match next(3) {
                0 => lines.insert(at, format!("new {round}.{edit}")),
                1 => {
                    lines.remove(at);
                }
                _ => lines[at] = format!("changed {round}.{edit}"),
            }
        }
        let mut new = lines.join("\n");
        if next(4) != 0 {
            new.push('\n');
        }
        let whole = unified("f", &old, &new);
        // Just too small for the whole file: the changed region is diffed, or summarised.
        let limits = small(old.len() + new.len() - 1);
        let bounded = file_change_within("f", Some(old.as_bytes()), &new, limits);
        let (_, added, removed, approximate) = diff_of(&bounded);
        if approximate {
            let (_, all_added, all_removed, _) = diff_of(&whole);
            assert!(
                added >= all_added && removed >= all_removed,
                "round {round}"
            );
            summarised += 1;
        } else {
            assert_eq!(bounded, whole, "round {round}");
        }
    }
    assert!(summarised < 100, "most rounds fit the window: {summarised}");
}
