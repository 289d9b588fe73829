//! One config file: the keys it may hold, reading and checking it, and the files it pulls in.
//! Loading is strict (unknown keys, bad UTF-8 and bad MCP entries are errors naming the file) so a
//! typo never silently weakens a setting.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::approval::policy::Mode;
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
    /// How the cockpit nudges the person when a request starts waiting and the terminal does
    /// not have focus: auto, osc9, osc777, bell or off (read by the cockpit, which says what a
    /// wrong value is).
    pub notify: Option<String>,
    /// How far sub-agents may go (`[agents]`).
    pub agents: Option<AgentsConfig>,
    /// The approval page for other devices (`[remote]`); only the user's own config opens it.
    pub remote: Option<RemoteConfig>,
    /// The person's own programs run around tool calls (`[[hooks]]`, see README.md, Hooks); a
    /// project's run only once it is trusted.
    #[serde(default)]
    pub hooks: Vec<HookConfig>,
}

/// `[[hooks]]`: one program run at one event.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// PreToolUse, PermissionRequest, PostToolUse, Notification, SessionStart or Stop.
    pub event: String,
    /// What the audit and the modal call it (default: its program's file name).
    pub name: Option<String>,
    /// A regular expression matched against the whole tool name, airlock's (`bash`) or Claude
    /// Code's (`Bash`); none, `""` or `"*"`: every tool.
    pub matcher: Option<String>,
    /// For bash: only commands that start with this.
    pub command_prefix: Option<String>,
    /// The program and its arguments; a path in it is relative to the config file's directory.
    pub command: Vec<String>,
    /// Seconds it may take (default 10); past it, it is stopped and has no say.
    pub timeout_secs: Option<u64>,
}

/// `[remote]`: approving from another device (see README.md, Approving from another device).
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RemoteConfig {
    /// Serve the page in every cockpit and headless run (`--remote` does it for one).
    pub enabled: Option<bool>,
    /// Where to listen (default 127.0.0.1:8377); an address beyond this machine needs TLS.
    pub listen: Option<String>,
    /// `off` (default) or `self-signed`; or give `tls_cert` and `tls_key`.
    pub tls: Option<String>,
    /// A PEM certificate (chain) and its key, relative to the config file's directory.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// The address a device opens, when it is not the one listened on (a tunnel, a proxy).
    pub public_url: Option<String>,
    /// An ntfy-style push URL nudged (with no details) when a request starts waiting.
    pub notify_url: Option<String>,
}

/// `[agents]`: limits of the tree of sub-agents.
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentsConfig {
    /// How deep sub-agents nest (0: none at all; default 2).
    pub max_depth: Option<usize>,
    /// How many run at once in the whole tree (0: none at all; default 8).
    pub max_running: Option<usize>,
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
                "{}: {e}\n  fix it there (the line and column above say where); see README.md (Configuration)",
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
        for hook in &self.hooks {
            for file in super::hooks::files_of(path, &hook.command) {
                files.push(("hooks.command", file));
            }
        }
        files
    }
}

/// `path` as named in the config file at `config`: relative paths are to the file's directory.
pub(super) fn relative_to(config: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        config.parent().unwrap_or(Path::new(".")).join(path)
    }
}
