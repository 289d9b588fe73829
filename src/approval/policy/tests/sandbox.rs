//! The sandbox in the verdict: the profile is named, what the sandbox contains may be granted,
//! and a command that runs without a sandbox always asks, one call at a time.

use super::*;
use crate::sandbox::{Profile, SandboxPolicy, Support};

fn sandboxed(mut w: World, support: Support) -> World {
    w.policy.sandbox = Some(SandboxPolicy {
        default: Profile::WorkspaceWrite,
        support,
    });
    w
}

fn landlock() -> Support {
    Support::Landlock { abi: 7 }
}

fn call(w: &World, command: &str, profile: Option<&str>) -> Verdict {
    let mut args = json!({ "command": command });
    if let Some(p) = profile {
        args["sandbox"] = json!(p);
    }
    w.tool("bash", args)
}

#[test]
fn a_sandboxed_verdict_names_the_profile_and_what_it_lets_the_command_do() {
    let w = sandboxed(world(), landlock());
    let v = call(&w, "ls src", None);
    assert_eq!(v.ruling, Ruling::Allow);
    assert!(
        v.reason_lines().contains(
            &"allow: runs in the sandbox `workspace-write`: writes only the workspace and temp, no network"
                .to_string()
        ),
        "{:?}",
        v.reason_lines()
    );
    let v = call(&w, "ls src", Some("read-only"));
    assert!(
        v.reason_lines()
            .iter()
            .any(|r| r.contains("`read-only`: writes only the temp dir, no network")),
        "{:?}",
        v.reason_lines()
    );
}

#[test]
fn a_read_only_command_without_the_sandbox_asks_and_is_never_granted_for_the_session() {
    let w = sandboxed(world(), landlock());
    let v = call(&w, "ls src", Some("off"));
    assert_eq!(v.ruling, Ruling::Ask);
    assert_eq!(v.risk, crate::protocol::Risk::Dangerous);
    assert_eq!(
        v.no_session_grant.as_deref(),
        Some(crate::approval::policy::NO_GRANT_UNSANDBOXED)
    );
    assert_eq!(v.session_scopes(), None);
    assert!(v.reason_lines()[0].starts_with("ask: runs without the sandbox"));
}

#[test]
fn an_allow_rule_never_lifts_the_ask_of_a_command_run_without_the_sandbox() {
    let rules = Rules::parse(
        "allow = [\"bash(ls *)\", \"bash(cargo test *)\"]",
        Path::new("r.toml"),
    )
    .unwrap();
    let w = sandboxed(world_with(Mode::Default, rules), landlock());
    assert_eq!(call(&w, "ls src", Some("off")).ruling, Ruling::Ask);
    assert_eq!(call(&w, "cargo test", Some("off")).ruling, Ruling::Ask);
    assert_eq!(call(&w, "cargo test", None).ruling, Ruling::Allow);
}

#[test]
fn read_only_mode_denies_a_command_that_would_run_without_the_sandbox() {
    let w = sandboxed(world_with(Mode::ReadOnly, Rules::empty()), landlock());
    assert_eq!(call(&w, "ls src", Some("off")).ruling, Ruling::Deny);
    assert_eq!(call(&w, "ls src", None).ruling, Ruling::Allow);
}

#[test]
fn without_landlock_every_command_asks_says_why_and_hard_denies_stay() {
    let w = sandboxed(
        world(),
        Support::Missing {
            why: "this kernel has no Landlock".into(),
        },
    );
    let v = call(&w, "ls src", None);
    assert_eq!(v.ruling, Ruling::Ask);
    assert!(v.no_session_grant.is_some());
    assert!(
        v.reason_lines()[0].contains(
            "runs without a sandbox, with all of your rights: this kernel has no Landlock"
        ),
        "{:?}",
        v.reason_lines()
    );
    assert_eq!(call(&w, "cat ~/.ssh/id_rsa", None).ruling, Ruling::Deny);
}

#[test]
fn code_the_sandbox_contains_may_be_granted_but_not_once_it_has_the_network() {
    let w = sandboxed(world(), landlock());
    let inline = "python3 -c 'print(1)'";
    let legacy = world().bash(inline);
    assert_eq!(legacy.risk, crate::protocol::Risk::Dangerous);
    assert!(legacy.session_scopes().is_none());
    let v = call(&w, inline, None);
    assert_eq!(v.ruling, Ruling::Ask);
    assert_eq!(v.risk, crate::protocol::Risk::Mutating);
    assert!(v.session_scopes().is_some(), "{:?}", v.no_session_grant);
    let v = call(&w, inline, Some("network"));
    assert_eq!(v.risk, crate::protocol::Risk::Dangerous);
    assert!(v.session_scopes().is_none());
}

#[test]
fn a_sandbox_argument_that_is_not_a_profile_is_denied() {
    let w = sandboxed(world(), landlock());
    let v = call(&w, "ls", Some("none"));
    assert_eq!(v.ruling, Ruling::Deny);
    assert!(v.reason_lines()[0].contains("`sandbox` must be one of"));
}

/// A sub-agent held to the read-only profile and the read-only mode.
fn read_only_agent() -> crate::approval::policy::Limits {
    crate::approval::policy::Limits {
        mode: crate::approval::policy::Mode::ReadOnly,
        profile: Some(Profile::ReadOnly),
    }
}

#[test]
fn a_sub_agent_command_runs_under_its_own_profile_and_cannot_name_a_wider_one() {
    let w = sandboxed(world(), landlock());
    let limits = read_only_agent();
    let args = json!({"command": "ls"});
    let filled = w.policy.with_profile_within("bash", &args, Some(&limits));
    assert_eq!(filled["sandbox"], "read-only");
    for wider in ["workspace-write", "network", "off"] {
        let v = w
            .policy
            .assess_within(
                "bash",
                &json!({"command": "ls", "sandbox": wider}),
                Some(&limits),
            )
            .verdict;
        assert_eq!(v.ruling, Ruling::Deny, "{wider}");
        assert!(
            v.reasons
                .iter()
                .any(|r| r.code == crate::protocol::ReasonCode::WiderThanParent
                    && r.message.contains(wider)),
            "{:?}",
            v.reason_lines()
        );
    }
    // The same command under the session's own limits is judged as always.
    let v = call(&w, "ls", Some("workspace-write"));
    assert_eq!(v.ruling, Ruling::Allow);
}

#[test]
fn an_agent_call_is_allowed_narrower_and_refused_wider_than_its_caller() {
    let w = sandboxed(world(), landlock());
    let spawn = |extra: serde_json::Value, limits: Option<&crate::approval::policy::Limits>| {
        let mut args = json!({"task": "t", "prompt": "p"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        w.policy.assess_within("agent", &args, limits).verdict
    };
    assert_eq!(spawn(json!({}), None).ruling, Ruling::Allow);
    assert_eq!(
        spawn(json!({"mode": "read-only", "sandbox": "read-only"}), None).ruling,
        Ruling::Allow
    );
    for (extra, why) in [
        (json!({"mode": "auto-edit"}), "wider mode"),
        (json!({"sandbox": "network"}), "wider sandbox"),
        (json!({"sandbox": "off"}), "wider sandbox"),
        (json!({"mode": "yolo"}), "`mode` must be one of"),
        (json!({"sandbox": 3}), "`sandbox` must be a string"),
        (
            json!({"prompt": "  "}),
            "`prompt` is required and must not be empty",
        ),
        (json!({"task": 7}), "`task` must be a string, got 7"),
    ] {
        let v = spawn(extra.clone(), None);
        assert_eq!(v.ruling, Ruling::Deny, "{extra}");
        assert!(
            v.reason_lines().iter().any(|l| l.contains(why)),
            "{extra}: {:?}",
            v.reason_lines()
        );
    }
    // A read-only sub-agent cannot start one in the default mode or a writing sandbox.
    let limits = read_only_agent();
    assert_eq!(spawn(json!({}), Some(&limits)).ruling, Ruling::Allow);
    assert_eq!(
        spawn(json!({"mode": "default"}), Some(&limits)).ruling,
        Ruling::Deny
    );
    assert_eq!(
        spawn(json!({"sandbox": "workspace-write"}), Some(&limits)).ruling,
        Ruling::Deny
    );
}
