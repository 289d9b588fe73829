//! The wrappers that run commands airlock must dig out: a shell with `-c` (the string is the
//! command), `xargs` (the command gets words from its input), and `find -exec` (the command
//! runs once per file found).

use super::{Inner, SHELLS, Unwrapped, lit, unwrap};
use crate::approval::shell::words::Word;

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
    let (roots, _) = crate::approval::programs::find_roots(&out.argv[1..]);
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
