//! `airlock mcp list` and `airlock mcp accept NAME`, and the hub a session starts its configured
//! MCP servers with. Everything printed that a server supplied (names, descriptions, stderr)
//! goes through `visible_line`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use crate::config::{ConfigFlags, ProcessEnv, Resolved, resolve};
use crate::facts::paths::PathContext;
use crate::mcp::{McpHub, ServerState};
use crate::sandbox::{Sandbox, SandboxPolicy, Support};
use crate::visible::visible_line;

/// The hub for a session's configured servers, or `None` when there are none (nothing is started
/// or waited for).
pub fn hub_for(config: &Resolved, workspace: &Path) -> Option<Arc<McpHub>> {
    if config.mcp_servers.is_empty() && config.mcp_not_trusted.is_empty() {
        return None;
    }
    Some(McpHub::new(
        config.mcp_servers.clone(),
        config.mcp_not_trusted.clone(),
        workspace.to_path_buf(),
        config.api_key_env.iter().map(|s| s.value.clone()).collect(),
        Some(std::sync::Arc::new(crate::store::db::StatePins(
            super::runs::db_path(),
        ))),
        servers_sandbox(config, workspace)?,
    ))
}

/// What a `command` server is started in: the session's launcher and sandbox plans (the files
/// airlock reads as policy read-only, as for commands). `None` only when the workspace is gone.
fn servers_sandbox(config: &Resolved, workspace: &Path) -> Option<Arc<Sandbox>> {
    let state = crate::store::state_dir();
    let paths = PathContext::new(workspace, &crate::facts::paths::home_dir(), &state)
        .ok()?
        .with_protected_files(&config.active_files());
    let policy = SandboxPolicy {
        default: config.sandbox.value,
        support: Support::current(),
    };
    Some(Arc::new(Sandbox::new(
        crate::sandbox::installed_launcher(),
        policy,
        paths,
    )))
}

fn resolved(workspace: Option<PathBuf>) -> Result<(Resolved, PathBuf)> {
    let workspace = match workspace {
        Some(w) => w,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let workspace = std::fs::canonicalize(&workspace)
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
    let config = resolve(
        &workspace,
        &ConfigFlags::default(),
        &ProcessEnv,
        &crate::store::state_dir(),
    )?;
    Ok((config, workspace))
}

/// `airlock mcp list`: starts each configured server, waits for its tools, and prints servers,
/// their state, and each tool with the risk airlock gives it. Returns how many servers failed
/// (the command then exits with status 1).
pub async fn list(workspace: Option<PathBuf>, out: &mut dyn Write) -> Result<usize> {
    let (config, workspace) = resolved(workspace)?;
    for note in config.trust_note.iter() {
        writeln!(out, "note: {}", visible_line(note))?;
    }
    let Some(hub) = hub_for(&config, &workspace) else {
        writeln!(
            out,
            "no MCP servers configured; add [mcp_servers.NAME] to {} (see README.md, MCP servers)",
            config.user_config.display()
        )?;
        return Ok(0);
    };
    hub.connect_all().await;
    print_catalog(&hub, out)?;
    let failed = hub
        .catalog()
        .servers()
        .into_iter()
        .filter(|(_, state)| matches!(state, ServerState::Failed(_)))
        .count();
    if failed > 0 {
        writeln!(
            out,
            "{failed} server(s) failed: their tools are not offered; the line under each says why"
        )?;
    }
    Ok(failed)
}

/// Prints what the hub knows: each server, then its tools.
pub fn print_catalog(hub: &McpHub, out: &mut dyn Write) -> Result<()> {
    let catalog = hub.catalog();
    let tools = catalog.tools();
    for (server, state) in catalog.servers() {
        writeln!(
            out,
            "{}: {}",
            visible_line(&server),
            visible_line(&state.describe())
        )?;
        if let Some(confinement) = hub.confinement(&server) {
            writeln!(out, "  {}", visible_line(&confinement))?;
        }
        let mine: Vec<_> = tools.iter().filter(|t| t.server == server).collect();
        if let Some(why) = mine.iter().find_map(|t| t.changed.as_ref()) {
            writeln!(out, "  CHANGED: {}", visible_line(why))?;
        }
        for tool in mine {
            writeln!(
                out,
                "  {:<9} {}  ({})",
                tool.risk().as_str(),
                visible_line(&tool.rule_name()),
                visible_line(&tool.definition.annotation_lines().join(", "))
            )?;
        }
        for skipped in catalog.skipped(&server) {
            writeln!(out, "  not offered: {}", visible_line(&skipped))?;
        }
        if state == ServerState::Ready && tools.iter().all(|t| t.server != server) {
            writeln!(out, "  (no tools)")?;
        }
    }
    Ok(())
}

/// `airlock mcp accept NAME`: lists the server's tools now and accepts them as its new pins.
pub async fn accept(name: &str, workspace: Option<PathBuf>, out: &mut dyn Write) -> Result<()> {
    let (config, workspace) = resolved(workspace)?;
    let Some(server) = config.mcp_servers.iter().find(|s| s.name == name) else {
        if config.mcp_not_trusted.iter().any(|n| n == name) {
            bail!(
                "MCP server `{}` is in a project that is not trusted; run `airlock trust` in {} first",
                visible_line(name),
                workspace.display()
            );
        }
        bail!(
            "no MCP server `{}` is configured here; `airlock mcp list` shows the ones that are",
            visible_line(name)
        );
    };
    let sandbox = servers_sandbox(&config, &workspace)
        .with_context(|| format!("the workspace {} is gone", workspace.display()))?;
    let hub = McpHub::new(
        vec![server.clone()],
        Vec::new(),
        workspace,
        config.api_key_env.iter().map(|s| s.value.clone()).collect(),
        Some(std::sync::Arc::new(crate::store::db::StatePins(
            super::runs::db_path(),
        ))),
        sandbox,
    );
    hub.connect_all().await;
    let catalog = hub.catalog();
    if let Some(ServerState::Failed(why)) = catalog.state(name) {
        bail!(
            "MCP server `{}` did not list its tools, so nothing was accepted: {}",
            visible_line(name),
            visible_line(&why)
        );
    }
    let changed = catalog.tools().into_iter().find_map(|t| t.changed);
    let store = crate::store::db::Store::open(&super::runs::db_path())?;
    let accepted = store.accept_mcp_tools(&server.pin_key, crate::clock::now_ms())?;
    match changed {
        Some(why) => writeln!(
            out,
            "accepted {accepted} tool definition(s) of `{}`: {}",
            visible_line(name),
            visible_line(&why)
        )?,
        None => writeln!(
            out,
            "the tools of `{}` are as you accepted them; nothing changed",
            visible_line(name)
        )?,
    }
    Ok(())
}
