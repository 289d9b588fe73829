//! The rule index against trying every rule.

use super::*;
use std::path::PathBuf;

/// Paths made from every rule's own pattern (each `*` filled in three ways, `**` as nothing
/// and as two levels), under `/`, a home, `/root`, a project and a Windows home, upper-cased
/// too, and one level deeper and shallower.
fn paths_from_the_table() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for rule in RULES {
        for fill in ["", "x", "prod.secret"] {
            for tail in ["", "/a/b"] {
                let body = rule.pattern.replace("/**", tail).replace('*', fill);
                let body = body.trim_start_matches('/');
                for base in ["/", "/home/u/", "/root/", "/srv/project/", "/tmp/ws/deep/"] {
                    let path = format!("{base}{body}");
                    if let Some((parent, _)) = path.rsplit_once('/') {
                        out.push(PathBuf::from(parent));
                    }
                    out.push(PathBuf::from(path.to_uppercase()));
                    out.push(PathBuf::from(format!("{path}/child")));
                    out.push(PathBuf::from(path));
                }
                out.push(PathBuf::from(format!(
                    "/srv/C:\\Users\\me\\{}",
                    body.replace('/', "\\")
                )));
            }
        }
    }
    out
}

#[test]
fn looking_rules_up_by_the_last_component_finds_what_trying_every_rule_finds() {
    let ctx = PathContext {
        workspace: PathBuf::from("/srv/project"),
        home: PathBuf::from("/home/u"),
        temp_dirs: vec![PathBuf::from("/tmp")],
        state_dir: PathBuf::from("/home/u/.local/state/airlock"),
        protected_files: Vec::new(),
        program_dirs: Vec::new(),
    };
    let mut paths = paths_from_the_table();
    // And what this machine has where the sandbox plan walks.
    for dir in ["/", "/etc", "/tmp", "/root", "/home", "/usr/lib"] {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            paths.push(entry.path());
        }
    }
    let mut sensitive = 0;
    for path in &paths {
        let parts = matching_view(windows_view(lower_components(path)));
        let name = parts.last().map(String::as_str).unwrap_or("");
        let homes = home_relatives(&ctx, &parts);
        let (mut every, mut indexed) = (BTreeSet::new(), BTreeSet::new());
        table_hits(&parts, &homes, 0..RULES.len(), &mut every);
        table_hits(&parts, &homes, rule_index().candidates(name), &mut indexed);
        assert_eq!(indexed, every, "{}", path.display());
        sensitive += usize::from(!every.is_empty());
    }
    assert!(paths.len() > 5_000, "only {} paths were tried", paths.len());
    assert!(sensitive > 2_000, "only {sensitive} of them are sensitive");
}

#[test]
fn most_rules_are_looked_up_by_name_and_each_rule_is_in_the_index_once() {
    let index = rule_index();
    let named: usize = index.by_last.values().map(Vec::len).sum();
    assert_eq!(named + index.others.len(), RULES.len());
    assert!(named * 2 > RULES.len(), "{named} of {}", RULES.len());
}
