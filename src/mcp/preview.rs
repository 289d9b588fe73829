//! An MCP call as the approval modal shows it: the server, the tool, its annotations and the
//! frozen arguments pretty-printed. A string with line breaks is folded into its lines (each
//! marked `│`), so a long text reads as text; every character stays (control characters are
//! escaped by JSON or made visible by the renderer), nothing is cut.

use std::path::Path;

use crate::mcp::McpTool;
use crate::protocol::Preview;
use serde_json::Value;

/// The preview of a call of `tool` with `args` (the frozen arguments); for a tool known to
/// change a file, with that change as a diff against the file in `workspace`.
pub fn preview(tool: &McpTool, args: &Value, workspace: &Path) -> Preview {
    let mut lines = Vec::new();
    pretty(args, 0, "", &mut lines);
    let change = tool
        .file_tool
        .as_ref()
        .map(|file_tool| Box::new(crate::mcp::file_tools::change(file_tool, args, workspace)));
    Preview::Mcp {
        server: tool.server.clone(),
        tool: tool.definition.name.clone(),
        annotations: tool.definition.annotation_lines(),
        arguments: lines,
        definition_digest: tool.digest.clone(),
        change,
        confinement: tool.confinement.clone(),
        whole_file: tool.file_tool.as_ref().is_some_and(|f| f.content.is_some()),
    }
}

fn pretty(value: &Value, depth: usize, label: &str, out: &mut Vec<String>) {
    let pad = "  ".repeat(depth);
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push(format!("{pad}{label}{{"));
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                let label = format!("{}: ", Value::String(key.clone()));
                pretty(&map[key], depth + 1, &label, out);
            }
            out.push(format!("{pad}}}"));
        }
        Value::Array(items) if !items.is_empty() => {
            out.push(format!("{pad}{label}["));
            for item in items {
                pretty(item, depth + 1, "", out);
            }
            out.push(format!("{pad}]"));
        }
        Value::String(s) if s.contains('\n') => {
            let count = s.split('\n').count();
            out.push(format!("{pad}{label}({count} lines of text)"));
            for line in s.split('\n') {
                // JSON-escaped without its quotes: tabs and control characters stay visible.
                let escaped = Value::String(line.to_string()).to_string();
                out.push(format!("{pad}  │ {}", &escaped[1..escaped.len() - 1]));
            }
        }
        other => out.push(format!("{pad}{label}{other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(v: Value) -> Vec<String> {
        let mut out = Vec::new();
        pretty(&v, 0, "", &mut out);
        out
    }

    #[test]
    fn arguments_are_pretty_printed_in_key_order() {
        assert_eq!(
            lines(json!({"b": [1, true], "a": "x"})),
            vec![
                "{",
                "  \"a\": \"x\"",
                "  \"b\": [",
                "    1",
                "    true",
                "  ]",
                "}"
            ]
        );
    }

    #[test]
    fn a_multi_line_string_is_folded_into_its_lines_with_control_characters_escaped() {
        assert_eq!(
            lines(json!({"content": "one\ntwo\u{1b}[2J"})),
            vec![
                "{",
                "  \"content\": (2 lines of text)",
                "    │ one",
                "    │ two\\u001b[2J",
                "}"
            ]
        );
    }
}
