//! Shell analysis: what a bash command line will run, derived with a real bash grammar
//! (tree-sitter-bash), never with regexes over the string.
//!
//! `analyze` turns a command line into every simple command it contains (inside lists, pipelines,
//! subshells, substitutions, here-docs, control flow and function bodies), with wrappers such as
//! `sudo`, `env`, `timeout`, `xargs`, `find -exec` and `bash -c` unwrapped, redirect targets
//! collected, and whatever the parser cannot see through recorded as `Opaque`. It says nothing
//! about whether a command is allowed: that is `programs` (what each program does) and `policy`.

mod unwrap;
mod walk;
pub mod words;

use std::ops::Range;
use std::path::PathBuf;

pub use words::Word;

/// Where a command runs: a directory airlock could follow, or one it could not (a `cd` to a
/// computed path, or a `cd` inside a branch that may or may not have run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cwd {
    Known(PathBuf),
    Unknown,
}

/// When a part runs relative to the simple commands around it, so that what one command leaves
/// behind (a link it creates) is seen by the parts that may run after it, and by no others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Order {
    /// Commands at a lower index in `ShellFacts::commands` have run before this part starts.
    pub after: usize,
    /// May run after parts written later: an `&` job, a trap handler, a function body, a process
    /// substitution, a coprocess.
    pub anytime: bool,
    /// Ids of the loops and pipelines around it: parts inside the same one may run after each
    /// other in any order (a later iteration, another pipeline stage).
    pub together: Vec<usize>,
    /// Inside a loop or function body: the command may run again after it ran once.
    pub repeats: bool,
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    Inherited,
    /// Output of earlier pipeline stages, by program name (e.g. `["curl"]`, `["echo", "base64"]`).
    Pipe {
        producers: Vec<String>,
        /// An earlier stage decodes data (`base64 -d`, `xxd -r`, `openssl enc -d`, ...).
        decoded: bool,
    },
    /// A here-doc or here-string; `text` is its content when it has no expansions.
    Inline {
        text: Option<String>,
    },
    File,
}

/// How airlock reached a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Script,
    Substitution,
    /// The string given to `bash -c`, a shell's here-doc, `eval` or `trap`.
    ShellString,
    FindExec,
    Xargs,
    FunctionBody,
}

/// One simple command: a program and its arguments, after wrappers are taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Byte range in the top-level command line (for a nested `bash -c` string: the outer command).
    pub span: Range<usize>,
    pub text: String,
    pub argv: Vec<Word>,
    /// Wrappers taken off, outermost first: `sudo`, `env`, `timeout`, `xargs`, ...
    pub wrappers: Vec<String>,
    /// `NAME=value` set for this command only (prefix assignments and `env NAME=value`).
    pub env: Vec<(String, Word)>,
    pub cwd: Cwd,
    pub stdin: Stdin,
    pub origin: Origin,
    /// The command name was spelled with quotes, backslashes or an ANSI-C string.
    pub name_disguised: bool,
    /// This command is a shell whose standard input (a literal here-doc) airlock analysed itself.
    pub stdin_script_analyzed: bool,
    /// Calls a function the script itself defines (its body is analysed where it is defined).
    pub is_script_function: bool,
    pub order: Order,
}

impl SimpleCommand {
    /// The program name, when it is known.
    pub fn program(&self) -> Option<&str> {
        self.argv.first().and_then(Word::as_lit)
    }

    /// The argv as plain strings, when every word is known.
    pub fn literal_argv(&self) -> Option<Vec<String>> {
        self.argv
            .iter()
            .map(|w| w.as_lit().map(str::to_string))
            .collect()
    }

    pub fn display(&self) -> String {
        let words: Vec<&str> = self.argv.iter().map(Word::display).collect();
        words.join(" ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    Read,
    Write,
    Append,
    ReadWrite,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub span: Range<usize>,
    pub op: RedirectOp,
    pub target: Word,
    /// Index into `ShellFacts::commands` of the command it belongs to, if it belongs to one.
    pub owner: Option<usize>,
    pub cwd: Cwd,
    pub order: Order,
}

/// Something airlock cannot see through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opaque {
    pub span: Range<usize>,
    pub command: Option<usize>,
    pub what: String,
}

/// A variable the command line reads from the process environment (not one it set itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvRead {
    pub name: String,
    pub span: Range<usize>,
}

/// A variable the command line sets in its own shell (`X=1`, `export X=1`, `declare X`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellAssignment {
    pub name: String,
    pub span: Range<usize>,
    pub exported: bool,
}

/// Everything airlock derived from one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellFacts {
    pub commands: Vec<SimpleCommand>,
    pub redirects: Vec<Redirect>,
    pub opaque: Vec<Opaque>,
    pub env_reads: Vec<EnvRead>,
    pub assignments: Vec<ShellAssignment>,
    /// Set when bash itself would not accept the command line, or the grammar could not read it.
    pub parse_error: Option<String>,
}

/// What the analysis needs to know about the machine.
#[derive(Debug, Clone)]
pub struct ShellContext {
    pub home: PathBuf,
    pub cwd: PathBuf,
}

/// How deep `bash -c "bash -c ..."` may nest before airlock stops following it.
pub const MAX_NESTING: usize = 6;

pub fn analyze(command: &str, ctx: &ShellContext) -> ShellFacts {
    let mut facts = ShellFacts::default();
    walk::analyze_into(
        &mut facts,
        command,
        ctx,
        walk::Nested {
            span: None,
            positional: Vec::new(),
            origin: Origin::Script,
            depth: 0,
            cwd: Cwd::Known(ctx.cwd.clone()),
            order: walk::OuterOrder::default(),
        },
    );
    facts
}

#[cfg(test)]
mod tests;
