//! A path written as a shell glob, judged by every path it could name: `~/.ssh/id_*` is a private
//! key wherever one exists, whether or not one exists on the machine airlock looks at, and
//! whatever else the glob matches there now.
//!
//! Only what a sandboxed command may never read ([`UNREADABLE`]: keys, credential stores, secret
//! and env files, airlock's own configuration) and airlock's state directory are judged this way.
//! The rest of the table (manifests, git internals, CI files) only changes how a change is
//! worded, and what the glob matches on disk is judged anyway.
//!
//! A glob and a table row "could name the same path" when, component by component, some name
//! matches both, with bash's rule that a name starting with `.` is only matched by a component
//! that starts with `.` (so `~/*` never names `~/.ssh`). A row that is only a file name
//! (`id_rsa`, `*.key`, `.env`) is named only where the glob's own letters spell the row's: `.env*`
//! names `.env` and `*.key` names every key, but `notes*` does not name `notes.key`, or every
//! directory would hold a key.

use std::collections::BTreeSet;
use std::path::Path;

use super::sensitivity::{Anchor, RULES};
use super::{PathContext, Sensitivity, UNREADABLE, lower_components};

/// One piece of a glob component.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    /// `[...]`: ranges, or every character when it holds a class such as `[:alpha:]`.
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
        everything: bool,
    },
}

impl Token {
    fn admits(&self, c: char) -> bool {
        match self {
            Token::Char(x) => *x == c,
            Token::Any | Token::Star => true,
            Token::Set {
                negated,
                ranges,
                everything,
            } => {
                let inside = *everything || ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c));
                inside != *negated
            }
        }
    }

    /// Stands for letters of its own choosing: a letter, or a set of them (`[rd]`), not a
    /// wildcard (`*`, `?`, `[!x]`, `[[:alpha:]]`).
    fn spells(&self) -> bool {
        match self {
            Token::Char(_) => true,
            Token::Set {
                negated,
                everything,
                ..
            } => !negated && !everything,
            Token::Any | Token::Star => false,
        }
    }
}

/// A component as a glob: `*`, `?` and `[...]` as bash reads them, anything else literal.
fn tokens(component: &str) -> Vec<Token> {
    let chars: Vec<char> = component.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push(Token::Star),
            '?' => out.push(Token::Any),
            '[' => match bracket(&chars[i + 1..]) {
                Some((set, used)) => {
                    out.push(set);
                    i += used;
                }
                None => out.push(Token::Char('[')),
            },
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    out
}

/// The set a `[` opens, read from what follows it, and how many characters it took (with the
/// closing `]`); `None` when it never closes (the `[` is then a plain character).
fn bracket(rest: &[char]) -> Option<(Token, usize)> {
    let mut i = 0;
    let negated = matches!(rest.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut everything = false;
    let mut first = true;
    while i < rest.len() {
        let c = rest[i];
        if c == ']' && !first {
            return Some((
                Token::Set {
                    negated,
                    ranges,
                    everything,
                },
                i + 1,
            ));
        }
        first = false;
        if c == '[' && matches!(rest.get(i + 1), Some(':' | '=' | '.')) {
            everything = true;
            let close = rest[i + 2..].iter().position(|&x| x == ']')?;
            i += close + 3;
            continue;
        }
        match (rest.get(i + 1), rest.get(i + 2)) {
            (Some('-'), Some(&hi)) if hi != ']' => {
                ranges.push((c, hi));
                i += 3;
            }
            _ => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
    None
}

fn literal(component: &str) -> Vec<Token> {
    component.chars().map(Token::Char).collect()
}

/// Characters worth trying where two tokens must agree on one.
fn candidates(a: &Token, b: &Token) -> Vec<char> {
    let mut out: Vec<char> = "abcxyz019._-~é".chars().collect();
    for t in [a, b] {
        match t {
            Token::Char(c) => out.push(*c),
            Token::Set { ranges, .. } => out.extend(ranges.iter().flat_map(|(lo, hi)| [*lo, *hi])),
            Token::Any | Token::Star => {}
        }
    }
    out
}

/// How a glob component may meet a row's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meet {
    /// Any name both match.
    Any,
    /// Only where the glob's wildcards stand for the row's: its letters (or sets of letters)
    /// spell the row's letters.
    Spelled,
}

/// Some name matches both the glob component `glob` (with bash's rule for a leading `.`) and
/// `row`, a component of the table or of a place.
fn overlap(glob: &[Token], row: &[Token]) -> bool {
    meets(glob, row, Meet::Any)
}

fn meets(glob: &[Token], row: &[Token], meet: Meet) -> bool {
    let dot_ok = glob
        .first()
        .is_some_and(|t| !matches!(t, Token::Star | Token::Any) && t.admits('.'));
    let (la, lb) = (glob.len(), row.len());
    let mut seen = vec![false; (la + 1) * (lb + 1) * 2];
    let mut stack = vec![(0usize, 0usize, false)];
    while let Some((i, j, started)) = stack.pop() {
        let key = (i * (lb + 1) + j) * 2 + usize::from(started);
        if std::mem::replace(&mut seen[key], true) {
            continue;
        }
        if i == la && j == lb {
            return true;
        }
        if glob.get(i) == Some(&Token::Star) {
            stack.push((i + 1, j, started));
        }
        if row.get(j) == Some(&Token::Star) {
            stack.push((i, j + 1, started));
        }
        let (Some(a), Some(b)) = (glob.get(i), row.get(j)) else {
            continue;
        };
        let spelled = meet == Meet::Any || *b == Token::Star || a.spells();
        let agree = spelled
            && candidates(a, b)
                .into_iter()
                .any(|c| a.admits(c) && b.admits(c) && (started || dot_ok || c != '.'));
        if agree {
            let next_i = if *a == Token::Star { i } else { i + 1 };
            let next_j = if *b == Token::Star { j } else { j + 1 };
            stack.push((next_i, next_j, true));
        }
    }
    false
}

/// Every name the glob component matches also matches `except` (a table exemption: a plain
/// name, or `*` and a literal ending). Unsure is no.
fn within(glob: &[Token], except: &str) -> bool {
    let tail: String = glob
        .iter()
        .rev()
        .map_while(|t| match t {
            Token::Char(c) => Some(*c),
            _ => None,
        })
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .collect();
    let all_literal = tail.chars().count() == glob.len();
    match except.strip_prefix('*') {
        Some(ending) if !ending.contains('*') => tail.ends_with(ending),
        Some(_) => false,
        None => all_literal && tail == except,
    }
}

/// `row` matches the start of `parts`: all of it, or a prefix when it ends in `**`.
fn anchored(row: &[Vec<Token>], parts: &[Vec<Token>]) -> bool {
    match row.split_last() {
        Some((last, head)) if last.as_slice() == [Token::Star, Token::Star] => {
            parts.len() >= head.len() && head.iter().zip(parts).all(|(r, p)| overlap(p, r))
        }
        _ => parts.len() == row.len() && row.iter().zip(parts).all(|(r, p)| overlap(p, r)),
    }
}

/// `row` matches somewhere in `parts`, ending them unless it ends in `**`.
fn anywhere(row: &[Vec<Token>], parts: &[Vec<Token>]) -> bool {
    let open = row
        .last()
        .is_some_and(|l| l.as_slice() == [Token::Star, Token::Star]);
    if open {
        return (0..parts.len()).any(|start| anchored(row, &parts[start..]));
    }
    parts.len() >= row.len() && anchored(row, &parts[parts.len() - row.len()..])
}

/// The places a home can be (`ctx.home`, `/home/*`, `/Users/*`, `/root`, `/var/root`), as
/// components.
fn homes(ctx: &PathContext) -> Vec<Vec<Vec<Token>>> {
    let star = || vec![Token::Star];
    vec![
        lower_components(&ctx.home)
            .iter()
            .map(|c| literal(c))
            .collect(),
        vec![literal("home"), star()],
        vec![literal("users"), star()],
        vec![literal("var"), literal("root")],
        vec![literal("root")],
    ]
}

/// The parts of the glob `path` below each home it may be in.
fn below_homes(ctx: &PathContext, parts: &[Vec<Token>]) -> Vec<Vec<Vec<Token>>> {
    homes(ctx)
        .into_iter()
        .filter(|home| {
            !home.is_empty()
                && parts.len() >= home.len()
                && home.iter().zip(parts).all(|(h, p)| overlap(p, h))
        })
        .map(|home| parts[home.len()..].to_vec())
        .collect()
}

fn glob_parts(path: &Path) -> Vec<Vec<Token>> {
    let mut parts = lower_components(path);
    // macOS keeps `/etc`, `/var` and `/tmp` under `/private`.
    if parts.first().is_some_and(|p| p == "private")
        && parts
            .get(1)
            .is_some_and(|p| matches!(p.as_str(), "etc" | "var" | "tmp"))
    {
        parts.remove(0);
    }
    parts.iter().map(|c| tokens(c)).collect()
}

/// Each row of the table as glob components, once.
fn rows() -> &'static [Vec<Vec<Token>>] {
    static ROWS: std::sync::LazyLock<Vec<Vec<Vec<Token>>>> = std::sync::LazyLock::new(|| {
        RULES
            .iter()
            .map(|rule| rule.pattern.split('/').map(tokens).collect())
            .collect()
    });
    &ROWS
}

/// Adds what the table says of any path the glob `path` could name, for what a sandboxed command
/// may never read.
pub(super) fn classify(ctx: &PathContext, path: &Path, out: &mut BTreeSet<Sensitivity>) {
    let parts = glob_parts(path);
    let Some(name) = parts.last() else {
        return;
    };
    let below = below_homes(ctx, &parts);
    for (rule, row) in RULES.iter().zip(rows()) {
        if !UNREADABLE.contains(&rule.sensitivity) {
            continue;
        }
        let hit = match rule.anchor {
            Anchor::Root => anchored(row, &parts),
            Anchor::Home => below.iter().any(|rel| anchored(row, rel)),
            Anchor::Anywhere if row.len() == 1 => meets(name, &row[0], Meet::Spelled),
            Anchor::Anywhere => anywhere(row, &parts),
        };
        if hit && !rule.except.iter().any(|e| within(name, e)) {
            out.insert(rule.sensitivity);
        }
    }
    if may_be_inside(path, &ctx.state_dir) {
        out.insert(Sensitivity::AirlockConfig);
    }
}

/// The glob `path` could name `dir` or something in it.
pub(super) fn may_be_inside(path: &Path, dir: &Path) -> bool {
    let dir = lower_components(dir);
    let parts = glob_parts(path);
    !dir.is_empty()
        && parts.len() >= dir.len()
        && dir.iter().zip(&parts).all(|(d, p)| overlap(p, &literal(d)))
}
