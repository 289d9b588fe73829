//! `airlock exec`: the agent without a UI. Prints one JSON event per line. With nobody to ask, it
//! fails closed: `--approvals deny` (the default) denies whatever would ask;
//! `--approvals dangerously-allow-all` answers asks with allow-once (hard denies still hold).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use crate::agent::{self, AgentConfig};
use crate::approval::approver::{AllowAllOnce, Approver, DenyAll};
use crate::approval::gate::{Gate, GateConfig};
use crate::approval::policy::{Mode, Policy};
use crate::config::{ProcessEnv, resolve};
use crate::facts::catalog::ToolCatalog;
use crate::facts::paths::PathContext;
use crate::protocol::{AgentEvent, HookEvent, Op, TurnOutcome};
use crate::sandbox::{Sandbox, SandboxPolicy, Support};
use crate::store;
use crate::tools::ToolRegistry;

pub use super::exec_args::{ExecArgs, HeadlessApprovals};

mod human;
pub use human::human_line;

/// Exit status of `airlock exec`, documented in the README.
pub mod status {
    pub const COMPLETED: u8 = 0;
    pub const FAILED: u8 = 1;
    pub const INTERRUPTED: u8 = 3;
    pub const STEP_LIMIT: u8 = 4;
    pub const PARKED: u8 = 5;
}

pub fn session_id(prefix: &str) -> String {
    let millis = crate::clock::now_ms();
    format!("{prefix}-{millis}-{}", std::process::id())
}

/// An agent started for a session, with what a driver shows about it.
pub struct Started {
    pub handle: crate::protocol::AgentHandle,
    pub session: String,
    pub workspace: PathBuf,
    pub prompt: String,
    pub model: String,
    pub mode: Mode,
    /// Things the person should know before the first turn (ignored project settings).
    pub notices: Vec<String>,
    /// Where a cockpit keeps its session (none for headless runs).
    pub journal: Option<Arc<super::sessions::CockpitJournal>>,
    /// Why commands run without a sandbox, when they do (said in the status bar).
    pub no_sandbox: Option<String>,
    /// The profile commands run under when they name none.
    pub sandbox: crate::sandbox::Profile,
    /// The policy files in force as this session found them (kept with a run's checkpoints).
    pub policy: crate::config::fingerprint::PolicyFingerprint,
    /// Where a headless run keeps its checkpoints (none for the cockpit).
    pub checkpoints: Option<Arc<super::runs::RunCheckpoints>>,
    /// How the cockpit announces a waiting request when the terminal has no focus.
    pub notify: crate::ui::notify::NotifyMethod,
    /// The session's workspace history (undo), when it can be kept.
    pub history: Option<Arc<crate::undo::History>>,
    /// The approval page's settings, when it is to be served (`--remote`, `[remote]`,
    /// `--approvals remote`); the driver starts it.
    pub remote: Option<crate::remote::Settings>,
    /// The person's hooks, when the config has any (the driver runs SessionStart and Stop).
    pub hooks: Option<Arc<crate::hooks::HookRunner>>,
}

impl Started {
    /// What the cockpit's status bar shows about this session.
    pub fn status(&self) -> crate::ui::app::Status {
        crate::ui::app::Status {
            model: self.model.clone(),
            mode: match &self.no_sandbox {
                Some(_) => format!("{} · NO SANDBOX", self.mode.as_str()),
                None => self.mode.as_str().to_string(),
            },
            workspace: self.workspace.display().to_string(),
        }
    }

    /// The prompt the cockpit submits by itself: the scripted model's (a scenario or the demo)
    /// starts the turn; with a real model the person types the first one, so nothing talks to
    /// the network before they do.
    pub fn opening_prompt(&self, scenario_given: bool) -> Option<String> {
        (scenario_given || self.model.starts_with("scripted")).then(|| self.prompt.clone())
    }
}

/// Builds the session (workspace, policy, audit, tools, model) and starts the agent. With
/// `headless` set, that approver answers every ask; without, asks go to the driver as events.
pub fn start(args: &ExecArgs, headless: Option<Arc<dyn Approver>>) -> Result<Started> {
    start_with(args, headless, None, None)
}

/// `start`, continuing an existing session (its audit chain) and, if given, a parked turn.
pub fn start_with(
    args: &ExecArgs,
    headless: Option<Arc<dyn Approver>>,
    session: Option<String>,
    resume: Option<agent::Resume>,
) -> Result<Started> {
    let session = session.unwrap_or_else(|| {
        session_id(if headless.is_some() {
            "exec"
        } else {
            "cockpit"
        })
    });
    let state = store::state_dir();
    let (workspace, real_model) = super::session::workspace_for(args, &session, &state)?;
    let config = resolve(&workspace, &args.config, &ProcessEnv, &state)?;
    let notices = super::session::config_notices(&config, headless.is_some());
    let home = crate::facts::paths::home_dir();
    let paths = path_context(&workspace, &home, &state, &config)?;
    let workspace = paths.workspace.clone();
    // MCP servers connect in the background once the agent runs; none configured costs nothing.
    let mcp = super::mcp::hub_for(&config, &workspace);
    let (model, prompt, no_key) =
        super::session::model_for(args, &config, &workspace, real_model, mcp.as_ref())?;
    // A headless run answered on the approval page: its gate asks through the driver's channel
    // (whose one-time codes the page answers), for as long as the approval timeout.
    let page_answers = headless.is_some() && args.approvals == HeadlessApprovals::Remote;
    let approval_timeout = match page_answers {
        true => config.approval_timeout_secs.or(Some(PAGE_WAIT_SECS)),
        false => config.approval_timeout_secs,
    };
    let remote = super::remote::settings(
        &config,
        args.config.remote || page_answers,
        match headless {
            Some(_) => crate::remote::Scope::Session(session.clone()),
            None => crate::remote::Scope::Everything,
        },
        &state,
    )?;
    let notify = match &config.notify {
        None => crate::ui::notify::NotifyMethod::default(),
        Some(text) => crate::ui::notify::NotifyMethod::parse(text).map_err(|e| {
            anyhow::anyhow!(
                "{}: `notify`: {e}; fix it there (see README.md, Sub-agents and the inbox)",
                config.user_config.display()
            )
        })?,
    };
    let sub_agents = {
        let defaults = crate::agent::SubAgentLimits::default();
        crate::agent::SubAgentLimits {
            max_depth: config.agents.max_depth.unwrap_or(defaults.max_depth),
            max_running: config.agents.max_running.unwrap_or(defaults.max_running),
        }
    };
    let dangerous_timeout = config.dangerous_approval_timeout_secs;
    let sandbox_paths = paths.clone();
    let mut policy = policy_of(&config, paths)?;
    if let Some(hub) = &mcp {
        policy = policy.with_mcp(hub.catalog());
    }
    let policy = Arc::new(policy);
    let hooks = super::hooks::runner(&config, &state);
    let gate_hooks = hooks.clone().map(|h| h as Arc<dyn crate::protocol::Hooks>);
    let sandbox = policy.sandbox.clone().unwrap_or(SandboxPolicy {
        default: config.sandbox.value,
        support: sandbox_support(),
    });
    let mut notices = notices;
    for notice in [sandbox.support.notice(), no_key].into_iter().flatten() {
        if headless.is_some() {
            eprintln!("airlock: {}", crate::visible::visible_line(&notice));
        }
        notices.push(notice);
    }
    let runs = store::runs::runs_dir(&state);
    super::session::private_dirs(&state, &runs)?;
    let audit = super::session::audit_log(&state, &session)?;
    // The workspace before each call that may change it, kept so the call can be undone.
    let history = match crate::undo::History::open(&state, &session, &workspace) {
        Ok(history) => Some(Arc::new(history)),
        Err(e) => {
            let notice = format!("undo is off for this session: its history cannot be kept ({e})");
            if headless.is_some() {
                eprintln!("airlock: {}", crate::visible::visible_line(&notice));
            }
            notices.push(notice);
            None
        }
    };
    let tools = tools_for(
        &config,
        ToolRegistry::new(workspace.clone(), home, Some(runs.join(&session))),
        Sandbox::new(
            crate::sandbox::installed_launcher(),
            sandbox.clone(),
            sandbox_paths,
        ),
        mcp.as_ref(),
    );
    super::session::start_background_work(&tools, &runs, &session);
    let previewer = tools.clone();
    let session_for_gate = session.clone();
    // Session grants live in the state database too, so a resumed run keeps them.
    let grants = super::session::saved_grants(&session, headless.is_some(), &mut notices);
    let grant_log = super::session::grant_log(&session);
    let model_name = model.name();
    let is_headless = headless.is_some();
    // The policy files as this session found them: kept with its checkpoints and its journal.
    let policy_files = crate::config::fingerprint::PolicyFingerprint::of(&config.active_files());
    let mut kept = Kept::of(args, is_headless, &session, &workspace, &policy_files)?;
    if page_answers {
        kept.remote_codes = Some(Arc::new(super::codes::StateDbCodes {
            db: super::runs::db_path(),
            session: session.clone(),
            run: format!("{session}.page"),
            workspace: workspace.clone(),
        }));
    }
    let (journal, remote_codes, checkpoints) = (kept.journal, kept.remote_codes, kept.checkpoints);
    let handle = agent::spawn_with(
        model,
        tools,
        move |driver| {
            Gate::new(
                policy,
                grants,
                match headless {
                    Some(headless) if !page_answers => headless,
                    _ => driver,
                },
                Some(audit),
                GateConfig {
                    session: session_for_gate,
                    approval_timeout: approval_timeout.map(std::time::Duration::from_secs),
                    dangerous_timeout: dangerous_timeout.map(std::time::Duration::from_secs),
                    grant_ttl: None,
                },
            )
            .with_previewer(previewer)
            .with_grant_log(grant_log)
            .with_hooks(gate_hooks)
        },
        AgentConfig {
            remote: remote_codes,
            checkpoints: checkpoints
                .clone()
                .map(|c| c as Arc<dyn crate::agent::Checkpoints>),
            journal: journal.clone().map(|j| j as Arc<dyn crate::agent::Journal>),
            sub_agents,
            history: history
                .clone()
                .map(|h| h as Arc<dyn crate::protocol::WorkspaceHistory>),
            ..AgentConfig::default()
        },
        resume,
    );
    if let Some(hub) = &mcp {
        connect(hub, &handle);
    }
    Ok(Started {
        notify,
        handle,
        session,
        workspace,
        prompt,
        model: model_name,
        mode: config.mode.value,
        notices,
        journal,
        no_sandbox: sandbox.support.notice(),
        sandbox: sandbox.default,
        policy: policy_files,
        checkpoints,
        history,
        remote,
        hooks,
    })
}

/// How long a headless run waits for an answer on the approval page when the config sets no
/// approval timeout.
pub const PAGE_WAIT_SECS: u64 = 30 * 60;

/// The session's tools: in the sandbox, with every key variable the config names (the
/// providers' and the MCP servers' tokens) kept out of every command like the known ones, and
/// the MCP servers' tools when there are any.
fn tools_for(
    config: &crate::config::Resolved,
    tools: ToolRegistry,
    sandbox: Sandbox,
    mcp: Option<&Arc<crate::mcp::McpHub>>,
) -> Arc<ToolRegistry> {
    let mut tools = tools.sandboxed(sandbox).hiding_env(key_env_names(config));
    if let Some(hub) = mcp {
        tools = tools.with_mcp(hub.clone());
    }
    Arc::new(tools)
}

/// Every key variable the config names: the providers' and the MCP servers' tokens (kept out of
/// every command and every hook, beside the known ones).
pub fn key_env_names(config: &crate::config::Resolved) -> impl Iterator<Item = String> + '_ {
    config.api_key_env.iter().map(|s| s.value.clone()).chain(
        config
            .mcp_servers
            .iter()
            .filter_map(|s| s.config.bearer_token_env.clone()),
    )
}

/// What a session keeps in the state database: a cockpit its journal (so it can be reopened)
/// and the one-time codes that answer its requests from another terminal; a headless run its
/// checkpoints (so a killed run can be resumed).
struct Kept {
    journal: Option<Arc<super::sessions::CockpitJournal>>,
    remote_codes: Option<Arc<dyn crate::agent::CodeBook>>,
    checkpoints: Option<Arc<super::runs::RunCheckpoints>>,
}

impl Kept {
    fn of(
        args: &ExecArgs,
        headless: bool,
        session: &str,
        workspace: &std::path::Path,
        policy_files: &crate::config::fingerprint::PolicyFingerprint,
    ) -> Result<Kept> {
        if headless {
            return Ok(Kept {
                journal: None,
                remote_codes: None,
                checkpoints: Some(Arc::new(super::runs::RunCheckpoints::new(
                    args,
                    policy_files,
                    session,
                    workspace,
                ))),
            });
        }
        let (journal, codes) =
            super::session::cockpit_stores(args, session, workspace, policy_files)?;
        Ok(Kept {
            journal: Some(journal),
            remote_codes: Some(codes),
            checkpoints: None,
        })
    }
}

/// Starts the MCP servers in the background. A server that fails is said where the person is
/// looking (the cockpit's conversation, an `error` event), not only in `airlock mcp list`.
fn connect(hub: &crate::mcp::McpHub, handle: &crate::protocol::AgentHandle) {
    hub.connect_in_background();
    // A weak sender: the reporter never keeps the agent's op channel open by itself.
    let (catalog, ops) = (hub.catalog(), handle.ops.downgrade());
    tokio::spawn(async move {
        catalog
            .report_failures(|message| {
                ops.upgrade()
                    .is_some_and(|ops| ops.send(Op::Notice { message }).is_ok())
            })
            .await;
    });
}

/// The policy a session judges calls by: the mode and rules in force, on `paths`.
fn policy_of(config: &crate::config::Resolved, paths: PathContext) -> Result<Policy> {
    Ok(Policy::new(
        config.mode.value,
        config.load_rules()?,
        paths,
        ToolCatalog::builtin(),
    )
    .with_sandbox(SandboxPolicy {
        default: config.sandbox.value,
        support: sandbox_support(),
    }))
}

/// What the kernel supports, found once; missing too when airlock cannot find its own binary,
/// which the launcher is.
fn sandbox_support() -> Support {
    match std::env::current_exe() {
        Ok(_) => Support::current(),
        Err(e) => Support::Missing {
            why: format!("cannot find airlock's own binary to start the sandbox launcher ({e})"),
        },
    }
}

/// The policy a session of `args` on `workspace` would judge calls by now (config, rules and
/// the filesystem read afresh), without starting anything: for judging a parked call again.
pub fn policy_for(args: &ExecArgs, workspace: &std::path::Path) -> Result<Policy> {
    let state = store::state_dir();
    let config = resolve(workspace, &args.config, &ProcessEnv, &state)?;
    let paths = path_context(workspace, &crate::facts::paths::home_dir(), &state, &config)?;
    let policy = policy_of(&config, paths)?;
    if config.mcp_servers.is_empty() && config.mcp_not_trusted.is_empty() {
        return Ok(policy);
    }
    // MCP calls are judged on their tools as last listed (the pins); nothing is started.
    let catalog = crate::mcp::catalog_from_pins(
        &config.mcp_servers,
        &crate::store::db::StatePins(super::runs::db_path()),
    );
    for name in &config.mcp_not_trusted {
        catalog.set_state(name, crate::mcp::ServerState::NotTrusted);
    }
    Ok(policy.with_mcp(catalog))
}

/// The places a session's calls are judged against, with the config and rules files in force
/// protected from the agent.
fn path_context(
    workspace: &std::path::Path,
    home: &std::path::Path,
    state: &std::path::Path,
    config: &crate::config::Resolved,
) -> Result<PathContext> {
    Ok(PathContext::new(workspace, home, state)
        .with_context(|| {
            format!(
                "the workspace {} does not exist or cannot be read",
                workspace.display()
            )
        })?
        .with_protected_files(&config.active_files()))
}

pub fn headless_approver(approvals: HeadlessApprovals) -> Arc<dyn Approver> {
    match approvals {
        HeadlessApprovals::Deny => Arc::new(DenyAll {
            reason: "nobody is there to approve it (airlock exec --approvals deny)".into(),
        }),
        HeadlessApprovals::DangerouslyAllowAll => Arc::new(AllowAllOnce),
        HeadlessApprovals::Park => Arc::new(crate::approval::approver::ParkAll),
        // Never asked: such a run's gate asks through the driver's channel, whose codes the
        // approval page answers (see `start_with`). Were it asked, it would deny.
        HeadlessApprovals::Remote => Arc::new(DenyAll {
            reason: "nobody answered on the approval page".into(),
        }),
    }
}

pub async fn run(args: ExecArgs, mut out: impl Write) -> Result<u8> {
    let started = start(&args, Some(headless_approver(args.approvals)))?;
    if started.prompt.trim().is_empty() {
        let _ = started.handle.ops.send(Op::Shutdown);
        bail!(
            "no prompt: with a model configured, give it on the command line: airlock exec \"PROMPT\""
        );
    }
    if args.human {
        let scripted = started.model.starts_with("scripted");
        let asks = match args.approvals {
            HeadlessApprovals::Deny => "asks are denied: nobody is there to approve them",
            HeadlessApprovals::Park => "asks are parked for a one-time code",
            HeadlessApprovals::Remote => "asks wait for an answer on the approval page",
            HeadlessApprovals::DangerouslyAllowAll => {
                "asks are allowed once each (--approvals dangerously-allow-all)"
            }
        };
        let sandbox = match &started.no_sandbox {
            Some(_) => "NO SANDBOX (every command asks)".to_string(),
            None if started.sandbox == crate::sandbox::Profile::Off => {
                "NO SANDBOX (--sandbox off)".to_string()
            }
            None => format!("sandbox {}", started.sandbox.as_str()),
        };
        writeln!(
            out,
            "{} ({asks})\nworkspace: {}{}\nmode {}, {sandbox}",
            if scripted {
                "airlock demo (offline, scripted model)".to_string()
            } else {
                format!("airlock ({})", crate::visible::visible_line(&started.model))
            },
            started.workspace.display(),
            if scripted && args.workspace.is_none() {
                " (a scratch copy)"
            } else {
                ""
            },
            started.mode.as_str()
        )?;
    } else {
        writeln!(
            out,
            "{}",
            serde_json::json!({"event": "session", "session": started.session, "workspace": started.workspace})
        )?;
    }
    // Served while the run lasts: dropped with it.
    let _page = super::remote::serve_page(&args, &started, &mut out).await?;
    let (hooks, session, workspace) = (
        started.hooks.clone(),
        started.session.clone(),
        started.workspace.clone(),
    );
    super::hooks::session_event(
        hooks.as_ref(),
        HookEvent::SessionStart,
        &session,
        &workspace,
    )
    .await;
    started
        .handle
        .ops
        .send(Op::Submit {
            prompt: started.prompt.clone(),
        })
        .context("the agent task ended before it started")?;
    let code = drive(&args, started, &mut out).await;
    super::hooks::session_event(hooks.as_ref(), HookEvent::Stop, &session, &workspace).await;
    code
}

/// Prints the agent's events until its turn ends; parks the run if the turn parked.
pub async fn drive(args: &ExecArgs, started: Started, out: &mut impl Write) -> Result<u8> {
    let Started {
        mut handle,
        session,
        checkpoints,
        ..
    } = started;
    let mut code = status::FAILED;
    let mut in_text = false;
    // Each sub-agent's text so far, printed whole before its next other event.
    let mut sub_text: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    // Each call's output since its last whole line (`--human`).
    let mut partial: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    while let Some(event) = handle.events.recv().await {
        // The agent keeps its checkpoints as the turn moves; one it could not keep ends the
        // run here (it could not go on later from where it stands).
        if let Some(why) = checkpoints.as_ref().and_then(|c| c.failure()) {
            bail!("this run's checkpoint could not be kept: {why}");
        }
        // Checkpoints go to the keeper, not through events; one would not be printed.
        if let AgentEvent::Checkpoint { .. } = &event {
            continue;
        }
        if let AgentEvent::TurnFinished {
            outcome:
                TurnOutcome::Parked {
                    checkpoint,
                    request,
                },
            ..
        } = &event
        {
            let Some(keeper) = &checkpoints else {
                bail!("a turn parked in a run that keeps no checkpoints");
            };
            let parked = super::runs::park(keeper, checkpoint, request)?;
            if args.human {
                write!(out, "{}", human::parked_lines(&parked))?;
            } else {
                writeln!(out, "{}", serde_json::to_string(&parked)?)?;
            }
            code = status::PARKED;
            let _ = handle.ops.send(Op::Shutdown);
            continue;
        }
        if args.human {
            // A sub-agent's events are printed as its own: its text whole (not interleaved word
            // by word with another agent's), each line marked with its id.
            let (tag, event) = match event.clone() {
                AgentEvent::Agent { agent, event } => (Some(agent), *event),
                event => (None, event),
            };
            let owner = match (&tag, &event) {
                (Some(agent), _) | (None, AgentEvent::AgentFinished { agent, .. }) => {
                    Some(agent.clone())
                }
                _ => None,
            };
            if let Some(agent) = &owner {
                if let (Some(_), AgentEvent::TextDelta { text }) = (&tag, &event) {
                    sub_text.entry(agent.clone()).or_default().push_str(text);
                    continue;
                }
                if let Some(text) = sub_text.remove(agent).filter(|t| !t.trim().is_empty()) {
                    let said = human_line(&AgentEvent::TextDelta {
                        text: format!("\n{}", text.trim_end()),
                    })
                    .unwrap_or_default();
                    write!(out, "{}", human::prefixed(&said, &format!("[{agent}] ")))?;
                }
                // Its end is said by `AgentFinished`.
                if tag.is_some() && matches!(event, AgentEvent::TurnFinished { .. }) {
                    continue;
                }
            }
            let is_text = tag.is_none() && matches!(event, AgentEvent::TextDelta { .. });
            if is_text && !in_text {
                writeln!(out)?;
                writeln!(out)?;
            }
            in_text = is_text || (in_text && matches!(event, AgentEvent::TurnStarted { .. }));
            // Output arrives in writes, not lines: a line is printed once it is whole (or its
            // call finished), never split over two.
            let text = match &event {
                AgentEvent::ToolOutput { call_id, text, .. } => {
                    let held = partial.entry(call_id.clone()).or_default();
                    held.push_str(text);
                    match held.rfind('\n') {
                        Some(end) => {
                            let whole: String = held.drain(..=end).collect();
                            let mut event = event.clone();
                            if let AgentEvent::ToolOutput { text, .. } = &mut event {
                                *text = whole;
                            }
                            human_line(&event)
                        }
                        None => {
                            // Skipped-line notes still show at once.
                            let mut event = event.clone();
                            if let AgentEvent::ToolOutput { text, skipped, .. } = &mut event {
                                text.clear();
                                if *skipped == 0 {
                                    continue;
                                }
                            }
                            human_line(&event)
                        }
                    }
                }
                AgentEvent::ToolFinished { call_id, .. } => {
                    let rest = partial.remove(call_id).filter(|r| !r.is_empty());
                    let rest = rest.and_then(|text| {
                        human_line(&AgentEvent::ToolOutput {
                            call_id: call_id.clone(),
                            stream: crate::protocol::Stream::Stdout,
                            text,
                            skipped: 0,
                        })
                    });
                    human_line(&event).map(|line| format!("{}{line}", rest.unwrap_or_default()))
                }
                _ => human_line(&event),
            };
            if let Some(text) = text {
                match &tag {
                    Some(agent) => {
                        write!(out, "{}", human::prefixed(&text, &format!("[{agent}] ")))?
                    }
                    None => write!(out, "{text}")?,
                }
            }
        } else {
            writeln!(
                out,
                "{}",
                serde_json::to_string(&human::event_json(&event))?
            )?;
        }
        out.flush()?;
        match &event {
            AgentEvent::TurnFinished { outcome, .. } => {
                code = match outcome {
                    TurnOutcome::Completed => status::COMPLETED,
                    TurnOutcome::Interrupted => status::INTERRUPTED,
                    TurnOutcome::StepLimit => status::STEP_LIMIT,
                    TurnOutcome::Failed { .. } => status::FAILED,
                    TurnOutcome::Parked { .. } => status::PARKED,
                };
                let state = match code {
                    status::COMPLETED => "done",
                    status::INTERRUPTED => "interrupted",
                    _ => "failed",
                };
                super::runs::finish(&session, state);
                let _ = handle.ops.send(Op::Shutdown);
            }
            AgentEvent::ShutdownComplete => break,
            _ => {}
        }
    }
    let _ = handle.task.await;
    Ok(code)
}
