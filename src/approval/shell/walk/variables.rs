//! Variables in the walk: which reads of the environment count (`$NAME`, `${NAME}`, bare names
//! in arithmetic), what assignments and declarations bind, and the expansions that hide what they
//! read or run (`${!name}`, `${x@P}`, arithmetic on a value holding code).

use tree_sitter::Node;

use super::{Walker, named_children};
use crate::approval::shell::words::Word;
use crate::approval::shell::{EnvRead, ShellAssignment};

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

impl Walker<'_, '_> {
    fn note_env_read(&mut self, name: &str, node: Node) {
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
        let known = if self.nesting == 0 { literal } else { None };
        self.vars.assign(&name, known);
        let span = self.span(node);
        self.facts.assignments.push(ShellAssignment {
            name: name.clone(),
            span,
            exported,
        });
        Some(name)
    }

    pub(super) fn declaration(&mut self, node: Node) {
        let keyword = node
            .child(0)
            .map(|k| self.text(k).to_string())
            .unwrap_or_default();
        let mut flags = Vec::new();
        let mut names = 0;
        for child in named_children(node) {
            match child.kind() {
                "variable_assignment" => {
                    let exported =
                        keyword == "export" || flags.iter().any(|f: &String| f.contains('x'));
                    self.assignment(child, exported);
                    names += 1;
                }
                "variable_name" => {
                    let name = self.text(child).to_string();
                    let exported = keyword == "export";
                    if keyword == "local" || keyword == "declare" || keyword == "typeset" {
                        self.locals.insert(name.clone());
                    }
                    let span = self.span(child);
                    self.facts.assignments.push(ShellAssignment {
                        name,
                        span,
                        exported,
                    });
                    names += 1;
                }
                _ => {
                    let t = self.text(child);
                    if t.starts_with('-') || t.starts_with('+') {
                        flags.push(t.to_string());
                    } else {
                        names += 1;
                    }
                    self.visit(child);
                }
            }
        }
        if flags.iter().any(|f| f.starts_with('-') && f.contains('n')) {
            self.opaque(
                node,
                None,
                format!(
                    "`{keyword} -n` makes a name refer to another variable, hiding what is assigned"
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
}
