//! The turn loop with a scripted model, real tools on a temporary workspace, and the real gate.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::approval::approver::{AllowAllOnce, DenyAll};
use crate::approval::gate::GateConfig;
use crate::approval::grants::GrantStore;
use crate::approval::policy::{Mode, Policy};
use crate::approval::rules::Rules;
use crate::facts::catalog::ToolCatalog;
use crate::facts::paths::PathContext;
use crate::model::scripted::{Scenario, ScriptedModel};
use crate::model::{ModelError, ModelReply};
use crate::protocol::{Decision, TurnOutcome};

/// Which approver the gate uses.
enum Approvals {
    /// The driver answers through events and ops.
    Driver,
    AllowAll,
    DenyAll,
    /// Every ask is parked (`airlock exec --approvals park`).
    Park,
}

struct Rig {
    dir: Arc<tempfile::TempDir>,
    workspace: PathBuf,
    handle: AgentHandle,
    seen: Arc<Mutex<Vec<Vec<Message>>>>,
    history: Option<Arc<crate::undo::History>>,
}

/// Plays a scenario and remembers every conversation it was shown.
struct Recording {
    inner: ScriptedModel,
    seen: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl ModelClient for Recording {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn save(&self) -> serde_json::Value {
        self.inner.save()
    }

    fn restore(&self, saved: &serde_json::Value) {
        self.inner.restore(saved)
    }

    fn sub_agent(&self, task: &str) -> Result<Option<Arc<dyn ModelClient>>, ModelError> {
        self.inner.sub_agent(task)
    }

    fn respond<'a>(
        &'a self,
        conversation: &'a [Message],
        deltas: mpsc::UnboundedSender<String>,
    ) -> crate::approval::approver::BoxFuture<'a, Result<ModelReply, ModelError>> {
        lock(&self.seen).push(conversation.to_vec());
        self.inner.respond(conversation, deltas)
    }
}

fn rig(scenario: serde_json::Value, approvals: Approvals) -> Rig {
    rig_with_remote(scenario, approvals, false)
}

fn rig_with_remote(scenario: serde_json::Value, approvals: Approvals, remote: bool) -> Rig {
    rig_with(
        scenario,
        approvals,
        Extras {
            remote,
            ..Extras::default()
        },
    )
}

/// What some tests add to the plain rig.
#[derive(Default)]
struct Extras {
    remote: bool,
    /// With `remote`: every look the agent takes at a code's answer is reported here.
    looks: Option<Looks>,
    journal: Option<Arc<dyn Journal>>,
    /// Start from this checkpoint, in this world (another process going on with a session).
    resume: Option<(Arc<tempfile::TempDir>, Checkpoint)>,
    /// The gate's audit log.
    audit: Option<Arc<crate::approval::audit::AuditLog>>,
    /// Keeps the run's checkpoints, as `airlock exec` does.
    checkpoints: Option<Arc<dyn Checkpoints>>,
    /// The parked call's answer, when resuming a parked turn.
    answer: Option<ParkedAnswer>,
    /// How deep sub-agents nest and how many run at once (the defaults when not set).
    sub_agents: Option<SubAgentLimits>,
    /// Keep the workspace's history (undo), in the rig's state directory.
    undo: bool,
}

fn rig_with(scenario: serde_json::Value, approvals: Approvals, extras: Extras) -> Rig {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-worlds");
    std::fs::create_dir_all(&root).unwrap();
    let (dir, resume) = match extras.resume {
        Some((dir, checkpoint)) => (dir, Some(checkpoint)),
        None => (Arc::new(tempfile::tempdir_in(&root).unwrap()), None),
    };
    let workspace = dir.path().join("ws");
    if resume.is_none() {
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(workspace.join("notes.txt"), "hello\n").unwrap();
    }
    let paths = PathContext::new(
        &workspace,
        &dir.path().join("home"),
        &dir.path().join("state"),
    )
    .unwrap();
    let workspace = paths.workspace.clone();
    let policy = Arc::new(Policy::new(
        Mode::Default,
        Rules::empty(),
        paths,
        ToolCatalog::builtin(),
    ));
    let tools = Arc::new(ToolRegistry::new(
        workspace.clone(),
        dir.path().join("home"),
        Some(dir.path().join("runs")),
    ));
    let scenario = Scenario::parse(&scenario.to_string(), "test scenario").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(Recording {
        inner: ScriptedModel::new(scenario),
        seen: seen.clone(),
    });
    let previewer = tools.clone();
    let history = extras.undo.then(|| {
        Arc::new(crate::undo::History::open(&dir.path().join("state"), "t", &workspace).unwrap())
    });
    let handle = spawn_with(
        model,
        tools,
        move |driver| {
            let approver: Arc<dyn Approver> = match approvals {
                Approvals::Driver => driver,
                Approvals::AllowAll => Arc::new(AllowAllOnce),
                Approvals::DenyAll => Arc::new(DenyAll {
                    reason: "test".into(),
                }),
                Approvals::Park => Arc::new(crate::approval::approver::ParkAll),
            };
            Gate::new(
                policy,
                Arc::new(GrantStore::new()),
                approver,
                extras.audit,
                GateConfig {
                    session: "t".into(),
                    approval_timeout: None,
                    dangerous_timeout: None,
                    grant_ttl: None,
                },
            )
            .with_previewer(previewer)
        },
        AgentConfig {
            remote: extras.remote.then(|| {
                let codes = crate::cli::codes::StateDbCodes {
                    db: dir.path().join("state/airlock.db"),
                    session: "t".into(),
                    run: "t".into(),
                    workspace: workspace.clone(),
                };
                match extras.looks {
                    Some(looks) => Arc::new(ReportedCodes {
                        inner: codes,
                        looks,
                    }) as Arc<dyn CodeBook>,
                    None => Arc::new(codes) as Arc<dyn CodeBook>,
                }
            }),
            journal: extras.journal,
            checkpoints: extras.checkpoints,
            sub_agents: extras.sub_agents.unwrap_or_default(),
            history: history
                .clone()
                .map(|h| h as Arc<dyn crate::protocol::WorkspaceHistory>),
            ..AgentConfig::default()
        },
        resume.map(|checkpoint| Resume {
            checkpoint,
            answer: extras.answer,
            show_history: true,
        }),
    );
    Rig {
        dir,
        workspace,
        handle,
        seen,
        history,
    }
}

/// Where the looks at one-time codes are reported: each with the mark the test had set when
/// the look began (so a look with mark `n` saw everything written before the mark became `n`)
/// and the answer it found.
#[derive(Clone)]
struct Looks {
    mark: Arc<std::sync::atomic::AtomicU64>,
    found: mpsc::UnboundedSender<(u64, Option<Decision>)>,
}

impl Looks {
    fn new() -> (Looks, mpsc::UnboundedReceiver<(u64, Option<Decision>)>) {
        let (found, looked) = mpsc::unbounded_channel();
        let mark = Arc::default();
        (Looks { mark, found }, looked)
    }

    fn set_mark(&self, mark: u64) {
        self.mark.store(mark, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The cockpit's code book, with every look at a code's answer reported to `looks`.
struct ReportedCodes {
    inner: crate::cli::codes::StateDbCodes,
    looks: Looks,
}

impl CodeBook for ReportedCodes {
    fn issue(&self, request: &crate::protocol::ApprovalRequest) -> Option<Box<dyn IssuedCode>> {
        let inner = self.inner.issue(request)?;
        Some(Box::new(ReportedCode {
            inner,
            looks: self.looks.clone(),
        }))
    }
}

struct ReportedCode {
    inner: Box<dyn IssuedCode>,
    looks: Looks,
}

impl IssuedCode for ReportedCode {
    fn code(&self) -> &str {
        self.inner.code()
    }

    fn answered(&self) -> Option<Decision> {
        let mark = self.looks.mark.load(std::sync::atomic::Ordering::SeqCst);
        let found = self.inner.answered();
        let _ = self.looks.found.send((mark, found.clone()));
        found
    }

    fn settle(&self, decision: &Decision) -> Option<Decision> {
        self.inner.settle(decision)
    }

    fn changes(&self) -> crate::approval::approver::BoxFuture<'static, ()> {
        self.inner.changes()
    }
}

impl Rig {
    fn submit(&self) {
        self.handle
            .ops
            .send(Op::Submit {
                prompt: "go".into(),
            })
            .unwrap();
    }

    fn op(&self, op: Op) {
        self.handle.ops.send(op).unwrap();
    }

    /// The next event, failing the test (instead of hanging) if none comes.
    async fn next(&mut self) -> AgentEvent {
        tokio::time::timeout(Duration::from_secs(30), self.handle.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("the event channel closed")
    }

    /// Events up to and including `TurnFinished`.
    async fn until_turn_finished(&mut self) -> (Vec<AgentEvent>, TurnOutcome) {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            if let AgentEvent::TurnFinished { outcome, .. } = &event {
                let outcome = outcome.clone();
                events.push(event);
                return (events, outcome);
            }
            events.push(event);
        }
    }

    fn last_results(&self) -> Vec<(String, CallResult, String)> {
        let seen = lock(&self.seen);
        seen.last()
            .unwrap()
            .iter()
            .filter_map(|m| match m {
                Message::Tool {
                    call_id,
                    result,
                    content,
                    ..
                } => Some((call_id.clone(), *result, content.clone())),
                _ => None,
            })
            .collect()
    }
}

/// Waits until `path` exists, failing after 20 s.
async fn wait_for_file(path: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn started(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolStarted { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect()
}

fn finished(events: &[AgentEvent]) -> Vec<(String, ToolStatus)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished {
                call_id, status, ..
            } => Some((call_id.clone(), *status)),
            _ => None,
        })
        .collect()
}

fn bash(command: &str) -> serde_json::Value {
    json!({"tool": "bash", "args": {"command": command}})
}

fn exists(dir: &Path, name: &str) -> bool {
    dir.join(name).exists()
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_registry() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "new.txt", "content": "x"}}, bash("touch made-by-bash")]},
            {"say": "ok", "expect": ["denied", "denied"]}
        ]}),
        Approvals::DenyAll,
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(started(&events).is_empty(), "{events:?}");
    assert!(!exists(&rig.workspace, "new.txt"));
    assert!(!exists(&rig.workspace, "made-by-bash"));
}

#[tokio::test]
async fn approved_calls_run_concurrently() {
    // Each call waits for the other to have started: run one after the other, both would time
    // out; run together, both finish.
    let wait_for = |mine: &str, other: &str| {
        json!({"tool": "bash", "args": {
            "command": format!("touch {mine}; for i in $(seq 1 500); do [ -e {other} ] && exit 0; sleep 0.02; done; exit 9"),
            "timeout_ms": 20000
        }})
    };
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [wait_for("a.started", "b.started"), wait_for("b.started", "a.started")]},
            {"say": "both ran", "expect": ["ok", "ok"]}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (events, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed, "{events:?}");
    let mut done = finished(&events);
    done.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        done,
        vec![("c1".into(), ToolStatus::Ok), ("c2".into(), ToolStatus::Ok)]
    );
}

#[tokio::test]
async fn observations_keep_model_order_when_tools_finish_out_of_order() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [
                {"tool": "bash", "args": {"command": "while [ ! -e go ]; do sleep 0.02; done; echo first"}},
                bash("echo second"),
                {"tool": "read_file", "args": {"path": "notes.txt"}}
            ]},
            {"say": "done"}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    // The first call ends only once the other two are reported finished.
    let mut events = Vec::new();
    while finished(&events).len() < 2 {
        events.push(rig.next().await);
    }
    std::fs::write(rig.workspace.join("go"), "").unwrap();
    let (rest, _) = rig.until_turn_finished().await;
    events.extend(rest);
    let order: Vec<String> = finished(&events).into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        order.last().map(String::as_str),
        Some("c1"),
        "c1 finishes last: {order:?}"
    );
    let results = rig.last_results();
    let ids: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["c1", "c2", "c3"]);
    assert!(results[0].2.contains("first"));
    assert!(results[1].2.contains("second"));
    assert!(results[2].2.contains("hello"));
}

#[tokio::test]
async fn a_failing_tool_still_yields_an_observation() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [
                bash("echo about to fail; exit 3"),
                {"tool": "edit_file", "args": {"path": "notes.txt", "old": "absent", "new": "x"}},
                {"tool": "read_file", "args": {"path": "missing.txt"}}
            ]},
            {"say": "noted", "expect": ["failed", "failed", "failed"]}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let results = rig.last_results();
    assert!(
        results[0].2.starts_with("exit code 3\nabout to fail"),
        "{:?}",
        results[0]
    );
    assert!(results[1].2.contains("not found"), "{:?}", results[1]);
    assert!(
        results[2].2.contains("cannot read missing.txt"),
        "{:?}",
        results[2]
    );
}

#[tokio::test]
async fn a_denial_reaches_the_model_with_its_reasons() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("cat ~/.ssh/id_rsa")]},
            {"say": "understood", "expect": ["denied"]}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let results = rig.last_results();
    assert!(
        results[0].2.contains("reasons:\n- deny:"),
        "{}",
        results[0].2
    );
}

#[tokio::test]
async fn cancelling_one_tool_kills_its_process_group_and_leaves_the_others_running() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [
                {"tool": "bash", "args": {"command": "sleep 300 & echo $! > child.pid; echo started; wait"}},
                bash("while [ ! -e go ]; do sleep 0.02; done; echo finished")
            ]},
            {"say": "ok"}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    let mut events = Vec::new();
    loop {
        let event = rig.next().await;
        if let AgentEvent::ToolOutput { call_id, text, .. } = &event
            && call_id == "c1"
            && text.contains("started")
        {
            rig.op(Op::CancelTool {
                call_id: "c1".into(),
            });
        }
        if let AgentEvent::ToolFinished { call_id, .. } = &event
            && call_id == "c1"
        {
            std::fs::write(rig.workspace.join("go"), "").unwrap();
        }
        let done = matches!(event, AgentEvent::TurnFinished { .. });
        events.push(event);
        if done {
            break;
        }
    }
    let mut result = finished(&events);
    result.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        result,
        vec![
            ("c1".into(), ToolStatus::Cancelled),
            ("c2".into(), ToolStatus::Ok)
        ]
    );
    let pid: i32 = std::fs::read_to_string(rig.workspace.join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The background `sleep` was in the cancelled group: it is gone (or a zombie waiting for
    // whoever adopted it to reap it, which is dead all the same).
    let running = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit(')')
                    .next()
                    .map(|rest| rest.trim_start().to_string())
            })
            .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while running(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the background child {pid} outlived its cancelled tool"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_second_submit_during_a_turn_is_refused_and_the_turn_goes_on() {
    let mut rig = rig(
        json!({"name": "t", "steps": [
            {"calls": [bash("while [ ! -e go ]; do sleep 0.02; done")]},
            {"say": "done"}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    rig.submit();
    // The turn's call runs until the second submit has been answered.
    let refused = loop {
        match rig.next().await {
            AgentEvent::Error { message } => break message,
            AgentEvent::TurnFinished { .. } => panic!("the turn ended with its call still waiting"),
            _ => {}
        }
    };
    assert!(refused.contains("already running"), "{refused}");
    std::fs::write(rig.workspace.join("go"), "").unwrap();
    let (_, outcome) = rig.until_turn_finished().await;
    assert_eq!(outcome, TurnOutcome::Completed);
}

mod batch;
mod changes;
mod checkpoints;
mod decisions;
mod journal;
mod malformed;
mod notices;
mod parked_tree;
mod review;
mod subagents;
mod undo;
