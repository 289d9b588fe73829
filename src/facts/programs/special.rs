//! Flags that turn an otherwise read-only program into something else: following symlinks through
//! a tree, reading file names from a file or stdin, writing an output file, changing the system,
//! or running a callback. Checked before the plain tables; the programs that look at the running
//! system (`ps`, `top`, `lsof`, `man`, ...) are read in `inspection`.

use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

fn listed_in(what: &str) -> Word {
    Word::Dynamic {
        text: format!("<file names listed in {what}>"),
        vars: Vec::new(),
    }
}

/// Reads of file names that come from a file (or `-` for stdin), as some programs take them.
fn file_lists(args: &Args, short: &[&str], long: &[&str]) -> Vec<Effect> {
    let mut e = Vec::new();
    for list in args.values_of(short, long) {
        let shown = list.display().to_string();
        if shown != "-" {
            e.push(Effect::Read(list));
        }
        e.push(Effect::Read(listed_in(&shown)));
    }
    e
}

/// Effects for programs whose special flags matter, or `None` to use the ordinary tables.
pub(super) fn special(name: &str, args: &Args) -> Option<Vec<Effect>> {
    readers_with_flags(name, args)
        .or_else(|| shell_and_system(name, args))
        .or_else(|| changes_files(name, args))
        .or_else(|| interactive(name, args))
        .or_else(|| super::inspection::inspection(name, args))
}

/// Readers whose flags recurse, follow links, read lists of file names or write an output
/// file.
fn readers_with_flags(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "diff" => {
            let mut e = Vec::new();
            // GNU diff follows symbolic links while it recurses.
            let recursive = args.has(&['r'], &["recursive"]) && !args.has(&[], &["no-dereference"]);
            for w in args.path_like() {
                if lit(&w) == Some("-") {
                    continue;
                }
                e.push(if recursive {
                    Effect::ReadTree(w)
                } else {
                    Effect::Read(w)
                });
            }
            e.extend(reads(
                args.values_of(&["-X"], &["exclude-from", "from-file", "to-file"]),
            ));
            e
        }
        "du" | "tree" | "ls" => {
            let follows = match name {
                "du" => args.has(&['L'], &["dereference"]),
                "tree" => args.has(&['l'], &[]),
                _ => args.has(&['L'], &["dereference"]) && args.has(&['R'], &["recursive"]),
            };
            let mut e: Vec<Effect> = args
                .path_like()
                .into_iter()
                .map(|w| {
                    if follows {
                        Effect::ReadTree(w)
                    } else {
                        // Names and sizes, never contents.
                        Effect::Inspect(w)
                    }
                })
                .collect();
            if name == "tree" {
                e.extend(args.values_of(&["-o"], &[]).into_iter().map(Effect::Write));
                e.extend(file_lists(args, &[], &["fromfile"]));
            }
            if name == "du" {
                e.extend(file_lists(args, &[], &["files0-from"]));
            }
            if e.is_empty() {
                e.push(Effect::Read(Word::lit(".")));
            }
            e
        }
        "wc" => {
            let mut e = reads(args.path_like());
            e.extend(file_lists(args, &[], &["files0-from"]));
            e
        }
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum"
        | "shasum" | "cksum" => {
            let mut e = reads(args.path_like());
            if args.has(&['c'], &["check"]) {
                e.push(Effect::Read(listed_in("the checksum file")));
            }
            e
        }
        "iconv" => {
            let mut e = reads(args.positional().into_iter().cloned());
            e.extend(
                args.values_of(&["-o"], &["output"])
                    .into_iter()
                    .map(Effect::Write),
            );
            e
        }
        "file" => {
            let mut e = reads(args.path_like());
            if args.has(&['C'], &["compile"]) {
                e.push(Effect::Write(Word::lit(".")));
            }
            e.extend(file_lists(args, &["-f"], &["files-from"]));
            e
        }
        _ => return None,
    })
}

/// Builtins and system tools that can print secrets, run a callback or change the machine.
fn shell_and_system(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "mapfile" | "readarray" => {
            if args.has(&['C'], &[]) {
                vec![Effect::Opaque(format!(
                    "`{name} -C` runs a callback string for every line"
                ))]
            } else {
                vec![]
            }
        }
        "set" => set_options(args),
        "date" => {
            let sets = args.has(&['s'], &["set"])
                || args
                    .positional()
                    .iter()
                    .any(|w| !lit(w).is_some_and(|s| s.starts_with('+')));
            if sets {
                vec![Effect::SystemChange(
                    "`date` with a date operand sets the system clock".into(),
                )]
            } else {
                reads(args.values_of(&["-f", "-r"], &["file", "reference"]))
            }
        }
        "hostname" => {
            if !args.positional().is_empty() || args.has(&['F', 'b'], &["file", "boot"]) {
                vec![Effect::SystemChange(
                    "`hostname` with a name or file renames the machine".into(),
                )]
            } else {
                vec![]
            }
        }
        _ => return None,
    })
}

/// Programs that create files or change their modes and owners.
fn changes_files(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "mktemp" => {
            let mut dirs = args.values_of(&["-p"], &["tmpdir"]);
            dirs.extend(
                args.positional()
                    .into_iter()
                    .filter(|w| lit(w).is_some_and(|s| s.contains('/')))
                    .cloned(),
            );
            if dirs.is_empty() {
                dirs.push(Word::lit("/tmp"));
            }
            dirs.into_iter().map(Effect::Write).collect()
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            // Modes may look like options (`-w,o+rw`); every word that is not a known option is
            // treated as a file, which at worst judges a mode as a path inside the workspace.
            let known = [
                "-R",
                "-c",
                "-f",
                "-v",
                "-h",
                "-H",
                "-L",
                "-P",
                "--recursive",
                "--changes",
                "--silent",
                "--quiet",
                "--verbose",
                "--no-dereference",
                "--dereference",
                "--preserve-root",
                "--no-preserve-root",
                "--",
            ];
            let mut e = Vec::new();
            let mut words = args.iter().peekable();
            while let Some(w) = words.next() {
                match lit(w) {
                    Some(s) if known.contains(&s) => {}
                    Some(s) if s.starts_with("--reference") || s.starts_with("--from") => {
                        match s.split_once('=') {
                            Some((_, v)) => e.push(Effect::Read(Word::lit(v))),
                            None => {
                                if let Some(v) = words.next() {
                                    e.push(Effect::Read(v.clone()));
                                }
                            }
                        }
                    }
                    _ => e.push(Effect::Write(w.clone())),
                }
            }
            e
        }
        _ => return None,
    })
}

/// Pagers and editors: interactive, and able to run commands.
fn interactive(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "less" | "more" | "most" | "view" => {
            let mut e = vec![Effect::Unknown(format!(
                "`{name}` is interactive and can run commands"
            ))];
            e.extend(reads(args.path_like()));
            e
        }
        "vi" | "vim" | "nvim" | "nano" | "emacs" | "ed" | "ex" | "micro" | "hx" => {
            let mut e = vec![Effect::Unknown(format!(
                "`{name}` is an editor and can run commands"
            ))];
            for w in args.path_like() {
                e.push(Effect::Read(w.clone()));
                e.push(Effect::Write(w));
            }
            e
        }
        _ => return None,
    })
}

/// `set` options that only make the shell stricter or louder; anything else changes how airlock's
/// reading of the line relates to what bash does (`-a` exports every assignment, `-k` makes any
/// `NAME=value` word an environment setting, `-P` makes `cd` physical, ...).
fn set_options(args: &Args) -> Vec<Effect> {
    if args.words.is_empty() {
        return vec![Effect::EnvironmentDump(
            "`set` prints every variable".into(),
        )];
    }
    const SAFE_LETTERS: &str = "euxvETCfnB";
    const SAFE_NAMES: &[&str] = &[
        "errexit",
        "nounset",
        "xtrace",
        "verbose",
        "errtrace",
        "functrace",
        "noclobber",
        "noglob",
        "noexec",
        "pipefail",
        "braceexpand",
    ];
    let mut words = args.iter();
    while let Some(w) = words.next() {
        let Some(s) = lit(w) else {
            return vec![Effect::Opaque(
                "`set` with an option computed at run time".into(),
            )];
        };
        if s == "--" || s == "-" {
            break; // the rest are positional parameters
        }
        if s == "-o" || s == "+o" {
            match words.next().and_then(lit) {
                Some(name) if SAFE_NAMES.contains(&name) => continue,
                None if s == "+o" || s == "-o" => {
                    return vec![Effect::EnvironmentDump(
                        "`set -o` prints the shell options".into(),
                    )];
                }
                other => {
                    return vec![Effect::ShellBehaviour(format!(
                        "`set {s} {}` changes how the shell reads and runs what follows",
                        other.unwrap_or("?")
                    ))];
                }
            }
        }
        if let Some(letters) = s.strip_prefix('-').or_else(|| s.strip_prefix('+')) {
            if !letters.chars().all(|c| SAFE_LETTERS.contains(c)) {
                return vec![Effect::ShellBehaviour(format!(
                    "`set {s}` changes how the shell reads and runs what follows"
                ))];
            }
        } else {
            break; // positional parameters
        }
    }
    vec![]
}
