//! A tool that names a path (`read_file`, `list_dir`, `search`, `write_file`, `edit_file`, and any
//! tool that declares a [`PathArg`]): one part for the path, judged like any path, plus the lines
//! a write deletes, since a large deletion asks even where the path itself would not. What the
//! tool does to the path comes from its declaration, never from its name.

use serde_json::{Map, Value};

use super::{Facts, FileFacts, Findings, LARGE_DELETION_LINES, judge, line_changes, replaced};
use crate::facts::catalog::{PathAccess, PathArg};
use crate::facts::paths::{self, PathContext, ResolvedPath};
use crate::protocol::GrantScope;
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::Ruling;
use crate::protocol::Subject;

/// The findings for a call of a tool that names a path as `arg` declares it, or the name of the
/// string argument it lacks.
pub(super) fn findings(
    ctx: &PathContext,
    arg: &PathArg,
    object: &Map<String, Value>,
) -> Result<Findings, &'static str> {
    let string = |key: &str| object.get(key).and_then(Value::as_str);
    let raw = match (string(arg.key), arg.default) {
        (Some(p), _) => p,
        (None, Some(default)) => default,
        (None, None) => return Err(arg.key),
    };
    let resolved = paths::resolve(ctx, &ctx.workspace, raw);
    let exists = resolved.exists;
    let (access, deleted, added, unreadable) = changed_lines(arg.access, &string, &resolved)?;
    let finding = judge::judge(ctx, access, &resolved);
    let shown = judge::show(ctx, &resolved);
    let writes = arg.access.writes();
    let mut part = Part {
        kind: PartKind::Path,
        label: format!("{} {shown}", arg.access.verb()),
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
    access: PathAccess,
    string: &impl Fn(&str) -> Option<&'a str>,
    resolved: &ResolvedPath,
) -> Result<(judge::Access, usize, usize, Option<String>), &'static str> {
    // Set when the file a write replaces cannot be read to count what it deletes.
    let mut unreadable: Option<String> = None;
    let (access, deleted, added) = match access {
        PathAccess::Replace { content: key } => {
            let Some(content) = string(key) else {
                return Err(key);
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
        PathAccess::Edit { old, new } => {
            let (Some(old_text), Some(new_text)) = (string(old), string(new)) else {
                return Err(if string(old).is_none() { old } else { new });
            };
            let (d, a) = line_changes(old_text, new_text);
            (judge::Access::Write, d, a)
        }
        PathAccess::Read { .. } => (judge::Access::Read, 0, 0),
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
    use crate::approval::policy::{Mode, Policy};
    use crate::approval::rules::Rules;
    use crate::facts::catalog::{PathTarget, ToolCatalog, ToolDescriptor};
    use crate::protocol::{Risk, Verdict};
    use serde_json::json;

    /// A policy over a workspace in `dir` that knows only the tools declared by `args`, under
    /// names no built-in tool has.
    fn policy_knowing(dir: &std::path::Path, tools: &[(&str, PathAccess)]) -> Policy {
        let (ws, home, state) = (dir.join("ws"), dir.join("home"), dir.join("state"));
        for d in [&ws, &home, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut catalog = ToolCatalog::empty();
        for (name, access) in tools {
            catalog.register(ToolDescriptor {
                name: (*name).into(),
                description: String::new(),
                schema: json!({}),
                risk: Some(Risk::Safe),
                paths: vec![PathArg {
                    key: "target",
                    names: PathTarget::OneFile,
                    access: *access,
                    default: None,
                }],
                command: None,
            });
        }
        let paths = PathContext::new(&ws, &home, &state).unwrap();
        Policy::new(Mode::Default, Rules::empty(), paths, catalog)
    }

    fn codes(verdict: &Verdict) -> Vec<ReasonCode> {
        verdict.reasons.iter().map(|r| r.code).collect()
    }

    #[test]
    fn a_new_tool_that_declares_it_replaces_a_file_is_judged_as_a_write_whatever_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let policy = policy_knowing(
            dir.path(),
            &[("put", PathAccess::Replace { content: "body" })],
        );
        let verdict = policy
            .assess("put", &json!({"target": "notes.txt", "body": "hello\n"}))
            .verdict;
        assert_eq!(verdict.ruling, Ruling::Ask, "{verdict:#?}");
        assert!(
            codes(&verdict).contains(&ReasonCode::WritesWorkspace),
            "{verdict:#?}"
        );
        assert_eq!(verdict.parts[0].label, "write notes.txt");
        // Its content is the argument it declared: without it, it is refused, not judged a read.
        let missing = policy
            .assess("put", &json!({"target": "notes.txt"}))
            .verdict;
        assert_eq!(missing.ruling, Ruling::Deny);
        assert!(
            missing.reasons[0].message.contains("`body`"),
            "{missing:#?}"
        );
    }

    #[test]
    fn a_new_tool_that_declares_an_edit_counts_the_lines_it_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let policy = policy_knowing(
            dir.path(),
            &[(
                "patch",
                PathAccess::Edit {
                    old: "from",
                    new: "to",
                },
            )],
        );
        let old = "x\n".repeat(LARGE_DELETION_LINES + 1);
        let verdict = policy
            .assess("patch", &json!({"target": "a.txt", "from": old, "to": ""}))
            .verdict;
        assert!(
            codes(&verdict).contains(&ReasonCode::LargeDeletion),
            "{verdict:#?}"
        );
        assert_eq!(verdict.parts[0].label, "edit a.txt");
    }

    #[test]
    fn a_tool_that_declares_a_read_is_judged_as_a_read_and_a_credential_is_still_denied() {
        let dir = tempfile::tempdir().unwrap();
        let policy = policy_knowing(
            dir.path(),
            &[("peek", PathAccess::Read { verb: "peek at" })],
        );
        let inside = policy.assess("peek", &json!({"target": "a.txt"})).verdict;
        assert_eq!(inside.ruling, Ruling::Allow, "{inside:#?}");
        assert_eq!(inside.parts[0].label, "peek at a.txt");
        let key = policy
            .assess("peek", &json!({"target": "~/.ssh/id_rsa"}))
            .verdict;
        assert_eq!(key.ruling, Ruling::Deny, "{key:#?}");
    }

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
