//! The tree walk: visits every node of a tree-sitter-bash parse in source order, keeping track of
//! the working directory, the script's own variables and functions, and where stdin comes from.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser};

use super::unwrap::{self, Inner, SHELLS};
use super::words::{self, Pieces, ScriptVars, Word};
use super::{
    Cwd, EnvRead, MAX_NESTING, Opaque, Origin, Redirect, RedirectOp, ShellAssignment, ShellContext,
    ShellFacts, SimpleCommand, Stdin,
};

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

pub struct Nested {
    pub span: Option<Range<usize>>,
    /// `$0`, `$1`, ... of a `bash -c` string.
    pub positional: Vec<Word>,
    pub origin: Origin,
    pub depth: usize,
    pub cwd: Cwd,
}

pub fn analyze_into(facts: &mut ShellFacts, src: &str, ctx: &ShellContext, nested: Nested) {
    let mut parser = Parser::new();
    let outer_span = nested.span.clone().unwrap_or(0..src.len());
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        facts.parse_error = Some("the bash grammar could not be loaded".into());
        return;
    }
    let Some(tree) = parser.parse(src, None) else {
        facts.parse_error = Some("the bash parser gave no result".into());
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        let at = first_error(root).unwrap_or(root);
        let pos = at.start_position();
        let near: String = src[at.byte_range()].chars().take(40).collect();
        let place = if nested.span.is_some() {
            " in a nested command string"
        } else {
            ""
        };
        let message = format!(
            "bash syntax airlock cannot read{place} at line {}, column {} near `{}`",
            pos.row + 1,
            pos.column + 1,
            near.escape_debug()
        );
        if facts.parse_error.is_none() {
            facts.parse_error = Some(message);
        }
        return;
    }
    let mut walker = Walker {
        src,
        ctx,
        facts,
        outer_span: nested.span,
        _outer: outer_span,
        vars: ScriptVars::default(),
        locals: HashSet::new(),
        functions: HashSet::new(),
        node_command: HashMap::new(),
        cwd: nested.cwd,
        depth: nested.depth,
        nesting: 0,
        origin: nested.origin,
        stdin: Stdin::Inherited,
    };
    for (i, word) in nested.positional.iter().enumerate() {
        walker
            .vars
            .assign(&i.to_string(), word.as_lit().map(str::to_string));
    }
    walker.visit(root);
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.has_error() {
            return first_error(child).or(Some(child));
        }
    }
    None
}

struct Walker<'a, 'f> {
    src: &'a str,
    ctx: &'a ShellContext,
    facts: &'f mut ShellFacts,
    /// Set when this walk is over a nested string: every span maps to the outer command.
    outer_span: Option<Range<usize>>,
    _outer: Range<usize>,
    vars: ScriptVars,
    /// Names the script binds itself (loop variables, `read` targets, function parameters).
    locals: HashSet<String>,
    functions: HashSet<String>,
    node_command: HashMap<usize, usize>,
    cwd: Cwd,
    depth: usize,
    /// Inside a loop, branch or function body: assignments there are not known values.
    nesting: usize,
    origin: Origin,
    stdin: Stdin,
}

impl<'a> Walker<'a, '_> {
    fn text(&self, node: Node) -> &'a str {
        &self.src[node.byte_range()]
    }

    fn span(&self, node: Node) -> Range<usize> {
        self.outer_span.clone().unwrap_or(node.byte_range())
    }

    fn opaque(&mut self, node: Node, command: Option<usize>, what: String) {
        let span = self.span(node);
        self.facts.opaque.push(Opaque {
            span,
            command,
            what,
        });
    }

    fn visit_children(&mut self, node: Node) {
        for child in named_children(node) {
            self.visit(child);
        }
    }

    /// Runs `f` with the working directory and stdin isolated, as in a subshell.
    fn isolated(&mut self, f: impl FnOnce(&mut Self)) {
        let cwd = self.cwd.clone();
        let stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        f(self);
        self.cwd = cwd;
        self.stdin = stdin;
    }

    /// Runs `f` as a part that may run zero or more times: a `cd` inside makes the directory unknown.
    fn conditional(&mut self, f: impl FnOnce(&mut Self)) {
        let before = self.cwd.clone();
        self.nesting += 1;
        f(self);
        self.nesting -= 1;
        if self.cwd != before {
            self.cwd = Cwd::Unknown;
        }
    }

    fn visit(&mut self, node: Node) {
        match node.kind() {
            "command" => self.command(node),
            "variable_assignment" => {
                self.assignment(node, false);
            }
            "declaration_command" => self.declaration(node),
            "redirected_statement" => self.redirected(node),
            "pipeline" => self.pipeline(node),
            "list" => self.list(node),
            "subshell" => self.isolated(|w| w.visit_children(node)),
            "command_substitution" | "process_substitution" => {
                let origin = std::mem::replace(&mut self.origin, Origin::Substitution);
                self.isolated(|w| w.visit_children(node));
                self.origin = origin;
            }
            "if_statement" | "while_statement" | "case_statement" | "c_style_for_statement" => {
                self.conditional(|w| w.visit_children(node))
            }
            "for_statement" => {
                if let Some(var) = node.child_by_field_name("variable") {
                    let name = self.text(var).to_string();
                    self.locals.insert(name.clone());
                    self.vars.assign(&name, None);
                }
                self.conditional(|w| {
                    for child in named_children(node) {
                        if child.kind() != "variable_name" {
                            w.visit(child);
                        }
                    }
                })
            }
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.functions.insert(self.text(name).to_string());
                }
                let origin = std::mem::replace(&mut self.origin, Origin::FunctionBody);
                self.conditional(|w| {
                    if let Some(body) = node.child_by_field_name("body") {
                        w.visit(body);
                    }
                    for child in named_children(node) {
                        if node.child_by_field_name("redirect") == Some(child) {
                            w.redirect(child, None);
                        }
                    }
                });
                self.origin = origin;
            }
            "simple_expansion" | "expansion" => self.expansion(node),
            "arithmetic_expansion"
            | "binary_expression"
            | "unary_expression"
            | "postfix_expression"
            | "parenthesized_expression"
            | "ternary_expression" => self.arithmetic(node),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                self.redirect(node, None)
            }
            "comment" | "heredoc_start" | "heredoc_end" | "heredoc_content" => {}
            _ => self.visit_children(node),
        }
    }

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

    fn expansion(&mut self, node: Node) {
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
    fn arithmetic(&mut self, node: Node) {
        if node.kind() == "variable_name" {
            let name = self.text(node).to_string();
            self.note_env_read(&name, node);
            if let Some(Some(value)) = self.vars.get(&name) {
                if value.contains('$') || value.contains('`') {
                    self.opaque(
                        node,
                        None,
                        format!("arithmetic on `{name}`, whose value holds shell code"),
                    );
                }
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

    fn assignment(&mut self, node: Node, exported: bool) -> Option<String> {
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

    fn declaration(&mut self, node: Node) {
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
        let prints = names == 0
            && (keyword == "export" || flags.iter().any(|f| f.contains('p')) || flags.is_empty());
        if prints || flags.iter().any(|f| f.contains('p')) {
            let span = self.span(node);
            self.facts.env_reads.push(EnvRead {
                name: format!("<all variables, via `{keyword}`>"),
                span,
            });
        }
    }

    fn list(&mut self, node: Node) {
        let before = self.cwd.clone();
        let mut after_left = None;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if !child.is_named() {
                if self.text(child) == "||" && self.cwd != before {
                    // The right side runs only when the left failed, maybe before its `cd`.
                    after_left = Some(self.cwd.clone());
                    self.cwd = Cwd::Unknown;
                }
                continue;
            }
            self.visit(child);
        }
        let _ = after_left;
        if self.cwd != before {
            self.cwd = Cwd::Unknown;
        }
    }

    fn pipeline(&mut self, node: Node) {
        let mut producers: Vec<String> = Vec::new();
        let mut decoded = false;
        let outer_stdin = self.stdin.clone();
        for (i, child) in named_children(node).into_iter().enumerate() {
            let first_command = self.facts.commands.len();
            let stdin = if i == 0 {
                outer_stdin.clone()
            } else {
                Stdin::Pipe {
                    producers: producers.clone(),
                    decoded,
                }
            };
            self.isolated(|w| {
                w.stdin = stdin;
                w.visit(child);
            });
            for cmd in &self.facts.commands[first_command..] {
                if let Some(p) = cmd.program() {
                    producers.push(p.to_string());
                }
                if cmd
                    .argv
                    .iter()
                    .any(|a| matches!(a.as_lit(), Some("-d" | "--decode" | "-D" | "-r")))
                {
                    decoded = true;
                }
            }
        }
    }

    fn redirected(&mut self, node: Node) {
        let body = node.child_by_field_name("body");
        // Inline stdin must be known before the body is visited: a shell reading a here-doc
        // is analysed like `bash -c`.
        let mut inline: Option<Stdin> = None;
        for child in named_children(node) {
            if Some(child) == body {
                continue;
            }
            if matches!(child.kind(), "heredoc_redirect" | "herestring_redirect") {
                inline = Some(Stdin::Inline {
                    text: self.inline_text(child),
                });
            }
            if child.kind() == "file_redirect" && self.redirect_op(child) == Some(RedirectOp::Read)
            {
                inline = Some(Stdin::File);
            }
        }
        if let Some(body) = body {
            let saved = self.stdin.clone();
            if let Some(stdin) = inline.clone() {
                self.stdin = stdin;
            }
            self.visit(body);
            self.stdin = saved;
        }
        let owner = body.and_then(|b| self.node_command.get(&b.id()).copied());
        for child in named_children(node) {
            if Some(child) != body {
                self.redirect(child, owner);
            }
        }
    }

    fn inline_text(&self, node: Node) -> Option<String> {
        match node.kind() {
            "heredoc_redirect" => {
                let body = named_children(node)
                    .into_iter()
                    .find(|c| c.kind() == "heredoc_body")?;
                let has_expansion = named_children(body)
                    .iter()
                    .any(|c| c.kind() != "heredoc_content");
                if has_expansion {
                    return None;
                }
                Some(self.text(body).to_string())
            }
            "herestring_redirect" => {
                let value = named_children(node).into_iter().last()?;
                let words = self.eval(value).into_words(self.text(value));
                match words.as_slice() {
                    [Word::Lit { value, .. }] => Some(value.clone()),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn redirect_op(&self, node: Node) -> Option<RedirectOp> {
        let mut cursor = node.walk();
        let op = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| self.text(c))?;
        Some(match op {
            "<" => RedirectOp::Read,
            ">" | ">|" | "&>" | ">&" => RedirectOp::Write,
            ">>" | "&>>" => RedirectOp::Append,
            "<>" => RedirectOp::ReadWrite,
            "<&" | ">&-" | "<&-" => return None,
            _ => return None,
        })
    }

    fn redirect(&mut self, node: Node, owner: Option<usize>) {
        match node.kind() {
            "file_redirect" => {
                let Some(dest) = node.child_by_field_name("destination") else {
                    return;
                };
                self.visit(dest);
                let Some(op) = self.redirect_op(node) else {
                    return;
                };
                let target_text = self.text(dest);
                let is_fd_dup =
                    dest.kind() == "number" || (op == RedirectOp::Write && target_text == "-");
                let mut cursor = node.walk();
                let raw_op = node
                    .children(&mut cursor)
                    .find(|c| !c.is_named())
                    .map(|c| self.text(c))
                    .unwrap_or("");
                if is_fd_dup && raw_op.contains('&') {
                    return;
                }
                let words = self.eval(dest).into_words(target_text);
                let target = match words.as_slice() {
                    [one] => one.clone(),
                    _ => Word::Dynamic {
                        text: target_text.to_string(),
                        vars: Vec::new(),
                    },
                };
                let span = self.span(node);
                let cwd = self.cwd.clone();
                self.facts.redirects.push(Redirect {
                    span,
                    op,
                    target,
                    owner,
                    cwd,
                });
            }
            "heredoc_redirect" | "herestring_redirect" => {
                for child in named_children(node) {
                    match child.kind() {
                        "heredoc_body" => {
                            for part in named_children(child) {
                                self.visit(part);
                            }
                        }
                        "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
                        "file_redirect" => self.redirect(child, owner),
                        _ => self.visit(child),
                    }
                }
            }
            _ => self.visit(node),
        }
    }

    /// Evaluates a word node to its characters, or marks it dynamic.
    fn eval(&self, node: Node) -> Pieces {
        let mut pieces = Pieces::default();
        match node.kind() {
            "word" | "number" => pieces = words::unquoted_word(self.text(node)),
            "raw_string" => {
                let t = self.text(node);
                let inner = t
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(t);
                pieces.push_str(inner, true);
            }
            "ansi_c_string" => {
                let t = self.text(node);
                let inner = t
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(t);
                pieces.push_str(&words::decode_ansi_c(inner), true);
                pieces.ansi_c = true;
            }
            "string" => {
                pieces.had_quotes = true;
                for child in named_children(node) {
                    if child.kind() == "string_content" {
                        pieces.push_str(&words::double_quoted_content(self.text(child)), true);
                    } else {
                        // Inside double quotes nothing splits or globs.
                        let mut inner = self.eval(child);
                        for q in &mut inner.chars {
                            q.quoted = true;
                        }
                        pieces.append(inner);
                    }
                }
            }
            "translated_string" => {
                for child in named_children(node) {
                    pieces.append(self.eval(child));
                }
            }
            "concatenation" => {
                for child in named_children(node) {
                    pieces.append(self.eval(child));
                }
            }
            "simple_expansion" | "expansion" => {
                let name = named_children(node)
                    .into_iter()
                    .find(|c| matches!(c.kind(), "variable_name" | "special_variable_name"))
                    .map(|c| self.text(c).to_string());
                // Only `$name` and `${name}` are the variable's value; any operator changes it.
                let plain = match &name {
                    Some(n) => {
                        let t = self.text(node);
                        t == format!("${n}") || t == format!("${{{n}}}")
                    }
                    None => false,
                };
                match (name, plain) {
                    (Some(name), true) => match self.known_value(&name) {
                        Some(value) => pieces.push_str(&value, true),
                        None => {
                            pieces.dynamic = true;
                            pieces.vars.push(name);
                        }
                    },
                    (name, _) => {
                        pieces.dynamic = true;
                        pieces.vars.extend(name);
                    }
                }
            }
            _ => {
                pieces.dynamic = true;
            }
        }
        pieces
    }

    fn known_value(&self, name: &str) -> Option<String> {
        match self.vars.get(name) {
            Some(Some(v)) => Some(v.to_string()),
            Some(None) => None,
            None if self.locals.contains(name) => None,
            None => match name {
                "HOME" => Some(self.ctx.home.to_string_lossy().into_owned()),
                "PWD" => match &self.cwd {
                    Cwd::Known(p) => Some(p.to_string_lossy().into_owned()),
                    Cwd::Unknown => None,
                },
                _ => None,
            },
        }
    }

    fn command(&mut self, node: Node) {
        let mut env: Vec<(String, Word)> = Vec::new();
        let mut name_node = None;
        let mut arg_nodes = Vec::new();
        let mut redirect_nodes = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<(Option<&str>, Node)> = node
            .children(&mut cursor)
            .enumerate()
            .filter(|(_, c)| c.is_named())
            .map(|(i, c)| (node.field_name_for_child(i as u32), c))
            .collect();
        for (field, child) in &children {
            match (*field, child.kind()) {
                (Some("name"), _) => name_node = Some(*child),
                (Some("argument"), _) => arg_nodes.push(*child),
                (Some("redirect"), _) => redirect_nodes.push(*child),
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
                        env.push((self.text(n).to_string(), value));
                    }
                }
                (_, "file_redirect" | "herestring_redirect" | "heredoc_redirect") => {
                    redirect_nodes.push(*child)
                }
                _ => {}
            }
        }
        // Substitutions and expansions inside the words run (or are read) before the command.
        for (field, child) in &children {
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
        // Here-strings attached directly to the command feed its stdin.
        let mut stdin = self.stdin.clone();
        for r in &redirect_nodes {
            if r.kind() == "herestring_redirect" || r.kind() == "heredoc_redirect" {
                stdin = Stdin::Inline {
                    text: self.inline_text(*r),
                };
            }
        }

        let Some(name_node) = name_node else {
            for r in redirect_nodes {
                self.redirect(r, None);
            }
            return;
        };
        let name_inner = named_children(name_node)
            .into_iter()
            .next()
            .unwrap_or(name_node);
        let name_pieces = self.eval(name_inner);
        let name_disguised = name_pieces.any_quoted() || name_pieces.ansi_c;
        let mut argv = name_pieces.into_words(self.text(name_inner));
        if argv.len() != 1 {
            argv = vec![Word::Dynamic {
                text: self.text(name_inner).to_string(),
                vars: Vec::new(),
            }];
        }
        for arg in &arg_nodes {
            argv.extend(self.eval(*arg).into_words(self.text(*arg)));
        }
        let text = self.text(node).to_string();
        let span = self.span(node);
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
        env.extend(unwrapped.env.iter().cloned());

        let index = if unwrapped.replaced {
            None
        } else {
            let mut argv = unwrapped.argv.clone();
            if let Some(first) = argv.first_mut() {
                if let Some(n) = unwrap::program_name(first) {
                    if let Word::Lit { value, .. } = first {
                        *value = n;
                    }
                }
            }
            let is_shell_reading_script = argv
                .first()
                .and_then(Word::as_lit)
                .is_some_and(|p| SHELLS.contains(&p))
                && argv.len() == 1
                && matches!(stdin, Stdin::Inline { text: Some(_) });
            self.facts.commands.push(SimpleCommand {
                span: span.clone(),
                text: text.clone(),
                argv,
                wrappers: unwrapped.wrappers.clone(),
                env: env.clone(),
                cwd: cwd.clone(),
                stdin: stdin.clone(),
                origin: if unwrapped.via_xargs {
                    Origin::Xargs
                } else {
                    self.origin
                },
                name_disguised,
                stdin_script_analyzed: is_shell_reading_script,
                is_script_function: is_function,
            });
            let index = self.facts.commands.len() - 1;
            self.node_command.insert(node.id(), index);
            if is_shell_reading_script {
                if let Stdin::Inline { text: Some(script) } = &stdin {
                    let script = script.clone();
                    self.nested(node, &script, Vec::new(), Origin::ShellString, cwd.clone());
                }
            }
            Some(index)
        };
        for problem in &unwrapped.problems {
            self.opaque(node, index, problem.clone());
        }
        for inner in &unwrapped.inner {
            match inner {
                Inner::Script { text, positional } => {
                    let (text, positional) = (text.clone(), positional.clone());
                    self.nested(node, &text, positional, Origin::ShellString, cwd.clone());
                }
                Inner::FindExec(inner_argv) => {
                    let u = unwrap::unwrap(inner_argv.clone());
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
                            span: span.clone(),
                            text: text.clone(),
                            argv: u.argv,
                            wrappers: [vec!["find".to_string()], u.wrappers].concat(),
                            env: u.env,
                            cwd: cwd.clone(),
                            stdin: Stdin::Inherited,
                            origin: Origin::FindExec,
                            name_disguised: false,
                            stdin_script_analyzed: false,
                            is_script_function: false,
                        });
                    }
                }
            }
        }
        for r in redirect_nodes {
            self.redirect(r, index);
        }
        // Directory changes and `read` targets affect what follows.
        if let Some(index) = index {
            let argv = self.facts.commands[index].argv.clone();
            match argv.first().and_then(Word::as_lit) {
                Some("cd" | "pushd") => {
                    let target = argv[1..]
                        .iter()
                        .find(|w| !w.as_lit().is_some_and(|s| s.starts_with('-') && s != "-"));
                    self.cwd = match target.and_then(Word::as_lit) {
                        Some("-") => Cwd::Unknown,
                        _ => self.cd_target(target),
                    };
                }
                Some("popd") => self.cwd = Cwd::Unknown,
                Some(
                    builtin @ ("read" | "mapfile" | "readarray" | "getopts" | "printf" | "let"),
                ) => {
                    let targets = assigned_by_builtin(builtin, &argv[1..]);
                    let span = self.span(node);
                    for name in targets {
                        self.locals.insert(name.clone());
                        self.vars.assign(&name, None);
                        self.facts.assignments.push(ShellAssignment {
                            name,
                            span: span.clone(),
                            exported: false,
                        });
                    }
                }
                _ => {}
            }
        }
    }

    fn cd_target(&self, target: Option<&Word>) -> Cwd {
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
                Cwd::Known(lexical_normalize(&path))
            }
            Some(_) => Cwd::Unknown,
        }
    }

    fn nested(
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
        analyze_into(
            self.facts,
            script,
            self.ctx,
            Nested {
                span: Some(span),
                positional,
                origin,
                depth: self.depth + 1,
                cwd,
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

/// Removes `.` and resolves `..` lexically; used only for the directory a `cd` goes to, which the
/// path facts later resolve physically.
pub fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
