//! Assessing a bash command line: one part per simple command and per redirect, every effect of
//! every part turned into reasons, then the cross-part rule that secrets never leave the machine.

use crate::approval::envvars::{harmless_to_print, secret_like};
use crate::approval::grants::{GrantScope, Subject};
use crate::approval::paths::planned::{self, Landings};
use crate::approval::paths::{self, PathContext, ResolvedPath, Sensitivity};
use crate::approval::programs::{self, Effect};
use crate::approval::risk::Risk;
use crate::approval::shell::{self, RedirectOp, ShellContext, ShellFacts, Word};
use crate::approval::verdict::{Part, PartKind, Reason, ReasonCode, Ruling};

use super::judge::{self, Access, Target};
use super::links;
use super::scope::command_prefix;

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

/// Where and when a part opens its paths: what the links the command line creates can reach.
struct When<'a> {
    cwd: &'a shell::Cwd,
    order: &'a shell::Order,
    /// The command the part belongs to.
    own: Option<usize>,
}

struct Builder<'a> {
    ctx: &'a PathContext,
    /// Links the command line creates; every path is judged through them too.
    links: links::Plan,
    parts: Vec<Part>,
    reasons: Vec<Reason>,
}

impl Builder<'_> {
    fn part(
        &mut self,
        kind: PartKind,
        label: String,
        span: Option<std::ops::Range<usize>>,
        subject: Option<Subject>,
        scope: Option<GrantScope>,
    ) -> usize {
        self.parts.push(Part {
            kind,
            label,
            span,
            ruling: Ruling::Allow,
            risk: Risk::Safe,
            subject,
            scope,
        });
        self.parts.len() - 1
    }

    fn reason(
        &mut self,
        part: usize,
        ruling: Ruling,
        code: ReasonCode,
        risk: Risk,
        message: String,
    ) {
        let p = &mut self.parts[part];
        p.ruling = p.ruling.max(ruling);
        p.risk = p.risk.max(risk);
        self.reasons
            .push(Reason::policy(ruling, code, Some(part), message));
    }

    /// Judges `word` as it is on disk and through every link the command line creates that
    /// may exist when a part running at `when` opens it.
    fn path_effect(&mut self, part: usize, access: Access, word: &Word, when: &When) {
        let cwd = when.cwd;
        match judge::target(self.ctx, cwd, word) {
            Target::Paths(paths) => {
                for p in paths {
                    let f = judge::judge(self.ctx, access, &p);
                    self.reason(part, f.ruling, f.code, f.risk, f.message);
                }
            }
            Target::Unknown(why) => {
                let f = judge::judge_dynamic(word.display())
                    .unwrap_or_else(|| judge::judge_unknown(access, &why));
                self.reason(part, f.ruling, f.code, f.risk, f.message);
            }
        }
        let through = self.rerouted(word, when);
        if let Some(why) = &through.unknown {
            let f = judge::judge_unknown(access, why);
            self.reason(part, f.ruling, f.code, f.risk, f.message);
        }
        for (path, via) in self.landed(&through) {
            let f = judge::judge(self.ctx, access, &path);
            // What the path as written already allows says nothing new.
            if f.ruling == Ruling::Allow {
                continue;
            }
            let message = format!(
                "{} (through `{via}`, a link this command creates)",
                f.message
            );
            self.reason(part, f.ruling, f.code, f.risk, message);
        }
    }

    /// Where `word` leads through the links the command line creates: nothing when it creates
    /// none, or when the word is already unknown without them.
    fn rerouted(&self, word: &Word, when: &When) -> Landings {
        let Word::Lit { value, glob, .. } = word else {
            return Landings::default();
        };
        if self.links.links.is_empty() {
            return Landings::default();
        }
        let base = match when.cwd {
            shell::Cwd::Known(dir) => dir.clone(),
            shell::Cwd::Unknown if value.starts_with(['/', '~']) => self.ctx.workspace.clone(),
            shell::Cwd::Unknown => return Landings::default(),
        };
        let sees = |by: usize| self.links.sees(by, when.order, when.own);
        planned::reroute(self.ctx, &base, value, *glob, &self.links.links, &sees)
    }

    /// Each landing resolved like any path, with the link it went through as a person reads it.
    fn landed(&self, through: &Landings) -> Vec<(ResolvedPath, String)> {
        through
            .landings
            .iter()
            .map(|l| {
                let path = paths::resolve(self.ctx, &self.ctx.workspace, &l.path.to_string_lossy());
                let via = l.via.as_deref().map(|v| self.shown(v)).unwrap_or_default();
                (path, via)
            })
            .collect()
    }

    fn shown(&self, path: &std::path::Path) -> String {
        if let Ok(rel) = path.strip_prefix(&self.ctx.workspace) {
            return rel.display().to_string();
        }
        if let Ok(rel) = path.strip_prefix(&self.ctx.home) {
            return format!("~/{}", rel.display());
        }
        path.display().to_string()
    }
}

impl Builder<'_> {
    /// `make -n`: a read of the makefile when it makes make run nothing, else it asks as make
    /// does, saying which line runs (see `super::makefile`).
    fn make_dry_run(&mut self, part: usize, dir: &Word, file: Option<&Word>, when: &When) {
        match super::makefile::quiet_makefile(self.ctx, when.cwd, dir, file) {
            Ok(makefile) => {
                let word = Word::lit(&makefile.to_string_lossy());
                self.path_effect(part, Access::Read, &word, when);
            }
            Err(why) => self.reason(
                part,
                Ruling::Ask,
                ReasonCode::RunsCode,
                Risk::Mutating,
                format!("`make -n` still runs project code here: {why}"),
            ),
        }
    }

    /// The places a tree named by `word` starts: as written, and through the links the command
    /// line creates.
    fn roots(&self, word: &Word, when: &When) -> Vec<ResolvedPath> {
        let mut roots = match judge::target(self.ctx, when.cwd, word) {
            Target::Paths(roots) => roots,
            Target::Unknown(_) => Vec::new(),
        };
        let through = self.rerouted(word, when);
        roots.extend(self.landed(&through).into_iter().map(|(path, _)| path));
        roots
    }

    /// A search through every file of a tree that holds the home directory reads the private
    /// keys and credential stores in it: `grep -r "PRIVATE KEY" ~` is refused like `cat` of them.
    fn search_effect(&mut self, part: usize, word: &Word, when: &When) {
        // `ln -s ~ h && grep -r KEY h` searches the home through the link.
        for root in self.roots(word, when) {
            if self.ctx.home.starts_with(&root.path) && root.path.components().count() > 0 {
                let shown = judge::show(self.ctx, &root);
                self.reason(
                    part,
                    Ruling::Deny,
                    ReasonCode::CredentialMaterial,
                    Risk::Dangerous,
                    format!(
                        "searches every file under {shown}, which holds your home directory with its private keys and credential stores"
                    ),
                );
            }
        }
    }

    /// A recursive read that follows symlinks: the tree itself, and every link out of it.
    fn tree_effect(&mut self, part: usize, word: &Word, when: &When) {
        self.path_effect(part, Access::Read, word, when);
        for root in self.roots(word, when) {
            match judge::escaping_links(self.ctx, &root) {
                Ok(links) => {
                    for target in links {
                        let mut f = judge::judge(self.ctx, Access::Read, &target);
                        f.message = format!("{} (reached by following a symlink)", f.message);
                        self.reason(part, f.ruling, f.code, f.risk, f.message);
                    }
                }
                Err(why) => self.reason(
                    part,
                    Ruling::Ask,
                    ReasonCode::UnknownPath,
                    Risk::Mutating,
                    format!("follows symlinks through a tree airlock cannot check: {why}"),
                ),
            }
        }
    }
}

pub fn assess(ctx: &PathContext, command: &str) -> BashAssessment {
    let shell_ctx = ShellContext {
        home: ctx.home.clone(),
        cwd: ctx.workspace.clone(),
    };
    let facts = shell::analyze(command, &shell_ctx);
    let mut b = Builder {
        ctx,
        links: links::Plan::new(ctx, &facts.commands),
        parts: Vec::new(),
        reasons: Vec::new(),
    };
    let mut all_effects = Vec::new();
    let whole = |b: &mut Builder| {
        b.part(
            PartKind::Script,
            "the whole command".into(),
            Some(0..command.len()),
            None,
            None,
        )
    };
    if let Some(error) = &facts.parse_error {
        let part = whole(&mut b);
        b.reason(
            part,
            Ruling::Deny,
            ReasonCode::Unparseable,
            Risk::Dangerous,
            format!(
                "the command cannot be parsed ({error}); nothing runs. Rewrite it in plain bash"
            ),
        );
        return BashAssessment {
            facts,
            effects: all_effects,
            parts: b.parts,
            reasons: b.reasons,
        };
    }
    if facts.commands.is_empty() && facts.redirects.is_empty() {
        let part = whole(&mut b);
        b.reason(
            part,
            Ruling::Allow,
            ReasonCode::ReadOnly,
            Risk::Safe,
            "runs no command".into(),
        );
    }

    for (index, cmd) in facts.commands.iter().enumerate() {
        let argv = cmd.literal_argv();
        let scope = argv
            .as_deref()
            .and_then(command_prefix)
            .map(|prefix| GrantScope::Command { prefix });
        let part = b.part(
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
            apply_effect(&mut b, part, &when, effect);
        }
        for f in super::command_checks::findings(ctx, cmd) {
            b.reason(part, f.ruling, f.code, f.risk, f.message);
        }
        if b.parts[part].ruling == Ruling::Allow && !b.reasons.iter().any(|r| r.part == Some(part))
        {
            b.reason(
                part,
                Ruling::Allow,
                ReasonCode::ReadOnly,
                Risk::Safe,
                format!("`{}` only reads", cmd.display()),
            );
        }
        all_effects.push(effects);
    }

    for opaque in &facts.opaque {
        let part = match opaque.command {
            Some(i) => i,
            None => b.part(
                PartKind::Script,
                "part of the command".into(),
                Some(opaque.span.clone()),
                None,
                None,
            ),
        };
        b.reason(
            part,
            Ruling::Ask,
            ReasonCode::Opaque,
            Risk::Dangerous,
            format!("airlock cannot see through this: {}", opaque.what),
        );
    }

    for redirect in &facts.redirects {
        let access = match redirect.op {
            RedirectOp::Read => Access::Read,
            _ => Access::Write,
        };
        let shown = redirect.target.display().to_string();
        if shown.starts_with("/dev/tcp/") || shown.starts_with("/dev/udp/") {
            let part = b.part(
                PartKind::Redirect,
                format!("redirect to {shown}"),
                Some(redirect.span.clone()),
                None,
                None,
            );
            b.reason(
                part,
                Ruling::Ask,
                ReasonCode::Network,
                Risk::Dangerous,
                format!("opens a network connection through `{shown}`"),
            );
            continue;
        }
        let target = judge::target(ctx, &redirect.cwd, &redirect.target);
        let when = When {
            cwd: &redirect.cwd,
            order: &redirect.order,
            own: redirect.owner,
        };
        let through = b.rerouted(&redirect.target, &when);
        let through_links = !through.landings.is_empty() || through.unknown.is_some();
        if let Target::Paths(paths) = &target
            && !through_links
            && paths.iter().all(|p| {
                p.location == crate::approval::paths::Location::Device
                    && !p.sensitivity.contains(&Sensitivity::DiskDevice)
            })
        {
            continue;
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
        let part = b.part(
            PartKind::Redirect,
            format!("{op} {shown}"),
            Some(redirect.span.clone()),
            subject,
            scope,
        );
        b.path_effect(part, access, &redirect.target, &when);
    }

    for read in &facts.env_reads {
        let part = owning_part(&b.parts, &read.span).unwrap_or_else(|| {
            b.part(
                PartKind::Script,
                format!("${}", read.name),
                Some(read.span.clone()),
                None,
                None,
            )
        });
        if harmless_to_print(&read.name) {
            b.reason(
                part,
                Ruling::Allow,
                ReasonCode::ReadOnly,
                Risk::Safe,
                format!("reads `${}`, which holds no secret", read.name),
            );
        } else if secret_like(&read.name) {
            b.reason(
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
            b.reason(
                part,
                Ruling::Ask,
                ReasonCode::ReadsEnvironment,
                Risk::Mutating,
                format!("reads the environment variable `{}`", read.name),
            );
        }
    }

    for assignment in &facts.assignments {
        let special = SPECIAL_SHELL_VARS.contains(&assignment.name.as_str())
            || assignment.name.starts_with("LD_")
            || assignment.name.starts_with("DYLD_")
            || assignment.name.starts_with("GIT_");
        let exported = assignment.exported
            && !BENIGN_EXPORTS.contains(&assignment.name.as_str())
            && !assignment.name.starts_with("LC_");
        if special || exported {
            let part = owning_part(&b.parts, &assignment.span).unwrap_or_else(|| {
                b.part(
                    PartKind::Script,
                    format!("{}=…", assignment.name),
                    Some(assignment.span.clone()),
                    None,
                    None,
                )
            });
            b.reason(
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

    // Secrets never leave the machine: network use together with reading a secret is a deny.
    let network_parts: Vec<usize> = b
        .reasons
        .iter()
        .filter(|r| r.code == ReasonCode::Network || r.code == ReasonCode::Publishes)
        .filter_map(|r| r.part)
        .collect();
    let secret = b
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
        b.reason(
            first,
            Ruling::Deny,
            ReasonCode::SendsSecrets,
            Risk::Dangerous,
            format!("uses the network in the same command that {secret}; secrets must not leave this machine"),
        );
    }

    BashAssessment {
        facts,
        effects: all_effects,
        parts: b.parts,
        reasons: b.reasons,
    }
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

fn apply_effect(b: &mut Builder, part: usize, when: &When, effect: &Effect) {
    use ReasonCode as C;
    use Ruling::{Ask, Deny};
    match effect {
        Effect::Read(w) => b.path_effect(part, Access::Read, w, when),
        Effect::Inspect(w) => b.path_effect(part, Access::Inspect, w, when),
        Effect::MakeDryRun { dir, file } => b.make_dry_run(part, dir, file.as_ref(), when),
        Effect::SearchTree(w) => b.search_effect(part, w, when),
        Effect::ReadTree(w) => b.tree_effect(part, w, when),
        Effect::Write(w) => b.path_effect(part, Access::Write, w, when),
        Effect::Delete(w) => b.path_effect(part, Access::Delete, w, when),
        Effect::RunsCode(m) => b.reason(part, Ask, C::RunsCode, Risk::Mutating, m.clone()),
        Effect::InlineCode(m) => b.reason(part, Ask, C::InlineCode, Risk::Dangerous, m.clone()),
        Effect::StdinScript(m) => b.reason(part, Ask, C::HiddenInput, Risk::Dangerous, m.clone()),
        Effect::Network(m) => b.reason(part, Ask, C::Network, Risk::Mutating, m.clone()),
        Effect::Publishes(m) => b.reason(part, Ask, C::Publishes, Risk::Dangerous, m.clone()),
        Effect::EnvironmentDump(m) => {
            b.reason(part, Ask, C::ReadsEnvironment, Risk::Mutating, m.clone())
        }
        Effect::CredentialAccess(m) => b.reason(
            part,
            Deny,
            C::CredentialMaterial,
            Risk::Dangerous,
            m.clone(),
        ),
        Effect::SystemChange(m) => {
            b.reason(part, Deny, C::SystemChange, Risk::Dangerous, m.clone())
        }
        Effect::DestroysWork(m) => b.reason(part, Ask, C::DestroysWork, Risk::Dangerous, m.clone()),
        Effect::Privileged(m) => b.reason(part, Ask, C::Privileged, Risk::Dangerous, m.clone()),
        Effect::ConfigInjection(m) => {
            b.reason(part, Ask, C::ConfigInjection, Risk::Dangerous, m.clone())
        }
        Effect::ProcessControl(m) => {
            b.reason(part, Ask, C::ProcessControl, Risk::Mutating, m.clone())
        }
        Effect::TampersWithAirlock(m) => {
            b.reason(part, Deny, C::TampersWithAirlock, Risk::Dangerous, m.clone())
        }
        Effect::ShellBehaviour(m) => {
            b.reason(part, Ask, C::ShellBehaviour, Risk::Dangerous, m.clone())
        }
        Effect::Unknown(m) => b.reason(part, Ask, C::UnknownProgram, Risk::Mutating, m.clone()),
        Effect::Misparsed(m) => b.reason(
            part,
            Deny,
            C::Unparseable,
            Risk::Dangerous,
            format!("the command cannot be read as bash means it ({m}); nothing runs. Rewrite it in plain bash"),
        ),
        Effect::Opaque(m) => b.reason(
            part,
            Ask,
            C::Opaque,
            Risk::Dangerous,
            format!("airlock cannot see through this: {m}"),
        ),
    }
}
