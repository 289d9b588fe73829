//! Table-driven policy tests: each family of command, the evasive forms, and the read-only forms
//! that must not ask. The workspace, home and state directory are real temporary directories.

use super::*;
use crate::approval::rules::Rules;
use serde_json::json;

use crate::approval::testworld::{World, world, world_with};

fn check_table(w: &World, expected: Ruling, commands: &[&str]) {
    let mut wrong = Vec::new();
    for command in commands {
        let v = w.bash(command);
        if v.ruling != expected {
            wrong.push(format!(
                "{command:?} => {:?} {:#?}",
                v.ruling,
                v.reason_lines()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "expected {expected:?}:\n{}",
        wrong.join("\n")
    );
}

mod active_files;
mod bypasses;
mod credential_globs;
mod credential_links;
mod families;
mod planned_links;
mod sandbox;
mod self_approval;
mod system_inspection;
mod verdicts;
mod wrappers;
