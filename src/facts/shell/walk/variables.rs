//! Variables in the walk: which reads of the environment count (`$NAME`, `${NAME}`, bare names
//! in arithmetic), what assignments and declarations bind, and the expansions that hide what they
//! read or run (`${!name}`, `${x@P}`, arithmetic on a value holding code).
//!
//! A nameref (`declare -n r=x`, `typeset -n`, `local -n`, or `declare -n r; r=x`) is the variable
//! it refers to: what is assigned to it is assigned to that variable, and reading it reads that
//! variable's value, which the walk copies into it whenever it changes. A nameref whose target
//! is computed at run time (`local -n r=$1`) is unknown until something is assigned through it.
//! The declaration itself always asks (the policy also reads every use of the name as unknown),
//! so a value the walk follows through a nameref can only add a deny, never allow anything.

use std::ops::Range;

use tree_sitter::Node;

use super::{Walker, named_children};
use crate::facts::shell::words::Word;
use crate::facts::shell::{EnvRead, ShellAssignment};

/// Environment variables whose reading tells nothing secret.
const BENIGN_ENV: &[&str] = &[
    "HOME",
    "PWD",
    "OLDPWD",
    "USER",
    "LOGNAME",
    "SHELL",
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "HOSTNAME",
    "TMPDIR",
    "RANDOM",
    "LINENO",
    "SECONDS",
    "IFS",
    "COLUMNS",
    "LINES",
    "UID",
    "EUID",
    "PPID",
    "BASH",
    "BASH_VERSION",
    "BASHPID",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "SHLVL",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "PIPESTATUS",
    "FUNCNAME",
    "BASH_SOURCE",
    "BASH_LINENO",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "CI",
    "NO_COLOR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "VIRTUAL_ENV",
    "NODE_ENV",
    "CARGO_TARGET_DIR",
    "REPLY",
    "OPTARG",
    "OPTIND",
];

/// What a nameref refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ref {
    /// Declared without a target: the first value assigned to it names one (`declare -n r; r=x`).
    Unbound,
    /// The variable it refers to.
    To(String),
    /// A target computed at run time (`local -n r=$1`), or one the walk does not follow.
    Unknown,
}

/// Where following namerefs from a name ends.
enum Resolved {
    /// An ordinary variable (the name itself, when it is no nameref).
    Var(String),
    /// A nameref with no target yet.
    Unbound(String),
    /// A nameref whose target is not known, or a chain that loops.
    Unknown,
}

/// How many namerefs a chain may pass through before the walk stops following it.
const MAX_NAMEREF_CHAIN: usize = 16;

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The flags of a declaration that make its names namerefs (`-n`, `-gn`), or stop them being
/// ones (`+n`). `export -n` only takes the export attribute off.
fn nameref_flag(keyword: &str, flag: &str, sign: char) -> bool {
    matches!(keyword, "declare" | "typeset" | "local")
        && flag.starts_with(sign)
        && flag.contains('n')
}

impl Walker<'_, '_> {
    fn note_env_read(&mut self, name: &str, node: Node) {
        // Reading a nameref reads the variable it refers to.
        if self.namerefs.contains_key(name)
            && let Resolved::Var(target) = self.resolve(name)
        {
            self.note_env_read(&target, node);
        }
        let special = name.chars().all(|c| c.is_ascii_digit())
            || matches!(name, "@" | "*" | "#" | "?" | "-" | "$" | "!" | "_" | "0");
        if special
            || self.locals.contains(name)
            || self.vars.get(name).is_some()
            || BENIGN_ENV.contains(&name)
            || name.starts_with("LC_")
        {
            return;
        }
        let span = self.span(node);
        self.facts.env_reads.push(EnvRead {
            name: name.to_string(),
            span,
        });
    }

    pub(super) fn expansion(&mut self, node: Node) {
        if node.kind() == "expansion" {
            let body = self.text(node);
            if body.starts_with("${!") {
                self.opaque(
                    node,
                    None,
                    format!("`{body}` reads a variable whose name is computed at run time"),
                );
            }
            if body.contains("@P") {
                self.opaque(
                    node,
                    None,
                    format!(
                        "`{body}` expands a value as a prompt, which can run commands inside it"
                    ),
                );
            }
        }
        for child in named_children(node) {
            match child.kind() {
                "variable_name" | "special_variable_name" => {
                    let name = self.text(child).to_string();
                    self.note_env_read(&name, child);
                }
                "subscript" => {
                    if let Some(name) = child.child_by_field_name("name") {
                        let name = self.text(name).to_string();
                        self.note_env_read(&name, child);
                    }
                    if let Some(index) = child.child_by_field_name("index") {
                        self.arithmetic(index);
                    }
                }
                _ => self.visit(child),
            }
        }
    }

    /// Arithmetic reads variables by bare name, and bash evaluates a variable's value as an
    /// expression again, so a value holding `a[$(cmd)]` runs `cmd`.
    pub(super) fn arithmetic(&mut self, node: Node) {
        if self.descend() {
            self.arithmetic_node(node);
        }
        self.level -= 1;
    }

    fn arithmetic_node(&mut self, node: Node) {
        if node.kind() == "variable_name" {
            let name = self.text(node).to_string();
            self.note_env_read(&name, node);
            if let Some(Some(value)) = self.vars.get(&name)
                && (value.contains('$') || value.contains('`'))
            {
                self.opaque(
                    node,
                    None,
                    format!("arithmetic on `{name}`, whose value holds shell code"),
                );
            }
            return;
        }
        match node.kind() {
            "command_substitution" | "simple_expansion" | "expansion" | "string" => {
                self.visit(node)
            }
            _ => {
                for child in named_children(node) {
                    self.arithmetic(child);
                }
            }
        }
    }

    pub(super) fn assignment(&mut self, node: Node, exported: bool) -> Option<String> {
        let name_node = node.child_by_field_name("name")?;
        let name = match name_node.kind() {
            "subscript" => {
                let n = name_node.child_by_field_name("name")?;
                if let Some(index) = name_node.child_by_field_name("index") {
                    self.arithmetic(index);
                }
                self.text(n).to_string()
            }
            _ => self.text(name_node).to_string(),
        };
        let value = node.child_by_field_name("value");
        let literal = match value {
            Some(v) => {
                let words = self.eval(v).into_words(self.text(v));
                match words.as_slice() {
                    [Word::Lit { value, .. }] => Some(value.clone()),
                    _ => None,
                }
            }
            None => Some(String::new()),
        };
        if let Some(v) = value {
            self.visit(v);
        }
        let known = if self.nesting == 0 {
            literal.clone()
        } else {
            None
        };
        let span = self.span(node);
        self.set_var(&name, literal, known, span, exported);
        Some(name)
    }

    /// Follows namerefs from `name` to the variable they end at.
    fn resolve(&self, name: &str) -> Resolved {
        let mut at = name.to_string();
        for _ in 0..MAX_NAMEREF_CHAIN {
            match self.namerefs.get(&at) {
                None => return Resolved::Var(at),
                Some(Ref::To(target)) => at = target.clone(),
                Some(Ref::Unbound) => return Resolved::Unbound(at),
                Some(Ref::Unknown) => return Resolved::Unknown,
            }
        }
        Resolved::Unknown
    }

    /// Assigns `name` (and, through namerefs, the variable it refers to): `known` is the value
    /// when the walk knows it, `literal` the word as written (which names the target of a
    /// nameref that has none yet). Records the assignment, and the target's under its own name.
    pub(super) fn set_var(
        &mut self,
        name: &str,
        literal: Option<String>,
        known: Option<String>,
        span: Range<usize>,
        exported: bool,
    ) {
        self.facts.assignments.push(ShellAssignment {
            name: name.to_string(),
            span: span.clone(),
            exported,
        });
        match self.resolve(name) {
            Resolved::Var(target) => {
                if target != name {
                    self.facts.assignments.push(ShellAssignment {
                        name: target.clone(),
                        span,
                        exported,
                    });
                }
                self.vars.assign(&target, known);
                self.mirror(&target);
            }
            Resolved::Unbound(nameref) => {
                let target = literal.filter(|t| is_name(t) && *t != nameref);
                let bound = match target {
                    Some(t) => Ref::To(t),
                    None => Ref::Unknown,
                };
                self.namerefs.insert(nameref.clone(), bound);
                if let Resolved::Var(target) = self.resolve(&nameref) {
                    self.mirror(&target);
                }
            }
            // The target is not known, but reading the nameref reads what was just assigned.
            // The variable it changed keeps what the walk knew of it: one of the two values
            // it may hold, which the declaration's own question covers.
            Resolved::Unknown => self.vars.assign(name, known),
        }
    }

    /// Copies `target`'s value into every nameref that ends at it. A nameref that had another
    /// value before becomes unknown, as any variable assigned twice does.
    fn mirror(&mut self, target: &str) {
        // `$PWD` follows every `cd`, which a copy made now would not.
        let value = if matches!(target, "PWD" | "OLDPWD") {
            None
        } else {
            self.known_value(target)
        };
        let namerefs: Vec<String> = self
            .namerefs
            .keys()
            .filter(|n| matches!(self.resolve(n), Resolved::Var(t) if t == target))
            .cloned()
            .collect();
        for nameref in namerefs {
            match (self.vars.get(&nameref), &value) {
                (Some(Some(old)), Some(new)) if old == new => {}
                (None, None) => {
                    self.locals.insert(nameref);
                }
                _ => self.vars.assign(&nameref, value.clone()),
            }
        }
    }

    /// `declare -n r=x` (or `r` alone, or a target computed at run time): `r` refers to `x`
    /// from now on. Whatever value `r` had is gone.
    fn bind_nameref(&mut self, node: Node, name: String, target: Ref, exported: bool) {
        if self.vars.get(&name).is_some() {
            self.vars.assign(&name, None);
        }
        self.locals.insert(name.clone());
        let span = self.span(node);
        self.facts.assignments.push(ShellAssignment {
            name: name.clone(),
            span,
            exported,
        });
        self.namerefs.insert(name.clone(), target);
        if let Resolved::Var(target) = self.resolve(&name) {
            self.mirror(&target);
        }
    }

    /// A `variable_assignment` of a declaration with `-n`: its value names the target.
    fn nameref_assignment(&mut self, node: Node, exported: bool, computed_flags: bool) {
        let Some(name_node) = node.child_by_field_name("name") else {
            return;
        };
        let (name, subscripted) = match name_node.kind() {
            "subscript" => match name_node.child_by_field_name("name") {
                Some(n) => (self.text(n).to_string(), true),
                None => return,
            },
            _ => (self.text(name_node).to_string(), false),
        };
        let value = node.child_by_field_name("value");
        let literal = match value {
            Some(v) => {
                let words = self.eval(v).into_words(self.text(v));
                match words.as_slice() {
                    [Word::Lit { value, .. }] => Some(value.clone()),
                    [] => Some(String::new()),
                    _ => None,
                }
            }
            None => Some(String::new()),
        };
        if let Some(v) = value {
            self.visit(v);
        }
        let target = match literal {
            _ if subscripted || computed_flags => Ref::Unknown,
            Some(t) if t.is_empty() => Ref::Unbound,
            Some(t) if is_name(&t) && t != name => Ref::To(t),
            _ => Ref::Unknown,
        };
        self.bind_nameref(node, name, target, exported);
    }

    pub(super) fn declaration(&mut self, node: Node) {
        let keyword = node
            .child(0)
            .map(|k| self.text(k).to_string())
            .unwrap_or_default();
        let children = named_children(node);
        // The flags first, as bash reads them before any name: `-n` makes every name of the
        // declaration a nameref. A word computed at run time may be a flag (`declare $o r=x`
        // with `o=-n`), so it is read for its value.
        let mut flags: Vec<String> = Vec::new();
        let mut computed = false;
        for child in &children {
            if matches!(child.kind(), "variable_assignment" | "variable_name") {
                continue;
            }
            for word in self.eval(*child).into_words(self.text(*child)) {
                match word.as_lit() {
                    Some(w) if w.starts_with(['-', '+']) => flags.push(w.to_string()),
                    Some(_) => {}
                    None => computed = true,
                }
            }
        }
        let names_refer = matches!(keyword.as_str(), "declare" | "typeset" | "local");
        let computed = computed && names_refer;
        let nameref = computed || flags.iter().any(|f| nameref_flag(&keyword, f, '-'));
        let unref = flags.iter().any(|f| nameref_flag(&keyword, f, '+'));
        let exported = keyword == "export" || flags.iter().any(|f| f.contains('x'));
        let mut names = 0;
        for child in children {
            match child.kind() {
                "variable_assignment" => {
                    if nameref {
                        self.nameref_assignment(child, exported, computed);
                    } else if let Some(name) = self.assignment(child, exported)
                        && unref
                    {
                        self.unbind_nameref(&name);
                    }
                    names += 1;
                }
                "variable_name" => {
                    let name = self.text(child).to_string();
                    names += 1;
                    if nameref {
                        let target = if computed { Ref::Unknown } else { Ref::Unbound };
                        self.bind_nameref(child, name, target, exported);
                        continue;
                    }
                    if names_refer {
                        self.locals.insert(name.clone());
                    }
                    let span = self.span(child);
                    if let Resolved::Var(target) = self.resolve(&name)
                        && target != name
                    {
                        // `export r` exports the variable `r` refers to.
                        self.facts.assignments.push(ShellAssignment {
                            name: target,
                            span: span.clone(),
                            exported: keyword == "export",
                        });
                    }
                    if unref {
                        self.unbind_nameref(&name);
                    }
                    self.facts.assignments.push(ShellAssignment {
                        name,
                        span,
                        exported: keyword == "export",
                    });
                }
                _ => {
                    let words = self.eval(child).into_words(self.text(child));
                    for word in &words {
                        match word.as_lit() {
                            Some(w) if w.starts_with(['-', '+']) => {}
                            // `declare -n 'r=x'`: quoted, still a name and its target.
                            Some(w) if nameref => {
                                names += 1;
                                let (name, target) = w.split_once('=').unwrap_or((w, ""));
                                if is_name(name) {
                                    let target = match target {
                                        "" => Ref::Unbound,
                                        t if is_name(t) && t != name => Ref::To(t.to_string()),
                                        _ => Ref::Unknown,
                                    };
                                    self.bind_nameref(child, name.to_string(), target, exported);
                                }
                            }
                            _ => names += 1,
                        }
                    }
                    self.visit(child);
                }
            }
        }
        if nameref || flags.iter().any(|f| f.starts_with('-') && f.contains('n')) {
            let why = if computed {
                format!(" (a word of `{keyword}` is computed at run time and may be `-n`)")
            } else {
                String::new()
            };
            self.opaque(
                node,
                None,
                format!(
                    "`{keyword} -n` makes a name refer to another variable, hiding what is assigned{why}"
                ),
            );
        }
        // With no names, every form prints variables (`declare -x` prints the exported ones).
        let prints = names == 0;
        if prints || flags.iter().any(|f| f.contains('p')) {
            let span = self.span(node);
            self.facts.env_reads.push(EnvRead {
                name: format!("<all variables, via `{keyword}`>"),
                span,
            });
        }
    }

    /// `declare +n r`: `r` is an ordinary variable again, holding the name it referred to.
    fn unbind_nameref(&mut self, name: &str) {
        if self.namerefs.remove(name).is_some() {
            self.vars.assign(name, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::approval::testworld::world;
    use crate::facts::shell::{ShellContext, analyze};
    use crate::protocol::Ruling;

    /// The redirect targets of `command`, as the walk knows them.
    fn targets(command: &str) -> Vec<String> {
        let ctx = ShellContext {
            home: "/home/u".into(),
            cwd: "/ws".into(),
        };
        analyze(command, &ctx)
            .redirects
            .iter()
            .map(|r| r.target.display().to_string())
            .collect()
    }

    #[test]
    fn a_write_through_a_nameref_is_a_write_to_the_variable_it_refers_to() {
        let w = world();
        for command in [
            "declare -n r=x; x=~/.bashrc; echo >> $r",
            "typeset -n r=x; x=~/.bashrc; echo hi > \"${r}\"",
            "local -n r=x; x=~/.bashrc; echo >> $r",
            "declare -n r; r=x; x=~/.bashrc; echo >> $r",
            "x=~/.bashrc; declare -n r=x; echo >> $r",
            "declare -n r=x; r=~/.bashrc; echo >> $x",
            "declare -n a=b; declare -n b=x; x=~/.bashrc; echo >> $a",
            "declare -gn r=HOME; echo >> $r/.bashrc",
            "o=-n; declare $o r=x; x=~/.bashrc; echo >> $r",
            "declare -n 'r=x'; x=~/.bashrc; echo >> $r",
            "declare -n r=$y; r=~/.bashrc; echo >> $r",
        ] {
            let v = w.bash(command);
            assert_eq!(v.ruling, Ruling::Deny, "{command}: {:#?}", v.reason_lines());
            assert!(
                v.reason_lines().iter().any(|r| r.contains("~/.bashrc")),
                "{command}: {:#?}",
                v.reason_lines()
            );
        }
    }

    #[test]
    fn a_nameref_whose_value_is_unknown_is_judged_as_an_unknown_variable() {
        let w = world();
        for command in [
            "declare -n r=x; echo >> $r",
            "declare -n r=$y; echo >> $r",
            "declare -n r=x; x=~/.bashrc; x=y; echo >> $r",
            "if true; then declare -n r=x; fi; echo >> $r",
            "f() { local -n r=$1; echo >> $r; }",
            "declare -n r=x; x=safe; read r; echo >> $x",
        ] {
            let v = w.bash(command);
            assert_eq!(v.ruling, Ruling::Ask, "{command}: {:#?}", v.reason_lines());
            assert!(
                v.reason_lines()
                    .iter()
                    .any(|r| r.contains("writes a path airlock cannot check")),
                "{command}: {:#?}",
                v.reason_lines()
            );
        }
    }

    #[test]
    fn a_nameref_follows_its_targets_value_and_an_ordinary_variable_is_unchanged() {
        assert_eq!(
            targets("declare -n r=x; x=out.txt; echo >> $r"),
            vec!["out.txt"]
        );
        assert_eq!(targets("x=out.txt; echo >> $x"), vec!["out.txt"]);
        assert_eq!(targets("r=x; echo >> $r"), vec!["x"]);
        // `declare +n` makes it an ordinary variable again, whose value the walk does not know.
        assert_eq!(
            targets("declare -n r=x; x=a; declare +n r; echo >> $r"),
            vec!["$r"]
        );
        let w = world();
        assert_eq!(w.bash("x=out.txt; echo >> $x").ruling, Ruling::Ask);
        assert_eq!(w.bash("x=~/.bashrc; echo >> $x").ruling, Ruling::Deny);
    }
}
