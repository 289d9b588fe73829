//! The gate and everything it judges with: rules, the policy, session grants, frozen calls, the
//! approver trait and the hash-chained audit log, over the facts about a call (`facts`: the tool
//! catalog, shell analysis, paths, programs). Pure logic: nothing here draws,
//! runs a tool or talks to a model. The types a driver sees (the request, the verdict, grant
//! scopes, the frozen call) are defined in `protocol` and given their behaviour here.
//!
//! Imports `protocol`, `clock`, `visible`, `digest`, `facts`, `sandbox` (the profile a command
//! would run under) and `mcp` (the catalog of servers' tools); must never import `agent`,
//! `tools`, `model`, `store`, `output`, `config`, `ui`, `cli` or `demo`, so the gate can be
//! tested and trusted on its own.

pub mod approver;
pub mod arg_rules;
pub mod audit;
pub mod frozen;
pub mod gate;
pub mod grants;
pub mod policy;
pub mod rules;
#[cfg(test)]
pub(crate) mod testworld;
pub mod verdict;
