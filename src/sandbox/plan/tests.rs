use super::*;

fn context(root: &Path) -> PathContext {
    let workspace = root.join("ws");
    let home = root.join("home");
    fs::create_dir_all(&workspace).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::create_dir_all(home.join(".config/gcloud")).unwrap();
    fs::create_dir_all(home.join(".config/editor")).unwrap();
    fs::create_dir_all(home.join("notes")).unwrap();
    fs::write(home.join(".ssh/id_ed25519"), "k").unwrap();
    fs::write(home.join(".netrc"), "machine x").unwrap();
    fs::write(home.join(".env"), "A=1").unwrap();
    fs::write(
        home.join("mystery"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    fs::write(home.join("readme.txt"), "hi").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("innocent")).unwrap();
    PathContext::new(&workspace, &home, &root.join("state")).unwrap()
}

#[test]
fn reads_are_granted_around_every_protected_place_in_the_home_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
    let home = &ctx.home;
    for secret in [
        ".ssh",
        ".ssh/id_ed25519",
        ".config/gcloud",
        ".netrc",
        ".env",
        "mystery",
    ] {
        assert!(
            plan.is_protected(&home.join(secret)),
            "{secret} is protected"
        );
        assert!(!plan.may_read(&home.join(secret)), "{secret} is readable");
    }
    for open in ["notes", "readme.txt", ".config/editor"] {
        assert!(plan.may_read(&home.join(open)), "{open} is not readable");
    }
    // The link leads into ~/.ssh: granting it would grant the directory.
    assert!(!plan.read.iter().any(|r| r.ends_with("innocent")));
    assert!(plan.read.contains(&PathBuf::from("/usr")));
}

#[test]
fn writes_go_to_the_workspace_and_a_temp_dir_only_and_read_only_leaves_out_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let own = dir.path().join("own-temp");
    fs::create_dir_all(&own).unwrap();
    let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(own.clone())).unwrap();
    assert!(plan.may_write(&ctx.workspace.join("src/x.py")));
    assert!(!plan.may_write(&ctx.home.join("x")));
    assert!(!plan.network);
    // The workspace is inside the system temp dir, so it is not scratch space: the run gets
    // a temp dir of its own.
    assert_eq!(plan.temp.as_deref(), Some(own.as_path()));
    assert!(plan.may_write(&own.join("f")));
    let read_only = Plan::make(&ctx, Profile::ReadOnly, || Ok(own.clone())).unwrap();
    assert!(!read_only.may_write(&ctx.workspace.join("src/x.py")));
    assert!(read_only.may_write(&own.join("f")));
    assert!(
        Plan::make(&ctx, Profile::Network, || Ok(own.clone()))
            .unwrap()
            .network
    );
}

#[test]
fn where_places_are_covered_the_read_rules_do_not_grow_with_the_entries_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let temp = || Ok(dir.path().join("t"));
    let before = Plan::make(&ctx, Profile::WorkspaceWrite, temp).unwrap();
    for i in 0..300 {
        fs::write(ctx.home.join(format!("file-{i}")), "x").unwrap();
        fs::create_dir_all(dir.path().join(format!("beside-{i}"))).unwrap();
    }
    let after = Plan::make(&ctx, Profile::WorkspaceWrite, temp).unwrap();
    // The full walk grants each entry beside a protected place: one rule each.
    assert!(after.read.len() >= before.read.len() + 300);
    assert_eq!(after.read_covered, before.read_covered);
    assert!(after.read_covered.len() < 64, "{:?}", after.read_covered);
    // What the short walk does not go around is covered instead, outermost only.
    let home = &ctx.home;
    for secret in [".ssh", ".config/gcloud", ".netrc", ".env", "mystery"] {
        assert!(
            after.covers.contains(&home.join(secret)),
            "{secret} is not covered"
        );
    }
    assert!(!after.covers.contains(&home.join(".ssh/id_ed25519")));
    assert!(!after.covers.iter().any(|c| c.starts_with("/dev")));
    let args = after.launcher_args();
    let count = |flag: &str| args.iter().filter(|a| *a == flag).count();
    assert_eq!(count("--read-covered"), after.read_covered.len());
    assert_eq!(count("--cover"), after.covers.len());
}

#[test]
fn a_protected_place_inside_a_writable_root_is_walked_around_not_covered() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    fs::create_dir_all(workspace.join("state")).unwrap();
    let ctx = PathContext::new(&workspace, dir.path(), &workspace.join("state")).unwrap();
    let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
    let state = fs::canonicalize(workspace.join("state")).unwrap();
    assert!(!plan.covers.contains(&state));
    let ws = fs::canonicalize(&workspace).unwrap();
    assert!(!plan.read_covered.iter().any(|r| state.starts_with(r)));
    assert!(!plan.read_covered.contains(&ws));
}

#[test]
fn a_plan_is_stale_once_a_credential_store_appears_in_a_home_it_listed() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    // Looked at long after its last change (a directory changed within `RACY` of the plan
    // is taken as stale once, by design).
    let old = SystemTime::now() - Duration::from_secs(60);
    fs::File::open(&ctx.home)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
    let home = plan.listed.iter().find(|(d, _)| *d == ctx.home).unwrap();
    assert_eq!(home.1, Some(old));
    fs::create_dir_all(ctx.home.join(".aws")).unwrap();
    fs::write(ctx.home.join(".aws/credentials"), "k").unwrap();
    assert!(plan.is_stale());
    let again = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
    assert!(again.covers.contains(&ctx.home.join(".aws")));
    assert!(!again.may_read(&ctx.home.join(".aws/credentials")));
}

#[test]
fn a_directory_changed_just_before_the_plan_makes_it_stale_once_a_moment_later() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    fs::write(ctx.home.join("fresh"), "x").unwrap();
    let mut plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
    let until = plan
        .racy_until
        .expect("a directory changed just before counts as racy");
    // Used as it is for a moment (the commands of a batch do not each make it again)...
    assert!(until > SystemTime::now());
    // ...and stale from then on.
    plan.racy_until = Some(SystemTime::now() - Duration::from_millis(1));
    assert!(plan.is_stale());
}

#[test]
fn airlocks_state_directory_inside_a_writable_root_is_neither_readable_nor_writable() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    fs::create_dir_all(workspace.join("state")).unwrap();
    fs::create_dir_all(workspace.join("src")).unwrap();
    let ctx = PathContext::new(&workspace, dir.path(), &workspace.join("state")).unwrap();
    let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || Ok(dir.path().join("t"))).unwrap();
    let state = fs::canonicalize(workspace.join("state")).unwrap();
    assert!(!plan.may_write(&state.join("airlock.db")));
    assert!(plan.is_protected(&state.join("airlock.key")));
    assert!(plan.may_write(&workspace.join("src/a.rs")));
}

#[test]
fn a_plan_that_needs_a_temp_dir_of_its_own_is_not_stale_the_moment_it_is_made() {
    // The workspace lies in the system temp dir, so the plan needs a temp dir of airlock's own,
    // made here beside the workspace: in a directory the walk lists (it holds the home's keys
    // and the state dir). Made after the listing, it made every such plan stale at once.
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    fs::create_dir_all(&ctx.state_dir).unwrap();
    let plan = Plan::make(&ctx, Profile::WorkspaceWrite, || make_own_temp(dir.path())).unwrap();
    let root = physical(dir.path());
    assert!(plan.temp.as_ref().is_some_and(|t| t.starts_with(&root)));
    // As listed, the directory already held the temp dir (the plan is not stale because of
    // it; other tests change `/tmp` all the time, so only this directory is looked at).
    let listed = plan.listed.iter().find(|(d, _)| *d == root);
    let now = fs::metadata(&root).and_then(|m| m.modified()).ok();
    assert_eq!(
        listed.map(|(_, then)| *then),
        Some(now),
        "{:?}",
        plan.listed
    );
}
