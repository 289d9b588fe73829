//! `env [OPTIONS] [NAME=VALUE...] CMD`: the settings it gives the command, the directory it runs
//! it in (`-C`), and the `-S` string it splits into a command line airlock does not re-parse.

use super::{Unwrapped, cluster_value, is_name, lit};
use crate::approval::shell::words::Word;

/// Reads `env`'s options into `out`; returns where its settings start.
pub(super) fn options(out: &mut Unwrapped) -> usize {
    let mut i = 1;
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else { break };
        if w == "--" {
            i += 1;
            break;
        }
        if matches!(w, "-u" | "--unset") {
            i += 2;
        } else if matches!(w, "-C" | "--chdir") {
            let dir = out.argv.get(i + 1).cloned();
            change_dir(out, dir);
            i += 2;
        } else if let Some(dir) = w.strip_prefix("--chdir=") {
            change_dir(out, Some(Word::lit(dir)));
            i += 1;
        } else if matches!(w, "-S" | "--split-string")
            || w.starts_with("--split-string=")
            || (w.starts_with("-S") && w.len() > 2)
        {
            out.problems.push(
                "`env -S` splits a string into a command line airlock does not re-parse".into(),
            );
            i += 1;
        } else if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 {
            // A cluster such as `-iC/dir` or `-iu NAME`: the first of C, u, S takes
            // the rest of the cluster, or the next word, as its value.
            match cluster_value(&out.argv, &mut i, &w[1..], |c| matches!(c, 'C' | 'u' | 'S')) {
                Some(('C', value)) => change_dir(out, value),
                Some(('S', _)) => out.problems.push(
                    "`env -S` splits a string into a command line airlock does not re-parse".into(),
                ),
                _ => {}
            }
            i += 1;
        } else if w.starts_with('-') && w != "-" {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// Reads the `NAME=VALUE` settings from `i` into `out`; returns where the command starts.
pub(super) fn settings(out: &mut Unwrapped, mut i: usize) -> usize {
    while i < out.argv.len() {
        match lit(&out.argv[i]).and_then(|w| w.split_once('=')) {
            Some((k, v)) if is_name(k) => {
                let value = match &out.argv[i] {
                    Word::Lit { glob, quoted, .. } => Word::Lit {
                        value: v.to_string(),
                        glob: *glob,
                        quoted: *quoted,
                    },
                    d => d.clone(),
                };
                out.env.push((k.to_string(), value));
                i += 1;
            }
            _ => break,
        }
    }
    i
}

/// Records a directory change (`env -C DIR`). After an earlier one, a relative `DIR` is taken
/// from there, as the second `env` does (`env -C /etc env -C . rm passwd` runs in `/etc`); when
/// either is not a plain literal, where the command runs is unknown. A `-C` without a value
/// keeps the earlier directory.
pub(super) fn change_dir(out: &mut Unwrapped, dir: Option<Word>) {
    let Some(dir) = dir else {
        return;
    };
    let absolute = dir
        .as_lit()
        .is_some_and(|d| d.starts_with('/') || d.starts_with('~'));
    out.chdir = match out.chdir.take() {
        None => Some(dir),
        Some(_) if absolute => Some(dir),
        Some(Word::Lit {
            value: earlier,
            glob: false,
            ..
        }) if matches!(dir, Word::Lit { glob: false, .. }) => {
            Some(Word::lit(&format!("{earlier}/{}", dir.display())))
        }
        Some(earlier) => Some(Word::Dynamic {
            text: format!("{}/{}", earlier.display(), dir.display()),
            vars: Vec::new(),
        }),
    };
}
