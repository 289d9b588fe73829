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
mod tests;
