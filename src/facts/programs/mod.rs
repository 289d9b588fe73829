//! What each program does, as far as airlock knows: the effects of one simple command.
//!
//! This is the curated knowledge behind "provably read-only": a program is read-only only if it is
//! listed here and none of its writing or executing flags are present. Anything not listed is
//! `Unknown`, which asks. The policy turns effects into reasons; this file only describes.

mod airlock;
mod args;
mod builtins;
mod files;
mod filters;
pub mod git;
mod inline;
mod inspection;
mod launchers;
pub mod links;
mod network;
mod readers;
mod sed;
mod special;
mod system;
mod tables;
mod text;
mod toolchains;

use crate::facts::shell::{SimpleCommand, Word};

use args::{Args, file_url_path, long_matches};
use builtins::shell_builtins;
use files::{archives_and_patches, file_changes};
use filters::text_filters;
use network::{NETWORK, network};
use system::{credential_tools, system_changes};
use tables::{BENIGN_ENV_SETTINGS, READ_NOTHING, READ_PATHS, SHELLS_NO_C};
use toolchains::{RUNS_CODE, runs_code, shell_without_c};

pub use sed::sed_script_is_plain;
pub use text::find_roots;

/// One thing a simple command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Reads the file or directory the word names.
    Read(Word),
    /// Creates or changes the file or directory the word names.
    Write(Word),
    /// Removes the file or directory the word names.
    Delete(Word),
    /// `make -n` in `dir` with the makefile `file` (if `-f` named one): runs nothing unless the
    /// makefile says so, which only reading it can tell (the policy does).
    MakeDryRun {
        dir: Word,
        file: Option<Word>,
    },
    /// Looks at the name and metadata of what the word names (`stat`, `ls`), not its contents.
    Inspect(Word),
    /// Reads the files of a directory tree (`grep -r`, `rg`): judged by what the tree holds.
    SearchTree(Search),
    /// Reads a directory tree following symbolic links, which may lead anywhere.
    ReadTree(Word),
    /// Runs code from the project or a toolchain (builds, tests, scripts, package managers).
    RunsCode(String),
    /// Runs code given inline to an interpreter, which airlock does not analyse.
    InlineCode(String),
    /// Reads commands from standard input that airlock cannot see.
    StdinScript(String),
    Network(String),
    /// Sends something off this machine in a way that cannot be taken back.
    Publishes(String),
    /// Prints the whole process environment.
    EnvironmentDump(String),
    /// Reads credentials through a tool made for that (keychains, `gh auth token`, ...).
    CredentialAccess(String),
    /// Changes the machine outside the workspace in a lasting way (services, cron, global config).
    SystemChange(String),
    /// Destroys work in the workspace that git cannot give back (`git reset --hard`, `git clean`).
    DestroysWork(String),
    Privileged(String),
    /// Sets environment variables that change what the program loads or runs.
    ConfigInjection(String),
    /// Signals or stops other processes.
    ProcessControl(String),
    /// Answers airlock's own questions or lifts its checks (`airlock approve`, `trust`,
    /// `exec --approvals dangerously-allow-all`): an agent must never approve itself.
    TampersWithAirlock(String),
    /// Changes how the shell reads the rest of the command (`shopt`, `alias`, `set -o`...).
    ShellBehaviour(String),
    /// A program airlock knows nothing about.
    Unknown(String),
    /// Something airlock cannot see through.
    Opaque(String),
    /// A shell keyword where a command should be: bash would reject the line, or the grammar
    /// misread it. Either way nothing runs.
    Misparsed(String),
}

/// A recursive search: where it starts, and which files under it it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    pub root: Word,
    /// Reads hidden files and directories (`grep -r`, `rg --hidden`, `rg -uu`).
    pub hidden: bool,
    /// Skips what ripgrep's ignore files (`.gitignore`, `.ignore`, `.rgignore`) exclude: rg
    /// without `-u`.
    pub ignores: bool,
    /// File name globs in ripgrep's `--glob` syntax (`*.rs` keeps only those, `!*.min.js`
    /// and `!target/` skip): `grep --include`, `--exclude`, `--exclude-dir`, `rg -g`.
    pub globs: Vec<String>,
}

/// Words bash reserves; one of them in command position means the line is not what it seems.
const RESERVED_WORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "select", "function",
];

pub(super) fn lit(w: &Word) -> Option<&str> {
    w.as_lit()
}

pub(super) fn reads(words: impl IntoIterator<Item = Word>) -> Vec<Effect> {
    words
        .into_iter()
        .filter(|w| lit(w) != Some("-"))
        .map(Effect::Read)
        .collect()
}

/// A setting for one command that only changes formatting or logging, or names a plain pager:
/// nothing it makes the command load or run.
pub fn benign_env_setting(name: &str, value: &Word) -> bool {
    BENIGN_ENV_SETTINGS.contains(&name) || name.starts_with("LC_") || plain_pager(name, value)
}

/// `GIT_PAGER=cat`, `PAGER=less`: a pager variable set to a plain pager runs nothing else.
/// Any other value is a command line the program will run.
fn plain_pager(name: &str, value: &Word) -> bool {
    matches!(name, "GIT_PAGER" | "PAGER" | "MANPAGER" | "SYSTEMD_PAGER")
        && value.as_lit().is_some_and(|v| {
            matches!(
                v.trim(),
                "" | "cat" | "less" | "more" | "less -R" | "less -r" | "less -FRX" | "less -FRSX"
            )
        })
}

/// The effects of one simple command.
pub fn classify(cmd: &SimpleCommand) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (name, value) in &cmd.env {
        if !benign_env_setting(name, value) {
            effects.push(Effect::ConfigInjection(
                match crate::facts::envvars::loads_code(name) {
                    Some(why) => format!("sets `{name}` for the command: {why}"),
                    None => format!(
                        "sets `{name}` for the command, which can change what it loads or runs"
                    ),
                },
            ));
        }
    }
    effects.extend(
        cmd.wrappers
            .iter()
            .filter_map(|w| launchers::privileged(w))
            .map(Effect::Privileged),
    );
    let Some(first) = cmd.argv.first() else {
        return effects;
    };
    let args = Args {
        words: &cmd.argv[1..],
    };
    let Some(name) = lit(first) else {
        effects.push(Effect::Opaque(format!(
            "the command name `{}` is computed at run time",
            first.display()
        )));
        effects.extend(airlock::maybe_airlock(first, &args));
        return effects;
    };
    if let Word::Lit { glob: true, .. } = first {
        effects.push(Effect::Opaque(format!(
            "the command name `{name}` is a file name pattern"
        )));
        effects.extend(airlock::maybe_airlock(first, &args));
        return effects;
    }
    if cmd.name_disguised {
        effects.push(Effect::Opaque(format!(
            "the command name `{name}` is spelled with quotes or escapes, a way to slip past checks"
        )));
    }
    if RESERVED_WORDS.contains(&name) {
        effects.push(Effect::Misparsed(format!(
            "the shell keyword `{name}` stands where a command should be"
        )));
        return effects;
    }
    if cmd.is_script_function {
        return effects;
    }
    // airlock itself, by any path: checked before anything else about the program.
    if name.rsplit('/').next() == Some("airlock") {
        effects.extend(airlock::airlock_effects(&args));
    }
    if name.contains('/') {
        effects.push(Effect::RunsCode(format!("runs the program `{name}`")));
        effects.push(Effect::Read(first.clone()));
        return effects;
    }
    effects.extend(program_effects(name, &args, cmd));
    // `curl file:///etc/shadow`, `wget file://…`: a file URL is a file, whatever reads it.
    effects.extend(
        args.iter()
            .filter_map(lit)
            .filter_map(file_url_path)
            .map(|p| Effect::Read(Word::lit(&p))),
    );
    effects
}

/// The effects of a program named without a path: the curated tables first, then each family of
/// programs in turn, then `Unknown`. The families are asked in this order on purpose: a program a
/// list in a later family also names is still judged by the earlier one.
fn program_effects(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
    if let Some(effects) = launchers::launchers(name, args) {
        return effects;
    }
    if let Some(effects) = special::special(name, args) {
        return effects;
    }
    if READ_PATHS.contains(&name) {
        return readers::effects(name, args);
    }
    if READ_NOTHING.contains(&name) {
        return read_nothing(name, args);
    }
    if name.starts_with("mkfs.") || name.starts_with("mkfs") {
        return vec![Effect::SystemChange(format!("`{name}` formats a disk"))];
    }
    text_filters(name, args)
        .or_else(|| file_changes(name, args))
        .or_else(|| archives_and_patches(name, args))
        .or_else(|| shell_builtins(name, args))
        .or_else(|| system_changes(name, args))
        .or_else(|| (name == "git").then(|| git::effects(args.words)))
        .or_else(|| credential_tools(name, args))
        .or_else(|| toolchain(name, args, cmd))
        .unwrap_or_else(|| unknown_program(name, args))
}

/// Shells run without `-c`, network clients, and toolchains that run code, or `None` for another
/// program.
fn toolchain(name: &str, args: &Args, cmd: &SimpleCommand) -> Option<Vec<Effect>> {
    Some(match name {
        n if SHELLS_NO_C.contains(&n) => shell_without_c(n, args, cmd),
        n if NETWORK.contains(&n) => network(n, args),
        n if RUNS_CODE.contains(&n) => runs_code(n, args, cmd),
        _ => return None,
    })
}

fn unknown_program(name: &str, args: &Args) -> Vec<Effect> {
    // Whatever an unknown program does, the files it is pointed at are judged as reads,
    // so a credential path is refused even here.
    let mut e = vec![Effect::Unknown(format!(
        "`{name}` is not a program airlock knows to be read-only"
    ))];
    e.extend(reads(args.path_like()));
    e
}

fn read_nothing(name: &str, args: &Args) -> Vec<Effect> {
    match name {
        "df" => vec![],
        "stty" | "tput" => vec![],
        "printf" => vec![],
        _ => {
            let _ = args;
            vec![]
        }
    }
}
