//! Programs that filter text by name: the search and stream tools (their flags read in
//! `text.rs`), and `sort`, `uniq`, `xxd` and `tee`, whose output can go to a file they are given.

use super::sed::sed;
use super::text::{awk, fd, find, jq, search};
use super::{Args, Effect, lit, readers, reads};
use crate::facts::shell::Word;

/// Text filters: which files they read and which they write, or `None` for another program.
pub(super) fn text_filters(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "grep" | "egrep" | "fgrep" | "zgrep" | "rg" | "ag" | "ack" => search(name, args),
        "find" => find(args),
        "fd" | "fdfind" => fd(args),
        "sed" => sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(name, args),
        "jq" => jq(args),
        "sort" => {
            // Keys, separators and sizes are values, not files (`sort -k 2 -t , data.csv`).
            let mut e = reads(readers::operands(
                args,
                &['k', 't', 'S', 'T', 'o'],
                &[
                    "key",
                    "field-separator",
                    "buffer-size",
                    "temporary-directory",
                    "parallel",
                    "batch-size",
                    "sort",
                    "output",
                    "files0-from",
                    "random-source",
                    "compress-program",
                ],
            ));
            e.extend(reads(args.values_of(&[], &["random-source"])));
            // Temporary files go into `-T DIR`.
            e.extend(
                args.values_of(&["-T"], &["temporary-directory"])
                    .into_iter()
                    .map(Effect::Write),
            );
            if args.has(&['o'], &["output"]) {
                e.extend(
                    args.values_of(&["-o"], &["output"])
                        .into_iter()
                        .map(Effect::Write),
                );
            }
            e.extend(
                args.values_of(&[], &["files0-from"])
                    .into_iter()
                    .flat_map(|list| {
                        let listed = Word::Dynamic {
                            text: format!("<file names listed in {}>", list.display()),
                            vars: Vec::new(),
                        };
                        [Effect::Read(list), Effect::Read(listed)]
                    })
                    .filter(|e| !matches!(e, Effect::Read(w) if lit(w) == Some("-"))),
            );
            if args.has(&[], &["compress-program"]) {
                e.push(Effect::RunsCode(
                    "`sort --compress-program` runs a program".into(),
                ));
            }
            e
        }
        "uniq" | "xxd" => {
            let pos = args.positional();
            let mut e: Vec<Effect> = pos
                .iter()
                .take(1)
                .map(|w| Effect::Read((*w).clone()))
                .collect();
            if let Some(out) = pos.get(1) {
                e.push(Effect::Write((*out).clone()));
            }
            e
        }
        "tee" => args
            .positional()
            .into_iter()
            .cloned()
            .map(Effect::Write)
            .collect(),
        _ => return None,
    })
}
