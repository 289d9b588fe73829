//! The gate's answer as it crosses to the driver: how risky a call is, the ruling, every reason
//! and the parts of the call each reason is about. The policy builds these (`approval::policy`);
//! the driver shows them. Reasons are collected first and decided on after, so a second reason is
//! never hidden behind the first.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::scope::{GrantScope, Subject};

/// How much harm a call can do, from `Safe` (reads inside the workspace) to `Dangerous`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Safe,
    Mutating,
    Dangerous,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Mutating => "mutating",
            Risk::Dangerous => "dangerous",
        }
    }
}

/// What a reason, a part or a whole call calls for. Ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ruling {
    Allow,
    Ask,
    Deny,
}

impl Ruling {
    pub fn as_str(self) -> &'static str {
        match self {
            Ruling::Allow => "allow",
            Ruling::Ask => "ask",
            Ruling::Deny => "deny",
        }
    }
}

/// Who produced a reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReasonSource {
    Policy,
    Rule { rule: String },
    Mode { mode: String },
}

/// Stable, machine-readable names of reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    UnknownTool,
    InvalidArguments,
    Unparseable,
    CredentialMaterial,
    SendsSecrets,
    WritesOutsideWorkspace,
    DestroysOutsideWorkspace,
    SystemChange,
    TampersWithAirlock,
    ReadOnly,
    ReadsOutsideWorkspace,
    ReadsSecret,
    ReadsEnvironment,
    WritesWorkspace,
    WritesSensitiveFile,
    WritesTemp,
    DeletesInWorkspace,
    LargeDeletion,
    UnknownPath,
    RunsCode,
    InlineCode,
    HiddenInput,
    Network,
    Publishes,
    DestroysWork,
    Privileged,
    ConfigInjection,
    ProcessControl,
    ShellBehaviour,
    UnknownProgram,
    Opaque,
    DeclaredRisk,
    RuleDeny,
    RuleAsk,
    RuleAllow,
    ModeAllow,
    ModeDeny,
    /// An MCP server's tool definitions differ from the ones the user accepted.
    ToolChanged,
    /// The profile a sandboxed command runs under.
    Sandboxed,
    /// The command runs without a sandbox.
    Unsandboxed,
    /// A terminal device is read or written (`/dev/tty`, `/dev/pts/*`, `/dev/console`).
    TouchesTerminal,
    /// A sub-agent would get (or a sub-agent's call asks for) a wider mode or sandbox than the
    /// agent that starts it has.
    WiderThanParent,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub ruling: Ruling,
    pub code: ReasonCode,
    pub message: String,
    /// Index into `Verdict::parts`, when the reason is about one part.
    pub part: Option<usize>,
    pub source: ReasonSource,
}

impl Reason {
    pub fn policy(ruling: Ruling, code: ReasonCode, part: Option<usize>, message: String) -> Self {
        Reason {
            ruling,
            code,
            message,
            part,
            source: ReasonSource::Policy,
        }
    }

    /// "deny: reads a private key (~/.ssh/id_rsa)"
    pub fn line(&self) -> String {
        format!("{}: {}", self.ruling.as_str(), self.message)
    }
}

/// Kinds of parts, for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    Command,
    Redirect,
    Path,
    Script,
    Call,
}

/// One piece of a call that is judged, and granted, on its own: a simple command of a bash line,
/// a redirect, a file path, or the whole call for tools without finer facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    pub kind: PartKind,
    pub label: String,
    /// Byte range in the bash command line, when the part is a piece of one.
    pub span: Option<Range<usize>>,
    pub ruling: Ruling,
    pub risk: Risk,
    /// What a session grant would have to cover for this part; `None` when it cannot be granted.
    #[serde(skip)]
    pub subject: Option<Subject>,
    /// What `allow for session` would store for this part.
    pub scope: Option<GrantScope>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub ruling: Ruling,
    pub risk: Risk,
    pub reasons: Vec<Reason>,
    pub parts: Vec<Part>,
    /// Why a session grant is not offered, when it is not.
    pub no_session_grant: Option<String>,
}

impl Verdict {
    /// Parts that still ask.
    pub fn asking_parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().filter(|p| p.ruling == Ruling::Ask)
    }

    /// What `allow for session` would store, if it is offered: one scope per asking part.
    pub fn session_scopes(&self) -> Option<Vec<GrantScope>> {
        if self.ruling != Ruling::Ask || self.no_session_grant.is_some() {
            return None;
        }
        let mut scopes: Vec<GrantScope> = Vec::new();
        for part in self.asking_parts() {
            let scope = part.scope.clone()?;
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        (!scopes.is_empty()).then_some(scopes)
    }

    /// The subjects a stored grant must cover for this call to run without asking.
    pub fn asking_subjects(&self) -> Option<Vec<Subject>> {
        self.asking_parts().map(|p| p.subject.clone()).collect()
    }

    /// Reasons as one line each, in their stable order.
    pub fn reason_lines(&self) -> Vec<String> {
        self.reasons.iter().map(Reason::line).collect()
    }

    /// The reasons that decided the ruling (deny reasons for a deny, ask reasons for an ask).
    pub fn deciding_reasons(&self) -> Vec<&Reason> {
        self.reasons
            .iter()
            .filter(|r| r.ruling == self.ruling)
            .collect()
    }
}
