//! What each program does, as far as airlock knows: the effects of one simple command.
//!
//! This is the curated knowledge behind "provably read-only": a program is read-only only if it is
//! listed here and none of its writing or executing flags are present. Anything not listed is
//! `Unknown`, which asks. The policy turns effects into reasons; this file only describes.

use crate::approval::shell::{SimpleCommand, Stdin, Word};

/// One thing a simple command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Reads the file or directory the word names.
    Read(Word),
    /// Creates or changes the file or directory the word names.
    Write(Word),
    /// Removes the file or directory the word names.
    Delete(Word),
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
    /// Changes how the shell reads the rest of the command (`shopt`, `alias`, `set -o`...).
    ShellBehaviour(String),
    /// A program airlock knows nothing about.
    Unknown(String),
    /// Something airlock cannot see through.
    Opaque(String),
}

/// Environment variables that only change formatting or logging.
const BENIGN_ENV_SETTINGS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "TERM",
    "COLUMNS",
    "LINES",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "CARGO_TERM_COLOR",
    "CI",
    "DEBUG",
    "VERBOSE",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "NODE_ENV",
    "GIT_TERMINAL_PROMPT",
    "TIMEFORMAT",
    "CARGO_INCREMENTAL",
    "RUSTFLAGS_QUIET",
];

fn lit(w: &Word) -> Option<&str> {
    w.as_lit()
}

/// Arguments after the program name.
struct Args<'a> {
    words: &'a [Word],
}

impl<'a> Args<'a> {
    fn iter(&self) -> impl Iterator<Item = &'a Word> {
        self.words.iter()
    }

    /// True when a long option is present (`--name` or `--name=value`) or a short option letter
    /// appears in a cluster (`-i`, `-ni`) before `--`.
    fn has(&self, short: &[char], long: &[&str]) -> bool {
        for w in self.words {
            let Some(s) = lit(w) else { continue };
            if s == "--" {
                break;
            }
            if let Some(name) = s.strip_prefix("--") {
                let name = name.split('=').next().unwrap_or(name);
                if long.contains(&name) {
                    return true;
                }
            } else if let Some(cluster) = s.strip_prefix('-') {
                if cluster.chars().any(|c| short.contains(&c)) {
                    return true;
                }
            }
        }
        false
    }

    /// Non-option words (every word after `--`). Dynamic words count as non-options.
    fn positional(&self) -> Vec<&'a Word> {
        let mut out = Vec::new();
        let mut after_dashdash = false;
        for w in self.words {
            match lit(w) {
                Some("--") if !after_dashdash => after_dashdash = true,
                Some(s) if !after_dashdash && s.starts_with('-') && s != "-" => {}
                _ => out.push(w),
            }
        }
        out
    }

    /// Values given as `--opt=value` or `-o value` / `-ovalue` for the listed option names.
    fn values_of(&self, short: &[&str], long: &[&str]) -> Vec<Word> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.words.len() {
            let Some(s) = lit(&self.words[i]) else {
                i += 1;
                continue;
            };
            if s == "--" {
                break;
            }
            if let Some((name, value)) = s.strip_prefix("--").and_then(|n| n.split_once('=')) {
                if long.contains(&name) {
                    out.push(Word::lit(value));
                }
            } else if let Some(name) = s.strip_prefix("--") {
                if long.contains(&name) {
                    if let Some(v) = self.words.get(i + 1) {
                        out.push(v.clone());
                        i += 1;
                    }
                }
            } else {
                for opt in short {
                    if s == *opt {
                        if let Some(v) = self.words.get(i + 1) {
                            out.push(v.clone());
                            i += 1;
                        }
                    } else if let Some(attached) = s.strip_prefix(opt) {
                        if !attached.is_empty() {
                            out.push(Word::lit(attached));
                        }
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// Every word that looks like a path, including `--opt=/a/path` values.
    fn path_like(&self) -> Vec<Word> {
        let mut out = Vec::new();
        for w in self.words {
            match w {
                Word::Lit { value, .. } => {
                    if let Some((_, v)) = value.strip_prefix("--").and_then(|n| n.split_once('=')) {
                        if looks_like_path(v) {
                            out.push(Word::lit(v));
                        }
                    } else if !value.starts_with('-') || value == "-" {
                        out.push(w.clone());
                    }
                }
                Word::Dynamic { .. } => out.push(w.clone()),
            }
        }
        out
    }
}

fn looks_like_path(s: &str) -> bool {
    s.starts_with('/') || s.starts_with('~') || s.starts_with('.') || s.contains('/')
}

fn reads(words: impl IntoIterator<Item = Word>) -> Vec<Effect> {
    words
        .into_iter()
        .filter(|w| lit(w) != Some("-"))
        .map(Effect::Read)
        .collect()
}

/// The effects of one simple command.
pub fn classify(cmd: &SimpleCommand) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (name, _) in &cmd.env {
        if !BENIGN_ENV_SETTINGS.contains(&name.as_str()) && !name.starts_with("LC_") {
            effects.push(Effect::ConfigInjection(format!(
                "sets `{name}` for the command, which can change what it loads or runs"
            )));
        }
    }
    for w in &cmd.wrappers {
        if w == "sudo" || w == "doas" {
            effects.push(Effect::Privileged(format!(
                "runs as another user via `{w}`"
            )));
        }
    }
    let Some(first) = cmd.argv.first() else {
        return effects;
    };
    let Some(name) = lit(first) else {
        effects.push(Effect::Opaque(format!(
            "the command name `{}` is computed at run time",
            first.display()
        )));
        return effects;
    };
    if let Word::Lit { glob: true, .. } = first {
        effects.push(Effect::Opaque(format!(
            "the command name `{name}` is a file name pattern"
        )));
        return effects;
    }
    if cmd.name_disguised {
        effects.push(Effect::Opaque(format!(
            "the command name `{name}` is spelled with quotes or escapes, a way to slip past checks"
        )));
    }
    if cmd.is_script_function {
        return effects;
    }
    let args = Args {
        words: &cmd.argv[1..],
    };
    if name.contains('/') {
        effects.push(Effect::RunsCode(format!("runs the program `{name}`")));
        effects.push(Effect::Read(first.clone()));
        return effects;
    }
    effects.extend(program_effects(name, &args, cmd));
    effects
}

/// Programs whose every effect is to print something about their arguments, which are paths.
const READ_PATHS: &[&str] = &[
    "cat",
    "tac",
    "nl",
    "head",
    "tail",
    "wc",
    "ls",
    "dir",
    "vdir",
    "stat",
    "du",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "shasum",
    "strings",
    "od",
    "hexdump",
    "readlink",
    "realpath",
    "cut",
    "column",
    "fold",
    "fmt",
    "paste",
    "join",
    "expand",
    "unexpand",
    "rev",
    "diff",
    "cmp",
    "comm",
    "file",
    "base64",
    "base32",
    "basenc",
    "numfmt",
    "look",
    "iconv",
    "lsattr",
    "getfacl",
    "namei",
];

/// Programs that print something without reading files named by their arguments.
const READ_NOTHING: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "pwd",
    "whoami",
    "id",
    "groups",
    "uname",
    "nproc",
    "uptime",
    "cal",
    "seq",
    "sleep",
    "yes",
    "tr",
    "test",
    "[",
    "expr",
    "basename",
    "dirname",
    "which",
    "type",
    "whereis",
    "locale",
    "tty",
    "arch",
    "logname",
    "users",
    "who",
    "w",
    "ps",
    "pgrep",
    "free",
    "vmstat",
    "lscpu",
    "getconf",
    "shift",
    "exit",
    "return",
    "break",
    "continue",
    "wait",
    "read",
    "getopts",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "let",
    "jobs",
    "unset",
    "local",
    "mapfile",
    "readarray",
    "hash",
    "help",
    "times",
    "lsb_release",
    "df",
    "mktemp",
    "clear",
    "tput",
    "stty",
];

/// Programs that run code of the project or of a toolchain.
const RUNS_CODE: &[&str] = &[
    "cargo",
    "rustc",
    "rustup",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "bun",
    "bunx",
    "deno",
    "node",
    "python",
    "python3",
    "python2",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "uvx",
    "poetry",
    "pytest",
    "tox",
    "nox",
    "go",
    "make",
    "gmake",
    "cmake",
    "ninja",
    "meson",
    "gradle",
    "gradlew",
    "mvn",
    "ant",
    "gcc",
    "g++",
    "cc",
    "c++",
    "clang",
    "clang++",
    "ld",
    "javac",
    "java",
    "kotlin",
    "ruby",
    "bundle",
    "rake",
    "gem",
    "perl",
    "php",
    "composer",
    "dotnet",
    "swift",
    "swiftc",
    "tsc",
    "eslint",
    "prettier",
    "jest",
    "vitest",
    "mocha",
    "just",
    "bazel",
    "bazelisk",
    "cargo-nextest",
    "rustfmt",
    "clippy-driver",
    "black",
    "ruff",
    "mypy",
    "flake8",
    "pylint",
    "isort",
    "shellcheck",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "ansible",
    "ansible-playbook",
    "lua",
    "luajit",
    "Rscript",
    "julia",
    "ghc",
    "stack",
    "cabal",
    "mix",
    "elixir",
    "erl",
    "zig",
    "nim",
    "dart",
    "flutter",
    "scala",
    "sbt",
    "lein",
    "clj",
    "vite",
    "webpack",
    "rollup",
    "esbuild",
    "turbo",
    "nx",
    "lerna",
    "pre-commit",
];

const INTERPRETERS_INLINE: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python3", &["-c"]),
    ("python2", &["-c"]),
    ("node", &["-e", "-p", "--eval", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("Rscript", &["-e"]),
];

const NETWORK: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "sftp",
    "ftp",
    "telnet",
    "http",
    "https",
    "xh",
    "aria2c",
    "dig",
    "nslookup",
    "host",
    "ping",
    "ping6",
    "traceroute",
    "whois",
    "gh",
    "aws",
    "gcloud",
    "az",
    "rsync",
    "mosh",
    "lftp",
    "tftp",
];

const SYSTEM_CHANGE: &[&str] = &[
    "reboot",
    "shutdown",
    "halt",
    "poweroff",
    "mount",
    "umount",
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "useradd",
    "userdel",
    "usermod",
    "groupadd",
    "passwd",
    "chsh",
    "chpasswd",
    "visudo",
    "mkfs",
    "fdisk",
    "parted",
    "wipefs",
    "mkswap",
    "swapon",
    "swapoff",
    "insmod",
    "rmmod",
    "modprobe",
    "sysctl",
    "update-rc.d",
    "apt",
    "apt-get",
    "dpkg",
    "yum",
    "dnf",
    "pacman",
    "apk",
    "brew",
    "snap",
    "flatpak",
    "defaults",
    "scutil",
    "networksetup",
    "setcap",
];

fn program_effects(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
    if READ_PATHS.contains(&name) {
        return reads(args.path_like());
    }
    if READ_NOTHING.contains(&name) {
        return read_nothing(name, args);
    }
    if name.starts_with("mkfs.") || name.starts_with("mkfs") {
        return vec![Effect::SystemChange(format!("`{name}` formats a disk"))];
    }
    match name {
        "grep" | "egrep" | "fgrep" | "zgrep" | "rg" | "ag" | "ack" => search(name, args),
        "find" => find(args),
        "fd" | "fdfind" => fd(args),
        "sed" => sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(name, args),
        "jq" => jq(args),
        "sort" => {
            let mut e = reads(args.path_like());
            if args.has(&['o'], &["output"]) {
                e.extend(
                    args.values_of(&["-o"], &["output"])
                        .into_iter()
                        .map(Effect::Write),
                );
            }
            if args.has(&[], &["compress-program"]) {
                e.push(Effect::RunsCode(
                    "`sort --compress-program` runs a program".into(),
                ));
            }
            e
        }
        "uniq" => {
            let pos = args.positional();
            let mut e: Vec<Effect> = pos
                .iter()
                .take(1)
                .map(|w| Effect::Read((*w).clone()))
                .collect();
            if let Some(out) = pos.get(1) {
                e.push(Effect::Write((*out).clone()));
            }
            e
        }
        "xxd" => {
            let pos = args.positional();
            let mut e: Vec<Effect> = pos
                .iter()
                .take(1)
                .map(|w| Effect::Read((*w).clone()))
                .collect();
            if let Some(out) = pos.get(1) {
                e.push(Effect::Write((*out).clone()));
            }
            e
        }
        "tree" => {
            let mut e = reads(args.path_like());
            e.extend(args.values_of(&["-o"], &[]).into_iter().map(Effect::Write));
            e
        }
        "date" => {
            if args.has(&['s'], &["set"]) {
                vec![Effect::SystemChange(
                    "`date -s` sets the system clock".into(),
                )]
            } else {
                reads(args.values_of(&["-f", "-r"], &["file", "reference"]))
            }
        }
        "hostname" => {
            if args.positional().is_empty() {
                vec![]
            } else {
                vec![Effect::SystemChange(
                    "`hostname NAME` renames the machine".into(),
                )]
            }
        }
        "tee" => args
            .positional()
            .into_iter()
            .cloned()
            .map(Effect::Write)
            .collect(),
        "touch" | "mkdir" | "truncate" | "mkfifo" | "mknod" => {
            let mut e: Vec<Effect> = args
                .positional()
                .into_iter()
                .cloned()
                .map(Effect::Write)
                .collect();
            e.extend(
                args.values_of(&["-r"], &["reference"])
                    .into_iter()
                    .map(Effect::Read),
            );
            e
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            let pos = args.positional();
            pos.into_iter()
                .skip(1)
                .cloned()
                .map(Effect::Write)
                .collect()
        }
        "rm" | "rmdir" | "unlink" | "shred" | "srm" => {
            let mut e: Vec<Effect> = args
                .positional()
                .into_iter()
                .cloned()
                .map(Effect::Delete)
                .collect();
            if e.is_empty() {
                e.push(Effect::Delete(Word::Dynamic {
                    text: "<nothing named>".into(),
                    vars: vec![],
                }));
            }
            e
        }
        "cp" | "install" | "ln" | "link" => copy_like(name, args),
        "mv" => {
            let target = args.values_of(&["-t"], &["target-directory"]);
            let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
            let dest = if let Some(t) = target.into_iter().next() {
                Some(t)
            } else {
                pos.pop()
            };
            let mut e: Vec<Effect> = pos.into_iter().map(Effect::Delete).collect();
            e.extend(dest.map(Effect::Write));
            e
        }
        "dd" => {
            let mut e = Vec::new();
            for w in args.iter() {
                match lit(w) {
                    Some(s) if s.starts_with("if=") => e.push(Effect::Read(Word::lit(&s[3..]))),
                    Some(s) if s.starts_with("of=") => e.push(Effect::Write(Word::lit(&s[3..]))),
                    None => e.push(Effect::Opaque(
                        "`dd` with an operand computed at run time".into(),
                    )),
                    _ => {}
                }
            }
            e
        }
        "tar" | "bsdtar" => tar(args),
        "unzip" => {
            if args.has(&['l', 'v', 't', 'p', 'Z'], &[]) {
                reads(args.positional().into_iter().take(1).cloned())
            } else {
                let mut e = reads(args.positional().into_iter().take(1).cloned());
                let dir = args.values_of(&["-d"], &[]);
                if dir.is_empty() {
                    e.push(Effect::Write(Word::lit(".")));
                } else {
                    e.extend(dir.into_iter().map(Effect::Write));
                }
                e
            }
        }
        "zip" | "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd"
        | "lz4" | "compress" | "uncompress" => {
            if args.has(&['c', 'l', 't'], &["stdout", "to-stdout", "list", "test"]) && name != "zip"
            {
                reads(args.path_like())
            } else {
                args.positional()
                    .into_iter()
                    .flat_map(|w| [Effect::Write(w.clone()), Effect::Delete(w.clone())])
                    .collect()
            }
        }
        "zcat" | "bzcat" | "xzcat" | "zstdcat" | "zless" => reads(args.path_like()),
        "split" | "csplit" => vec![Effect::Write(Word::lit("."))],
        "patch" => {
            let mut e = reads(args.values_of(&["-i"], &["input"]));
            e.push(Effect::Write(Word::Dynamic {
                text: "<files named inside the patch>".into(),
                vars: vec![],
            }));
            e
        }
        "env" | "printenv" => {
            if name == "printenv" && !args.positional().is_empty() {
                vec![Effect::EnvironmentDump(format!(
                    "prints environment variables {}",
                    args.positional()
                        .iter()
                        .map(|w| w.display())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))]
            } else {
                vec![Effect::EnvironmentDump(format!(
                    "`{name}` prints the whole environment"
                ))]
            }
        }
        "set" => {
            // Options only make globbing and expansion narrower than airlock assumes.
            if args.words.is_empty() {
                vec![Effect::EnvironmentDump(
                    "`set` prints every variable".into(),
                )]
            } else {
                vec![]
            }
        }
        "export" | "declare" | "typeset" | "readonly" => vec![],
        "command" => vec![],
        "exec" => vec![],
        "builtin" | "nohup" | "time" | "nice" | "timeout" | "stdbuf" | "setsid" | "ionice" => {
            vec![]
        }
        "sudo" | "doas" | "su" => vec![
            Effect::Privileged(format!("`{name}` changes user")),
            Effect::Opaque(format!("`{name}` without a command to run")),
        ],
        "xargs" => vec![],
        "eval" => vec![Effect::Opaque("`eval` runs a string as shell code".into())],
        "source" | "." => {
            let mut e = vec![Effect::RunsCode(format!(
                "`{name}` runs a shell file in this shell"
            ))];
            e.extend(reads(args.positional().into_iter().take(1).cloned()));
            e
        }
        "trap" => vec![],
        "shopt" | "alias" | "unalias" | "enable" => {
            if name == "shopt"
                && (args.words.is_empty() || args.has(&['p', 'q'], &[]))
                && !args.has(&['s', 'u'], &[])
            {
                vec![]
            } else {
                vec![Effect::ShellBehaviour(format!(
                    "`{name}` changes how the shell reads the commands that follow"
                ))]
            }
        }
        "umask" => vec![],
        "kill" | "pkill" | "killall" | "skill" => {
            vec![Effect::ProcessControl(format!(
                "`{name}` signals other processes"
            ))]
        }
        "crontab" => {
            if args.has(&['l'], &[]) {
                vec![]
            } else {
                vec![Effect::SystemChange(
                    "`crontab` installs jobs that run later".into(),
                )]
            }
        }
        "systemctl" | "service" | "launchctl" => {
            let sub = args.positional().first().and_then(|w| lit(w)).unwrap_or("");
            if matches!(
                sub,
                "status"
                    | "list-units"
                    | "list-unit-files"
                    | "is-active"
                    | "is-enabled"
                    | "show"
                    | "cat"
                    | "list"
                    | "print"
            ) {
                vec![]
            } else {
                vec![Effect::SystemChange(format!(
                    "`{name} {sub}` changes system services"
                ))]
            }
        }
        n if SYSTEM_CHANGE.contains(&n) => {
            vec![Effect::SystemChange(format!("`{n}` changes the system"))]
        }
        "git" => crate::approval::git::effects(args.words),
        "security" | "secret-tool" | "keyctl" | "pass" | "op" | "vault" | "gopass"
        | "keepassxc-cli" => {
            vec![Effect::CredentialAccess(format!(
                "`{name}` reads a password store or keychain"
            ))]
        }
        "gpg" | "gpg2" => {
            if args.has(
                &[],
                &[
                    "export-secret-keys",
                    "export-secret-subkeys",
                    "export-ssh-key",
                ],
            ) {
                vec![Effect::CredentialAccess("`gpg` exports secret keys".into())]
            } else {
                vec![Effect::RunsCode("runs `gpg`".into())]
            }
        }
        "ssh-add" | "ssh-keygen" | "ssh-agent" | "ssh-copy-id" => {
            vec![Effect::CredentialAccess(format!(
                "`{name}` handles SSH keys"
            ))]
        }
        n if SHELLS_NO_C.contains(&n) => shell_without_c(n, args, cmd),
        n if NETWORK.contains(&n) => network(n, args),
        n if RUNS_CODE.contains(&n) => runs_code(n, args, cmd),
        "less" | "more" | "most" | "vi" | "vim" | "nvim" | "nano" | "emacs" | "ed" | "ex" => {
            vec![Effect::Unknown(format!(
                "`{name}` is interactive and can run commands"
            ))]
        }
        _ => vec![Effect::Unknown(format!(
            "`{name}` is not a program airlock knows to be read-only"
        ))],
    }
}

const SHELLS_NO_C: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish",
];

fn read_nothing(name: &str, args: &Args) -> Vec<Effect> {
    match name {
        "mktemp" => vec![Effect::Write(Word::lit("/tmp"))],
        "df" => vec![],
        "stty" | "tput" => vec![],
        "printf" => vec![],
        _ => {
            let _ = args;
            vec![]
        }
    }
}

fn search(name: &str, args: &Args) -> Vec<Effect> {
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

fn find(args: &Args) -> Vec<Effect> {
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

fn fd(args: &Args) -> Vec<Effect> {
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

fn sed(args: &Args) -> Vec<Effect> {
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

fn awk(name: &str, args: &Args) -> Vec<Effect> {
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

fn jq(args: &Args) -> Vec<Effect> {
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

fn copy_like(name: &str, args: &Args) -> Vec<Effect> {
    let target = args.values_of(&["-t"], &["target-directory"]);
    let mut pos: Vec<Word> = args.positional().into_iter().cloned().collect();
    pos.retain(|w| !target.contains(w));
    let mut e = Vec::new();
    let dest = if let Some(t) = target.into_iter().next() {
        Some(t)
    } else if name == "ln" && pos.len() == 1 {
        Some(Word::lit("."))
    } else {
        pos.pop()
    };
    if name == "ln" || name == "link" {
        // A link's target is not read now; reading through the link later is judged then.
    } else {
        e.extend(reads(pos));
    }
    if let Some(d) = dest {
        e.push(Effect::Write(d));
    }
    e
}

fn tar(args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let first = args.words.first().and_then(lit).unwrap_or("");
    let bundled = if !first.starts_with('-') { first } else { "" };
    let mode = |c: char, long: &str| bundled.contains(c) || args.has(&[c], &[long]);
    if args.has(
        &['I'],
        &[
            "use-compress-program",
            "to-command",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
        ],
    ) {
        e.push(Effect::RunsCode("`tar` is told to run a program".into()));
    }
    let files = args.values_of(&["-f"], &["file"]);
    let bundled_file = if bundled.contains('f') {
        args.words.get(1).cloned()
    } else {
        None
    };
    let archive: Vec<Word> = files.into_iter().chain(bundled_file).collect();
    if mode('t', "list") {
        e.extend(reads(archive));
    } else if mode('x', "extract") || mode('x', "get") {
        e.extend(reads(archive));
        let dirs = args.values_of(&["-C"], &["directory"]);
        if dirs.is_empty() {
            e.push(Effect::Write(Word::lit(".")));
        } else {
            e.extend(dirs.into_iter().map(Effect::Write));
        }
    } else if mode('c', "create") || mode('r', "append") || mode('u', "update") {
        e.extend(archive.into_iter().map(Effect::Write));
        let skip = usize::from(!bundled.is_empty()) + usize::from(bundled.contains('f'));
        e.extend(reads(
            args.words
                .iter()
                .skip(skip)
                .filter(|w| !lit(w).is_some_and(|s| s.starts_with('-')))
                .cloned(),
        ));
    } else {
        e.push(Effect::Unknown(
            "`tar` in a mode airlock does not recognise".into(),
        ));
    }
    e
}

fn shell_without_c(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
    let pos = args.positional();
    if let Some(script) = pos.first() {
        let mut e = vec![Effect::RunsCode(format!(
            "`{name}` runs the script `{}`",
            script.display()
        ))];
        e.push(Effect::Read((*script).clone()));
        return e;
    }
    if args.has(&['c'], &[]) {
        // A `-c` whose string was dynamic; the walker already flagged it.
        return vec![Effect::Opaque(format!(
            "`{name} -c` with a command string built at run time"
        ))];
    }
    if cmd.stdin_script_analyzed {
        return vec![];
    }
    let from = match &cmd.stdin {
        Stdin::Pipe { producers, decoded } => {
            let decoded = *decoded || producers.iter().any(|p| DECODERS.contains(&p.as_str()));
            let downloaded = producers.iter().any(|p| NETWORK.contains(&p.as_str()));
            if decoded {
                format!(
                    "a decoded payload piped in from `{}`",
                    producers.join(" | ")
                )
            } else if downloaded {
                format!("code downloaded by `{}`", producers.join(" | "))
            } else {
                format!("commands piped in from `{}`", producers.join(" | "))
            }
        }
        Stdin::Inline { .. } => "a here-doc built at run time".to_string(),
        Stdin::File => "a file redirected into it".to_string(),
        Stdin::Inherited => "its standard input".to_string(),
    };
    vec![Effect::StdinScript(format!(
        "`{name}` runs {from}, which airlock cannot see"
    ))]
}

const DECODERS: &[&str] = &[
    "base64", "base32", "basenc", "xxd", "openssl", "gunzip", "zcat", "uudecode", "gzip", "bzip2",
    "xz", "rev",
];

fn network(name: &str, args: &Args) -> Vec<Effect> {
    let mut e = vec![Effect::Network(format!("`{name}` uses the network"))];
    match name {
        "curl" => {
            e.extend(
                args.values_of(&["-o"], &["output"])
                    .into_iter()
                    .map(Effect::Write),
            );
            if args.has(&['O'], &["remote-name", "remote-name-all"]) {
                e.push(Effect::Write(Word::lit(".")));
            }
            for v in args.values_of(
                &["-d", "-F", "-T"],
                &[
                    "data",
                    "data-binary",
                    "data-raw",
                    "data-urlencode",
                    "form",
                    "upload-file",
                    "json",
                ],
            ) {
                if let Some(s) = lit(&v) {
                    let file = s.rsplit_once('@').map(|(_, f)| f).unwrap_or("");
                    if s.starts_with('@') || s.contains("=@") || s.contains("=<") {
                        e.push(Effect::Read(Word::lit(file.trim_start_matches('<'))));
                    } else if !s.contains('@') && args.has(&['T'], &["upload-file"]) {
                        e.push(Effect::Read(v.clone()));
                    }
                } else {
                    e.push(Effect::Opaque(
                        "`curl` sends data computed at run time".into(),
                    ));
                }
            }
            e.extend(reads(args.values_of(&["-K"], &["config"])));
        }
        "wget" => {
            let out = args.values_of(&["-O"], &["output-document"]);
            if out.is_empty() && !args.has(&[], &["spider"]) {
                e.push(Effect::Write(Word::lit(".")));
            }
            e.extend(
                out.into_iter()
                    .filter(|w| lit(w) != Some("-"))
                    .map(Effect::Write),
            );
            e.extend(reads(args.values_of(&[], &["post-file", "body-file"])));
        }
        "scp" | "rsync" | "sftp" => {
            let pos: Vec<Word> = args.positional().into_iter().cloned().collect();
            let remote = |w: &Word| lit(w).is_some_and(|s| s.contains(':') && !s.starts_with('/'));
            if let Some((dest, sources)) = pos.split_last() {
                if !remote(dest) {
                    e.push(Effect::Write(dest.clone()));
                }
                e.extend(reads(sources.iter().filter(|w| !remote(w)).cloned()));
            }
        }
        "ssh" => e.push(Effect::RunsCode(
            "`ssh` runs commands on another machine".into(),
        )),
        "gh" => {
            let words: Vec<&str> = args.iter().filter_map(|w| w.as_lit()).collect();
            if words.windows(2).any(|p| p == ["auth", "token"]) || words.contains(&"--show-token") {
                e.push(Effect::CredentialAccess(
                    "`gh auth token` prints a GitHub token".into(),
                ));
            }
        }
        _ => {}
    }
    e
}

fn runs_code(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
    let words: Vec<&str> = args.words.iter().filter_map(|w| w.as_lit()).collect();
    // `X --version` and friends print a version and run nothing of the project.
    if matches!(
        words.as_slice(),
        ["--version"] | ["-V"] | ["-v"] | ["version"] | ["--help"] | ["-h"] | ["help"]
    ) && args.words.len() == 1
    {
        return vec![];
    }
    for (interp, flags) in INTERPRETERS_INLINE {
        if *interp == name
            && args
                .iter()
                .any(|w| lit(w).is_some_and(|s| flags.contains(&s)))
        {
            return vec![Effect::InlineCode(format!(
                "`{name}` runs inline code airlock does not analyse"
            ))];
        }
    }
    if matches!(
        name,
        "python" | "python3" | "python2" | "node" | "ruby" | "perl" | "php" | "lua"
    ) && args.positional().is_empty()
        && !matches!(cmd.stdin, Stdin::Inherited)
    {
        return vec![Effect::StdinScript(format!(
            "`{name}` runs code from its standard input"
        ))];
    }
    let sub = args
        .positional()
        .first()
        .and_then(|w| lit(w))
        .unwrap_or("")
        .to_string();
    let mut e = vec![Effect::RunsCode(if sub.is_empty() {
        format!("runs `{name}`, which executes project or toolchain code")
    } else {
        format!("runs `{name} {sub}`, which executes project or toolchain code")
    })];
    let publishes = matches!(
        (name, sub.as_str()),
        ("cargo", "publish" | "yank" | "owner" | "login")
            | (
                "npm" | "pnpm" | "yarn" | "bun",
                "publish" | "unpublish" | "deprecate" | "login" | "adduser" | "owner" | "dist-tag"
            )
            | ("gem", "push" | "yank")
            | ("docker" | "podman", "push" | "login")
            | ("poetry", "publish")
            | ("uv", "publish")
            | ("dotnet", "nuget")
            | ("mvn", "deploy")
            | ("gradle" | "gradlew", "publish")
    );
    if publishes {
        e.push(Effect::Publishes(format!(
            "`{name} {sub}` publishes outside this machine"
        )));
    }
    let network = matches!(
        (name, sub.as_str()),
        (
            "cargo",
            "install" | "update" | "fetch" | "search" | "add" | "generate-lockfile"
        ) | (
            "npm" | "pnpm" | "yarn" | "bun",
            "install"
                | "i"
                | "ci"
                | "add"
                | "update"
                | "upgrade"
                | "outdated"
                | "view"
                | "info"
                | "audit"
                | "create"
                | "dlx"
        ) | ("npx" | "bunx" | "uvx" | "pipx", _)
            | ("pip" | "pip3", "install" | "download" | "index")
            | ("uv", "pip" | "sync" | "add" | "lock" | "tool" | "run")
            | ("poetry", "install" | "add" | "update" | "lock")
            | ("go", "get" | "install" | "mod")
            | ("gem" | "bundle", "install" | "update" | "fetch")
            | ("docker" | "podman", "pull" | "run" | "build")
            | ("composer", "install" | "update" | "require")
            | ("rustup", _)
    ) || publishes;
    if network {
        e.push(Effect::Network(format!(
            "`{name} {sub}` downloads or uploads packages"
        )));
    }
    let global = args.has(&['g'], &["global", "user", "break-system-packages"])
        && matches!(name, "npm" | "pnpm" | "yarn" | "pip" | "pip3" | "bun");
    if global
        && matches!(
            sub.as_str(),
            "install" | "i" | "add" | "uninstall" | "remove" | "link"
        )
    {
        e.push(Effect::SystemChange(format!(
            "`{name} {sub}` with a global or user flag installs outside the workspace"
        )));
    }
    if name == "cargo" && sub == "install" {
        e.push(Effect::Write(Word::lit("~/.cargo/bin")));
    }
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
