//! The gate with a sandbox: the profile is frozen into the call, and a session grant given under
//! one profile never covers the same command under a wider one.

use super::*;
use crate::sandbox::{Profile, SandboxPolicy, Support};

fn sandboxed_rig(approver: Arc<dyn Approver>) -> Rig {
    let world = crate::approval::testworld::world();
    let policy = Arc::new(
        crate::approval::policy::Policy::new(
            world.policy.mode,
            world.policy.rules.clone(),
            world.policy.paths.clone(),
            crate::facts::catalog::ToolCatalog::builtin(),
        )
        .with_sandbox(SandboxPolicy {
            default: Profile::WorkspaceWrite,
            support: Support::Landlock { abi: 7 },
        }),
    );
    let now = Arc::new(AtomicU64::new(1_000_000));
    let clock_now = now.clone();
    let gate = Gate::new(
        policy,
        Arc::new(GrantStore::new()),
        approver,
        None,
        GateConfig {
            session: "s1".into(),
            approval_timeout: None,
            dangerous_timeout: None,
            grant_ttl: None,
        },
    )
    .with_clock(Arc::new(move || clock_now.load(Ordering::SeqCst)));
    Rig { world, gate, now }
}

#[tokio::test]
async fn the_profile_a_call_runs_under_is_frozen_into_it_and_its_digest() {
    let rig = sandboxed_rig(Scripted::answering(vec![]));
    let approved = approval(check(&rig, bash("c1", "ls src")).await);
    assert_eq!(
        approved.frozen().canonical,
        r#"{"command":"ls src","sandbox":"workspace-write"}"#
    );
    let named = ToolCall {
        id: "c2".into(),
        tool: "bash".into(),
        args: json!({"command": "ls src", "sandbox": "read-only"}),
    };
    let approved = approval(check(&rig, named).await);
    assert!(
        approved
            .frozen()
            .canonical
            .contains(r#""sandbox":"read-only""#)
    );
}

#[tokio::test]
async fn a_grant_given_in_the_sandbox_does_not_cover_the_same_command_with_the_network() {
    let approver = Scripted::answering(vec![
        Ok(Decision::AllowSession { directory: false }),
        Ok(Decision::Deny { reason: None }),
        Ok(Decision::Deny { reason: None }),
    ]);
    let rig = sandboxed_rig(approver.clone());
    approval(check(&rig, bash("c1", "cargo test")).await);
    let again = approval(check(&rig, bash("c2", "cargo test --release")).await);
    assert_eq!(again.source(), &DecisionSource::Grant);
    for (id, profile) in [("c3", "network"), ("c4", "off")] {
        let wider = ToolCall {
            id: id.into(),
            tool: "bash".into(),
            args: json!({"command": "cargo test", "sandbox": profile}),
        };
        denial(check(&rig, wider).await);
    }
    assert_eq!(approver.asked(), 3, "each wider profile is asked again");
}

#[tokio::test]
async fn the_request_names_the_sandbox_a_command_will_run_in_so_the_cockpit_needs_no_sandbox_code()
{
    let approver = Scripted::answering(vec![Ok(Decision::AllowOnce), Ok(Decision::AllowOnce)]);
    let rig = sandboxed_rig(approver.clone());
    let networked = ToolCall {
        id: "c1".into(),
        tool: "bash".into(),
        args: json!({"command": "curl https://example.com", "sandbox": "network"}),
    };
    approval(check(&rig, networked).await);
    let unconfined = ToolCall {
        id: "c2".into(),
        tool: "bash".into(),
        args: json!({"command": "cargo test", "sandbox": "off"}),
    };
    approval(check(&rig, unconfined).await);
    let seen = approver.seen.lock().unwrap();
    assert_eq!(
        seen[0].sandbox,
        Some(crate::protocol::SandboxLabel {
            text: "sandbox network".into(),
            unconfined: false,
        })
    );
    assert_eq!(
        seen[1].sandbox,
        Some(crate::protocol::SandboxLabel {
            text: "NO SANDBOX (off)".into(),
            unconfined: true,
        })
    );
}

#[tokio::test]
async fn the_forecast_names_the_sandbox_each_command_of_a_batch_would_run_in() {
    let rig = sandboxed_rig(Scripted::answering(vec![]));
    let call = |id: &str, profile: Option<&str>| ToolCall {
        id: id.into(),
        tool: "bash".into(),
        args: match profile {
            Some(p) => json!({"command": "curl https://example.com", "sandbox": p}),
            None => json!({"command": "curl https://example.com"}),
        },
    };
    let label = |c: &ToolCall| rig.gate.forecast(c).1.map(|l| l.text);
    assert_eq!(
        label(&call("c1", None)).as_deref(),
        Some("sandbox workspace-write")
    );
    assert_eq!(
        label(&call("c2", Some("network"))).as_deref(),
        Some("sandbox network")
    );
    let read = ToolCall {
        id: "c3".into(),
        tool: "read_file".into(),
        args: json!({"path": "a.txt"}),
    };
    assert_eq!(rig.gate.forecast(&read).1, None);
}
