//! Programs that read and filter text: grep and friends, find, fd, sed, awk, jq. Read-only only
//! without the flags and script commands that write files or run programs.

use super::{Args, Effect, lit, reads};
use crate::approval::shell::Word;

pub(super) fn search(name: &str, args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if name == "rg" && args.has(&[], &["pre", "pre-glob"]) {
        e.push(Effect::RunsCode(
            "`rg --pre` runs a program on every file".into(),
        ));
    }
    if name == "ag" && args.has(&[], &["pager"]) {
        e.push(Effect::RunsCode("`ag --pager` runs a program".into()));
    }
    // The pattern is the first positional unless given with -e / -f / --regexp / --file.
    let pattern_given = args.has(&['e', 'f'], &["regexp", "file"]);
    let mut paths: Vec<Word> = args.positional().into_iter().cloned().collect();
    if !pattern_given && !paths.is_empty() {
        paths.remove(0);
    }
    if paths.is_empty() && !matches!(name, "grep" | "egrep" | "fgrep" | "zgrep") {
        paths.push(Word::lit("."));
    }
    e.extend(reads(paths));
    e.extend(reads(args.values_of(&["-f"], &["file", "ignore-file"])));
    e
}

pub(super) fn find(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let roots: Vec<Word> = args
        .iter()
        .take_while(|w| match lit(w) {
            Some(s) => !s.starts_with('-') && s != "(" && s != "!",
            None => true,
        })
        .cloned()
        .collect();
    let roots = if roots.is_empty() {
        vec![Word::lit(".")]
    } else {
        roots
    };
    e.extend(roots.iter().cloned().map(Effect::Read));
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

pub(super) fn sed(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let in_place = args.has(&['i'], &["in-place"]);
    let scripts = args.values_of(&["-e"], &["expression"]);
    let script_files = args.values_of(&["-f"], &["file"]);
    let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
    let mut all_scripts = scripts;
    if all_scripts.is_empty() && script_files.is_empty() && !pos.is_empty() {
        all_scripts.push(pos.remove(0));
    } else {
        // `-e x` values were counted as positionals too; drop them.
        pos.retain(|w| !all_scripts.contains(w));
    }
    for f in script_files {
        pos.retain(|w| *w != f);
        e.push(Effect::Read(f));
        e.push(Effect::Opaque(
            "the sed script comes from a file airlock does not read".into(),
        ));
    }
    for s in &all_scripts {
        match lit(s) {
            Some(text) => match sed_script_is_plain(text) {
                Ok(()) => {}
                Err(why) => e.push(Effect::RunsCode(format!("the sed script {why}"))),
            },
            None => e.push(Effect::Opaque(
                "the sed script is computed at run time".into(),
            )),
        }
    }
    if in_place {
        e.extend(pos.into_iter().map(Effect::Write));
    } else {
        e.extend(reads(pos));
    }
    e
}

/// Accepts sed scripts made only of commands that print or transform the stream. Rejects `w`,
/// `W`, `r`, `R`, `e`, and the `w` / `e` flags of `s`, which write files or run commands.
pub fn sed_script_is_plain(script: &str) -> Result<(), String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let n = chars.len();
    let skip_ws = |i: &mut usize| {
        while *i < n && (chars[*i].is_whitespace() || chars[*i] == ';') {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i >= n {
            return Ok(());
        }
        // Addresses: numbers, $, /regex/, \cregexc, with , ~ + and !.
        loop {
            if i >= n {
                return Ok(());
            }
            let c = chars[i];
            if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') {
                i += 1;
            } else if c == '/' || c == '\\' {
                let delim = if c == '\\' {
                    i += 1;
                    *chars.get(i).ok_or("ends inside an address")?
                } else {
                    '/'
                };
                i += 1;
                while i < n && chars[i] != delim {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                while i < n && matches!(chars[i], 'I' | 'M') {
                    i += 1;
                }
            } else {
                break;
            }
        }
        if i >= n {
            return Ok(());
        }
        let cmd = chars[i];
        i += 1;
        match cmd {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'l' | 'n' | 'N' | 'p' | 'P'
            | 'x' | 'z' | 'F' => {}
            'q' | 'Q' | 'L' => {
                while i < n && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' => {
                while i < n && chars[i] != ';' && chars[i] != '\n' {
                    i += 1;
                }
            }
            '#' => {
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line.
                while i < n && chars[i] != '\n' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            's' | 'y' => {
                let delim = *chars.get(i).ok_or("ends after `s`")?;
                if delim == '\n' || delim == '\\' {
                    return Err("uses an unusual delimiter".into());
                }
                i += 1;
                for _ in 0..2 {
                    while i < n && chars[i] != delim {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= n {
                        return Err(format!("has an unterminated `{cmd}` command"));
                    }
                    i += 1;
                }
                if cmd == 's' {
                    while i < n && !matches!(chars[i], ';' | '\n' | '}') {
                        match chars[i] {
                            'w' | 'W' => return Err("writes a file (`s///w`)".into()),
                            'e' => return Err("runs a command (`s///e`)".into()),
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' | ' ' => {}
                            other => return Err(format!("uses an unknown `s` flag `{other}`")),
                        }
                        i += 1;
                    }
                }
            }
            'w' | 'W' => return Err("writes a file (`w`)".into()),
            'r' | 'R' => return Err("reads a file named inside the script (`r`)".into()),
            'e' => return Err("runs a command (`e`)".into()),
            'v' => {}
            other => {
                return Err(format!(
                    "uses the command `{other}` that airlock does not know"
                ));
            }
        }
    }
}

pub(super) fn awk(name: &str, args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    if args.has(&['f', 'i', 'l', 'E'], &["file", "include", "load", "exec"]) {
        e.push(Effect::Opaque(format!(
            "the `{name}` program comes from a file"
        )));
    }
    let vars = args.values_of(&["-v"], &["assign"]);
    let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
    pos.retain(|w| !vars.contains(w));
    if pos.is_empty() {
        return e;
    }
    let program = pos.remove(0);
    match lit(&program) {
        Some(p) => {
            let risky = ["system", "getline", "|", ">", "@", "fflush", "close"];
            if let Some(word) = risky.iter().find(|r| p.contains(*r)) {
                e.push(Effect::RunsCode(format!(
                    "the `{name}` program uses `{word}`, which can run commands or write files"
                )));
            }
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
                if matches!(o, "--slurpfile" | "--rawfile") {
                    if let Some(f) = words.get(i + 2) {
                        files.push(f.clone());
                    }
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
            Some("-L") => {
                i += 2;
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
        }
    }
    e.extend(reads(files));
    e.extend(reads(positional));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_sed_scripts_pass_and_writing_or_executing_ones_do_not() {
        for ok in [
            "s/a/b/g",
            "1,5p",
            "/x/d",
            "s|a|b|2;p",
            "$!N;s/\\n/ /",
            "y/abc/xyz/",
            "10q",
            "/^#/!s/x/y/I",
        ] {
            assert_eq!(sed_script_is_plain(ok), Ok(()), "{ok}");
        }
        for bad in [
            "s/a/b/w out",
            "s/a/b/e",
            "w /etc/passwd",
            "1e id",
            "r /etc/shadow",
            "s/x/y/;W f",
            "/a/ e rm x",
        ] {
            assert!(sed_script_is_plain(bad).is_err(), "{bad}");
        }
    }
}
