//! `git config`: reading a setting (which may be a credential), listing all of them (which may
//! print tokens), or changing one in this repository, a named file, or for the whole user.

use super::given;
use crate::facts::programs::Effect;
use crate::facts::shell::Word;

pub(super) fn config(rest: &[Word], e: &mut Vec<Effect>) {
    let words: Vec<&str> = rest.iter().filter_map(Word::as_lit).collect();
    if words.len() != rest.len() {
        e.push(Effect::Opaque(
            "`git config` with words computed at run time".into(),
        ));
        return;
    }
    let flag = |names: &[&str]| words.iter().any(|w| names.iter().any(|n| given(w, n)));
    // Option values are not keys: `--file F`, `--blob B`, `--type T`, `--default D`.
    let mut positional: Vec<&str> = Vec::new();
    let mut file: Option<&str> = None;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if given(w, "--file") || w == "-f" {
            file = match w.split_once('=') {
                Some((_, f)) => Some(f),
                None => {
                    i += 1;
                    words.get(i).copied()
                }
            };
        } else if ["--blob", "--type", "--default", "--comment"]
            .iter()
            .any(|o| given(w, o))
            && !w.contains('=')
        {
            i += 1;
        } else if !w.starts_with('-') {
            positional.push(w);
        }
        i += 1;
    }
    let global = flag(&["--global", "--system"]);
    let listing = flag(&[
        "--list",
        "--get-regexp",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-l",
    ]) || positional.first() == Some(&"list");
    let reading = listing
        || flag(&["--get", "--get-all", "--get-urlmatch"])
        || positional.first() == Some(&"get")
        || (positional.len() == 1
            && !flag(&[
                "--unset",
                "--unset-all",
                "--remove-section",
                "--rename-section",
                "--add",
                "--replace-all",
                "--edit",
                "-e",
            ]));
    if reading {
        let secret = positional.iter().any(|p| {
            let p = p.to_ascii_lowercase();
            p.contains("credential")
                || p.contains("token")
                || p.contains("password")
                || p.contains("extraheader")
        });
        if secret {
            e.push(Effect::CredentialAccess(
                "`git config` reads a credential setting".into(),
            ));
        } else if listing {
            e.push(Effect::EnvironmentDump(
                "`git config --list` prints every setting, which may include tokens in remote URLs or headers".into(),
            ));
        }
        if let Some(f) = file {
            e.push(Effect::Read(Word::lit(f)));
        }
        return;
    }
    if flag(&["--edit", "-e"]) {
        e.push(Effect::RunsCode(
            "`git config --edit` opens an editor".into(),
        ));
    }
    match (global, file) {
        (_, Some(f)) => e.push(Effect::Write(Word::lit(f))),
        (true, None) => e.push(Effect::SystemChange(
            "`git config --global` changes git for every repository of this user".into(),
        )),
        (false, None) => e.push(Effect::Write(Word::lit(".git/config"))),
    }
}
