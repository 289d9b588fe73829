//! MCP tools through the policy: risk from annotations, the user's rules over them, the mode,
//! and a changed definition that asks whatever else says allow.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::approval::policy::{Mode, Policy};
use crate::approval::rules::Rules;
use crate::approval::testworld::{World, world_with};
use crate::mcp::definition::ToolDefinition;
use crate::mcp::{McpCatalog, McpTool};
use crate::protocol::ReasonCode;
use crate::protocol::Ruling;
use crate::protocol::Verdict;

fn tool(name: &str, annotations: Value, changed: Option<&str>) -> McpTool {
    let definition = ToolDefinition::from_listing(&json!({
        "name": name, "description": "d", "inputSchema": {"type": "object"},
        "annotations": annotations,
    }))
    .unwrap();
    McpTool {
        server: "fs".into(),
        exposed: format!("fs__{name}"),
        digest: definition.digest(),
        definition,
        changed: changed.map(str::to_string),
        file_tool: None,
        confinement: None,
    }
}

fn catalog(tools: Vec<McpTool>) -> Arc<McpCatalog> {
    let catalog = McpCatalog::new();
    catalog.set_tools("fs", tools, Vec::new());
    catalog.set_state("fs", crate::mcp::ServerState::Ready);
    catalog
}

fn judge_with(mode: Mode, rules: &str, tools: Vec<McpTool>, name: &str, args: Value) -> Verdict {
    let rules = Rules::parse(rules, Path::new("rules.toml")).unwrap();
    let World { _dir, policy } = world_with(mode, rules);
    let policy: Policy = policy.with_mcp(catalog(tools));
    policy.assess(name, &args).verdict
}

fn standard() -> Vec<McpTool> {
    vec![
        tool("read_file", json!({"readOnlyHint": true}), None),
        tool(
            "create_directory",
            json!({"readOnlyHint": false, "destructiveHint": false}),
            None,
        ),
        tool("write_file", json!({"destructiveHint": true}), None),
        tool("mystery", Value::Null, None),
    ]
}

fn judge(rules: &str, name: &str, args: Value) -> Verdict {
    judge_with(Mode::Default, rules, standard(), name, args)
}

#[test]
fn a_read_only_tool_is_allowed_and_a_mutating_one_asks_with_a_session_grant() {
    let v = judge("", "fs__read_file", json!({"path": "a"}));
    assert_eq!(v.ruling, Ruling::Allow, "{:?}", v.reason_lines());
    let v = judge("", "fs__create_directory", json!({"path": "a"}));
    assert_eq!(v.ruling, Ruling::Ask);
    assert_eq!(v.no_session_grant, None);
    assert!(v.reason_lines()[0].contains("mcp:fs/create_directory` is mutating"));
}

#[test]
fn an_unannotated_or_destructive_tool_asks_and_is_never_granted_for_the_session() {
    for name in ["fs__mystery", "fs__write_file"] {
        let v = judge("", name, json!({}));
        assert_eq!(v.ruling, Ruling::Ask, "{name}");
        assert!(v.no_session_grant.is_some(), "{name}");
    }
    let v = judge("", "fs__mystery", json!({}));
    assert!(
        v.reason_lines()[0].contains("no annotations"),
        "{:?}",
        v.reason_lines()
    );
}

#[test]
fn the_users_rules_win_over_annotations() {
    let v = judge(
        "deny = [\"mcp:fs/read_file\"]",
        "fs__read_file",
        json!({"path": "a"}),
    );
    assert_eq!(v.ruling, Ruling::Deny);
    let v = judge(
        "ask = [\"mcp:fs/read_file(path=secret/**)\"]",
        "fs__read_file",
        json!({"path": "./secret/k"}),
    );
    assert_eq!(v.ruling, Ruling::Ask);
    let v = judge(
        "allow = [\"mcp:fs/write_file(path=src/**)\"]",
        "fs__write_file",
        json!({"path": "src/a", "content": "x"}),
    );
    assert_eq!(v.ruling, Ruling::Allow, "{:?}", v.reason_lines());
    let v = judge(
        "allow = [\"mcp:fs/write_file(path=src/**)\"]",
        "fs__write_file",
        json!({"path": "src/../../etc/passwd", "content": "x"}),
    );
    assert_eq!(v.ruling, Ruling::Ask);
    let v = judge(
        "allow = [\"mcp:fs\"]\ndeny = [\"mcp:fs/write_file\"]",
        "fs__write_file",
        json!({}),
    );
    assert_eq!(v.ruling, Ruling::Deny, "deny wins over allow");
}

#[test]
fn a_rule_for_another_server_or_a_builtin_tool_does_not_apply() {
    let v = judge(
        "allow = [\"mcp:web/write_file\", \"write_file\"]",
        "fs__write_file",
        json!({}),
    );
    assert_eq!(v.ruling, Ruling::Ask);
}

#[test]
fn read_only_mode_denies_what_would_ask() {
    let v = judge_with(
        Mode::ReadOnly,
        "",
        standard(),
        "fs__create_directory",
        json!({}),
    );
    assert_eq!(v.ruling, Ruling::Deny);
    let v = judge_with(Mode::ReadOnly, "", standard(), "fs__read_file", json!({}));
    assert_eq!(v.ruling, Ruling::Allow);
}

#[test]
fn a_changed_definition_asks_even_when_annotations_and_rules_allow() {
    let why = "the tools of MCP server `fs` changed since you accepted them (`read_file`: the description changed)";
    let tools = vec![tool("read_file", json!({"readOnlyHint": true}), Some(why))];
    let v = judge_with(
        Mode::Default,
        "allow = [\"mcp:fs/read_file\"]",
        tools,
        "fs__read_file",
        json!({"path": "a"}),
    );
    assert_eq!(v.ruling, Ruling::Ask, "{:?}", v.reason_lines());
    assert!(v.reasons.iter().any(|r| r.code == ReasonCode::ToolChanged));
    assert!(
        v.reason_lines()
            .iter()
            .any(|l| l.contains("description changed"))
    );
    assert!(
        v.no_session_grant
            .as_deref()
            .is_some_and(|n| n.contains("airlock mcp accept fs")),
        "a changed tool is never granted for the session"
    );
}

#[test]
fn a_changed_definition_never_lifts_a_deny() {
    let tools = vec![tool(
        "read_file",
        json!({"readOnlyHint": true}),
        Some("changed"),
    )];
    let v = judge_with(
        Mode::Default,
        "deny = [\"mcp:fs/read_file\"]",
        tools,
        "fs__read_file",
        json!({}),
    );
    assert_eq!(v.ruling, Ruling::Deny);
}

#[test]
fn an_unlisted_mcp_name_or_non_object_arguments_are_denied() {
    let v = judge("", "fs__launch", json!({}));
    assert_eq!(v.ruling, Ruling::Deny);
    assert!(v.reason_lines()[0].contains("does not list a tool `launch`"));
    let v = judge("", "web__fetch", json!({}));
    assert!(v.reason_lines()[0].contains("no MCP server `web` is configured"));
    let v = judge("", "fs__read_file", json!(["a"]));
    assert_eq!(v.ruling, Ruling::Deny);
}

#[test]
fn builtin_tools_are_judged_as_before_with_mcp_configured() {
    let v = judge("", "read_file", json!({"path": "src/main.rs"}));
    assert_eq!(v.ruling, Ruling::Allow);
    let v = judge("", "bash", json!({"command": "rm -rf src"}));
    assert_ne!(v.ruling, Ruling::Allow);
}
