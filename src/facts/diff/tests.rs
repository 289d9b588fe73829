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

/// A text of `n` distinct lines, each ended by `ending`, and a copy with every `every`th line
/// changed where it stands.
fn rewritten(n: usize, every: usize, ending: &str) -> (String, String) {
    let old: String = (0..n)
        .map(|i| format!("line {i}: the quick brown fox{ending}"))
        .collect();
    let new: String = (0..n)
        .map(|i| {
            if i % every == 3 {
                format!("line {i}: THE QUICK brown fox{ending}")
            } else {
                format!("line {i}: the quick brown fox{ending}")
            }
        })
        .collect();
    (old, new)
}

#[test]
fn a_large_rewrite_in_place_is_diffed_anchored_to_the_same_text_as_whole() {
    let far = std::time::Instant::now() + Duration::from_secs(3600);
    for (n, every, ending) in [
        (5000, 50, "\n"),
        (3000, 12, "\r\n"),
        (4000, 1000, "\n"),
        (2500, 10, "\n"),
    ] {
        let (old, new) = rewritten(n, every, ending);
        for (old, new) in [
            (old.clone(), new.clone()),
            // The last line without its ending, on one side or both.
            (old.clone(), new.trim_end().to_string()),
            (old.trim_end().to_string(), new.trim_end().to_string()),
            // A line put in at the end, and the last line taken out.
            (old.clone(), format!("{new}one more\n")),
            (
                old.clone(),
                new[..new.trim_end().rfind(ending).unwrap_or(0)].to_string(),
            ),
        ] {
            let anchored = anchored_diff("f.txt", &old, &new, far);
            let Some(anchored) = anchored else {
                panic!("{n} lines, 1 in {every} changed, {ending:?}: not anchored")
            };
            assert_eq!(
                anchored,
                whole_diff("f.txt", &old, &new, far),
                "{n} lines, 1 in {every} changed, {ending:?}"
            );
        }
    }
}

#[test]
fn an_anchored_diff_is_a_diff_of_the_two_texts_whatever_the_edits() {
    let far = std::time::Instant::now() + Duration::from_secs(3600);
    let mut seed: u64 = 0x0123_4567_89ab_cdef;
    let mut next = move |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below.max(1) as u64) as usize
    };
    let mut anchored_some = 0;
    for _ in 0..120 {
        // Few distinct lines, so lines repeat and equal lines abound away from their place.
        let mut old: Vec<String> = (0..2500).map(|_| format!("{}\n", next(6))).collect();
        if next(2) == 0 {
            old = (0..2500).map(|i| format!("l{i}\n")).collect();
        }
        let mut new = old.clone();
        for _ in 0..next(30) {
            let at = next(new.len());
            match next(4) {
                0 => new[at] = "changed\n".into(),
                1 => new.insert(at, format!("{}\n", next(6))),
                2 => {
                    new.remove(at);
                }
                _ => {
                    let line = new.remove(at);
                    new.insert(next(new.len()), line);
                }
            }
        }
        let (old, new) = (old.concat(), new.concat());
        let (a, b) = (anchored::split_lines(&old), anchored::split_lines(&new));
        let Some(ops) = anchored::ops(&a, &b, far) else {
            continue;
        };
        anchored_some += 1;
        // The operations walk both texts from start to end, and equal lines are equal.
        let (mut at_old, mut at_new) = (0, 0);
        for op in &ops {
            assert_eq!(
                (op.old_range().start, op.new_range().start),
                (at_old, at_new)
            );
            if op.tag() == similar::DiffTag::Equal {
                assert_eq!(&a[op.old_range()], &b[op.new_range()]);
            }
            (at_old, at_new) = (op.old_range().end, op.new_range().end);
        }
        assert_eq!((at_old, at_new), (a.len(), b.len()));
        let (added, removed) = anchored::counts(&ops);
        let (_, whole_added, whole_removed) = whole_diff("f", &old, &new, far);
        assert_eq!(
            added as isize - removed as isize,
            whole_added as isize - whole_removed as isize
        );
    }
    assert!(anchored_some > 5, "{anchored_some}");
}

#[test]
fn lines_shifted_by_a_block_put_in_are_diffed_whole() {
    let far = std::time::Instant::now() + Duration::from_secs(3600);
    let old = numbered(3000);
    let new = format!("{}{old}", numbered(20).replace("line", "new"));
    assert_eq!(anchored_diff("f", &old, &new, far), None);
    let (text, added, removed, _) = line_diff("f", &old, &new, 0);
    assert_eq!((added, removed), (20, 0), "{text}");
}

#[test]
fn lines_are_split_as_the_differ_splits_them() {
    for text in ["", "a", "a\n", "a\r\nb\rc\n\n", "\r\r\n\n", "x\ny"] {
        let diff = TextDiff::from_lines(text, "");
        let theirs: Vec<&str> = diff.iter_old_slices().collect();
        assert_eq!(anchored::split_lines(text), theirs, "{text:?}");
    }
}
