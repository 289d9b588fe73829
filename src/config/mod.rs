//! Configuration: user file, project file, environment, command-line flags, in that rising order
//! of precedence (flag > env > project > user > default). Resolves settings only: it must never
//! import `agent`, `tools`, `ui` or `cli`.
//!
//! A project file comes with the code, so until the user trusts it (per project path and the
//! content hash of every file it pulls in, see [`trust`]; a changed file must be trusted again)
//! only what tightens safety applies from it: a stricter mode, and ask / deny rules. A cloned
//! repository can never approve its own commands, point airlock at another server, or run a key
//! command.
//!
//! The files in force (both configs and every rules file, [`Resolved::active_files`]) are handed
//! to the policy, which refuses the agent any write to them.

mod show;
pub mod trust;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::approval::policy::Mode;
use crate::approval::rules::{Action, Rules};
use crate::model::http::ProviderKind;
use crate::sandbox::Profile;

/// Keys a config file may hold. Unknown keys are errors that name the file, line and key.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The environment variable that holds the API key.
    pub api_key_env: Option<String>,
    /// A command whose output is the API key (run with `sh -c`).
    pub api_key_command: Option<String>,
    pub mode: Option<Mode>,
    /// A rules file, relative to the config file's directory.
    pub rules: Option<PathBuf>,
    pub max_tokens: Option<u32>,
    /// Seconds a model stream may stay silent before it counts as stalled.
    pub read_timeout_secs: Option<u64>,
    /// Seconds a person has to answer an approval before it is denied as "timed out".
    pub approval_timeout_secs: Option<u64>,
    /// The same for dangerous calls (defaults to `approval_timeout_secs`).
    pub dangerous_approval_timeout_secs: Option<u64>,
    /// MCP servers by name (`[mcp_servers.NAME]`).
    #[serde(default)]
    pub mcp_servers: std::collections::BTreeMap<String, crate::mcp::ServerConfig>,
    /// The sandbox profile `bash` calls run under when they name none.
    pub sandbox: Option<Profile>,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<Option<ConfigFile>> {
        Ok(Self::load_bytes(path)?.map(|(file, _)| file))
    }

    /// The file and the exact bytes it was parsed from (what trust hashes).
    pub fn load_bytes(path: &Path) -> Result<Option<(ConfigFile, Vec<u8>)>> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            anyhow::anyhow!(
                "{}: not valid UTF-8 at byte {}; save it as UTF-8",
                path.display(),
                e.valid_up_to()
            )
        })?;
        let file: ConfigFile = toml::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e}\n  fix or remove that key; see README.md (Configuration)",
                path.display()
            )
        })?;
        for (name, server) in &file.mcp_servers {
            server.check(name).map_err(|e| {
                anyhow::anyhow!("{}: {e}; see README.md (MCP servers)", path.display())
            })?;
        }
        Ok(Some((file, bytes)))
    }

    /// Every file this config (at `path`) pulls in, with the key that names it. Trust and the
    /// policy's protection of active files both start here, so a new key that names a file must
    /// be listed here.
    pub fn named_files(&self, path: &Path) -> Vec<(&'static str, PathBuf)> {
        let mut files = Vec::new();
        if let Some(rules) = &self.rules {
            files.push(("rules", relative_to(path, rules)));
        }
        files
    }
}

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    User(PathBuf),
    Project(PathBuf),
    Env(String),
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::User(p) => write!(f, "user config {}", p.display()),
            Source::Project(p) => write!(f, "project config {}", p.display()),
            Source::Env(v) => write!(f, "environment ${v}"),
            Source::Flag(n) => write!(f, "flag --{n}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

/// Command-line flags that override configuration.
#[derive(Debug, Clone, Default, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct ConfigFlags {
    /// The model provider: openai (any OpenAI-compatible server) or anthropic.
    #[arg(long, value_enum)]
    pub provider: Option<ProviderKind>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long = "base-url")]
    pub base_url: Option<String>,
    /// default, auto-edit or read-only.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// A rules file (TOML).
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// The sandbox profile commands run under when they name none: read-only,
    /// workspace-write (default), network or off.
    #[arg(long, value_parser = parse_profile)]
    pub sandbox: Option<Profile>,
}

fn parse_profile(text: &str) -> std::result::Result<Profile, String> {
    Profile::parse(text).ok_or_else(|| format!("use one of {}", Profile::choices()))
}

/// The configuration in force, each value with its source.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub provider: Option<Setting<ProviderKind>>,
    pub model: Option<Setting<String>>,
    pub base_url: Option<Setting<String>>,
    pub api_key_env: Option<Setting<String>>,
    pub api_key_command: Option<Setting<String>>,
    pub mode: Setting<Mode>,
    /// The sandbox profile of `bash` calls that name none.
    pub sandbox: Setting<Profile>,
    pub rules: Vec<Setting<PathBuf>>,
    pub max_tokens: Setting<u32>,
    pub read_timeout_secs: Setting<u64>,
    pub approval_timeout_secs: Option<u64>,
    pub dangerous_approval_timeout_secs: Option<u64>,
    /// Project settings left out because the project is not trusted, in words.
    pub ignored: Vec<String>,
    pub project_file: Option<PathBuf>,
    pub project_trusted: bool,
    /// Why a project trusted before is not trusted now: every changed file, named.
    pub trust_note: Option<String>,
    /// The files of a trusted project as they were checked against the user's trust.
    pub trusted_files: Vec<trust::TrustedFile>,
    /// Where the user config is looked for, whether or not it exists.
    pub user_config: PathBuf,
    /// Where the project config is looked for, whether or not it exists.
    pub project_config: PathBuf,
    /// MCP servers that may start: the user's, and a trusted project's (which win by name).
    pub mcp_servers: Vec<crate::mcp::ConfiguredServer>,
    /// An untrusted project's MCP servers, by name: never started.
    pub mcp_not_trusted: Vec<String>,
}

/// The environment, passed in so resolution is testable.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

pub fn user_config_path(env: &dyn Env) -> PathBuf {
    match env.var("XDG_CONFIG_HOME") {
        Some(dir) if Path::new(&dir).is_absolute() => {
            PathBuf::from(dir).join("airlock/config.toml")
        }
        _ => PathBuf::from(env.var("HOME").unwrap_or_else(|| "/".into()))
            .join(".config/airlock/config.toml"),
    }
}

pub fn project_config_path(workspace: &Path) -> PathBuf {
    workspace.join(".airlock/config.toml")
}

fn strictness(mode: Mode) -> u8 {
    match mode {
        Mode::AutoEdit => 0,
        Mode::Default => 1,
        Mode::ReadOnly => 2,
    }
}

pub fn resolve(
    workspace: &Path,
    flags: &ConfigFlags,
    env: &dyn Env,
    state_dir: &Path,
) -> Result<Resolved> {
    let user_path = user_config_path(env);
    let user = ConfigFile::load(&user_path)?;
    let project_path = project_config_path(workspace);
    let project_loaded = ConfigFile::load_bytes(&project_path)?;
    let (trusted, trust_note, trusted_files) = match &project_loaded {
        Some((file, bytes)) => match trust::project_files(&project_path, bytes, file) {
            Ok(files) => match trust::status(state_dir, workspace, &files)? {
                trust::Status::Trusted => (true, None, files),
                trust::Status::NeverTrusted => (false, None, Vec::new()),
                trust::Status::Changed { note } => (
                    false,
                    Some(format!("the project is not trusted any more: {note}")),
                    Vec::new(),
                ),
            },
            Err(e) => (
                false,
                Some(format!(
                    "the project is not trusted: {e:#}; fix it, then run `airlock trust` in {}",
                    workspace.display()
                )),
                Vec::new(),
            ),
        },
        None => (false, None, Vec::new()),
    };
    let project = project_loaded.map(|(file, _)| file);
    let mut ignored = Vec::new();

    fn pick<T: Clone>(
        flag: (Option<T>, &str),
        env: (Option<T>, &str),
        project: Option<(Option<T>, PathBuf)>,
        user: Option<(Option<T>, PathBuf)>,
    ) -> Option<Setting<T>> {
        if let Some(v) = flag.0 {
            return Some(Setting {
                value: v,
                source: Source::Flag(flag.1.into()),
            });
        }
        if let Some(v) = env.0 {
            return Some(Setting {
                value: v,
                source: Source::Env(env.1.into()),
            });
        }
        if let Some((Some(v), p)) = project {
            return Some(Setting {
                value: v,
                source: Source::Project(p),
            });
        }
        if let Some((Some(v), p)) = user {
            return Some(Setting {
                value: v,
                source: Source::User(p),
            });
        }
        None
    }

    let p = project.clone().unwrap_or_default();
    let u = user.clone().unwrap_or_default();
    let has_project = project.is_some();
    let has_user = user.is_some();
    fn from<T>(present: bool, value: Option<T>, path: &Path) -> Option<(Option<T>, PathBuf)> {
        present.then(|| (value, path.to_path_buf()))
    }

    // Settings an untrusted project may not set at all.
    let mut guarded = |name: &str, value_set: bool| -> bool {
        if value_set && !trusted {
            ignored.push(format!(
                "`{name}` from {} (the project is not trusted: run `airlock trust` in it to allow)",
                project_path.display()
            ));
            false
        } else {
            true
        }
    };
    let project_base_url = if guarded("base_url", p.base_url.is_some()) {
        p.base_url.clone()
    } else {
        None
    };
    let project_key_command = if guarded("api_key_command", p.api_key_command.is_some()) {
        p.api_key_command.clone()
    } else {
        None
    };
    let project_key_env = if guarded("api_key_env", p.api_key_env.is_some()) {
        p.api_key_env.clone()
    } else {
        None
    };
    let project_provider = if guarded("provider", p.provider.is_some()) {
        p.provider
    } else {
        None
    };

    let provider = pick(
        (flags.provider, "provider"),
        (
            env.var("AIRLOCK_PROVIDER").and_then(|v| parse_provider(&v)),
            "AIRLOCK_PROVIDER",
        ),
        from(has_project, project_provider, &project_path),
        from(has_user, u.provider, &user_path),
    );
    let model = pick(
        (flags.model.clone(), "model"),
        (env.var("AIRLOCK_MODEL"), "AIRLOCK_MODEL"),
        from(has_project, p.model.clone(), &project_path),
        from(has_user, u.model.clone(), &user_path),
    );
    let base_url = pick(
        (flags.base_url.clone(), "base-url"),
        (env.var("AIRLOCK_BASE_URL"), "AIRLOCK_BASE_URL"),
        from(has_project, project_base_url, &project_path),
        from(has_user, u.base_url.clone(), &user_path),
    );
    let api_key_env = pick(
        (None, ""),
        (None, ""),
        from(has_project, project_key_env, &project_path),
        from(has_user, u.api_key_env.clone(), &user_path),
    );
    let api_key_command = pick(
        (None, ""),
        (None, ""),
        from(has_project, project_key_command, &project_path),
        from(has_user, u.api_key_command.clone(), &user_path),
    );
    let env_mode = match env.var("AIRLOCK_MODE") {
        Some(v) => Some(parse_mode(&v).with_context(|| {
            format!("$AIRLOCK_MODE is {v:?}; use default, auto-edit or read-only")
        })?),
        None => None,
    };
    // The mode: a project may only make it stricter than what it would otherwise be.
    let base_mode = pick(
        (flags.mode, "mode"),
        (env_mode, "AIRLOCK_MODE"),
        None,
        from(has_user, u.mode, &user_path),
    )
    .unwrap_or(Setting {
        value: Mode::Default,
        source: Source::Default,
    });
    let mode = match p.mode {
        Some(m) if has_project && (trusted || strictness(m) > strictness(base_mode.value)) => {
            if matches!(base_mode.source, Source::Flag(_) | Source::Env(_))
                && strictness(m) <= strictness(base_mode.value)
            {
                base_mode
            } else {
                Setting {
                    value: m,
                    source: Source::Project(project_path.clone()),
                }
            }
        }
        Some(m) if has_project => {
            ignored.push(format!(
                "`mode = \"{}\"` from {} (looser than {}; the project is not trusted)",
                m.as_str(),
                project_path.display(),
                base_mode.value.as_str()
            ));
            base_mode
        }
        _ => base_mode,
    };
    // The sandbox: a project may only narrow it (`read-only`) until it is trusted.
    let base_sandbox = pick(
        (flags.sandbox, "sandbox"),
        (None, ""),
        None,
        from(has_user, u.sandbox, &user_path),
    )
    .unwrap_or(Setting {
        value: Profile::WorkspaceWrite,
        source: Source::Default,
    });
    let sandbox = match p.sandbox {
        Some(s)
            if has_project
                && matches!(base_sandbox.source, Source::Flag(_))
                && s >= base_sandbox.value =>
        {
            base_sandbox
        }
        Some(s) if has_project && (trusted || s < base_sandbox.value) => Setting {
            value: s,
            source: Source::Project(project_path.clone()),
        },
        Some(s) if has_project && s > base_sandbox.value => {
            ignored.push(format!(
                "`sandbox = \"{}\"` from {} (wider than {}; the project is not trusted)",
                s.as_str(),
                project_path.display(),
                base_sandbox.value.as_str()
            ));
            base_sandbox
        }
        _ => base_sandbox,
    };
    let mut rules = Vec::new();
    if let (Some(r), true) = (&u.rules, has_user) {
        rules.push(Setting {
            value: relative_to(&user_path, r),
            source: Source::User(user_path.clone()),
        });
    }
    if let (Some(r), true) = (&p.rules, has_project) {
        rules.push(Setting {
            value: relative_to(&project_path, r),
            source: Source::Project(project_path.clone()),
        });
    }
    if let Some(r) = env.var("AIRLOCK_RULES") {
        rules.push(Setting {
            value: PathBuf::from(r),
            source: Source::Env("AIRLOCK_RULES".into()),
        });
    }
    if let Some(r) = &flags.rules {
        rules.push(Setting {
            value: r.clone(),
            source: Source::Flag("rules".into()),
        });
    }
    let max_tokens = pick(
        (None, ""),
        (None, ""),
        from(has_project, p.max_tokens, &project_path),
        from(has_user, u.max_tokens, &user_path),
    )
    .unwrap_or(Setting {
        value: 4096,
        source: Source::Default,
    });
    let read_timeout_secs = pick(
        (None, ""),
        (None, ""),
        None,
        from(has_user, u.read_timeout_secs, &user_path),
    )
    .unwrap_or(Setting {
        value: 120,
        source: Source::Default,
    });
    let (mcp_servers, mcp_not_trusted) = mcp_servers(
        workspace,
        (&u.mcp_servers, &user_path),
        (&p.mcp_servers, &project_path),
        trusted,
        &mut ignored,
    );
    Ok(Resolved {
        mcp_servers,
        mcp_not_trusted,
        approval_timeout_secs: u.approval_timeout_secs,
        dangerous_approval_timeout_secs: u.dangerous_approval_timeout_secs,
        read_timeout_secs,
        provider,
        model,
        base_url,
        api_key_env,
        api_key_command,
        mode,
        sandbox,
        rules,
        max_tokens,
        ignored,
        project_file: has_project.then(|| project_path.clone()),
        project_trusted: trusted,
        trust_note,
        trusted_files,
        user_config: user_path,
        project_config: project_path,
    })
}

/// The MCP servers in force. A project's servers start only once the project is trusted: a
/// cloned repository must not be able to start a process.
fn mcp_servers(
    workspace: &Path,
    user: (
        &std::collections::BTreeMap<String, crate::mcp::ServerConfig>,
        &Path,
    ),
    project: (
        &std::collections::BTreeMap<String, crate::mcp::ServerConfig>,
        &Path,
    ),
    trusted: bool,
    ignored: &mut Vec<String>,
) -> (Vec<crate::mcp::ConfiguredServer>, Vec<String>) {
    let mut servers: std::collections::BTreeMap<String, crate::mcp::ConfiguredServer> = user
        .0
        .iter()
        .map(|(name, config)| {
            let server = crate::mcp::ConfiguredServer {
                name: name.clone(),
                config: config.clone(),
                file: user.1.to_path_buf(),
                pin_key: name.clone(),
            };
            (name.clone(), server)
        })
        .collect();
    let mut not_trusted = Vec::new();
    for (name, config) in project.0 {
        if !trusted {
            ignored.push(format!(
                "MCP server `{name}` from {} (the project is not trusted: run `airlock trust` in it to start it)",
                project.1.display()
            ));
            not_trusted.push(name.clone());
            continue;
        }
        let server = crate::mcp::ConfiguredServer {
            name: name.clone(),
            config: config.clone(),
            file: project.1.to_path_buf(),
            pin_key: format!("{name}@{}", workspace.display()),
        };
        servers.insert(name.clone(), server);
    }
    (servers.into_values().collect(), not_trusted)
}

fn relative_to(config: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        config.parent().unwrap_or(Path::new(".")).join(path)
    }
}

fn parse_provider(v: &str) -> Option<ProviderKind> {
    match v {
        "openai" => Some(ProviderKind::OpenAi),
        "anthropic" => Some(ProviderKind::Anthropic),
        _ => None,
    }
}

fn parse_mode(v: &str) -> Result<Mode> {
    Ok(match v {
        "default" => Mode::Default,
        "auto-edit" => Mode::AutoEdit,
        "read-only" => Mode::ReadOnly,
        other => bail!("unknown mode {other:?}"),
    })
}

impl Resolved {
    /// All rules files merged. Rules from an untrusted project keep only their ask and deny
    /// rules: a project may tighten, never loosen.
    /// A trusted project's rules are parsed from bytes whose hash is checked against the trust
    /// just given, so a file swapped after `resolve` cannot slip in.
    pub fn load_rules(&self) -> Result<Rules> {
        let mut all = Rules::empty();
        for setting in &self.rules {
            let project = matches!(setting.source, Source::Project(_));
            let mut rules = if project && self.project_trusted {
                self.load_trusted_rules(&setting.value)?
            } else {
                Rules::load(&setting.value)?
            };
            if project && !self.project_trusted {
                rules.rules.retain(|r| r.action != Action::Allow);
            }
            all.rules.extend(rules.rules);
        }
        Ok(all)
    }

    fn load_trusted_rules(&self, path: &Path) -> Result<Rules> {
        let changed = || {
            anyhow::anyhow!(
                "{} changed after airlock checked it against your trust; check it, then run `airlock trust` again",
                path.display()
            )
        };
        let physical = std::fs::canonicalize(path).map_err(|_| changed())?;
        let bytes = std::fs::read(&physical).map_err(|_| changed())?;
        let trusted = self
            .trusted_files
            .iter()
            .any(|f| f.path == physical && f.sha256 == trust::sha256(&bytes));
        if !trusted {
            return Err(changed());
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            anyhow::anyhow!("{}: not valid UTF-8; save it as UTF-8", path.display())
        })?;
        Ok(Rules::parse(&text, path)?)
    }

    /// Every file that decides how this session judges calls, absolute, whether or not it exists:
    /// the user config, the project config and every rules file in use. The policy refuses the
    /// agent writes to each of them.
    pub fn active_files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.user_config.clone(), self.project_config.clone()];
        for setting in &self.rules {
            files.push(std::path::absolute(&setting.value).unwrap_or(setting.value.clone()));
        }
        files
    }

    /// The API key: from the configured command or environment variable, or the provider's usual
    /// variable. Never printed.
    pub fn api_key(&self, env: &dyn Env) -> Result<Option<String>> {
        if let Some(cmd) = &self.api_key_command {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&cmd.value)
                .output()
                .with_context(|| format!("cannot run the api_key_command from {}", cmd.source))?;
            if !out.status.success() {
                bail!(
                    "the api_key_command from {} failed ({})",
                    cmd.source,
                    out.status
                );
            }
            let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
            return Ok((!key.is_empty()).then_some(key));
        }
        let var = match (&self.api_key_env, &self.provider) {
            (Some(v), _) => v.value.clone(),
            (None, Some(p)) => match p.value {
                ProviderKind::OpenAi => "OPENAI_API_KEY".into(),
                ProviderKind::Anthropic => "ANTHROPIC_API_KEY".into(),
            },
            (None, None) => return Ok(None),
        };
        Ok(env.var(&var))
    }
}

#[cfg(test)]
mod tests;
