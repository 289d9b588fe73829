//! Sub-agents in the policy: the limits a sub-agent's calls are judged under (its mode and
//! sandbox, never wider than its parent's), and the `agent` call that starts one, refused when
//! it asks for more than its caller has.

use serde_json::Value;

use super::{Mode, Part, Policy, Reason, ReasonCode, refuse_part};

/// What a sub-agent's calls are judged under: a mode and a sandbox profile no wider than its
/// parent's (see `gate::Gate::for_agent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub mode: Mode,
    /// The profile its commands run under when they name none, and the widest they may name.
    pub profile: Option<crate::sandbox::Profile>,
}

impl Limits {
    /// These limits by name, as a parked sub-agent's checkpoint keeps them.
    pub fn names(&self) -> (String, Option<String>) {
        (
            self.mode.as_str().to_string(),
            self.profile.map(|p| p.as_str().to_string()),
        )
    }

    /// Limits kept by name; `Err` says which name is not known.
    pub fn from_names(mode: &str, profile: Option<&str>) -> Result<Limits, String> {
        Ok(Limits {
            mode: Mode::parse(mode).ok_or_else(|| format!("unknown mode {mode:?}"))?,
            profile: match profile {
                None => None,
                Some(name) => Some(
                    crate::sandbox::Profile::parse(name)
                        .ok_or_else(|| format!("unknown sandbox profile {name:?}"))?,
                ),
            },
        })
    }
}

/// The tool that starts a sub-agent (`tools::agent`): judged here on the mode and sandbox it
/// asks for, never wider than the caller's.
pub const AGENT_TOOL: &str = "agent";

impl Policy {
    /// A call of the `agent` tool: the mode and sandbox it asks for its sub-agent must be ones
    /// this policy knows, and hold back at least as much as the caller's (the session's agent,
    /// or a sub-agent held to `limits`). Anything else refuses the call, with the reason.
    pub(super) fn judge_spawn(
        &self,
        args: &Value,
        limits: Option<&Limits>,
        parts: &mut Vec<Part>,
        reasons: &mut Vec<Reason>,
    ) {
        let caller = self.mode_within(limits);
        // A spawn that cannot start is refused here, before it is approved (and numbered).
        for key in ["task", "prompt"] {
            let why = match args.get(key) {
                Some(Value::String(text)) if !text.trim().is_empty() => continue,
                Some(Value::String(_)) | None => {
                    format!("`{key}` is required and must not be empty")
                }
                Some(other) => format!("`{key}` must be a string, got {other}"),
            };
            refuse_part(parts, reasons, key, ReasonCode::InvalidArguments, why);
        }
        match args.get("mode") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => match Mode::parse(text) {
                Some(mode) if mode.strictness() < caller.strictness() => refuse_part(
                    parts,
                    reasons,
                    "mode",
                    ReasonCode::WiderThanParent,
                    format!(
                        "a sub-agent cannot run in a wider mode than the agent starting it: `{}` lets more through than `{}`",
                        mode.as_str(),
                        caller.as_str()
                    ),
                ),
                Some(_) => {}
                None => refuse_part(
                    parts,
                    reasons,
                    "mode",
                    ReasonCode::InvalidArguments,
                    format!(
                        "`mode` must be one of default, auto-edit, read-only, got {:?}",
                        crate::visible::visible_line(text)
                    ),
                ),
            },
            Some(other) => refuse_part(
                parts,
                reasons,
                "mode",
                ReasonCode::InvalidArguments,
                format!("`mode` must be a string, got {other}"),
            ),
        }
        match (
            crate::sandbox::profile_arg(args),
            self.profile_within(limits),
        ) {
            (Err(message), _) => refuse_part(
                parts,
                reasons,
                "sandbox",
                ReasonCode::InvalidArguments,
                message,
            ),
            (Ok(Some(asked)), Some(caller)) if asked.wider_than(caller) => refuse_part(
                parts,
                reasons,
                "sandbox",
                ReasonCode::WiderThanParent,
                format!(
                    "a sub-agent cannot run in a wider sandbox than the agent starting it: `{}` lets more through than `{}`",
                    asked.as_str(),
                    caller.as_str()
                ),
            ),
            _ => {}
        }
    }
}
