//! What a `git` invocation does. Git is the most used multi-purpose program an agent runs, so it
//! gets its own table: read-only subcommands (with their writing flags excluded), network use,
//! history rewriting, destruction of uncommitted work, and configuration injection (`-c`).

mod config;
mod subcommands;

use super::Effect;
use crate::facts::shell::Word;
use subcommands::{read_only, records_work, refs_and_settings, remotes, rewrites};

/// Global options that take a separate value.
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
    "--config-env",
    "--super-prefix",
];

/// `--opt` matches an option when it is the option or a prefix of it (git, like GNU getopt, takes
/// unambiguous prefixes); `-O` also matches `-Ovalue`.
fn given(arg: &str, option: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    if option.starts_with("--") {
        name.len() > 3 && name.starts_with("--") && option.starts_with(name)
    } else {
        arg == option || (arg.starts_with(option) && !arg.starts_with("--"))
    }
}

/// Options of the read-only subcommands whose separate value is not a file: `git log -n 5`
/// reads no file named `5`.
const VALUE_OPTIONS: &[&str] = &[
    "-n",
    "--max-count",
    "--skip",
    "-S",
    "-G",
    "-L",
    "-e",
    "--author",
    "--committer",
    "--grep",
    "--since",
    "--until",
    "--after",
    "--before",
    "--format",
    "--pretty",
    "--date",
    "--diff-filter",
    "--abbrev",
    "-U",
    "--unified",
    "--max-depth",
    "--min-parents",
    "--max-parents",
];

/// The word is one command substitution running read-only git that prints nothing but
/// revisions (`$(git merge-base HEAD main)`, `$(git rev-parse --short HEAD)..main`), so it
/// names a commit, not a file. `rev-parse` can echo paths (`--show-toplevel`, plain arguments
/// after `--no-revs`), so only its revision-printing forms count.
fn prints_only_revisions(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("$(") else {
        return false;
    };
    let Some(close) = inner.find(')') else {
        return false;
    };
    let (command, after) = (&inner[..close], &inner[close + 1..]);
    // What follows may only be a range suffix (`..main`, `...HEAD`).
    let suffix_ok = after
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | '^' | '~'));
    if !suffix_ok || command.contains(['$', '`', '(', ';', '|', '&', '<', '>', '\\', '"', '\'']) {
        return false;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let revision = |w: &str| {
        !w.starts_with('-')
            && !w.starts_with('/')
            && !w.starts_with('~')
            && !w.contains("..")
            && w.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '.' | '-' | '_' | '/' | '^' | '~' | '@' | '{' | '}')
            })
    };
    match words.as_slice() {
        ["git", "merge-base", rest @ ..] => rest
            .iter()
            .all(|w| revision(w) || matches!(*w, "--fork-point" | "--all" | "--octopus")),
        ["git", "rev-parse", rest @ ..] => rest.iter().all(|w| {
            revision(w)
                || matches!(
                    *w,
                    "--verify"
                        | "-q"
                        | "--quiet"
                        | "--short"
                        | "--abbrev-ref"
                        | "--symbolic-full-name"
                )
                || w.strip_prefix("--short=")
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        }),
        ["git", "describe", rest @ ..] => rest
            .iter()
            .all(|w| revision(w) || matches!(*w, "--tags" | "--always" | "--abbrev=0" | "--long")),
        _ => false,
    }
}

pub fn effects(args: &[Word]) -> Vec<Effect> {
    let mut e = effects_in_repo(args);
    // `git -C DIR`: relative paths are relative to DIR.
    let mut dir: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_lit() {
            Some("-C") => {
                if let Some(d) = args.get(i + 1).and_then(Word::as_lit) {
                    dir = Some(match dir {
                        Some(prev) if !d.starts_with('/') && !d.starts_with('~') => {
                            format!("{prev}/{d}")
                        }
                        _ => d.to_string(),
                    });
                } else {
                    return vec![Effect::Opaque(
                        "`git -C` with a directory computed at run time".into(),
                    )];
                }
                i += 2;
            }
            Some(w) if w.starts_with('-') => {
                i += if GLOBAL_WITH_VALUE.contains(&w) { 2 } else { 1 }
            }
            _ => break,
        }
    }
    if let Some(dir) = dir {
        // Git reads the repository it is pointed at: `git -C ~ log -p` reads outside.
        e.push(Effect::Read(Word::lit(&dir)));
        let rebase = |w: &Word| match w.as_lit() {
            Some(p) if !p.starts_with('/') && !p.starts_with('~') => {
                Word::lit(&format!("{dir}/{p}"))
            }
            _ => w.clone(),
        };
        for effect in &mut e {
            match effect {
                Effect::Read(w) | Effect::Write(w) | Effect::Delete(w) | Effect::ReadTree(w) => {
                    *w = rebase(w);
                }
                _ => {}
            }
        }
    }
    e
}

fn effects_in_repo(args: &[Word]) -> Vec<Effect> {
    let mut e = Vec::new();
    let Some(i) = global_options(args, &mut e) else {
        return e;
    };
    let Some(sub) = args.get(i).and_then(Word::as_lit) else {
        if i < args.len() {
            e.push(Effect::Opaque(
                "a `git` subcommand computed at run time".into(),
            ));
        }
        return e;
    };
    let s = Subcommand::new(sub, &args[i + 1..]);
    let known = read_only(&s, &mut e)
        || refs_and_settings(&s, &mut e)
        || remotes(&s, &mut e)
        || rewrites(&s, &mut e)
        || records_work(&s, &mut e);
    if !known {
        e.push(Effect::Unknown(format!(
            "`git {sub}` is not a git command airlock knows"
        )));
    }
    e
}

/// Reads the global options before the subcommand into `e` and returns where the subcommand
/// stands, or `None` (with the reason in `e`) when an option is computed at run time.
fn global_options(args: &[Word], e: &mut Vec<Effect>) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let Some(w) = args[i].as_lit() else {
            e.push(Effect::Opaque("a `git` option computed at run time".into()));
            return None;
        };
        if !w.starts_with('-') {
            break;
        }
        let (name, inline_value) = match w.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (w, None),
        };
        match name {
            "-c" | "--config-env" => e.push(Effect::ConfigInjection(
                "`git -c` sets configuration that can run programs (pager, hooks, ssh)".into(),
            )),
            "--exec-path" if inline_value.is_some() || GLOBAL_WITH_VALUE.contains(&w) => e.push(
                Effect::ConfigInjection("`git --exec-path` points git at other programs".into()),
            ),
            "--git-dir" | "--work-tree" => {
                let value = inline_value
                    .map(Word::lit)
                    .or_else(|| args.get(i + 1).cloned());
                if let Some(v) = value {
                    e.push(Effect::Read(v));
                }
                e.push(Effect::ConfigInjection(format!(
                    "`git {name}` points git at another repository"
                )));
            }
            "-C" => {}
            _ => {}
        }
        i += if GLOBAL_WITH_VALUE.contains(&w) { 2 } else { 1 };
    }
    Some(i)
}

/// A git subcommand and the words after it.
pub(super) struct Subcommand<'a> {
    name: &'a str,
    rest: &'a [Word],
    /// The operands before `--` that are not options.
    positional: Vec<&'a Word>,
}

impl<'a> Subcommand<'a> {
    fn new(name: &'a str, rest: &'a [Word]) -> Self {
        let positional = rest
            .iter()
            .take_while(|w| w.as_lit() != Some("--"))
            .filter(|w| !w.as_lit().is_some_and(|s| s.starts_with('-')))
            .collect();
        Subcommand {
            name,
            rest,
            positional,
        }
    }

    /// Whether one of the options is given before `--`.
    fn has(&self, names: &[&str]) -> bool {
        self.rest
            .iter()
            .filter_map(Word::as_lit)
            .take_while(|a| *a != "--")
            .any(|a| names.iter().any(|n| given(a, n)))
    }

    /// The files `--output` names.
    fn output_files(&self) -> Vec<Effect> {
        let mut out = Vec::new();
        let mut words = self.rest.iter();
        while let Some(w) = words.next() {
            let Some(a) = w.as_lit() else { continue };
            if given(a, "--output") {
                match a.split_once('=') {
                    Some((_, f)) => out.push(Effect::Write(Word::lit(f))),
                    None => out.extend(words.next().cloned().map(Effect::Write)),
                }
            }
        }
        out
    }

    /// Words that may name files: every operand (revisions resolve harmlessly inside the
    /// workspace), the path half of `REV:PATH`, and the values of options that read files.
    fn operand_reads(&self) -> Vec<Effect> {
        let mut out = Vec::new();
        let mut words = self.rest.iter();
        while let Some(w) = words.next() {
            match w.as_lit() {
                // Values that are counts, patterns, dates or formats, not files.
                Some(a) if VALUE_OPTIONS.contains(&a) => {
                    words.next();
                }
                Some(a)
                    if given(a, "--contents") || given(a, "--ignore-revs-file") || a == "-O" =>
                {
                    match a.split_once('=') {
                        Some((_, f)) => out.push(Effect::Read(Word::lit(f))),
                        None => out.extend(words.next().cloned().map(Effect::Read)),
                    }
                }
                Some(a) if a.starts_with("-O") && a.len() > 2 => {
                    out.push(Effect::Read(Word::lit(&a[2..])))
                }
                Some(a) if a.starts_with('-') => {}
                Some(a) => {
                    let path = match a.split_once(':') {
                        Some((_, p)) if !p.is_empty() => p,
                        _ => a,
                    };
                    out.push(Effect::Read(Word::lit(path)));
                }
                // `$(git merge-base HEAD main)`: a revision, computed by git that only reads.
                None if prints_only_revisions(w.display()) => {}
                None => out.push(Effect::Read(w.clone())),
            }
        }
        out
    }
}
