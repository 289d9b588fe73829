//! The batch forecast against the gate's own decisions.

use super::*;

#[tokio::test]
async fn the_forecast_says_ask_exactly_for_the_calls_the_gate_then_puts_to_the_approver() {
    let approver = Scripted::answering(vec![Ok(Decision::AllowOnce); 8]);
    let rig = rig(approver.clone());
    let write = ToolCall {
        id: "w".into(),
        tool: "write_file".into(),
        args: json!({"path": "src/new.rs", "content": "x"}),
    };
    let read = ToolCall {
        id: "r".into(),
        tool: "read_file".into(),
        args: json!({"path": "src/lib.rs"}),
    };
    let calls = [
        bash("c1", "ls"),
        bash("c2", "cat ~/.ssh/id_rsa"),
        bash("c3", "cargo test"),
        bash("c4", "rm -rf build"),
        write,
        read,
        ToolCall {
            id: "c7".into(),
            tool: "no_such_tool".into(),
            args: json!({}),
        },
    ];
    for call in calls {
        let forecast = rig.gate.would_ask(&call);
        let before = approver.asked();
        let id = call.id.clone();
        check(&rig, call).await;
        assert_eq!(forecast, approver.asked() > before, "{id}");
    }
}

#[tokio::test]
async fn a_forecast_covered_by_a_grant_uses_none_of_its_uses() {
    let approver = Scripted::answering(vec![]);
    let rig = rig(approver.clone());
    rig.gate.grants().add(
        NewGrant {
            session: "s1".into(),
            workspace: rig.world.policy.paths.workspace.clone(),
            tool: "bash".into(),
            scope: GrantScope::Command {
                prefix: vec!["cargo".into(), "test".into()],
            },
            ttl_ms: None,
            max_uses: Some(1),
        },
        rig.now.load(Ordering::SeqCst),
    );
    for _ in 0..3 {
        assert!(!rig.gate.would_ask(&bash("c1", "cargo test")));
    }
    // The one use is still there for the real check.
    let approved = approval(check(&rig, bash("c1", "cargo test")).await);
    assert_eq!(approved.source(), &DecisionSource::Grant);
    assert_eq!(approver.asked(), 0);
    // A call the grant cannot cover is still forecast to ask.
    assert!(rig.gate.would_ask(&bash("c2", "sudo cargo test")));
    // And, the use spent, so is the covered one.
    assert!(rig.gate.would_ask(&bash("c3", "cargo test")));
}
