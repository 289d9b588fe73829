//! The policy: from a tool call's arguments to a `Verdict` with every reason.
//!
//! Order of work: facts first (a real shell parse, resolved paths), then every reason collected per
//! part, then rules (deny > ask > allow, applied to parts only, never lifting a deny), then the mode,
//! then one decision over all parts. Nothing here asks anyone or runs anything.

mod active;
mod bash;
mod command_checks;
mod file_tools;
mod gitconfig;
mod judge;
mod lift;
mod links;
mod makefile;
mod mcp;
mod replaced;
mod sandboxing;
pub mod scope;
mod spawn;

use std::borrow::Cow;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::approval::rules::{Action, Rules};
use crate::facts::catalog::ToolCatalog;
use crate::facts::paths::{PathContext, ResolvedPath};
use crate::facts::programs::Effect;
use crate::facts::shell::ShellFacts;
use crate::sandbox::SandboxPolicy;

pub use sandboxing::NO_GRANT_UNSANDBOXED;

use crate::protocol::GrantScope;
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::ReasonSource;
use crate::protocol::Risk;
use crate::protocol::Ruling;
use crate::protocol::Subject;
use crate::protocol::Verdict;
pub use judge::show as show_path;
pub use spawn::{AGENT_TOOL, Limits};

/// How much airlock lets through without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Every mutation asks; file writes show their diff.
    Default,
    /// Ordinary file writes inside the workspace run; sensitive ones still ask.
    AutoEdit,
    /// Whatever would ask is denied.
    ReadOnly,
}

impl Mode {
    /// How much it holds back, from auto-edit (least) to read-only (most): a sub-agent's mode
    /// holds back at least as much as its parent's.
    pub fn strictness(self) -> u8 {
        match self {
            Mode::AutoEdit => 0,
            Mode::Default => 1,
            Mode::ReadOnly => 2,
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        [Mode::Default, Mode::AutoEdit, Mode::ReadOnly]
            .into_iter()
            .find(|m| m.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AutoEdit => "auto-edit",
            Mode::ReadOnly => "read-only",
        }
    }
}

/// An edit or write deleting more lines than this asks even in auto-edit mode.
pub const LARGE_DELETION_LINES: usize = 200;

/// What airlock derived from a call's arguments.
#[derive(Debug, Clone)]
pub enum Facts {
    Bash {
        shell: ShellFacts,
        effects: Vec<Vec<Effect>>,
    },
    File(FileFacts),
    None,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileFacts {
    pub path: ResolvedPath,
    pub exists: bool,
    pub lines_deleted: usize,
    pub lines_added: usize,
}

#[derive(Debug, Clone)]
pub struct Assessment {
    pub facts: Facts,
    pub verdict: Verdict,
}

pub struct Policy {
    pub mode: Mode,
    pub rules: Rules,
    pub paths: PathContext,
    pub catalog: ToolCatalog,
    /// The MCP tools offered now (`SERVER__TOOL`), judged by `mcp`.
    pub mcp: Option<std::sync::Arc<crate::mcp::McpCatalog>>,
    /// The sandbox `bash` calls run in; `None` judges them without one in mind (tests of other
    /// things). The tool registry is given the same [`SandboxPolicy`].
    pub sandbox: Option<SandboxPolicy>,
}

impl Policy {
    pub fn new(mode: Mode, rules: Rules, paths: PathContext, catalog: ToolCatalog) -> Self {
        Policy {
            mode,
            rules,
            paths,
            catalog,
            mcp: None,
            sandbox: None,
        }
    }

    /// The same policy, judging `bash` calls by the sandbox they will run in.
    pub fn with_sandbox(mut self, sandbox: SandboxPolicy) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The call's arguments with the sandbox profile it will run under written in (see
    /// [`SandboxPolicy::fill_in`]); borrowed, not copied, when nothing is written in: without a
    /// sandbox, and for every call `fill_in` leaves as it is (another tool, a call that names a
    /// profile, arguments that are not an object). A 100 MB `write_file` is not copied to be
    /// frozen.
    pub fn with_profile<'a>(&self, tool: &str, args: &'a Value) -> Cow<'a, Value> {
        match (&self.sandbox, args) {
            (Some(sandbox), Value::Object(map))
                if self.runs_commands(tool) && !map.contains_key("sandbox") =>
            {
                Cow::Owned(sandbox.fill_in(tool, args))
            }
            _ => Cow::Borrowed(args),
        }
    }

    /// Whether `tool` runs a shell command (it declares the argument that holds one).
    pub fn runs_commands(&self, tool: &str) -> bool {
        self.catalog.get(tool).is_some_and(|d| d.command.is_some())
    }

    /// Whether `tool` names a path the gate judges (and so may only run on the path judged).
    pub fn names_a_path(&self, tool: &str) -> bool {
        self.catalog.get(tool).is_some_and(|d| !d.paths.is_empty())
    }

    /// Also judges the tools of these MCP servers.
    pub fn with_mcp(mut self, catalog: std::sync::Arc<crate::mcp::McpCatalog>) -> Self {
        self.mcp = Some(catalog);
        self
    }

    pub fn assess(&self, tool: &str, args: &Value) -> Assessment {
        self.assess_within(tool, args, None)
    }

    /// The mode a call is judged under: a sub-agent's, or the session's.
    pub fn mode_within(&self, limits: Option<&Limits>) -> Mode {
        limits.map_or(self.mode, |l| l.mode)
    }

    /// The profile a command that names none runs under: a sub-agent's, or the session's.
    pub fn profile_within(&self, limits: Option<&Limits>) -> Option<crate::sandbox::Profile> {
        limits
            .and_then(|l| l.profile)
            .or(self.sandbox.as_ref().map(|s| s.default))
    }

    /// [`Policy::with_profile`] for a call of an agent judged under `limits`.
    pub fn with_profile_within<'a>(
        &self,
        tool: &str,
        args: &'a Value,
        limits: Option<&Limits>,
    ) -> Cow<'a, Value> {
        match (limits.and_then(|l| l.profile), self.sandbox.is_some()) {
            (Some(profile), true) if self.runs_commands(tool) => {
                Cow::Owned(crate::sandbox::with_profile(tool, args, profile))
            }
            _ => self.with_profile(tool, args),
        }
    }

    /// Judges a call as [`Policy::assess`] does, for an agent held to `limits` (a sub-agent):
    /// its mode, and its sandbox profile as the default and the widest a command may name.
    pub fn assess_within(&self, tool: &str, args: &Value, limits: Option<&Limits>) -> Assessment {
        if let Some(assessment) = mcp::assess(self, tool, args, self.mode_within(limits)) {
            return assessment;
        }
        let (facts, mut parts, mut reasons) = self.facts_and_reasons(tool, args);
        if tool == AGENT_TOOL {
            self.judge_spawn(args, limits, &mut parts, &mut reasons);
        }
        let mut running = None;
        if let (Some(sandbox), Facts::Bash { .. }) = (&self.sandbox, &facts) {
            let asked = crate::sandbox::profile_arg(args).map(|named| {
                named.unwrap_or(limits.and_then(|l| l.profile).unwrap_or(sandbox.default))
            });
            match asked {
                Ok(profile) => {
                    if let Some(widest) = limits.and_then(|l| l.profile)
                        && profile.wider_than(widest)
                    {
                        refuse_part(
                            &mut parts,
                            &mut reasons,
                            "sandbox",
                            ReasonCode::WiderThanParent,
                            format!(
                                "this sub-agent runs under sandbox `{}`; its commands cannot ask for the wider `{}`",
                                widest.as_str(),
                                profile.as_str()
                            ),
                        );
                    }
                    running = Some(sandboxing::apply(
                        sandbox,
                        profile,
                        &mut parts,
                        &mut reasons,
                    ));
                }
                Err(message) => refuse_part(
                    &mut parts,
                    &mut reasons,
                    "sandbox",
                    ReasonCode::InvalidArguments,
                    message,
                ),
            }
        }
        self.apply_rules(tool, &facts, &mut parts, &mut reasons);
        self.apply_mode(tool, self.mode_within(limits), &mut parts, &mut reasons);
        let mut verdict = decide(parts, reasons);
        if let Some(running) = running {
            sandboxing::finish(running, &mut verdict);
        }
        Assessment { facts, verdict }
    }

    /// Facts, parts and reasons for one call, before rules and mode: a refusal for an unknown
    /// tool or malformed arguments, the shell analysis for `bash`, the path for a file tool, and
    /// the declared risk for any other tool.
    fn facts_and_reasons(&self, tool: &str, args: &Value) -> Findings {
        let Some(descriptor) = self.catalog.get(tool) else {
            return whole_call(
                tool,
                Ruling::Deny,
                ReasonCode::UnknownTool,
                Risk::Dangerous,
                format!("`{tool}` is not a registered tool, so airlock cannot know what it does"),
            );
        };
        let Some(object) = args.as_object() else {
            return whole_call(
                tool,
                Ruling::Deny,
                ReasonCode::InvalidArguments,
                Risk::Dangerous,
                format!(
                    "the arguments of `{tool}` must be a JSON object, got {}",
                    type_name(args)
                ),
            );
        };
        // What the tool declares decides how it is judged, never its name: a command it runs,
        // a path it names, or neither (its declared risk).
        let found = if let Some(key) = descriptor.command {
            match object.get(key).and_then(Value::as_str) {
                Some(command) => {
                    let a = bash::assess(&self.paths, command);
                    Ok((
                        Facts::Bash {
                            shell: a.facts,
                            effects: a.effects,
                        },
                        a.parts,
                        a.reasons,
                    ))
                }
                None => Err(key),
            }
        } else if let Some(arg) = descriptor.paths.first() {
            file_tools::findings(&self.paths, arg, object)
        } else {
            Ok(declared_risk(tool, descriptor.declared_risk()))
        };
        found.unwrap_or_else(|key| {
            whole_call(
                tool,
                Ruling::Deny,
                ReasonCode::InvalidArguments,
                Risk::Dangerous,
                format!("`{tool}` needs a string argument `{key}`"),
            )
        })
    }

    fn apply_rules(
        &self,
        tool: &str,
        facts: &Facts,
        parts: &mut [Part],
        reasons: &mut Vec<Reason>,
    ) {
        let rules: Vec<_> = self.rules.for_tool(tool).collect();
        if rules.is_empty() {
            return;
        }
        for (index, part) in parts.iter_mut().enumerate() {
            let applies = |rule: &crate::approval::rules::Rule| -> bool {
                match (&part.kind, &part.subject, facts) {
                    (PartKind::Command, Some(Subject::Command(argv)), _) => rule.matches_argv(argv),
                    (PartKind::Command, None, _) => {
                        // Part of the argv is only known at run time: deny and ask rules still
                        // match on the label, allow rules never do.
                        rule.action != Action::Allow
                            && rule.matches_argv(
                                &part
                                    .label
                                    .split_whitespace()
                                    .map(str::to_string)
                                    .collect::<Vec<_>>(),
                            )
                    }
                    (PartKind::Path, _, Facts::File(f)) => {
                        let rel = f
                            .path
                            .path
                            .strip_prefix(&self.paths.workspace)
                            .ok()
                            .map(|r| r.to_string_lossy().into_owned());
                        rule.matches_path(rel.as_deref(), &f.path.path)
                    }
                    (PartKind::Call, _, Facts::None) => rule.pattern.is_none(),
                    _ => false,
                }
            };
            let matching: Vec<&crate::approval::rules::Rule> =
                rules.iter().filter(|r| applies(r)).copied().collect();
            let rule_reason = |ruling, code, rule: &crate::approval::rules::Rule| {
                rule_reason(ruling, code, rule, index)
            };
            let asked = deny_and_ask(&matching, index, part, reasons);
            // A prefix rule (`find *`) lifts a deletion, a program run or a write only when the
            // words it spells out cause it, not an option its `*` matched (see `lift`).
            let unnamed = |rule: &crate::approval::rules::Rule| -> bool {
                let (Some(named), Facts::Bash { shell, .. }) = (rule.prefix_len(), facts) else {
                    return false;
                };
                let Some(cmd) = shell
                    .commands
                    .iter()
                    .find(|c| Some(&c.span) == part.span.as_ref())
                else {
                    return true;
                };
                let families = lift::named_families(cmd, named);
                reasons
                    .iter()
                    .filter(|r| r.part == Some(index) && r.ruling == Ruling::Ask)
                    .filter_map(|r| lift::family_of(r.code))
                    .any(|f| !families.contains(&f))
            };
            if part.ruling == Ruling::Ask
                && !asked
                && let Some(rule) = matching
                    .iter()
                    .find(|r| r.action == Action::Allow && !unnamed(r))
            {
                part.ruling = Ruling::Allow;
                for r in reasons
                    .iter_mut()
                    .filter(|r| r.part == Some(index) && r.ruling == Ruling::Ask)
                {
                    r.ruling = Ruling::Allow;
                    r.message = format!("{} (allowed by the rule `{}`)", r.message, rule.name);
                }
                reasons.push(rule_reason(Ruling::Allow, ReasonCode::RuleAllow, rule));
            }
        }
    }

    fn apply_mode(&self, tool: &str, mode: Mode, parts: &mut [Part], reasons: &mut Vec<Reason>) {
        let ruling_mode = mode;
        let mode = ReasonSource::Mode {
            mode: ruling_mode.as_str().into(),
        };
        match ruling_mode {
            Mode::Default => {}
            Mode::ReadOnly => {
                for (index, part) in parts.iter_mut().enumerate() {
                    if part.ruling == Ruling::Ask {
                        part.ruling = Ruling::Deny;
                        reasons.push(Reason {
                            ruling: Ruling::Deny,
                            code: ReasonCode::ModeDeny,
                            message: format!(
                                "`{}` would need approval, and read-only mode denies it",
                                part.label
                            ),
                            part: Some(index),
                            source: mode.clone(),
                        });
                    }
                }
            }
            Mode::AutoEdit => {
                if !self.catalog.get(tool).is_some_and(|d| d.writes_a_path()) {
                    return;
                }
                for (index, part) in parts.iter_mut().enumerate() {
                    let ordinary = part.ruling == Ruling::Ask
                        && reasons
                            .iter()
                            .filter(|r| r.part == Some(index) && r.ruling == Ruling::Ask)
                            .all(|r| r.code == ReasonCode::WritesWorkspace);
                    if ordinary {
                        part.ruling = Ruling::Allow;
                        for r in reasons
                            .iter_mut()
                            .filter(|r| r.part == Some(index) && r.ruling == Ruling::Ask)
                        {
                            r.ruling = Ruling::Allow;
                            r.message = format!(
                                "{} (auto-edit mode allows ordinary workspace writes)",
                                r.message
                            );
                            r.source = mode.clone();
                        }
                    }
                }
            }
        }
    }
}

/// A part of the call that is refused whole (a profile that is no profile, a wider one than
/// a sub-agent may have), with its reason.
pub(super) fn refuse_part(
    parts: &mut Vec<Part>,
    reasons: &mut Vec<Reason>,
    label: &str,
    code: ReasonCode,
    message: String,
) {
    let index = parts.len();
    parts.push(Part {
        kind: PartKind::Call,
        label: label.into(),
        span: None,
        ruling: Ruling::Deny,
        risk: Risk::Dangerous,
        subject: None,
        scope: None,
    });
    reasons.push(Reason::policy(Ruling::Deny, code, Some(index), message));
}

/// One decision over all parts, reasons in their stable order: deny, then ask, then allow; within
/// each, by part, then in the order they were found.
fn decide(parts: Vec<Part>, mut reasons: Vec<Reason>) -> Verdict {
    reasons.sort_by_key(|r| (std::cmp::Reverse(r.ruling), r.part.unwrap_or(usize::MAX)));
    let ruling = parts.iter().map(|p| p.ruling).max().unwrap_or(Ruling::Deny);
    let risk = parts
        .iter()
        .map(|p| p.risk)
        .max()
        .unwrap_or(Risk::Dangerous);
    let no_session_grant = if ruling != Ruling::Ask {
        None
    } else if risk == Risk::Dangerous {
        Some("dangerous calls are approved one at a time, never for the session".to_string())
    } else {
        parts
            .iter()
            .find(|p| p.ruling == Ruling::Ask && (p.scope.is_none() || p.subject.is_none()))
            .map(|p| format!("`{}` cannot be scoped for a session grant", p.label))
    };
    Verdict {
        ruling,
        risk,
        reasons,
        parts,
        no_session_grant,
    }
}

/// Facts, parts and reasons of one call before rules and mode.
type Findings = (Facts, Vec<Part>, Vec<Reason>);

/// One part for the whole call, with one reason.
fn whole_call(
    tool: &str,
    ruling: Ruling,
    code: ReasonCode,
    risk: Risk,
    message: String,
) -> Findings {
    let part = Part {
        kind: PartKind::Call,
        label: tool.to_string(),
        span: None,
        ruling,
        risk,
        subject: None,
        scope: None,
    };
    (
        Facts::None,
        vec![part],
        vec![Reason::policy(ruling, code, Some(0), message)],
    )
}

/// A tool airlock cannot look into is judged by the risk it declares, grantable by its name.
fn declared_risk(tool: &str, risk: Risk) -> Findings {
    let ruling = if risk == Risk::Safe {
        Ruling::Allow
    } else {
        Ruling::Ask
    };
    let (facts, mut parts, reasons) = whole_call(
        tool,
        ruling,
        ReasonCode::DeclaredRisk,
        risk,
        format!("`{tool}` declares itself {}", risk.as_str()),
    );
    parts[0].subject = Some(Subject::Command(vec![tool.to_string()]));
    parts[0].scope = Some(GrantScope::Command {
        prefix: vec![tool.to_string()],
    });
    (facts, parts, reasons)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Lines removed and added going from `old` to `new`, counted as multisets of lines (cheap, and
/// never less than a real diff's count of deleted lines that have no equal elsewhere).
pub fn line_changes(old: &str, new: &str) -> (usize, usize) {
    replaced::line_changes_bytes(old.as_bytes(), new.as_bytes())
}

/// The workspace-relative form of a path, if it is inside.
pub fn relative_to(ctx: &PathContext, path: &Path) -> Option<String> {
    path.strip_prefix(&ctx.workspace)
        .ok()
        .map(|r| r.to_string_lossy().into_owned())
}

/// What a rule says about part `index` of a call.
pub(super) fn rule_reason(
    ruling: Ruling,
    code: ReasonCode,
    rule: &crate::approval::rules::Rule,
    index: usize,
) -> Reason {
    Reason {
        ruling,
        code,
        message: match &rule.reason {
            Some(why) => format!("matches the rule `{}`: {why}", rule.name),
            None => format!("matches the rule `{}`", rule.name),
        },
        part: Some(index),
        source: ReasonSource::Rule {
            rule: rule.name.clone(),
        },
    }
}

/// Applies the deny and ask rules among `matching` to part `index`; true when one asked.
pub(super) fn deny_and_ask(
    matching: &[&crate::approval::rules::Rule],
    index: usize,
    part: &mut Part,
    reasons: &mut Vec<Reason>,
) -> bool {
    let mut asked = false;
    for rule in matching {
        match rule.action {
            Action::Deny => {
                part.ruling = Ruling::Deny;
                reasons.push(rule_reason(Ruling::Deny, ReasonCode::RuleDeny, rule, index));
            }
            Action::Ask => {
                asked = true;
                part.ruling = part.ruling.max(Ruling::Ask);
                reasons.push(rule_reason(Ruling::Ask, ReasonCode::RuleAsk, rule, index));
            }
            Action::Allow => {}
        }
    }
    asked
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod with_profile_tests {
    use super::*;
    use crate::sandbox::{Profile, Support};
    use serde_json::json;

    #[test]
    fn the_profile_is_written_in_exactly_where_the_sandbox_would_and_nothing_else_is_copied() {
        let dir = tempfile::tempdir().unwrap();
        let paths = PathContext::new(dir.path(), dir.path(), dir.path()).unwrap();
        let sandbox = SandboxPolicy {
            default: Profile::WorkspaceWrite,
            support: Support::Missing {
                why: "a test".into(),
            },
        };
        let policy = Policy::new(Mode::Default, Rules::empty(), paths, ToolCatalog::builtin())
            .with_sandbox(sandbox.clone());
        let calls = [
            ("bash", json!({"command": "ls"})),
            ("bash", json!({"command": "ls", "sandbox": "off"})),
            ("bash", json!("ls")),
            ("bash", json!(null)),
            (
                "write_file",
                json!({"path": "a", "content": "x".repeat(1000)}),
            ),
            ("read_file", json!({"path": "a"})),
        ];
        for (tool, args) in &calls {
            let filled = policy.with_profile(tool, args);
            assert_eq!(*filled, sandbox.fill_in(tool, args), "{tool} {args}");
            let changed = *filled != *args;
            assert_eq!(matches!(filled, Cow::Owned(_)), changed, "{tool} {args}");
        }
        let without = Policy::new(
            Mode::Default,
            Rules::empty(),
            PathContext::new(dir.path(), dir.path(), dir.path()).unwrap(),
            ToolCatalog::builtin(),
        );
        assert!(matches!(
            without.with_profile("bash", &calls[0].1),
            Cow::Borrowed(_)
        ));
    }
}
