//! A sandboxed command's processes: how many it may have at once, and that none outlives it.
//!
//! The launcher makes a PID namespace with the command's user namespace, then starts itself
//! again with `--first`: that second launcher is the namespace's first process (pid 1). The
//! launcher outside only waits for it and ends with its exit status. Pid 1 sets the limit,
//! finishes the sandbox, starts the command and reaps whatever the command orphans; when the
//! command ends, pid 1 ends with its exit status (a command killed by a signal ends with 128 +
//! its number, as a shell reports it), and the kernel kills everything left in the namespace:
//! a `setsid` grandchild as well as a background job or a fork bomb.
//!
//! The limit is [`MAX_PROCESSES`] processes and threads at once: the namespace's `pid_max`
//! (Linux 6.14 and newer) and, for a user other than root, `RLIMIT_NPROC` (counted in the
//! command's own user namespace, so only the command's processes count). Past it, `fork` fails
//! with "Resource temporarily unavailable". Root on an older kernel has no limit: the kernel
//! does not apply `RLIMIT_NPROC` to root.

use std::ffi::OsString;

use nix::sys::signal::Signal;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

/// How many processes and threads a sandboxed command may have at once.
pub const MAX_PROCESSES: u32 = 1024;

/// The kernel's smallest `pid_max`.
const SMALLEST_PID_MAX: u32 = 301;

/// The launcher's own argument that makes it the namespace's first process.
pub const FIRST_ARG: &str = "--first";

/// Outside the namespace, right after the launcher made it: starts the launcher again (as the
/// namespace's first process) with `args`, waits for it, and ends as it ended. Returns only
/// when it cannot start it.
pub fn start_first(args: &[OsString]) -> Result<std::convert::Infallible, String> {
    let mut first = std::process::Command::new("/proc/self/exe")
        .arg(super::LAUNCHER_ARG)
        .arg(FIRST_ARG)
        .args(args)
        .spawn()
        .map_err(|e| format!("cannot start the sandbox's first process: {e}"))?;
    // The output pipes must end when the command's last holder closes them, not when this
    // launcher ends: it keeps none of them.
    quiet_stdio(null().as_ref());
    let code = match first.wait() {
        Ok(status) => status.code().unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }),
        Err(_) => i32::from(super::launcher::REFUSED),
    };
    std::process::exit(code)
}

/// In pid 1, first of all: tied to the launcher outside (killed, by airlock's timeout or
/// cancel, it takes the namespace with it), the process limit, and a `/proc` that shows this
/// namespace's processes (so `$$` and `/proc/$$` agree). A `/proc` the kernel will not mount
/// here (a container that hides parts of its own) leaves the one there was.
pub fn limit_and_mount_proc() -> Result<(), String> {
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|e| format!("cannot tie the sandbox to its launcher: {e}"))?;
    let pid_max = (MAX_PROCESSES + 1).max(SMALLEST_PID_MAX);
    let _ = std::fs::write("/proc/sys/kernel/pid_max", pid_max.to_string());
    use nix::mount::{MsFlags, mount};
    let _ = mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    );
    Ok(())
}

/// For a user other than root, in a user namespace of the command's own: at most
/// [`MAX_PROCESSES`] of that user's processes in it, that is of the command's.
pub fn limit_user_processes() {
    use nix::sys::resource::{Resource, setrlimit};
    let max = u64::from(MAX_PROCESSES);
    let _ = setrlimit(Resource::RLIMIT_NPROC, max, max);
}

/// Pid 1's work once the sandbox is in place: starts the command, reaps every orphan, and
/// ends when the command ends, with its exit status. `null` is `/dev/null`, opened before the
/// sandbox could refuse it.
pub fn run_as_first(
    program: &[OsString],
    null: Option<std::fs::File>,
) -> Result<std::convert::Infallible, String> {
    let command = std::process::Command::new(&program[0])
        .args(&program[1..])
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", program[0]))?;
    let command = Pid::from_raw(command.id() as i32);
    quiet_stdio(null.as_ref());
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command => std::process::exit(code),
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == command => {
                std::process::exit(128 + signal as i32)
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => std::process::exit(i32::from(super::launcher::REFUSED)),
        }
    }
}

/// `/dev/null` for reading and writing.
pub fn null() -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .ok()
}

/// Standard input, output and error onto `/dev/null`, so this process holds none of the
/// command's pipes open.
fn quiet_stdio(null: Option<&std::fs::File>) {
    if let Some(null) = null {
        let _ = nix::unistd::dup2_stdin(null);
        let _ = nix::unistd::dup2_stdout(null);
        let _ = nix::unistd::dup2_stderr(null);
    }
}
