//! Programs that reach past the workspace: signalling processes, scheduling jobs, managing
//! services or the machine, and reading password stores and keys.

use super::tables::SYSTEM_CHANGE;
use super::{Args, Effect, lit};

/// Processes, services and lasting changes to the machine, or `None` for another program.
pub(super) fn system_changes(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
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
        _ => return None,
    })
}

/// Keychains, password stores, GnuPG and SSH keys, or `None` for another program.
pub(super) fn credential_tools(name: &str, args: &Args) -> Option<Vec<Effect>> {
    Some(match name {
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
        _ => return None,
    })
}
