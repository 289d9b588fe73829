//! A file change as a person changed it before approving: only some hunks of the diff kept, or
//! the new content edited. What the file tools share for it: the content the kept hunks make
//! (from the diff exactly as shown, checked against the file as it is now), an `edit_file` call
//! that makes a given content, and what the model is told.

use crate::facts::diff::hunks;
use crate::facts::diff::split_lines;
use crate::protocol::Preview;

use super::apply_edit;

/// What keeping some hunks makes: the file's new content, one line saying what changed, and
/// what the model is told (the dropped hunks' text with it, so it does not propose them again
/// blindly).
pub struct Kept {
    pub content: String,
    pub change: String,
    pub told: String,
}

/// The content of the file at `path` (now `current`) with only the hunks numbered in `keep` of
/// the diff `shown` applied.
pub fn keep_hunks(
    path: &str,
    current: &str,
    shown: Option<&Preview>,
    keep: &[usize],
) -> Result<Kept, String> {
    let Some(Preview::Diff {
        unified,
        approximate,
        ..
    }) = shown
    else {
        return Err("no diff was shown for this call, so there are no hunks to pick".into());
    };
    if *approximate {
        return Err(
            "the diff shown is approximate or was cut to stay readable, so its hunks \
                    cannot be applied one by one; approve or deny the change whole"
                .into(),
        );
    }
    let hunks = hunks::parse(unified).map_err(|e| e.to_string())?;
    let content = hunks::apply(&hunks, current, keep).map_err(|e| e.to_string())?;
    let total = hunks.len();
    let mut kept: Vec<usize> = keep.to_vec();
    kept.sort_unstable();
    kept.dedup();
    let dropped: Vec<&hunks::Hunk<'_>> =
        hunks.iter().filter(|h| !kept.contains(&h.number)).collect();
    let dropped_numbers: Vec<usize> = dropped.iter().map(|h| h.number).collect();
    let change = format!(
        "kept {} of {total}, dropped {}",
        hunk_list(&kept),
        hunk_list(&dropped_numbers)
    );
    let mut told = format!(
        "The user reviewed your change to {path} hunk by hunk: {} of {total} applied, {} \
         dropped (not written). The file now holds only the kept hunks. The dropped hunks, as \
         you proposed them:\n",
        hunk_list(&kept),
        hunk_list(&dropped_numbers)
    );
    for hunk in dropped {
        told.push_str(hunk.text);
        if !hunk.text.ends_with('\n') {
            told.push('\n');
        }
    }
    Ok(Kept {
        content,
        change,
        told,
    })
}

/// What the model is told when a person edited its file change before approving it.
pub fn edited_told(path: &str) -> String {
    format!(
        "The user edited your change to {path} before approving it: the file was written with \
         their version, not yours. Read it again before changing it further.\n"
    )
}

/// "hunk 2", "hunks 1 and 3", "hunks 1, 3 and 4", "no hunk".
pub fn hunk_list(numbers: &[usize]) -> String {
    let shown: Vec<String> = numbers.iter().map(usize::to_string).collect();
    match shown.as_slice() {
        [] => "no hunk".into(),
        [one] => format!("hunk {one}"),
        [rest @ .., last] => format!("hunks {} and {last}", rest.join(", ")),
    }
}

/// The `old` and `new` of an `edit_file` call that turns `current` into `wanted`: the lines
/// that differ, with as many lines around them as make `old` unique in `current` (at most the
/// whole file). Checked: the edit applied to `current` gives `wanted`.
pub fn edit_between(current: &str, wanted: &str) -> Result<(String, String), String> {
    if current == wanted {
        return Err("the change as it stands changes nothing in the file".into());
    }
    let (old, new) = (split_lines(current), split_lines(wanted));
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (mut from, mut old_to, mut new_to) = (head, old.len() - tail, new.len() - tail);
    loop {
        let replaced: String = old[from..old_to].concat();
        let whole = from == 0 && old_to == old.len();
        if !replaced.is_empty() && (whole || current.matches(replaced.as_str()).count() == 1) {
            let with: String = new[from..new_to].concat();
            return match apply_edit(current, &replaced, &with, false) {
                Ok(made) if made == wanted => Ok((replaced, with)),
                _ => Err(
                    "the change cannot be written as one edit of the file; approve or deny \
                          it whole"
                        .into(),
                ),
            };
        }
        if whole {
            return Err("the file is empty, so the change cannot be written as an edit".into());
        }
        from = from.saturating_sub(1);
        if old_to < old.len() {
            old_to += 1;
            new_to += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_are_listed_as_a_person_reads_them() {
        assert_eq!(hunk_list(&[]), "no hunk");
        assert_eq!(hunk_list(&[2]), "hunk 2");
        assert_eq!(hunk_list(&[1, 3]), "hunks 1 and 3");
        assert_eq!(hunk_list(&[1, 3, 4]), "hunks 1, 3 and 4");
    }

    #[test]
    fn an_edit_between_two_contents_replaces_only_lines_that_differ_made_unique() {
        let current = "a\nx\nb\nx\nc\n";
        let (old, new) = edit_between(current, "a\nx\nb\ny\nc\n").unwrap();
        // `x\n` alone is in the file twice: the edit takes a line around it.
        assert_eq!(
            apply_edit(current, &old, &new, false).unwrap(),
            "a\nx\nb\ny\nc\n"
        );
        assert!(current.matches(old.as_str()).count() == 1);
        let (old, new) = edit_between("one\ntwo\n", "one\nthree\ntwo\n").unwrap();
        assert_eq!(
            apply_edit("one\ntwo\n", &old, &new, false).unwrap(),
            "one\nthree\ntwo\n"
        );
        assert!(edit_between("same\n", "same\n").is_err());
    }
}
