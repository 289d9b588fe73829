//! The links a command leaves behind for the commands after it: symbolic and hard links (`ln`,
//! `link`, `cp -s`, `cp -l`), copies that keep symbolic links (`cp -a`, `cp -P`, `cp -r`), and
//! entries moved to a new name (`mv`). Only the words are read here; where the links land and
//! what a later path through them means is `policy::links` and `paths::planned`.

use super::Args;
use crate::facts::shell::{Origin, SimpleCommand, Word};

/// Where a new entry goes, relative to the word that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The word is the new entry itself (`ln -T`, `mv -T`).
    Exactly,
    /// The word is a directory; the entry inside it is named after the source (`-t DIR`, or a
    /// last operand after two or more sources).
    Inside,
    /// The entry itself, or inside it when it is a directory: airlock takes both.
    EitherOrInside,
}

/// What the new entry will be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A symbolic link whose content is this word.
    Symlink(Word),
    /// The same file as the one this word names (a hard link, or `ln -sr` / `cp -rs`, which
    /// point at it whatever the link's own directory).
    Same(Word),
    /// What this word named, moved here.
    Moved(Word),
    /// A copy of what this word names that keeps its symbolic links.
    CopiedLinks(Word),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLink {
    pub at: Word,
    pub placement: Placement,
    pub source: Source,
}

/// The links `cmd` creates. `Err` says why their names cannot be known before it runs.
pub fn links_made(cmd: &SimpleCommand) -> Result<Vec<NewLink>, String> {
    let Some(name) = cmd.program() else {
        return Ok(Vec::new());
    };
    if cmd.is_script_function {
        return Ok(Vec::new());
    }
    let name = name
        .strip_prefix('g')
        .filter(|n| matches!(*n, "ln" | "cp" | "mv"))
        .unwrap_or(name);
    let args = Args {
        words: cmd.argv.get(1..).unwrap_or_default(),
    };
    let source: fn(Word) -> Source = match name {
        "ln" if args.has(&['s'], &["symbolic"]) && !args.has(&['r'], &["relative"]) => {
            Source::Symlink
        }
        "ln" | "link" => Source::Same,
        "cp" => {
            let recursive = args.has(&['r', 'R', 'a'], &["recursive", "archive"]);
            if args.has(&['s'], &["symbolic-link"]) {
                if recursive {
                    Source::Same
                } else {
                    Source::Symlink
                }
            } else if args.has(&['l'], &["link"]) {
                Source::Same
            } else if args.has(&['a', 'd', 'P'], &["archive", "no-dereference"])
                || (recursive && !args.has(&['L'], &["dereference"]))
            {
                Source::CopiedLinks
            } else {
                return Ok(Vec::new());
            }
        }
        "mv" => Source::Moved,
        _ => return Ok(Vec::new()),
    };
    if matches!(cmd.origin, Origin::Xargs | Origin::FindExec) {
        return Err(format!(
            "`{name}` run by xargs or find -exec creates links under names only known when it runs"
        ));
    }
    if args.has(&['b', 'S'], &["backup", "suffix"]) {
        return Err(format!(
            "`{name}` keeps a backup of what it replaces, under a name airlock does not follow"
        ));
    }
    if name == "cp" && args.has(&[], &["parents"]) {
        return Err("`cp --parents` creates links under names airlock does not follow".into());
    }
    let target_dir = args.values_of(&["-t"], &["target-directory"]);
    let mut operands: Vec<Word> = args.positional().into_iter().cloned().collect();
    operands.retain(|w| !target_dir.contains(w));
    let link = |at: &Word, placement, from: &Word| NewLink {
        at: at.clone(),
        placement,
        source: source(from.clone()),
    };
    let links = if let Some(dir) = target_dir.first() {
        operands
            .iter()
            .map(|o| link(dir, Placement::Inside, o))
            .collect()
    } else {
        match operands.as_slice() {
            [only] if name == "ln" => vec![link(&Word::lit("."), Placement::Inside, only)],
            [from, at] => {
                let placement = if args.has(&['T'], &["no-target-directory"]) {
                    Placement::Exactly
                } else {
                    Placement::EitherOrInside
                };
                vec![link(at, placement, from)]
            }
            [sources @ .., dir] if sources.len() >= 2 => sources
                .iter()
                .map(|s| link(dir, Placement::Inside, s))
                .collect(),
            _ => Vec::new(),
        }
    };
    Ok(links)
}
