//! `airlock config show`: the configuration in force, each value with where it came from, the
//! project's trust and what was left out. Keys are never shown.

use super::{Env, Resolved};
use crate::model::http::ProviderKind;

impl Resolved {
    /// The resolved configuration for `airlock config show`, keys masked.
    pub fn show(&self, env: &dyn Env) -> String {
        let mut out = String::new();
        let line = |out: &mut String, name: &str, value: String, source: String| {
            out.push_str(&format!("{name:<16} {value:<40} ({source})\n"));
        };
        match &self.provider {
            Some(p) => line(
                &mut out,
                "provider",
                p.value.name().into(),
                p.source.to_string(),
            ),
            None => line(
                &mut out,
                "provider",
                "none (the offline demo plays)".into(),
                "default".into(),
            ),
        }
        if let Some(m) = &self.model {
            line(&mut out, "model", m.value.clone(), m.source.to_string());
        }
        match (&self.base_url, &self.provider) {
            (Some(b), _) => line(&mut out, "base_url", b.value.clone(), b.source.to_string()),
            (None, Some(p)) => line(
                &mut out,
                "base_url",
                p.value.default_base_url().into(),
                "default".into(),
            ),
            _ => {}
        }
        let key = match (&self.api_key_command, &self.api_key_env, &self.provider) {
            (Some(c), _, _) => format!("from a command ({})", c.source),
            (None, Some(v), _) => format!(
                "${} {}",
                v.value,
                if env.var(&v.value).is_some() {
                    "set, ****"
                } else {
                    "NOT SET"
                }
            ),
            (None, None, Some(p)) => {
                let var = if p.value == ProviderKind::OpenAi {
                    "OPENAI_API_KEY"
                } else {
                    "ANTHROPIC_API_KEY"
                };
                format!(
                    "${var} {}",
                    if env.var(var).is_some() {
                        "set, ****"
                    } else {
                        "not set"
                    }
                )
            }
            _ => "none".into(),
        };
        line(&mut out, "api_key", key, "never shown".into());
        line(
            &mut out,
            "mode",
            self.mode.value.as_str().into(),
            self.mode.source.to_string(),
        );
        line(
            &mut out,
            "sandbox",
            self.sandbox.value.as_str().into(),
            self.sandbox.source.to_string(),
        );
        for r in &self.rules {
            line(
                &mut out,
                "rules",
                r.value.display().to_string(),
                r.source.to_string(),
            );
        }
        line(
            &mut out,
            "max_tokens",
            self.max_tokens.value.to_string(),
            self.max_tokens.source.to_string(),
        );
        if let Some(p) = &self.project_file {
            let trust = if self.project_trusted {
                "trusted"
            } else {
                "not trusted (only tightening settings apply)"
            };
            line(&mut out, "project", p.display().to_string(), trust.into());
        }
        if let Some(note) = &self.trust_note {
            out.push_str(&format!("{note}\n"));
        }
        for i in &self.ignored {
            out.push_str(&format!("ignored: {i}\n"));
        }
        out
    }
}
