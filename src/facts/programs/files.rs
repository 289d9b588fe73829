//! Programs that create, copy, move, link, remove, archive and patch files: which words they read,
//! which they write and which they delete.

use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

pub(super) fn copy_like(name: &str, args: &Args) -> Vec<Effect> {
    let target = args.values_of(&["-t"], &["target-directory"]);
    let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
    pos.retain(|w| !target.contains(w));
    let mut e = Vec::new();
    let dest = if let Some(t) = target.into_iter().next() {
        Some(t)
    } else if name == "ln" && pos.len() == 1 {
        Some(Word::lit("."))
    } else {
        pos.pop()
    };
    // A hard link is a second name to write the same file through, judged by that name later:
    // making one counts as writing the file (`ln policy/rules.toml x && echo >> x`).
    let hard_link = match name {
        "ln" => !args.has(&['s'], &["symbolic"]),
        "link" => true,
        "cp" => args.has(&['l'], &["link"]),
        _ => false,
    };
    if hard_link {
        e.extend(pos.iter().cloned().map(Effect::Write));
    }
    if name == "ln" || name == "link" {
        // A link's target is not read now; reading through the link later is judged then.
    } else {
        e.extend(reads(pos));
    }
    if let Some(d) = dest {
        e.push(Effect::Write(d));
    }
    e
}

pub(super) fn tar(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let first = args.words.first().and_then(lit).unwrap_or("");
    // `tar cvf x.tar ...`: the first word may be a bundle of letters without a dash.
    let bundled = if !first.starts_with('-') { first } else { "" };
    let letters: String = std::iter::once(bundled)
        .chain(
            args.iter()
                .filter_map(lit)
                .filter(|s| s.starts_with('-') && !s.starts_with("--")),
        )
        .collect();
    let mode = |c: char, long: &[&str]| letters.contains(c) || args.has(&[], long);
    if args.has(
        &['I'],
        &[
            "use-compress-program",
            "to-command",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
        ],
    ) {
        e.push(Effect::RunsCode("`tar` is told to run a program".into()));
    }
    let files = args.values_of(&["-f"], &["file"]);
    let bundled_file = if bundled.contains('f') {
        args.words.get(1).cloned()
    } else {
        None
    };
    let archive: Vec<Word> = files.into_iter().chain(bundled_file).collect();
    let follows = mode('h', &["dereference"]);
    // Any writing mode wins over listing: `tar -c -V -t` creates (the `-t` is a volume label).
    let writes = mode('c', &["create"])
        || mode('r', &["append"])
        || mode('u', &["update"])
        || mode('A', &["catenate", "concatenate"])
        || args.has(&[], &["delete"]);
    let extracts = mode('x', &["extract", "get"]);
    for list in args.values_of(&["-T"], &["files-from"]) {
        e.push(Effect::Read(Word::Dynamic {
            text: format!("<file names listed in {}>", list.display()),
            vars: Vec::new(),
        }));
        if lit(&list) != Some("-") {
            e.push(Effect::Read(list));
        }
    }
    if writes {
        e.extend(
            archive
                .into_iter()
                .filter(|w| lit(w) != Some("-"))
                .map(Effect::Write),
        );
        let skip = usize::from(!bundled.is_empty()) + usize::from(bundled.contains('f'));
        let inputs = args
            .words
            .iter()
            .skip(skip)
            .filter(|w| !lit(w).is_some_and(|s| s.starts_with('-')))
            .cloned();
        if follows {
            e.extend(inputs.map(Effect::ReadTree));
        } else {
            e.extend(reads(inputs));
        }
    } else if extracts {
        e.extend(reads(archive));
        let dirs = args.values_of(&["-C"], &["directory"]);
        if dirs.is_empty() {
            e.push(Effect::Write(Word::lit(".")));
        } else {
            e.extend(dirs.into_iter().map(Effect::Write));
        }
    } else if mode('t', &["list"]) || mode('d', &["diff", "compare"]) {
        e.extend(reads(archive));
    } else {
        e.push(Effect::Unknown(
            "`tar` in a mode airlock does not recognise".into(),
        ));
    }
    e
}

/// Programs that create, copy, move or remove files in place, or `None` for another program.
pub(super) fn file_changes(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "touch" | "mkdir" | "truncate" | "mkfifo" | "mknod" => {
            let mut e: Vec<Effect> = args
                .positional()
                .into_iter()
                .cloned()
                .map(Effect::Write)
                .collect();
            e.extend(
                args.values_of(&["-r"], &["reference"])
                    .into_iter()
                    .map(Effect::Read),
            );
            e
        }
        "rm" | "rmdir" | "unlink" | "shred" | "srm" => {
            let mut e: Vec<Effect> = args
                .positional()
                .into_iter()
                .cloned()
                .map(Effect::Delete)
                .collect();
            if e.is_empty() {
                e.push(Effect::Delete(Word::Dynamic {
                    text: "<nothing named>".into(),
                    vars: vec![],
                }));
            }
            e
        }
        "cp" | "install" | "ln" | "link" => copy_like(name, args),
        "mv" => {
            let target = args.values_of(&["-t"], &["target-directory"]);
            let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
            let dest = if let Some(t) = target.into_iter().next() {
                Some(t)
            } else {
                pos.pop()
            };
            let mut e: Vec<Effect> = pos.into_iter().map(Effect::Delete).collect();
            e.extend(dest.map(Effect::Write));
            e
        }
        "dd" => {
            let mut e = Vec::new();
            for w in args.iter() {
                match lit(w) {
                    Some(s) if s.starts_with("if=") => e.push(Effect::Read(Word::lit(&s[3..]))),
                    Some(s) if s.starts_with("of=") => e.push(Effect::Write(Word::lit(&s[3..]))),
                    None => e.push(Effect::Opaque(
                        "`dd` with an operand computed at run time".into(),
                    )),
                    _ => {}
                }
            }
            e
        }
        _ => return None,
    })
}

/// Archivers, compressors, `split` and `patch`: what they unpack or pack where, or `None` for
/// another program.
pub(super) fn archives_and_patches(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "tar" | "bsdtar" => tar(args),
        "unzip" => {
            if args.has(&['l', 'v', 't', 'p', 'Z'], &[]) {
                reads(args.positional().into_iter().take(1).cloned())
            } else {
                let mut e = reads(args.positional().into_iter().take(1).cloned());
                let dir = args.values_of(&["-d"], &[]);
                if dir.is_empty() {
                    e.push(Effect::Write(Word::lit(".")));
                } else {
                    e.extend(dir.into_iter().map(Effect::Write));
                }
                e
            }
        }
        "zip" | "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd"
        | "lz4" | "compress" | "uncompress" => {
            if args.has(&['c', 'l', 't'], &["stdout", "to-stdout", "list", "test"]) && name != "zip"
            {
                reads(args.path_like())
            } else {
                args.positional()
                    .into_iter()
                    .flat_map(|w| [Effect::Write(w.clone()), Effect::Delete(w.clone())])
                    .collect()
            }
        }
        "zcat" | "bzcat" | "xzcat" | "zstdcat" | "zless" => reads(args.path_like()),
        "split" | "csplit" => vec![Effect::Write(Word::lit("."))],
        "patch" => {
            let mut e = reads(args.values_of(&["-i"], &["input"]));
            e.push(Effect::Write(Word::Dynamic {
                text: "<files named inside the patch>".into(),
                vars: vec![],
            }));
            e
        }
        _ => return None,
    })
}
