//! The sandbox in the verdict of a `bash` call: which profile it runs under, said as a reason;
//! what the sandbox contains no longer counts as dangerous (so more such calls can be granted
//! for the session); and a call that runs without a sandbox (profile `off`, or a kernel without
//! Landlock) always asks, as a part of its own that no rule lifts, and is never granted for the
//! session.

use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;
use crate::protocol::Verdict;
use crate::sandbox::{Profile, SandboxPolicy, Support};

/// Why a call that runs without the sandbox gets no session grant.
pub const NO_GRANT_UNSANDBOXED: &str =
    "commands that run without the sandbox are approved one at a time, never for the session";

/// Reasons whose danger the sandbox contains when it cuts the network and confines writes:
/// code the command runs (inline, from stdin, through config injection, unknown programs) can
/// reach only what the profile lets it.
const CONTAINED: &[ReasonCode] = &[
    ReasonCode::RunsCode,
    ReasonCode::InlineCode,
    ReasonCode::HiddenInput,
    ReasonCode::ConfigInjection,
    ReasonCode::UnknownProgram,
    ReasonCode::Network,
];

/// How a `bash` call will run, as the policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Running {
    Sandboxed(Profile),
    /// Without a sandbox: the profile is `off`, or the kernel cannot make one.
    Unconfined,
}

/// Applies the sandbox to a `bash` call's parts and reasons, before rules and the mode.
pub fn apply(
    sandbox: &SandboxPolicy,
    profile: Profile,
    parts: &mut Vec<Part>,
    reasons: &mut Vec<Reason>,
) -> Running {
    let why_unconfined = match (&sandbox.support, profile) {
        (_, Profile::Off) => Some(
            "runs without the sandbox (`\"sandbox\": \"off\"`), with all of your rights: your \
             files, keys and the network"
                .to_string(),
        ),
        (Support::Missing { why }, _) => Some(format!(
            "runs without a sandbox, with all of your rights: {why} (it would have run as `{}`)",
            profile.as_str()
        )),
        (Support::Landlock { .. }, _) => None,
    };
    if let Some(message) = why_unconfined {
        let index = parts.len();
        parts.push(Part {
            kind: PartKind::Call,
            label: "no sandbox".into(),
            span: None,
            ruling: Ruling::Ask,
            risk: Risk::Dangerous,
            subject: None,
            scope: None,
        });
        reasons.push(Reason::policy(
            Ruling::Ask,
            ReasonCode::Unsandboxed,
            Some(index),
            message,
        ));
        return Running::Unconfined;
    }
    reasons.push(Reason::policy(
        Ruling::Allow,
        ReasonCode::Sandboxed,
        None,
        format!(
            "runs in the sandbox `{}`: {}",
            profile.as_str(),
            profile.describe()
        ),
    ));
    if !profile.has_network() {
        for (index, part) in parts.iter_mut().enumerate() {
            let contained = part.ruling == Ruling::Ask
                && part.risk == Risk::Dangerous
                && reasons
                    .iter()
                    .filter(|r| r.part == Some(index) && r.ruling == Ruling::Ask)
                    .all(|r| CONTAINED.contains(&r.code));
            if contained {
                part.risk = Risk::Mutating;
            }
        }
    }
    Running::Sandboxed(profile)
}

/// After the decision: a call that runs unconfined is never granted for the session.
pub fn finish(running: Running, verdict: &mut Verdict) {
    if running == Running::Unconfined && verdict.ruling == Ruling::Ask {
        verdict.no_session_grant = Some(NO_GRANT_UNSANDBOXED.into());
    }
}
