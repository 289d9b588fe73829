//! Assessing a bash command line: one part per simple command and per redirect, every effect of
//! every part turned into reasons, then the cross-part rule that secrets never leave the machine.

use crate::facts::envvars::{harmless_to_print, secret_like};
use crate::facts::paths::{PathContext, Sensitivity};
use crate::facts::programs::{self, Effect};
use crate::facts::shell::{self, RedirectOp, ShellContext, ShellFacts};

use super::judge::{self, Access, Target};
use super::links;
use super::scope::command_prefix;
use crate::protocol::GrantScope;
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;
use crate::protocol::Subject;

mod builder;
mod search;

use builder::{Builder, When, apply_effect};

/// Variables whose change alters how every later command is found or run.
const SPECIAL_SHELL_VARS: &[&str] = &[
    "PATH",
    "IFS",
    "BASH_ENV",
    "ENV",
    "CDPATH",
    "GLOBIGNORE",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "HOME",
    "BASH_XTRACEFD",
    "FUNCNEST",
    "HISTFILE",
];

const BENIGN_EXPORTS: &[&str] = &[
    "LANG",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "TERM",
    "COLUMNS",
    "LINES",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CI",
    "DEBUG",
    "VERBOSE",
    "PYTHONUNBUFFERED",
    "NODE_ENV",
    "CARGO_TERM_COLOR",
];

pub struct BashAssessment {
    pub facts: ShellFacts,
    pub effects: Vec<Vec<Effect>>,
    pub parts: Vec<Part>,
    pub reasons: Vec<Reason>,
}

/// Assesses a bash command line. The steps run in this order because opaque findings name
/// command parts by their index, which is the command's own (commands come first), and the
/// rule that secrets stay here reads every reason the other steps gave.
pub fn assess(ctx: &PathContext, command: &str) -> BashAssessment {
    let shell_ctx = ShellContext {
        home: ctx.home.clone(),
        cwd: ctx.workspace.clone(),
    };
    let facts = shell::analyze(command, &shell_ctx);
    let mut b = Builder {
        ctx,
        command,
        links: links::Plan::new(ctx, &facts.commands),
        namerefs: namerefs(command, &facts),
        parts: Vec::new(),
        reasons: Vec::new(),
    };
    if let Some(error) = &facts.parse_error {
        b.unparseable(command, error);
        return BashAssessment {
            facts,
            effects: Vec::new(),
            parts: b.parts,
            reasons: b.reasons,
        };
    }
    if facts.commands.is_empty() && facts.redirects.is_empty() {
        b.runs_nothing(command);
    }
    let effects = facts
        .commands
        .iter()
        .enumerate()
        .map(|(index, cmd)| b.command(index, cmd))
        .collect();
    for opaque in &facts.opaque {
        b.opaque(opaque);
    }
    for redirect in &facts.redirects {
        b.redirect(redirect);
    }
    for read in &facts.env_reads {
        b.env_read(read);
    }
    for assignment in &facts.assignments {
        b.assignment(assignment);
    }
    b.secrets_stay_here();
    BashAssessment {
        facts,
        effects,
        parts: b.parts,
        reasons: b.reasons,
    }
}

impl Builder<'_> {
    fn whole(&mut self, command: &str) -> usize {
        self.part(
            PartKind::Script,
            "the whole command".into(),
            Some(0..command.len()),
            None,
            None,
        )
    }

    /// A line that does not parse runs nothing and is refused as a whole.
    fn unparseable(&mut self, command: &str, error: &str) {
        let part = self.whole(command);
        self.reason(
            part,
            Ruling::Deny,
            ReasonCode::Unparseable,
            Risk::Dangerous,
            format!(
                "the command cannot be parsed ({error}); nothing runs. Rewrite it in plain bash"
            ),
        );
    }

    fn runs_nothing(&mut self, command: &str) {
        let part = self.whole(command);
        self.reason(
            part,
            Ruling::Allow,
            ReasonCode::ReadOnly,
            Risk::Safe,
            "runs no command".into(),
        );
    }

    /// One simple command: its part (scoped by its prefix for a session grant), the reasons its
    /// effects and checks give, and "only reads" when nothing else was said. Returns its effects.
    fn command(&mut self, index: usize, cmd: &shell::SimpleCommand) -> Vec<Effect> {
        let argv = cmd.literal_argv();
        let scope = argv
            .as_deref()
            .and_then(command_prefix)
            .map(|prefix| GrantScope::Command { prefix });
        let part = self.part(
            PartKind::Command,
            cmd.display(),
            Some(cmd.span.clone()),
            argv.map(Subject::Command),
            scope,
        );
        let effects = programs::classify(cmd);
        let when = When {
            cwd: &cmd.cwd,
            order: &cmd.order,
            own: Some(index),
        };
        for effect in &effects {
            apply_effect(self, part, &when, effect);
        }
        for f in super::command_checks::findings(self.ctx, cmd) {
            self.reason(part, f.ruling, f.code, f.risk, f.message);
        }
        if let Some(name) = uses_any(&cmd.text, &self.namerefs) {
            let f = judge::judge_unknown(Access::Read, &through_nameref(name));
            self.reason(part, f.ruling, f.code, f.risk, f.message);
        }
        if self.parts[part].ruling == Ruling::Allow
            && !self.reasons.iter().any(|r| r.part == Some(part))
        {
            self.reason(
                part,
                Ruling::Allow,
                ReasonCode::ReadOnly,
                Risk::Safe,
                format!("`{}` only reads", cmd.display()),
            );
        }
        effects
    }

    /// Something the parser could not see through asks, on its command's part when it has one.
    fn opaque(&mut self, opaque: &shell::Opaque) {
        let part = match opaque.command {
            Some(i) => i,
            None => self.part(
                PartKind::Script,
                "part of the command".into(),
                Some(opaque.span.clone()),
                None,
                None,
            ),
        };
        self.reason(
            part,
            Ruling::Ask,
            ReasonCode::Opaque,
            Risk::Dangerous,
            format!("airlock cannot see through this: {}", opaque.what),
        );
    }

    /// A redirect: a network socket asks; a plain device is nothing; any other target is judged
    /// as the path it opens, with a path grant only when it opens one path not through a link.
    fn redirect(&mut self, redirect: &shell::Redirect) {
        let access = match redirect.op {
            RedirectOp::Read => Access::Read,
            _ => Access::Write,
        };
        let shown = redirect.target.display().to_string();
        if shown.starts_with("/dev/tcp/") || shown.starts_with("/dev/udp/") {
            let part = self.part(
                PartKind::Redirect,
                format!("redirect to {shown}"),
                Some(redirect.span.clone()),
                None,
                None,
            );
            self.reason(
                part,
                Ruling::Ask,
                ReasonCode::Network,
                Risk::Dangerous,
                format!("opens a network connection through `{shown}`"),
            );
            return;
        }
        let target = judge::target(self.ctx, &redirect.cwd, &redirect.target);
        let when = When {
            cwd: &redirect.cwd,
            order: &redirect.order,
            own: redirect.owner,
        };
        let through = self.rerouted(&redirect.target, &when);
        let through_links = !through.landings.is_empty() || through.unknown.is_some();
        if let Target::Paths(paths) = &target
            && !through_links
            && paths.iter().all(|p| {
                p.location == crate::facts::paths::Location::Device
                    && !p.sensitivity.contains(&Sensitivity::DiskDevice)
            })
        {
            return;
        }
        // A grant for the path as written must not cover where a new link takes it.
        let (subject, scope) = match &target {
            Target::Paths(paths)
                if paths.len() == 1 && access == Access::Write && !through_links =>
            {
                (
                    Some(Subject::Path(paths[0].path.clone())),
                    Some(GrantScope::Path {
                        path: paths[0].path.clone(),
                    }),
                )
            }
            _ => (None, None),
        };
        let op = match redirect.op {
            RedirectOp::Read => "<",
            RedirectOp::Write => ">",
            RedirectOp::Append => ">>",
            RedirectOp::ReadWrite => "<>",
        };
        let part = self.part(
            PartKind::Redirect,
            format!("{op} {shown}"),
            Some(redirect.span.clone()),
            subject,
            scope,
        );
        self.path_effect(part, access, &redirect.target, &when);
        if let Some(source) = self.source(redirect.span.clone())
            && let Some(name) = uses_any(source, &self.namerefs)
        {
            let f = judge::judge_unknown(access, &through_nameref(name));
            self.reason(part, f.ruling, f.code, f.risk, f.message);
        }
    }

    /// Reading an environment variable: harmless ones are allowed, others ask.
    fn env_read(&mut self, read: &shell::EnvRead) {
        let part = owning_part(&self.parts, &read.span).unwrap_or_else(|| {
            self.part(
                PartKind::Script,
                format!("${}", read.name),
                Some(read.span.clone()),
                None,
                None,
            )
        });
        if harmless_to_print(&read.name) {
            self.reason(
                part,
                Ruling::Allow,
                ReasonCode::ReadOnly,
                Risk::Safe,
                format!("reads `${}`, which holds no secret", read.name),
            );
        } else if secret_like(&read.name) {
            self.reason(
                part,
                Ruling::Ask,
                ReasonCode::ReadsSecret,
                Risk::Mutating,
                format!(
                    "reads the environment variable `{}`, which looks like a secret",
                    read.name
                ),
            );
        } else {
            self.reason(
                part,
                Ruling::Ask,
                ReasonCode::ReadsEnvironment,
                Risk::Mutating,
                format!("reads the environment variable `{}`", read.name),
            );
        }
    }

    /// Setting a variable that changes how later commands are found or run, or exporting one
    /// that is not plainly benign, asks.
    fn assignment(&mut self, assignment: &shell::ShellAssignment) {
        let special = SPECIAL_SHELL_VARS.contains(&assignment.name.as_str())
            || assignment.name.starts_with("LD_")
            || assignment.name.starts_with("DYLD_")
            || assignment.name.starts_with("GIT_");
        let exported = assignment.exported
            && !BENIGN_EXPORTS.contains(&assignment.name.as_str())
            && !assignment.name.starts_with("LC_");
        if special || exported {
            let part = owning_part(&self.parts, &assignment.span).unwrap_or_else(|| {
                self.part(
                    PartKind::Script,
                    format!("{}=…", assignment.name),
                    Some(assignment.span.clone()),
                    None,
                    None,
                )
            });
            self.reason(
                part,
                Ruling::Ask,
                ReasonCode::ConfigInjection,
                Risk::Dangerous,
                format!(
                    "sets `{}`, which changes how later commands are found or run",
                    assignment.name
                ),
            );
        }
    }

    /// Secrets never leave the machine: network use together with reading a secret is a deny.
    fn secrets_stay_here(&mut self) {
        let network_parts: Vec<usize> = self
            .reasons
            .iter()
            .filter(|r| r.code == ReasonCode::Network || r.code == ReasonCode::Publishes)
            .filter_map(|r| r.part)
            .collect();
        let secret = self
            .reasons
            .iter()
            .find(|r| {
                matches!(
                    r.code,
                    ReasonCode::ReadsSecret | ReasonCode::ReadsEnvironment
                )
            })
            .map(|r| r.message.clone());
        if let (Some(&first), Some(secret)) = (network_parts.first(), secret) {
            self.reason(
            first,
            Ruling::Deny,
            ReasonCode::SendsSecrets,
            Risk::Dangerous,
            format!("uses the network in the same command that {secret}; secrets must not leave this machine"),
        );
        }
    }
}

/// The names `declare -n` / `local -n` / `typeset -n` make refer to other variables (the walk
/// reports each such declaration as something it cannot see through, with its span).
fn namerefs(command: &str, facts: &ShellFacts) -> Vec<String> {
    let mut names = Vec::new();
    for opaque in &facts.opaque {
        if !opaque.what.contains(" -n` makes a name refer") {
            continue;
        }
        let Some(text) = command.get(opaque.span.clone()) else {
            continue;
        };
        for word in text.split_whitespace().skip(1) {
            if word.starts_with(['-', '+']) {
                continue;
            }
            let name = word.split(['=', '[']).next().unwrap_or(word);
            if is_name(name) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The first of `names` that `text` expands (`$r`, `${r}`, `${r:-x}`).
fn uses_any<'n>(text: &str, names: &'n [String]) -> Option<&'n str> {
    names.iter().map(String::as_str).find(|name| {
        ["$", "${"].iter().any(|lead| {
            let needle = format!("{lead}{name}");
            text.match_indices(&needle).any(|(at, _)| {
                !text[at + needle.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
            })
        })
    })
}

fn through_nameref(name: &str) -> String {
    format!(
        "`${name}` refers to another variable (a nameref, `declare -n`), whose value is only known when the command runs"
    )
}

/// The command part whose span holds `span` most tightly.
fn owning_part(parts: &[Part], span: &std::ops::Range<usize>) -> Option<usize> {
    parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind == PartKind::Command)
        .filter(|(_, p)| {
            p.span
                .as_ref()
                .is_some_and(|s| s.start <= span.start && span.end <= s.end)
        })
        .min_by_key(|(_, p)| {
            p.span
                .as_ref()
                .map(|s| s.end - s.start)
                .unwrap_or(usize::MAX)
        })
        .map(|(i, _)| i)
}
