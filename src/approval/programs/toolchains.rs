//! Toolchains, interpreters, shells and network clients: what they run, download or publish.

use super::{Args, Effect, lit, reads};
use crate::approval::shell::{SimpleCommand, Stdin, Word};

/// Programs that run code of the project or of a toolchain.
pub(super) const RUNS_CODE: &[&str] = &[
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

pub(super) const INTERPRETERS_INLINE: &[(&str, &[&str])] = &[
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

pub(super) const NETWORK: &[&str] = &[
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

pub(super) fn shell_without_c(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
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

pub(super) const DECODERS: &[&str] = &[
    "base64", "base32", "basenc", "xxd", "openssl", "gunzip", "zcat", "uudecode", "gzip", "bzip2",
    "xz", "rev",
];

/// `rsync -n` between local paths only lists what it would copy: it reads both sides.
fn local_rsync_dry_run(args: &Args) -> Option<Vec<Effect>> {
    let words: Vec<&str> = args.iter().map(lit).collect::<Option<_>>()?;
    let dry_run = words.iter().any(|a| {
        *a == "--dry-run" || (a.starts_with('-') && !a.starts_with("--") && a.contains('n'))
    });
    // Options that run a program, reach a host, or write a file even in a dry run.
    let risky = words.iter().any(|a| {
        a.starts_with("-e")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('e'))
            || [
                "--rsh",
                "--rsync-path",
                "--log-file",
                "--write-batch",
                "--only-write-batch",
                "--daemon",
                "--config",
                "--password-file",
                "--port",
                "--address",
                "--sockopts",
                "--connect-program",
                "--remote-option",
                "-M",
            ]
            .iter()
            .any(|o| a.starts_with(o))
    });
    let operands: Vec<&str> = words
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    let remote = operands.iter().any(|o| {
        o.starts_with("rsync://") || o.split('/').next().is_some_and(|head| head.contains(':'))
    });
    // An option value can look like an operand (`--exclude x`): only forms without separate
    // values are understood; anything else keeps the network reading.
    let separate_values = words.iter().any(|a| {
        a.starts_with("--")
            && !a.contains('=')
            && [
                "--exclude",
                "--include",
                "--filter",
                "--files-from",
                "--exclude-from",
                "--include-from",
                "--backup-dir",
                "--suffix",
                "--chmod",
                "--chown",
                "--partial-dir",
                "--temp-dir",
                "--compare-dest",
                "--link-dest",
                "--copy-dest",
                "--timeout",
                "--max-size",
                "--min-size",
                "--bwlimit",
                "--info",
                "--debug",
                "--out-format",
                "--usermap",
                "--groupmap",
                "--iconv",
                "--max-delete",
                "--modify-window",
            ]
            .contains(a)
    });
    let short_values = words
        .iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(['f', 'T', 'B', 'M']));
    if !dry_run || risky || remote || separate_values || short_values || operands.len() < 2 {
        return None;
    }
    Some(
        operands
            .into_iter()
            .map(|o| Effect::Read(Word::lit(o)))
            .collect(),
    )
}

pub(super) fn network(name: &str, args: &Args) -> Vec<Effect> {
    if name == "rsync"
        && let Some(reads) = local_rsync_dry_run(args)
    {
        return reads;
    }
    let mut e = vec![Effect::Network(format!("`{name}` uses the network"))];
    match name {
        "curl" => {
            e.extend(
                args.values_of(
                    &["-o", "-D", "-c"],
                    &[
                        "output",
                        "dump-header",
                        "cookie-jar",
                        "trace",
                        "trace-ascii",
                        "stderr",
                        "libcurl",
                        "etag-save",
                        "hsts",
                        "alt-svc",
                    ],
                )
                .into_iter()
                .filter(|w| !matches!(lit(w), Some("-" | "%")))
                .map(Effect::Write),
            );
            if args.has(&['O'], &["remote-name", "remote-name-all"]) {
                e.push(Effect::Write(Word::lit(".")));
            }
            let computed = || Effect::Opaque("`curl` sends data computed at run time".into());
            // `@file` in data, headers and url-encoded data; `name=@file` / `name=<file` in forms.
            for v in args.values_of(
                &["-d", "-H"],
                &[
                    "data",
                    "data-binary",
                    "data-raw",
                    "data-ascii",
                    "json",
                    "header",
                    "proxy-header",
                ],
            ) {
                match lit(&v) {
                    Some(s) => {
                        if let Some(file) = s.strip_prefix('@') {
                            e.push(Effect::Read(Word::lit(file)));
                        }
                    }
                    None => e.push(computed()),
                }
            }
            for v in args.values_of(&[], &["data-urlencode"]) {
                match lit(&v) {
                    Some(s) => {
                        if let Some((name, file)) = s.split_once('@')
                            && !name.contains('=')
                        {
                            e.push(Effect::Read(Word::lit(file)));
                        }
                    }
                    None => e.push(computed()),
                }
            }
            for v in args.values_of(&["-F"], &["form", "form-string"]) {
                match lit(&v) {
                    Some(s) => {
                        if let Some((_, value)) = s.split_once('=')
                            && let Some(file) =
                                value.strip_prefix('@').or_else(|| value.strip_prefix('<'))
                        {
                            let file = file.split(';').next().unwrap_or(file);
                            e.push(Effect::Read(Word::lit(file)));
                        }
                    }
                    None => e.push(computed()),
                }
            }
            e.extend(reads(args.values_of(&["-T"], &["upload-file"])));
            e.extend(reads(args.values_of(
                &["-K", "-E"],
                &[
                    "config",
                    "netrc-file",
                    "cert",
                    "key",
                    "cacert",
                    "capath",
                    "proxy-cert",
                    "proxy-key",
                ],
            )));
            for v in args.values_of(&["-b"], &["cookie"]) {
                if lit(&v).is_some_and(|s| !s.contains('=')) {
                    e.push(Effect::Read(v));
                }
            }
        }
        "wget" => {
            e.extend(
                args.values_of(
                    &["-o", "-a", "-P"],
                    &[
                        "output-file",
                        "append-output",
                        "directory-prefix",
                        "save-cookies",
                    ],
                )
                .into_iter()
                .map(Effect::Write),
            );
            e.extend(reads(args.values_of(
                &["-i"],
                &[
                    "input-file",
                    "load-cookies",
                    "config",
                    "certificate",
                    "private-key",
                    "ca-certificate",
                ],
            )));
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
        "aws" | "gcloud" | "az" => {
            let words: Vec<&str> = args.iter().filter_map(|w| w.as_lit()).collect();
            let has = |pair: [&str; 2]| words.windows(2).any(|p| p == pair);
            let credential = has(["configure", "get"])
                || has(["configure", "export-credentials"])
                || has(["sts", "get-session-token"])
                || has(["ecr", "get-login-password"])
                || words.iter().any(|w| {
                    w.starts_with("print-access-token") || w.starts_with("print-identity-token")
                })
                || has(["account", "get-access-token"]);
            if credential {
                e.push(Effect::CredentialAccess(format!(
                    "`{name}` prints cloud credentials"
                )));
            }
        }
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

/// `make -n` with nothing else that runs or injects: `-f FILE`, `-C DIR`, targets and a few
/// output flags. A `VAR=value` on the command line is left out: make evaluates it, so
/// `make -n CC='$(shell id)'` runs `id`.
fn make_dry_run(args: &Args) -> Option<Effect> {
    let mut dry = false;
    let (mut dir, mut file) = (Word::lit("."), None);
    let mut words = args.iter();
    while let Some(w) = words.next() {
        let s = lit(w)?;
        match s {
            "-n" | "--dry-run" | "--just-print" | "--recon" => dry = true,
            "-k"
            | "-s"
            | "--silent"
            | "--quiet"
            | "--no-print-directory"
            | "-w"
            | "--print-directory"
            | "-B"
            | "--always-make"
            | "-p"
            | "--print-data-base" => {}
            "-f" | "--file" | "--makefile" => file = Some(words.next()?.clone()),
            "-C" | "--directory" => dir = words.next()?.clone(),
            _ if s.starts_with("--file=") || s.starts_with("--makefile=") => {
                file = Some(Word::lit(s.split_once('=')?.1))
            }
            _ if s.starts_with('-') => {
                // A cluster of the flags above (`-nk`), nothing else.
                if !s[1..]
                    .chars()
                    .all(|c| matches!(c, 'n' | 'k' | 's' | 'w' | 'B' | 'p'))
                {
                    return None;
                }
                dry |= s.contains('n');
            }
            _ if s.contains('=') => return None,
            _ => {}
        }
    }
    dry.then_some(Effect::MakeDryRun { dir, file })
}

pub(super) fn runs_code(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
    if matches!(name, "make" | "gmake")
        && let Some(dry_run) = make_dry_run(args)
    {
        return vec![dry_run];
    }
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
            let mut e = vec![Effect::InlineCode(format!(
                "`{name}` runs inline code airlock does not analyse"
            ))];
            // A path written in the code is judged as read: a key file in a one-liner denies.
            for word in args.iter().filter_map(lit) {
                e.extend(
                    super::inline::literal_paths(word)
                        .into_iter()
                        .map(Effect::Read),
                );
            }
            return e;
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
    let words: Vec<&str> = args.iter().filter_map(|w| w.as_lit()).collect();
    let credential = (name == "kubectl" && words.contains(&"view") && words.contains(&"--raw"))
        || (matches!(name, "npm" | "pnpm" | "yarn") && words.first() == Some(&"token"))
        || (name == "docker" && words.first().is_some_and(|w| w.starts_with("credential")));
    if credential {
        return vec![Effect::CredentialAccess(format!(
            "`{name}` prints stored credentials"
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
