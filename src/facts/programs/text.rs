//! Programs that read and filter text: grep and friends, find, fd, awk, jq (sed has its own
//! file). Read-only only without the flags and script commands that write files or run programs.

use super::{Args, Effect, Search, lit, reads};
use crate::facts::shell::Word;

/// The options of each search tool that take a value in the next word, so that a value (`-f
/// PATTERNS`, `-g GLOB`, `-m 5`) is not read as the path to search. Options whose value is
/// optional are left out: their value is never the next word.
const VALUE_OPTIONS: &[(&str, &[char], &[&str])] = &[
    (
        "grep",
        &['e', 'f', 'm', 'A', 'B', 'C', 'd', 'D'],
        GREP_VALUE_LONG,
    ),
    (
        "egrep",
        &['e', 'f', 'm', 'A', 'B', 'C', 'd', 'D'],
        GREP_VALUE_LONG,
    ),
    (
        "fgrep",
        &['e', 'f', 'm', 'A', 'B', 'C', 'd', 'D'],
        GREP_VALUE_LONG,
    ),
    (
        "rg",
        &[
            'e', 'f', 'g', 't', 'T', 'm', 'A', 'B', 'C', 'd', 'j', 'M', 'E', 'r',
        ],
        &[
            "regexp",
            "file",
            "glob",
            "iglob",
            "type",
            "type-not",
            "type-add",
            "type-clear",
            "max-count",
            "after-context",
            "before-context",
            "context",
            "max-depth",
            "threads",
            "max-columns",
            "encoding",
            "replace",
            "pre",
            "pre-glob",
            "ignore-file",
            "sort",
            "sortr",
            "colors",
            "color",
            "context-separator",
            "field-match-separator",
            "field-context-separator",
            "path-separator",
            "max-filesize",
            "dfa-size-limit",
            "regex-size-limit",
            "engine",
            "hostname-bin",
            "hyperlink-format",
        ],
    ),
];

const GREP_VALUE_LONG: &[&str] = &[
    "regexp",
    "file",
    "max-count",
    "after-context",
    "before-context",
    "context",
    "directories",
    "devices",
    "include",
    "exclude",
    "exclude-from",
    "exclude-dir",
    "label",
    "binary-files",
    "group-separator",
];

pub(super) fn search(name: &str, args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if name == "rg" && args.has(&[], &["pre", "pre-glob"]) {
        e.push(Effect::RunsCode(
            "`rg --pre` runs a program on every file".into(),
        ));
    }
    if name == "rg" && args.has(&[], &["hostname-bin"]) {
        e.push(Effect::RunsCode(
            "`rg --hostname-bin` runs a program to learn the host name".into(),
        ));
    }
    if name == "ag" && args.has(&[], &["pager"]) {
        e.push(Effect::RunsCode("`ag --pager` runs a program".into()));
    }
    // The pattern is the first operand unless given with -e / -f / --regexp / --file.
    let pattern_given = args.has(&['e', 'f'], &["regexp", "file"]);
    let mut paths: Vec<Word> = match VALUE_OPTIONS.iter().find(|(n, _, _)| *n == name) {
        Some((_, short, long)) => super::readers::operands(args, short, long),
        None => args.positional().into_iter().cloned().collect(),
    };
    if !pattern_given && !paths.is_empty() {
        paths.remove(0);
    }
    let grep_like = matches!(name, "grep" | "egrep" | "fgrep" | "zgrep");
    // grep without a file reads standard input, unless it recurses: then it searches `.`.
    let recursive = recursion(name, args);
    if paths.is_empty() && (!grep_like || recursive.is_some()) {
        paths.push(Word::lit("."));
    }
    // `grep -R` and `rg -L` follow symlinks while they walk; `grep -r` and plain `rg` do not.
    let follows = match name {
        "rg" => args.has(&['L'], &["follow"]),
        "ag" => args.has(&['f'], &["follow"]),
        _ => args.has(&['R'], &["dereference-recursive"]),
    };
    if follows {
        e.extend(paths.iter().cloned().map(Effect::ReadTree));
    } else {
        e.extend(reads(paths.iter().cloned()));
    }
    if let Some((hidden, ignores, globs)) = recursive {
        e.extend(paths.into_iter().map(|root| {
            Effect::SearchTree(Search {
                root,
                hidden,
                ignores,
                globs: globs.clone(),
            })
        }));
    }
    e.extend(reads(args.values_of(&["-f"], &["file", "ignore-file"])));
    e
}

/// Whether a search walks a tree, and then which files in it it reads: hidden ones, ignored
/// ones, and the globs that pick them. rg and ag always walk, skipping hidden files unless told
/// not to (`rg -uu`, `rg --hidden`, `ag -u`), rg ignored ones too (`rg -u` reads them); grep
/// walks with `-r` and reads everything; ack reads everything.
fn recursion(name: &str, args: &Args) -> Option<(bool, bool, Vec<String>)> {
    let u_count: usize = args
        .iter()
        .filter_map(lit)
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .map(|a| a.matches('u').count())
        .sum();
    let no_ignore = args
        .iter()
        .filter_map(lit)
        .any(|a| a.starts_with("--no-ignore") || a.starts_with("--unrestricted"));
    Some(match name {
        // `rg --files` lists names and reads no file.
        "rg" if args.iter().any(|a| lit(a) == Some("--files")) => return None,
        "rg" => (
            args.has(&['.'], &["hidden"]) || u_count >= 2,
            u_count == 0 && !no_ignore,
            args.values_of(&["-g"], &["glob", "iglob"])
                .iter()
                .filter_map(|g| g.as_lit().map(str::to_string))
                .collect(),
        ),
        // ag's ignore rules are not ripgrep's: airlock walks what it may ignore too.
        "ag" => (
            args.has(
                &['u', 'U', 't'],
                &["unrestricted", "skip-vcs-ignores", "all-text", "hidden"],
            ),
            false,
            Vec::new(),
        ),
        "ack" => (true, false, Vec::new()),
        _ => {
            let recurse = args.has(&['r', 'R'], &["recursive", "dereference-recursive"])
                || args
                    .values_of(&["-d"], &["directories"])
                    .iter()
                    .any(|v| v.as_lit() == Some("recurse"));
            if !recurse {
                return None;
            }
            let mut globs: Vec<String> = Vec::new();
            let lits = |long: &str| -> Vec<String> {
                args.values_of(&[], &[long])
                    .iter()
                    .filter_map(|v| v.as_lit().map(str::to_string))
                    .collect()
            };
            globs.extend(lits("include"));
            globs.extend(lits("exclude").into_iter().map(|g| format!("!{g}")));
            globs.extend(lits("exclude-dir").into_iter().map(|g| format!("!{g}/")));
            (true, false, globs)
        }
    })
}

/// `find [-H] [-L] [-P] [-D opts] [-Olevel] [roots...] [expression]`: the starting points, and
/// whether symlinks are followed.
pub fn find_roots(words: &[Word]) -> (Vec<Word>, bool) {
    let mut i = 0;
    let mut follows = false;
    while let Some(s) = words.get(i).and_then(lit) {
        match s {
            "-H" | "-L" => follows = true,
            "-P" => follows = false,
            "-D" => i += 1,
            _ if s.starts_with("-O") => {}
            _ => break,
        }
        i += 1;
    }
    let roots: Vec<Word> = words[i.min(words.len())..]
        .iter()
        .take_while(|w| match lit(w) {
            Some(s) => !s.starts_with('-') && s != "(" && s != "!",
            None => true,
        })
        .cloned()
        .collect();
    if words.iter().any(|w| lit(w) == Some("-follow")) {
        follows = true;
    }
    let roots = if roots.is_empty() {
        vec![Word::lit(".")]
    } else {
        roots
    };
    (roots, follows)
}

pub(super) fn find(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let (roots, follows) = find_roots(args.words);
    if follows {
        e.extend(roots.iter().cloned().map(Effect::ReadTree));
    } else {
        e.extend(roots.iter().cloned().map(Effect::Read));
    }
    let mut i = 0;
    let words = args.words;
    while i < words.len() {
        match lit(&words[i]) {
            Some("-delete") => e.extend(roots.iter().cloned().map(Effect::Delete)),
            Some("-fprint" | "-fprint0" | "-fprintf" | "-fls") => {
                if let Some(f) = words.get(i + 1) {
                    e.push(Effect::Write(f.clone()));
                }
            }
            Some("-L" | "-follow") => {}
            _ => {}
        }
        i += 1;
    }
    e
}

pub(super) fn fd(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if args.has(&['x', 'X'], &["exec", "exec-batch"]) {
        e.push(Effect::RunsCode(
            "`fd --exec` runs a command on each match".into(),
        ));
    }
    let pos = args.positional();
    let paths: Vec<Word> = pos.into_iter().skip(1).cloned().collect();
    if paths.is_empty() {
        e.push(Effect::Read(Word::lit(".")));
    }
    e.extend(reads(paths));
    e
}

pub(super) fn awk(name: &str, args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if args.has(&['f', 'i', 'l', 'E'], &["file", "include", "load", "exec"]) {
        e.push(Effect::Opaque(format!(
            "the `{name}` program comes from a file"
        )));
    }
    let vars = args.values_of(&["-v"], &["assign"]);
    // gawk joins every `-e` / `--source` text into the program; without them, the first operand
    // is the program.
    let sources = args.values_of(&["-e"], &["source"]);
    let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
    pos.retain(|w| !vars.contains(w) && !sources.contains(w));
    let mut programs = sources;
    if programs.is_empty() {
        if pos.is_empty() {
            return e;
        }
        programs.push(pos.remove(0));
    }
    for program in &programs {
        match lit(program) {
            Some(p) => {
                let risky = [
                    "system", "getline", "|", ">", "@", "fflush", "close", "ARGV", "ARGC",
                    "PROCINFO", "printf -", "RS=",
                ];
                if let Some(word) = risky.iter().find(|r| p.contains(*r)) {
                    e.push(Effect::RunsCode(format!(
                        "the `{name}` program uses `{word}`, which can run commands, write files or choose other files to read"
                    )));
                }
                // Files the program opens itself (`getline < "…"`) are judged as read.
                e.extend(super::inline::string_paths(p).into_iter().map(Effect::Read));
                if p.contains("ENVIRON") {
                    e.push(Effect::EnvironmentDump(format!(
                        "the `{name}` program reads ENVIRON"
                    )));
                }
            }
            None => e.push(Effect::Opaque(format!(
                "the `{name}` program is computed at run time"
            ))),
        }
    }
    // `var=value` operands are assignments, not files.
    pos.retain(|w| !lit(w).is_some_and(|s| s.contains('=') && !s.contains('/')));
    e.extend(reads(pos));
    e
}

pub(super) fn jq(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let value_opts_2 = ["--arg", "--argjson", "--slurpfile", "--rawfile"];
    let mut files = Vec::new();
    let mut positional = Vec::new();
    let words = args.words;
    let mut i = 0;
    let mut program_from_file = false;
    while i < words.len() {
        let s = lit(&words[i]);
        match s {
            Some(o) if value_opts_2.contains(&o) => {
                if matches!(o, "--slurpfile" | "--rawfile")
                    && let Some(f) = words.get(i + 2)
                {
                    files.push(f.clone());
                }
                i += 3;
                continue;
            }
            Some("-f" | "--from-file") => {
                program_from_file = true;
                if let Some(f) = words.get(i + 1) {
                    files.push(f.clone());
                }
                i += 2;
                continue;
            }
            Some(o) if o == "-L" || o.starts_with("--library-path") || o.starts_with("-L") => {
                e.push(Effect::Opaque(
                    "`jq -L` loads modules from a directory airlock does not read".into(),
                ));
                i += if o == "-L" || o == "--library-path" {
                    2
                } else {
                    1
                };
                continue;
            }
            Some(o) if o.starts_with('-') && o != "-" => {}
            _ => positional.push(words[i].clone()),
        }
        i += 1;
    }
    if !program_from_file && !positional.is_empty() {
        let program = positional.remove(0);
        if let Some(p) = lit(&program) {
            if p.contains("$ENV") || p.contains("env") {
                e.push(Effect::EnvironmentDump(
                    "the jq program reads the environment".into(),
                ));
            }
            if p.contains("import") || p.contains("include") || p.contains("input_filename") {
                e.push(Effect::Opaque(
                    "the jq program imports modules or data files airlock does not resolve".into(),
                ));
            }
        }
    }
    e.extend(reads(files));
    e.extend(reads(positional));
    e
}
