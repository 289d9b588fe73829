//! The OS sandbox every `bash` run goes into (Linux, Landlock), so an approved command no longer
//! runs with all of the user's rights. Imports only `facts` (resolved paths), `protocol` and
//! `visible`.
//!
//! Ownership: this module decides *what* a profile lets a command touch ([`plan`]), applies it
//! in a tiny launcher process ([`launcher`], airlock re-executed as `airlock __sandbox ...`),
//! and explains afterwards what it refused ([`blocked`]). The policy only learns the profile and
//! whether the kernel can enforce it ([`SandboxPolicy`]); the tool registry runs commands through
//! the launcher ([`Sandbox`]).
//!
//! Why a launcher: the crate forbids `unsafe`, so there is no `pre_exec` hook in which a child
//! could restrict itself between `fork` and `exec`. The launcher restricts itself with the
//! `landlock` crate's safe API, cuts the network, then replaces itself with `bash` (`exec`), and
//! every process bash starts (through `setsid`, `nohup`, double forks) inherits the domain: a
//! Landlock domain can only ever be narrowed, never left.

pub mod blocked;
pub mod launcher;
pub mod leftovers;
pub mod plan;
#[cfg(target_os = "linux")]
pub mod processes;

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::facts::paths::PathContext;

/// The hidden subcommand the launcher answers to (`airlock __sandbox ...`).
pub const LAUNCHER_ARG: &str = "__sandbox";

/// The launcher on its own (`src/bin/sandbox.rs`), next to the airlock binary; it takes the
/// same arguments, [`LAUNCHER_ARG`] included.
pub const SMALL_LAUNCHER: &str = "airlock-sandbox";

/// The launcher a session starts commands (and MCP servers) with: [`SMALL_LAUNCHER`] next to
/// airlock's binary when it is there (it starts faster), else airlock itself (it answers to
/// [`LAUNCHER_ARG`]).
pub fn installed_launcher() -> PathBuf {
    let me = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("airlock"));
    let small = me.with_file_name(SMALL_LAUNCHER);
    if small.is_file() { small } else { me }
}

/// Set (to `1`) to make airlock behave as if the kernel had no Landlock: every command that
/// would have been sandboxed asks. For tests and for trying the fallback.
pub const PRETEND_NO_LANDLOCK: &str = "AIRLOCK_SANDBOX_PRETEND_NO_LANDLOCK";

/// What a sandboxed command may touch. Ordered from the narrowest to no sandbox at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Reads everything but the protected places; writes only the temp dir; no network.
    ReadOnly,
    /// Reads everything but the protected places; writes the workspace and the temp dir; no
    /// network. The default.
    WorkspaceWrite,
    /// `workspace-write` with the network.
    Network,
    /// No sandbox: the command runs with all of the user's rights. Always asked.
    Off,
}

impl Profile {
    pub const ALL: [Profile; 4] = [
        Profile::ReadOnly,
        Profile::WorkspaceWrite,
        Profile::Network,
        Profile::Off,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::ReadOnly => "read-only",
            Profile::WorkspaceWrite => "workspace-write",
            Profile::Network => "network",
            Profile::Off => "off",
        }
    }

    pub fn parse(text: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// What the profile lets a command do, in words for the modal and the model.
    pub fn describe(self) -> &'static str {
        match self {
            Profile::ReadOnly => "writes only the temp dir, no network",
            Profile::WorkspaceWrite => "writes only the workspace and temp, no network",
            Profile::Network => "writes only the workspace and temp, with network",
            Profile::Off => "no sandbox: runs with all of your rights",
        }
    }

    /// Whether it lets a command do more than `other` does (`ALL` is in that order).
    pub fn wider_than(self, other: Profile) -> bool {
        let breadth = |p| Profile::ALL.iter().position(|q| *q == p);
        breadth(self) > breadth(other)
    }

    pub fn writes_workspace(self) -> bool {
        !matches!(self, Profile::ReadOnly)
    }

    pub fn has_network(self) -> bool {
        matches!(self, Profile::Network | Profile::Off)
    }

    /// "one of read-only, workspace-write, network, off"
    pub fn choices() -> String {
        Profile::ALL.map(Profile::as_str).join(", ")
    }
}

/// Whether this kernel can enforce a sandbox, found once at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock works; `abi` is the kernel's Landlock ABI version.
    Landlock { abi: i32 },
    /// No sandbox can be made; why, in words.
    Missing { why: String },
}

impl Support {
    /// Asks the kernel (no restriction is applied to airlock itself), unless
    /// [`PRETEND_NO_LANDLOCK`] is set.
    pub fn detect() -> Support {
        if std::env::var(PRETEND_NO_LANDLOCK).is_ok_and(|v| v == "1") {
            return Support::Missing {
                why: format!("Landlock is taken as missing (${PRETEND_NO_LANDLOCK}=1)"),
            };
        }
        launcher::kernel_support()
    }

    /// The support found once per process (tests build their own [`Support`] values instead).
    pub fn current() -> Support {
        static FOUND: OnceLock<Support> = OnceLock::new();
        FOUND.get_or_init(Support::detect).clone()
    }

    pub fn available(&self) -> bool {
        matches!(self, Support::Landlock { .. })
    }

    /// Why no sandbox can be made, when none can.
    pub fn missing(&self) -> Option<&str> {
        match self {
            Support::Landlock { .. } => None,
            Support::Missing { why } => Some(why),
        }
    }

    /// Said once at start, and in the status bar, when there is no sandbox.
    pub fn notice(&self) -> Option<String> {
        match self {
            Support::Landlock { .. } => None,
            Support::Missing { why } => Some(format!(
                "no sandbox: {why}; every command asks before it runs, with all of your rights"
            )),
        }
    }
}

/// What the policy needs to know about the sandbox: the profile a `bash` call runs under when it
/// names none, and whether the kernel can enforce one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub default: Profile,
    pub support: Support,
}

impl SandboxPolicy {
    /// The profile a `bash` call's arguments ask for: its `sandbox` argument, else the default.
    /// `Err` names a value that is not a profile.
    pub fn profile_of(&self, args: &Value) -> Result<Profile, String> {
        profile_arg(args).map(|p| p.unwrap_or(self.default))
    }

    /// The call's arguments with the profile it will run under written in, so that it is part
    /// of the frozen call, its digest and what the human approves. Other tools, calls that
    /// already name one and malformed arguments are left as they are.
    pub fn fill_in(&self, tool: &str, args: &Value) -> Value {
        with_profile(tool, args, self.default)
    }
}

/// The tool name a call's session grants are kept under: `bash` under the default profile
/// (`workspace-write`, or none named), `bash (sandbox P)` under another, so a grant given under
/// one profile never covers a call under a wider one.
pub fn grant_tool(tool: &str, args: &Value) -> String {
    match profile_arg(args) {
        Ok(Some(profile)) if tool == "bash" && profile != Profile::WorkspaceWrite => {
            format!("bash (sandbox {})", profile.as_str())
        }
        _ => tool.to_string(),
    }
}

/// What the approval modal's title says about the sandbox of a request: `sandbox P` for a
/// `bash` call frozen with profile P, or `NO SANDBOX` (`unconfined`: a warning) when it will run
/// without one. `None` for other tools.
pub fn title_label(
    tool: &str,
    frozen: &crate::protocol::FrozenCall,
    verdict: &crate::protocol::Verdict,
) -> Option<crate::protocol::SandboxLabel> {
    if tool != "bash" {
        return None;
    }
    label_of(&frozen.verified_args().ok()?, verdict)
}

/// The same label for a `bash` call's arguments with its profile filled in (`args`), judged as
/// `verdict`.
pub fn label_of(
    args: &Value,
    verdict: &crate::protocol::Verdict,
) -> Option<crate::protocol::SandboxLabel> {
    let unconfined = verdict
        .reasons
        .iter()
        .any(|r| r.code == crate::protocol::ReasonCode::Unsandboxed);
    let profile = profile_arg(args).ok().flatten();
    let text = match (unconfined, profile) {
        (true, Some(Profile::Off)) => "NO SANDBOX (off)".into(),
        (true, _) => "NO SANDBOX (no Landlock)".into(),
        (false, Some(p)) => format!("sandbox {}", p.as_str()),
        (false, None) => return None,
    };
    Some(crate::protocol::SandboxLabel { text, unconfined })
}

/// `args` with `"sandbox": profile` added when it is a `bash` call's object that names none.
pub fn with_profile(tool: &str, args: &Value, profile: Profile) -> Value {
    match args {
        Value::Object(map) if tool == "bash" && !map.contains_key("sandbox") => {
            let mut map = map.clone();
            map.insert("sandbox".into(), Value::String(profile.as_str().into()));
            Value::Object(map)
        }
        _ => args.clone(),
    }
}

/// The `sandbox` argument of a `bash` call: `Ok(None)` when absent, `Err` when it is not one
/// of the profiles.
pub fn profile_arg(args: &Value) -> Result<Option<Profile>, String> {
    match args.get("sandbox") {
        None => Ok(None),
        Some(Value::String(s)) => Profile::parse(s).map(Some).ok_or_else(|| {
            format!(
                "`sandbox` must be one of {}, got {:?}",
                Profile::choices(),
                crate::visible::visible_line(s)
            )
        }),
        Some(other) => Err(format!(
            "`sandbox` must be a string, one of {}, got {other}",
            Profile::choices()
        )),
    }
}

/// How the tool registry runs commands in the sandbox: the launcher to start, what the kernel
/// supports, and the places a plan is made from.
#[derive(Debug)]
pub struct Sandbox {
    /// The binary that answers to [`LAUNCHER_ARG`]: [`SMALL_LAUNCHER`] or airlock itself.
    pub launcher: PathBuf,
    pub policy: SandboxPolicy,
    pub paths: PathContext,
    /// A temp dir of airlock's own for commands, made on first use when the system temp dir is
    /// not writable under the plan (a workspace inside `/tmp`: see [`plan::Plan::make`]).
    own_temp: OnceLock<Result<PathBuf, String>>,
    /// The plan of each profile, made on first use and kept while the directories it was made
    /// from stay as they were ([`plan::Plan::is_stale`]): the walk costs milliseconds, checking
    /// them a few microseconds.
    plans: std::sync::Mutex<std::collections::BTreeMap<Profile, plan::Plan>>,
}

impl Sandbox {
    pub fn new(launcher: PathBuf, policy: SandboxPolicy, paths: PathContext) -> Sandbox {
        Sandbox {
            launcher,
            policy,
            paths,
            own_temp: OnceLock::new(),
            plans: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        }
    }

    /// The plan for `profile` (not `Off`), made once per session, and again when a directory it
    /// was made from has changed.
    pub fn plan(&self, profile: Profile) -> Result<plan::Plan, String> {
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(plan) = plans.get(&profile)
            && !plan.is_stale()
        {
            return Ok(plan.clone());
        }
        let mut plan = plan::Plan::make(&self.paths, profile, || self.own_temp())?;
        if plan.is_stale() {
            // Changed while it was made: by the private temp dir made in a directory it had
            // listed (once per session), or by someone else. Once more; a plan still stale is
            // used (it describes what was there a moment ago) and made again next time.
            plan = plan::Plan::make(&self.paths, profile, || self.own_temp())?;
        }
        plans.insert(profile, plan.clone());
        Ok(plan)
    }

    /// The private temp dir, made once (0700) under the system temp dir, removed when the
    /// sandbox goes (see [`leftovers`]).
    pub fn own_temp(&self) -> Result<PathBuf, String> {
        self.own_temp
            .get_or_init(|| plan::make_own_temp(&std::env::temp_dir()))
            .clone()
    }
}

impl Drop for Sandbox {
    /// What commands left in the private temp dir goes with the session.
    fn drop(&mut self) {
        if let Some(Ok(dir)) = self.own_temp.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_profile_reads_back_from_its_name_and_nothing_else_does() {
        for p in Profile::ALL {
            assert_eq!(Profile::parse(p.as_str()), Some(p));
        }
        assert_eq!(Profile::parse("Off"), None);
        assert_eq!(Profile::parse("none"), None);
    }

    #[test]
    fn a_bash_call_without_a_profile_gets_the_default_written_in_and_others_are_left_alone() {
        let policy = SandboxPolicy {
            default: Profile::WorkspaceWrite,
            support: Support::Landlock { abi: 7 },
        };
        assert_eq!(
            policy.fill_in("bash", &json!({"command": "ls"})),
            json!({"command": "ls", "sandbox": "workspace-write"})
        );
        let named = json!({"command": "ls", "sandbox": "network"});
        assert_eq!(policy.fill_in("bash", &named), named);
        let file = json!({"path": "a"});
        assert_eq!(policy.fill_in("read_file", &file), file);
        assert_eq!(policy.fill_in("bash", &json!("ls")), json!("ls"));
    }

    #[test]
    fn grants_under_a_profile_other_than_the_default_are_kept_apart() {
        assert_eq!(grant_tool("bash", &json!({"command": "ls"})), "bash");
        assert_eq!(
            grant_tool(
                "bash",
                &json!({"command": "ls", "sandbox": "workspace-write"})
            ),
            "bash"
        );
        assert_eq!(
            grant_tool("bash", &json!({"command": "ls", "sandbox": "network"})),
            "bash (sandbox network)"
        );
        assert_eq!(grant_tool("read_file", &json!({"path": "x"})), "read_file");
    }

    #[test]
    fn a_sandbox_argument_that_is_not_a_profile_is_an_error_naming_the_choices() {
        let err = profile_arg(&json!({"command": "ls", "sandbox": "none"})).unwrap_err();
        assert!(
            err.contains("read-only, workspace-write, network, off"),
            "{err}"
        );
        assert!(profile_arg(&json!({"command": "ls", "sandbox": 1})).is_err());
        assert_eq!(profile_arg(&json!({"command": "ls"})), Ok(None));
    }
}
