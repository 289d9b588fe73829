//! Path facts for the approval gate.
//!
//! Every tool call that names a file goes through [`resolve`], which turns the
//! raw argument into the place the call would actually touch: `~` expanded,
//! relative paths anchored at the call's working directory, `.`/`..` handled
//! the way the kernel handles them (physically, following symlinks), and the
//! result classified by [`Location`] and by every [`Sensitivity`] that applies.
//!
//! This module owns those facts so that policy code never compares path
//! strings itself: string prefixes, `..` tricks, case variants and symlinks
//! planted in the workspace are exactly how an agent would slip a write past
//! a gate, so they are handled once, here, and tested here.
//!
//! Two readings of a path exist in practice: the kernel's (a `..` after a
//! symlink climbs out of the link's *target*) and that of tools which
//! normalise lexically before opening (a `..` cancels the link's *name*).
//! When the two land in different places, [`resolve`] reports the less
//! trusted landing spot and the union of both sets of sensitivities, so
//! neither reading can be used to get a path approved that the other would
//! have flagged.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

use serde::{Serialize, Serializer};

/// How many symlinks one resolution may follow (Linux's `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// How much of a file [`looks_like_private_key`] reads.
const SNIFF_BYTES: u64 = 4096;

/// Character devices that are harmless to read or write.
const SAFE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
];

/// The fixed places a path is judged against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathContext {
    /// The agent's workspace root, canonical.
    pub workspace: PathBuf,
    /// The user's home directory (physical where it exists).
    pub home: PathBuf,
    /// Scratch directories (physical where they exist).
    pub temp_dirs: Vec<PathBuf>,
    /// airlock's own state directory (physical where it exists).
    pub state_dir: PathBuf,
}

impl PathContext {
    /// Builds a context. The workspace must exist (it is canonicalized);
    /// home and the state directory are resolved physically as far as they
    /// exist. Temp dirs are `/tmp`, `/var/tmp` and `$TMPDIR` when it is set
    /// to an absolute path.
    pub fn new(workspace: &Path, home: &Path, state_dir: &Path) -> std::io::Result<PathContext> {
        let workspace = fs::canonicalize(workspace)?;
        let anchor = |p: &Path| -> PathBuf {
            let absolute = if p.is_absolute() {
                p.to_path_buf()
            } else {
                workspace.join(p)
            };
            physical_or_lexical(&absolute)
        };
        let home = anchor(home);
        let state_dir = anchor(state_dir);

        let mut candidates = vec![PathBuf::from("/tmp"), PathBuf::from("/var/tmp")];
        if let Some(tmpdir) = std::env::var_os("TMPDIR") {
            let tmpdir = PathBuf::from(tmpdir);
            if tmpdir.is_absolute() {
                candidates.push(tmpdir);
            }
        }
        let mut temp_dirs: Vec<PathBuf> = Vec::new();
        for candidate in candidates {
            let resolved = physical_or_lexical(&candidate);
            // A temp dir of `/` would make every path "Temp".
            if depth(&resolved) > 0 && !temp_dirs.contains(&resolved) {
                temp_dirs.push(resolved);
            }
        }

        // A workspace inside /tmp has other projects for neighbours: that temp dir is not scratch
        // space to it, so writing next to the workspace is judged as writing outside it.
        temp_dirs.retain(|t| !workspace.starts_with(t));

        Ok(PathContext {
            workspace,
            home,
            temp_dirs,
            state_dir,
        })
    }
}

/// Where a tool call's path argument really points, and what that means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedPath {
    /// The argument as the agent wrote it.
    pub raw: String,
    /// The absolute, physically resolved landing spot.
    #[serde(serialize_with = "serialize_lossy")]
    pub path: PathBuf,
    pub location: Location,
    /// Every category that applies, sorted, without duplicates.
    pub sensitivity: Vec<Sensitivity>,
    /// The path reads as inside the workspace but lands outside it.
    pub is_symlink_escape: bool,
    pub exists: bool,
}

/// Coarse trust zone of a resolved path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    Workspace,
    Temp,
    /// `/dev/null`, `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/tty`,
    /// `/dev/fd/N`, `/dev/zero`, `/dev/urandom`, `/dev/random`.
    Device,
    AirlockState,
    Outside,
}

impl Location {
    /// Higher is less trusted; used to pick between two readings of a path.
    fn distrust(self) -> u8 {
        match self {
            Location::Device => 0,
            Location::Workspace => 1,
            Location::Temp => 2,
            Location::Outside => 3,
            Location::AirlockState => 4,
        }
    }
}

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

/// Resolves `raw` (as written in a tool call) against `cwd` (the call's
/// working directory; a relative `cwd` is taken relative to the workspace).
pub fn resolve(ctx: &PathContext, cwd: &Path, raw: &str) -> ResolvedPath {
    let cwd = if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        ctx.workspace.join(cwd)
    };
    let cwd = physical_or_lexical(&cwd);
    let expanded = expand(ctx, &cwd, raw);
    let lexical = lexical_normalize(&expanded);

    // The kernel's reading, and the reading of tools that normalise first.
    let kernel = walk(&expanded, Some(&cwd));
    let normalised = walk(&lexical, Some(&cwd));

    let mut sensitivity = BTreeSet::new();
    classify(ctx, &lexical, &mut sensitivity);

    let lexically_inside = lexical.starts_with(&ctx.workspace);
    let (path, location, exists, is_symlink_escape) = match (kernel, normalised) {
        (Walk::Resolved(kernel), Walk::Resolved(normalised)) => {
            classify(ctx, &kernel, &mut sensitivity);
            sniff(&kernel, &mut sensitivity);
            if normalised != kernel {
                classify(ctx, &normalised, &mut sensitivity);
                sniff(&normalised, &mut sensitivity);
            }
            let escapes = lexically_inside
                && !(kernel.starts_with(&ctx.workspace) && normalised.starts_with(&ctx.workspace));
            let kernel_location = locate(ctx, &kernel);
            let normalised_location = locate(ctx, &normalised);
            let (path, location) = if normalised_location.distrust() > kernel_location.distrust() {
                (normalised, normalised_location)
            } else {
                (kernel, kernel_location)
            };
            let exists = fs::symlink_metadata(&path).is_ok();
            (path, location, exists, escapes)
        }
        (kernel, normalised) => {
            // Too many symlinks: the call would fail with ELOOP, or worse,
            // be retargeted between approval and execution. Trust nothing.
            for reading in [kernel, normalised] {
                if let Walk::Resolved(p) = reading {
                    classify(ctx, &p, &mut sensitivity);
                }
            }
            (lexical, Location::Outside, false, lexically_inside)
        }
    };

    ResolvedPath {
        raw: raw.to_string(),
        path,
        location,
        sensitivity: sensitivity.into_iter().collect(),
        is_symlink_escape,
        exists,
    }
}

// ---------------------------------------------------------------------------
// Resolution

/// Expands `~`, `~/x`, `~user/x` and anchors relative paths at `cwd`.
fn expand(ctx: &PathContext, cwd: &Path, raw: &str) -> PathBuf {
    let Some(after_tilde) = raw.strip_prefix('~') else {
        // `join` with an absolute `raw` replaces `cwd`, as intended.
        return cwd.join(raw);
    };
    let (user, tail) = after_tilde.split_once('/').unwrap_or((after_tilde, ""));
    let base = if user.is_empty() {
        ctx.home.clone()
    } else {
        ctx.home
            .parent()
            .unwrap_or_else(|| Path::new("/"))
            .join(user)
    };
    let base = if base.is_absolute() {
        base
    } else {
        cwd.join(base)
    };
    // `~//etc` is `$HOME/etc`, not `/etc`: never let the tail be absolute.
    let tail = tail.trim_start_matches('/');
    if tail.is_empty() {
        base
    } else {
        base.join(tail)
    }
}

/// One step of a path walk.
enum Step {
    Root,
    Up,
    Name(OsString),
}

fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Up),
            Component::Normal(name) => Some(Step::Name(name.to_os_string())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Removes `.`, empty components and `..` (popping, never above `/`)
/// without touching the filesystem. `path` must be absolute.
fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for step in steps(path) {
        match step {
            Step::Root => out = PathBuf::from("/"),
            Step::Up => {
                out.pop();
            }
            Step::Name(name) => out.push(name),
        }
    }
    out
}

enum Walk {
    Resolved(PathBuf),
    TooManySymlinks,
}

/// What the walk should do with a candidate before looking at the disk.
enum Special {
    /// Follow the disk as usual.
    None,
    /// Take the name literally: its meaning depends on the process that
    /// opens it (`/dev/stdout`, `/proc/self/...`), not on airlock.
    Literal,
    /// The name is a magic link to this directory.
    Jump(PathBuf),
}

/// Resolves an absolute path component by component, following symlinks
/// like the kernel does. Past the first missing component nothing can be a
/// symlink, so the rest is joined lexically (`..` still pops).
fn walk(start: &Path, cwd: Option<&Path>) -> Walk {
    let mut pending = steps(start);
    pending.reverse();
    let mut current = PathBuf::from("/");
    let mut hops = 0usize;
    while let Some(step) = pending.pop() {
        let name = match step {
            Step::Root => {
                current = PathBuf::from("/");
                continue;
            }
            Step::Up => {
                current.pop();
                continue;
            }
            Step::Name(name) => name,
        };
        let candidate = current.join(&name);
        match special(&candidate, cwd) {
            Special::Literal => {
                current = candidate;
                continue;
            }
            Special::Jump(target) => {
                current = target;
                continue;
            }
            Special::None => {}
        }
        let is_symlink = fs::symlink_metadata(&candidate)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_symlink {
            current = candidate;
            continue;
        }
        hops += 1;
        if hops > MAX_SYMLINK_HOPS {
            return Walk::TooManySymlinks;
        }
        match fs::read_link(&candidate) {
            // Relative targets continue from the link's directory, which is
            // `current`; absolute ones start with `Step::Root`.
            Ok(target) => pending.extend(steps(&target).into_iter().rev()),
            Err(_) => current = candidate,
        }
    }
    Walk::Resolved(current)
}

/// The longest existing prefix resolved physically, the rest lexically.
fn physical_or_lexical(path: &Path) -> PathBuf {
    match walk(path, None) {
        Walk::Resolved(p) => p,
        Walk::TooManySymlinks => lexical_normalize(path),
    }
}

fn special(candidate: &Path, cwd: Option<&Path>) -> Special {
    let parts: Vec<&std::ffi::OsStr> = candidate
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let is = |i: usize, s: &str| parts.get(i).is_some_and(|p| *p == s);
    let is_process = |i: usize| {
        parts.get(i).is_some_and(|p| {
            *p == "self"
                || *p == "thread-self"
                || p.to_str()
                    .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        })
    };

    if is(0, "dev") && ["fd", "stdin", "stdout", "stderr"].iter().any(|d| is(1, d)) {
        return Special::Literal;
    }
    if !is(0, "proc") {
        return Special::None;
    }
    // /proc/<p>/{root,cwd} and /proc/<p>/task/<t>/{root,cwd}
    let magic = match parts.len() {
        3 if is_process(1) => parts.get(2),
        5 if is_process(1) && is(2, "task") && is_process(3) => parts.get(4),
        _ => None,
    };
    let of_self = is(1, "self") || is(1, "thread-self");
    match magic {
        // Every process is assumed to share our root; `/proc/1/root/etc`
        // is judged as `/etc`.
        Some(m) if *m == "root" => Special::Jump(PathBuf::from("/")),
        Some(m) if *m == "cwd" && of_self => match cwd {
            Some(cwd) => Special::Jump(cwd.to_path_buf()),
            None => Special::Literal,
        },
        // Anything else under /proc refers to whichever process opens it.
        _ => Special::Literal,
    }
}

// ---------------------------------------------------------------------------
// Location

fn locate(ctx: &PathContext, path: &Path) -> Location {
    if is_safe_device(path) {
        Location::Device
    } else if ctx.state_dir.is_absolute() && starts_with_ci(path, &ctx.state_dir) {
        // Case-insensitive: on macOS `~/.../AIRLOCK` is the state dir.
        Location::AirlockState
    } else if ctx.workspace.is_absolute() && path.starts_with(&ctx.workspace) {
        Location::Workspace
    } else if ctx
        .temp_dirs
        .iter()
        .any(|t| t.is_absolute() && depth(t) > 0 && path.starts_with(t))
    {
        Location::Temp
    } else {
        Location::Outside
    }
}

fn is_safe_device(path: &Path) -> bool {
    let Some(s) = path.to_str() else {
        return false;
    };
    SAFE_DEVICES.contains(&s)
        || s.strip_prefix("/dev/fd/")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

// ---------------------------------------------------------------------------
// Sensitivity

#[derive(Clone, Copy)]
enum Anchor {
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
struct Rule {
    anchor: Anchor,
    pattern: &'static str,
    /// File-name globs that exempt a match.
    except: &'static [&'static str],
    sensitivity: Sensitivity,
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

/// The path-pattern part of the sensitivity table. `ProcessEnvironment`,
/// `OtherProcessEnvironment`, `SystemDir`, the contains-style `SecretFile`
/// names and the state-dir part of `AirlockConfig` need more than a glob and
/// live in [`classify`].
const RULES: &[Rule] = &[
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
    any(".env.*", EnvFile),
    any("*.env", EnvFile),
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

/// Adds every sensitivity that the path's name and place imply.
fn classify(ctx: &PathContext, path: &Path, out: &mut BTreeSet<Sensitivity>) {
    let parts = matching_view(lower_components(path));
    let name = parts.last().map(String::as_str).unwrap_or("");
    let homes = home_relatives(ctx, &parts);

    for rule in RULES {
        let pattern: Vec<&str> = rule.pattern.split('/').collect();
        let hit = match rule.anchor {
            Anchor::Root => matches_anchored(&pattern, &parts),
            Anchor::Home => homes.iter().any(|rel| matches_anchored(&pattern, rel)),
            Anchor::Anywhere => matches_anywhere(&pattern, &parts),
        };
        if hit && !rule.except.iter().any(|e| glob(e, name)) {
            out.insert(rule.sensitivity);
        }
    }

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

    if fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device()) {
        out.insert(DiskDevice);
    }
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

/// Lowercased normal components (no root).
fn lower_components(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().to_lowercase()),
            _ => None,
        })
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

fn starts_with_ci(path: &Path, prefix: &Path) -> bool {
    lower_components(path).starts_with(&lower_components(prefix))
}

fn depth(path: &Path) -> usize {
    path.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
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
fn glob(pattern: &str, text: &str) -> bool {
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
fn sniff(path: &Path, out: &mut BTreeSet<Sensitivity>) {
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

fn serialize_lossy<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

    use Sensitivity::*;

    /// A scratch world: `<root>/ws` (workspace), `<root>/home`,
    /// `<root>/home/.local/state/airlock` (state), no temp dirs so that
    /// "outside" under the test's tempdir reads as `Outside`.
    struct World {
        _dir: TempDir,
        root: PathBuf,
        ctx: PathContext,
    }

    impl World {
        fn new() -> World {
            let dir = tempfile::tempdir().unwrap();
            let root = fs::canonicalize(dir.path()).unwrap();
            let ws = root.join("ws");
            let home = root.join("home");
            let state = home.join(".local/state/airlock");
            fs::create_dir_all(ws.join("src")).unwrap();
            fs::create_dir_all(home.join(".ssh")).unwrap();
            fs::create_dir_all(&state).unwrap();
            let mut ctx = PathContext::new(&ws, &home, &state).unwrap();
            ctx.temp_dirs.clear();
            World {
                _dir: dir,
                root,
                ctx,
            }
        }

        fn ws(&self) -> PathBuf {
            self.ctx.workspace.clone()
        }

        fn resolve(&self, raw: &str) -> ResolvedPath {
            resolve(&self.ctx, &self.ctx.workspace, raw)
        }

        fn link(&self, target: impl AsRef<Path>, at: &str) {
            let at = self.root.join(at);
            fs::create_dir_all(at.parent().unwrap()).unwrap();
            symlink(target, at).unwrap();
        }

        fn write(&self, rel: &str, body: &str) {
            let path = self.root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, body).unwrap();
        }
    }

    // -- lexical attacks ---------------------------------------------------

    #[test]
    fn dot_dot_out_of_the_workspace_is_outside() {
        let w = World::new();
        fs::create_dir_all(w.root.join("ws-other")).unwrap();
        let raw = format!("{}/../ws-other/x", w.ws().display());
        let r = w.resolve(&raw);
        assert_eq!(r.path, w.root.join("ws-other/x"));
        assert_eq!(r.location, Location::Outside);
        assert!(!r.is_symlink_escape);
    }

    #[test]
    fn a_sibling_sharing_the_workspace_prefix_is_not_inside() {
        let w = World::new();
        fs::create_dir_all(w.root.join("ws-evil")).unwrap();
        let r = w.resolve(w.root.join("ws-evil/x").to_str().unwrap());
        assert_eq!(r.location, Location::Outside);
    }

    #[test]
    fn relative_dot_dot_chains_resolve_against_cwd() {
        let w = World::new();
        let cases = [
            (
                "./../../etc/passwd",
                w.root.parent().unwrap().join("etc/passwd"),
            ),
            ("src/../../x", w.root.join("x")),
            ("src/./../src//lib.rs", w.ws().join("src/lib.rs")),
        ];
        for (raw, expected) in cases {
            let r = w.resolve(raw);
            assert_eq!(r.path, expected, "{raw}");
        }
        assert_eq!(w.resolve("./../../etc/passwd").location, Location::Outside);
        assert_eq!(w.resolve("src/../../x").location, Location::Outside);
        assert_eq!(
            w.resolve("src/./../src//lib.rs").location,
            Location::Workspace
        );
    }

    #[test]
    fn dot_dot_never_climbs_above_root() {
        let w = World::new();
        let raw = format!("{}etc/passwd", "../".repeat(64));
        let r = w.resolve(&raw);
        assert_eq!(r.path, PathBuf::from("/etc/passwd"));
        assert_eq!(r.sensitivity, vec![SystemDir]);
        assert_eq!(w.resolve("/../../..").path, PathBuf::from("/"));
    }

    #[test]
    fn doubled_slashes_are_ignored() {
        let w = World::new();
        let r = w.resolve("//etc//shadow");
        assert_eq!(r.path, PathBuf::from("/etc/shadow"));
        assert_eq!(r.sensitivity, vec![CredentialStore, SystemDir]);
        assert_eq!(r.location, Location::Outside);
    }

    #[test]
    fn empty_and_dot_name_the_cwd() {
        let w = World::new();
        for raw in ["", ".", "./", "src/.."] {
            let r = w.resolve(raw);
            assert_eq!(r.path, w.ws(), "{raw:?}");
            assert_eq!(r.location, Location::Workspace);
            assert!(r.exists);
        }
    }

    #[test]
    fn a_trailing_slash_is_the_same_path() {
        let w = World::new();
        w.link("/etc", "ws/etc_link");
        let r = w.resolve("src/");
        assert_eq!(r.path, w.ws().join("src"));
        assert_eq!(r.location, Location::Workspace);
        let r = w.resolve("etc_link/");
        assert_eq!(r.path, PathBuf::from("/etc"));
        assert_eq!(r.location, Location::Outside);
        assert!(r.sensitivity.contains(&SystemDir));
        assert!(r.is_symlink_escape);
    }

    #[test]
    fn relative_cwd_is_taken_relative_to_the_workspace() {
        let w = World::new();
        let r = resolve(&w.ctx, Path::new("src"), "main.rs");
        assert_eq!(r.path, w.ws().join("src/main.rs"));
    }

    // -- tilde -------------------------------------------------------------

    #[test]
    fn tilde_forms_expand_against_home() {
        let w = World::new();
        let home = w.ctx.home.clone();
        let cases = [
            ("~", home.clone()),
            ("~/", home.clone()),
            ("~/notes.txt", home.join("notes.txt")),
            ("~//etc/shadow", home.join("etc/shadow")),
            ("~alice/.ssh/id_rsa", w.root.join("alice/.ssh/id_rsa")),
            ("~alice", w.root.join("alice")),
        ];
        for (raw, expected) in cases {
            assert_eq!(w.resolve(raw).path, expected, "{raw}");
        }
        assert_eq!(w.resolve("~alice/x").location, Location::Outside);
    }

    #[test]
    fn ssh_dot_dot_back_into_ssh_is_still_a_key() {
        let w = World::new();
        let r = w.resolve("~/.ssh/../.ssh/id_rsa");
        assert_eq!(r.path, w.ctx.home.join(".ssh/id_rsa"));
        assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore]);
    }

    #[test]
    fn another_users_ssh_key_is_a_key() {
        let w = World::new();
        let r = w.resolve("~alice/.ssh/id_ed25519_sk");
        assert_eq!(r.sensitivity, vec![PrivateKey]);
        let r = w.resolve("/home/alice/.ssh/id_ed25519");
        assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore]);
    }

    // -- symlinks ----------------------------------------------------------

    #[test]
    fn a_workspace_symlink_to_etc_escapes() {
        let w = World::new();
        w.link("/etc", "ws/etc_link");
        let r = w.resolve("etc_link/shadow");
        assert_eq!(r.path, PathBuf::from("/etc/shadow"));
        assert_eq!(r.location, Location::Outside);
        assert!(r.is_symlink_escape);
        assert_eq!(r.sensitivity, vec![CredentialStore, SystemDir]);
    }

    #[test]
    fn a_workspace_symlink_to_home_ssh_escapes_to_a_key() {
        let w = World::new();
        w.link(w.ctx.home.join(".ssh"), "ws/keys");
        let r = w.resolve("keys/id_ed25519");
        assert_eq!(r.path, w.ctx.home.join(".ssh/id_ed25519"));
        assert!(r.is_symlink_escape);
        assert_eq!(r.location, Location::Outside);
        assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore]);
    }

    #[test]
    fn a_symlink_staying_inside_is_not_an_escape() {
        let w = World::new();
        w.link("src", "ws/alias");
        w.write("ws/src/lib.rs", "");
        let r = w.resolve("alias/lib.rs");
        assert_eq!(r.path, w.ws().join("src/lib.rs"));
        assert_eq!(r.location, Location::Workspace);
        assert!(!r.is_symlink_escape);
        assert!(r.exists);
    }

    #[test]
    fn a_symlink_chain_is_followed_to_its_end() {
        let w = World::new();
        fs::create_dir_all(w.root.join("outside")).unwrap();
        fs::create_dir_all(w.ws().join("sub")).unwrap();
        w.link("b", "ws/a");
        w.link("sub/../c", "ws/b");
        w.link(w.root.join("outside"), "ws/c");
        let r = w.resolve("a/.env");
        assert_eq!(r.path, w.root.join("outside/.env"));
        assert!(r.is_symlink_escape);
        assert_eq!(r.location, Location::Outside);
        assert_eq!(r.sensitivity, vec![EnvFile]);
    }

    #[test]
    fn a_symlink_loop_is_outside_and_missing() {
        let w = World::new();
        w.link("loop2", "ws/loop1");
        w.link("loop1", "ws/loop2");
        w.link("self", "ws/self");
        for raw in ["loop1/x", "self", "loop2"] {
            let r = w.resolve(raw);
            assert_eq!(r.location, Location::Outside, "{raw}");
            assert!(!r.exists, "{raw}");
            assert!(r.is_symlink_escape, "{raw}");
        }
    }

    #[test]
    fn forty_hops_resolve_and_forty_one_do_not() {
        let w = World::new();
        fs::create_dir_all(w.ws().join("end")).unwrap();
        // l0 -> l1 -> ... -> l39 -> end : 40 hops
        for i in 0..40 {
            let target = if i == 39 {
                "end".to_string()
            } else {
                format!("l{}", i + 1)
            };
            w.link(target, &format!("ws/l{i}"));
        }
        let r = w.resolve("l0/x");
        assert_eq!(r.path, w.ws().join("end/x"));
        assert_eq!(r.location, Location::Workspace);
        w.link("l0", "ws/m");
        let r = w.resolve("m/x");
        assert_eq!(r.location, Location::Outside);
        assert!(!r.exists);
    }

    #[test]
    fn dot_dot_after_a_symlinked_dir_climbs_the_target() {
        let w = World::new();
        fs::create_dir_all(w.root.join("outside/deep/er")).unwrap();
        w.link(w.root.join("outside/deep/er"), "ws/deep");
        let r = w.resolve("deep/../secret.txt");
        assert_eq!(r.path, w.root.join("outside/deep/secret.txt"));
        assert_eq!(r.location, Location::Outside);
        assert!(r.is_symlink_escape);
        assert_eq!(r.sensitivity, vec![SecretFile]);

        w.link("/etc/ssh", "ws/sshd");
        let r = w.resolve("sshd/../shadow");
        assert_eq!(r.path, PathBuf::from("/etc/shadow"));
        assert!(r.sensitivity.contains(&CredentialStore));
    }

    #[test]
    fn dot_dot_that_escapes_only_lexically_is_still_outside() {
        // ws/a -> ws/b/c. The kernel reads a/../../x as ws/x; a tool that
        // normalises first reads it as <root>/x. The worse reading wins.
        let w = World::new();
        fs::create_dir_all(w.ws().join("b/c")).unwrap();
        w.link(w.ws().join("b/c"), "ws/a");
        let r = w.resolve("a/../../x");
        assert_eq!(r.path, w.root.join("x"));
        assert_eq!(r.location, Location::Outside);
    }

    #[test]
    fn a_missing_component_makes_the_rest_lexical() {
        let w = World::new();
        let r = w.resolve("nope/deeper/../file.txt");
        assert_eq!(r.path, w.ws().join("nope/file.txt"));
        assert_eq!(r.location, Location::Workspace);
        assert!(!r.exists);
    }

    #[test]
    fn a_missing_dir_then_dot_dot_still_follows_links() {
        let w = World::new();
        w.link("/etc", "ws/etc_link");
        let r = w.resolve("nope/../etc_link/shadow");
        assert_eq!(r.path, PathBuf::from("/etc/shadow"));
        assert!(r.is_symlink_escape);
    }

    #[test]
    fn an_absolute_path_through_a_workspace_alias_is_inside() {
        let w = World::new();
        w.link(w.ws(), "ws_alias");
        let raw = format!("{}/src/x.rs", w.root.join("ws_alias").display());
        let r = w.resolve(&raw);
        assert_eq!(r.path, w.ws().join("src/x.rs"));
        assert_eq!(r.location, Location::Workspace);
        assert!(!r.is_symlink_escape);
    }

    #[test]
    fn a_symlinked_git_hook_carries_the_hook_sensitivity() {
        // Writing through .git/hooks/pre-commit rewrites the hook even
        // though the bytes land in an ordinary file.
        let w = World::new();
        w.write("ws/scripts/hook.sh", "#!/bin/sh\n");
        w.link(w.ws().join("scripts/hook.sh"), "ws/.git/hooks/pre-commit");
        let r = w.resolve(".git/hooks/pre-commit");
        assert_eq!(r.path, w.ws().join("scripts/hook.sh"));
        assert_eq!(r.sensitivity, vec![GitInternals]);
    }

    // -- locations ---------------------------------------------------------

    #[test]
    fn locations_follow_the_documented_order() {
        let w = World::new();
        let scratch = w.root.join("scratch");
        fs::create_dir_all(&scratch).unwrap();
        let mut ctx = w.ctx.clone();
        ctx.temp_dirs = vec![scratch.clone()];
        let state_in_ws = w.ws().join(".airlock-state");
        let cases: Vec<(PathBuf, Location)> = vec![
            (w.ws().join("src/main.rs"), Location::Workspace),
            (w.ws(), Location::Workspace),
            (scratch.join("a/b"), Location::Temp),
            (w.ctx.state_dir.join("db.json"), Location::AirlockState),
            (w.root.join("elsewhere"), Location::Outside),
            ("/dev/null".into(), Location::Device),
            ("/dev/stdout".into(), Location::Device),
            ("/dev/stderr".into(), Location::Device),
            ("/dev/tty".into(), Location::Device),
            ("/dev/fd/3".into(), Location::Device),
            ("/dev/zero".into(), Location::Device),
            ("/dev/urandom".into(), Location::Device),
            ("/dev/random".into(), Location::Device),
            ("/dev/fd/x".into(), Location::Outside),
            ("/dev/sda".into(), Location::Outside),
        ];
        for (path, expected) in cases {
            let r = resolve(&ctx, &ctx.workspace, path.to_str().unwrap());
            assert_eq!(r.location, expected, "{}", path.display());
        }
        // A state dir inside the workspace is still the state dir.
        ctx.state_dir = state_in_ws.clone();
        let r = resolve(&ctx, &ctx.workspace, ".airlock-state/x");
        assert_eq!(r.location, Location::AirlockState);
        assert!(r.sensitivity.contains(&AirlockConfig));
    }

    #[test]
    fn a_workspace_inside_tmp_is_workspace() {
        let w = World::new();
        let mut ctx = w.ctx.clone();
        ctx.temp_dirs = vec![w.root.clone()];
        let r = resolve(&ctx, &ctx.workspace, "src/x");
        assert_eq!(r.location, Location::Workspace);
        let r = resolve(&ctx, &ctx.workspace, "../other");
        assert_eq!(r.location, Location::Temp);
    }

    #[test]
    fn new_canonicalizes_and_lists_temp_dirs() {
        let w = World::new();
        w.link(w.ws(), "ws_alias");
        let ctx = PathContext::new(
            &w.root.join("ws_alias"),
            &w.ctx.home,
            Path::new("relative-state"),
        )
        .unwrap();
        assert_eq!(ctx.workspace, w.ws());
        assert_eq!(ctx.state_dir, w.ws().join("relative-state"));
        assert!(ctx.temp_dirs.iter().all(|t| t.is_absolute()));
        let tmp = fs::canonicalize("/tmp").unwrap();
        // /tmp is scratch space unless the workspace itself lives there.
        assert_eq!(
            ctx.temp_dirs.contains(&tmp),
            !ctx.workspace.starts_with(&tmp)
        );
        assert!(PathContext::new(&w.root.join("missing"), &w.ctx.home, &w.root).is_err());
    }

    // -- devices and /proc -------------------------------------------------

    #[test]
    fn stdio_devices_are_not_followed_into_proc() {
        let w = World::new();
        for raw in ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/stdin"] {
            let r = w.resolve(raw);
            assert_eq!(r.path, PathBuf::from(raw));
            assert_eq!(r.location, Location::Device, "{raw}");
            assert!(r.sensitivity.is_empty(), "{raw}: {:?}", r.sensitivity);
        }
    }

    #[test]
    fn disk_devices_are_flagged() {
        let w = World::new();
        for raw in [
            "/dev/sda",
            "/dev/sda1",
            "/dev/nvme0n1p2",
            "/dev/vda",
            "/dev/hda",
            "/dev/mmcblk0",
            "/dev/disk0",
            "/dev/disk/by-id/x",
            "/dev/mem",
            "/dev/kmem",
            "/dev/port",
        ] {
            let r = w.resolve(raw);
            assert!(r.sensitivity.contains(&DiskDevice), "{raw}");
            assert_eq!(r.location, Location::Outside, "{raw}");
        }
    }

    #[test]
    fn proc_environ_and_mem_are_classified_by_owner() {
        let w = World::new();
        let cases = [
            ("/proc/self/environ", ProcessEnvironment),
            ("/proc/thread-self/environ", ProcessEnvironment),
            ("/proc/1/environ", OtherProcessEnvironment),
            ("/proc/4242/task/4243/environ", OtherProcessEnvironment),
            ("/proc/self/mem", OtherProcessEnvironment),
            ("/proc/1/mem", OtherProcessEnvironment),
        ];
        for (raw, expected) in cases {
            let r = w.resolve(raw);
            assert_eq!(r.path, PathBuf::from(raw), "{raw}");
            assert_eq!(r.sensitivity, vec![expected, SystemDir], "{raw}");
        }
    }

    #[test]
    fn proc_root_and_cwd_magic_links_are_seen_through() {
        let w = World::new();
        let r = w.resolve("/proc/self/root/etc/shadow");
        assert_eq!(r.path, PathBuf::from("/etc/shadow"));
        assert!(r.sensitivity.contains(&CredentialStore));
        let r = w.resolve("/proc/1/root/etc/sudoers");
        assert_eq!(r.path, PathBuf::from("/etc/sudoers"));
        assert!(r.sensitivity.contains(&CredentialStore));
        let r = w.resolve("/proc/self/cwd/../ws-other");
        assert_eq!(r.path, w.root.join("ws-other"));
        assert_eq!(r.location, Location::Outside);
    }

    #[test]
    fn a_workspace_symlink_to_proc_self_environ_is_process_environment() {
        let w = World::new();
        w.link("/proc/self/environ", "ws/env_dump");
        let r = w.resolve("env_dump");
        assert_eq!(r.path, PathBuf::from("/proc/self/environ"));
        assert!(r.sensitivity.contains(&ProcessEnvironment));
        assert!(r.is_symlink_escape);
    }

    // -- sensitivity table -------------------------------------------------

    #[test]
    fn workspace_file_names_map_to_their_categories() {
        let w = World::new();
        let cases: &[(&str, &[Sensitivity])] = &[
            ("src/main.rs", &[]),
            (".editorconfig", &[]),
            ("README.md", &[]),
            (".env", &[EnvFile]),
            (".ENV", &[EnvFile]),
            (".env.local", &[EnvFile]),
            ("config/prod.env", &[EnvFile]),
            (".environment", &[]),
            (".envrc", &[EnvFile, CodeRunningConfig]),
            ("server.key", &[PrivateKey]),
            ("certs/store.P12", &[PrivateKey]),
            ("id_ed25519", &[PrivateKey]),
            ("putty.ppk", &[PrivateKey]),
            ("cert.pem", &[SecretFile]),
            ("config/secrets.yaml", &[SecretFile]),
            ("AWS_CREDENTIALS", &[SecretFile]),
            ("my_api_key.txt", &[SecretFile]),
            ("db_password", &[SecretFile]),
            (".htpasswd", &[SecretFile]),
            (".airlock/policy.toml", &[AirlockConfig]),
            (".airlock", &[AirlockConfig]),
            (".git", &[GitInternals]),
            (".git/config", &[GitInternals]),
            (".Git/HOOKS/pre-commit", &[GitInternals]),
            (".gitmodules", &[GitInternals]),
            (".gitattributes", &[GitInternals]),
            (".githooks/pre-push", &[GitInternals]),
            (".husky/pre-commit", &[GitInternals]),
            (".gitignore", &[]),
            (".github/workflows/ci.yml", &[CiConfig]),
            (".github/actions/setup/action.yml", &[CiConfig]),
            (".github/CODEOWNERS", &[]),
            (".gitlab-ci.yml", &[CiConfig]),
            (".circleci/config.yml", &[CiConfig]),
            ("Jenkinsfile", &[CiConfig]),
            (".travis.yml", &[CiConfig]),
            ("azure-pipelines.yml", &[CiConfig]),
            (".buildkite/pipeline.yml", &[CiConfig]),
            (".drone.yml", &[CiConfig]),
            ("bitbucket-pipelines.yml", &[CiConfig]),
            (".ci/run.sh", &[CiConfig]),
            ("Cargo.toml", &[Manifest]),
            ("crates/x/Cargo.lock", &[Manifest]),
            ("build.rs", &[Manifest]),
            ("package.json", &[Manifest]),
            ("requirements-dev.txt", &[Manifest]),
            ("requirements.txt", &[Manifest]),
            ("airlock.gemspec", &[Manifest]),
            ("settings.gradle.kts", &[Manifest]),
            ("Makefile", &[Manifest]),
            ("GNUmakefile", &[Manifest]),
            ("CMakeLists.txt", &[Manifest]),
            ("Dockerfile", &[Manifest]),
            ("flake.nix", &[Manifest]),
            ("rust-toolchain.toml", &[Manifest]),
            ("go.sum", &[Manifest]),
            (".vscode/settings.json", &[CodeRunningConfig]),
            (".idea/workspace.xml", &[CodeRunningConfig]),
            (".npmrc", &[CodeRunningConfig]),
            (".yarnrc.yml", &[CodeRunningConfig]),
            (".pnpmfile.cjs", &[CodeRunningConfig]),
            (".cargo/config.toml", &[CodeRunningConfig]),
            (".cargo/config", &[CodeRunningConfig]),
            (".pre-commit-config.yaml", &[CodeRunningConfig]),
            (".claude/settings.json", &[CodeRunningConfig]),
            (".cursor/rules", &[CodeRunningConfig]),
            (".codex/config.toml", &[CodeRunningConfig]),
            (".gemini/settings.json", &[CodeRunningConfig]),
            (".devcontainer/devcontainer.json", &[CodeRunningConfig]),
        ];
        for (raw, expected) in cases {
            let r = w.resolve(raw);
            assert_eq!(r.sensitivity, *expected, "{raw}");
            assert_eq!(r.location, Location::Workspace, "{raw}");
        }
    }

    #[test]
    fn home_files_map_to_their_categories() {
        let w = World::new();
        let cases: &[(&str, &[Sensitivity])] = &[
            ("~/.ssh", &[CredentialStore]),
            ("~/.ssh/config", &[CredentialStore]),
            ("~/.ssh/authorized_keys", &[CredentialStore]),
            ("~/.ssh/id_rsa", &[PrivateKey, CredentialStore]),
            ("~/.ssh/id_rsa.pub", &[]),
            ("~/.ssh/known_hosts", &[]),
            ("~/.ssh/rc", &[CredentialStore, ShellStartup]),
            ("~/.SSH/ID_RSA", &[PrivateKey, CredentialStore]),
            ("~/.aws/credentials", &[CredentialStore, SecretFile]),
            ("~/.aws/config", &[CredentialStore]),
            ("~/.gnupg/pubring.kbx", &[CredentialStore]),
            (
                "~/.config/gcloud/application_default_credentials.json",
                &[CredentialStore, SecretFile],
            ),
            ("~/.azure/azureProfile.json", &[CredentialStore]),
            ("~/.kube/config", &[CredentialStore]),
            ("~/.docker/config.json", &[CredentialStore]),
            ("~/.netrc", &[CredentialStore]),
            ("~/.git-credentials", &[CredentialStore, SecretFile]),
            ("~/.npmrc", &[CredentialStore, CodeRunningConfig]),
            ("~/.pypirc", &[CredentialStore]),
            ("~/.cargo/credentials.toml", &[CredentialStore, SecretFile]),
            ("~/.cargo/config.toml", &[CodeRunningConfig]),
            ("~/.config/gh/hosts.yml", &[CredentialStore]),
            ("~/.local/share/keyrings/login.keyring", &[CredentialStore]),
            ("~/Library/Keychains/login.keychain-db", &[CredentialStore]),
            ("~/.password-store/web.gpg", &[CredentialStore]),
            ("~/.vault-token", &[CredentialStore, SecretFile]),
            (
                "~/.terraform.d/credentials.tfrc.json",
                &[CredentialStore, SecretFile],
            ),
            ("~/.config/airlock/config.toml", &[AirlockConfig]),
            ("~/.local/state/airlock/audit.log", &[AirlockConfig]),
            ("~/.bashrc", &[ShellStartup]),
            ("~/.bash_profile", &[ShellStartup]),
            ("~/.bash_login", &[ShellStartup]),
            ("~/.profile", &[ShellStartup]),
            ("~/.zshrc", &[ShellStartup]),
            ("~/.zshenv", &[ShellStartup]),
            ("~/.zprofile", &[ShellStartup]),
            ("~/.zlogin", &[ShellStartup]),
            ("~/.config/fish/config.fish", &[ShellStartup]),
            ("~/.inputrc", &[ShellStartup]),
            ("~/.gitconfig", &[ShellStartup]),
            ("~/.config/git/config", &[ShellStartup]),
            ("~/.config/autostart/x.desktop", &[ShellStartup]),
            ("~/.config/systemd/user/x.service", &[ShellStartup]),
            ("~/Library/LaunchAgents/x.plist", &[ShellStartup]),
            ("~/.claude/settings.json", &[CodeRunningConfig]),
            ("~/notes.txt", &[]),
            ("~/project/.profile", &[]),
        ];
        for (raw, expected) in cases {
            let r = w.resolve(raw);
            assert_eq!(r.sensitivity, *expected, "{raw}");
        }
    }

    #[test]
    fn system_paths_map_to_their_categories() {
        let w = World::new();
        let cases: &[(&str, &[Sensitivity])] = &[
            ("/etc/passwd", &[SystemDir]),
            ("/etc/shadow", &[CredentialStore, SystemDir]),
            ("/etc/gshadow", &[CredentialStore, SystemDir]),
            ("/etc/sudoers", &[CredentialStore, SystemDir]),
            ("/etc/sudoers.d/90-x", &[CredentialStore, SystemDir]),
            ("/etc/profile", &[ShellStartup, SystemDir]),
            ("/etc/profile.d/x.sh", &[ShellStartup, SystemDir]),
            ("/etc/bash.bashrc", &[ShellStartup, SystemDir]),
            ("/usr/bin/env", &[SystemDir]),
            ("/usr/local/bin/tool", &[SystemDir]),
            ("/bin/sh", &[SystemDir]),
            ("/sbin/init", &[SystemDir]),
            ("/lib64/ld.so", &[SystemDir]),
            ("/libx32/x", &[SystemDir]),
            ("/boot/vmlinuz", &[SystemDir]),
            ("/opt/app/bin", &[SystemDir]),
            ("/var/log/syslog", &[SystemDir]),
            ("/var/tmp/scratch", &[]),
            ("/sys/kernel/x", &[SystemDir]),
            ("/root/notes", &[SystemDir]),
            ("/System/Library/x", &[SystemDir]),
            ("/Library/Preferences/x", &[SystemDir]),
            ("/private/etc/shadow", &[CredentialStore, SystemDir]),
            ("/private/etc/passwd", &[SystemDir]),
            ("/srv/data", &[]),
        ];
        for (raw, expected) in cases {
            let r = w.resolve(raw);
            // The walk follows real symlinks (e.g. /bin -> usr/bin), so
            // judge the categories, not the exact landing spot.
            assert_eq!(r.sensitivity, *expected, "{raw} -> {}", r.path.display());
        }
        let r = w.resolve("/etc/ssh/ssh_host_ed25519_key");
        assert!(r.sensitivity.contains(&CredentialStore));
        assert!(r.sensitivity.contains(&SystemDir));
    }

    #[test]
    fn root_is_not_a_system_dir_when_it_is_home() {
        let w = World::new();
        let mut ctx = w.ctx.clone();
        ctx.home = PathBuf::from("/root");
        let r = resolve(&ctx, &ctx.workspace, "~/notes");
        assert_eq!(r.path, PathBuf::from("/root/notes"));
        assert!(r.sensitivity.is_empty());
        let r = resolve(&ctx, &ctx.workspace, "~/.bashrc");
        assert_eq!(r.sensitivity, vec![ShellStartup]);
    }

    #[test]
    fn a_workspace_under_opt_is_not_a_system_dir() {
        let w = World::new();
        let mut ctx = w.ctx.clone();
        ctx.workspace = PathBuf::from("/opt/project");
        let r = resolve(&ctx, &ctx.workspace, "src/main.rs");
        assert_eq!(r.location, Location::Workspace);
        assert!(r.sensitivity.is_empty());
        let r = resolve(&ctx, &ctx.workspace, "../other/x");
        assert_eq!(r.sensitivity, vec![SystemDir]);
    }

    #[test]
    fn unicode_names_match_case_insensitively() {
        let w = World::new();
        let cases: &[(&str, &[Sensitivity])] = &[
            ("données/Ключ.KEY", &[PrivateKey]),
            ("ünï/.ENV.Local", &[EnvFile]),
            ("日本/ＲＥＡＤＭＥ.md", &[]),
            ("Ünïcødé-PASSWORD.txt", &[SecretFile]),
            // KELVIN SIGN lowercases to 'k'; on a case-folding filesystem
            // this is the same directory as `.kube`.
            ("~/.\u{212A}ube/config", &[CredentialStore]),
        ];
        for (raw, expected) in cases {
            let r = w.resolve(raw);
            assert_eq!(r.sensitivity, *expected, "{raw}");
        }
        w.write("ws/données/Ключ.KEY", "");
        let r = w.resolve("données/Ключ.KEY");
        assert!(r.exists);
        assert_eq!(r.path, w.ws().join("données/Ключ.KEY"));
    }

    #[test]
    fn sensitivities_are_sorted_and_unique() {
        let w = World::new();
        let r = w.resolve("~/.aws/credentials.key");
        let mut sorted = r.sensitivity.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(r.sensitivity, sorted);
        assert_eq!(r.sensitivity, vec![PrivateKey, CredentialStore, SecretFile]);
    }

    #[test]
    fn every_pattern_is_lowercase_and_well_formed() {
        for rule in RULES {
            assert_eq!(
                rule.pattern,
                rule.pattern.to_lowercase(),
                "{}",
                rule.pattern
            );
            assert!(!rule.pattern.starts_with('/'), "{}", rule.pattern);
            assert!(!rule.pattern.contains("//"), "{}", rule.pattern);
            let inner = rule.pattern.trim_end_matches("/**");
            assert!(!inner.contains("**"), "{}", rule.pattern);
        }
    }

    // -- content sniffing --------------------------------------------------

    #[test]
    fn private_key_content_is_detected() {
        let w = World::new();
        let cases = [
            ("ws/a", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n", true),
            ("ws/b", "junk\n-----BEGIN RSA PRIVATE KEY-----\nMII\n", true),
            ("ws/c", "-----BEGIN PRIVATE KEY-----\n", true),
            ("ws/d", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n", true),
            ("ws/e", "-----BEGIN CERTIFICATE-----\nMII\n", false),
            ("ws/f", "-----BEGIN PUBLIC KEY-----\n", false),
            ("ws/g", "", false),
        ];
        for (rel, body, expected) in cases {
            w.write(rel, body);
            assert_eq!(looks_like_private_key(&w.root.join(rel)), expected, "{rel}");
        }
        assert!(!looks_like_private_key(&w.ws()));
        assert!(!looks_like_private_key(&w.ws().join("missing")));
        let late = format!("{}-----BEGIN RSA PRIVATE KEY-----", "x".repeat(5000));
        w.write("ws/late", &late);
        assert!(!looks_like_private_key(&w.ws().join("late")));
    }

    #[test]
    fn pem_is_a_secret_file_unless_it_holds_a_private_key() {
        let w = World::new();
        w.write("ws/cert.pem", "-----BEGIN CERTIFICATE-----\n");
        w.write("ws/key.pem", "-----BEGIN EC PRIVATE KEY-----\n");
        w.write("ws/notes.txt", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
        assert_eq!(w.resolve("cert.pem").sensitivity, vec![SecretFile]);
        assert_eq!(
            w.resolve("key.pem").sensitivity,
            vec![PrivateKey, SecretFile]
        );
        assert_eq!(w.resolve("notes.txt").sensitivity, vec![PrivateKey]);
        w.link(w.ws().join("notes.txt"), "ws/harmless");
        assert_eq!(w.resolve("harmless").sensitivity, vec![PrivateKey]);
    }

    // -- API surface -------------------------------------------------------

    #[test]
    fn resolved_paths_serialize_in_snake_case() {
        let w = World::new();
        let r = w.resolve(".env.local");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["raw"], ".env.local");
        assert_eq!(json["location"], "workspace");
        assert_eq!(json["sensitivity"], serde_json::json!(["env_file"]));
        assert_eq!(json["is_symlink_escape"], false);
        assert_eq!(json["exists"], false);
        assert_eq!(
            json["path"],
            w.ws().join(".env.local").to_string_lossy().as_ref()
        );
        let json = serde_json::to_value(Location::AirlockState).unwrap();
        assert_eq!(json, "airlock_state");
    }

    #[test]
    fn non_utf8_symlink_targets_still_serialize() {
        use std::os::unix::ffi::OsStrExt;
        let w = World::new();
        let target = w.root.join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
        w.link(&target, "ws/odd");
        let r = w.resolve("odd");
        assert_eq!(r.path, target);
        assert!(serde_json::to_string(&r).is_ok());
    }

    #[test]
    fn every_sensitivity_has_a_description() {
        let all = [
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
        ];
        for s in all {
            assert!(!s.describe().is_empty(), "{s:?}");
        }
        assert!(EnvFile.describe().contains(".env"));
        let mut sorted = all.to_vec();
        sorted.sort();
        assert_eq!(sorted, all.to_vec());
    }
}
