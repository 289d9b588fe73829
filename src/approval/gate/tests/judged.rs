//! The path a file call was judged on travels with its approval, and an answer that comes after
//! the path moved is refused.

use super::*;

/// Answers yes, but only after running `meanwhile` (what changes while a human reads the modal).
struct SlowYes {
    meanwhile: Box<dyn Fn() + Send + Sync>,
}

impl Approver for SlowYes {
    fn ask(&self, _request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        (self.meanwhile)();
        Box::pin(async { Ok(Decision::AllowOnce) })
    }
}

fn write_sub(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: "write_file".into(),
        args: json!({"path": "sub/new.txt", "content": "x\n"}),
    }
}

/// Makes `ws/sub` a directory, and returns what turns it into a link to `target`.
fn sub_and_its_swap(rig: &Rig, target: std::path::PathBuf) -> impl Fn() + Send + Sync + 'static {
    let sub = rig.world.policy.paths.workspace.join("sub");
    std::fs::create_dir(&sub).unwrap();
    move || {
        std::fs::remove_dir(&sub).unwrap();
        std::os::unix::fs::symlink(&target, &sub).unwrap();
    }
}

#[tokio::test]
async fn a_path_swapped_while_the_human_decides_is_refused_when_the_answer_comes() {
    let mut rig = rig(Arc::new(Silent));
    let inside = rig.world.policy.paths.workspace.join("elsewhere");
    std::fs::create_dir(&inside).unwrap();
    // Swapped for a link that stays inside the workspace: the verdict is the same, the file is not.
    let swap = sub_and_its_swap(&rig, inside);
    rig.gate.approver = Arc::new(SlowYes {
        meanwhile: Box::new(swap),
    });
    let d = denial(check(&rig, write_sub("c1")).await);
    assert_eq!(d.source, DecisionSource::Policy);
    assert!(
        d.message.contains("the path of `write_file` changed since it was judged: it now leads to elsewhere/new.txt, not to sub/new.txt as approved"),
        "{}",
        d.message
    );
}

#[tokio::test]
async fn an_answer_for_a_path_that_did_not_change_is_approved_with_that_path() {
    let rig = rig(Arc::new(SlowYes {
        meanwhile: Box::new(|| {}),
    }));
    std::fs::create_dir(rig.world.policy.paths.workspace.join("sub")).unwrap();
    let approved = approval(check(&rig, write_sub("c1")).await);
    assert_eq!(
        approved.judged_path(),
        Some(
            rig.world
                .policy
                .paths
                .workspace
                .join("sub/new.txt")
                .as_path()
        )
    );
}

#[tokio::test]
async fn a_parked_file_call_settled_later_runs_only_on_the_path_it_was_judged_on() {
    let rig = rig(Arc::new(crate::approval::approver::ParkAll));
    let inside = rig.world.policy.paths.workspace.join("elsewhere");
    std::fs::create_dir(&inside).unwrap();
    let swap = sub_and_its_swap(&rig, inside);
    let GateOutcome::Parked(request) = check(&rig, write_sub("c1")).await else {
        panic!("expected the write to park");
    };
    let judged = judged_path(&request.verdict);
    let sub_new = rig.world.policy.paths.workspace.join("sub/new.txt");
    assert_eq!(judged.as_deref(), Some(sub_new.as_path()));
    let settle = |path| {
        let judged = Judged {
            path,
            mcp_definition: None,
            read_only: false,
        };
        rig.gate
            .settle_parked("c1", request.frozen.clone(), super::allowed(), judged)
    };
    assert_eq!(
        approval(settle(judged.clone())).judged_path(),
        Some(sub_new.as_path())
    );
    let d = denial(settle(None));
    assert!(
        d.message.contains("was not judged on a path"),
        "{}",
        d.message
    );
    swap();
    let d = denial(settle(judged));
    assert!(
        d.message.contains("it now leads to elsewhere/new.txt"),
        "{}",
        d.message
    );
}

#[tokio::test]
async fn the_decision_that_allows_a_file_call_records_the_path_it_may_touch() {
    let world_dir = tempfile::tempdir().unwrap();
    let log = Arc::new(AuditLog::open(world_dir.path(), "s1").unwrap());
    let rig = rig_with(Arc::new(Silent), None, None, Some(log.clone()));
    let read = ToolCall {
        id: "c1".into(),
        tool: "read_file".into(),
        args: json!({"path": "src/../src/main.rs"}),
    };
    approval(check(&rig, read).await);
    approval(check(&rig, bash("c2", "ls")).await);
    rig.gate.flush_audit().unwrap();
    let records = audit::read_records(log.path()).unwrap();
    let main = rig.world.policy.paths.workspace.join("src/main.rs");
    assert_eq!(records[1]["body"]["path"], main.to_str().unwrap());
    assert_eq!(
        records[3]["body"]["path"],
        Value::Null,
        "a command has no path"
    );
}
