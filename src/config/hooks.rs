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

/// Whether a hook argument is a bare word that could name a file (`check.sh`: no `/`, no
/// space, not an option).
fn bare_word(arg: &str) -> bool {
    !arg.is_empty()
        && !arg.contains('/')
        && !arg.chars().any(char::is_whitespace)
        && !arg.starts_with('-')
        && arg != "."
        && arg != ".."
}

/// The files a hook's command names, as named in the config at `config` (relative to its
/// directory): every argument with a `/`, and a bare argument after the program that names a
/// file next to the config (`["sh", "check.sh"]`).
pub fn files_of(config: &Path, command: &[String]) -> Vec<PathBuf> {
    command
        .iter()
        .enumerate()
        .filter_map(|(i, a)| file_arg(config, i, a))
        .collect()
}

fn file_arg(config: &Path, index: usize, arg: &str) -> Option<PathBuf> {
    if names_a_file(arg) {
        return Some(relative_to(config, Path::new(arg)));
    }
    let beside = relative_to(config, Path::new(arg));
    (index > 0 && bare_word(arg) && beside.is_file()).then_some(beside)
}

/// Every file under a project's `.airlock/` directory (the directory of its config), which a
/// project with hooks has trusted and protected whole: a script there may source or import
/// its neighbours. At most a few hundred, a few levels deep.
pub fn project_dir_files(config: &Path) -> Vec<PathBuf> {
    let Some(dir) = config.parent() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut dirs = vec![(dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && depth < 4 => dirs.push((path, depth + 1)),
                Ok(t) if t.is_file() || t.is_symlink() => files.push(path),
                _ => {}
            }
            if files.len() >= 500 {
                return files;
            }
        }
    }
    files.sort();
    files
}

/// Where the hooks of a config file come from: the user's own config, or a project's (whose
/// files must lie under its `.airlock/`), for a session in `workspace`.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    pub workspace: &'a Path,
    pub project: bool,
}

/// The hooks of the config file at `config`, checked.
pub fn specs(config: &Path, origin: Origin<'_>, hooks: &[HookConfig]) -> Result<Vec<HookSpec>> {
    hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| spec(config, origin, i, hook))
        .collect()
}

fn spec(config: &Path, origin: Origin<'_>, index: usize, hook: &HookConfig) -> Result<HookSpec> {
    let at = match &hook.name {
        Some(name) => format!(
            "{}: hook {name} ([[hooks]] number {})",
            config.display(),
            index + 1
        ),
        None => format!("{}: [[hooks]] number {}", config.display(), index + 1),
    };
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
    let home = config.parent().unwrap_or(Path::new("."));
    // What the hook is called when it names itself nothing: its last file, else its program.
    let mut script: Option<String> = None;
    for (i, arg) in hook.command.iter().enumerate() {
        digest.update((arg.len() as u64).to_be_bytes());
        digest.update(arg.as_bytes());
        let Some(path) = file_arg(config, i, arg) else {
            // A bare name the hook's shell would find in the workspace (its working
            // directory), which the agent writes: never run that.
            if i > 0
                && bare_word(arg)
                && runs_as_script(program, arg)
                && origin.workspace.join(arg).is_file()
            {
                bail!(
                    "{at}: `{arg}` is a file in the workspace, which the agent can write, and a hook runs outside the sandbox; put the script beside the config and name it by its path from there (e.g. \"hooks/{arg}\"); {fix}"
                );
            }
            argv.push(arg.clone());
            continue;
        };
        if origin.project && path.exists() && !under(&path, home) {
            bail!(
                "{at}: {} is outside the project's {} directory; a project's hook files live there, where airlock trusts and protects them whole (a script may source its neighbours); {fix}",
                path.display(),
                home.display()
            );
        }
        let content = std::fs::read(&path)
            .map_err(|e| anyhow::anyhow!("{at}: cannot read {} ({e}); {fix}", path.display()))?;
        digest.update(Sha256::digest(&content));
        script = path.file_name().map(|n| n.to_string_lossy().into_owned());
        argv.push(
            std::path::absolute(&path)
                .unwrap_or(path)
                .display()
                .to_string(),
        );
    }
    let name = hook.name.clone().or(script).unwrap_or_else(|| {
        Path::new(program)
            .file_name()
            .map_or(program.clone(), |n| n.to_string_lossy().into_owned())
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

/// Whether `arg`, given to `program`, is run as a script: the program is a shell or an
/// interpreter, or the name ends as a script's does. (`["make", "lint"]` with a file `lint`
/// in the workspace is a target, not a script: such a hook is not refused for the name.)
fn runs_as_script(program: &str, arg: &str) -> bool {
    const INTERPRETERS: &[&str] = &[
        "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "node", "deno", "bun",
        "ruby", "perl", "php", "lua", "tclsh", "pwsh",
    ];
    const SCRIPTS: &[&str] = &[
        ".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua",
        ".ps1",
    ];
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&name) || SCRIPTS.iter().any(|ext| arg.ends_with(ext))
}

/// Whether `path` lies under `dir`, both taken physically (links and `..` resolved): a link
/// in `.airlock/` to a script elsewhere in the workspace leaves that script's neighbours
/// outside what trust covers. A path that cannot be resolved is not under anything.
fn under(path: &Path, dir: &Path) -> bool {
    match (std::fs::canonicalize(path), std::fs::canonicalize(dir)) {
        (Ok(path), Ok(dir)) => path.starts_with(dir),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(workspace: &Path) -> Origin<'_> {
        Origin {
            workspace,
            project: false,
        }
    }

    #[test]
    fn a_bare_script_name_is_the_file_beside_the_config_or_refused_if_it_is_the_workspaces() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let project = ws.join(".airlock");
        std::fs::create_dir_all(project.join("hooks")).unwrap();
        let config = project.join("config.toml");
        let origin = Origin {
            workspace: &ws,
            project: true,
        };
        std::fs::write(project.join("check.sh"), "exit 0\n").unwrap();
        let beside = specs(&config, origin, &[hook(&["sh", "check.sh"])]).unwrap();
        assert_eq!(
            beside[0].argv[1],
            project.join("check.sh").display().to_string()
        );
        assert_eq!(files_of(&config, &beside[0].argv).len(), 1);
        std::fs::write(ws.join("build.sh"), "exit 0\n").unwrap();
        let e = specs(&config, origin, &[hook(&["sh", "build.sh"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a file in the workspace"), "{e}");
        std::fs::create_dir_all(ws.join("scripts")).unwrap();
        std::fs::write(ws.join("scripts/x.sh"), "exit 0\n").unwrap();
        let e = specs(&config, origin, &[hook(&["sh", "../scripts/x.sh"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside the project's"), "{e}");
        // Nor through a link in .airlock/ to it.
        std::os::unix::fs::symlink("../../scripts/x.sh", project.join("hooks/x.sh")).unwrap();
        let e = specs(&config, origin, &[hook(&["sh", "hooks/x.sh"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside the project's"), "{e}");
        // Words that are not files stay words; a make target that is also a file's name is a
        // target.
        let words = specs(&config, origin, &[hook(&["git", "status"])]).unwrap();
        assert_eq!(words[0].argv, ["git", "status"]);
        std::fs::write(ws.join("lint"), "x\n").unwrap();
        assert!(specs(&config, origin, &[hook(&["make", "lint"])]).is_ok());
        let e = specs(&config, origin, &[hook(&["python3.11", "lint"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a file in the workspace"), "{e}");
    }

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
        let first = specs(&config, user(dir.path()), &[hook(&["sh", "hooks/a.sh"])]).unwrap();
        assert_eq!(first[0].name, "a.sh");
        assert!(first[0].argv[1].ends_with("/hooks/a.sh") && first[0].argv[1].starts_with('/'));
        std::fs::write(dir.path().join("hooks/a.sh"), "exit 2\n").unwrap();
        let changed = specs(&config, user(dir.path()), &[hook(&["sh", "hooks/a.sh"])]).unwrap();
        assert_ne!(
            first[0].digest, changed[0].digest,
            "a changed script is another hook"
        );
        let inline = specs(
            &config,
            user(dir.path()),
            &[hook(&["sh", "-c", "curl -d x ntfy.sh/t > /dev/null"])],
        );
        assert!(inline.is_ok(), "{inline:?}");
        assert!(files_of(&config, &inline.unwrap()[0].argv).is_empty());
    }

    #[test]
    fn a_hook_naming_a_missing_script_or_no_program_is_refused_with_where() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let e = specs(
            &config,
            user(dir.path()),
            &[hook(&["sh", "hooks/missing.sh"])],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("missing.sh") && e.contains("config.toml"), "{e}");
        let e = specs(&config, user(dir.path()), &[hook(&[])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`command` is empty"), "{e}");
        let mut bad = hook(&["true"]);
        bad.matcher = Some("(".into());
        let e = specs(&config, user(dir.path()), &[bad])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular expression"), "{e}");
    }
}
