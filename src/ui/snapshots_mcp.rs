//! The approval modal for an MCP call, pinned at 100x30: server, tool, annotations, the frozen
//! arguments as `mcp::preview` prints them, the digests, and what a session grant covers. The
//! request is one the real policy judged, so the risk and the grant's scope are the policy's.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::snapshots::{app, ask, draw};
use crate::approval::testworld::{World, world_with};
use crate::mcp::definition::ToolDefinition;
use crate::mcp::{McpCatalog, McpTool};
use crate::protocol::ApprovalRequest;
use crate::protocol::FrozenCall;

fn request() -> ApprovalRequest {
    request_for(
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true}),
        json!({"path": "/work/notes.md", "content": "# Notes\nsecond line\u{1b}[2J"}),
    )
}

fn request_for(annotations: Value, args: Value) -> ApprovalRequest {
    request_in(annotations, args, None, std::path::Path::new("/work"))
}

/// The request for `args`, its tool known to change a file as `file_tool` says, previewed
/// against `workspace`.
fn request_in(
    annotations: Value,
    args: Value,
    file_tool: Option<crate::mcp::file_tools::FileTool>,
    workspace: &std::path::Path,
) -> ApprovalRequest {
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
        file_tool,
        confinement: Some(
            "sandbox workspace-write (writes only the workspace and temp, no network)".into(),
        ),
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
        preview: Some(crate::mcp::preview::preview(&tool, &args, workspace)),
        deadline_ms: None,
        code: None,
        verdict,
        sandbox: None,
        amended: None,
        notice: None,
        hooks: Vec::new(),
        agent: None,
    }
}

/// The screen once the modal for `request` is armed.
fn screen(request: ApprovalRequest) -> String {
    let t0 = Instant::now();
    let mut app = app(t0);
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    draw(&app, 100, 30)
}

#[test]
fn allow_for_the_session_names_the_exact_arguments_it_covers() {
    let request = request_for(
        json!({"readOnlyHint": false, "destructiveHint": false}),
        json!({"path": "/work/notes.md", "content": "x"}),
    );
    let short = request.frozen.short_digest();
    let screen = screen(request);
    let label =
        format!("a allow `fs__write_file` with exactly these arguments ({short}) for this session");
    assert!(screen.contains(&label), "{label:?} not in\n{screen}");
    insta::assert_snapshot!("mcp_approval_session_grant", screen);
}

#[test]
fn the_modal_shows_server_tool_annotations_arguments_and_digests() {
    let request = request();
    let short = request.frozen.short_digest();
    let screen = screen(request);
    for expected in [
        "fs__write_file",
        "MCP server fs, tool write_file (definition sha256:",
        "annotations: destructiveHint: true, idempotentHint: true, readOnlyHint: false",
        "its server runs in: sandbox workspace-write (writes only the workspace and temp, no",
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

#[test]
fn a_known_file_write_shows_its_change_as_a_diff_below_the_arguments() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.md"),
        "# Notes\nfirst line\nlast line\n",
    )
    .unwrap();
    let write = crate::mcp::file_tools::recognise(
        None,
        Some("secure-filesystem-server"),
        "write_file",
        &json!({"properties": {"path": {}, "content": {}}}),
    );
    let request = request_in(
        json!({"readOnlyHint": false, "destructiveHint": true}),
        json!({"path": "notes.md", "content": "# Notes\nfirst line, changed\nlast line\n"}),
        write,
        dir.path(),
    );
    let top = screen(request.clone());
    for expected in [
        "changes notes.md: +1 -1, the diff below the arguments",
        "\"path\": \"notes.md\"",
    ] {
        assert!(top.contains(expected), "{expected:?} not in\n{top}");
    }
    // The diff is last; the conversation's latest line stays above the modal, so it is
    // scrolled to.
    let t0 = Instant::now();
    let mut app = app(t0);
    ask(&mut app, request);
    app.now = t0 + Duration::from_secs(2);
    if let Some(crate::ui::app::Overlay::Approval(modal)) = app.overlays.last_mut() {
        modal.scroll = crate::ui::preview::Scroll::END;
    }
    let screen = draw(&app, 100, 30);
    for expected in ["-first line", "+first line, changed"] {
        assert!(screen.contains(expected), "{expected:?} not in\n{screen}");
    }
    insta::assert_snapshot!("mcp_approval_file_write_diff", screen);
}
