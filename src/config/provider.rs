//! The model settings: provider, model, server URL, where the key comes from, token and timeout
//! limits, and reading the key itself. An untrusted project may name a model but may not choose
//! the provider, the server or the key: those decide where the user's key and code are sent.

use anyhow::{Context, Result, bail};

use super::layers::{Layers, pick};
use super::{ConfigFlags, Env, Resolved, Setting, Source};
use crate::model::http::ProviderKind;

/// The model settings in force, each with its source.
pub(super) struct ProviderSettings {
    pub provider: Option<Setting<ProviderKind>>,
    pub model: Option<Setting<String>>,
    pub base_url: Option<Setting<String>>,
    pub api_key_env: Option<Setting<String>>,
    pub api_key_command: Option<Setting<String>>,
    pub max_tokens: Setting<u32>,
    pub read_timeout_secs: Setting<u64>,
}

/// Resolves the model settings; the project settings an untrusted project may not set are named
/// in `ignored`.
pub(super) fn resolve(
    layers: &Layers,
    flags: &ConfigFlags,
    env: &dyn Env,
    ignored: &mut Vec<String>,
) -> ProviderSettings {
    let (p, u) = (&layers.project, &layers.user);
    let project_base_url = layers.guarded("base_url", p.base_url.clone(), ignored);
    let project_key_command = layers.guarded("api_key_command", p.api_key_command.clone(), ignored);
    let project_key_env = layers.guarded("api_key_env", p.api_key_env.clone(), ignored);
    let project_provider = layers.guarded("provider", p.provider, ignored);
    ProviderSettings {
        provider: pick(
            (flags.provider, "provider"),
            (
                env.var("AIRLOCK_PROVIDER").and_then(|v| parse_provider(&v)),
                "AIRLOCK_PROVIDER",
            ),
            layers.project(project_provider),
            layers.user(u.provider),
        ),
        model: pick(
            (flags.model.clone(), "model"),
            (env.var("AIRLOCK_MODEL"), "AIRLOCK_MODEL"),
            layers.project(p.model.clone()),
            layers.user(u.model.clone()),
        ),
        base_url: pick(
            (flags.base_url.clone(), "base-url"),
            (env.var("AIRLOCK_BASE_URL"), "AIRLOCK_BASE_URL"),
            layers.project(project_base_url),
            layers.user(u.base_url.clone()),
        ),
        api_key_env: pick(
            (None, ""),
            (None, ""),
            layers.project(project_key_env),
            layers.user(u.api_key_env.clone()),
        ),
        api_key_command: pick(
            (None, ""),
            (None, ""),
            layers.project(project_key_command),
            layers.user(u.api_key_command.clone()),
        ),
        max_tokens: pick(
            (None, ""),
            (None, ""),
            layers.project(p.max_tokens),
            layers.user(u.max_tokens),
        )
        .unwrap_or(Setting {
            value: 4096,
            source: Source::Default,
        }),
        read_timeout_secs: pick(
            (None, ""),
            (None, ""),
            None,
            layers.user(u.read_timeout_secs),
        )
        .unwrap_or(Setting {
            value: 120,
            source: Source::Default,
        }),
    }
}

fn parse_provider(v: &str) -> Option<ProviderKind> {
    match v {
        "openai" => Some(ProviderKind::OpenAi),
        "anthropic" => Some(ProviderKind::Anthropic),
        _ => None,
    }
}

impl Resolved {
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
