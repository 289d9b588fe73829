//! What runs when: lists, pipelines, `&` jobs, loops and branches, and the [`Order`] each part
//! gets from them, so that what one command leaves behind (a link it creates) is seen by exactly
//! the parts that may run after it.

use tree_sitter::Node;

use super::{Walker, named_children};
use crate::facts::shell::{Cwd, Order, Stdin};

/// What a nested string inherits about when it runs, and the next free loop/pipeline id.
#[derive(Debug, Clone, Default)]
pub struct OuterOrder {
    pub anytime: bool,
    pub together: Vec<usize>,
    pub repeats: bool,
    pub next_group: usize,
}

impl Walker<'_, '_> {
    /// When a part starting now runs, with the commands below index `after` already run.
    pub(super) fn order(&self, after: usize) -> Order {
        Order {
            after,
            anytime: self.anytime > 0,
            together: self.together.clone(),
            repeats: self.repeating > 0,
        }
    }

    /// What a nested string inherits from the place it runs.
    pub(super) fn outer_order(&self) -> OuterOrder {
        OuterOrder {
            anytime: self.anytime > 0,
            together: self.together.clone(),
            repeats: self.repeating > 0,
            next_group: self.next_group,
        }
    }

    /// Runs `f` as a part that may run after anything written later.
    pub(super) fn anytime(&mut self, f: impl FnOnce(&mut Self)) {
        self.anytime += 1;
        f(self);
        self.anytime -= 1;
    }

    /// Runs `f` as a loop or pipeline whose parts may run in any order among themselves.
    pub(super) fn together(&mut self, f: impl FnOnce(&mut Self)) {
        let id = self.next_group;
        self.next_group += 1;
        self.together.push(id);
        f(self);
        self.together.pop();
    }

    /// Runs `f` with the working directory and stdin isolated, as in a subshell.
    pub(super) fn isolated(&mut self, f: impl FnOnce(&mut Self)) {
        let cwd = self.cwd.clone();
        let stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        f(self);
        self.cwd = cwd;
        self.stdin = stdin;
    }

    /// Runs `f` as a part that may run zero or more times: a `cd` inside makes the directory unknown.
    pub(super) fn conditional(&mut self, f: impl FnOnce(&mut Self)) {
        let before = self.cwd.clone();
        self.nesting += 1;
        f(self);
        self.nesting -= 1;
        if self.cwd != before {
            self.cwd = Cwd::Unknown;
        }
    }

    /// Runs `f` as a part that may run more than once (a loop or function body).
    pub(super) fn repeated(&mut self, f: impl FnOnce(&mut Self)) {
        self.repeating += 1;
        self.together(|w| w.conditional(f));
        self.repeating -= 1;
    }

    /// `a && b || c ...`: the grammar nests long lists to the left, so they are flattened here
    /// rather than followed recursively.
    pub(super) fn list(&mut self, node: Node) {
        let mut spine = vec![node];
        let mut leftmost = node;
        while let Some(left) = leftmost.named_child(0).filter(|c| c.kind() == "list") {
            spine.push(left);
            leftmost = left;
        }
        // In source order: the leftmost list's children, then each outer list's operator and right side.
        let mut items: Vec<Node> = Vec::new();
        for (i, list) in spine.iter().rev().enumerate() {
            let mut cursor = list.walk();
            let children: Vec<Node> = list.children(&mut cursor).collect();
            let skip = usize::from(i > 0);
            items.extend(children.into_iter().skip(skip));
        }
        let before = self.cwd.clone();
        for child in items {
            if !child.is_named() {
                if self.text(child) == "||" && self.cwd != before {
                    // The right side runs only when the left failed, maybe before its `cd`.
                    self.cwd = Cwd::Unknown;
                }
                continue;
            }
            self.visit(child);
        }
        self.list_end_cwd = Some(self.cwd.clone());
        if self.cwd != before {
            self.cwd = Cwd::Unknown;
        }
    }

    pub(super) fn pipeline(&mut self, node: Node) {
        self.together(|w| w.pipeline_stages(node));
    }

    fn pipeline_stages(&mut self, node: Node) {
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
}
