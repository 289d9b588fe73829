//! Globs judged by every path they could name: what a sandboxed command may never read, and
//! airlock's state, whatever exists on this machine.

use super::*;

impl World {
    fn pattern(&self, raw: &str) -> ResolvedPath {
        resolve_pattern(&self.ctx, &self.ctx.workspace, raw)
    }

    /// What the glob could name that a sandboxed command may never read.
    fn unreadable(&self, raw: &str) -> Vec<Sensitivity> {
        self.pattern(raw)
            .sensitivity
            .into_iter()
            .filter(|s| UNREADABLE.contains(s))
            .collect()
    }
}

#[test]
fn a_glob_carries_every_credential_it_could_name_where_none_exists() {
    let w = World::new();
    let cases: &[(&str, &[Sensitivity])] = &[
        ("~/.ssh/id_*", &[PrivateKey, CredentialStore]),
        ("~/.ssh/id_[rd]sa", &[PrivateKey, CredentialStore]),
        ("~/.ssh/id_?sa", &[PrivateKey, CredentialStore]),
        ("~/.ssh/*", &[PrivateKey, CredentialStore]),
        ("~/.s*/*", &[PrivateKey, CredentialStore]),
        ("~/.ss?/config", &[CredentialStore]),
        // `~/.airlock/credentials` would be a project's airlock configuration.
        (
            "~/.*/credentials",
            &[CredentialStore, SecretFile, AirlockConfig],
        ),
        ("~/.aw[s]/*", &[CredentialStore]),
        ("~/.gnupg/*.gpg", &[CredentialStore]),
        ("~/.config/gcloud/*", &[CredentialStore]),
        ("/home/*/.aws/*", &[CredentialStore]),
        ("/h*/*/.aws/credentials", &[CredentialStore, SecretFile]),
        ("/*/root/.ssh/id_*", &[PrivateKey, CredentialStore]),
        ("/etc/sha*", &[CredentialStore]),
        ("/*/shadow", &[CredentialStore]),
        ("/etc/ssh/*", &[CredentialStore]),
        ("~/.env*", &[EnvFile]),
        ("certs/*.key", &[PrivateKey]),
        ("~/.config/air*/rules.toml", &[AirlockConfig]),
    ];
    let mut wrong = Vec::new();
    for (raw, expected) in cases {
        let got = w.unreadable(raw);
        if got != *expected {
            wrong.push(format!("{raw}: {got:?}, expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_glob_that_cannot_name_a_credential_carries_nothing_more() {
    let w = World::new();
    for raw in [
        "*",
        "src/*",
        "src/main*",
        "notes*",
        "*.rs",
        "~/*",
        "~/*/*.txt",
        "~/.bash*",
        "~/.ssh/*.pub",
        "~/.ssh/id_*.pub",
        "~/.ssh/known_hosts",
        "/etc/*.conf",
        "../*/README.md",
    ] {
        assert_eq!(w.unreadable(raw), Vec::<Sensitivity>::new(), "{raw}");
    }
}

#[test]
fn a_leading_wildcard_never_names_a_hidden_directory() {
    let w = World::new();
    // Bash's `*` and `?` skip names that start with `.`: `~/*` is never `~/.ssh`.
    assert!(w.unreadable("~/*/id_ed25519.pub").is_empty());
    assert!(w.unreadable("~/?ssh/config").is_empty());
    assert_eq!(w.unreadable("~/.?sh/config"), vec![CredentialStore]);
}

#[test]
fn a_glob_that_could_name_airlocks_state_is_in_airlocks_state() {
    let w = World::new();
    assert_eq!(
        w.pattern("~/.local/st*/airlock/grants.db").location,
        Location::AirlockState
    );
    assert_eq!(
        w.pattern("~/.local/*/air*").location,
        Location::AirlockState
    );
    // The directory above it is not in it.
    assert_eq!(w.pattern("~/.local/*").location, Location::Outside);
}

#[test]
fn a_glob_resolves_through_the_directories_it_names_like_any_path() {
    let w = World::new();
    w.link(w.root.join("home/.ssh"), "ws/keys");
    let p = w.pattern("keys/*");
    assert_eq!(p.location, Location::Outside);
    assert!(p.sensitivity.contains(&CredentialStore), "{p:?}");
    // A plain path reads the same either way.
    for raw in ["src/main.rs", "~/.ssh/id_rsa", "../other", "/etc/passwd"] {
        assert_eq!(w.pattern(raw), w.resolve(raw), "{raw}");
    }
}
