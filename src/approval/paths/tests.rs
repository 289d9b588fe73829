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
