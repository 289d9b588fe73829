//! MCP tools that change a file, so their approval shows the change as a diff against the file
//! on disk, as `write_file` and `edit_file` do (the arguments stay shown below it).
//!
//! How a tool is recognised is something the user can read and override, never a guess from
//! names alone: [`KNOWN`] names the tools of known servers by the name the server gives itself
//! at the handshake, the tool's name, and the arguments its input schema must declare; a
//! server's `file_tools` table in the config replaces that for the server (`file_tools = {}`
//! turns it off):
//!
//! ```toml
//! [mcp_servers.fs.file_tools]
//! write_file = { path = "path", content = "content" }
//! edit_file = { path = "path", edits = "edits", old = "oldText", new = "newText" }
//! ```
//!
//! A recognised call shows a diff only for a path inside the workspace; anything else (a path
//! outside, an edit whose old text is not in the file as written, a file too big to read) says
//! why there is no diff, and the arguments are shown as for any MCP call.

use std::path::{Path, PathBuf};

use crate::protocol::Preview;
use serde::Deserialize;
use serde_json::Value;

/// Which arguments of a tool carry the file's path and its change.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileTool {
    /// The argument that names the file.
    pub path: String,
    /// The argument that holds the whole new content (a whole-file write).
    pub content: Option<String>,
    /// The argument that holds a list of edits, each an object with `old` and `new` texts,
    /// applied in order, each to its first exact match.
    pub edits: Option<String>,
    #[serde(default = "old_key")]
    pub old: String,
    #[serde(default = "new_key")]
    pub new: String,
}

fn old_key() -> String {
    "oldText".into()
}

fn new_key() -> String {
    "newText".into()
}

/// The known servers' file tools: (the name the server gives itself, the tool, its shape).
pub const KNOWN: &[(&str, &str, Shape)] = &[
    (
        "secure-filesystem-server",
        "write_file",
        Shape::Write {
            path: "path",
            content: "content",
        },
    ),
    (
        "secure-filesystem-server",
        "edit_file",
        Shape::Edits {
            path: "path",
            edits: "edits",
            old: "oldText",
            new: "newText",
        },
    ),
];

/// A row of [`KNOWN`].
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    Write {
        path: &'static str,
        content: &'static str,
    },
    Edits {
        path: &'static str,
        edits: &'static str,
        old: &'static str,
        new: &'static str,
    },
}

impl Shape {
    fn file_tool(self) -> FileTool {
        match self {
            Shape::Write { path, content } => FileTool {
                path: path.into(),
                content: Some(content.into()),
                edits: None,
                old: old_key(),
                new: new_key(),
            },
            Shape::Edits {
                path,
                edits,
                old,
                new,
            } => FileTool {
                path: path.into(),
                content: None,
                edits: Some(edits.into()),
                old: old.into(),
                new: new.into(),
            },
        }
    }
}

impl FileTool {
    /// Checks a config entry: a path, and exactly one of `content` and `edits`.
    pub fn check(&self, server: &str, tool: &str) -> Result<(), String> {
        if self.content.is_some() == self.edits.is_some() {
            return Err(format!(
                "[mcp_servers.{server}.file_tools] `{tool}`: give `content` (a whole-file write) or `edits` (a list of edits), not both or neither"
            ));
        }
        Ok(())
    }

    /// The arguments it names, all of which the tool's input schema must declare.
    fn arguments(&self) -> Vec<&str> {
        [Some(&self.path), self.content.as_ref(), self.edits.as_ref()]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }
}

/// How `tool` (with `schema`) of a server that calls itself `server_name` changes a file:
/// from the server's `configured` table when it has one, else from [`KNOWN`], and only when the
/// schema declares every argument named.
pub fn recognise(
    configured: Option<&std::collections::BTreeMap<String, FileTool>>,
    server_name: Option<&str>,
    tool: &str,
    schema: &Value,
) -> Option<FileTool> {
    let found = match configured {
        Some(table) => table.get(tool).cloned(),
        None => KNOWN
            .iter()
            .find(|(server, name, _)| Some(*server) == server_name && *name == tool)
            .map(|(_, _, shape)| shape.file_tool()),
    }?;
    let declared = |name: &str| schema.get("properties").and_then(|p| p.get(name)).is_some();
    found.arguments().into_iter().all(declared).then_some(found)
}

/// What a whole-file write of `tool` with `args` replaces: the argument that holds the new
/// content, the path as shown, and the file's content now (empty for a file not there yet).
pub fn replaced(tool: &FileTool, args: &Value, workspace: &Path) -> Result<Replaced, String> {
    let Some(key) = &tool.content else {
        return Err(
            "this server's edit calls are answered whole (only a whole-file write can \
                    keep some hunks)"
                .into(),
        );
    };
    let raw = args
        .get(&tool.path)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no `{}` argument naming the file", tool.path))?;
    let (path, shown) = inside(workspace, raw).ok_or_else(|| {
        format!(
            "{} is outside the workspace",
            crate::visible::visible_line(raw)
        )
    })?;
    let current = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        _ => read_small(&path)?,
    };
    Ok(Replaced {
        content_key: key.clone(),
        shown,
        current,
    })
}

/// See [`replaced`].
pub struct Replaced {
    pub content_key: String,
    pub shown: String,
    pub current: String,
}

/// The change a call of `tool` with `args` makes, as the modal shows it: a diff against the
/// file in `workspace`, or why there is none.
pub fn change(tool: &FileTool, args: &Value, workspace: &Path) -> Preview {
    let error = |message: String| Preview::Error { message };
    let Some(raw) = args.get(&tool.path).and_then(Value::as_str) else {
        return error(format!(
            "no `{}` argument naming the file: no diff",
            tool.path
        ));
    };
    let Some((path, shown)) = inside(workspace, raw) else {
        return error(format!(
            "{} is outside the workspace: no diff, the arguments below are what runs",
            crate::visible::visible_line(raw)
        ));
    };
    let raw = shown.as_str();
    if let Some(key) = &tool.content {
        return match args.get(key).and_then(Value::as_str) {
            Some(content) => crate::facts::diff::write_preview(raw, &path, content),
            None => error(format!("no text `{key}` argument: no diff")),
        };
    }
    let key = tool.edits.as_deref().unwrap_or_default();
    let Some(edits) = args.get(key).and_then(Value::as_array) else {
        return error(format!("no list `{key}` argument: no diff"));
    };
    let current = match read_small(&path) {
        Ok(current) => current,
        Err(message) => return error(message),
    };
    let mut updated = current.clone();
    for (i, edit) in edits.iter().enumerate() {
        let text = |k: &str| edit.get(k).and_then(Value::as_str);
        let (Some(old), Some(new)) = (text(&tool.old), text(&tool.new)) else {
            return error(format!(
                "edit {} has no text `{}` and `{}`: no diff",
                i + 1,
                tool.old,
                tool.new
            ));
        };
        match updated.find(old) {
            Some(at) if !old.is_empty() => updated.replace_range(at..at + old.len(), new),
            _ => {
                return error(format!(
                    "edit {}: its `{}` is not in {} as written, so the change cannot be shown exactly (the server may match it more loosely): the arguments below are what runs",
                    i + 1,
                    tool.old,
                    crate::visible::visible_line(raw)
                ));
            }
        }
    }
    crate::facts::diff::file_change(raw, Some(current.as_bytes()), &updated)
}

/// `raw` as a path inside `workspace` (relative ones from it), with its directory resolved
/// physically, so a link cannot lead the diff elsewhere, and as the diff names it (from the
/// workspace); `None` when it is outside.
fn inside(workspace: &Path, raw: &str) -> Option<(PathBuf, String)> {
    let path = Path::new(raw);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    };
    let name = absolute.file_name()?;
    let parent = std::fs::canonicalize(absolute.parent()?).ok()?;
    let resolved = parent.join(name);
    let workspace = std::fs::canonicalize(workspace).ok()?;
    let leaf_is_link =
        std::fs::symlink_metadata(&resolved).is_ok_and(|m| m.file_type().is_symlink());
    if leaf_is_link {
        return None;
    }
    let shown = resolved
        .strip_prefix(&workspace)
        .ok()?
        .display()
        .to_string();
    Some((resolved, shown))
}

fn read_small(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}: no diff", path.display()))?;
    if meta.len() > crate::facts::diff::MAX_READ {
        return Err(format!(
            "{} is too big to show a diff of ({} bytes): the arguments below are what runs",
            path.display(),
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}: no diff", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text: no diff", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: &[&str]) -> Value {
        let props: serde_json::Map<String, Value> =
            props.iter().map(|p| (p.to_string(), json!({}))).collect();
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn a_known_servers_write_is_recognised_by_its_own_name_the_tool_and_the_schema() {
        let fs = Some("secure-filesystem-server");
        let both = schema(&["path", "content"]);
        assert!(recognise(None, fs, "write_file", &both).is_some());
        // Another server with a tool of that name is not taken for it.
        assert!(recognise(None, Some("other"), "write_file", &both).is_none());
        // Nor the known server's tool when its schema lacks an argument the table names.
        assert!(recognise(None, fs, "write_file", &schema(&["path"])).is_none());
        assert!(recognise(None, fs, "read_text_file", &both).is_none());
    }

    #[test]
    fn a_servers_own_table_replaces_the_known_one() {
        let fs = Some("secure-filesystem-server");
        let both = schema(&["path", "content"]);
        let off = std::collections::BTreeMap::new();
        assert!(recognise(Some(&off), fs, "write_file", &both).is_none());
        let mine: std::collections::BTreeMap<String, FileTool> =
            toml::from_str("put = { path = \"file\", content = \"body\" }").unwrap();
        let got = recognise(
            Some(&mine),
            Some("anything"),
            "put",
            &schema(&["file", "body"]),
        );
        assert_eq!(got.unwrap().content.as_deref(), Some("body"));
    }

    #[test]
    fn a_write_inside_the_workspace_is_a_diff_and_one_outside_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("a.txt"), "one\ntwo\n").unwrap();
        let tool = KNOWN[0].2.file_tool();
        let args = json!({"path": ws.join("a.txt"), "content": "one\nTWO\n"});
        match change(&tool, &args, &ws) {
            Preview::Diff {
                unified,
                added,
                removed,
                ..
            } => {
                assert_eq!((added, removed), (1, 1));
                assert!(
                    unified.contains("-two") && unified.contains("+TWO"),
                    "{unified}"
                );
            }
            other => panic!("{other:?}"),
        }
        let outside = json!({"path": dir.path().join("b.txt"), "content": "x"});
        match change(&tool, &outside, &ws) {
            Preview::Error { message } => assert!(message.contains("outside the workspace")),
            other => panic!("{other:?}"),
        }
        // A link in the workspace that leads out is outside too.
        std::os::unix::fs::symlink(dir.path(), ws.join("out")).unwrap();
        let through = json!({"path": ws.join("out/b.txt"), "content": "x"});
        assert!(matches!(
            change(&tool, &through, &ws),
            Preview::Error { .. }
        ));
    }

    #[test]
    fn edits_are_applied_in_order_and_one_that_does_not_match_exactly_shows_no_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
        let tool = KNOWN[1].2.file_tool();
        let args = json!({"path": "a.txt", "edits": [
            {"oldText": "beta", "newText": "BETA"},
            {"oldText": "BETA\ngamma", "newText": "BETA\nGAMMA"},
        ]});
        match change(&tool, &args, dir.path()) {
            Preview::Diff { unified, .. } => {
                assert!(
                    unified.contains("+BETA") && unified.contains("+GAMMA"),
                    "{unified}"
                );
            }
            other => panic!("{other:?}"),
        }
        let loose = json!({"path": "a.txt", "edits": [{"oldText": "  beta", "newText": "b"}]});
        match change(&tool, &loose, dir.path()) {
            Preview::Error { message } => assert!(message.contains("edit 1"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
