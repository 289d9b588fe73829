//! What `airlock exec` is asked to do (its command-line arguments), apart from how it does it:
//! a run's record (`cli::runs`) stores them, so a resume in another process runs the same way.

use std::path::PathBuf;

use crate::config::ConfigFlags;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum HeadlessApprovals {
    /// Whatever would ask is denied.
    Deny,
    /// Whatever would ask is allowed once. Hard denies are never lifted. For benchmarks and
    /// scripted runs.
    DangerouslyAllowAll,
    /// Whatever would ask is parked: checkpoint, one-time code, exit with status 5. Decide later
    /// with `airlock approve CODE` / `airlock deny CODE`, go on with `airlock resume RUN`.
    Park,
    /// Whatever would ask waits for an answer on the approval page (served for the run; see
    /// README.md, Approving from another device) or from `airlock approve CODE`, up to the
    /// approval timeout (30 minutes unless the config sets one); unanswered, it is denied.
    Remote,
}

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The prompt (default: the scenario's own prompt).
    pub prompt: Option<String>,
    /// A scenario file for the scripted model (default: the built-in demo).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// The workspace (default: a fresh scratch copy of the demo project in the temp directory).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigFlags,
    /// What happens to a call that would ask, with nobody at a terminal.
    #[arg(long, value_enum, default_value = "deny")]
    pub approvals: HeadlessApprovals,
    /// Print events for a person to read instead of JSON lines.
    #[arg(long)]
    pub human: bool,
}

impl Default for ExecArgs {
    fn default() -> Self {
        ExecArgs {
            prompt: None,
            scenario: None,
            workspace: None,
            config: ConfigFlags::default(),
            approvals: HeadlessApprovals::Deny,
            human: false,
        }
    }
}
