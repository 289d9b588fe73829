//! Redirects, here-docs and here-strings, and turning word nodes into words.

use crate::facts::shell::words::QChar;
use tree_sitter::Node;

use super::{Walker, named_children};
use crate::facts::shell::words::{self, Pieces, Word};
use crate::facts::shell::{Cwd, Redirect, RedirectOp, Stdin};

impl Walker<'_, '_> {
    pub(super) fn redirected(&mut self, node: Node) {
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
        let before = self.cwd.clone();
        self.list_end_cwd = None;
        if let Some(body) = body {
            let saved = self.stdin.clone();
            if let Some(stdin) = inline.clone() {
                self.stdin = stdin;
            }
            self.visit(body);
            self.stdin = saved;
        }
        let after_body = self.cwd.clone();
        let owner = body.and_then(|b| self.node_command.get(&b.id()).copied());
        // A redirect opens before its command runs, where the command starts. The grammar also
        // hangs `a && cd x && b > f` and `a | b > f` here, where the redirect is `b`'s: it opens
        // in the directory `b` runs in, and the whole body counts as run (which can only see
        // more of the links it creates).
        let after = owner.unwrap_or(self.facts.commands.len());
        self.cwd = match body.map(|b| b.kind()) {
            Some("list") => self.list_end_cwd.take().unwrap_or(Cwd::Unknown),
            _ => before,
        };
        for child in named_children(node) {
            if Some(child) != body {
                self.redirect(child, owner, after);
            }
        }
        self.cwd = after_body;
    }

    pub(super) fn inline_text(&self, node: Node) -> Option<String> {
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

    pub(super) fn redirect_op(&self, node: Node) -> Option<RedirectOp> {
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

    /// `after`: the commands below that index have run when the redirect opens.
    pub(super) fn redirect(&mut self, node: Node, owner: Option<usize>, after: usize) {
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
                let order = self.order(after);
                self.facts.redirects.push(Redirect {
                    span,
                    op,
                    target,
                    owner,
                    cwd,
                    order,
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
                        "heredoc_start" => {
                            let delimiter = self.text(child);
                            if !plain_heredoc_delimiter(delimiter)
                                && self.facts.parse_error.is_none()
                            {
                                self.facts.parse_error = Some(format!(
                                    "the here-doc delimiter `{}` is quoted in a way bash and airlock may read differently; use a plain word such as 'EOF'",
                                    delimiter.escape_debug()
                                ));
                            }
                        }
                        "heredoc_end" | "file_descriptor" => {}
                        "file_redirect" => self.redirect(child, owner, after),
                        _ => self.visit(child),
                    }
                }
            }
            _ => self.visit(node),
        }
    }

    /// Evaluates a word node to its characters, or marks it dynamic.
    pub(super) fn eval(&self, node: Node) -> Pieces {
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
                            q.quoted |= !q.pattern;
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
                    (Some(name), true) if self.vars.loop_pattern(&name).is_some() => {
                        pieces.chars.extend(
                            self.vars
                                .loop_pattern(&name)
                                .unwrap_or_default()
                                .iter()
                                .copied(),
                        );
                        pieces.from_var = true;
                    }
                    (Some(name), true) => match self.known_value(&name) {
                        // Unquoted, a value is split into words and globbed; inside double
                        // quotes the string's own evaluation marks it quoted again.
                        Some(value) => {
                            pieces.push_str(&value, false);
                            pieces.from_var = true;
                        }
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

    /// The pattern that stands for every value of a `for` loop's variable, when its list is one
    /// literal word: the names a glob matches (`for f in src/*.rs`), or that one word. A list of
    /// several words is not folded into one pattern: `for c in ls rm; do $c -rf x; done` runs each
    /// value as its own command, and a pattern would judge `ls rm -rf x` instead. `None` when the
    /// word is computed or there is no list (`"$@"`).
    pub(super) fn loop_pattern(&self, node: Node) -> Option<Vec<QChar>> {
        let mut cursor = node.walk();
        let values: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
        let [value] = values.as_slice() else {
            return None;
        };
        let words = self.eval(*value).into_words(self.text(*value));
        let [Word::Lit { value, glob, .. }] = words.as_slice() else {
            return None;
        };
        if value.is_empty() {
            return None;
        }
        Some(
            value
                .chars()
                .map(|c| {
                    let active = *glob && matches!(c, '*' | '?' | '[' | ']');
                    QChar {
                        c,
                        quoted: !active,
                        pattern: active,
                    }
                })
                .collect(),
        )
    }

    pub(super) fn known_value(&self, name: &str) -> Option<String> {
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
}

/// `EOF`, `'EOF'`, `"EOF"` and `\EOF` end a here-doc where both bash and the grammar agree.
/// Anything else (`E''OF`, `$'EOF'`, ...) may end it somewhere else in bash.
fn plain_heredoc_delimiter(text: &str) -> bool {
    let word = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return word(inner);
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        return word(inner);
    }
    word(text.strip_prefix('\\').unwrap_or(text))
}
