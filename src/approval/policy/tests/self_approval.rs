//! An agent that tries to answer its own requests: running `airlock approve CODE` (by any path,
//! inside any shell construct), trusting its own project config, reopening a session, or starting
//! a nested airlock that allows everything is a hard deny, which no rule or mode lifts.

use super::*;

#[test]
fn an_agent_cannot_answer_or_lift_airlocks_own_checks_by_any_spelling() {
    let w = world();
    check_table(
        &w,
        Ruling::Deny,
        &[
            "airlock approve ABCD-EFGH",
            "airlock approve ABCD-EFGH --resume",
            "airlock deny ABCD-EFGH",
            "airlock resume exec-1-2",
            "airlock trust",
            "airlock --workspace . trust",
            "airlock \"$SUB\" ABCD-EFGH",
            "airlock $(echo approve) X",
            "airlock --resume",
            "airlock --resume cockpit-1-2",
            "~/.cargo/bin/airlock approve X",
            "./target/release/airlock approve X",
            "/usr/local/bin/airlock approve X",
            "echo ok && airlock approve X",
            "for c in A B; do airlock approve $c; done",
            "timeout 5 airlock approve X",
            "env airlock approve X",
            "nohup airlock approve X",
            "bash -c 'airlock approve X'",
            "echo X | xargs airlock approve",
            "airlock exec --approvals dangerously-allow-all 'rm -rf x'",
            "airlock exec --approvals=dangerously-allow-all go",
        ],
    );
}

#[test]
fn an_allow_rule_or_the_auto_edit_mode_does_not_lift_it() {
    let rules = Rules::parse(
        "allow = [\"bash(airlock *)\"]\n",
        std::path::Path::new("rules.toml"),
    )
    .unwrap();
    let w = world_with(Mode::AutoEdit, rules);
    check_table(&w, Ruling::Deny, &["airlock approve ABCD-EFGH"]);
}

#[test]
fn reading_airlocks_listings_is_not_refused() {
    let w = world();
    for command in [
        "airlock sessions",
        "airlock approvals list",
        "airlock --help",
    ] {
        assert_ne!(w.bash(command).ruling, Ruling::Deny, "{command}");
    }
}
