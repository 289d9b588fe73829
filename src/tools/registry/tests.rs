use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::*;
use crate::protocol::FrozenCall;
use crate::protocol::Risk;

#[test]
fn the_tools_offered_to_the_model_keep_their_names_descriptions_and_schemas() {
    let offered: Vec<Value> = ToolCatalog::builtin()
        .iter()
        .map(|d| json!({"name": d.name, "description": d.description, "schema": d.schema, "risk": d.risk}))
        .collect();
    insta::assert_snapshot!(serde_json::to_string_pretty(&offered).unwrap());
}

#[test]
fn builtin_tools_declare_their_risks_and_a_name_nobody_registered_is_dangerous() {
    let catalog = ToolCatalog::builtin();
    assert_eq!(catalog.risk_of("read_file"), Risk::Safe);
    assert_eq!(catalog.risk_of("list_dir"), Risk::Safe);
    assert_eq!(catalog.risk_of("search"), Risk::Safe);
    assert_eq!(catalog.risk_of("write_file"), Risk::Mutating);
    assert_eq!(catalog.risk_of("edit_file"), Risk::Mutating);
    assert_eq!(catalog.risk_of("bash"), Risk::Dangerous);
    assert_eq!(catalog.risk_of("launch_missiles"), Risk::Dangerous);
    assert_eq!(catalog.iter().count(), BUILTIN.len());
}

#[test]
fn no_two_builtin_tools_share_a_name() {
    let names: BTreeSet<&str> = BUILTIN.iter().map(|t| t.name()).collect();
    assert_eq!(names.len(), BUILTIN.len());
}

#[test]
fn every_builtin_tool_that_writes_a_path_is_judged_as_a_write_and_every_other_as_a_read() {
    let w = crate::approval::testworld::world();
    for tool in BUILTIN.iter().filter(|t| !t.paths().is_empty()) {
        let mut args = every_argument(*tool);
        args[tool.paths()[0].key] = json!("fresh.txt");
        let verdict = w.policy.assess(tool.name(), &args).verdict;
        let writes = verdict
            .reasons
            .iter()
            .any(|r| r.code == crate::protocol::ReasonCode::WritesWorkspace);
        let declared = tool.paths()[0].access.writes();
        assert_eq!(writes, declared, "{}: {verdict:#?}", tool.name());
        assert_eq!(
            verdict.ruling,
            if declared {
                crate::protocol::Ruling::Ask
            } else {
                crate::protocol::Ruling::Allow
            },
            "{}: {verdict:#?}",
            tool.name()
        );
    }
}

#[test]
fn only_the_one_file_tools_take_a_directory_scope_and_only_write_and_edit_write_a_path() {
    let catalog = ToolCatalog::builtin();
    let scoped: BTreeSet<&str> = catalog
        .iter()
        .filter(|d| d.takes_directory_scope())
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(
        scoped,
        BTreeSet::from(["edit_file", "read_file", "write_file"])
    );
    let writing: BTreeSet<&str> = catalog
        .iter()
        .filter(|d| d.writes_a_path())
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(writing, BTreeSet::from(["edit_file", "write_file"]));
}

/// Every argument of the tool's schema, each a different string with escapes and a line break
/// in it (so a title that reads a field its `title_fields` leave out shows it as missing).
fn every_argument(tool: &dyn Tool) -> Value {
    let schema = tool.schema();
    let Some(properties) = schema["properties"].as_object() else {
        return json!({});
    };
    properties
        .keys()
        .map(|k| (k.clone(), json!(format!("{k} \"q\"\nsecond"))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

#[test]
fn every_builtin_tools_title_read_from_the_frozen_text_is_its_title() {
    for tool in BUILTIN {
        let args = every_argument(*tool);
        let frozen = FrozenCall::freeze(tool.name(), &args);
        let expected = title(tool.name(), &args);
        assert_eq!(
            title_of_canonical(tool.name(), &frozen.canonical),
            expected,
            "{}",
            tool.name()
        );
        for field in tool.title_fields() {
            assert!(
                expected.contains(&format!("{field} \"q\"")),
                "{}: {expected}",
                tool.name()
            );
        }
    }
}

#[test]
fn a_title_field_that_is_not_a_string_reads_as_empty_from_the_frozen_text_too() {
    let args = json!({"path": 5, "pattern": "fn \\w+"});
    let frozen = FrozenCall::freeze("search", &args);
    assert_eq!(
        title_of_canonical("search", &frozen.canonical),
        "search /fn \\w+/ in ."
    );
    assert_eq!(title("search", &args), "search /fn \\w+/ in .");
    assert_eq!(title_of_canonical("read_file", "not json"), "read ");
}

#[test]
fn a_tool_airlock_does_not_know_is_titled_by_its_name() {
    let args = json!({"command": "rm -rf /", "path": "x"});
    assert_eq!(title("fs__write", &args), "fs__write");
    assert_eq!(refused_title("fs__write", &args), "fs__write");
    assert_eq!(
        title_of_canonical("fs__write", &args.to_string()),
        "fs__write"
    );
}
