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
//!
//! The terminal belongs to the human: before anything else the launcher starts a session of its
//! own (`setsid`), so the command has no controlling terminal, and `/dev/tty` or `TIOCSTI` cannot
//! reach the screen a decision is made on. That holds with `--unconfined` too (the sandbox `off`,
//! or a kernel without Landlock), where the launcher does nothing else. Run as root, a sandboxed
//! command starts in a user namespace of its own (ids mapped to themselves), so it keeps no
//! capability over the machine (`reboot`, `mknod` of devices, modules, `TIOCSTI` on another
//! terminal); and no write root lets it make device files. Its processes are limited, and as
//! root none outlives it: see `processes`.

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
    /// Read roots where nothing is covered (no mount namespace): the full walk.
    read: Vec<OsString>,
    /// Read roots once `cover` is covered: see `plan::Plan::read_covered`.
    read_covered: Vec<OsString>,
    /// Protected places to cover in the command's mount namespace.
    cover: Vec<OsString>,
    write: Vec<OsString>,
    /// Covered in the command's mount namespace: see `plan::Plan::hidden`, `pinned`,
    /// `read_only`.
    writable: Vec<OsString>,
    hide: Vec<OsString>,
    pin: Vec<OsString>,
    read_only: Vec<OsString>,
    no_network: bool,
    /// Only leave the terminal's session: no Landlock, no namespaces.
    unconfined: bool,
    /// This launcher is the first process of the PID namespace the launcher that started it
    /// made (see `processes`): it is in its namespaces and session already.
    first: bool,
    program: Vec<OsString>,
}

fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Request, String> {
    let mut request = Request {
        read: Vec::new(),
        read_covered: Vec::new(),
        cover: Vec::new(),
        write: Vec::new(),
        writable: Vec::new(),
        hide: Vec::new(),
        pin: Vec::new(),
        read_only: Vec::new(),
        no_network: false,
        unconfined: false,
        first: false,
        program: Vec::new(),
    };
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--read") => request.read.push(args.next().ok_or("--read needs a path")?),
            Some("--read-covered") => request
                .read_covered
                .push(args.next().ok_or("--read-covered needs a path")?),
            Some("--cover") => request
                .cover
                .push(args.next().ok_or("--cover needs a path")?),
            Some("--write") => request
                .write
                .push(args.next().ok_or("--write needs a path")?),
            Some("--writable") => request
                .writable
                .push(args.next().ok_or("--writable needs a path")?),
            Some("--hide") => request.hide.push(args.next().ok_or("--hide needs a path")?),
            Some("--pin") => request.pin.push(args.next().ok_or("--pin needs a path")?),
            Some("--read-only") => request
                .read_only
                .push(args.next().ok_or("--read-only needs a path")?),
            Some("--no-network") => request.no_network = true,
            Some("--unconfined") => request.unconfined = true,
            #[cfg(target_os = "linux")]
            Some(super::processes::FIRST_ARG) => request.first = true,
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
    if request.unconfined
        && (request.first
            || request.no_network
            || !request.read.is_empty()
            || !request.read_covered.is_empty()
            || !request.write.is_empty()
            || request.has_mounts())
    {
        return Err(
            "--unconfined takes no roots, no mounts, no --no-network and no --first".into(),
        );
    }
    Ok(request)
}

impl Request {
    fn has_mounts(&self) -> bool {
        !(self.writable.is_empty()
            && self.hide.is_empty()
            && self.cover.is_empty()
            && self.pin.is_empty()
            && self.read_only.is_empty())
    }
}

/// How much lower than airlock a command runs (its `nice`, which its processes inherit). Only
/// contention changes anything: alone on a machine a command runs as fast; when many commands
/// flood a machine with few cores, the cockpit's keys and frames (and the person's other
/// programs) come first.
pub const COMMAND_NICE: i32 = 5;

#[cfg(target_os = "linux")]
fn run(args: impl Iterator<Item = OsString>) -> Result<std::convert::Infallible, String> {
    use std::os::unix::process::CommandExt;
    let args: Vec<OsString> = args.collect();
    let request = parse(args.iter().cloned())?;
    // Pid 1 of the command's namespaces inherits it from the launcher outside.
    if !request.first {
        // A command that cannot be lowered still runs.
        let _ = rustix::process::nice(COMMAND_NICE);
    }
    let root = nix::unistd::geteuid().is_root();
    if request.first {
        // Pid 1 of the command's namespaces, in the session the launcher outside made.
        super::processes::limit_and_mount_proc()?;
        linux::cover_and_reenter(&request)?;
        let null = super::processes::null();
        linux::restrict(&request, request.no_network, request.has_mounts())?;
        return super::processes::run_as_first(&request.program, null);
    }
    // No controlling terminal: a session of its own (the launcher is never a group leader).
    nix::unistd::setsid().map_err(|e| format!("cannot leave the terminal's session: {e}"))?;
    if !request.unconfined {
        let namespaces = linux::own_namespaces(&request, root)?;
        if namespaces.pid {
            return super::processes::start_first(&args);
        }
        linux::restrict(&request, namespaces.network, namespaces.covered)?;
    }
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

    use std::ffi::OsString;

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

    /// The namespaces a sandboxed command got.
    pub struct Namespaces {
        /// A network namespace of its own (no network to reach).
        pub network: bool,
        /// A PID namespace of its own: its first process is still to start (`processes`),
        /// and covers the mounts.
        pub pid: bool,
        /// The request's places are covered (a mount namespace of its own was made).
        pub covered: bool,
    }

    /// The namespaces of a sandboxed command.
    ///
    /// Whoever runs airlock: first a user namespace with a PID namespace and a mount namespace
    /// of its own (and a network namespace when the network is cut), ids mapped to themselves,
    /// so its capabilities hold only inside it, its processes are limited and none outlives it
    /// (`processes`). Where the kernel will not make those: as root, the same without the PID
    /// namespace, refused when none can be made and the process holds any capability; as
    /// another user, the same when the kernel lets users make user namespaces; where it does
    /// not, a network namespace if one can be made, and nothing is covered (the README says
    /// what remains reachable then).
    pub fn own_namespaces(request: &Request, root: bool) -> Result<Namespaces, String> {
        let no_network = request.no_network;
        let mut flags = CloneFlags::empty();
        if no_network {
            flags |= CloneFlags::CLONE_NEWNET;
        }
        if request.has_mounts() {
            flags |= CloneFlags::CLONE_NEWNS;
        }
        // Root keeps its capabilities inside when the launcher starts again as pid 1 (another
        // user's are gone at `exec`, so for them the limit is `RLIMIT_NPROC`, below).
        let whole = flags | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWNS;
        if root && user_namespace(whole).is_ok() {
            return Ok(Namespaces {
                network: no_network,
                pid: true,
                covered: false,
            });
        }
        let network = |network| Namespaces {
            network,
            pid: false,
            covered: false,
        };
        // Another user always gets a user namespace when the kernel allows it: the processes
        // `RLIMIT_NPROC` counts are then the command's alone.
        match user_namespace(flags) {
            Ok(()) => {
                if !root {
                    super::super::processes::limit_user_processes();
                }
                cover_and_reenter(request)?;
                return Ok(Namespaces {
                    covered: request.has_mounts(),
                    ..network(no_network)
                });
            }
            Err(why) if root && holds_capabilities() => {
                return Err(format!(
                    "cannot take root's capabilities away from the command: {why}; run \
                     airlock as a normal user, or allow user namespaces"
                ));
            }
            Err(_) => {}
        }
        if !no_network {
            return Ok(network(false));
        }
        if unshare(CloneFlags::CLONE_NEWNET).is_ok() {
            return Ok(network(true));
        }
        // Without the maps every file would look owned by `nobody`; if they cannot be written,
        // the namespaces still cut the network, so the run goes on.
        Ok(network(user_namespace(CloneFlags::CLONE_NEWNET).is_ok()))
    }

    /// Covers what the request covers (nothing when it has no mounts), then takes the working
    /// directory again: taken before the mounts, it is the one the command's mounts show (the
    /// workspace stays writable).
    pub fn cover_and_reenter(request: &Request) -> Result<(), String> {
        if request.has_mounts() {
            cover(request)?;
            let here = std::env::current_dir()
                .map_err(|e| format!("cannot find the working directory: {e}"))?;
            std::env::set_current_dir(&here)
                .map_err(|e| format!("cannot enter {}: {e}", here.display()))?;
        }
        Ok(())
    }

    /// In the command's own mount namespace (nothing here reaches the user's): the places it
    /// may write mounted over themselves and every other mount made read-only (so `chmod`,
    /// `chown`, `utime` and `setxattr`, which Landlock does not govern, fail there); an empty
    /// read-only directory over each hidden directory and `/dev/null` over each hidden socket;
    /// each pinned directory mounted over itself (a mount point cannot be renamed); then each
    /// policy file mounted read-only over itself. A path gone since the plan was made is
    /// nothing to cover; any other failure refuses the run.
    fn cover(request: &Request) -> Result<(), String> {
        use nix::mount::{MsFlags, mount};
        let none: Option<&str> = None;
        mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
            .map_err(|e| format!("cannot make the command's mounts private: {e}"))?;
        let gone = |e: nix::errno::Errno| e == nix::errno::Errno::ENOENT;
        for path in &request.writable {
            match mount(
                Some(path.as_os_str()),
                path.as_os_str(),
                none,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                none,
            ) {
                Ok(()) => {}
                Err(e) if gone(e) => {}
                Err(e) => return Err(format!("cannot keep {path:?} writable: {e}")),
            }
        }
        read_only_elsewhere(&request.writable);
        // A place this user cannot reach is one the command cannot reach either.
        let unreachable = |e: nix::errno::Errno| gone(e) || e == nix::errno::Errno::EACCES;
        let sealed = sealed_file(request);
        for path in request.hide.iter().chain(&request.cover) {
            let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
            let source = match &sealed {
                // A covered file is replaced by one nobody but root may open (another user
                // gets `Permission denied`, as from Landlock); a socket by `/dev/null`.
                Some((dir, file)) if request.cover.contains(path) => {
                    if Path::new(path) == dir.as_path() {
                        continue;
                    }
                    file.as_os_str()
                }
                _ => std::ffi::OsStr::new("/dev/null"),
            };
            let covered = if is_dir {
                mount(
                    Some("tmpfs"),
                    path.as_os_str(),
                    Some("tmpfs"),
                    MsFlags::MS_RDONLY
                        | MsFlags::MS_NOSUID
                        | MsFlags::MS_NODEV
                        | MsFlags::MS_NOEXEC,
                    Some("size=4k,mode=000"),
                )
            } else {
                mount(Some(source), path.as_os_str(), none, MsFlags::MS_BIND, none)
            };
            match covered {
                Ok(()) => {}
                Err(e) if unreachable(e) => {}
                Err(e) => return Err(format!("cannot hide {path:?} from the command: {e}")),
            }
        }
        let bind = |path: &OsString| {
            mount(
                Some(path.as_os_str()),
                path.as_os_str(),
                none,
                MsFlags::MS_BIND,
                none,
            )
        };
        for path in &request.pin {
            match bind(path) {
                Ok(()) => {}
                Err(e) if gone(e) => {}
                Err(e) => return Err(format!("cannot pin {path:?}: {e}")),
            }
        }
        for path in &request.read_only {
            let read_only = bind(path).and_then(|()| {
                mount(
                    none,
                    path.as_os_str(),
                    none,
                    MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
                    none,
                )
            });
            match read_only {
                Ok(()) => {}
                Err(e) if gone(e) => {}
                Err(e) => {
                    return Err(format!(
                        "cannot make {path:?} (a file airlock reads as policy) read-only: {e}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Covers the request's first directory to cover with a read-only tmpfs that holds one
    /// empty file of mode 000, and returns both: what the other covered files are replaced by.
    /// `None` (they get `/dev/null`) when no directory is covered or that cannot be made.
    fn sealed_file(request: &Request) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        use nix::mount::{MsFlags, mount};
        use std::os::unix::fs::PermissionsExt;
        let dir = request
            .cover
            .iter()
            .map(std::path::PathBuf::from)
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_dir()))?;
        let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        mount(
            Some("tmpfs"),
            &dir,
            Some("tmpfs"),
            flags,
            Some("size=4k,mode=700"),
        )
        .ok()?;
        let file = dir.join("sealed");
        let made = std::fs::write(&file, b"")
            .and_then(|()| std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)))
            .and_then(|()| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)));
        let none: Option<&str> = None;
        let sealed = mount(
            none,
            &dir,
            none,
            flags | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
            none,
        );
        if made.is_err() || sealed.is_err() {
            // Still a cover (empty, or holding an empty file), just not a source.
            let _ = mount(
                none,
                &dir,
                none,
                flags | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
                none,
            );
            return None;
        }
        Some((dir, file))
    }

    /// Makes every mount read-only but those at or under `writable`. A mount the kernel will not
    /// make read-only (some special file systems in a user namespace) stays as it was.
    fn read_only_elsewhere(writable: &[OsString]) {
        use nix::mount::{MsFlags, mount};
        use std::path::Path;
        let none: Option<&str> = None;
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in table.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let (Some(point), Some(options)) = (fields.get(4), fields.get(5)) else {
                continue;
            };
            let point = unescape(point);
            let inside = writable
                .iter()
                .any(|w| Path::new(&point).starts_with(Path::new(w)));
            if inside || options.split(',').any(|o| o == "ro") {
                continue;
            }
            // A remount must keep the flags the mount has (a user namespace may not clear
            // them).
            let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
            for option in options.split(',') {
                flags |= match option {
                    "nosuid" => MsFlags::MS_NOSUID,
                    "nodev" => MsFlags::MS_NODEV,
                    "noexec" => MsFlags::MS_NOEXEC,
                    "noatime" => MsFlags::MS_NOATIME,
                    "nodiratime" => MsFlags::MS_NODIRATIME,
                    "relatime" => MsFlags::MS_RELATIME,
                    "strictatime" => MsFlags::MS_STRICTATIME,
                    _ => MsFlags::empty(),
                };
            }
            let _ = mount(none, point.as_os_str(), none, flags, none);
        }
    }

    /// A mount point as `/proc/self/mountinfo` writes it: space, tab, newline and backslash as
    /// octal escapes.
    fn unescape(field: &str) -> OsString {
        let bytes = field.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\\'
                && i + 3 < bytes.len()
                && bytes[i + 1..i + 4]
                    .iter()
                    .all(|b| (b'0'..=b'7').contains(b))
            {
                let value = bytes[i + 1..i + 4]
                    .iter()
                    .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
                out.push(value as u8);
                i += 4;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        std::os::unix::ffi::OsStringExt::from_vec(out)
    }

    /// A user namespace of its own (with `more` namespaces), the user's ids mapped to
    /// themselves; an error when it cannot be made or its maps cannot be written.
    fn user_namespace(more: CloneFlags) -> Result<(), String> {
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        unshare(CloneFlags::CLONE_NEWUSER | more)
            .map_err(|e| format!("no user namespace could be made ({e})"))?;
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1"))
    }

    /// Whether this process holds any capability (`CapEff` or `CapPrm` not zero).
    fn holds_capabilities() -> bool {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status.lines().any(|line| {
            ["CapEff:", "CapPrm:"].iter().any(|field| {
                line.strip_prefix(field)
                    .is_some_and(|v| !v.trim().trim_start_matches('0').is_empty())
            })
        }) || status.is_empty()
    }

    /// Restricts this process with Landlock: the request's write roots, and its read roots as
    /// the full walk, or, where its protected places are `covered`, the short walk.
    pub fn restrict(request: &Request, own_namespace: bool, covered: bool) -> Result<(), String> {
        let read = if covered && !request.read_covered.is_empty() {
            &request.read_covered
        } else {
            &request.read
        };
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
        // Handled (so refused) everywhere, granted nowhere: device files cannot be made.
        let writes = AccessFs::from_all(FS_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
        for (roots, access) in [
            (read, AccessFs::from_read(FS_ABI)),
            (&request.write, writes),
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
