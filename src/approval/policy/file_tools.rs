//! The file tools (`read_file`, `list_dir`, `search`, `write_file`, `edit_file`): one part for
//! the one path each names, judged like any path, plus the lines a write deletes, since a large
//! deletion asks even where the path itself would not.

use serde_json::{Map, Value};

use super::{Facts, FileFacts, Findings, LARGE_DELETION_LINES, judge, line_changes, replaced};
use crate::facts::paths::{self, PathContext, ResolvedPath};
use crate::protocol::GrantScope;
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::Ruling;
use crate::protocol::Subject;

/// The findings for a file tool's call, or the name of the string argument it lacks.
pub(super) fn findings(
    ctx: &PathContext,
    tool: &str,
    object: &Map<String, Value>,
) -> Result<Findings, &'static str> {
    let string = |key: &str| object.get(key).and_then(Value::as_str);
    let raw = match (string("path"), tool) {
        (Some(p), _) => p,
        (None, "search" | "list_dir") => ".",
        (None, _) => return Err("path"),
    };
    let resolved = paths::resolve(ctx, &ctx.workspace, raw);
    let exists = resolved.exists;
    let (access, deleted, added, unreadable) = changed_lines(tool, &string, &resolved)?;
    let finding = judge::judge(ctx, access, &resolved);
    let shown = judge::show(ctx, &resolved);
    let verb = match tool {
        "read_file" => "read",
        "list_dir" => "list",
        "search" => "search",
        "write_file" => "write",
        _ => "edit",
    };
    let writes = access == judge::Access::Write;
    let mut part = Part {
        kind: PartKind::Path,
        label: format!("{verb} {shown}"),
        span: None,
        ruling: finding.ruling,
        risk: finding.risk,
        subject: Some(Subject::Path(resolved.path.clone())),
        scope: Some(GrantScope::Path {
            path: resolved.path.clone(),
        }),
    };
    let mut reasons = vec![Reason::policy(
        finding.ruling,
        finding.code,
        Some(0),
        finding.message,
    )];
    if writes && deleted > LARGE_DELETION_LINES && finding.ruling != Ruling::Deny {
        part.ruling = part.ruling.max(Ruling::Ask);
        reasons.push(Reason::policy(
            Ruling::Ask,
            ReasonCode::LargeDeletion,
            Some(0),
            format!("deletes {deleted} lines of {shown}"),
        ));
    }
    if let Some(e) = unreadable
        && finding.ruling != Ruling::Deny
    {
        part.ruling = part.ruling.max(Ruling::Ask);
        reasons.push(Reason::policy(
            Ruling::Ask,
            ReasonCode::LargeDeletion,
            Some(0),
            format!("replaces {shown}, which airlock cannot read to count what it deletes ({e})"),
        ));
    }
    let facts = Facts::File(FileFacts {
        path: resolved,
        exists,
        lines_deleted: deleted,
        lines_added: added,
    });
    Ok((facts, vec![part], reasons))
}

/// How the call touches the path, the lines it deletes and adds, and why the deleted lines could
/// not be counted (the file a write replaces is unreadable), or the string argument it lacks.
fn changed_lines<'a>(
    tool: &str,
    string: &impl Fn(&str) -> Option<&'a str>,
    resolved: &ResolvedPath,
) -> Result<(judge::Access, usize, usize, Option<String>), &'static str> {
    // Set when the file a write replaces cannot be read to count what it deletes.
    let mut unreadable: Option<String> = None;
    let (access, deleted, added) = match tool {
        "write_file" => {
            let Some(content) = string("content") else {
                return Err("content");
            };
            let (d, a) = if resolved.exists {
                match replaced::replaced_lines(&resolved.path, content) {
                    Ok(counts) => counts,
                    Err(e) => {
                        unreadable = Some(e);
                        (0, count_lines(content))
                    }
                }
            } else {
                // A new file: nothing deleted, every line added. Counted, not compared: a
                // 100 MB write would otherwise build a table of its two million lines.
                (0, count_lines(content))
            };
            (judge::Access::Write, d, a)
        }
        "edit_file" => {
            let (Some(old), Some(new)) = (string("old"), string("new")) else {
                return Err(if string("old").is_none() {
                    "old"
                } else {
                    "new"
                });
            };
            let (d, a) = line_changes(old, new);
            (judge::Access::Write, d, a)
        }
        _ => (judge::Access::Read, 0, 0),
    };
    Ok((access, deleted, added, unreadable))
}

/// Lines as `str::lines` counts them (a final newline ends the last line, it does not start
/// another), found with `memchr`, allocating nothing.
fn count_lines(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_as_str_lines_counts_them() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n",
            "\n\n",
            "a\n\nb\n",
            "é\n✓",
        ] {
            assert_eq!(count_lines(text), text.lines().count(), "{text:?}");
            assert_eq!((0, count_lines(text)), line_changes("", text), "{text:?}");
        }
    }
}
