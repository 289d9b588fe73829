//! Which process owns a running or resuming run: `pid:start time` (the start time in clock ticks
//! since boot, from `/proc/PID/stat`), so a pid reused by another process is not taken for the
//! owner still being alive.

/// This process, as an owner.
pub fn me() -> String {
    let pid = std::process::id();
    format!("{pid}:{}", start_time(pid).unwrap_or_default())
}

/// The start time of process `pid`, or `None` if there is no such living process.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything; fields after it are
    // space-separated: the state (field 3) first, the start time (field 22) twentieth.
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state.starts_with('Z') || state.starts_with('X') {
        return None;
    }
    fields.nth(18).map(str::to_string)
}

/// Whether the process named by `owner` still runs. A run without an owner has none alive.
pub fn alive(owner: Option<&str>) -> bool {
    let Some((pid, start)) = owner.and_then(|o| o.split_once(':')) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    start_time(pid).is_some_and(|now| start.is_empty() || now == start)
}

/// The pid part of an owner, for messages.
pub fn pid(owner: Option<&str>) -> &str {
    owner.and_then(|o| o.split(':').next()).unwrap_or("unknown")
}

/// Kills what runs `bash -c COMMAND` in `workspace`: the sandbox launcher that started it (the
/// leader of the command's process group and session; with a PID namespace of its own, the
/// namespace goes with its first process) or, started without one, bash itself (then the
/// leader). Bash may have become its last command (`bash -c 'a; sleep 20'` ends as `sleep 20`),
/// so the launcher, whose arguments keep the command, is what is looked for first.
pub(crate) fn kill_leftover(command: &str, workspace: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    let here = std::fs::canonicalize(workspace).ok();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if !starts_command(&cmdline, command) {
            continue;
        }
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        if cwd.is_some() && cwd == here {
            let group = process_group(pid).unwrap_or(pid);
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Whether a process's `cmdline` (NUL-separated) is `bash -c COMMAND`, or the sandbox launcher
/// (outside its namespaces) that runs it.
fn starts_command(cmdline: &[u8], command: &str) -> bool {
    let words: Vec<&[u8]> = cmdline
        .strip_suffix(b"\0")
        .unwrap_or(cmdline)
        .split(|b| *b == 0)
        .collect();
    let bash = [b"bash".as_slice(), b"-c", command.as_bytes()];
    if words == bash {
        return true;
    }
    let launcher = words.get(1) == Some(&crate::sandbox::LAUNCHER_ARG.as_bytes())
        || words
            .first()
            .is_some_and(|w| w.ends_with(crate::sandbox::SMALL_LAUNCHER.as_bytes()));
    let first = words.iter().any(|w| *w == b"--first");
    let after = words
        .iter()
        .position(|w| *w == b"--")
        .map(|at| &words[at + 1..]);
    launcher && !first && after == Some(bash.as_slice())
}

/// The process group of `pid` (`/proc/PID/stat`, the field after the state; the command name
/// before them may hold spaces and parentheses, so it is read from the last `)`).
fn process_group(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leftover_is_found_by_bash_or_by_the_launcher_outside_its_namespaces() {
        let cmd = "echo ran >> marker; sleep 20";
        assert!(starts_command(
            b"bash\0-c\0echo ran >> marker; sleep 20\0",
            cmd
        ));
        assert!(starts_command(
            b"/x/airlock-sandbox\0__sandbox\0--read\0/\0--\0bash\0-c\0echo ran >> marker; sleep 20\0",
            cmd
        ));
        assert!(starts_command(
            b"/x/airlock\0__sandbox\0--unconfined\0--\0bash\0-c\0echo ran >> marker; sleep 20\0",
            cmd
        ));
        // The first process inside goes with the launcher's group; another command is not it.
        assert!(!starts_command(
            b"/proc/self/exe\0__sandbox\0--first\0--\0bash\0-c\0echo ran >> marker; sleep 20\0",
            cmd
        ));
        assert!(!starts_command(b"bash\0-c\0echo other\0", cmd));
        assert!(!starts_command(
            b"vim\0--\0bash\0-c\0echo ran >> marker; sleep 20\0",
            cmd
        ));
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_or_a_dead_one_is_not() {
        let me = me();
        assert!(alive(Some(&me)));
        let pid = std::process::id();
        assert!(
            !alive(Some(&format!("{pid}:1"))),
            "same pid, other start time"
        );
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let owner = format!("{}:{}", child.id(), start_time(child.id()).unwrap());
        assert!(alive(Some(&owner)));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!alive(Some(&owner)), "killed and reaped");
        assert!(!alive(None));
        assert!(!alive(Some("garbage")));
    }
}
