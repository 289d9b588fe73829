//! airlock: a terminal cockpit for coding agents. Nothing the agent asks for runs until it has
//! passed one gate, and a human sees exactly what will run before it runs.
//!
//! Each top-level module owns one thing, and the imports go one way, from the drivers down to the
//! leaves (each module's own `//!` repeats its line):
//!
//! - Leaves, importing nothing of the crate: `protocol` (the contract between the agent and its
//!   driver: `Op` in, `AgentEvent` out, and every type they carry), `clock` (unix milliseconds),
//!   `visible` (hidden characters made visible, for every text a person reads), `harden` (this
//!   process kept private from the commands it runs).
//! - `approval`: the gate and everything it stands on (risk, facts, shell analysis, paths, rules,
//!   policy, grants, frozen calls, audit). Pure logic, no UI; never imports `agent`, `tools`,
//!   `model`, `ui` or `cli`.
//! - `store`: the state directory (the state database, run logs, the signing key); never imports
//!   `agent`, `tools`, `ui` or `cli`.
//! - `sandbox`: the OS sandbox (Landlock) approved commands run in, and its launcher.
//! - `mcp`: MCP servers' tools, offered to the model and judged by the same gate.
//! - `model`: the model clients (scripted, OpenAI-compatible, Anthropic); never imports `agent`,
//!   `tools`, `ui` or `cli`.
//! - `tools`: what a call does once approved, one home per tool; never imports `agent`, `ui` or
//!   `cli`.
//! - `agent`: the turn loop; talks to its driver only through `protocol`, to the state database
//!   only through traits (`Journal`, `CodeBook`); never imports `ui`, `cli` or `store`.
//! - `ui`: the cockpit; talks to the agent only through `protocol`; never imports `agent`,
//!   `tools`, `approval::gate` or `cli` (test fixtures aside).
//! - `config`: configuration files, environment and flags, resolved.
//! - `cli`: the composition root and the subcommands: the only module that wires the others
//!   together (`cli::exec` builds the gate, tools, agent and cockpit). Nothing imports it.
//! - `demo`: the offline demo scenario and project.

pub mod agent;
pub mod approval;
pub mod cli;
pub mod clock;
pub mod config;
pub mod demo;
pub mod digest;
pub mod facts;
pub mod harden;
pub mod mcp;
pub mod model;
pub mod protocol;
pub mod sandbox;
pub mod store;
pub mod tools;
pub mod ui;
pub mod visible;
