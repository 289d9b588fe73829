//! Configuration: user file, project file, environment, command-line flags, in that rising order
//! of precedence (flag > env > project > user > default). Resolves settings only: it must never
//! import `agent`, `tools`, `store`, `output`, `ui`, `cli` or `demo`.
//!
//! A project file comes with the code, so until the user trusts it (per project path and the
//! content hash of every file it pulls in, see [`trust`]; a changed file must be trusted again)
//! only what tightens safety applies from it: a stricter mode, and ask / deny rules. A cloned
//! repository can never approve its own commands, point airlock at another server, or run a key
//! command.
//!
//! The files in force (both configs and every rules file, [`Resolved::active_files`]) are handed
//! to the policy, which refuses the agent any write to them.
//!
//! [`resolve`] only assembles: `file` reads one config file, `layers` loads both files, decides
//! the project's trust and picks a value by precedence, `provider` owns the model settings and
//! the key, `safety` the mode, sandbox and rules, `servers` the MCP servers.

pub mod file;
pub mod fingerprint;
pub mod hooks;
mod layers;
mod provider;
mod safety;
mod servers;
mod show;
pub mod trust;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::approval::policy::Mode;
use crate::model::http::ProviderKind;
use crate::sandbox::Profile;

pub use file::ConfigFile;

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
    /// The model's name as the provider knows it (e.g. gpt-4.1, claude-sonnet-4-5); with no
    /// provider configured, airlock plays its offline demo.
    #[arg(long)]
    pub model: Option<String>,
    /// The provider's API address (default: the provider's own; any OpenAI-compatible server
    /// for openai, e.g. http://127.0.0.1:8080/v1).
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
    /// Serve the approval page, so requests can be answered from a paired phone or other
    /// device (see README.md, Approving from another device; `[remote]` in the config).
    #[arg(long)]
    #[serde(default)]
    pub remote: bool,
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
    /// The user's `notify` (how a waiting request is announced), as written.
    pub notify: Option<String>,
    /// The user's `[agents]` limits.
    pub agents: file::AgentsConfig,
    /// The hooks in force: the user's, then a trusted project's.
    pub hooks: Vec<crate::protocol::HookSpec>,
    /// Every file those hooks name (their programs and scripts): protected like the rules.
    pub hook_files: Vec<PathBuf>,
    /// The user's `[remote]` (the approval page), and the file it was read from.
    pub remote: Option<(file::RemoteConfig, PathBuf)>,
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

/// The configuration in force for `workspace`: every layer read, the project checked against the
/// user's trust in `state_dir`, each setting taken from the highest layer allowed to set it.
pub fn resolve(
    workspace: &Path,
    flags: &ConfigFlags,
    env: &dyn Env,
    state_dir: &Path,
) -> Result<Resolved> {
    let layers = layers::Layers::load(workspace, env, state_dir)?;
    let mut ignored = Vec::new();
    let model = provider::resolve(&layers, flags, env, &mut ignored);
    let mode = safety::mode(&layers, flags, env, &mut ignored)?;
    let sandbox = safety::sandbox(&layers, flags, &mut ignored);
    let rules = safety::rules(&layers, flags, env);
    let (mcp_servers, mcp_not_trusted) = servers::mcp_servers(workspace, &layers, &mut ignored);
    let user_origin = hooks::Origin {
        workspace,
        project: false,
    };
    let mut hooks = hooks::specs(&layers.user_path, user_origin, &layers.user.hooks)?;
    let mut hook_files: Vec<PathBuf> = layers
        .user
        .hooks
        .iter()
        .flat_map(|h| hooks::files_of(&layers.user_path, &h.command))
        .collect();
    if layers.has_project && !layers.project.hooks.is_empty() {
        // Protected whether or not the project is trusted yet: the agent must not rewrite a
        // script the person is about to trust.
        hook_files.extend(
            layers
                .project
                .hooks
                .iter()
                .flat_map(|h| hooks::files_of(&layers.project_path, &h.command)),
        );
        // Its `.airlock/` whole: a script there may source or import its neighbours.
        hook_files.extend(hooks::project_dir_files(&layers.project_path));
        if layers.trusted {
            let origin = hooks::Origin {
                workspace,
                project: true,
            };
            hooks.extend(hooks::specs(
                &layers.project_path,
                origin,
                &layers.project.hooks,
            )?);
        } else {
            ignored.push(format!(
                "[[hooks]] in {}: not run until you trust the project (`airlock trust` lists each hook's files and their hashes)",
                layers.project_path.display()
            ));
        }
    }
    if layers.has_project && layers.project.remote.is_some() {
        ignored.push(format!(
            "[remote] in {}: only your own config can open the approval page",
            layers.project_path.display()
        ));
    }
    Ok(Resolved {
        mcp_servers,
        mcp_not_trusted,
        approval_timeout_secs: layers.user.approval_timeout_secs,
        dangerous_approval_timeout_secs: layers.user.dangerous_approval_timeout_secs,
        notify: layers.user.notify.clone(),
        agents: layers.user.agents.unwrap_or_default(),
        hooks,
        hook_files: hook_files
            .into_iter()
            .map(|f| std::path::absolute(&f).unwrap_or(f))
            .collect(),
        remote: layers
            .user
            .remote
            .clone()
            .map(|r| (r, layers.user_path.clone())),
        read_timeout_secs: model.read_timeout_secs,
        provider: model.provider,
        model: model.model,
        base_url: model.base_url,
        api_key_env: model.api_key_env,
        api_key_command: model.api_key_command,
        mode,
        sandbox,
        rules,
        max_tokens: model.max_tokens,
        ignored,
        project_file: layers.has_project.then(|| layers.project_path.clone()),
        project_trusted: layers.trusted,
        trust_note: layers.trust_note,
        trusted_files: layers.trusted_files,
        user_config: layers.user_path,
        project_config: layers.project_path,
    })
}

#[cfg(test)]
mod tests;
