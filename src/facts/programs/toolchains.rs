//! Toolchains, interpreters and shells: what they run, download or publish.

use super::network::NETWORK;
use super::{Args, Effect, lit};
use crate::facts::shell::{SimpleCommand, Stdin, Word};

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

/// A program that runs project or toolchain code: what else it does besides (inline code, code
/// from stdin, printing credentials, reaching package registries), or only a version or help
/// text, or a `make -n` that may run nothing.
pub(super) fn runs_code(name: &str, args: &Args, cmd: &SimpleCommand) -> Vec<Effect> {
    if matches!(name, "make" | "gmake")
        && let Some(dry_run) = make_dry_run(args)
    {
        return vec![dry_run];
    }
    if prints_version_or_help(args) {
        return vec![];
    }
    if let Some(e) = inline_code(name, args) {
        return e;
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
    if let Some(e) = prints_credentials(name, args) {
        return e;
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
    e.extend(package_traffic(name, &sub, args));
    e
}

/// `X --version` and friends print a version and run nothing of the project.
fn prints_version_or_help(args: &Args) -> bool {
    let words: Vec<&str> = args.words.iter().filter_map(|w| w.as_lit()).collect();
    matches!(
        words.as_slice(),
        ["--version"] | ["-V"] | ["-v"] | ["version"] | ["--help"] | ["-h"] | ["help"]
    ) && args.words.len() == 1
}

/// An interpreter given code inline (`python -c`, `node -e`): the code is not analysed, but a
/// path written in it is judged as read.
fn inline_code(name: &str, args: &Args) -> Option<Vec<Effect>> {
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
            return Some(e);
        }
    }
    None
}

/// Cluster and registry tools asked to print what they log in with.
fn prints_credentials(name: &str, args: &Args) -> Option<Vec<Effect>> {
    let words: Vec<&str> = args.iter().filter_map(|w| w.as_lit()).collect();
    let credential = (name == "kubectl" && words.contains(&"view") && words.contains(&"--raw"))
        || (matches!(name, "npm" | "pnpm" | "yarn") && words.first() == Some(&"token"))
        || (name == "docker" && words.first().is_some_and(|w| w.starts_with("credential")));
    credential.then(|| {
        vec![Effect::CredentialAccess(format!(
            "`{name}` prints stored credentials"
        ))]
    })
}

/// What a package manager's subcommand sends or fetches: publishing, downloading, installing
/// for the whole user.
fn package_traffic(name: &str, sub: &str, args: &Args) -> Vec<Effect> {
    let mut e = Vec::new();
    let publishes = matches!(
        (name, sub),
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
        (name, sub),
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
            sub,
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
