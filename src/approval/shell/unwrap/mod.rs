//! Taking wrappers off a simple command: `sudo`, `env`, `command`, `builtin`, `exec`, `nice`,
//! `timeout`, `nohup`, `stdbuf`, `time`, `ionice`, `setsid`, `xargs`, and pulling the commands out
//! of `find -exec` and `bash -c`. What a wrapper runs is what gets judged.

use super::words::Word;

/// A command found inside another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    /// A shell string to parse (`bash -c STRING [ARG0 ARGS...]`, `eval WORDS`, `trap STRING`),
    /// with the positional parameters it gets (`$0`, `$1`, ...).
    Script { text: String, positional: Vec<Word> },
    /// An argv run by `find -exec`.
    FindExec(Vec<Word>),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unwrapped {
    pub wrappers: Vec<String>,
    pub env: Vec<(String, Word)>,
    pub argv: Vec<Word>,
    pub inner: Vec<Inner>,
    /// The outer command is fully replaced by `inner` (a `bash -c` with a literal string).
    pub replaced: bool,
    pub via_xargs: bool,
    /// `env -C DIR` / `--chdir`: the command runs somewhere else.
    pub chdir: Option<Word>,
    /// Files a wrapper itself writes (`time -o FILE`).
    pub writes: Vec<Word>,
    /// Files a wrapper itself reads (`xargs -a FILE`).
    pub reads: Vec<Word>,
    pub problems: Vec<String>,
}

pub const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"];

/// Directories whose programs airlock knows by their base name (`/usr/bin/rm` is `rm`).
const STANDARD_BIN_DIRS: &[&str] = &[
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
];

/// The name a word calls, with standard bin directories taken off.
pub fn program_name(word: &Word) -> Option<String> {
    let Word::Lit { value, glob, .. } = word else {
        return None;
    };
    if *glob {
        return None;
    }
    if let Some((dir, base)) = value.rsplit_once('/') {
        let dir = if dir.is_empty() { "/" } else { dir };
        let dir = dir.trim_end_matches('/');
        if STANDARD_BIN_DIRS.contains(&dir) && !base.is_empty() {
            return Some(base.to_string());
        }
    }
    Some(value.clone())
}

fn lit(word: &Word) -> Option<&str> {
    word.as_lit()
}

/// Skips options of a wrapper. `with_value` lists the options that take a separate value.
/// Returns the index of the first word that is not an option of the wrapper.
fn skip_options(argv: &[Word], mut i: usize, with_value: &[&str], stop_at_number: bool) -> usize {
    while i < argv.len() {
        let Some(w) = lit(&argv[i]) else { return i };
        if w == "--" {
            return i + 1;
        }
        if !w.starts_with('-') || w == "-" {
            return i;
        }
        if stop_at_number && w[1..].chars().all(|c| c.is_ascii_digit()) && w.len() > 1 {
            // `nice -5 cmd`
            i += 1;
            continue;
        }
        let takes_value = with_value.contains(&w);
        i += if takes_value { 2 } else { 1 };
    }
    i
}

pub fn unwrap(argv: Vec<Word>) -> Unwrapped {
    let mut out = Unwrapped {
        argv,
        ..Unwrapped::default()
    };
    for _ in 0..16 {
        let Some(name) = out.argv.first().and_then(program_name) else {
            return out;
        };
        let rest_from = match name.as_str() {
            "sudo" | "doas" => {
                let i = skip_options(
                    &out.argv,
                    1,
                    &[
                        "-u",
                        "-g",
                        "-C",
                        "-D",
                        "-h",
                        "-p",
                        "-r",
                        "-R",
                        "-t",
                        "-T",
                        "-U",
                        "--user",
                        "--group",
                        "--chdir",
                        "--chroot",
                        "--prompt",
                        "--host",
                        "--role",
                        "--type",
                        "--close-from",
                        "--other-user",
                        "--command-timeout",
                    ],
                    false,
                );
                let shell_flag = out.argv[1..i.min(out.argv.len())]
                    .iter()
                    .filter_map(lit)
                    .any(|w| matches!(w, "-s" | "-i" | "--shell" | "--login"));
                if shell_flag && i >= out.argv.len() {
                    out.problems.push(format!(
                        "`{name}` opens a root shell reading commands airlock cannot see"
                    ));
                }
                i
            }
            "env" => {
                let mut i = 1;
                while i < out.argv.len() {
                    let Some(w) = lit(&out.argv[i]) else { break };
                    if w == "--" {
                        i += 1;
                        break;
                    }
                    if matches!(w, "-u" | "--unset") {
                        i += 2;
                    } else if matches!(w, "-C" | "--chdir") {
                        out.chdir = out.argv.get(i + 1).cloned();
                        i += 2;
                    } else if let Some(dir) = w.strip_prefix("--chdir=") {
                        out.chdir = Some(Word::lit(dir));
                        i += 1;
                    } else if matches!(w, "-S" | "--split-string")
                        || w.starts_with("--split-string=")
                        || (w.starts_with("-S") && w.len() > 2)
                    {
                        out.problems.push(
                            "`env -S` splits a string into a command line airlock does not re-parse"
                                .into(),
                        );
                        i += 1;
                    } else if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 {
                        // A cluster such as `-iC/dir` or `-iu NAME`: the first of C, u, S takes
                        // the rest of the cluster, or the next word, as its value.
                        let cluster = &w[1..];
                        if let Some((at, letter)) = cluster
                            .char_indices()
                            .find(|(_, c)| matches!(c, 'C' | 'u' | 'S'))
                        {
                            {
                                let rest = &cluster[at + 1..];
                                let value = if rest.is_empty() {
                                    i += 1;
                                    out.argv.get(i).cloned()
                                } else {
                                    Some(Word::lit(rest))
                                };
                                match letter {
                                    'C' => out.chdir = value,
                                    'S' => out.problems.push(
                                        "`env -S` splits a string into a command line airlock does not re-parse".into(),
                                    ),
                                    _ => {}
                                }
                            }
                        }
                        i += 1;
                    } else if w.starts_with('-') && w != "-" {
                        i += 1;
                    } else {
                        break;
                    }
                }
                while i < out.argv.len() {
                    match lit(&out.argv[i]).and_then(|w| w.split_once('=')) {
                        Some((k, v)) if is_name(k) => {
                            let value = match &out.argv[i] {
                                Word::Lit { glob, quoted, .. } => Word::Lit {
                                    value: v.to_string(),
                                    glob: *glob,
                                    quoted: *quoted,
                                },
                                d => d.clone(),
                            };
                            out.env.push((k.to_string(), value));
                            i += 1;
                        }
                        _ => break,
                    }
                }
                i
            }
            "command" => {
                let flags: Vec<&str> = out.argv[1..]
                    .iter()
                    .map_while(|w| lit(w).filter(|s| s.starts_with('-')))
                    .collect();
                if flags.iter().any(|f| f.contains('v') || f.contains('V')) {
                    return out;
                }
                skip_options(&out.argv, 1, &[], false)
            }
            "builtin" | "nohup" | "setsid" | "coproc" => skip_options(&out.argv, 1, &[], false),
            "time" => {
                // GNU time: `-f FORMAT`, `-o FILE` (which it writes), `--format=`, `--output=`.
                let i = skip_options(&out.argv, 1, &["-f", "-o", "--format", "--output"], false);
                let mut j = 1;
                while j < i.min(out.argv.len()) {
                    match out.argv[j].as_lit() {
                        Some("-o" | "--output") => {
                            if let Some(file) = out.argv.get(j + 1) {
                                out.writes.push(file.clone());
                            }
                            j += 2;
                        }
                        Some(w) if w.starts_with("--o") && w.contains('=') => {
                            let value = w.split_once('=').map(|(_, v)| v).unwrap_or("");
                            out.writes.push(Word::lit(value));
                            j += 1;
                        }
                        Some(w) if w.starts_with("-o") && w.len() > 2 => {
                            out.writes.push(Word::lit(&w[2..]));
                            j += 1;
                        }
                        _ => j += 1,
                    }
                }
                i
            }
            "watch" => {
                // `watch` joins its arguments and runs them with `sh -c`.
                let i = skip_options(
                    &out.argv,
                    1,
                    &["-n", "--interval", "-q", "--equexit"],
                    false,
                );
                let words: Option<Vec<&str>> =
                    out.argv[i.min(out.argv.len())..].iter().map(lit).collect();
                match words {
                    Some(words) if !words.is_empty() => {
                        out.inner.push(Inner::Script {
                            text: words.join(" "),
                            positional: Vec::new(),
                        });
                        out.replaced = true;
                    }
                    _ => out
                        .problems
                        .push("`watch` runs a command built at run time".into()),
                }
                return out;
            }
            // The grammar reads `! { cmd; }` and `time { cmd; }` as a command named `{`.
            "{" => 1,
            "exec" => skip_options(&out.argv, 1, &["-a"], false),
            "nice" => skip_options(&out.argv, 1, &["-n", "--adjustment"], true),
            "ionice" => skip_options(&out.argv, 1, &["-c", "-n", "--class", "--classdata"], false),
            "stdbuf" => skip_options(&out.argv, 1, &["-i", "-o", "-e"], false),
            "timeout" => {
                let i = skip_options(
                    &out.argv,
                    1,
                    &["-s", "-k", "--signal", "--kill-after"],
                    false,
                );
                i + 1 // the duration
            }
            "xargs" => return unwrap_xargs(out),
            "find" => {
                extract_find_exec(&mut out);
                return out;
            }
            "eval" => {
                let words: Option<Vec<&str>> = out.argv[1..].iter().map(lit).collect();
                match words {
                    Some(words) if !words.is_empty() => out.inner.push(Inner::Script {
                        text: words.join(" "),
                        positional: Vec::new(),
                    }),
                    Some(_) => {}
                    None => out
                        .problems
                        .push("`eval` runs a string built at run time".into()),
                }
                return out;
            }
            "trap" => {
                let first = skip_options(&out.argv, 1, &[], false);
                if let Some(action) = out.argv.get(first).and_then(lit) {
                    if !action.starts_with('-') || first > 1 {
                        out.inner.push(Inner::Script {
                            text: action.to_string(),
                            positional: Vec::new(),
                        });
                    }
                } else if out.argv.len() > first {
                    out.problems
                        .push("`trap` installs a handler built at run time".into());
                }
                return out;
            }
            shell if SHELLS.contains(&shell) => {
                unwrap_shell(&mut out);
                return out;
            }
            _ => return out,
        };
        if rest_from >= out.argv.len() {
            // The wrapper runs nothing else: it is the command itself (`env`, `sudo -v`, `exec >f`).
            return out;
        }
        out.wrappers.push(name);
        out.argv.drain(..rest_from);
    }
    out.problems
        .push("more than 16 nested wrappers; airlock stopped unwrapping".into());
    out
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// `bash -c STRING`: the string is the command. Option clusters such as `-lc`, `-ec`, `-xc` count.
fn unwrap_shell(out: &mut Unwrapped) {
    let mut i = 1;
    let mut has_c = false;
    if out
        .argv
        .first()
        .and_then(lit)
        .map(|n| n.ends_with("busybox"))
        == Some(true)
    {
        // `busybox sh -c ...`
        match out.argv.get(1).and_then(lit) {
            Some(s) if SHELLS.contains(&s) || s == "sh" => i = 2,
            _ => return,
        }
    }
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else { break };
        if w == "--" {
            i += 1;
            break;
        }
        if matches!(w, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 {
            if !w.starts_with("--") && w[1..].contains('c') {
                has_c = true;
            }
            i += 1;
            continue;
        }
        break;
    }
    if !has_c {
        return;
    }
    match out.argv.get(i) {
        Some(Word::Lit { value, .. }) => {
            out.inner.push(Inner::Script {
                text: value.clone(),
                positional: out.argv[i + 1..].to_vec(),
            });
            out.replaced = true;
        }
        Some(Word::Dynamic { .. }) => out
            .problems
            .push("the shell runs a command string built at run time".into()),
        None => out.problems.push("`-c` without a command string".into()),
    }
}

fn unwrap_xargs(mut out: Unwrapped) -> Unwrapped {
    let with_value = [
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--max-chars",
        "--replace",
        "--eof",
        "--process-slot-var",
    ];
    let mut i = 1;
    let mut replace: Option<String> = None;
    while i < out.argv.len() {
        let Some(w) = lit(&out.argv[i]) else { break };
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        if w == "-a" || w.starts_with("--arg-file") {
            match w.split_once('=') {
                Some((_, f)) => out.reads.push(Word::lit(f)),
                None => out.reads.extend(out.argv.get(i + 1).cloned()),
            }
        } else if let Some(f) = w.strip_prefix("-a") {
            out.reads.push(Word::lit(f));
        }
        if w == "-I" || w == "--replace" {
            replace = out.argv.get(i + 1).and_then(lit).map(str::to_string);
        } else if let Some(r) = w.strip_prefix("--replace=") {
            replace = Some(r.to_string());
        } else if w == "-i" {
            replace = Some("{}".into());
        } else if let Some(r) = w.strip_prefix("-I") {
            replace = Some(r.to_string());
        } else if let Some(r) = w.strip_prefix("-i") {
            replace = Some(r.to_string());
        }
        i += if with_value.contains(&w) { 2 } else { 1 };
    }
    out.wrappers.push("xargs".into());
    out.via_xargs = true;
    let unknown = || Word::Dynamic {
        text: "<input of xargs>".into(),
        vars: Vec::new(),
    };
    if i >= out.argv.len() {
        // xargs with no command runs `echo`.
        out.argv = vec![Word::lit("echo"), unknown()];
        return out;
    }
    let mut inner: Vec<Word> = out.argv.drain(i..).collect();
    match replace {
        Some(r) if !r.is_empty() => {
            for w in inner.iter_mut().skip(1) {
                if w.as_lit().is_some_and(|s| s.contains(r.as_str())) {
                    *w = unknown();
                }
            }
        }
        _ => inner.push(unknown()),
    }
    out.argv = inner;
    // The inner command may itself be wrapped (`xargs sudo rm`, `xargs sh -c '...'`).
    let nested = unwrap(std::mem::take(&mut out.argv));
    out.wrappers.extend(nested.wrappers);
    out.env.extend(nested.env);
    out.argv = nested.argv;
    out.inner.extend(nested.inner);
    out.replaced = nested.replaced;
    out.problems.extend(nested.problems);
    out
}

/// Finds `-exec ... ;` / `-exec ... +` (and `-execdir`, `-ok`, `-okdir`), removes them from the
/// `find` argv and returns what they run, with `{}` replaced by each starting point of the search.
fn extract_find_exec(out: &mut Unwrapped) {
    let (roots, _) = crate::approval::programs::find_roots(&out.argv[1..]);
    let mut kept = Vec::new();
    let mut i = 0;
    while i < out.argv.len() {
        let is_exec = matches!(
            out.argv[i].as_lit(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        );
        if !is_exec {
            kept.push(out.argv[i].clone());
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut inner = Vec::new();
        while j < out.argv.len() && !matches!(out.argv[j].as_lit(), Some(";" | "+")) {
            if out.argv[j].as_lit() == Some("{}") {
                inner.extend(roots.iter().cloned());
            } else {
                inner.push(out.argv[j].clone());
            }
            j += 1;
        }
        if !inner.is_empty() {
            out.inner.push(Inner::FindExec(inner));
        }
        i = j + 1;
    }
    out.argv = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::lit).collect()
    }

    fn names(u: &Unwrapped) -> Vec<&str> {
        u.argv.iter().map(Word::display).collect()
    }

    #[test]
    fn nested_wrappers_come_off_down_to_the_real_program() {
        let u = unwrap(argv(
            "sudo -u root env -i FOO=1 timeout -s KILL 5 nice -n 10 nohup rm -rf /",
        ));
        assert_eq!(names(&u), vec!["rm", "-rf", "/"]);
        assert_eq!(u.wrappers, vec!["sudo", "env", "timeout", "nice", "nohup"]);
        assert_eq!(u.env[0].0, "FOO");
    }

    #[test]
    fn a_wrapper_with_nothing_to_run_is_the_command_itself() {
        assert_eq!(names(&unwrap(argv("env"))), vec!["env"]);
        assert_eq!(
            names(&unwrap(argv("command -v rm"))),
            vec!["command", "-v", "rm"]
        );
    }

    #[test]
    fn xargs_hands_its_input_to_the_inner_command() {
        let u = unwrap(argv("xargs -0 -n 1 rm -f"));
        assert_eq!(u.argv[0].display(), "rm");
        assert!(u.argv.last().is_some_and(Word::is_dynamic));
        let u = unwrap(argv("xargs -I % cp % /etc/"));
        assert!(u.argv[1].is_dynamic());
        assert_eq!(u.argv[2].display(), "/etc/");
    }

    #[test]
    fn find_exec_is_pulled_out_with_the_search_roots_in_place_of_braces() {
        let u = unwrap(argv("find /etc -name x -exec rm {} ;"));
        assert_eq!(names(&u), vec!["find", "/etc", "-name", "x"]);
        assert_eq!(
            u.inner,
            vec![Inner::FindExec(vec![Word::lit("rm"), Word::lit("/etc")])]
        );
    }

    #[test]
    fn a_shell_with_dash_c_is_replaced_by_its_string() {
        let u = unwrap(vec![
            Word::lit("bash"),
            Word::lit("-lc"),
            Word::lit("rm -rf ~"),
        ]);
        assert!(u.replaced);
        assert_eq!(
            u.inner,
            vec![Inner::Script {
                text: "rm -rf ~".into(),
                positional: vec![]
            }]
        );
        assert_eq!(
            program_name(&Word::lit("/usr/bin/env")).as_deref(),
            Some("env")
        );
        assert_eq!(program_name(&Word::lit("./env")).as_deref(), Some("./env"));
    }
}
