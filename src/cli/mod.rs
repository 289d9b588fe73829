//! The command line: argument parsing and the subcommands. Errors here are `anyhow` with
//! context: they end the process with a message that says what, where and how to fix it.
//!
//! The composition root: the only module that wires the others together (`exec` builds the
//! gate, the tools, the agent and the cockpit; `codes` and `sessions` implement the agent's
//! store traits over the state database; `runs` keeps a headless run's record). Nothing else
//! imports `cli`; it may import every module. Inside it, `exec` writes a run's record through `runs`, and `park` reads,
//! decides and resumes it through `runs` and `exec`: the imports go one way.

pub mod audit_show;
pub mod audit_verify;
pub mod bench;
pub mod cockpit_journal;
pub mod codes;
pub mod exec;
pub mod exec_args;
pub mod hooks;
pub mod inbox;
pub mod mcp;
pub mod park;
pub mod policy_check;
pub mod remote;
pub mod runs;
pub mod session;
pub mod sessions;
pub mod state;
pub mod undo;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::approval::policy::Mode;

#[derive(Debug, Parser)]
#[command(
    name = "airlock",
    version,
    about = "A terminal cockpit for coding agents: nothing the agent asks for runs until it has passed one gate.",
    after_help = "Start with: airlock (the offline demo in the cockpit), or airlock exec --human (the same without a UI). With a model: airlock --provider openai --model MODEL (the key from OPENAI_API_KEY). README.md says more."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// For the cockpit: the workspace (default: the current directory with a model configured,
    /// else a scratch copy of the demo).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Reopen a cockpit session kept in the state database (default: the most recent one no
    /// running airlock has open); `airlock sessions` lists them.
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// With `--resume`: reopen it although the config or rules files changed since it last ran
    /// (it is refused otherwise, listing the changes).
    #[arg(long, requires = "resume")]
    pub accept_changed_policy: bool,
    /// For the cockpit: play this scenario with the scripted model instead of the demo.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub config: crate::config::ConfigFlags,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ask the approval policy about tool calls, without running anything.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Run the agent without a UI, printing one JSON event per line (offline: the scripted demo).
    Exec(exec::ExecArgs),
    /// Show the configuration in force and where each value comes from (keys are never shown).
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Hooks: list them with where they come from and their last result, or run one on an input.
    Hooks {
        #[command(subcommand)]
        command: HooksCommand,
    },
    /// MCP servers: list them and their tools, accept changed tool definitions.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Trust this project's `.airlock/config.toml` and every file it pulls in (its rules file,
    /// wherever it lives) as they are now; a change to any of them must be trusted again.
    Trust {
        /// The project to trust (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Parked approvals waiting for a decision.
    Approvals {
        #[command(subcommand)]
        command: ApprovalsCommand,
    },
    /// Approve a parked call by its one-time code.
    Approve {
        /// The one-time code the request showed (e.g. GB7E-GQWJ); `airlock approvals list`
        /// lists the waiting ones.
        code: String,
        /// Record it as allow-for-session (the parked call itself runs once).
        #[arg(long)]
        session: bool,
        /// Resume the run right away.
        #[arg(long)]
        resume: bool,
        /// For a file change: keep only these hunks (numbered as `airlock approvals list`
        /// shows them, e.g. 1,3); the others are not written, and the model is told so.
        #[arg(long, value_name = "N,N,...", conflicts_with = "command")]
        hunks: Option<String>,
        /// For a command: run this one instead (it is judged again before it counts; a hard
        /// deny refuses the call).
        #[arg(long, value_name = "COMMAND")]
        command: Option<String>,
    },
    /// Deny a parked call by its one-time code; the model is told the reason.
    Deny {
        /// The one-time code the request showed.
        code: String,
        /// Told to the model as the reason for the denial.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Go on with a parked run: runs exactly the frozen call (if approved), then the model goes on.
    Resume {
        /// The run's id, as the parked event or `airlock approvals list` printed it.
        run: String,
        /// Go on although the config or rules files changed since the run started (resume
        /// refuses otherwise and lists the changes).
        #[arg(long)]
        accept_changed_policy: bool,
    },
    /// The cockpit sessions kept in the state database, most recent first (reopen one with
    /// `airlock --resume SESSION`).
    Sessions,
    /// Every request waiting for an answer on this machine (any cockpit session, any parked
    /// run), with its agent, age, reasons and what it would run; codes are never printed.
    Inbox,
    /// What each call of a session changed in the workspace; with a call, undo it (shown file
    /// by file first, then asked).
    Undo {
        /// The session (default: the newest one that changed a workspace).
        session: Option<String>,
        /// The call to undo, as the results pane or this list names it (e.g. c3).
        call: Option<String>,
        /// Undo every call after it too.
        #[arg(long)]
        and_later: bool,
        /// Do not ask.
        #[arg(long)]
        yes: bool,
        /// Put back files changed since the call too (they are left as they are otherwise).
        #[arg(long)]
        overwrite: bool,
    },
    /// The cockpit without a terminal, measured (for scripts/bench.sh; prints one JSON object).
    #[command(hide = true)]
    BenchCockpit(bench::BenchArgs),
    /// The state database: check that it is whole, repair a damaged one.
    State {
        #[command(subcommand)]
        command: StateCommand,
    },
    /// Inspect the audit log.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Read JSON lines {"id", "tool", "args"} on stdin; print one verdict per line.
    Check(PolicyCheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct PolicyCheckArgs {
    /// How much runs without asking: default, auto-edit or read-only.
    #[arg(long, value_enum, default_value = "default")]
    pub mode: Mode,
    /// The workspace the calls are judged against (default: the current directory).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// A rules file (TOML) with allow / ask / deny rules.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// Also print every part of each call (simple commands, redirects, paths) with its ruling.
    #[arg(long)]
    pub explain: bool,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Print a session's requests, decisions (with their source) and outcomes readably.
    Show {
        /// The run / session id (default: the newest log).
        run: Option<String>,
    },
    /// Check an audit log's hash chain: detects edited, reordered or truncated logs.
    Verify {
        /// The session log, e.g. ~/.local/state/airlock/audit/<session>.jsonl
        file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Every hook in force: its event, what it matches, its program and digest, where it comes
    /// from (a project's run only once trusted), and its last result.
    List {
        /// The project (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Runs the hooks of EVENT on the JSON given on standard input (a hook's input: tool_name,
    /// tool_input, cwd…) and prints what each said; nothing else runs.
    Test {
        /// PreToolUse, PermissionRequest, PostToolUse, Notification, SessionStart or Stop.
        event: String,
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start the configured MCP servers and list their state and tools, with the risk airlock
    /// gives each tool and whether its definition changed since you accepted it.
    List {
        /// The project whose config (and trusted servers) count (default: the current
        /// directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Accept a server's tool definitions as they are now (after a change was reported).
    Accept {
        /// The server's name, as in `[mcp_servers.NAME]`.
        name: String,
        /// The project whose config names it (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the resolved configuration with its sources.
    Show {
        /// The project whose config counts (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[command(flatten)]
        config: crate::config::ConfigFlags,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// List pending approvals with tool, risk, reasons, preview and expiry.
    List,
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// Ask SQLite whether the state database is whole, and say what it holds (exit 1: damaged).
    Check,
    /// Keep a damaged state database aside, make an empty one, and say what was lost (with no
    /// other airlock running).
    Repair,
}
