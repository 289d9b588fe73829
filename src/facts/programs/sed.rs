//! `sed`: which files it edits in place, and what its script writes (`w`), reads (`r`) or runs
//! (`e`, `s///e`). The script is read command by command; anything airlock cannot follow is
//! opaque, which asks.

use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

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
            Some(text) => {
                let script = sed_script(text);
                e.extend(script.writes.iter().map(|f| Effect::Write(Word::lit(f))));
                e.extend(script.reads.iter().map(|f| Effect::Read(Word::lit(f))));
                if let Some(why) = script.runs {
                    e.push(Effect::RunsCode(format!("the sed script {why}")));
                }
                if let Some(why) = script.unreadable {
                    e.push(Effect::Opaque(format!("the sed script {why}")));
                }
            }
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

/// What a sed script does besides transforming its input stream.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SedScript {
    pub writes: Vec<String>,
    pub reads: Vec<String>,
    /// Why the script runs commands (`e`, `s///e`), if it does.
    pub runs: Option<String>,
    /// Why airlock could not read the script, if it could not.
    pub unreadable: Option<String>,
}

/// Accepts sed scripts made only of commands that print or transform the stream.
pub fn sed_script_is_plain(script: &str) -> Result<(), String> {
    let s = sed_script(script);
    if let Some(why) = s.runs.or(s.unreadable) {
        return Err(why);
    }
    if let Some(f) = s.writes.first() {
        return Err(format!("writes the file `{f}`"));
    }
    if let Some(f) = s.reads.first() {
        return Err(format!("reads the file `{f}`"));
    }
    Ok(())
}

/// Skips a regular expression up to its closing delimiter, honouring backslashes and bracket
/// expressions (`[/]` does not end `s/[/]/x/`). Returns the index after the delimiter.
fn skip_regex(chars: &[char], mut i: usize, delim: char) -> Option<usize> {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' => {
                let mut j = i + 1;
                if chars.get(j) == Some(&'^') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    if chars[j] == '[' && matches!(chars.get(j + 1), Some(':' | '.' | '=')) {
                        let close = chars[j + 2..].iter().position(|c| *c == ']')?;
                        j += close + 3;
                    } else {
                        j += 1;
                    }
                }
                i = j + 1;
            }
            c if c == delim => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// What a sed script writes, reads and runs, as far as airlock can read it.
pub fn sed_script(script: &str) -> SedScript {
    let mut out = SedScript::default();
    let mut at = Cursor {
        chars: script.chars().collect(),
        i: 0,
    };
    loop {
        while !at.done() && (at.chars[at.i].is_whitespace() || at.chars[at.i] == ';') {
            at.i += 1;
        }
        if at.done() {
            return out;
        }
        if let Err(why) = at.skip_addresses() {
            out.unreadable = Some(why);
            return out;
        }
        if at.done() {
            return out;
        }
        let cmd = at.chars[at.i];
        at.i += 1;
        if let Err(why) = at.command(cmd, &mut out) {
            out.unreadable = Some(why);
            return out;
        }
    }
}

/// A place in a sed script being read.
struct Cursor {
    chars: Vec<char>,
    i: usize,
}

impl Cursor {
    fn done(&self) -> bool {
        self.i >= self.chars.len()
    }

    /// The rest of the line, leading blanks skipped (a file name, a label).
    fn rest_of_line(&mut self) -> String {
        let (chars, n) = (&self.chars, self.chars.len());
        while self.i < n && (chars[self.i] == ' ' || chars[self.i] == '\t') {
            self.i += 1;
        }
        let start = self.i;
        while self.i < n && chars[self.i] != '\n' {
            self.i += 1;
        }
        chars[start..self.i].iter().collect()
    }

    /// Addresses: numbers, $, /regex/, \cregexc, with , ~ + and !.
    fn skip_addresses(&mut self) -> Result<(), String> {
        let (chars, n) = (&self.chars, self.chars.len());
        let i = &mut self.i;
        while *i < n {
            let c = chars[*i];
            if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') {
                *i += 1;
            } else if c == '/' || c == '\\' {
                let delim = if c == '\\' {
                    *i += 1;
                    match chars.get(*i) {
                        Some(d) => *d,
                        None => return Err("ends inside an address".into()),
                    }
                } else {
                    '/'
                };
                match skip_regex(chars, *i + 1, delim) {
                    Some(next) => *i = next,
                    None => return Err("has an unterminated address".into()),
                }
                while *i < n && matches!(chars[*i], 'I' | 'M') {
                    *i += 1;
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    /// One command and its arguments.
    fn command(&mut self, cmd: char, out: &mut SedScript) -> Result<(), String> {
        let n = self.chars.len();
        match cmd {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'l' | 'n' | 'N' | 'p' | 'P'
            | 'x' | 'z' | 'F' => {}
            'q' | 'Q' | 'L' => {
                while self.i < n
                    && (self.chars[self.i].is_ascii_digit() || self.chars[self.i] == ' ')
                {
                    self.i += 1;
                }
            }
            ':' => {
                self.rest_of_line();
            }
            'b' | 't' | 'T' => {
                // A label ends at whitespace or `;`; what follows is the next command.
                while self.i < n && self.chars[self.i] == ' ' {
                    self.i += 1;
                }
                while self.i < n && !self.chars[self.i].is_whitespace() && self.chars[self.i] != ';'
                {
                    self.i += 1;
                }
            }
            '#' => {
                while self.i < n && self.chars[self.i] != '\n' {
                    self.i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                while self.i < n && self.chars[self.i] != '\n' {
                    if self.chars[self.i] == '\\' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
            }
            'w' | 'W' => out.writes.push(self.rest_of_line()),
            'r' | 'R' => out.reads.push(self.rest_of_line()),
            'e' => out.runs = Some("runs a command (`e`)".into()),
            'v' => {
                self.rest_of_line();
            }
            's' | 'y' => self.substitute(cmd, out)?,
            other => {
                return Err(format!(
                    "uses the command `{other}` that airlock does not know"
                ));
            }
        }
        Ok(())
    }

    /// `s/regex/replacement/flags` and `y/from/to/`: a `w` flag writes a file, an `e` flag runs
    /// the pattern space as a command.
    fn substitute(&mut self, cmd: char, out: &mut SedScript) -> Result<(), String> {
        let n = self.chars.len();
        let Some(&delim) = self.chars.get(self.i) else {
            return Err("ends after `s`".into());
        };
        if delim == '\n' || delim == '\\' {
            return Err("uses an unusual delimiter".into());
        }
        self.i += 1;
        match skip_regex(&self.chars, self.i, delim) {
            Some(next) => self.i = next,
            None => return Err(format!("has an unterminated `{cmd}` command")),
        }
        // The replacement: backslashes escape, brackets are literal.
        while self.i < n && self.chars[self.i] != delim {
            if self.chars[self.i] == '\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        if self.i >= n {
            return Err(format!("has an unterminated `{cmd}` command"));
        }
        self.i += 1;
        if cmd == 's' {
            while self.i < n && !matches!(self.chars[self.i], ';' | '\n' | '}') {
                match self.chars[self.i] {
                    'w' | 'W' => {
                        self.i += 1;
                        out.writes.push(self.rest_of_line());
                        break;
                    }
                    'e' => out.runs = Some("runs a command (`s///e`)".into()),
                    'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' | ' ' => {}
                    other => return Err(format!("uses an unknown `s` flag `{other}`")),
                }
                self.i += 1;
            }
        }
        Ok(())
    }
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
