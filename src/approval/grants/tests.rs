use super::*;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

const SESSION: &str = "s1";
const WS: &str = "/work/ws";
const TOOL: &str = "bash";

fn argv(words: &[&str]) -> Subject {
    Subject::Command(words.iter().map(|w| w.to_string()).collect())
}

fn path(p: &str) -> Subject {
    Subject::Path(PathBuf::from(p))
}

fn command_scope(words: &[&str]) -> GrantScope {
    GrantScope::Command {
        prefix: words.iter().map(|w| w.to_string()).collect(),
    }
}

fn new_grant(tool: &str, scope: GrantScope) -> NewGrant {
    NewGrant {
        session: SESSION.to_string(),
        workspace: PathBuf::from(WS),
        tool: tool.to_string(),
        scope,
        ttl_ms: None,
        max_uses: None,
    }
}

fn cover(store: &GrantStore, subjects: &[Subject], now: Millis) -> Option<Vec<u64>> {
    store.cover(SESSION, Path::new(WS), TOOL, subjects, now)
}

#[test]
fn a_cargo_test_grant_covers_cargo_test_with_more_arguments() {
    let store = GrantStore::new();
    let g = store.add(new_grant(TOOL, command_scope(&["cargo", "test"])), 0);
    assert_eq!(
        cover(&store, &[argv(&["cargo", "test", "--release"])], 1),
        Some(vec![g.id])
    );
    assert_eq!(
        cover(&store, &[argv(&["cargo", "test"])], 1),
        Some(vec![g.id])
    );
}

#[test]
fn a_cargo_test_grant_does_not_cover_other_commands_or_lookalikes() {
    let store = GrantStore::new();
    store.add(new_grant(TOOL, command_scope(&["cargo", "test"])), 0);
    for words in [
        &["cargo", "publish"][..],
        &["cargo"][..],
        &["cargotest"][..],
        &["cargo test"][..],
        &["cargo", "testing"][..],
        &["Cargo", "test"][..],
        &["cargo", "TEST"][..],
        &["cargo", "t*"][..],
        &[][..],
    ] {
        assert_eq!(cover(&store, &[argv(words)], 1), None, "{words:?}");
    }
}

#[test]
fn an_empty_command_prefix_covers_nothing() {
    let store = GrantStore::new();
    store.add(new_grant(TOOL, command_scope(&[])), 0);
    assert_eq!(cover(&store, &[argv(&["ls"])], 1), None);
    assert_eq!(cover(&store, &[argv(&[])], 1), None);
}

#[test]
fn a_call_with_two_subjects_is_not_covered_by_a_grant_for_only_one_and_consumes_nothing() {
    let store = GrantStore::new();
    let g = store.add(
        NewGrant {
            max_uses: Some(1),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        0,
    );
    let call = [argv(&["cargo", "test"]), argv(&["rm", "-rf", "src"])];
    assert_eq!(cover(&store, &call, 1), None);
    let listed = store.list(SESSION, 1);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].uses, 0);
    assert_eq!(
        cover(&store, &[argv(&["cargo", "test"])], 1),
        Some(vec![g.id])
    );
}

#[test]
fn a_call_with_two_subjects_is_covered_when_each_has_a_grant_and_each_grant_is_used_once() {
    let store = GrantStore::new();
    let a = store.add(
        NewGrant {
            max_uses: Some(3),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        0,
    );
    let b = store.add(
        NewGrant {
            max_uses: Some(3),
            ..new_grant(
                TOOL,
                GrantScope::Directory {
                    path: PathBuf::from("/work/ws/target"),
                },
            )
        },
        0,
    );
    let call = [
        argv(&["cargo", "test"]),
        argv(&["cargo", "test", "-q"]),
        path("/work/ws/target/out.log"),
    ];
    assert_eq!(cover(&store, &call, 1), Some(vec![a.id, b.id]));
    let uses: Vec<u32> = store.list(SESSION, 1).iter().map(|g| g.uses).collect();
    assert_eq!(uses, vec![1, 1]);
}

#[test]
fn an_empty_subject_list_is_not_covered() {
    let store = GrantStore::new();
    store.add(new_grant(TOOL, command_scope(&["cargo", "test"])), 0);
    assert_eq!(cover(&store, &[], 1), None);
}

#[test]
fn a_grant_in_another_session_workspace_or_tool_does_not_cover() {
    let store = GrantStore::new();
    let scope = command_scope(&["cargo", "test"]);
    store.add(
        NewGrant {
            session: "other".to_string(),
            ..new_grant(TOOL, scope.clone())
        },
        0,
    );
    store.add(
        NewGrant {
            workspace: PathBuf::from("/work/other"),
            ..new_grant(TOOL, scope.clone())
        },
        0,
    );
    store.add(new_grant("write_file", scope), 0);
    assert_eq!(cover(&store, &[argv(&["cargo", "test"])], 1), None);
    // Sanity: each of them does cover in its own context.
    let call = [argv(&["cargo", "test"])];
    assert!(
        store
            .cover("other", Path::new(WS), TOOL, &call, 1)
            .is_some()
    );
    assert!(
        store
            .cover(SESSION, Path::new("/work/other"), TOOL, &call, 1)
            .is_some()
    );
    assert!(
        store
            .cover(SESSION, Path::new(WS), "write_file", &call, 1)
            .is_some()
    );
}

#[test]
fn a_directory_grant_covers_itself_and_paths_below_but_not_a_string_prefix_sibling() {
    let store = GrantStore::new();
    store.add(
        new_grant(
            TOOL,
            GrantScope::Directory {
                path: PathBuf::from("/work/ws/src"),
            },
        ),
        0,
    );
    assert!(cover(&store, &[path("/work/ws/src/x")], 1).is_some());
    assert!(cover(&store, &[path("/work/ws/src/a/b/c.rs")], 1).is_some());
    assert!(cover(&store, &[path("/work/ws/src")], 1).is_some());
    assert_eq!(cover(&store, &[path("/work/ws/src-evil/x")], 1), None);
    assert_eq!(cover(&store, &[path("/work/ws/srcx")], 1), None);
    assert_eq!(cover(&store, &[path("/work/ws")], 1), None);
    assert_eq!(cover(&store, &[path("src/x")], 1), None);
}

#[test]
fn a_path_with_a_parent_component_is_never_covered() {
    let store = GrantStore::new();
    store.add(
        new_grant(
            TOOL,
            GrantScope::Directory {
                path: PathBuf::from("/work/ws/src"),
            },
        ),
        0,
    );
    store.add(
        new_grant(
            TOOL,
            GrantScope::Path {
                path: PathBuf::from("/work/ws/src/../../etc/passwd"),
            },
        ),
        0,
    );
    assert_eq!(
        cover(&store, &[path("/work/ws/src/../../etc/passwd")], 1),
        None
    );
}

#[test]
fn an_empty_directory_grant_covers_nothing() {
    let store = GrantStore::new();
    store.add(
        new_grant(
            TOOL,
            GrantScope::Directory {
                path: PathBuf::new(),
            },
        ),
        0,
    );
    assert_eq!(cover(&store, &[path("src/main.rs")], 1), None);
}

#[test]
fn a_path_grant_covers_exactly_its_path_and_not_a_sibling_or_child() {
    let store = GrantStore::new();
    store.add(
        new_grant(
            TOOL,
            GrantScope::Path {
                path: PathBuf::from("/work/ws/src/main.rs"),
            },
        ),
        0,
    );
    assert!(cover(&store, &[path("/work/ws/src/main.rs")], 1).is_some());
    assert_eq!(cover(&store, &[path("/work/ws/src/lib.rs")], 1), None);
    assert_eq!(cover(&store, &[path("/work/ws/src/main.rs.bak")], 1), None);
    assert_eq!(cover(&store, &[path("/work/ws/src/main.rs/x")], 1), None);
}

#[test]
fn a_command_scope_never_covers_a_path_and_a_path_scope_never_covers_a_command() {
    let cmd = command_scope(&["cat"]);
    let file = GrantScope::Path {
        path: PathBuf::from("cat"),
    };
    let dir = GrantScope::Directory {
        path: PathBuf::from("cat"),
    };
    assert!(!cmd.covers(&path("cat")));
    assert!(!file.covers(&argv(&["cat"])));
    assert!(!dir.covers(&argv(&["cat"])));
    assert!(cmd.covers(&argv(&["cat"])));
    assert!(file.covers(&path("cat")));
    assert!(dir.covers(&path("cat")));
}

#[test]
fn an_expired_grant_does_not_cover_and_is_removed_by_list() {
    let store = GrantStore::new();
    let g = store.add(
        NewGrant {
            ttl_ms: Some(1_000),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        5_000,
    );
    assert_eq!(g.expires_ms, Some(6_000));
    assert!(cover(&store, &[argv(&["cargo", "test"])], 5_999).is_some());
    assert_eq!(cover(&store, &[argv(&["cargo", "test"])], 6_000), None);

    let store = GrantStore::new();
    let g = store.add(
        NewGrant {
            ttl_ms: Some(1_000),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        5_000,
    );
    assert_eq!(store.list(SESSION, 5_999).len(), 1);
    assert!(store.list(SESSION, 6_000).is_empty());
    // Removed from the store, not merely hidden: it can no longer be revoked.
    assert!(!store.revoke(g.id));
}

#[test]
fn an_expired_grant_is_removed_by_cover() {
    let store = GrantStore::new();
    let g = store.add(
        NewGrant {
            ttl_ms: Some(10),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        0,
    );
    assert_eq!(cover(&store, &[argv(&["ls"])], 10), None);
    assert!(!store.revoke(g.id));
}

#[test]
fn revoke_removes_a_grant_and_a_second_revoke_returns_false() {
    let store = GrantStore::new();
    let g = store.add(new_grant(TOOL, command_scope(&["cargo", "test"])), 0);
    assert!(store.revoke(g.id));
    assert_eq!(cover(&store, &[argv(&["cargo", "test"])], 1), None);
    assert!(store.list(SESSION, 1).is_empty());
    assert!(!store.revoke(g.id));
}

#[test]
fn revoke_session_removes_only_that_sessions_grants() {
    let store = GrantStore::new();
    store.add(new_grant(TOOL, command_scope(&["ls"])), 0);
    store.add(
        NewGrant {
            session: "other".to_string(),
            ..new_grant(TOOL, command_scope(&["ls"]))
        },
        0,
    );
    assert_eq!(store.revoke_session(SESSION), 1);
    assert!(store.list(SESSION, 1).is_empty());
    assert_eq!(store.list("other", 1).len(), 1);
}

#[test]
fn a_grant_with_max_uses_two_covers_exactly_twice_then_is_gone() {
    let store = GrantStore::new();
    let g = store.add(
        NewGrant {
            max_uses: Some(2),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        0,
    );
    let call = [argv(&["cargo", "test"])];
    assert_eq!(cover(&store, &call, 1), Some(vec![g.id]));
    assert_eq!(store.list(SESSION, 1)[0].uses, 1);
    assert_eq!(cover(&store, &call, 2), Some(vec![g.id]));
    assert_eq!(cover(&store, &call, 3), None);
    assert!(store.list(SESSION, 3).is_empty());
    assert!(!store.revoke(g.id));
}

#[test]
fn a_grant_with_zero_uses_is_never_stored() {
    let store = GrantStore::new();
    store.add(
        NewGrant {
            max_uses: Some(0),
            ..new_grant(TOOL, command_scope(&["ls"]))
        },
        0,
    );
    assert_eq!(cover(&store, &[argv(&["ls"])], 1), None);
    assert!(store.list(SESSION, 1).is_empty());
}

#[test]
fn cover_prefers_an_unlimited_grant_over_a_limited_one() {
    let store = GrantStore::new();
    let limited = store.add(
        NewGrant {
            max_uses: Some(1),
            ..new_grant(TOOL, command_scope(&["cargo"]))
        },
        0,
    );
    let unlimited = store.add(new_grant(TOOL, command_scope(&["cargo", "test"])), 0);
    assert_eq!(
        cover(&store, &[argv(&["cargo", "test"])], 1),
        Some(vec![unlimited.id])
    );
    assert_eq!(
        cover(&store, &[argv(&["cargo", "build"])], 1),
        Some(vec![limited.id])
    );
}

#[test]
fn sixteen_threads_racing_for_five_uses_get_exactly_five() {
    // Many rounds, each thread retrying, and a store padded with grants of
    // other sessions so each check takes long enough that a check/consume
    // split across two locks would let extra callers through.
    for round in 0..50 {
        let store = GrantStore::new();
        for i in 0..500 {
            store.add(
                NewGrant {
                    session: format!("pad-{i}"),
                    ..new_grant(TOOL, command_scope(&["cargo", "test"]))
                },
                0,
            );
        }
        store.add(
            NewGrant {
                max_uses: Some(5),
                ..new_grant(TOOL, command_scope(&["cargo", "test"]))
            },
            0,
        );
        let barrier = Barrier::new(16);
        let successes = AtomicUsize::new(0);
        thread::scope(|scope| {
            for _ in 0..16 {
                scope.spawn(|| {
                    barrier.wait();
                    for _ in 0..4 {
                        if cover(&store, &[argv(&["cargo", "test"])], 1).is_some() {
                            successes.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        assert_eq!(successes.load(Ordering::SeqCst), 5, "round {round}");
        assert!(store.list(SESSION, 1).is_empty(), "round {round}");
    }
}

#[test]
fn the_store_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<GrantStore>();
}

#[test]
fn ids_are_unique_and_increasing_and_list_is_ordered_by_id() {
    let store = GrantStore::new();
    let a = store.add(new_grant(TOOL, command_scope(&["a"])), 0);
    let b = store.add(new_grant(TOOL, command_scope(&["b"])), 0);
    assert!(store.revoke(a.id));
    let c = store.add(new_grant(TOOL, command_scope(&["c"])), 0);
    assert!(a.id < b.id && b.id < c.id);
    let ids: Vec<u64> = store.list(SESSION, 1).iter().map(|g| g.id).collect();
    assert_eq!(ids, vec![b.id, c.id]);
}

#[test]
fn describe_gives_short_human_texts() {
    assert_eq!(
        command_scope(&["cargo", "test"]).describe(),
        "`cargo test *`"
    );
    assert_eq!(
        GrantScope::Path {
            path: PathBuf::from("src/main.rs")
        }
        .describe(),
        "the file src/main.rs"
    );
    assert_eq!(
        GrantScope::Directory {
            path: PathBuf::from("src")
        }
        .describe(),
        "anything under src/"
    );
    assert_eq!(
        GrantScope::Directory {
            path: PathBuf::from("src/")
        }
        .describe(),
        "anything under src/"
    );
    assert_eq!(
        command_scope(&[]).describe(),
        "nothing (empty command prefix)"
    );
}

#[test]
fn describe_keeps_word_boundaries_visible_and_escapes_control_characters() {
    assert_eq!(
        command_scope(&["git", "commit -m", ""]).describe(),
        "`git 'commit -m' '' *`"
    );
    assert_eq!(
        GrantScope::Path {
            path: PathBuf::from("a\u{1b}[2Jb")
        }
        .describe(),
        "the file a\\u{1b}[2Jb"
    );
}

#[test]
fn a_grant_round_trips_through_json_with_a_kind_tag() -> Result<(), serde_json::Error> {
    let store = GrantStore::new();
    let g = store.add(
        NewGrant {
            ttl_ms: Some(60_000),
            max_uses: Some(3),
            ..new_grant(TOOL, command_scope(&["cargo", "test"]))
        },
        7,
    );
    let json = serde_json::to_value(&g)?;
    assert_eq!(json["scope"]["kind"], "command");
    assert_eq!(json["scope"]["prefix"][1], "test");
    let back: Grant = serde_json::from_value(json)?;
    assert_eq!(back, g);
    let dir = serde_json::to_value(GrantScope::Directory {
        path: PathBuf::from("/x"),
    })?;
    assert_eq!(dir["kind"], "directory");
    Ok(())
}

fn mcp_call(tool: &str, arguments: &str, definition: &str) -> (GrantScope, Subject) {
    (
        GrantScope::McpCall {
            tool: tool.into(),
            arguments: arguments.into(),
            definition: definition.into(),
        },
        Subject::McpCall {
            tool: tool.into(),
            arguments: arguments.into(),
            definition: definition.into(),
        },
    )
}

#[test]
fn an_mcp_call_grant_covers_only_the_same_tool_arguments_and_definition() {
    let (scope, same) = mcp_call("fs__mkdir", "a1", "d1");
    assert!(scope.covers(&same));
    for (_, other) in [
        mcp_call("fs__rmdir", "a1", "d1"),
        mcp_call("fs__mkdir", "a2", "d1"),
        mcp_call("fs__mkdir", "a1", "d2"),
    ] {
        assert!(!scope.covers(&other), "{other:?}");
    }
    assert!(!scope.covers(&argv(&["fs__mkdir"])));
    assert!(!command_scope(&["fs__mkdir"]).covers(&same));
    let (empty, empty_subject) = mcp_call("fs__mkdir", "", "d1");
    assert!(
        !empty.covers(&empty_subject),
        "an empty digest covers nothing"
    );
}
