//! Which paths are sensitive and why, content sniffing, and the public surface.

use super::*;

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
