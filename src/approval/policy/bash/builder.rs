//! The parts and reasons of one bash assessment as they are built: a part per command, redirect
//! or piece of script, and the reasons each effect gives it. Paths are judged as written and
//! through every link the command line itself creates, so a link made earlier in the line cannot
//! launder a later read or write.

use crate::approval::policy::judge::{self, Access, Target};
use crate::approval::policy::links;
use crate::facts::paths::planned::{self, Landings};
use crate::facts::paths::{self, PathContext, ResolvedPath};
use crate::facts::programs::{Effect, Search};
use crate::facts::shell::{self, Word};
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;
use crate::protocol::{GrantScope, Subject};

/// Most sensitive files a search names one by one; the rest are counted.
const MAX_NAMED_SECRETS: usize = 5;

/// Where and when a part opens its paths: what the links the command line creates can reach.
pub(super) struct When<'a> {
    pub(super) cwd: &'a shell::Cwd,
    pub(super) order: &'a shell::Order,
    /// The command the part belongs to.
    pub(super) own: Option<usize>,
}

pub(super) struct Builder<'a> {
    pub(super) ctx: &'a PathContext,
    /// The command line being judged.
    pub(super) command: &'a str,
    /// Links the command line creates; every path is judged through them too.
    pub(super) links: links::Plan,
    /// Names the command line makes refer to other variables (`declare -n r=x`): a word that
    /// uses one is only known when the command runs, whatever value airlock read for it.
    pub(super) namerefs: Vec<String>,
    pub(super) parts: Vec<Part>,
    pub(super) reasons: Vec<Reason>,
}

impl Builder<'_> {
    pub(super) fn part(
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

    pub(super) fn reason(
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
    pub(super) fn path_effect(&mut self, part: usize, access: Access, word: &Word, when: &When) {
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
    pub(super) fn rerouted(&self, word: &Word, when: &When) -> Landings {
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

    /// The text of the command line at `span`, when the builder was given it.
    pub(super) fn source(&self, span: std::ops::Range<usize>) -> Option<&str> {
        self.command.get(span)
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
        match crate::approval::policy::makefile::quiet_makefile(self.ctx, when.cwd, dir, file) {
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

    /// A recursive search reads what its tree holds. One through every file of a tree that
    /// holds the home directory reads the private keys and credential stores in it: `grep -r
    /// "PRIVATE KEY" ~` is refused like `cat` of them. Otherwise each sensitive file it would
    /// read is judged as reading it (`grep -r x .` prints a `.env` as `cat .env` does), and a
    /// tree too large to look through asks.
    fn search_effect(&mut self, part: usize, search: &Search, when: &When) {
        // `ln -s ~ h && grep -r KEY h` searches the home through the link.
        for root in self.roots(&search.root, when) {
            if self.ctx.home.starts_with(&root.path) && root.path.components().count() > 0 {
                let shown = judge::show(self.ctx, &root);
                if search.hidden {
                    self.reason(
                        part,
                        Ruling::Deny,
                        ReasonCode::CredentialMaterial,
                        Risk::Dangerous,
                        format!(
                            "searches every file under {shown}, which holds your home directory with its private keys and credential stores"
                        ),
                    );
                    continue;
                }
            }
            if !root.path.is_dir() {
                continue;
            }
            let shown = judge::show(self.ctx, &root);
            let what = if search.hidden && !search.ignores {
                "every file"
            } else {
                "the files"
            };
            match super::search::sensitive_files(self.ctx, &root.path, search) {
                Ok(found) => {
                    let named = found.len().min(MAX_NAMED_SECRETS);
                    for (_, f) in &found[..named] {
                        let message = format!("searches {what} under {shown}, so it {}", f.message);
                        self.reason(part, f.ruling, f.code, f.risk, message);
                    }
                    if found.len() > named {
                        let ruling = found[named..]
                            .iter()
                            .map(|(_, f)| f.ruling)
                            .max()
                            .unwrap_or(Ruling::Ask);
                        self.reason(
                            part,
                            ruling,
                            ReasonCode::ReadsSecret,
                            Risk::Mutating,
                            format!(
                                "searches {what} under {shown}, so it also reads {} more sensitive files",
                                found.len() - named
                            ),
                        );
                    }
                }
                Err(why) => self.reason(
                    part,
                    Ruling::Ask,
                    ReasonCode::UnknownPath,
                    Risk::Mutating,
                    format!(
                        "searches {what} under {shown}, which airlock cannot check for secrets: {why}"
                    ),
                ),
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

/// The reasons one effect of a command gives its part.
pub(super) fn apply_effect(b: &mut Builder, part: usize, when: &When, effect: &Effect) {
    use ReasonCode as C;
    use Ruling::{Ask, Deny};
    match effect {
        Effect::Read(w) => b.path_effect(part, Access::Read, w, when),
        Effect::Inspect(w) => b.path_effect(part, Access::Inspect, w, when),
        Effect::MakeDryRun { dir, file } => b.make_dry_run(part, dir, file.as_ref(), when),
        Effect::SearchTree(search) => b.search_effect(part, search, when),
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
