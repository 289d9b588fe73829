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
    let Some(linking) = Linking::of(cmd) else {
        return Ok(Vec::new());
    };
    let name = linking.name;
    let args = &linking.args;
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
    Ok(linking.links())
}

/// The links `ln` or `link` in `cmd` makes point at, placed as well as its words tell: also where
/// [`links_made`] cannot say what the links will be named (under xargs or `find -exec`, which add
/// operands of their own, every operand may be what a link points at). A link's target is never
/// read when it is made, so these are judged apart from the command's effects: a link to a key
/// leaves the key one `cat` away.
pub fn link_targets(cmd: &SimpleCommand) -> Vec<NewLink> {
    let Some(linking) = Linking::of(cmd) else {
        return Vec::new();
    };
    if !matches!(linking.name, "ln" | "link") {
        return Vec::new();
    }
    if matches!(cmd.origin, Origin::Xargs | Origin::FindExec) {
        return linking
            .operands()
            .into_iter()
            .map(|from| NewLink {
                at: Word::lit("."),
                placement: Placement::Inside,
                source: (linking.source)(from),
            })
            .collect();
    }
    linking.links()
}

/// A command that makes links, read: which program, what its links are, its arguments.
struct Linking<'a> {
    name: &'a str,
    source: fn(Word) -> Source,
    args: Args<'a>,
}

impl<'a> Linking<'a> {
    fn of(cmd: &'a SimpleCommand) -> Option<Linking<'a>> {
        let name = cmd.program()?;
        if cmd.is_script_function {
            return None;
        }
        // `/bin/ln` is `ln`, and so is GNU's `gln`.
        let name = name.rsplit('/').next().unwrap_or(name);
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
                    return None;
                }
            }
            "mv" => Source::Moved,
            _ => return None,
        };
        Some(Linking { name, source, args })
    }

    fn target_dir(&self) -> Vec<Word> {
        self.args.values_of(&["-t"], &["target-directory"])
    }

    /// The operands, without the value of `-t DIR`.
    fn operands(&self) -> Vec<Word> {
        let target_dir = self.target_dir();
        let mut operands: Vec<Word> = self.args.positional().into_iter().cloned().collect();
        operands.retain(|w| !target_dir.contains(w));
        operands
    }

    fn links(&self) -> Vec<NewLink> {
        let operands = self.operands();
        let link = |at: &Word, placement, from: &Word| NewLink {
            at: at.clone(),
            placement,
            source: (self.source)(from.clone()),
        };
        if let Some(dir) = self.target_dir().first() {
            return operands
                .iter()
                .map(|o| link(dir, Placement::Inside, o))
                .collect();
        }
        match operands.as_slice() {
            [only] if self.name == "ln" => vec![link(&Word::lit("."), Placement::Inside, only)],
            [from, at] => {
                let placement = if self.args.has(&['T'], &["no-target-directory"]) {
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
    }
}
