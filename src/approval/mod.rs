pub mod approver;
pub mod arg_rules;
pub mod audit;
pub mod envvars;
pub mod frozen;
pub mod gate;
pub mod grants;
pub mod paths;
pub mod policy;
pub mod programs;
pub mod risk;
pub mod rules;
pub mod shell;
#[cfg(test)]
pub(crate) mod testworld;
pub mod verdict;
