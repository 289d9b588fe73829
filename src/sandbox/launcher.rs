//! The launcher: `airlock __sandbox [--no-network] [--read ROOT]... [--write ROOT]... -- PROGRAM
//! ARGS...`. It runs before anything else in `main` (no tokio, no config, no terminal), cuts the
//! network, restricts itself with Landlock, and replaces itself with the program. Whatever it
//! cannot enforce, it refuses: nothing runs, exit status 125, and stderr says why.
//!
//! Network, strongest first: a network namespace of its own (only a loopback that is down, so
//! every TCP, UDP and ICMP connection fails, 127.0.0.1 included); as a user who may not make
//! one, a user namespace with a network namespace (ids mapped to themselves, so files and `id`
//! look the same); where neither works, Landlock's TCP rules (ABI 4+: TCP `connect` and `bind`
//! refused; UDP and other families not covered).
//! Landlock scopes (ABI 6+) also keep the command from signalling processes outside its sandbox
//! (airlock itself) and from abstract unix sockets outside it.

use std::ffi::OsString;
use std::process::ExitCode;

use super::Support;

/// The launcher's exit status when it refuses to run the program.
pub const REFUSED: u8 = 125;

/// Runs the launcher with its arguments (after `__sandbox`). Returns only on failure.
pub fn main(args: impl Iterator<Item = OsString>) -> ExitCode {
    match run(args) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("airlock sandbox: {e}; nothing ran");
            ExitCode::from(REFUSED)
        }
    }
}

struct Request {
    read: Vec<OsString>,
    write: Vec<OsString>,
    no_network: bool,
    program: Vec<OsString>,
}

fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Request, String> {
    let mut request = Request {
        read: Vec::new(),
        write: Vec::new(),
        no_network: false,
        program: Vec::new(),
    };
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--read") => request.read.push(args.next().ok_or("--read needs a path")?),
            Some("--write") => request
                .write
                .push(args.next().ok_or("--write needs a path")?),
            Some("--no-network") => request.no_network = true,
            Some("--") => {
                request.program = args.collect();
                break;
            }
            _ => {
                return Err(format!(
                    "unknown launcher argument {:?} (this is airlock's internal sandbox launcher)",
                    arg
                ));
            }
        }
    }
    if request.program.is_empty() {
        return Err("no program to run after `--`".into());
    }
    Ok(request)
}

#[cfg(target_os = "linux")]
fn run(args: impl Iterator<Item = OsString>) -> Result<std::convert::Infallible, String> {
    use std::os::unix::process::CommandExt;
    let request = parse(args)?;
    let own_namespace = if request.no_network {
        linux::own_network_namespace()
    } else {
        false
    };
    linux::restrict(&request, own_namespace)?;
    let error = std::process::Command::new(&request.program[0])
        .args(&request.program[1..])
        .exec();
    Err(format!("cannot start {:?}: {error}", request.program[0]))
}

#[cfg(not(target_os = "linux"))]
fn run(args: impl Iterator<Item = OsString>) -> Result<std::convert::Infallible, String> {
    parse(args)?;
    Err("airlock has no sandbox on this operating system yet".into())
}

/// What this kernel supports, asked without restricting airlock itself.
#[cfg(target_os = "linux")]
pub fn kernel_support() -> Support {
    linux::support()
}

#[cfg(not(target_os = "linux"))]
pub fn kernel_support() -> Support {
    Support::Missing {
        why: "airlock has no sandbox on this operating system yet (Landlock is Linux only)".into(),
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::Path;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, LandlockStatus, PathBeneath, PathFd, RestrictSelf,
        Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
    };
    use nix::sched::{CloneFlags, unshare};

    use super::{Request, Support};

    /// The ABIs whose rights the ruleset asks for: files (5 adds device ioctls), TCP (4) and
    /// scopes (6). An older kernel enforces what it knows (best effort), checked below.
    const FS_ABI: ABI = ABI::V5;
    const NET_ABI: ABI = ABI::V4;
    const SCOPE_ABI: ABI = ABI::V6;

    pub fn support() -> Support {
        match RestrictSelf::default().no_new_privs(false).apply() {
            Ok(status) => match status.landlock {
                LandlockStatus::Available {
                    effective_abi,
                    kernel_abi,
                } => Support::Landlock {
                    abi: kernel_abi.unwrap_or(abi_number(effective_abi)),
                },
                LandlockStatus::NotEnabled => Support::Missing {
                    why: "this kernel has Landlock but it is not enabled (add `landlock` to the \
                          `lsm=` boot parameter)"
                        .into(),
                },
                LandlockStatus::NotImplemented => Support::Missing {
                    why: "this kernel has no Landlock (it needs Linux 5.13 or newer built with \
                          CONFIG_SECURITY_LANDLOCK)"
                        .into(),
                },
            },
            Err(e) => Support::Missing {
                why: format!("cannot ask the kernel about Landlock: {e}"),
            },
        }
    }

    fn abi_number(abi: ABI) -> i32 {
        [
            ABI::V10,
            ABI::V9,
            ABI::V8,
            ABI::V7,
            ABI::V6,
            ABI::V5,
            ABI::V4,
            ABI::V3,
            ABI::V2,
            ABI::V1,
        ]
        .iter()
        .position(|a| *a == abi)
        .map(|i| 10 - i as i32)
        .unwrap_or(0)
    }

    /// A network namespace of its own: directly (root), else inside a user namespace of its own
    /// with the user's ids mapped to themselves. False when neither can be made.
    pub fn own_network_namespace() -> bool {
        if unshare(CloneFlags::CLONE_NEWNET).is_ok() {
            return true;
        }
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        if unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET).is_err() {
            return false;
        }
        // Without the maps every file would look owned by `nobody`; if they cannot be written,
        // the namespaces still cut the network, so the run goes on.
        let _ = std::fs::write("/proc/self/setgroups", "deny");
        let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
        let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
        true
    }

    pub fn restrict(request: &Request, own_namespace: bool) -> Result<(), String> {
        let tcp_rules = request.no_network && !own_namespace;
        let fail = |e: landlock::RulesetError| format!("cannot set up Landlock: {e}");
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(FS_ABI))
            .map_err(fail)?;
        // In a network namespace of its own the command has no network to reach, and its
        // errors say so ("Network is unreachable"); Landlock's TCP rules are the fallback.
        if tcp_rules {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(NET_ABI))
                .map_err(fail)?;
        }
        let mut created = ruleset
            .scope(Scope::from_all(SCOPE_ABI))
            .map_err(fail)?
            .create()
            .map_err(fail)?;
        for (roots, access) in [
            (&request.read, AccessFs::from_read(FS_ABI)),
            (&request.write, AccessFs::from_all(FS_ABI)),
        ] {
            for root in roots {
                let path = Path::new(root);
                // A root that is gone since the plan was made grants nothing.
                let Ok(fd) = PathFd::new(path) else {
                    continue;
                };
                // The type of what was opened, from the open descriptor (no second path lookup:
                // a plan can hold a thousand roots, each paid for by every command).
                let is_dir = nix::sys::stat::fstat(&fd).is_ok_and(|st| {
                    use nix::sys::stat::SFlag;
                    SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
                });
                let access = if is_dir {
                    access
                } else {
                    access & AccessFs::from_file(FS_ABI)
                };
                created = created
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|e| format!("cannot grant {}: {e}", path.display()))?;
            }
        }
        let status = created.restrict_self().map_err(fail)?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err("the kernel does not enforce Landlock".into());
        }
        let abi = match status.landlock {
            LandlockStatus::Available { effective_abi, .. } => effective_abi,
            _ => ABI::Unsupported,
        };
        if tcp_rules && abi < ABI::V4 {
            return Err(
                "the network cannot be cut: no network namespace could be made and this \
                 kernel's Landlock (before ABI 4) has no TCP rules"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launcher_refuses_arguments_it_does_not_know_and_a_missing_program() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>().into_iter();
        assert!(parse(args(&["--read"])).is_err());
        assert!(parse(args(&["--bogus", "--", "true"])).is_err());
        assert!(parse(args(&["--read", "/", "--"])).is_err());
        let ok = parse(args(&[
            "--no-network",
            "--write",
            "/tmp",
            "--",
            "bash",
            "-c",
            "x",
        ]))
        .unwrap();
        assert!(ok.no_network);
        assert_eq!(ok.write, vec![OsString::from("/tmp")]);
        assert_eq!(ok.program.len(), 3);
    }
}
