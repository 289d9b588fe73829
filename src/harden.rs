//! Keeps airlock's own process out of reach of the commands it runs. Imports nothing of the crate.
//!
//! Commands run as the same user as airlock, so without this they could read airlock's memory
//! and its starting environment (`/proc/$PPID/environ`, `/proc/<pid>/mem`), where the API keys
//! are. Removing the variables after reading them would not help: `/proc/<pid>/environ` shows the
//! environment block as the process started. Marking the process non-dumpable makes the kernel
//! refuse those reads (and `ptrace`, and core dumps) to every process of the user that lacks
//! `CAP_SYS_PTRACE`. The flag is not inherited across `exec`, so the commands themselves are
//! ordinary processes; they only lose access to airlock.

/// Marks this process non-dumpable. Call first thing in `main`, before any key is read.
#[cfg(target_os = "linux")]
pub fn harden_process() -> Result<(), String> {
    nix::sys::prctl::set_dumpable(false)
        .map_err(|e| format!("cannot mark airlock's process private (prctl PR_SET_DUMPABLE): {e}"))
}

/// On systems without `/proc` environments there is nothing to do here.
#[cfg(not(target_os = "linux"))]
pub fn harden_process() -> Result<(), String> {
    Ok(())
}
