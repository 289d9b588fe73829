//! The file tools run through the real gate: what the gate judged is what the tool touches, and a
//! swap between the judgement and the run gets nowhere.

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::approval::approver::Previewer;
use crate::approval::approver::{AllowAllOnce, Approver, ApproverError, BoxFuture};
use crate::approval::gate::{Gate, GateConfig, GateOutcome};
use crate::approval::grants::GrantStore;
use crate::approval::policy::Policy;
use crate::approval::testworld::{World, world};
use crate::facts::catalog::ToolCatalog;
use crate::protocol::ToolCall;
use crate::protocol::{ApprovalRequest, Decision};

struct Rig {
    world: World,
    gate: Gate,
    tools: ToolRegistry,
}

/// Answers yes, keeping every request it was shown.
#[derive(Default)]
struct Shown(std::sync::Mutex<Vec<ApprovalRequest>>);

impl Approver for Shown {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, Result<Decision, ApproverError>> {
        self.0.lock().unwrap().push(request);
        Box::pin(async { Ok(Decision::AllowOnce) })
    }
}

/// A gate whose every ask is answered yes, and the registry the agent would run approved calls in.
fn rig() -> Rig {
    rig_with(Arc::new(AllowAllOnce))
}

fn rig_with(approver: Arc<dyn Approver>) -> Rig {
    let world = world();
    let paths = world.policy.paths.clone();
    let policy = Policy::new(
        world.policy.mode,
        world.policy.rules.clone(),
        paths.clone(),
        ToolCatalog::builtin(),
    );
    let tools = ToolRegistry::new(paths.workspace.clone(), paths.home.clone(), None);
    let previews = ToolRegistry::new(paths.workspace.clone(), paths.home.clone(), None);
    let gate = Gate::new(
        Arc::new(policy),
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
    .with_previewer(Arc::new(previews));
    Rig { world, gate, tools }
}

impl Rig {
    fn ws(&self) -> PathBuf {
        self.world.policy.paths.workspace.clone()
    }

    async fn approve(&self, tool: &str, args: Value) -> Approved {
        let call = ToolCall {
            id: "c1".into(),
            tool: tool.into(),
            args,
        };
        match self.gate.check(call, &CancellationToken::new()).await {
            GateOutcome::Approved(approved) => approved,
            other => panic!("expected approval, got {other:?}"),
        }
    }

    async fn run(&self, approved: Approved) -> Result<ToolOutcome, ToolError> {
        self.tools
            .execute(
                approved,
                CancellationToken::new(),
                crate::output::OutputSink::discard(),
            )
            .await
    }

    async fn call(&self, tool: &str, args: Value) -> Result<ToolOutcome, ToolError> {
        let approved = self.approve(tool, args).await;
        self.run(approved).await
    }

    /// `ws/sub` was a directory when the call was judged; now it leads outside the workspace.
    fn swap_sub_for_a_link_outside(&self) {
        std::fs::remove_dir_all(self.ws().join("sub")).unwrap();
        symlink(self.world.outside(), self.ws().join("sub")).unwrap();
    }
}

#[tokio::test]
async fn an_approved_file_call_carries_the_physical_path_the_gate_judged() {
    let rig = rig();
    std::fs::create_dir(rig.ws().join("real")).unwrap();
    symlink(rig.ws().join("real"), rig.ws().join("alias")).unwrap();
    let approved = rig
        .approve("write_file", json!({"path": "alias/x.txt", "content": "x"}))
        .await;
    assert_eq!(
        approved.judged_path(),
        Some(rig.ws().join("real/x.txt").as_path())
    );
    let bash = rig.approve("bash", json!({"command": "ls"})).await;
    assert_eq!(bash.judged_path(), None);
}

#[tokio::test]
async fn a_write_approved_before_its_directory_became_a_symlink_writes_nothing_outside() {
    let rig = rig();
    std::fs::create_dir(rig.ws().join("sub")).unwrap();
    let approved = rig
        .approve(
            "write_file",
            json!({"path": "sub/new.txt", "content": "x\n"}),
        )
        .await;
    rig.swap_sub_for_a_link_outside();
    let err = rig.run(approved).await.unwrap_err().to_string();
    assert_eq!(
        err,
        "`sub` changed since the call was approved: it is now a symlink, which airlock does not follow; nothing was written"
    );
    assert!(!rig.world.outside().join("new.txt").exists());
}

#[tokio::test]
async fn an_edit_approved_before_its_directory_became_a_symlink_changes_nothing_outside() {
    let rig = rig();
    std::fs::create_dir(rig.ws().join("sub")).unwrap();
    std::fs::write(rig.ws().join("sub/config.txt"), "port = 1\n").unwrap();
    std::fs::write(rig.world.outside().join("config.txt"), "port = 1\n").unwrap();
    let approved = rig
        .approve(
            "edit_file",
            json!({"path": "sub/config.txt", "old": "port = 1", "new": "port = 2"}),
        )
        .await;
    rig.swap_sub_for_a_link_outside();
    let err = rig.run(approved).await.unwrap_err().to_string();
    assert!(
        err.contains("`sub` changed since the call was approved"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.world.outside().join("config.txt")).unwrap(),
        "port = 1\n"
    );
}

#[tokio::test]
async fn a_read_approved_before_its_directory_became_a_symlink_reads_nothing_outside() {
    let rig = rig();
    std::fs::create_dir(rig.ws().join("sub")).unwrap();
    std::fs::write(rig.ws().join("sub/notes.txt"), "inside\n").unwrap();
    std::fs::write(rig.world.outside().join("notes.txt"), "secret\n").unwrap();
    let approved = rig
        .approve("read_file", json!({"path": "sub/notes.txt"}))
        .await;
    rig.swap_sub_for_a_link_outside();
    let err = rig.run(approved).await.unwrap_err().to_string();
    assert!(
        err.contains("`sub` changed since") && !err.contains("secret"),
        "{err}"
    );
}

#[tokio::test]
async fn a_write_approved_before_its_file_became_a_symlink_is_refused() {
    let rig = rig();
    std::fs::write(rig.ws().join("notes.txt"), "mine\n").unwrap();
    std::fs::write(rig.world.outside().join("notes.txt"), "theirs\n").unwrap();
    let approved = rig
        .approve("write_file", json!({"path": "notes.txt", "content": "x\n"}))
        .await;
    std::fs::remove_file(rig.ws().join("notes.txt")).unwrap();
    symlink(
        rig.world.outside().join("notes.txt"),
        rig.ws().join("notes.txt"),
    )
    .unwrap();
    let err = rig.run(approved).await.unwrap_err().to_string();
    assert!(
        err.contains("`notes.txt` changed since the call was approved"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.world.outside().join("notes.txt")).unwrap(),
        "theirs\n"
    );
}

#[tokio::test]
async fn ordinary_file_calls_still_work_in_the_workspace_in_new_directories_and_under_home() {
    let rig = rig();
    let out = rig
        .call(
            "write_file",
            json!({"path": "new/deeper/a.txt", "content": "hello\n"}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "created new/deeper/a.txt (1 lines)\n");
    let out = rig
        .call(
            "edit_file",
            json!({"path": "new/deeper/a.txt", "old": "hello", "new": "bye"}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "edited new/deeper/a.txt\n");
    let out = rig
        .call("read_file", json!({"path": "new/deeper/a.txt"}))
        .await
        .unwrap();
    assert_eq!(out.content, "bye\n");
    let out = rig.call("list_dir", json!({"path": "new"})).await.unwrap();
    assert_eq!(out.content, "deeper/\n");
    let out = rig.call("search", json!({"pattern": "bye"})).await.unwrap();
    assert_eq!(out.content, "new/deeper/a.txt:1: bye\n");
    std::fs::write(rig.world.policy.paths.home.join("notes.txt"), "from home\n").unwrap();
    let out = rig
        .call("read_file", json!({"path": "~/notes.txt"}))
        .await
        .unwrap();
    assert_eq!(out.content, "from home\n");
}

#[tokio::test]
async fn a_write_whose_two_readings_differ_goes_where_it_was_judged_and_previewed() {
    // `link/../../tmp/x.txt`: the kernel climbs out of the link's target and stays in the
    // workspace; a tool that normalises first lands in the temp directory next to it. The policy
    // judges the less trusted reading, the human sees that file, and that is the file written.
    let shown = Arc::new(Shown::default());
    let rig = rig_with(shown.clone());
    std::fs::create_dir_all(rig.ws().join("a/b")).unwrap();
    symlink(rig.ws().join("a/b"), rig.ws().join("link")).unwrap();
    let tmp = rig.world.tmp();
    let raw = format!(
        "link/../../{}/x.txt",
        tmp.file_name().unwrap().to_str().unwrap()
    );
    std::fs::write(tmp.join("x.txt"), "old in tmp\n").unwrap();
    let approved = rig
        .approve("write_file", json!({"path": raw, "content": "new\n"}))
        .await;
    assert_eq!(approved.judged_path(), Some(tmp.join("x.txt").as_path()));
    let preview = shown.0.lock().unwrap()[0].preview.clone();
    match preview {
        Some(crate::protocol::Preview::Diff { unified, .. }) => {
            assert!(unified.contains("-old in tmp"), "{unified}")
        }
        other => panic!("expected a diff, got {other:?}"),
    }
    rig.run(approved).await.unwrap();
    assert_eq!(std::fs::read_to_string(tmp.join("x.txt")).unwrap(), "new\n");
    assert!(!rig.ws().join("a/x.txt").exists() && !rig.ws().join("x.txt").exists());
}

#[test]
fn an_edit_preview_never_shows_a_file_through_a_directory_that_became_a_symlink() {
    let rig = rig();
    std::fs::create_dir(rig.ws().join("sub")).unwrap();
    std::fs::write(rig.world.outside().join("f.txt"), "secret = 1\n").unwrap();
    let judged = rig.ws().join("sub/f.txt");
    rig.swap_sub_for_a_link_outside();
    let args = json!({"path": "sub/f.txt", "old": "secret = 1", "new": "secret = 2"});
    match rig.tools.preview("edit_file", &args, Some(&judged)) {
        Some(crate::protocol::Preview::Error { message }) => {
            assert!(message.contains("`sub` changed since"), "{message}")
        }
        other => panic!("expected an error preview, got {other:?}"),
    }
}
