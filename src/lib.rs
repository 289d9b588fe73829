//! airlock: a terminal cockpit for coding agents. Nothing the agent asks for runs until it has
//! passed one gate, and a human sees exactly what will run before it runs.
//!
//! Each top-level module owns one thing, and the imports go one way, from the drivers down to the
//! leaves. Each module's own `//!` says which modules it may not import, and `tests/walls.rs`
//! reads `src/` and fails the build's tests when one does, or when the imports between top-level
//! modules close a cycle. From the bottom up:
//!
//! - Leaves, importing nothing of the crate: `protocol` (the contract between the agent and its
//!   driver: `Op` in, `AgentEvent` out, and every type they carry), `clock` (unix milliseconds),
//!   `visible` (hidden characters made visible, for every text a person reads), `digest`
//!   (canonical JSON and hex), `harden` (this process kept private from the commands it runs),
//!   `demo` (the offline demo scenario and project).
//! - `output`: a call's output, live and bounded, and what a finished tool gives back.
//! - `facts`: what a call would do, before anyone judges it: the tool catalog (what each tool
//!   declares), a real shell parse and what each program does, resolved paths, diffs.
//! - `sandbox`: the OS sandbox (Landlock, namespaces) approved commands run in, and its launcher.
//! - `mcp`: MCP servers' tools, offered to the model and judged by the same gate.
//! - `approval`: the gate (rules, policy, grants, frozen calls, audit). Pure logic, no UI.
//! - `store`: the state directory (the state database, run logs, the signing key).
//! - `tools`: what a call does once approved, one home per tool.
//! - `model`: the model clients (scripted, OpenAI-compatible, Anthropic).
//! - `agent`: the turn loop; talks to its driver only through `protocol`, to the state database
//!   only through traits (`Journal`, `CodeBook`).
//! - `ui`: the cockpit; talks to the agent only through `protocol`.
//! - `config`: configuration files, environment and flags, resolved.
//! - `cli`: the composition root and the subcommands: the only module that wires the others
//!   together (`cli::exec` builds the gate, tools, agent and cockpit). Nothing imports it.

pub mod agent;
pub mod approval;
pub mod cli;
pub mod clock;
pub mod config;
pub mod demo;
pub mod digest;
pub mod facts;
pub mod harden;
pub mod hooks;
pub mod mcp;
pub mod model;
pub mod output;
pub mod protocol;
pub mod remote;
pub mod sandbox;
pub mod store;
pub mod tools;
pub mod ui;
pub mod undo;
pub mod visible;
