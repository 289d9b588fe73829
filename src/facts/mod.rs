//! Facts about a call, found before anything is judged: a real parse of a shell command and what
//! each program in it does (`shell`, `programs`), the paths a call names resolved against the
//! workspace (`paths`), and what the environment variables a command sets can change
//! (`envvars`). Facts say what a call would do; whether that is allowed is `approval`'s question.
//!
//! Imports only the leaves `protocol`, `visible` and `digest`.

pub mod catalog;
pub mod diff;
pub mod envvars;
pub mod glob;
pub mod paths;
pub mod programs;
pub mod shell;
