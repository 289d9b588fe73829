//! An MCP call as the approval modal shows it: the server, the tool, its annotations and the
//! frozen arguments pretty-printed. A string with line breaks is folded into its lines (each
//! marked `│`), so a long text reads as text; every character stays (control characters are
//! escaped by JSON or made visible by the renderer), nothing is cut.

use serde_json::Value;

use crate::approval::approver::Preview;
use crate::mcp::McpTool;

/// The preview of a call of `tool` with `args` (the frozen arguments).
pub fn preview(tool: &McpTool, args: &Value) -> Preview {
    let mut lines = Vec::new();
    pretty(args, 0, "", &mut lines);
    Preview::Mcp {
        server: tool.server.clone(),
        tool: tool.definition.name.clone(),
        annotations: tool.definition.annotation_lines(),
        arguments: lines,
        definition_digest: tool.digest.clone(),
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

/// The cockpit's approval modal for an MCP call, drawn from a request the real policy judged.
#[cfg(test)]
mod modal_tests {
    use std::time::{Duration, Instant};

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;

    use crate::approval::approver::ApprovalRequest;
    use crate::approval::frozen::FrozenCall;
    use crate::approval::testworld::{World, world_with};
    use crate::mcp::definition::ToolDefinition;
    use crate::mcp::{McpCatalog, McpTool};
    use crate::protocol::AgentEvent;
    use crate::ui::app::{App, Status};

    fn request() -> ApprovalRequest {
        request_for(
            json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true}),
            json!({"path": "/work/notes.md", "content": "# Notes\nsecond line\u{1b}[2J"}),
        )
    }

    fn request_for(annotations: serde_json::Value, args: serde_json::Value) -> ApprovalRequest {
        let definition = ToolDefinition::from_listing(&json!({
            "name": "write_file", "description": "Write a file.",
            "inputSchema": {"type": "object"},
            "annotations": annotations,
        }))
        .unwrap();
        let tool = McpTool {
            server: "fs".into(),
            exposed: "fs__write_file".into(),
            digest: definition.digest(),
            definition,
            changed: None,
        };
        let catalog = McpCatalog::new();
        catalog.set_tools("fs", vec![tool.clone()], Vec::new());
        let World { _dir, policy } =
            world_with(crate::approval::policy::Mode::Default, Default::default());
        let policy = policy.with_mcp(catalog);
        let verdict = policy.assess("fs__write_file", &args).verdict;
        ApprovalRequest {
            call_id: "c3".into(),
            session: "s".into(),
            tool: "fs__write_file".into(),
            title: crate::tools::registry::title("fs__write_file", &args),
            risk: verdict.risk,
            frozen: FrozenCall::freeze("fs__write_file", &args),
            session_scopes: verdict.session_scopes(),
            no_session_grant: verdict.no_session_grant.clone(),
            directory_scope: None,
            preview: Some(super::preview(&tool, &args)),
            deadline_ms: None,
            code: None,
            verdict,
        }
    }

    fn screen(request: ApprovalRequest) -> String {
        let t0 = Instant::now();
        let mut app = App::new(
            Status {
                model: "scripted: demo".into(),
                mode: "default".into(),
                workspace: "/work/demo".into(),
            },
            t0,
        );
        app.on_agent_event(AgentEvent::ApprovalRequested {
            request: Box::new(request),
        });
        app.now = t0 + Duration::from_secs(2);
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal
            .draw(|f| {
                crate::ui::render::render(&app, f);
            })
            .unwrap();
        terminal.backend().to_string()
    }

    #[test]
    fn allow_for_the_session_names_the_exact_arguments_it_covers() {
        let request = request_for(
            json!({"readOnlyHint": false, "destructiveHint": false}),
            json!({"path": "/work/notes.md", "content": "x"}),
        );
        let short = request.frozen.short_digest();
        let screen = screen(request);
        let label = format!(
            "a allow `fs__write_file` with exactly these arguments ({short}) for this session"
        );
        assert!(screen.contains(&label), "{label:?} not in\n{screen}");
        insta::assert_snapshot!("mcp_approval_session_grant", screen);
    }

    #[test]
    fn the_modal_shows_server_tool_annotations_arguments_and_digests() {
        let t0 = Instant::now();
        let mut app = App::new(
            Status {
                model: "scripted: demo".into(),
                mode: "default".into(),
                workspace: "/work/demo".into(),
            },
            t0,
        );
        let request = request();
        let short = request.frozen.short_digest();
        app.on_agent_event(AgentEvent::ApprovalRequested {
            request: Box::new(request),
        });
        app.now = t0 + Duration::from_secs(2);
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal
            .draw(|f| {
                crate::ui::render::render(&app, f);
            })
            .unwrap();
        let screen = terminal.backend().to_string();
        for expected in [
            "fs__write_file",
            "MCP server fs, tool write_file (definition sha256:",
            "annotations: destructiveHint: true, idempotentHint: true, readOnlyHint: false",
            "\"content\": (2 lines of text)",
            "│ second line\\u001b[2J",
            "\"path\": \"/work/notes.md\"",
            short.as_str(),
            "is dangerous",
        ] {
            assert!(screen.contains(expected), "{expected:?} not in\n{screen}");
        }
        insta::assert_snapshot!("mcp_approval", screen);
    }
}
