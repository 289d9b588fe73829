//! The tree walk: visits every node of a tree-sitter-bash parse in source order, keeping track of
//! the working directory, the script's own variables and functions, and where stdin comes from.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

mod command;
mod flow;
mod redirects;
mod variables;

pub use flow::OuterOrder;

use tree_sitter::{Node, Parser};

use super::words::{ScriptVars, Word};
use super::{Cwd, Opaque, Origin, ShellContext, ShellFacts, Stdin};

pub struct Nested {
    pub span: Option<Range<usize>>,
    /// `$0`, `$1`, ... of a `bash -c` string.
    pub positional: Vec<Word>,
    pub origin: Origin,
    pub depth: usize,
    pub cwd: Cwd,
    pub order: OuterOrder,
}

/// Returns the next free loop/pipeline id, for the walk that continues after a nested string.
pub fn analyze_into(
    facts: &mut ShellFacts,
    src: &str,
    ctx: &ShellContext,
    nested: Nested,
) -> usize {
    let next_group = nested.order.next_group;
    let mut parser = Parser::new();
    let outer_span = nested.span.clone().unwrap_or(0..src.len());
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        facts.parse_error = Some("the bash grammar could not be loaded".into());
        return next_group;
    }
    let Some(tree) = parser.parse(src, None) else {
        facts.parse_error = Some("the bash parser gave no result".into());
        return next_group;
    };
    let root = tree.root_node();
    // tree-sitter reads `ls ;; ls` as two commands; bash refuses it (`;;` only ends a case
    // item). What bash refuses to parse runs nothing, so it is refused here too, one rule.
    let stray_case_end = stray_terminator(root);
    if root.has_error() || stray_case_end.is_some() {
        let at = stray_case_end.or_else(|| first_error(root)).unwrap_or(root);
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
        return next_group;
    }
    let mut walker = Walker {
        src,
        ctx,
        facts,
        outer_span: nested.span,
        _outer: outer_span.clone(),
        vars: ScriptVars::default(),
        locals: HashSet::new(),
        namerefs: HashMap::new(),
        functions: HashSet::new(),
        node_command: HashMap::new(),
        cwd: nested.cwd,
        list_end_cwd: None,
        depth: nested.depth,
        nesting: 0,
        repeating: usize::from(nested.order.repeats),
        anytime: usize::from(nested.order.anytime),
        together: nested.order.together,
        next_group,
        level: 0,
        origin: nested.origin,
        stdin: Stdin::Inherited,
    };
    for (i, word) in nested.positional.iter().enumerate() {
        walker
            .vars
            .assign(&i.to_string(), word.as_lit().map(str::to_string));
    }
    walker.visit(root);
    let next_group = walker.next_group;
    if code_in_subscript(src) && evaluates_names(src) {
        facts.opaque.push(Opaque {
            span: outer_span,
            command: None,
            what: "a string holds `$(...)` inside `[...]`; bash runs it when the string is used as an array subscript (let, test -v, [[ ]], (( )), read, printf -v, declare, unset)".into(),
        });
    }
    next_group
}

/// A `[` followed, before its `]`, by `$(`, `${` or a backquote.
fn code_in_subscript(src: &str) -> bool {
    src.match_indices('[').any(|(i, _)| {
        let rest = &src[i + 1..];
        let inside = rest.split(']').next().unwrap_or(rest);
        inside.contains("$(") || inside.contains("${") || inside.contains('`')
    })
}

/// Constructs that evaluate a string as a variable name or arithmetic expression.
fn evaluates_names(src: &str) -> bool {
    [
        "let ",
        "test ",
        "[ ",
        "[[",
        "((",
        "read ",
        "printf ",
        "declare ",
        "typeset ",
        "local ",
        "unset ",
        "mapfile ",
        "readarray ",
        "getopts ",
        "export ",
        "readonly ",
        "eval ",
    ]
    .iter()
    .any(|w| src.contains(w))
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn first_error(node: Node) -> Option<Node> {
    let mut at = node;
    loop {
        if at.is_error() || at.is_missing() {
            return Some(at);
        }
        let mut cursor = at.walk();
        let next = at.children(&mut cursor).find(|c| c.has_error());
        match next {
            Some(child) => at = child,
            None => return Some(at),
        }
    }
}

/// How deep the syntax tree may nest before airlock stops and refuses the command. Deep enough
/// for any real command; shallow enough that the walk never exhausts a worker thread's stack.
pub const MAX_TREE_DEPTH: usize = 200;

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
    /// Names made to refer to other variables (`declare -n r=x`), with what they refer to.
    namerefs: HashMap<String, variables::Ref>,
    functions: HashSet<String>,
    node_command: HashMap<usize, usize>,
    cwd: Cwd,
    /// Where the last element of the list just walked ran, before the list's `cd`s were
    /// forgotten: a redirect the grammar hangs on the whole list opens there.
    list_end_cwd: Option<Cwd>,
    depth: usize,
    /// Inside a loop, branch or function body: assignments there are not known values.
    nesting: usize,
    /// Inside a loop or function body: what runs there may run more than once.
    repeating: usize,
    /// Inside an `&` job, trap handler, function body or process substitution.
    anytime: usize,
    /// Ids of the loops and pipelines around the walk, innermost last.
    together: Vec<usize>,
    next_group: usize,
    /// How deep the walk is in the syntax tree right now.
    level: usize,
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
            let background = child
                .next_sibling()
                .is_some_and(|s| !s.is_named() && s.kind() == "&");
            if background {
                self.anytime(|w| w.visit(child));
            } else {
                self.visit(child);
            }
        }
    }

    /// Enters one level of the tree; false (and a parse error) when it is too deep to follow.
    fn descend(&mut self) -> bool {
        self.level += 1;
        if self.level > MAX_TREE_DEPTH {
            if self.facts.parse_error.is_none() {
                self.facts.parse_error = Some(format!(
                    "the command nests more than {MAX_TREE_DEPTH} levels deep"
                ));
            }
            return false;
        }
        true
    }

    fn visit(&mut self, node: Node) {
        if self.descend() {
            self.visit_node(node);
        }
        self.level -= 1;
    }

    fn visit_node(&mut self, node: Node) {
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
                // `<(...)` and `>(...)` run alongside the command, and may outlive it.
                if node.kind() == "process_substitution" {
                    self.anytime(|w| w.isolated(|w| w.visit_children(node)));
                } else {
                    self.isolated(|w| w.visit_children(node));
                }
                self.origin = origin;
                self.backquoted(node);
            }
            "if_statement" | "case_statement" => self.conditional(|w| w.visit_children(node)),
            "while_statement" | "c_style_for_statement" => {
                self.repeated(|w| w.visit_children(node))
            }
            "for_statement" => {
                if let Some(var) = node.child_by_field_name("variable") {
                    let name = self.text(var).to_string();
                    self.locals.insert(name.clone());
                    let pattern = self.loop_pattern(node);
                    self.vars.assign_loop(&name, pattern);
                }
                self.repeated(|w| {
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
                self.anytime += 1;
                self.repeated(|w| {
                    if let Some(body) = node.child_by_field_name("body") {
                        w.visit(body);
                    }
                    for child in named_children(node) {
                        if node.child_by_field_name("redirect") == Some(child) {
                            let after = w.facts.commands.len();
                            w.redirect(child, None, after);
                        }
                    }
                });
                self.anytime -= 1;
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
                let after = self.facts.commands.len();
                self.redirect(node, None, after)
            }
            "comment" | "heredoc_start" | "heredoc_end" | "heredoc_content" => {}
            _ => self.visit_children(node),
        }
    }

    /// Inside backquotes, `\``, `\$` and `\\` are unescaped before bash parses the text, so an
    /// escaped backquote opens a nested substitution the grammar does not see. Parse it again the
    /// way bash does.
    fn backquoted(&mut self, node: Node) {
        let text = self.text(node);
        let Some(body) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) else {
            return;
        };
        if !body.contains('\\') {
            return;
        }
        let mut unescaped = String::new();
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' && matches!(chars.peek(), Some('`' | '$' | '\\')) {
                if let Some(next) = chars.next() {
                    unescaped.push(next);
                }
            } else {
                unescaped.push(c);
            }
        }
        let cwd = self.cwd.clone();
        self.nested(node, &unescaped, Vec::new(), Origin::Substitution, cwd);
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

/// A `;;`, `;&` or `;;&` that does not end an item of a `case`, which bash refuses to parse.
fn stray_terminator(root: Node) -> Option<Node> {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named()
                && matches!(child.kind(), ";;" | ";&" | ";;&")
                && node.kind() != "case_item"
                && node.kind() != "case_statement"
            {
                return Some(child);
            }
            stack.push(child);
        }
    }
    None
}
