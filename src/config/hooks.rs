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

/// Whether an argument of a hook's command names a file: it has a `/`, and no space (an inline
/// script such as `sh -c "curl … > /dev/null"` is text, kept in the digest as it is).
pub fn names_a_file(arg: &str) -> bool {
    arg.contains('/') && !arg.chars().any(char::is_whitespace) && !arg.starts_with('-')
}

/// The files a hook's command names, as named in the config at `config` (relative to its
/// directory).
pub fn files_of(config: &Path, command: &[String]) -> Vec<PathBuf> {
    command
        .iter()
        .filter(|a| names_a_file(a))
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
        if names_a_file(arg) {
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
            .find(|a| names_a_file(a))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(command: &[&str]) -> HookConfig {
        HookConfig {
            event: "PreToolUse".into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            ..HookConfig::default()
        }
    }

    #[test]
    fn a_hooks_digest_covers_its_script_and_an_inline_shell_script_is_text() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
        std::fs::write(dir.path().join("hooks/a.sh"), "exit 0\n").unwrap();
        let first = specs(&config, &[hook(&["sh", "hooks/a.sh"])]).unwrap();
        assert_eq!(first[0].name, "a.sh");
        assert!(first[0].argv[1].ends_with("/hooks/a.sh") && first[0].argv[1].starts_with('/'));
        std::fs::write(dir.path().join("hooks/a.sh"), "exit 2\n").unwrap();
        let changed = specs(&config, &[hook(&["sh", "hooks/a.sh"])]).unwrap();
        assert_ne!(
            first[0].digest, changed[0].digest,
            "a changed script is another hook"
        );
        let inline = specs(
            &config,
            &[hook(&["sh", "-c", "curl -d x ntfy.sh/t > /dev/null"])],
        );
        assert!(inline.is_ok(), "{inline:?}");
        assert!(files_of(&config, &inline.unwrap()[0].argv).is_empty());
    }

    #[test]
    fn a_hook_naming_a_missing_script_or_no_program_is_refused_with_where() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let e = specs(&config, &[hook(&["sh", "hooks/missing.sh"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.sh") && e.contains("config.toml"), "{e}");
        let e = specs(&config, &[hook(&[])]).unwrap_err().to_string();
        assert!(e.contains("`command` is empty"), "{e}");
        let mut bad = hook(&["true"]);
        bad.matcher = Some("(".into());
        let e = specs(&config, &[bad]).unwrap_err().to_string();
        assert!(e.contains("not a regular expression"), "{e}");
    }
}
