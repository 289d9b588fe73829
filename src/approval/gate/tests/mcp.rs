//! MCP calls at the gate: what "allow for the session" covers afterwards (the same call again,
//! nothing looser), and the definition an approved call must still find when it runs.

use super::*;
use crate::mcp::definition::ToolDefinition;
use crate::mcp::{McpCatalog, McpTool};

fn tool(description: &str) -> McpTool {
    let definition = ToolDefinition::from_listing(&json!({
        "name": "create_directory", "description": description,
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": false, "destructiveHint": false},
    }))
    .unwrap();
    McpTool {
        server: "fs".into(),
        exposed: "fs__create_directory".into(),
        digest: definition.digest(),
        definition,
        changed: None,
        file_tool: None,
        confinement: None,
    }
}

fn mcp_rig(approver: Arc<dyn Approver>) -> (Rig, Arc<McpCatalog>) {
    let catalog = McpCatalog::new();
    catalog.set_tools("fs", vec![tool("Creates a directory.")], Vec::new());
    let mut rig = rig(approver);
    let policy = crate::approval::policy::Policy::new(
        rig.world.policy.mode,
        rig.world.policy.rules.clone(),
        rig.world.policy.paths.clone(),
        crate::facts::catalog::ToolCatalog::builtin(),
    )
    .with_mcp(catalog.clone());
    rig.gate.policy = Arc::new(policy);
    (rig, catalog)
}

fn mkdir(id: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: "fs__create_directory".into(),
        args,
    }
}

#[tokio::test]
async fn a_session_grant_for_an_mcp_call_covers_the_same_call_and_nothing_looser() {
    let approver = Scripted::answering(vec![
        Ok(Decision::AllowSession { directory: false }),
        Ok(Decision::Deny { reason: None }),
        Ok(Decision::Deny { reason: None }),
        Ok(Decision::Deny { reason: None }),
        Ok(Decision::Deny { reason: None }),
        Ok(Decision::Deny { reason: None }),
    ]);
    let (rig, catalog) = mcp_rig(approver.clone());
    let first = json!({"path": "/w/build", "mode": 493});
    approval(check(&rig, mkdir("c1", first.clone())).await);
    let offered = approver.seen.lock().unwrap()[0]
        .session_scopes
        .clone()
        .unwrap();
    let label: Vec<String> = offered.iter().map(GrantScope::describe).collect();
    let digest = FrozenCall::freeze("fs__create_directory", &first).digest;
    assert_eq!(
        label,
        [format!(
            "`fs__create_directory` with exactly these arguments (sha256:{})",
            &digest[..12]
        )]
    );

    // The same arguments, keys in another order: the same frozen call, covered.
    let again = approval(check(&rig, mkdir("c2", json!({"mode": 493, "path": "/w/build"}))).await);
    assert_eq!(*again.source(), DecisionSource::Grant);
    assert_eq!(approver.asked(), 1);

    // Anything else asks: another path, the same path written another way, an extra key, a
    // value of another type, a `..` that leads elsewhere.
    for (id, args) in [
        ("c3", json!({"path": "/w/other", "mode": 493})),
        ("c4", json!({"path": "/w/./build", "mode": 493})),
        (
            "c5",
            json!({"path": "/w/build", "mode": 493, "recursive": true}),
        ),
        ("c6", json!({"path": "/w/build", "mode": "493"})),
        ("c7", json!({"path": "/w/build/../../etc", "mode": 493})),
    ] {
        let before = approver.asked();
        denial(check(&rig, mkdir(id, args)).await);
        assert_eq!(approver.asked(), before + 1, "{id} was not asked about");
    }

    // The server now describes the tool otherwise (accepted, so no rug-pull flag): the grant was
    // for the definition the human saw, so the same call asks again.
    catalog.set_tools(
        "fs",
        vec![tool("Creates a directory, or deletes one.")],
        Vec::new(),
    );
    let before = approver.asked();
    check(&rig, mkdir("c8", first)).await;
    assert_eq!(
        approver.asked(),
        before + 1,
        "the grant covered a new definition"
    );
}

#[tokio::test]
async fn an_approved_mcp_call_carries_the_definition_it_was_judged_on() {
    let (rig, catalog) = mcp_rig(Scripted::answering(vec![Ok(Decision::AllowOnce)]));
    let approved = approval(check(&rig, mkdir("c1", json!({"path": "/w/a"}))).await);
    let listed = catalog.lookup("fs__create_directory").unwrap().digest;
    assert_eq!(approved.mcp_definition(), Some(listed.as_str()));
    // A built-in tool's approval carries none.
    let read = ToolCall {
        id: "c2".into(),
        tool: "read_file".into(),
        args: json!({"path": "src/lib.rs"}),
    };
    assert_eq!(approval(check(&rig, read).await).mcp_definition(), None);
}

/// Hooks that allow every call they are shown.
struct AllowingHooks;

impl crate::protocol::Hooks for AllowingHooks {
    fn any(&self, event: crate::protocol::HookEvent) -> bool {
        event == crate::protocol::HookEvent::PreToolUse
    }

    fn run(
        &self,
        _event: crate::protocol::HookEvent,
        _input: crate::protocol::HookInput,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Vec<crate::protocol::HookOutcome>> + Send + '_>,
    > {
        Box::pin(async {
            vec![crate::protocol::HookOutcome {
                hook: "team".into(),
                digest: "d".into(),
                say: Some(crate::protocol::HookSay::Allow),
                reason: Some("fine by the team".into()),
                note: None,
                failure: None,
            }]
        })
    }
}

#[tokio::test]
async fn a_hooks_allow_runs_a_sandboxed_servers_call_but_never_one_whose_server_has_no_sandbox() {
    for (confinement, allowed) in [
        ("sandbox workspace-write (writes only the workspace)", true),
        (
            "NO SANDBOX: `sandbox = \"off\"` in config.toml, it runs with all of your rights",
            false,
        ),
    ] {
        let approver = Scripted::answering(vec![Ok(Decision::Deny { reason: None })]);
        let (mut rig, catalog) = mcp_rig(approver.clone());
        let mut confined = tool("Creates a directory.");
        confined.confinement = Some(confinement.into());
        catalog.set_tools("fs", vec![confined], Vec::new());
        rig.gate = rig.gate.with_hooks(Some(Arc::new(AllowingHooks)));
        let outcome = check(&rig, mkdir("c1", json!({"path": "/w/build"}))).await;
        if allowed {
            assert_eq!(*approval(outcome).source(), DecisionSource::Hook);
            assert_eq!(approver.asked(), 0);
        } else {
            assert!(!outcome.is_approved(), "{confinement}");
            let seen = approver.seen.lock().unwrap();
            assert_eq!(seen.len(), 1, "asked the person instead");
            assert!(
                seen[0].hooks[0].contains("hook team allows it, but"),
                "{:?}",
                seen[0].hooks
            );
        }
    }
}
