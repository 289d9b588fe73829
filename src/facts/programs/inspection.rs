//! Programs that look at the running system: processes (`ps`, one batch snapshot of `top`), open
//! files and sockets (`lsof`, `ss`, `netstat`) and the manual (`man`, `apropos`, `whatis`). They
//! print and change nothing, except through the options read here: one that prints other
//! processes' environments, runs a pager or browser, closes sockets, writes a file, or keeps
//! `top` on the screen. The files they are pointed at are judged as any read or look.

use super::readers::operands_with;
use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

/// Effects for the programs of this family, or `None` for another program.
pub(super) fn inspection(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
        "ps" => ps(args),
        "top" => top(args),
        "lsof" => lsof(args),
        "ss" => ss(args),
        "netstat" => vec![],
        "man" | "apropos" | "whatis" => manual(name, args),
        _ => return None,
    })
}

/// `ps -X VALUE` letters (`-o FORMAT`, `-p PIDS`, `-u USERS`, ...): the value is never an option.
const PS_VALUES: &str = "CGgOopqstUuk";

/// BSD-style `ps X VALUE` letters (`o FORMAT`, `p PIDS`, `U USERS`, ...); BSD `u` takes none.
const PS_BSD_VALUES: &str = "oOptUkq";

/// Long `ps` options that take a value.
const PS_LONG_VALUES: &[&str] = &[
    "cols",
    "columns",
    "width",
    "lines",
    "rows",
    "sort",
    "ppid",
    "pid",
    "quick-pid",
    "sid",
    "tty",
    "user",
    "User",
    "group",
    "Group",
    "format",
    "context",
];

/// BSD-style `ps e` (no dash) shows every process's environment; nothing else `ps` does
/// changes anything. Option values (`-o user,etime`) are not options.
fn ps(args: &Args) -> Vec<Effect> {
    let mut words = args.iter();
    while let Some(w) = words.next() {
        let Some(s) = lit(w) else { continue };
        if let Some(long) = s.strip_prefix("--") {
            if !long.contains('=') && PS_LONG_VALUES.contains(&long) {
                words.next();
            }
            continue;
        }
        let (letters, values) = match s.strip_prefix('-') {
            Some(letters) => (letters, PS_VALUES),
            None => (s, PS_BSD_VALUES),
        };
        for (at, c) in letters.char_indices() {
            if values == PS_BSD_VALUES && c == 'e' {
                return vec![Effect::CredentialAccess(
                    "`ps e` prints the environment of other processes".into(),
                )];
            }
            if values.contains(c) {
                if at + c.len_utf8() == letters.len() {
                    words.next();
                }
                break;
            }
        }
    }
    vec![]
}

/// `top -b -n COUNT` prints COUNT snapshots and ends. Without both it keeps running, and on a
/// terminal its keys signal (`k`) and renice (`r`) processes: that asks, as does any option
/// airlock does not know.
fn top(args: &Args) -> Vec<Effect> {
    const FLAGS: &str = "bcHiSs1hv";
    const VALUES: &str = "dnpuUoEe";
    let mut batch = false;
    let mut count = false;
    let mut unknown = None;
    let mut words = args.words.iter().peekable();
    while let Some(w) = words.next() {
        let Some(letters) = lit(w).and_then(|s| s.strip_prefix('-')) else {
            unknown.get_or_insert_with(|| w.display().to_string());
            continue;
        };
        for (at, c) in letters.char_indices() {
            let rest = &letters[at + c.len_utf8()..];
            if FLAGS.contains(c) {
                batch |= c == 'b';
                continue;
            }
            if VALUES.contains(c) {
                let value = if rest.is_empty() {
                    words.next().and_then(lit)
                } else {
                    Some(rest)
                };
                if c == 'n' {
                    count = value
                        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
                }
                break;
            }
            if c == 'w' {
                // `-w [COLUMNS]`: the width, attached or in the next word when it is a number.
                if rest.is_empty()
                    && words
                        .peek()
                        .and_then(|n| lit(n))
                        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
                {
                    words.next();
                }
                break;
            }
            unknown.get_or_insert_with(|| format!("-{c}"));
            break;
        }
    }
    match unknown {
        Some(word) => vec![Effect::Unknown(format!(
            "`top` with `{word}`, which airlock does not know to be read-only"
        ))],
        None if batch && count => vec![],
        None => vec![Effect::Unknown(
            "`top` without `-b` and `-n COUNT` keeps running, and on a terminal its keys signal and renice processes".into(),
        )],
    }
}

/// `lsof` lists open files and writes nothing. The files and directories it names (`lsof FILE`,
/// `+D DIR`) are looked at, not read; `-k` and `-m` read a file; `-D` manages a device cache
/// file, which asks.
fn lsof(args: &Args) -> Vec<Effect> {
    // Letters whose value is the rest of the word or the next one.
    const VALUES: &str = "cdpuekmDA";
    // Letters whose value, if any, is the rest of the word or a next word that is no option.
    const OPTIONAL: &str = "fKLorsSTxzZgiF";
    const FLAGS: &str = "?habClnNOPRtUvVwXQMHE";
    let mut e = Vec::new();
    let mut words = args.words.iter().peekable();
    let mut after_dashdash = false;
    while let Some(w) = words.next() {
        let Some(s) = lit(w) else {
            e.push(Effect::Inspect(w.clone()));
            continue;
        };
        let option = !after_dashdash && s.len() > 1 && s.starts_with(['-', '+']);
        if !option {
            e.push(Effect::Inspect(w.clone()));
            continue;
        }
        if s == "--" {
            after_dashdash = true;
            continue;
        }
        let plus = s.starts_with('+');
        let letters = &s[1..];
        for (at, c) in letters.char_indices() {
            let rest = &letters[at + c.len_utf8()..];
            if FLAGS.contains(c) {
                continue;
            }
            if VALUES.contains(c) {
                let value = if rest.is_empty() {
                    words.next().cloned()
                } else {
                    Some(Word::lit(rest))
                };
                match (c, plus, value) {
                    ('d' | 'D', true, Some(dir)) => e.push(Effect::Inspect(dir)),
                    ('D', false, _) => e.push(Effect::Unknown(
                        "`lsof -D` builds or updates a device cache file".into(),
                    )),
                    ('k' | 'm' | 'A', _, Some(file)) => e.extend(reads([file])),
                    _ => {}
                }
                break;
            }
            if OPTIONAL.contains(c) {
                let next_is_value = rest.is_empty()
                    && words.peek().and_then(|n| lit(n)).is_some_and(|n| {
                        !n.starts_with(['-', '+', '/', '.', '~']) && !n.contains('/')
                    });
                if next_is_value {
                    words.next();
                }
                break;
            }
            e.push(Effect::Unknown(format!(
                "`lsof` with `{s}`, an option airlock does not know"
            )));
            break;
        }
    }
    e
}

/// `ss` lists sockets. `-K` closes other processes' sockets, `-D FILE` writes raw socket
/// information to a file and `-F FILE` reads a filter from one; its other words are a filter.
fn ss(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if args.has(&['K'], &["kill"]) {
        e.push(Effect::ProcessControl(
            "`ss -K` closes other processes' sockets".into(),
        ));
    }
    e.extend(
        args.values_of(&["-D"], &["diag"])
            .into_iter()
            .map(Effect::Write),
    );
    e.extend(reads(args.values_of(&["-F"], &["filter"])));
    e
}

/// `man`, `apropos` and `whatis` look up manual pages: a name is a page, not a file. A name with
/// a `/` (or any name after `-l`) is a file man formats and prints, so it is read. A pager
/// (`-P`), a browser (`-H`), an X viewer (`-X`) or a configuration file that names the programs
/// man runs (`-C`) asks; so does rebuilding the index (`-u`). Pager variables are judged where
/// they are set (`MANPAGER=cat` is a plain pager).
fn manual(name: &str, args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if args.has(&['P', 'H', 'X'], &["pager", "html", "gxditview"]) {
        e.push(Effect::RunsCode(format!(
            "`{name}` is told to run a pager, browser or viewer"
        )));
    }
    if args.has(&['C'], &["config-file"]) {
        e.push(Effect::RunsCode(format!(
            "`{name} -C` reads a configuration file that names the programs man runs"
        )));
    }
    if name == "man" && args.has(&['u'], &["update"]) {
        e.push(Effect::Unknown(
            "`man -u` rebuilds the manual page index".into(),
        ));
    }
    e.extend(reads(args.values_of(&["-M"], &["manpath"])));
    if name != "man" {
        // `apropos` and `whatis` take keywords, never files.
        return e;
    }
    let local = args.has(&['l'], &["local-file"]);
    let pages = operands_with(
        args,
        &['P', 'C', 'L', 'm', 'M', 'S', 's', 'e', 'E', 'R', 'r', 'p'],
        &['H', 'X', 'T'],
        &[
            "pager",
            "config-file",
            "locale",
            "systems",
            "manpath",
            "sections",
            "extension",
            "encoding",
            "recode",
            "prompt",
            "preprocessor",
        ],
    );
    e.extend(reads(
        pages
            .into_iter()
            .filter(|w| local || lit(w).is_none_or(|s| s.contains('/'))),
    ));
    e
}
