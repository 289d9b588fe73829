//! The person's hooks for a session (`hooks::HookRunner` from the config's `[[hooks]]`, with
//! every key variable airlock knows kept out of their environment), the session's own events
//! (SessionStart, Stop), and `airlock hooks list` / `airlock hooks test EVENT`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};

use crate::config::Resolved;
use crate::hooks::HookRunner;
use crate::protocol::{HookEvent, HookInput, Hooks};
use crate::visible::visible_line;

/// Where each hook's last result is kept.
pub fn last_path(state: &Path) -> PathBuf {
    state.join("hooks").join("last.json")
}

/// The session's hooks, when the config has any.
pub fn runner(config: &Resolved, state: &Path) -> Option<Arc<HookRunner>> {
    if config.hooks.is_empty() {
        return None;
    }
    let hidden: Vec<String> = crate::facts::envvars::HIDDEN_ENV
        .iter()
        .map(|s| s.to_string())
        .chain(super::exec::key_env_names(config))
        .collect();
    Some(Arc::new(HookRunner::new(
        config.hooks.clone(),
        hidden,
        Some(last_path(state)),
    )))
}

/// Runs the session-wide hooks of `event` (SessionStart, Stop) and waits for them.
pub async fn session_event(
    hooks: Option<&Arc<HookRunner>>,
    event: HookEvent,
    session: &str,
    cwd: &Path,
) {
    let Some(hooks) = hooks else {
        return;
    };
    if !hooks.any(event) {
        return;
    }
    let input = HookInput {
        session_id: session.to_string(),
        cwd: cwd.display().to_string(),
        ..HookInput::default()
    };
    hooks.run(event, input).await;
}

/// `airlock hooks list`: every hook in force for `workspace`, where it comes from, whether it
/// runs (a project's only once trusted), its program's digest, and its last result.
pub fn list(config: &Resolved, state: &Path, out: &mut impl Write) -> Result<()> {
    let last = crate::hooks::last_results(&last_path(state));
    if config.hooks.is_empty() && config.ignored.iter().all(|i| !i.contains("[[hooks]]")) {
        writeln!(
            out,
            "no hooks: add [[hooks]] to {} (see README.md, Hooks)",
            config.user_config.display()
        )?;
        return Ok(());
    }
    for hook in &config.hooks {
        let matcher = match (&hook.matcher, &hook.command_prefix) {
            (None, None) => "every tool".to_string(),
            (Some(m), None) => format!("tools matching {m}"),
            (None, Some(p)) => format!("bash commands starting `{p}`"),
            (Some(m), Some(p)) => format!("tools matching {m}, commands starting `{p}`"),
        };
        let from = if hook.source == config.user_config.display().to_string() {
            "your config"
        } else {
            "the project (trusted)"
        };
        writeln!(
            out,
            "{}  {}  ({matcher}; {} s)\n  runs: {}\n  from {from}: {}\n  digest {}",
            visible_line(hook.event.as_str()),
            visible_line(&hook.name),
            hook.timeout_ms / 1000,
            visible_line(&hook.argv.join(" ")),
            visible_line(&hook.source),
            hook.digest,
        )?;
        match last.get(&format!("{}:{}", hook.name, hook.digest)) {
            Some(result) => {
                let o = &result["outcome"];
                let said = match (o["failure"].as_str(), o["say"].as_str()) {
                    (Some(f), _) => format!("no say: {f}"),
                    (None, Some(say)) => format!(
                        "{say}{}",
                        o["reason"]
                            .as_str()
                            .map(|r| format!(": {r}"))
                            .unwrap_or_default()
                    ),
                    (None, None) => "ran, said nothing".into(),
                };
                let ago = crate::clock::now_ms()
                    .saturating_sub(result["at_ms"].as_u64().unwrap_or(0))
                    / 1000;
                writeln!(
                    out,
                    "  last: {} ({} s ago, at {})",
                    visible_line(&said),
                    ago,
                    visible_line(result["event"].as_str().unwrap_or("?"))
                )?;
            }
            None => writeln!(out, "  last: never ran")?,
        }
    }
    for note in config.ignored.iter().filter(|i| i.contains("[[hooks]]")) {
        writeln!(out, "not run: {}", visible_line(note))?;
    }
    Ok(())
}

/// `airlock hooks test EVENT < input.json`: runs the hooks of `event` on the given input (the
/// fields a hook reads: `tool_name` as airlock or Claude Code names it, `tool_input`, `cwd`…)
/// and prints what each said. Nothing else runs.
pub async fn test(
    config: &Resolved,
    state: &Path,
    event: &str,
    workspace: &Path,
    input: &mut impl Read,
    out: &mut impl Write,
) -> Result<u8> {
    let Some(event) = HookEvent::parse(event) else {
        let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
        bail!(
            "`{event}` is not a hook event; use one of {}",
            known.join(", ")
        );
    };
    let mut text = String::new();
    input.read_to_string(&mut text)?;
    let given: serde_json::Value = if text.trim().is_empty() {
        serde_json::json!({})
    } else {
        serde_json::from_str(&text).map_err(|e| anyhow!("the input is not JSON ({e}); give the hook's input as one JSON object on standard input"))?
    };
    let tool = given["tool_name"].as_str().map(airlock_tool_name);
    let args = given.get("tool_input").map(|input| match tool.as_deref() {
        Some(tool) => airlock_args(tool, input),
        None => input.clone(),
    });
    let mut input = HookInput {
        session_id: given["session_id"].as_str().unwrap_or("test").to_string(),
        cwd: given["cwd"]
            .as_str()
            .map_or_else(|| workspace.display().to_string(), str::to_string),
        call_id: Some("test".into()),
        tool,
        args,
        response: given.get("tool_response").cloned(),
        message: given["message"].as_str().map(str::to_string),
        path: None,
        commands: None,
    };
    // A bash line's simple commands as the gate would parse them (a `command_prefix` is
    // matched against each).
    if input.tool.as_deref() == Some("bash")
        && let Some(line) = input.args.as_ref().and_then(|a| a["command"].as_str())
    {
        let ctx = crate::facts::shell::ShellContext {
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default(),
            cwd: PathBuf::from(&input.cwd),
        };
        let facts = crate::facts::shell::analyze(line, &ctx);
        input.commands = Some(facts.commands.iter().map(|c| c.literal_argv()).collect());
    }
    let Some(runner) = runner(config, state) else {
        writeln!(out, "no hooks in force")?;
        return Ok(1);
    };
    let outcomes = runner.run(event, input).await;
    if outcomes.is_empty() {
        writeln!(out, "no {} hook matches this input", event.as_str())?;
        return Ok(1);
    }
    for o in &outcomes {
        writeln!(out, "{}", serde_json::to_string(o)?)?;
    }
    Ok(0)
}

/// airlock's name for a tool named as Claude Code names it (or already airlock's).
fn airlock_tool_name(name: &str) -> String {
    match name {
        "Bash" => "bash".into(),
        "Write" => "write_file".into(),
        "Edit" => "edit_file".into(),
        "Read" => "read_file".into(),
        "LS" => "list_dir".into(),
        "Grep" => "search".into(),
        "Task" => "agent".into(),
        other => other
            .strip_prefix("mcp__")
            .map_or_else(|| other.to_string(), str::to_string),
    }
}

/// Arguments named as Claude Code names them, back in airlock's names.
fn airlock_args(tool: &str, input: &serde_json::Value) -> serde_json::Value {
    let Some(fields) = input.as_object() else {
        return input.clone();
    };
    let back: &[(&str, &str)] = match tool {
        "write_file" | "read_file" => &[("file_path", "path")],
        "edit_file" => &[
            ("file_path", "path"),
            ("old_string", "old"),
            ("new_string", "new"),
        ],
        _ => &[],
    };
    fields
        .iter()
        .map(|(k, v)| {
            let key = back
                .iter()
                .find(|(from, _)| from == k)
                .map_or(k.as_str(), |(_, to)| to);
            (key.to_string(), v.clone())
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}
