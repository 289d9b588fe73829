//! One simple command: its words, wrappers, nested strings, redirects, and what it changes for
//! the commands after it (`cd`, `read`, ...).

use tree_sitter::Node;

use super::{Walker, named_children};
use crate::facts::shell::unwrap::{self, Inner, SHELLS};
use std::ops::Range;
use std::path::PathBuf;

use crate::facts::shell::words::Word;
use crate::facts::shell::{Cwd, MAX_NESTING, Order, Origin, SimpleCommand, Stdin};

use super::{Nested, analyze_into, lexical_normalize};

/// The named children of one simple command, sorted by the role the grammar gives them.
struct Parts<'t> {
    /// The `NAME=value` settings before the command name.
    env: Vec<(String, Word)>,
    name: Option<Node<'t>>,
    args: Vec<Node<'t>>,
    redirects: Vec<Node<'t>>,
    /// Every named child with its field name, in source order.
    children: Vec<(Option<&'t str>, Node<'t>)>,
}

/// Where one simple command runs and with what: shared by the command and by the commands and
/// files its wrappers start or name.
struct Site {
    span: Range<usize>,
    text: String,
    env: Vec<(String, Word)>,
    cwd: Cwd,
    stdin: Stdin,
}

impl Walker<'_, '_> {
    /// One simple command: its words, then the command itself (unless a shell it names is
    /// replaced by its script), what its wrappers run or name, its redirects, and what it
    /// changes for the commands after it. The steps run in this order because the facts are
    /// recorded in the order bash acts.
    pub(super) fn command(&mut self, node: Node) {
        let parts = self.command_parts(node);
        // Substitutions and expansions inside the words run (or are read) before the command.
        self.visit_words(&parts.children);
        let stdin = self.command_stdin(&parts.redirects);
        let Some(name_node) = parts.name else {
            let after = self.facts.commands.len();
            for r in parts.redirects {
                self.redirect(r, None, after);
            }
            return;
        };
        let (argv, name_disguised) = self.command_argv(name_node, &parts.args);
        let first_name = argv.first().and_then(unwrap::program_name);
        let is_function = first_name
            .as_deref()
            .is_some_and(|n| self.functions.contains(n));

        let unwrapped = if is_function {
            unwrap::Unwrapped {
                argv,
                ..Default::default()
            }
        } else {
            unwrap::unwrap(argv)
        };
        let mut cwd = self.cwd.clone();
        if let Some(dir) = &unwrapped.chdir {
            cwd = self.cd_target(Some(dir));
        }
        let mut env = parts.env;
        env.extend(unwrapped.env.iter().cloned());
        let site = Site {
            span: self.span(node),
            text: self.text(node).to_string(),
            env,
            cwd,
            stdin,
        };

        let index = if unwrapped.replaced {
            None
        } else {
            Some(self.record_command(node, &site, &unwrapped, name_disguised, is_function))
        };
        for problem in &unwrapped.problems {
            self.opaque(node, index, problem.clone());
        }
        if unwrapped.replaced {
            self.replaced_shell_settings(node, index, &site.env);
        }
        let after = index.unwrap_or(self.facts.commands.len());
        self.wrapper_files(node, index, after, &site.cwd, &unwrapped);
        self.wrapped_commands(node, &site, &unwrapped);
        for r in parts.redirects {
            self.redirect(r, index, after);
        }
        if let Some(index) = index {
            self.changes_for_what_follows(node, index);
        }
    }

    fn command_parts<'t>(&mut self, node: Node<'t>) -> Parts<'t> {
        let mut parts = Parts {
            env: Vec::new(),
            name: None,
            args: Vec::new(),
            redirects: Vec::new(),
            children: Vec::new(),
        };
        let mut cursor = node.walk();
        parts.children = node
            .children(&mut cursor)
            .enumerate()
            .filter(|(_, c)| c.is_named())
            .map(|(i, c)| (node.field_name_for_child(i as u32), c))
            .collect();
        for (field, child) in &parts.children {
            match (*field, child.kind()) {
                (Some("name"), _) => parts.name = Some(*child),
                (Some("argument"), _) => parts.args.push(*child),
                (Some("redirect"), _) => parts.redirects.push(*child),
                (_, "variable_assignment") => {
                    if let (Some(n), v) = (
                        child.child_by_field_name("name"),
                        child.child_by_field_name("value"),
                    ) {
                        let value = match v {
                            Some(v) => {
                                let w = self.eval(v).into_words(self.text(v));
                                w.into_iter().next().unwrap_or_else(|| Word::lit(""))
                            }
                            None => Word::lit(""),
                        };
                        parts.env.push((self.text(n).to_string(), value));
                    }
                }
                (_, "file_redirect" | "herestring_redirect" | "heredoc_redirect") => {
                    parts.redirects.push(*child)
                }
                _ => {}
            }
        }
        parts
    }

    /// Visits what the words and settings hold (substitutions, expansions), not the redirects.
    fn visit_words(&mut self, children: &[(Option<&str>, Node)]) {
        for (field, child) in children {
            if *field != Some("redirect") {
                match child.kind() {
                    "variable_assignment" => {
                        if let Some(v) = child.child_by_field_name("value") {
                            self.visit(v);
                        }
                    }
                    "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {}
                    _ => self.visit(*child),
                }
            }
        }
    }

    /// Here-strings and here-documents attached directly to the command feed its stdin;
    /// otherwise it reads what the enclosing command gives it.
    fn command_stdin(&mut self, redirects: &[Node]) -> Stdin {
        let mut stdin = self.stdin.clone();
        for r in redirects {
            if r.kind() == "herestring_redirect" || r.kind() == "heredoc_redirect" {
                stdin = Stdin::Inline {
                    text: self.inline_text(*r),
                };
            }
        }
        stdin
    }

    /// The command's words as bash splits them, and whether its name is disguised.
    fn command_argv(&mut self, name_node: Node, arg_nodes: &[Node]) -> (Vec<Word>, bool) {
        let name_inner = named_children(name_node)
            .into_iter()
            .next()
            .unwrap_or(name_node);
        let name_pieces = self.eval(name_inner);
        // A name spelled with quotes, escapes or ANSI-C strings, or taken from a variable, is
        // judged as what it turns into, and flagged for hiding it.
        let name_disguised = name_pieces.any_quoted() || name_pieces.ansi_c || name_pieces.from_var;
        let mut argv = name_pieces.into_words(self.text(name_inner));
        if argv.is_empty() {
            argv = vec![Word::Dynamic {
                text: self.text(name_inner).to_string(),
                vars: Vec::new(),
            }];
        }
        // tree-sitter-bash parses `a`x`b` as two arguments, `a` and a concatenation: bash sees
        // one word. Arguments with nothing between them are joined back into the word they are.
        let mut i = 0;
        while i < arg_nodes.len() {
            let first = arg_nodes[i];
            let mut pieces = self.eval(first);
            let mut end = first.end_byte();
            while let Some(next) = arg_nodes.get(i + 1).filter(|n| n.start_byte() == end) {
                pieces.append(self.eval(*next));
                end = next.end_byte();
                i += 1;
            }
            argv.extend(pieces.into_words(&self.src[first.start_byte()..end]));
            i += 1;
        }
        (argv, name_disguised)
    }

    /// Adds the command to the facts (its name plain, as the policy reads it), and analyses the
    /// script a shell reads from a here-string. Returns its index.
    fn record_command(
        &mut self,
        node: Node,
        site: &Site,
        unwrapped: &unwrap::Unwrapped,
        name_disguised: bool,
        is_function: bool,
    ) -> usize {
        let stdin = &site.stdin;
        let mut argv = unwrapped.argv.clone();
        if let Some(first) = argv.first_mut()
            && let Some(n) = unwrap::program_name(first)
            && let Word::Lit { value, .. } = first
        {
            *value = n;
        }
        let is_shell_reading_script = argv
            .first()
            .and_then(Word::as_lit)
            .is_some_and(|p| SHELLS.contains(&p))
            && argv.len() == 1
            && matches!(stdin, Stdin::Inline { text: Some(_) });
        self.facts.commands.push(SimpleCommand {
            span: site.span.clone(),
            text: site.text.clone(),
            argv,
            wrappers: unwrapped.wrappers.clone(),
            env: site.env.clone(),
            cwd: site.cwd.clone(),
            stdin: stdin.clone(),
            origin: if unwrapped.via_xargs {
                Origin::Xargs
            } else {
                self.origin
            },
            name_disguised,
            stdin_script_analyzed: is_shell_reading_script,
            is_script_function: is_function,
            order: Order {
                anytime: self.anytime > 0 || unwrapped.wrappers.iter().any(|w| w == "coproc"),
                ..self.order(self.facts.commands.len())
            },
        });
        let index = self.facts.commands.len() - 1;
        self.node_command.insert(node.id(), index);
        if is_shell_reading_script && let Stdin::Inline { text: Some(script) } = stdin {
            let script = script.clone();
            self.nested(
                node,
                &script,
                Vec::new(),
                Origin::ShellString,
                site.cwd.clone(),
            );
        }
        index
    }

    /// `env BASH_ENV=x bash -c '…'`: the shell is replaced by its script, but the settings it
    /// starts with stay: a startup file it sources, a preload, an interpreter path. They are
    /// judged here, since no command is left to carry them.
    fn replaced_shell_settings(
        &mut self,
        node: Node,
        index: Option<usize>,
        env: &[(String, Word)],
    ) {
        for (name, value) in env {
            if !crate::facts::programs::benign_env_setting(name, value) {
                let why = crate::facts::envvars::loads_code(name)
                    .unwrap_or("which can make it (or what it starts) load and run other code");
                self.opaque(
                    node,
                    index,
                    format!("the shell runs with `{name}` set: {why}"),
                );
            }
        }
    }

    /// The files a wrapper itself reads or writes (`xargs -a FILE`, `time -o FILE`),
    /// recorded as redirects of the command.
    fn wrapper_files(
        &mut self,
        node: Node,
        index: Option<usize>,
        after: usize,
        cwd: &Cwd,
        unwrapped: &unwrap::Unwrapped,
    ) {
        let wrapper_files = unwrapped
            .writes
            .iter()
            .map(|f| (f, crate::facts::shell::RedirectOp::Write))
            .chain(
                unwrapped
                    .reads
                    .iter()
                    .map(|f| (f, crate::facts::shell::RedirectOp::Read)),
            );
        for (file, op) in wrapper_files {
            let span = self.span(node);
            let order = self.order(after);
            self.facts.redirects.push(crate::facts::shell::Redirect {
                span,
                op,
                target: file.clone(),
                owner: index,
                cwd: cwd.clone(),
                order,
            });
        }
    }

    /// What the command runs inside itself: shell strings (`bash -c`, `trap`) and `find -exec`.
    fn wrapped_commands(&mut self, node: Node, site: &Site, unwrapped: &unwrap::Unwrapped) {
        let cwd = &site.cwd;
        // A trap handler runs at exit or on a signal, after anything written later.
        let is_trap = unwrapped.argv.first().and_then(Word::as_lit) == Some("trap");
        for inner in &unwrapped.inner {
            match inner {
                Inner::Script { text, positional } => {
                    let (text, positional) = (text.clone(), positional.clone());
                    if is_trap {
                        self.anytime(|w| {
                            w.nested(node, &text, positional, Origin::ShellString, cwd.clone())
                        });
                    } else {
                        self.nested(node, &text, positional, Origin::ShellString, cwd.clone());
                    }
                }
                Inner::FindExec(inner_argv) => self.find_exec(node, site, inner_argv),
            }
        }
    }

    /// `find -exec CMD {} ;`: the command runs once per file found, with the settings its own
    /// wrappers give it.
    fn find_exec(&mut self, node: Node, site: &Site, inner_argv: &[Word]) {
        let cwd = &site.cwd;
        let u = unwrap::unwrap(inner_argv.to_vec());
        for problem in &u.problems {
            self.opaque(node, None, problem.clone());
        }
        for nested in &u.inner {
            if let Inner::Script { text, positional } = nested {
                let (text, positional) = (text.clone(), positional.clone());
                self.nested(node, &text, positional, Origin::ShellString, cwd.clone());
            }
        }
        if !u.replaced {
            self.facts.commands.push(SimpleCommand {
                span: site.span.clone(),
                text: site.text.clone(),
                argv: u.argv,
                wrappers: [vec!["find".to_string()], u.wrappers].concat(),
                env: u.env,
                cwd: cwd.clone(),
                stdin: Stdin::Inherited,
                origin: Origin::FindExec,
                name_disguised: false,
                stdin_script_analyzed: false,
                is_script_function: false,
                order: Order {
                    repeats: true,
                    ..self.order(self.facts.commands.len())
                },
            });
        }
    }

    /// Directory changes and `read` targets affect what follows.
    fn changes_for_what_follows(&mut self, node: Node, index: usize) {
        let argv = self.facts.commands[index].argv.clone();
        match argv.first().and_then(Word::as_lit) {
            Some(program @ ("cd" | "pushd")) => {
                let target = argv[1..]
                    .iter()
                    .find(|w| !w.as_lit().is_some_and(|s| s.starts_with('-') && s != "-"));
                // `pushd` alone swaps, `pushd +N` / `-N` rotates the stack: airlock does not
                // keep a directory stack, so where it lands is unknown.
                let rotates = program == "pushd"
                    && target.and_then(Word::as_lit).is_none_or(|t| {
                        (t.starts_with('+') || t.starts_with('-'))
                            && t[1..].chars().all(|c| c.is_ascii_digit())
                    });
                self.cwd = match target.and_then(Word::as_lit) {
                    _ if rotates => Cwd::Unknown,
                    Some("-") => Cwd::Unknown,
                    _ => self.cd_target(target),
                };
            }
            Some("popd") => self.cwd = Cwd::Unknown,
            Some(builtin @ ("read" | "mapfile" | "readarray" | "getopts" | "printf" | "let")) => {
                let targets = assigned_by_builtin(builtin, &argv[1..]);
                let span = self.span(node);
                for name in targets {
                    self.locals.insert(name.clone());
                    // Through a nameref, the variable it refers to gets the value.
                    self.set_var(&name, None, None, span.clone(), false);
                }
            }
            _ => {}
        }
    }

    pub(super) fn cd_target(&self, target: Option<&Word>) -> Cwd {
        let current = match &self.cwd {
            Cwd::Known(current) => Some(current),
            Cwd::Unknown => None,
        };
        match target {
            None => Cwd::Known(self.ctx.home.clone()),
            Some(Word::Lit {
                value, glob: false, ..
            }) => {
                let path = if value == "~" {
                    self.ctx.home.clone()
                } else if let Some(rest) = value.strip_prefix("~/") {
                    self.ctx.home.join(rest)
                } else if value.starts_with('~') {
                    return Cwd::Unknown;
                } else if value.starts_with('/') {
                    PathBuf::from(value)
                } else if let Some(current) = current {
                    current.join(value)
                } else {
                    return Cwd::Unknown;
                };
                // bash's `cd` is logical (`link/..` is where you started) unless `-P` or
                // `set -P`; the kernel's view is physical. Where the two differ, airlock cannot
                // tell which one applies.
                let logical = lexical_normalize(&path);
                if value.split('/').any(|c| c == "..") {
                    let physical = std::fs::canonicalize(&path).ok();
                    let logical_real = std::fs::canonicalize(&logical).ok();
                    if physical != logical_real {
                        return Cwd::Unknown;
                    }
                }
                Cwd::Known(logical)
            }
            Some(_) => Cwd::Unknown,
        }
    }

    pub(super) fn nested(
        &mut self,
        node: Node,
        script: &str,
        positional: Vec<Word>,
        origin: Origin,
        cwd: Cwd,
    ) {
        if self.depth + 1 > MAX_NESTING {
            self.opaque(
                node,
                None,
                format!("shell strings nested more than {MAX_NESTING} deep"),
            );
            return;
        }
        let span = self.span(node);
        let order = self.outer_order();
        self.next_group = analyze_into(
            self.facts,
            script,
            self.ctx,
            Nested {
                span: Some(span),
                positional,
                origin,
                depth: self.depth + 1,
                cwd,
                order,
            },
        );
    }
}

/// The variables a builtin assigns: `read NAME...`, `mapfile NAME`, `getopts OPTS NAME`,
/// `printf -v NAME`, `let NAME=...`.
fn assigned_by_builtin(builtin: &str, args: &[Word]) -> Vec<String> {
    let words: Vec<&str> = args.iter().map(Word::display).collect();
    let is_name = |w: &&str| {
        let mut c = w.chars();
        matches!(c.next(), Some(f) if f == '_' || f.is_ascii_alphabetic())
            && c.all(|c| c == '_' || c.is_ascii_alphanumeric())
    };
    match builtin {
        "printf" => words
            .windows(2)
            .filter(|p| p[0] == "-v")
            .map(|p| p[1].split('[').next().unwrap_or(p[1]).to_string())
            .collect(),
        "let" => words
            .iter()
            .filter_map(|w| {
                w.split_once('=').map(|(n, _)| {
                    n.trim_end_matches(['+', '-', '*', '/', '%', '<', '>', '&', '|', '^'])
                })
            })
            .filter(is_name)
            .map(str::to_string)
            .collect(),
        "getopts" => words
            .iter()
            .skip(1)
            .take(1)
            .filter(|w| is_name(w))
            .map(|w| w.to_string())
            .collect(),
        _ => {
            // Options that take a value differ: `read -t 5` is a timeout, `mapfile -t` a flag.
            let with_value: &[&str] = if builtin == "read" {
                &["-d", "-i", "-n", "-N", "-p", "-t", "-u"]
            } else {
                &["-d", "-n", "-O", "-s", "-u", "-C", "-c"]
            };
            let mut out = Vec::new();
            let mut i = 0;
            while i < words.len() {
                let w = words[i];
                if w == "-a" {
                    if let Some(n) = words.get(i + 1) {
                        out.push(n.to_string());
                    }
                    i += 2;
                } else if with_value.contains(&w) {
                    i += 2;
                } else if w.starts_with('-') {
                    i += 1;
                } else {
                    if is_name(&w) {
                        out.push(w.to_string());
                    }
                    i += 1;
                }
            }
            if out.is_empty() && builtin == "read" {
                out.push("REPLY".into());
            }
            out
        }
    }
}
