//! airlock: a terminal cockpit for coding agents. Nothing the agent asks for runs until it has
//! passed one gate, and a human sees exactly what will run before it runs.
//!
//! - `approval`: the gate and everything it stands on (risk, facts, shell analysis, paths, rules,
//!   policy, grants, frozen calls, audit). Pure logic, no UI.
//! - `store`: the state directory.
//! - `cli`: the subcommands that need no UI.
//! - `mcp`: MCP servers' tools, offered to the model and judged by the same gate.
//! - `sandbox`: the OS sandbox (Landlock) approved commands run in, and its launcher.
//! - `harden`: airlock's own process kept private from the commands it runs.
//! - `visible`: hidden characters made visible, for every text a person reads.

pub mod agent;
pub mod approval;
pub mod cli;
pub mod clock;
pub mod config;
pub mod demo;
pub mod harden;
pub mod mcp;
pub mod model;
pub mod protocol;
pub mod sandbox;
pub mod store;
pub mod tools;
pub mod ui;
pub mod visible;
