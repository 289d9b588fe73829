//! `[[hooks]]` from the config files: each checked (its event, its matcher, its program) and
//! made a `protocol::HookSpec`, its paths made absolute and its digest taken over its argv and
//! every file it names. A project's hooks come only from a trusted project, whose trust covers
//! each hook's files (`trust`): a changed script makes the project untrusted again.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use sha2::{Digest, Sha256};

use super::file::{HookConfig, relative_to};
use crate::protocol::{HookEvent, HookSpec};

/// The default time a hook may take.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// The files a hook's command names: each argument that is a path (has a `/`), as named in the
/// config at `config` (relative to its directory).
pub fn files_of(config: &Path, command: &[String]) -> Vec<PathBuf> {
    command
        .iter()
        .filter(|a| a.contains('/'))
        .map(|a| relative_to(config, Path::new(a)))
        .collect()
}

/// The hooks of the config file at `config`, checked.
pub fn specs(config: &Path, hooks: &[HookConfig]) -> Result<Vec<HookSpec>> {
    hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| spec(config, i, hook))
        .collect()
}

fn spec(config: &Path, index: usize, hook: &HookConfig) -> Result<HookSpec> {
    let at = format!(
        "{}: hook {} ([[hooks]] number {})",
        config.display(),
        hook.name.as_deref().unwrap_or("?"),
        index + 1
    );
    let fix = "fix it there (see README.md, Hooks)";
    let Some(event) = HookEvent::parse(&hook.event) else {
        let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
        bail!(
            "{at}: `event = \"{}\"` is not an event; use one of {}; {fix}",
            hook.event,
            known.join(", ")
        );
    };
    let Some(program) = hook.command.first() else {
        bail!(
            "{at}: `command` is empty; give the program and its arguments, e.g. [\"python3\", \"hooks/check.py\"]; {fix}"
        );
    };
    let matcher = hook.matcher.clone().filter(|m| !m.is_empty() && m != "*");
    if let Some(m) = &matcher
        && let Err(e) = regex::Regex::new(&format!("^(?:{m})$"))
    {
        bail!("{at}: `matcher = \"{m}\"` is not a regular expression ({e}); {fix}");
    }
    if hook.timeout_secs == Some(0) {
        bail!(
            "{at}: `timeout_secs = 0` gives it no time; give it seconds, or leave it out (10); {fix}"
        );
    }
    let mut argv = Vec::new();
    let mut digest = Sha256::new();
    for arg in &hook.command {
        digest.update((arg.len() as u64).to_be_bytes());
        digest.update(arg.as_bytes());
        if arg.contains('/') {
            let path = relative_to(config, Path::new(arg));
            let content = std::fs::read(&path).map_err(|e| {
                anyhow::anyhow!("{at}: cannot read {} ({e}); {fix}", path.display())
            })?;
            digest.update(Sha256::digest(&content));
            argv.push(
                std::path::absolute(&path)
                    .unwrap_or(path)
                    .display()
                    .to_string(),
            );
        } else {
            argv.push(arg.clone());
        }
    }
    let name = hook.name.clone().unwrap_or_else(|| {
        let file = hook
            .command
            .iter()
            .rev()
            .find(|a| a.contains('/'))
            .unwrap_or(program);
        Path::new(file)
            .file_name()
            .map_or(file.clone(), |n| n.to_string_lossy().into_owned())
    });
    Ok(HookSpec {
        name,
        event,
        matcher,
        command_prefix: hook.command_prefix.clone(),
        argv,
        digest: crate::digest::hex(&digest.finalize()),
        timeout_ms: hook.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS) * 1000,
        source: config.display().to_string(),
    })
}
