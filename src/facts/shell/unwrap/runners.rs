//! The wrappers that run commands airlock must dig out: a shell with `-c` (the string is the
//! command), `xargs` (the command gets words from its input), and `find -exec` (the command
//! runs once per file found). Shells of another language (csh, tcsh, fish) are read as bash
//! too, their redirections that bash spells otherwise translated, and always ask: bash's reading
//! of their strings is close, not exact.

use super::getopt::{self, Spec, Takes};
use super::{Inner, SHELLS, Unwrapped, lit, unwrap};
use crate::facts::shell::words::Word;

/// `bash -c STRING`: the string is the command. Option clusters such as `-lc`, `-ec`, `-xc` count.
pub(super) fn shell_c(out: &mut Unwrapped) {
    let mut i = 1;
    let mut has_c = false;
    if out
        .argv
        .first()
        .and_then(lit)
        .map(|n| n.ends_with("busybox"))
        == Some(true)
    {
        // `busybox sh -c ...`
        match out.argv.get(1).and_then(lit) {
            Some(s) if SHELLS.contains(&s) || s == "sh" => i = 2,
            _ => return,
        }
    }
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else { break };
        if w == "--" {
            i += 1;
            break;
        }
        if matches!(w, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 {
            if !w.starts_with("--") && w[1..].contains('c') {
                has_c = true;
            }
            i += 1;
            continue;
        }
        break;
    }
    if !has_c {
        return;
    }
    match out.argv.get(i) {
        Some(Word::Lit { value, .. }) => {
            out.inner.push(Inner::Script {
                text: value.clone(),
                positional: out.argv[i + 1..].to_vec(),
            });
            out.replaced = true;
        }
        Some(Word::Dynamic { .. }) => out
            .problems
            .push("the shell runs a command string built at run time".into()),
        None => out.problems.push("`-c` without a command string".into()),
    }
}

/// `csh -c STRING` / `tcsh -c STRING`: options are letters only (`-fc`), the string follows
/// them. Its positional parameters are not bash's, so they count as unknown.
pub(super) fn csh_c(name: &str, out: &mut Unwrapped) {
    let mut i = 1;
    let mut has_c = false;
    while let Some(w) = out.argv.get(i).and_then(lit) {
        if w == "-" || w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') {
            break;
        }
        has_c |= w[1..].contains('c');
        i += 1;
    }
    if !has_c {
        return;
    }
    let positional = out.argv[(i + 1).min(out.argv.len())..]
        .iter()
        .map(|w| Word::Dynamic {
            text: w.display().to_string(),
            vars: Vec::new(),
        })
        .collect();
    match out.argv.get(i).cloned() {
        Some(Word::Lit { value, .. }) => {
            foreign_script(name, out, csh_redirects(&value), positional);
            out.replaced = true;
        }
        Some(Word::Dynamic { .. }) => out
            .problems
            .push(format!("`{name}` runs a command string built at run time")),
        None => out.problems.push("`-c` without a command string".into()),
    }
}

/// csh's clobbering redirections in bash's spelling: `>!` is `>|`, `>>!` is `>>`, `>&` and
/// `>>&` send both streams.
fn csh_redirects(text: &str) -> String {
    text.replace(">>&!", "&>>")
        .replace(">>&", "&>>")
        .replace(">&!", "&>")
        .replace(">>!", ">>")
        .replace(">!", ">|")
}

const FISH: Spec = Spec {
    short: &[
        ('c', Takes::Value),
        ('C', Takes::Value),
        ('d', Takes::Value),
        ('o', Takes::Value),
        ('f', Takes::Value),
        ('p', Takes::Value),
        ('D', Takes::Value),
        ('i', Takes::Nothing),
        ('l', Takes::Nothing),
        ('n', Takes::Nothing),
        ('N', Takes::Nothing),
        ('P', Takes::Nothing),
        ('v', Takes::Nothing),
        ('h', Takes::Nothing),
    ],
    long: &[
        ("command", Takes::Value),
        ("init-command", Takes::Value),
        ("debug", Takes::Value),
        ("debug-output", Takes::Value),
        ("features", Takes::Value),
        ("profile", Takes::Value),
        ("profile-startup", Takes::Value),
        ("debug-stack-frames", Takes::Value),
        ("interactive", Takes::Nothing),
        ("login", Takes::Nothing),
        ("no-execute", Takes::Nothing),
        ("no-config", Takes::Nothing),
        ("private", Takes::Nothing),
        ("version", Takes::Nothing),
        ("help", Takes::Nothing),
        ("print-rusage-self", Takes::Nothing),
        ("print-debug-categories", Takes::Nothing),
    ],
    permute: false,
};

/// `fish -c STRING` (and `-C STRING`, run first, even when fish then reads a script or its
/// input): each string is judged; `-o FILE` and `--profile FILE` are files it writes. Only with
/// `-c` is fish replaced by its strings; otherwise it stays, as the program `fish`.
pub(super) fn fish_c(out: &mut Unwrapped) {
    let read = getopt::read(&out.argv, 1, &FISH);
    if let Some(problem) = read.unknown_problem("fish") {
        out.problems.push(problem);
    }
    let strings = read.values(&["c", "command", "C", "init-command"]);
    if strings.is_empty() {
        return;
    }
    out.writes
        .extend(read.values(&["o", "debug-output", "p", "profile", "profile-startup"]));
    for string in strings {
        match string {
            Word::Lit { value, .. } => {
                let text = value
                    .replace(">?", ">")
                    .replace(" ^^", " 2>>")
                    .replace(" ^", " 2>");
                foreign_script("fish", out, text, Vec::new());
            }
            Word::Dynamic { .. } => out
                .problems
                .push("`fish` runs a command string built at run time".into()),
        }
    }
    out.replaced = read.has(&["c", "command"]);
}

/// A string in another shell's language, read as bash; it asks, since bash's reading of it is
/// close, not exact.
fn foreign_script(name: &str, out: &mut Unwrapped, text: String, positional: Vec<Word>) {
    out.inner.push(Inner::Script { text, positional });
    let problem =
        format!("`{name}` runs its string in its own language, which airlock reads as bash");
    if !out.problems.contains(&problem) {
        out.problems.push(problem);
    }
}

/// `xargs [OPTIONS] CMD ARGS`: the command, with its input as words it cannot see, unwrapped
/// again (`xargs sudo rm`, `xargs sh -c '...'`).
pub(super) fn xargs(mut out: Unwrapped) -> Unwrapped {
    let with_value = [
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--max-chars",
        "--replace",
        "--eof",
        "--process-slot-var",
    ];
    let mut i = 1;
    let mut replace: Option<String> = None;
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else { break };
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        if w == "-a" || w.starts_with("--arg-file") {
            match w.split_once('=') {
                Some((_, f)) => out.reads.push(Word::lit(f)),
                None => out.reads.extend(out.argv.get(i + 1).cloned()),
            }
        } else if let Some(f) = w.strip_prefix("-a") {
            out.reads.push(Word::lit(f));
        }
        if w == "-I" || w == "--replace" {
            replace = out.argv.get(i + 1).and_then(lit).map(str::to_string);
        } else if let Some(r) = w.strip_prefix("--replace=") {
            replace = Some(r.to_string());
        } else if w == "-i" {
            replace = Some("{}".into());
        } else if let Some(r) = w.strip_prefix("-I") {
            replace = Some(r.to_string());
        } else if let Some(r) = w.strip_prefix("-i") {
            replace = Some(r.to_string());
        }
        i += if with_value.contains(&w) { 2 } else { 1 };
    }
    out.wrappers.push("xargs".into());
    out.via_xargs = true;
    let unknown = || Word::Dynamic {
        text: "<input of xargs>".into(),
        vars: Vec::new(),
    };
    if i >= out.argv.len() {
        // xargs with no command runs `echo`.
        out.argv = vec![Word::lit("echo"), unknown()];
        return out;
    }
    let mut inner: Vec<Word> = out.argv.drain(i..).collect();
    match replace {
        Some(r) if !r.is_empty() => {
            for w in inner.iter_mut().skip(1) {
                if w.as_lit().is_some_and(|s| s.contains(r.as_str())) {
                    *w = unknown();
                }
            }
        }
        _ => inner.push(unknown()),
    }
    out.argv = inner;
    // The inner command may itself be wrapped (`xargs sudo rm`, `xargs sh -c '...'`).
    let nested = unwrap(std::mem::take(&mut out.argv));
    out.wrappers.extend(nested.wrappers);
    out.env.extend(nested.env);
    out.argv = nested.argv;
    out.inner.extend(nested.inner);
    out.replaced = nested.replaced;
    out.problems.extend(nested.problems);
    // What the inner wrappers open and where they run the command (`xargs time -o FILE`,
    // `xargs env -C DIR`) is judged as if they stood outside xargs.
    out.writes.extend(nested.writes);
    out.reads.extend(nested.reads);
    super::env::change_dir(&mut out, nested.chdir);
    out
}

/// Finds `-exec ... ;` / `-exec ... +` (and `-execdir`, `-ok`, `-okdir`), removes them from the
/// `find` argv and returns what they run, with `{}` replaced by each starting point of the search.
pub(super) fn find_exec(out: &mut Unwrapped) {
    let (roots, _) = crate::facts::programs::find_roots(&out.argv[1..]);
    let mut kept = Vec::new();
    let mut i = 0;
    while i < out.argv.len() {
        let is_exec = matches!(
            out.argv[i].as_lit(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        );
        if !is_exec {
            kept.push(out.argv[i].clone());
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut inner = Vec::new();
        while j < out.argv.len() && !matches!(out.argv[j].as_lit(), Some(";" | "+")) {
            if out.argv[j].as_lit() == Some("{}") {
                inner.extend(roots.iter().cloned());
            } else {
                inner.push(out.argv[j].clone());
            }
            j += 1;
        }
        if !inner.is_empty() {
            out.inner.push(Inner::FindExec(inner));
        }
        i = j + 1;
    }
    out.argv = kept;
}
