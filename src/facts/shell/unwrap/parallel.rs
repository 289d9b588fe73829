//! GNU `parallel`: like `xargs` it runs a command once per input, but the command is a shell
//! string (its words joined with spaces) in which `{}` and its kin stand for each input, and
//! without a command every input is itself a command line. Inputs written on the line (`:::
//! a b`) are known, so each job is judged with its own; inputs read from standard input or from
//! files (`::::`, `-a`) are not, and stand in the job as words known only at run time.

use super::getopt::{self, Read, Spec, Takes};
use super::{Inner, Unwrapped, lit};
use crate::facts::shell::words::Word;

use Takes::{Nothing as N, Optional as O, Value as V};

/// Most jobs judged one by one; past this, the inputs count as unknown.
const MAX_JOBS: usize = 64;

const PARALLEL: Spec = Spec {
    short: &[
        ('0', N),
        ('g', N),
        ('k', N),
        ('m', N),
        ('p', N),
        ('q', N),
        ('r', N),
        ('t', N),
        ('u', N),
        ('v', N),
        ('X', N),
        ('x', N),
        ('h', N),
        ('V', N),
        ('a', V),
        ('C', V),
        ('d', V),
        ('E', V),
        ('I', V),
        ('j', V),
        ('P', V),
        ('L', V),
        ('n', V),
        ('N', V),
        ('s', V),
        ('S', V),
        ('i', O),
        ('l', O),
    ],
    long: &[
        ("null", N),
        ("group", N),
        ("keep-order", N),
        ("interactive", N),
        ("quote", N),
        ("no-run-if-empty", N),
        ("verbose", N),
        ("ungroup", N),
        ("xargs", N),
        ("help", N),
        ("version", N),
        ("dry-run", N),
        ("will-cite", N),
        ("no-notice", N),
        ("eta", N),
        ("progress", N),
        ("bar", N),
        ("tag", N),
        ("line-buffer", N),
        ("lb", N),
        ("shuf", N),
        ("pipe", N),
        ("pipe-part", N),
        ("spreadstdin", N),
        ("link", N),
        ("xapply", N),
        ("plus", N),
        ("fg", N),
        ("bg", N),
        ("files", N),
        ("halt-on-error", V),
        ("arg-file", V),
        ("colsep", V),
        ("delimiter", V),
        ("replace", O),
        ("jobs", V),
        ("max-lines", O),
        ("max-args", V),
        ("max-replace-args", V),
        ("max-chars", V),
        ("sshlogin", V),
        ("sshloginfile", V),
        ("slf", V),
        ("ssh", V),
        ("tagstring", V),
        ("halt", V),
        ("timeout", V),
        ("delay", V),
        ("retries", V),
        ("block", V),
        ("recstart", V),
        ("recend", V),
        ("header", V),
        ("trim", V),
        ("nice", V),
        ("joblog", V),
        ("results", V),
        ("res", V),
        ("tmpdir", V),
        ("workdir", V),
        ("wd", V),
        ("eof", O),
        ("arg-sep", V),
        ("arg-file-sep", V),
        ("rpl", V),
        ("filter", V),
        ("limit", V),
        ("shebang", N),
        ("shebang-wrap", N),
        ("basefile", V),
        ("bf", V),
        ("transfer", N),
        ("trc", V),
        ("return", V),
        ("cleanup", N),
        ("env", V),
        ("load", V),
        ("memfree", V),
        ("id", V),
        ("semaphore", N),
        ("csv", N),
    ],
    permute: false,
};

/// Options that run something besides the command, or send it elsewhere.
const RUNS_ELSEWHERE: &[(&str, &str)] = &[
    ("S", "runs the commands on other machines"),
    ("sshlogin", "runs the commands on other machines"),
    ("sshloginfile", "runs the commands on other machines"),
    ("slf", "runs the commands on other machines"),
    ("ssh", "runs the commands through another program"),
    ("filter", "evaluates Perl code for every job"),
    ("limit", "runs a command to decide when to start jobs"),
    ("rpl", "defines replacement strings as Perl code"),
    ("shebang", "reads its command from a script file"),
    ("shebang-wrap", "reads its command from a script file"),
    ("arg-sep", "changes the separator of its inputs"),
    ("arg-file-sep", "changes the separator of its input files"),
];

/// Options after which an input is no longer one whole value per job (columns, several per
/// job, other separators): each known input is still judged alone, and unknown ones besides.
const REGROUPS: &[&str] = &[
    "C",
    "colsep",
    "d",
    "delimiter",
    "0",
    "null",
    "E",
    "eof",
    "n",
    "max-args",
    "N",
    "max-replace-args",
    "L",
    "l",
    "max-lines",
    "m",
    "X",
    "xargs",
    "s",
    "max-chars",
    "header",
    "trim",
    "csv",
    "link",
    "xapply",
];

/// One input source: its values when written on the line, `None` when read at run time.
type Source = Option<Vec<Word>>;

/// Takes `parallel` off `out`: its jobs become shell strings in `out.inner`, replacing it.
pub(super) fn parallel(out: &mut Unwrapped) {
    let read = getopt::read(&out.argv, 1, &PARALLEL);
    if let Some(problem) = read.unknown_problem("parallel") {
        out.problems.push(problem);
    }
    if read.has(&["h", "help", "V", "version"]) {
        return;
    }
    for (option, what) in RUNS_ELSEWHERE {
        if read.has(&[option]) {
            let dashes = if option.len() == 1 { "-" } else { "--" };
            out.problems
                .push(format!("`parallel {dashes}{option}` {what}"));
        }
    }
    out.writes
        .extend(read.values(&["joblog", "results", "res"]));
    let (command, mut sources) = command_and_sources(out, &read);
    let arg_files = read.values(&["a", "arg-file"]);
    out.reads.extend(arg_files.iter().cloned());
    sources.extend(arg_files.iter().map(|_| None));
    if sources.is_empty() {
        // No `:::`: the inputs are the lines of standard input.
        sources.push(None);
    }
    let Some(command) = command_words(out, &read, &command) else {
        return;
    };
    let replace = replacement(&read);
    // `--pipe`: the input goes to each job's standard input, not into its command.
    let jobs = if read.has(&["pipe", "spreadstdin", "pipe-part"]) {
        vec![Vec::new()]
    } else {
        jobs(&sources, read.has(REGROUPS))
    };
    let mut texts = Vec::new();
    for job in jobs {
        match &command {
            Some(command) => texts.push(fill(command, &replace, &job)),
            // No command: each input is a command line of its own.
            None => match job.first() {
                Some(Word::Lit { value, .. }) => texts.push((value.clone(), Vec::new())),
                _ => out
                    .problems
                    .push("`parallel` runs command lines read at run time".into()),
            },
        }
    }
    if texts.is_empty() {
        return;
    }
    for (text, unknown) in texts {
        let positional = std::iter::once(Word::lit("parallel"))
            .chain(unknown)
            .collect();
        out.inner.push(Inner::Script { text, positional });
    }
    out.replaced = true;
}

/// The command's words (before the first `:::`-style separator), and the input sources.
fn command_and_sources(out: &mut Unwrapped, read: &Read) -> (Vec<Word>, Vec<Source>) {
    let mut command = Vec::new();
    let mut sources: Vec<Source> = Vec::new();
    let mut files = false;
    for word in &read.operands {
        match lit(word) {
            Some(":::" | ":::+") => {
                files = false;
                sources.push(Some(Vec::new()));
            }
            Some("::::" | "::::+") => files = true,
            _ if files => {
                out.reads.push(word.clone());
                sources.push(None);
            }
            _ => match sources.last_mut() {
                Some(Some(values)) => values.push(word.clone()),
                Some(None) => {}
                None => command.push(word.clone()),
            },
        }
    }
    (command, sources)
}

/// The command as shell text (`None` when there is none), or `None` overall when its words are
/// computed at run time. With `-q` each word is quoted, as parallel does.
fn command_words(out: &mut Unwrapped, read: &Read, command: &[Word]) -> Option<Option<String>> {
    if command.is_empty() {
        return Some(None);
    }
    let words: Option<Vec<&str>> = command.iter().map(lit).collect();
    let Some(words) = words else {
        out.problems
            .push("`parallel` runs a command built at run time".into());
        return None;
    };
    let quote = read.has(&["q", "quote"]);
    Some(Some(
        words
            .iter()
            .map(|w| if quote { shell_quote(w) } else { w.to_string() })
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

/// The string that stands for the whole input (`{}`, or the one `-I` / `--replace` names).
fn replacement(read: &Read) -> String {
    read.values(&["I", "replace", "i"])
        .last()
        .and_then(|w| w.as_lit().map(str::to_string))
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "{}".to_string())
}

/// The inputs of each job: every combination of the sources' values while they are all known
/// and few; otherwise each known value alone, and one job of unknown inputs.
fn jobs(sources: &[Source], regroups: bool) -> Vec<Vec<Word>> {
    let unknown = || Word::Dynamic {
        text: "<input of parallel>".into(),
        vars: Vec::new(),
    };
    let known: Option<Vec<&Vec<Word>>> = sources.iter().map(Option::as_ref).collect();
    if let Some(known) = &known
        && !regroups
    {
        let count = known
            .iter()
            .try_fold(1usize, |n, values| n.checked_mul(values.len()));
        if count.is_some_and(|n| n <= MAX_JOBS) {
            let mut jobs = vec![Vec::new()];
            for values in known {
                jobs = jobs
                    .into_iter()
                    .flat_map(|job| {
                        values.iter().map(move |v| {
                            let mut job = job.clone();
                            job.push(v.clone());
                            job
                        })
                    })
                    .collect();
            }
            return jobs;
        }
    }
    let mut jobs: Vec<Vec<Word>> = sources
        .iter()
        .flatten()
        .flatten()
        .take(MAX_JOBS)
        .map(|v| vec![v.clone()])
        .collect();
    jobs.push(vec![unknown()]);
    jobs
}

/// The job's shell text: each replacement string replaced by its inputs, quoted the way
/// parallel quotes them; unknown inputs become positional parameters (returned in order).
/// Without any replacement string the inputs are appended, as parallel does.
fn fill(command: &str, replace: &str, job: &[Word]) -> (String, Vec<Word>) {
    let mut unknown = Vec::new();
    let mut text = String::new();
    let mut rest = command;
    let mut replaced = false;
    let mut insert = |text: &mut String, values: &[Word]| {
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            match value {
                Word::Lit { value, glob, .. } => text.push_str(&quote(value, *glob)),
                dynamic => {
                    unknown.push(dynamic.clone());
                    text.push_str(&format!("\"${{{}}}\"", unknown.len()));
                }
            }
        }
    };
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(replace) {
            insert(&mut text, job);
            replaced = true;
            rest = after;
            continue;
        }
        if let Some((token, after)) = replacement_token(rest) {
            insert(&mut text, &[token_value(token, job)]);
            replaced = true;
            rest = after;
            continue;
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            text.push(c);
        }
        rest = chars.as_str();
    }
    if !replaced && !job.is_empty() {
        text.push(' ');
        insert(&mut text, job);
    }
    (text, unknown)
}

/// A replacement string at the start of `s`: `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{N}`,
/// `{N.}`..., the `--plus` ones (`{..}`, `{+/}`...) and Perl ones (`{= ... =}`).
fn replacement_token(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix('{')?;
    if body.starts_with('=') {
        let end = body.find("=}")?;
        return Some((&s[..end + 3], &s[end + 3..]));
    }
    let end = body.find('}')?;
    let inner = &body[..end];
    let plain = !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '/' | '#' | '%' | '+' | '-'));
    plain.then(|| (&s[..end + 2], &s[end + 2..]))
}

/// What a replacement string stands for in a job: `{N...}` its Nth input, the others the whole
/// input (a job of several inputs: unknown), each with its transformation.
fn token_value(token: &str, job: &[Word]) -> Word {
    let inner = &token[1..token.len() - 1];
    if inner.starts_with('=') {
        return Word::Dynamic {
            text: token.to_string(),
            vars: Vec::new(),
        };
    }
    if matches!(inner, "#" | "%") {
        return Word::lit("1");
    }
    let unsigned = inner.trim_start_matches('-');
    let transform = unsigned.trim_start_matches(|c: char| c.is_ascii_digit());
    let number = &unsigned[..unsigned.len() - transform.len()];
    let input = match number.parse::<usize>() {
        Ok(n) if n >= 1 && !inner.starts_with('-') => job.get(n - 1).or(job.first()).cloned(),
        _ => None,
    };
    let input = match (input, job) {
        (Some(input), _) => input,
        (None, [one]) => one.clone(),
        (None, _) => Word::Dynamic {
            text: "<inputs of parallel>".into(),
            vars: Vec::new(),
        },
    };
    let Word::Lit { value, .. } = &input else {
        return input;
    };
    let (dir, base) = match value.rsplit_once('/') {
        Some((dir, base)) => (if dir.is_empty() { "/" } else { dir }, base),
        None => (".", value.as_str()),
    };
    let no_ext = |s: &str| match s.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => s.to_string(),
    };
    Word::lit(&match transform {
        "" => value.clone(),
        "." => match value.rsplit_once('/') {
            Some((dir, base)) => format!("{dir}/{}", no_ext(base)),
            None => no_ext(value),
        },
        "/" => base.to_string(),
        "//" => dir.to_string(),
        "/." => no_ext(base),
        // `--plus` forms and anything else: the input as given.
        _ => value.clone(),
    })
}

/// A value as parallel puts it into the command: special characters backslash-escaped (a
/// newline quoted), so it stays one word. A `~` stays as it is: the outer shell already
/// expanded it where it would, and airlock judges a leading `~` as the home either way.
///
/// A pattern (`::: *.log`) keeps its glob characters: the outer shell replaced it with the
/// names it matches before parallel ran, which the inner one does the same way here.
fn quote(s: &str, glob: bool) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\n' => out.push_str("'\n'"),
            c if c.is_ascii_alphanumeric()
                || matches!(c, '_' | '/' | '.' | ',' | '+' | '-' | ':' | '@' | '%' | '~')
                || (glob && matches!(c, '*' | '?' | '[' | ']')) =>
            {
                out.push(c)
            }
            c => {
                out.push('\\');
                out.push(c);
            }
        }
    }
    if out.is_empty() { "''".into() } else { out }
}

/// `-q`: each word of the command quoted whole.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(command: &str, job: &[&str]) -> String {
        let job: Vec<Word> = job.iter().map(|s| Word::lit(s)).collect();
        fill(command, "{}", &job).0
    }

    #[test]
    fn replacement_strings_become_the_quoted_input_and_its_parts() {
        assert_eq!(filled("rm -rf {}", &["/a b"]), "rm -rf /a\\ b");
        assert_eq!(filled("mv {} {.}.bak", &["d/x.rs"]), "mv d/x.rs d/x.bak");
        assert_eq!(filled("ls {//} {/} {/.}", &["/o/x.c"]), "ls /o x.c x");
        assert_eq!(filled("cp {1} {2}", &["a", "b"]), "cp a b");
        assert_eq!(filled("cat \"{}\"", &["~/k;x"]), "cat \"~/k\\;x\"");
        let pattern = [Word::Lit {
            value: "~/.ssh/*".into(),
            glob: true,
            quoted: false,
        }];
        assert_eq!(fill("cat", "{}", &pattern).0, "cat ~/.ssh/*");
    }

    #[test]
    fn without_a_replacement_string_the_inputs_are_appended() {
        assert_eq!(filled("rm -rf", &["/outside"]), "rm -rf /outside");
    }

    #[test]
    fn an_unknown_input_becomes_a_positional_parameter() {
        let job = vec![Word::Dynamic {
            text: "x".into(),
            vars: Vec::new(),
        }];
        let (text, unknown) = fill("rm {}", "{}", &job);
        assert_eq!(text, "rm \"${1}\"");
        assert_eq!(unknown.len(), 1);
    }
}
