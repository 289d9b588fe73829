//! Sensitivity: what touching a path means (keys, credential stores, env files, git internals,
//! CI, manifests, code-running config, shell startup, system places, devices), from a table of
//! component globs, a few rules that need more than a glob, and a sniff of the file's first bytes.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use serde::Serialize;

use super::{PathContext, depth, lower_components, starts_with_ci};

/// How much of a file [`looks_like_private_key`] reads.
const SNIFF_BYTES: u64 = 4096;

/// Why touching a path deserves attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Sensitivity {
    PrivateKey,
    CredentialStore,
    ProcessEnvironment,
    OtherProcessEnvironment,
    SecretFile,
    EnvFile,
    AirlockConfig,
    GitInternals,
    CiConfig,
    Manifest,
    CodeRunningConfig,
    ShellStartup,
    SystemDir,
    DiskDevice,
    /// A terminal: what is drawn on a screen and typed into it (`/dev/tty`, `/dev/pts/*`,
    /// `/dev/console`, `/dev/ptmx`, virtual consoles).
    Terminal,
}

impl Sensitivity {
    /// A short phrase for prompts: "writes to {describe}".
    pub fn describe(&self) -> &'static str {
        match self {
            Sensitivity::PrivateKey => "a private key",
            Sensitivity::CredentialStore => "a credential store (SSH, cloud, registry or system)",
            Sensitivity::ProcessEnvironment => "the process environment (/proc/self/environ)",
            Sensitivity::OtherProcessEnvironment => "another process's environment or memory",
            Sensitivity::SecretFile => "a file named like a secret",
            Sensitivity::EnvFile => "an environment file (.env)",
            Sensitivity::AirlockConfig => "airlock's own configuration or state",
            Sensitivity::GitInternals => "git internals (hooks, config, attributes)",
            Sensitivity::CiConfig => "CI pipeline configuration",
            Sensitivity::Manifest => "a build manifest or lockfile",
            Sensitivity::CodeRunningConfig => "tool configuration that can run code",
            Sensitivity::ShellStartup => "a shell or login startup file",
            Sensitivity::SystemDir => "a system directory",
            Sensitivity::DiskDevice => "a raw disk or memory device",
            Sensitivity::Terminal => "a terminal (what a screen shows and what is typed into it)",
        }
    }
}

/// True when `path` is an existing regular file whose first 4 KiB hold a
/// PEM/OpenSSH/PGP private key marker.
pub fn looks_like_private_key(path: &Path) -> bool {
    // Refuse FIFOs, sockets and devices before opening: opening a FIFO blocks.
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        _ => return false,
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        _ => return false,
    }
    let mut head = Vec::new();
    // A read error part-way still leaves what was read worth checking.
    let _ = file.take(SNIFF_BYTES).read_to_end(&mut head);
    head.starts_with(b"-----BEGIN OPENSSH PRIVATE KEY")
        || contains(&head, b"PRIVATE KEY-----")
        || contains(&head, b"PRIVATE KEY BLOCK-----")
}

#[derive(Clone, Copy)]
pub(super) enum Anchor {
    /// Relative to a home directory (`ctx.home`, `/home/*`, `/Users/*`,
    /// `/root`, `/var/root`).
    Home,
    /// Relative to `/`.
    Root,
    /// Contiguous components anywhere; without a trailing `**` they must
    /// end the path (so a one-component pattern is a file-name pattern).
    Anywhere,
}

/// One row of the sensitivity table. Patterns are lowercase, `/`-separated
/// component globs (`*` matches within a component); a trailing `**` means
/// "this directory and everything under it".
pub(super) struct Rule {
    pub(super) anchor: Anchor,
    pub(super) pattern: &'static str,
    /// File-name globs that exempt a match.
    pub(super) except: &'static [&'static str],
    pub(super) sensitivity: Sensitivity,
}

const fn home(pattern: &'static str, sensitivity: Sensitivity) -> Rule {
    Rule {
        anchor: Anchor::Home,
        pattern,
        except: &[],
        sensitivity,
    }
}

const fn root(pattern: &'static str, sensitivity: Sensitivity) -> Rule {
    Rule {
        anchor: Anchor::Root,
        pattern,
        except: &[],
        sensitivity,
    }
}

const fn any(pattern: &'static str, sensitivity: Sensitivity) -> Rule {
    Rule {
        anchor: Anchor::Anywhere,
        pattern,
        except: &[],
        sensitivity,
    }
}

use Sensitivity::{
    AirlockConfig, CiConfig, CodeRunningConfig, CredentialStore, DiskDevice, EnvFile, GitInternals,
    Manifest, PrivateKey, SecretFile, ShellStartup,
};

/// Env-file names that are templates: `.env.example`, `.env.sample`, `.env.template`,
/// `.env.dist` (and `example.env`-style spellings).
const ENV_TEMPLATES: &[&str] = &[
    "*.example",
    "*.sample",
    "*.template",
    "*.dist",
    "example.env",
    "sample.env",
    "template.env",
];

/// The path-pattern part of the sensitivity table. `ProcessEnvironment`,
/// `OtherProcessEnvironment`, `SystemDir`, the contains-style `SecretFile`
/// names and the state-dir part of `AirlockConfig` need more than a glob and
/// live in [`classify`].
pub(super) const RULES: &[Rule] = &[
    // PrivateKey
    any("id_rsa", PrivateKey),
    any("id_dsa", PrivateKey),
    any("id_ecdsa", PrivateKey),
    any("id_ed25519", PrivateKey),
    Rule {
        anchor: Anchor::Anywhere,
        pattern: ".ssh/id_*",
        except: &["*.pub"],
        sensitivity: PrivateKey,
    },
    any("*.key", PrivateKey),
    any("*.p12", PrivateKey),
    any("*.pfx", PrivateKey),
    any("*.jks", PrivateKey),
    any("*.keystore", PrivateKey),
    any("*.ppk", PrivateKey),
    // CredentialStore
    Rule {
        anchor: Anchor::Home,
        pattern: ".ssh/**",
        except: &["*.pub", "known_hosts", "known_hosts.old"],
        sensitivity: CredentialStore,
    },
    home(".aws/**", CredentialStore),
    home(".gnupg/**", CredentialStore),
    home(".config/gcloud/**", CredentialStore),
    home(".azure/**", CredentialStore),
    home(".kube/**", CredentialStore),
    home(".docker/config.json", CredentialStore),
    home(".netrc", CredentialStore),
    home(".git-credentials", CredentialStore),
    home(".npmrc", CredentialStore),
    home(".pypirc", CredentialStore),
    home(".cargo/credentials", CredentialStore),
    home(".cargo/credentials.toml", CredentialStore),
    home(".config/gh/hosts.yml", CredentialStore),
    home(".local/share/keyrings/**", CredentialStore),
    home("library/keychains/**", CredentialStore),
    home(".password-store/**", CredentialStore),
    home(".vault-token", CredentialStore),
    home(".terraform.d/credentials.tfrc.json", CredentialStore),
    root("etc/shadow", CredentialStore),
    root("etc/shadow-", CredentialStore),
    root("etc/gshadow", CredentialStore),
    root("etc/gshadow-", CredentialStore),
    root("etc/master.passwd", CredentialStore),
    root("etc/sudoers", CredentialStore),
    root("etc/sudoers.d/**", CredentialStore),
    root("etc/ssh/*_key", CredentialStore),
    // SecretFile (name globs; substrings are in `classify`)
    any(".htpasswd", SecretFile),
    // EnvFile
    any(".env", EnvFile),
    // Templates that ship with a project to show which variables exist hold no secrets.
    Rule {
        anchor: Anchor::Anywhere,
        pattern: ".env.*",
        except: ENV_TEMPLATES,
        sensitivity: EnvFile,
    },
    Rule {
        anchor: Anchor::Anywhere,
        pattern: "*.env",
        except: ENV_TEMPLATES,
        sensitivity: EnvFile,
    },
    any(".envrc", EnvFile),
    // AirlockConfig
    any(".airlock/**", AirlockConfig),
    home(".config/airlock/**", AirlockConfig),
    // GitInternals
    any(".git/**", GitInternals),
    any(".gitmodules", GitInternals),
    any(".gitattributes", GitInternals),
    any(".githooks/**", GitInternals),
    any(".husky/**", GitInternals),
    // CiConfig
    any(".github/workflows/**", CiConfig),
    any(".github/actions/**", CiConfig),
    any(".gitlab-ci.yml", CiConfig),
    any(".circleci/**", CiConfig),
    any("jenkinsfile", CiConfig),
    any(".travis.yml", CiConfig),
    any("azure-pipelines.yml", CiConfig),
    any(".buildkite/**", CiConfig),
    any(".drone.yml", CiConfig),
    any("bitbucket-pipelines.yml", CiConfig),
    any(".ci/**", CiConfig),
    // Manifest
    any("cargo.toml", Manifest),
    any("cargo.lock", Manifest),
    any("build.rs", Manifest),
    any("package.json", Manifest),
    any("package-lock.json", Manifest),
    any("npm-shrinkwrap.json", Manifest),
    any("yarn.lock", Manifest),
    any("pnpm-lock.yaml", Manifest),
    any("bun.lockb", Manifest),
    any("pyproject.toml", Manifest),
    any("setup.py", Manifest),
    any("setup.cfg", Manifest),
    any("requirements*.txt", Manifest),
    any("pipfile", Manifest),
    any("pipfile.lock", Manifest),
    any("poetry.lock", Manifest),
    any("uv.lock", Manifest),
    any("go.mod", Manifest),
    any("go.sum", Manifest),
    any("gemfile", Manifest),
    any("gemfile.lock", Manifest),
    any("*.gemspec", Manifest),
    any("build.gradle", Manifest),
    any("build.gradle.kts", Manifest),
    any("settings.gradle*", Manifest),
    any("pom.xml", Manifest),
    any("composer.json", Manifest),
    any("composer.lock", Manifest),
    any("makefile", Manifest),
    any("gnumakefile", Manifest),
    any("cmakelists.txt", Manifest),
    any("dockerfile", Manifest),
    any("docker-compose.yml", Manifest),
    any("docker-compose.yaml", Manifest),
    any("flake.nix", Manifest),
    any("rust-toolchain", Manifest),
    any("rust-toolchain.toml", Manifest),
    // CodeRunningConfig (`.editorconfig` deliberately absent)
    any(".vscode/**", CodeRunningConfig),
    any(".idea/**", CodeRunningConfig),
    any(".envrc", CodeRunningConfig),
    any(".npmrc", CodeRunningConfig),
    any(".yarnrc*", CodeRunningConfig),
    any(".pnpmfile.cjs", CodeRunningConfig),
    any(".cargo/config", CodeRunningConfig),
    any(".cargo/config.toml", CodeRunningConfig),
    any(".pre-commit-config.yaml", CodeRunningConfig),
    any(".claude/**", CodeRunningConfig),
    any(".cursor/**", CodeRunningConfig),
    any(".codex/**", CodeRunningConfig),
    any(".gemini/**", CodeRunningConfig),
    any(".devcontainer/**", CodeRunningConfig),
    // ShellStartup
    home(".bashrc", ShellStartup),
    home(".bash_profile", ShellStartup),
    home(".bash_login", ShellStartup),
    home(".bash_logout", ShellStartup),
    home(".profile", ShellStartup),
    home(".zshrc", ShellStartup),
    home(".zshenv", ShellStartup),
    home(".zprofile", ShellStartup),
    home(".zlogin", ShellStartup),
    home(".zlogout", ShellStartup),
    home(".config/fish/**", ShellStartup),
    home(".inputrc", ShellStartup),
    home(".gitconfig", ShellStartup),
    home(".config/git/**", ShellStartup),
    home(".ssh/rc", ShellStartup),
    home(".config/autostart/**", ShellStartup),
    home(".config/systemd/**", ShellStartup),
    home("library/launchagents/**", ShellStartup),
    root("etc/profile", ShellStartup),
    root("etc/profile.d/**", ShellStartup),
    root("etc/bash.bashrc", ShellStartup),
    root("etc/bashrc", ShellStartup),
    root("etc/zshrc", ShellStartup),
    root("etc/zshenv", ShellStartup),
    root("etc/zsh/**", ShellStartup),
    // DiskDevice (block devices are also caught by file type)
    root("dev/sd*/**", DiskDevice),
    root("dev/nvme*/**", DiskDevice),
    root("dev/vd*/**", DiskDevice),
    root("dev/xvd*/**", DiskDevice),
    root("dev/hd*/**", DiskDevice),
    root("dev/mmcblk*/**", DiskDevice),
    root("dev/disk*/**", DiskDevice),
    root("dev/rdisk*/**", DiskDevice),
    root("dev/dm-*", DiskDevice),
    // Terminals: a command that reaches one can draw over or type into the screen a decision
    // is made on.
    root("dev/tty*/**", Sensitivity::Terminal),
    root("dev/pts/**", Sensitivity::Terminal),
    root("dev/console/**", Sensitivity::Terminal),
    root("dev/ptmx/**", Sensitivity::Terminal),
    root("dev/vcs*/**", Sensitivity::Terminal),
    root("dev/hvc*/**", Sensitivity::Terminal),
    root("dev/mapper/**", DiskDevice),
    root("dev/loop*", DiskDevice),
    root("dev/mem", DiskDevice),
    root("dev/kmem", DiskDevice),
    root("dev/port", DiskDevice),
];

/// Substrings of a file name that suggest it holds a secret.
const SECRET_NAME_PARTS: &[&str] = &[
    "secret",
    "credential",
    "token",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "api-key",
    ".pem",
];

/// Source-code extensions: `password_reset.rs` or `tokenizer.py` is code about secrets, not one.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "ts", "tsx", "js", "jsx", "mjs", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp",
    "rb", "md", "rst", "html", "css", "scss", "svelte", "vue", "swift", "cs", "php", "snap",
    "lock",
];

/// A file name reads like a secret when one of its words (split at punctuation) is, ends with,
/// or is the plural of a secret word: `api_token`, `githubtoken`, `secrets.yaml`, but not
/// `tokenizer.rs`. `.pem` files count whatever their name.
fn secret_name(name: &str) -> bool {
    if name.ends_with(".pem") || name == ".htpasswd" {
        return true;
    }
    let extension = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if CODE_EXTENSIONS.contains(&extension) {
        return false;
    }
    name.split(|c: char| !c.is_alphanumeric()).any(|word| {
        SECRET_NAME_PARTS.iter().any(|s| {
            let s = s.trim_start_matches('.');
            word.ends_with(s) || word.strip_suffix('s').is_some_and(|w| w.ends_with(s))
        })
    }) || name.contains("api_key")
        || name.contains("api-key")
}

/// Top-level directories that belong to the system.
const SYSTEM_TOP: &[&str] = &[
    "etc", "usr", "bin", "sbin", "lib*", "boot", "opt", "var", "sys", "proc", "run", "root",
    "system", "library",
];

/// Adds every sensitivity that the path's name and place imply, and whether it is a disk.
pub(super) fn classify(ctx: &PathContext, path: &Path, out: &mut BTreeSet<Sensitivity>) {
    classify_by_name(ctx, path, out);
    if fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device()) {
        out.insert(DiskDevice);
    }
}

/// Adds every sensitivity that the path's name and place imply, without touching the file
/// system (the sandbox's walk asks this of every entry it lists).
pub(super) fn classify_by_name(ctx: &PathContext, path: &Path, out: &mut BTreeSet<Sensitivity>) {
    let parts = matching_view(windows_view(lower_components(path)));
    let name = parts.last().map(String::as_str).unwrap_or("");
    let homes = home_relatives(ctx, &parts);

    table_hits(&parts, &homes, rule_index().candidates(name), out);

    // `/etc/passwd` is world-readable and holds no secrets.
    let is_etc_passwd = parts.len() == 2 && parts[0] == "etc" && parts[1] == "passwd";
    if !is_etc_passwd && secret_name(name) {
        out.insert(SecretFile);
    }

    if ctx.state_dir.is_absolute() && starts_with_ci(path, &ctx.state_dir) {
        out.insert(AirlockConfig);
    }

    if parts.len() >= 3 && parts[0] == "proc" {
        let of_self = parts[1] == "self" || parts[1] == "thread-self";
        match name {
            "environ" if of_self => {
                out.insert(Sensitivity::ProcessEnvironment);
            }
            "environ" | "mem" => {
                out.insert(Sensitivity::OtherProcessEnvironment);
            }
            _ => {}
        }
    }

    if is_system_path(ctx, path, &parts) {
        out.insert(Sensitivity::SystemDir);
    }
}

/// The rules, each pattern split at `/` once, and indexed by what a path's last component must
/// be for it to match: the sandbox plan judges every entry of `/`, `/etc`, `/tmp` and the homes
/// it walks, and most rules end in a plain name (`id_rsa`, `credentials`) that only one entry
/// in hundreds has. Splitting every pattern for each path was most of the plan's time once;
/// trying all of them was most of what was left.
struct RuleIndex {
    /// `patterns[i]` is `RULES[i].pattern` split at `/`.
    patterns: Vec<Vec<&'static str>>,
    /// The rules whose pattern ends in a plain name (no `*`, not `**`), by that name: only a
    /// path whose last component is that name can match one (a component without `*` globs
    /// only itself, and every anchor matches the pattern's end at the path's end).
    by_last: std::collections::HashMap<&'static str, Vec<usize>>,
    /// Every other rule, tried for every path.
    others: Vec<usize>,
}

impl RuleIndex {
    /// The rules a path whose last component is `name` can match, by their place in [`RULES`].
    fn candidates(&self, name: &str) -> impl Iterator<Item = usize> + '_ {
        let named = self.by_last.get(name).map(Vec::as_slice).unwrap_or(&[]);
        named.iter().chain(&self.others).copied()
    }
}

/// Adds what the rules numbered `rules` (places in [`RULES`]) say of a path, `parts` its
/// lower-cased components and `homes` its remainders below each home it may be in.
fn table_hits(
    parts: &[String],
    homes: &[&[String]],
    rules: impl Iterator<Item = usize>,
    out: &mut BTreeSet<Sensitivity>,
) {
    let name = parts.last().map(String::as_str).unwrap_or("");
    let patterns = &rule_index().patterns;
    for i in rules {
        let (rule, pattern) = (&RULES[i], &patterns[i]);
        let hit = match rule.anchor {
            Anchor::Root => matches_anchored(pattern, parts),
            Anchor::Home => homes.iter().any(|rel| matches_anchored(pattern, rel)),
            Anchor::Anywhere => matches_anywhere(pattern, parts),
        };
        if hit && !rule.except.iter().any(|e| glob(e, name)) {
            out.insert(rule.sensitivity);
        }
    }
}

fn rule_index() -> &'static RuleIndex {
    static INDEX: std::sync::LazyLock<RuleIndex> = std::sync::LazyLock::new(|| {
        let patterns: Vec<Vec<&'static str>> = RULES
            .iter()
            .map(|rule| rule.pattern.split('/').collect())
            .collect();
        let mut by_last: std::collections::HashMap<&'static str, Vec<usize>> =
            std::collections::HashMap::new();
        let mut others = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            match pattern.last() {
                Some(&last) if last != "**" && !last.contains('*') && !last.is_empty() => {
                    by_last.entry(last).or_default().push(i)
                }
                _ => others.push(i),
            }
        }
        RuleIndex {
            patterns,
            by_last,
            others,
        }
    });
    &INDEX
}

fn is_system_path(ctx: &PathContext, path: &Path, parts: &[String]) -> bool {
    let Some(top) = parts.first() else {
        return false;
    };
    if !SYSTEM_TOP.iter().any(|p| glob(p, top)) {
        return false;
    }
    if top == "var" && parts.get(1).is_some_and(|p| p == "tmp") {
        return false;
    }
    if top == "root" {
        let home = lower_components(&ctx.home);
        if home.first().is_some_and(|h| h == "root") {
            return false;
        }
    }
    // A workspace or scratch dir that happens to live in /opt or /var is
    // not "the system" -- unless it is a system top-level dir itself.
    let mut exempt_roots = std::iter::once(&ctx.workspace).chain(ctx.temp_dirs.iter());
    !exempt_roots.any(|r| r.is_absolute() && depth(r) >= 2 && path.starts_with(r))
}

/// Home-relative remainders of `parts`, for each home the path may be in.
fn home_relatives<'a>(ctx: &PathContext, parts: &'a [String]) -> Vec<&'a [String]> {
    let mut rels = Vec::new();
    let home = matching_view(lower_components(&ctx.home));
    if !home.is_empty() && parts.starts_with(&home) {
        rels.push(&parts[home.len()..]);
    }
    // `C:\\Users\\<name>\\…` anywhere (the drive makes it a Windows home, not a project folder).
    for (i, part) in parts.iter().enumerate() {
        let is_drive = part.len() == 2 && part.ends_with(':');
        if is_drive && parts.get(i + 1).is_some_and(|p| p == "users") && parts.len() > i + 2 {
            rels.push(&parts[i + 3..]);
        }
    }
    let first = parts.first().map(String::as_str);
    let second = parts.get(1).map(String::as_str);
    match (first, second) {
        (Some("home" | "users"), Some(_)) => rels.push(&parts[2..]),
        (Some("var"), Some("root")) => rels.push(&parts[2..]),
        (Some("root"), _) => rels.push(&parts[1..]),
        _ => {}
    }
    rels
}

/// A path written the Windows way (`C:\\Users\\me\\.ssh\\id_rsa`, as one file name on Unix) is
/// judged by the names in it: backslashes separate components, and `C:` with `Users\\<name>`
/// after it is a home, so every credential name is recognised whatever the separator.
fn windows_view(parts: Vec<String>) -> Vec<String> {
    if !parts.iter().any(|p| p.contains('\\')) {
        return parts;
    }
    parts
        .iter()
        .flat_map(|p| p.split('\\'))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// macOS keeps `/etc`, `/var` and `/tmp` under `/private`; judge them by
/// the names everyone knows.
fn matching_view(mut parts: Vec<String>) -> Vec<String> {
    let private_alias = parts.first().is_some_and(|p| p == "private")
        && parts
            .get(1)
            .is_some_and(|p| p == "etc" || p == "var" || p == "tmp");
    if private_alias {
        parts.remove(0);
    }
    parts
}

/// `pattern` matches the start of `parts`: exactly, or as a prefix when it
/// ends in `**`.
fn matches_anchored(pattern: &[&str], parts: &[String]) -> bool {
    match pattern.split_last() {
        Some((&"**", head)) => {
            parts.len() >= head.len() && head.iter().zip(parts).all(|(p, c)| glob(p, c))
        }
        _ => parts.len() == pattern.len() && pattern.iter().zip(parts).all(|(p, c)| glob(p, c)),
    }
}

/// `pattern` matches somewhere in `parts` (ending the path unless it ends
/// in `**`).
fn matches_anywhere(pattern: &[&str], parts: &[String]) -> bool {
    match pattern.split_last() {
        Some((&"**", head)) => {
            !head.is_empty()
                && (0..parts.len()).any(|start| matches_anchored(pattern, &parts[start..]))
        }
        _ => {
            parts.len() >= pattern.len()
                && matches_anchored(pattern, &parts[parts.len() - pattern.len()..])
        }
    }
}

/// Glob with `*` only, byte-wise (patterns are ASCII).
pub(super) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut backtrack: Option<(usize, usize)> = None;
    while ti < t.len() {
        match (p.get(pi), t.get(ti)) {
            (Some(b'*'), _) => {
                backtrack = Some((pi, ti));
                pi += 1;
            }
            (Some(a), Some(b)) if a == b => {
                pi += 1;
                ti += 1;
            }
            _ => match backtrack {
                Some((star, from)) => {
                    pi = star + 1;
                    ti = from + 1;
                    backtrack = Some((star, from + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&b| b == b'*')
}

/// Adds `PrivateKey` when an existing file's content is a private key.
/// Pseudo-filesystems are skipped: reading them can block or have effects.
pub(super) fn sniff(path: &Path, out: &mut BTreeSet<Sensitivity>) {
    let top = lower_components(path).into_iter().next();
    if matches!(top.as_deref(), Some("proc" | "sys" | "dev")) {
        return;
    }
    if looks_like_private_key(path) {
        out.insert(PrivateKey);
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod index_tests;
