//! The gate and everything it judges with: risk and the tool catalog, facts about a call (shell
//! analysis, paths, programs, environment variables), rules, the policy, session grants, frozen
//! calls, the approver trait and the hash-chained audit log. Pure logic: nothing here draws,
//! runs a tool or talks to a model. The types a driver sees (the request, the verdict, grant
//! scopes, the frozen call) are defined in `protocol` and given their behaviour here.
//!
//! Imports `protocol`, `clock`, `visible`, `store` (audit anchors), `sandbox` (the profile a
//! command would run under) and `mcp` (the catalog of servers' tools); must never import
//! `agent`, `tools`, `model`, `ui` or `cli`, so the gate can be tested and trusted on its own.

pub mod approver;
pub mod arg_rules;
pub mod audit;
pub mod frozen;
pub mod gate;
pub mod grants;
pub mod policy;
pub mod risk;
pub mod rules;
#[cfg(test)]
pub(crate) mod testworld;
pub mod verdict;
