//! Facts about a call, found before anything is judged: what each tool declares about itself
//! (`catalog`: its risk, the arguments that name a path and what it does to them, the argument
//! that holds a command), a real parse of a shell command and what each program in it does
//! (`shell`, `programs`), the paths a call names resolved against the workspace and the home
//! directory (`paths`), how globs match (`glob`), what the environment variables a command sets
//! can change and which are never handed to a command (`envvars`), and the diff a file change
//! would make (`diff`). Facts say what a call would do; whether that is allowed is `approval`'s
//! question.
//!
//! Imports only the leaves `protocol`, `visible` and `digest`.

pub mod catalog;
pub mod diff;
pub mod envvars;
pub mod glob;
pub mod paths;
pub mod programs;
pub mod shell;
