//! The pieces a session is built from, for `exec::start_with` (the composition root of the
//! cockpit, `airlock exec` and the benchmarks): the model, the private state directories, the
//! background work kept off the start-up path, and the session grants kept in the state
//! database. Each piece is built here; `start_with` only puts them together.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::codes::StateDbCodes;
use super::exec_args::ExecArgs;
use super::sessions::CockpitJournal;
use crate::agent::CodeBook;
use crate::approval::audit::AuditLog;
use crate::approval::gate::GrantLog;
use crate::approval::grants::GrantStore;
use crate::config::{ProcessEnv, Resolved, resolve};
use crate::mcp::McpHub;
use crate::model::ModelClient;
use crate::model::http::{HttpModel, HttpModelConfig, RetryPolicy, system_prompt};
use crate::model::scripted::{Scenario, ScriptedModel};
use crate::tools::ToolRegistry;
use crate::{demo, store};

/// Where the session works, and whether a real model is configured: with a model configured
/// (and no scenario asked for), the agent works where it was started (or in `--workspace`);
/// otherwise the scripted demo plays on a scratch copy, never on the user's files.
pub fn workspace_for(args: &ExecArgs, session: &str, state: &Path) -> Result<(PathBuf, bool)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let probe = resolve(
        args.workspace.as_deref().unwrap_or(&here),
        &args.config,
        &ProcessEnv,
        state,
    )?;
    let real_model = args.scenario.is_none() && probe.provider.is_some();
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None if real_model => here,
        None => demo::scratch_copy(&demo::scratch_root(), session)?,
    };
    Ok((workspace, real_model))
}

/// What the configuration has to say (an untrusted project file, ignored settings), printed on
/// stderr too when no cockpit will show it.
pub fn config_notices(config: &Resolved, headless: bool) -> Vec<String> {
    let notices: Vec<String> = config
        .trust_note
        .iter()
        .cloned()
        .chain(config.ignored.iter().map(|i| format!("ignored {i}")))
        .collect();
    if headless {
        for notice in &notices {
            eprintln!("airlock: {}", crate::visible::visible_line(notice));
        }
    }
    notices
}

/// The session's audit log, anchored in the state database as it grows, so `audit verify` can
/// tell a log cut or recomputed next to its head file.
pub fn audit_log(state: &Path, session: &str) -> Result<Arc<AuditLog>> {
    let anchor = crate::store::db::DbAnchor::open(&super::runs::db_path())?;
    Ok(Arc::new(AuditLog::open_anchored(
        &store::audit_dir(state),
        session,
        Box::new(anchor),
    )?))
}

/// The model a session talks to, and its first prompt: the configured provider when there is
/// one and no scenario was asked for, otherwise the scripted model playing the scenario (the
/// built-in demo by default).
pub fn model_for(
    args: &ExecArgs,
    config: &Resolved,
    workspace: &Path,
    real_model: bool,
    mcp: Option<&Arc<McpHub>>,
) -> Result<(Arc<dyn ModelClient>, String, Option<String>)> {
    let env = ProcessEnv;
    let mut no_key = None;
    let (model, prompt): (Arc<dyn ModelClient>, String) = if real_model {
        let Some(provider) = &config.provider else {
            bail!("no provider configured")
        };
        let kind = provider.value;
        let Some(model_name) = config.model.as_ref().map(|m| m.value.clone()) else {
            bail!(
                "a provider is configured ({}) but no model: set `model` in the config, $AIRLOCK_MODEL or --model",
                provider.source
            )
        };
        // The cockpit lets the person type the first prompt; `exec` needs one (checked there).
        let prompt = args.prompt.clone().unwrap_or_default();
        let api_key = config.api_key(&env)?;
        if api_key.is_none() {
            let whence = match (&config.api_key_command, &config.api_key_env) {
                (Some(cmd), _) => {
                    format!("the api_key_command from {} printed nothing", cmd.source)
                }
                (None, Some(var)) => format!("${} (named by {}) is not set", var.value, var.source),
                (None, None) => format!(
                    "${} is not set",
                    match kind {
                        crate::model::http::ProviderKind::OpenAi => "OPENAI_API_KEY",
                        crate::model::http::ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
                    }
                ),
            };
            no_key = Some(format!(
                "no API key: {whence}; requests go out without one, which a local server may \
                 accept and {} refuses",
                kind.name()
            ));
        }
        let mut model = HttpModel::new(HttpModelConfig {
            kind,
            base_url: config
                .base_url
                .as_ref()
                .map(|b| b.value.clone())
                .unwrap_or_else(|| kind.default_base_url().to_string()),
            model: model_name,
            api_key,
            max_tokens: config.max_tokens.value,
            system: system_prompt(workspace),
            connect_timeout: std::time::Duration::from_secs(10),
            read_timeout: std::time::Duration::from_secs(config.read_timeout_secs.value),
            retry: RetryPolicy::default(),
        })?;
        model.mcp = mcp.map(|hub| hub.catalog());
        (Arc::new(model), prompt)
    } else {
        // A model named without a provider would otherwise play the demo, silently.
        if let (None, Some(model)) = (&args.scenario, &config.model) {
            bail!(
                "a model is named ({}, from {}) but no provider: add --provider openai (any \
                 OpenAI-compatible server) or --provider anthropic, or set `provider` in the \
                 config; without a model airlock plays its offline demo",
                crate::visible::visible_line(&model.value),
                model.source
            );
        }
        let scenario = match &args.scenario {
            Some(path) => Scenario::load(path)?,
            None => Scenario::parse(demo::SCENARIO, "the built-in demo scenario")?,
        };
        let prompt = match (&args.prompt, &scenario.prompt) {
            (Some(p), _) => p.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => {
                bail!("no prompt: pass one on the command line, or add \"prompt\" to the scenario")
            }
        };
        (Arc::new(ScriptedModel::new(scenario)), prompt)
    };
    Ok((model, prompt, no_key))
}

/// The state directory and its audit and run-log directories, made private to this user.
pub fn private_dirs(state: &Path, runs: &Path) -> Result<()> {
    // What the agent asked for and every byte its tools printed: for this user's eyes only.
    for dir in [
        state.to_path_buf(),
        store::audit_dir(state),
        runs.to_path_buf(),
    ] {
        store::private_dir(&dir).with_context(|| {
            format!(
                "cannot make {} private to you (mode 0700); check its owner",
                dir.display()
            )
        })?;
    }
    Ok(())
}

/// Work kept off the start-up path: the sandbox's plan for the default profile (after the temp
/// dirs of dead sessions are swept) and the pruning of old run logs.
pub fn start_background_work(tools: &ToolRegistry, runs: &Path, session: &str) {
    // The sandbox's plan for the default profile is made off the start-up path too, after the
    // temp dirs of sessions that died are swept (the plan may have to list the temp dir).
    if let Some(sandbox) = tools
        .sandbox
        .clone()
        .filter(|s| s.policy.support.available())
        && sandbox.policy.default != crate::sandbox::Profile::Off
    {
        std::thread::spawn(move || {
            crate::sandbox::leftovers::sweep(&std::env::temp_dir());
            sandbox.plan(sandbox.policy.default)
        });
    }
    // Old run logs go (by age, then within a disk budget), off the start-up path; so does old
    // undo history, by the same rules.
    let (runs, keep) = (runs.to_path_buf(), session.to_string());
    std::thread::spawn(move || {
        let now = std::time::SystemTime::now();
        store::runs::prune(
            &runs,
            &keep,
            now,
            store::runs::MAX_AGE,
            store::runs::BUDGET_BYTES,
        );
        crate::undo::prune::prune_now_and_then(
            &store::state_dir(),
            &keep,
            now,
            crate::undo::prune::Bounds::default(),
        );
    });
}

/// The session's grants as the state database kept them (live ones only), so a resumed
/// session keeps what was allowed for it. A database that cannot be read gives none, and says
/// why in `notices` (and on stderr when headless).
pub fn saved_grants(session: &str, headless: bool, notices: &mut Vec<String>) -> Arc<GrantStore> {
    let grants = Arc::new(GrantStore::new());
    let db_path = super::runs::db_path();
    if let Ok(db) = crate::store::db::Store::open(&db_path) {
        let saved = db.grants(session).unwrap_or_else(|e| {
            if headless {
                eprintln!("airlock: {e}");
            }
            notices.push(e.to_string());
            None
        });
        if let Some(saved) = saved {
            let now = crate::clock::now_ms();
            let saved: Vec<crate::approval::grants::Grant> =
                serde_json::from_str(&saved).unwrap_or_default();
            for g in saved
                .into_iter()
                .filter(|g| g.expires_ms.is_none_or(|e| e > now))
            {
                grants.add(
                    crate::approval::grants::NewGrant {
                        session: g.session,
                        workspace: g.workspace,
                        tool: g.tool,
                        scope: g.scope,
                        ttl_ms: g.expires_ms.map(|e| e - now),
                        max_uses: g.max_uses.map(|m| m.saturating_sub(g.uses)),
                    },
                    now,
                );
            }
        }
    }
    grants
}

/// Writes the session's grants to the state database whenever they change.
pub fn grant_log(session: &str) -> GrantLog {
    let db_path = super::runs::db_path();
    let grant_session = session.to_string();
    Arc::new(move |list| {
        if let (Ok(db), Ok(json)) = (
            crate::store::db::Store::open(&db_path),
            serde_json::to_string(list),
        ) {
            let _ = db.save_grants(&grant_session, &json, crate::clock::now_ms());
        }
    })
}

/// What a cockpit session keeps in the state database: its journal (so it can be reopened
/// after a quit or a crash) and the one-time codes of its requests (so they can be answered
/// from another terminal).
pub fn cockpit_stores(
    args: &ExecArgs,
    session: &str,
    workspace: &Path,
    policy: &crate::config::fingerprint::PolicyFingerprint,
) -> Result<(Arc<CockpitJournal>, Arc<dyn CodeBook>)> {
    let journal =
        Arc::new(CockpitJournal::open(args, session, workspace)?.with_policy(policy.clone()));
    let codes = Arc::new(StateDbCodes {
        db: super::runs::db_path(),
        session: session.to_string(),
        run: session.to_string(),
        workspace: workspace.to_path_buf(),
    });
    Ok((journal, codes))
}
