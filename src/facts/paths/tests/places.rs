//! Where a path lands: workspace, home, state, system; devices and /proc.

use super::*;

// -- locations ---------------------------------------------------------

#[test]
fn locations_follow_the_documented_order() {
    let w = World::new();
    let scratch = w.root.join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    let mut ctx = w.ctx.clone();
    ctx.temp_dirs = vec![scratch.clone()];
    let state_in_ws = w.ws().join(".airlock-state");
    let cases: Vec<(PathBuf, Location)> = vec![
        (w.ws().join("src/main.rs"), Location::Workspace),
        (w.ws(), Location::Workspace),
        (scratch.join("a/b"), Location::Temp),
        (w.ctx.state_dir.join("db.json"), Location::AirlockState),
        (w.root.join("elsewhere"), Location::Outside),
        ("/dev/null".into(), Location::Device),
        ("/dev/stdout".into(), Location::Device),
        ("/dev/stderr".into(), Location::Device),
        ("/dev/tty".into(), Location::Outside),
        ("/dev/fd/3".into(), Location::Device),
        ("/dev/zero".into(), Location::Device),
        ("/dev/urandom".into(), Location::Device),
        ("/dev/random".into(), Location::Device),
        ("/dev/fd/x".into(), Location::Outside),
        ("/dev/sda".into(), Location::Outside),
    ];
    for (path, expected) in cases {
        let r = resolve(&ctx, &ctx.workspace, path.to_str().unwrap());
        assert_eq!(r.location, expected, "{}", path.display());
    }
    // A state dir inside the workspace is still the state dir.
    ctx.state_dir = state_in_ws.clone();
    let r = resolve(&ctx, &ctx.workspace, ".airlock-state/x");
    assert_eq!(r.location, Location::AirlockState);
    assert!(r.sensitivity.contains(&AirlockConfig));
}

#[test]
fn a_workspace_inside_tmp_is_workspace() {
    let w = World::new();
    let mut ctx = w.ctx.clone();
    ctx.temp_dirs = vec![w.root.clone()];
    let r = resolve(&ctx, &ctx.workspace, "src/x");
    assert_eq!(r.location, Location::Workspace);
    let r = resolve(&ctx, &ctx.workspace, "../other");
    assert_eq!(r.location, Location::Temp);
}

#[test]
fn new_canonicalizes_and_lists_temp_dirs() {
    let w = World::new();
    w.link(w.ws(), "ws_alias");
    let ctx = PathContext::new(
        &w.root.join("ws_alias"),
        &w.ctx.home,
        Path::new("relative-state"),
    )
    .unwrap();
    assert_eq!(ctx.workspace, w.ws());
    assert_eq!(ctx.state_dir, w.ws().join("relative-state"));
    assert!(ctx.temp_dirs.iter().all(|t| t.is_absolute()));
    let tmp = fs::canonicalize("/tmp").unwrap();
    // /tmp is scratch space unless the workspace itself lives there.
    assert_eq!(
        ctx.temp_dirs.contains(&tmp),
        !ctx.workspace.starts_with(&tmp)
    );
    assert!(PathContext::new(&w.root.join("missing"), &w.ctx.home, &w.root).is_err());
}

// -- devices and /proc -------------------------------------------------

#[test]
fn stdio_devices_are_not_followed_into_proc() {
    let w = World::new();
    for raw in ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/stdin"] {
        let r = w.resolve(raw);
        assert_eq!(r.path, PathBuf::from(raw));
        assert_eq!(r.location, Location::Device, "{raw}");
        assert!(r.sensitivity.is_empty(), "{raw}: {:?}", r.sensitivity);
    }
}

#[test]
fn disk_devices_are_flagged() {
    let w = World::new();
    for raw in [
        "/dev/sda",
        "/dev/sda1",
        "/dev/nvme0n1p2",
        "/dev/vda",
        "/dev/hda",
        "/dev/mmcblk0",
        "/dev/disk0",
        "/dev/disk/by-id/x",
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
    ] {
        let r = w.resolve(raw);
        assert!(r.sensitivity.contains(&DiskDevice), "{raw}");
        assert_eq!(r.location, Location::Outside, "{raw}");
    }
}

#[test]
fn proc_environ_and_mem_are_classified_by_owner() {
    let w = World::new();
    let cases = [
        ("/proc/self/environ", ProcessEnvironment),
        ("/proc/thread-self/environ", ProcessEnvironment),
        ("/proc/1/environ", OtherProcessEnvironment),
        ("/proc/4242/task/4243/environ", OtherProcessEnvironment),
        ("/proc/self/mem", OtherProcessEnvironment),
        ("/proc/1/mem", OtherProcessEnvironment),
    ];
    for (raw, expected) in cases {
        let r = w.resolve(raw);
        assert_eq!(r.path, PathBuf::from(raw), "{raw}");
        assert_eq!(r.sensitivity, vec![expected, SystemDir], "{raw}");
    }
}

#[test]
fn proc_root_and_cwd_magic_links_are_seen_through() {
    let w = World::new();
    let r = w.resolve("/proc/self/root/etc/shadow");
    assert_eq!(r.path, PathBuf::from("/etc/shadow"));
    assert!(r.sensitivity.contains(&CredentialStore));
    let r = w.resolve("/proc/1/root/etc/sudoers");
    assert_eq!(r.path, PathBuf::from("/etc/sudoers"));
    assert!(r.sensitivity.contains(&CredentialStore));
    let r = w.resolve("/proc/self/cwd/../ws-other");
    assert_eq!(r.path, w.root.join("ws-other"));
    assert_eq!(r.location, Location::Outside);
}

#[test]
fn a_workspace_symlink_to_proc_self_environ_is_process_environment() {
    let w = World::new();
    w.link("/proc/self/environ", "ws/env_dump");
    let r = w.resolve("env_dump");
    assert_eq!(r.path, PathBuf::from("/proc/self/environ"));
    assert!(r.sensitivity.contains(&ProcessEnvironment));
    assert!(r.is_symlink_escape);
}
