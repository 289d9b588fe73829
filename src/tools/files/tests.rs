use std::io::Read;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::PathBuf;

use serde_json::json;

use super::*;

/// A workspace on disk, its canonical path (what the gate judges paths against), and a
/// directory outside it.
struct Dirs {
    _root: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    Dirs {
        ws: ws.canonicalize().unwrap(),
        outside: outside.canonicalize().unwrap(),
        _root: root,
    }
}

impl Dirs {
    /// The physical path the gate would judge for `rel`, taken before anything is swapped.
    fn judged(&self, rel: &str) -> PathBuf {
        self.ws.join(rel)
    }

    fn place<'a>(&'a self, judged: &'a Path) -> Place<'a> {
        Place {
            workspace: &self.ws,
            judged,
        }
    }

    /// `sub` was a directory when the call was judged; now it is a link to the outside.
    fn swap_sub_for_a_link_outside(&self) {
        std::fs::remove_dir_all(self.ws.join("sub")).unwrap();
        symlink(&self.outside, self.ws.join("sub")).unwrap();
    }

    fn outside_is_untouched(&self, name: &str, content: &str) {
        assert_eq!(
            std::fs::read_to_string(self.outside.join(name)).unwrap(),
            content
        );
        assert_eq!(
            std::fs::read_dir(&self.outside).unwrap().count(),
            1,
            "nothing added outside"
        );
    }
}

#[test]
fn an_edit_replaces_one_exact_occurrence_and_refuses_ambiguity() {
    assert_eq!(apply_edit("a b a", "b", "c", false).unwrap(), "a c a");
    assert!(
        apply_edit("a b a", "a", "c", false)
            .unwrap_err()
            .contains("2 times")
    );
    assert_eq!(apply_edit("a b a", "a", "c", true).unwrap(), "c b c");
    assert!(
        apply_edit("abc", "x", "y", false)
            .unwrap_err()
            .contains("not found")
    );
    assert!(apply_edit("abc", "", "y", false).is_err());
}

#[test]
fn writes_are_atomic_and_keep_permissions() {
    let d = dirs();
    let path = d.judged("run.sh");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = write_file(d.place(&path), &json!({"path": "run.sh", "content": "new"})).unwrap();
    assert_eq!(out.content, "replaced run.sh (1 lines)\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(
        std::fs::read_dir(&d.ws).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn write_file_creates_missing_directories_and_says_created() {
    let d = dirs();
    let path = d.judged("a/b/new.txt");
    let out = write_file(
        d.place(&path),
        &json!({"path": "a/b/new.txt", "content": "x\n"}),
    )
    .unwrap();
    assert_eq!(out.content, "created a/b/new.txt (1 lines)\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x\n");
}

#[test]
fn search_respects_gitignore_and_reports_lines() {
    let d = dirs();
    std::fs::create_dir(d.ws.join(".git")).unwrap();
    std::fs::write(d.ws.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir(d.ws.join("target")).unwrap();
    std::fs::write(d.ws.join("target/x.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(d.ws.join("a.rs"), "// hay\nfn needle() {}\n").unwrap();
    let out = search(d.place(&d.ws), &json!({"pattern": "needle"})).unwrap();
    assert_eq!(out.content, "a.rs:2: fn needle() {}\n");
}

#[test]
fn search_of_one_file_and_in_a_subdirectory_shows_workspace_paths() {
    let d = dirs();
    std::fs::create_dir_all(d.ws.join("src/deep")).unwrap();
    std::fs::write(d.ws.join("src/deep/a.rs"), "needle\n").unwrap();
    let sub = d.judged("src");
    let out = search(d.place(&sub), &json!({"pattern": "needle", "path": "src"})).unwrap();
    assert_eq!(out.content, "src/deep/a.rs:1: needle\n");
    let file = d.judged("src/deep/a.rs");
    let out = search(
        d.place(&file),
        &json!({"pattern": "needle", "path": "src/deep/a.rs"}),
    )
    .unwrap();
    assert_eq!(out.content, "src/deep/a.rs:1: needle\n");
}

#[test]
fn search_of_a_missing_path_says_so_instead_of_finding_nothing() {
    let d = dirs();
    let judged = d.judged("nope");
    let err = search(d.place(&judged), &json!({"pattern": "x", "path": "nope"}))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("cannot search nope: No such file"), "{err}");
}

#[test]
fn read_file_refuses_a_fifo_a_device_and_a_directory_without_blocking() {
    let d = dirs();
    nix::unistd::mkfifo(&d.ws.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    for (raw, judged) in [
        ("pipe", d.judged("pipe")),
        ("/dev/zero", PathBuf::from("/dev/zero")),
        ("/dev/null", PathBuf::from("/dev/null")),
        (".", d.ws.clone()),
    ] {
        let err = read_file(d.place(&judged), &json!({"path": raw}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("regular files only"), "{raw}: {err}");
    }
}

#[test]
fn edit_file_refuses_a_fifo_without_blocking() {
    let d = dirs();
    nix::unistd::mkfifo(&d.ws.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let judged = d.judged("pipe");
    let args = json!({"path": "pipe", "old": "a", "new": "b"});
    let err = edit_file(d.place(&judged), &args).unwrap_err().to_string();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn write_file_refuses_to_replace_a_fifo_or_a_directory() {
    let d = dirs();
    nix::unistd::mkfifo(&d.ws.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::create_dir(d.ws.join("dir")).unwrap();
    for raw in ["pipe", "dir"] {
        let judged = d.judged(raw);
        let err = write_file(d.place(&judged), &json!({"path": raw, "content": "x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a regular file"), "{raw}: {err}");
    }
    assert!(d.ws.join("dir").is_dir());
    assert_eq!(
        std::fs::read_dir(&d.ws).unwrap().count(),
        2,
        "no temporary file left"
    );
}

#[test]
fn read_file_reads_only_what_it_shows_of_a_big_file() {
    let d = dirs();
    let judged = d.judged("big");
    std::fs::write(&judged, vec![b'x'; MAX_READ_BYTES + 10]).unwrap();
    let out = read_file(d.place(&judged), &json!({"path": "big"})).unwrap();
    assert!(out.content.ends_with(&format!(
        "… 10 more bytes not shown (file is {} bytes)\n",
        MAX_READ_BYTES + 10
    )));
}

#[test]
fn a_missing_file_is_named_in_the_error() {
    let d = dirs();
    let judged = d.judged("missing.txt");
    let err = read_file(d.place(&judged), &json!({"path": "missing.txt"}))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot read missing.txt: No such file"),
        "{err}"
    );
}

#[test]
fn list_dir_marks_directories_and_symlinks_without_following_them() {
    let d = dirs();
    std::fs::create_dir(d.ws.join("sub")).unwrap();
    std::fs::write(d.ws.join("a.txt"), "").unwrap();
    symlink(&d.outside, d.ws.join("out")).unwrap();
    let out = list_dir(d.place(&d.ws), &json!({})).unwrap();
    assert_eq!(out.content, "a.txt\nout@\nsub/\n");
}

#[test]
fn a_write_whose_directory_became_a_symlink_is_refused_and_writes_nothing_outside() {
    let d = dirs();
    std::fs::create_dir(d.ws.join("sub")).unwrap();
    std::fs::write(d.outside.join("keep.txt"), "keep").unwrap();
    let judged = d.judged("sub/new.txt");
    d.swap_sub_for_a_link_outside();
    let err = write_file(
        d.place(&judged),
        &json!({"path": "sub/new.txt", "content": "x"}),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "`sub` changed since the call was approved: it is now a symlink, which airlock does not follow; nothing was written"
    );
    d.outside_is_untouched("keep.txt", "keep");
}

#[test]
fn a_write_into_a_new_subdirectory_of_a_swapped_directory_creates_nothing_outside() {
    let d = dirs();
    std::fs::create_dir(d.ws.join("sub")).unwrap();
    std::fs::write(d.outside.join("keep.txt"), "keep").unwrap();
    let judged = d.judged("sub/new/deeper/x.txt");
    d.swap_sub_for_a_link_outside();
    let args = json!({"path": "sub/new/deeper/x.txt", "content": "x"});
    let err = write_file(d.place(&judged), &args).unwrap_err().to_string();
    assert!(
        err.contains("`sub` changed since the call was approved"),
        "{err}"
    );
    d.outside_is_untouched("keep.txt", "keep");
}

#[test]
fn an_edit_or_read_whose_directory_became_a_symlink_is_refused() {
    let d = dirs();
    std::fs::create_dir(d.ws.join("sub")).unwrap();
    std::fs::write(d.ws.join("sub/f.txt"), "inside").unwrap();
    std::fs::write(d.outside.join("f.txt"), "secret outside").unwrap();
    let judged = d.judged("sub/f.txt");
    d.swap_sub_for_a_link_outside();
    let args = json!({"path": "sub/f.txt", "old": "secret", "new": "changed"});
    let err = edit_file(d.place(&judged), &args).unwrap_err().to_string();
    assert!(
        err.contains("`sub` changed since") && err.ends_with("nothing was changed"),
        "{err}"
    );
    d.outside_is_untouched("f.txt", "secret outside");
    let err = read_file(d.place(&judged), &json!({"path": "sub/f.txt"}))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`sub` changed since") && err.ends_with("nothing was read"),
        "{err}"
    );
}

#[test]
fn a_list_or_search_whose_directory_became_a_symlink_is_refused() {
    let d = dirs();
    std::fs::create_dir(d.ws.join("sub")).unwrap();
    std::fs::write(d.outside.join("f.txt"), "secret").unwrap();
    let judged = d.judged("sub");
    d.swap_sub_for_a_link_outside();
    let err = list_dir(d.place(&judged), &json!({"path": "sub"}))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`sub` changed since") && err.ends_with("nothing was listed"),
        "{err}"
    );
    let err = search(
        d.place(&judged),
        &json!({"path": "sub", "pattern": "secret"}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`sub` changed since") && err.ends_with("nothing was searched"),
        "{err}"
    );
}

#[test]
fn a_write_whose_file_became_a_symlink_is_refused_and_the_link_is_left_alone() {
    let d = dirs();
    std::fs::write(d.ws.join("f.txt"), "mine").unwrap();
    std::fs::write(d.outside.join("f.txt"), "theirs").unwrap();
    let judged = d.judged("f.txt");
    std::fs::remove_file(d.ws.join("f.txt")).unwrap();
    symlink(d.outside.join("f.txt"), d.ws.join("f.txt")).unwrap();
    let err = write_file(d.place(&judged), &json!({"path": "f.txt", "content": "x"}))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`f.txt` changed since the call was approved: it is now a symlink"),
        "{err}"
    );
    assert!(err.ends_with("nothing was written"), "{err}");
    d.outside_is_untouched("f.txt", "theirs");
    assert!(
        std::fs::symlink_metadata(d.ws.join("f.txt"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is not replaced either"
    );
    assert_eq!(
        std::fs::read_dir(&d.ws).unwrap().count(),
        1,
        "no temporary file left"
    );
    let args = json!({"path": "f.txt", "old": "theirs", "new": "x"});
    let err = edit_file(d.place(&judged), &args).unwrap_err().to_string();
    assert!(err.contains("it is now a symlink"), "{err}");
    let err = read_file(d.place(&judged), &json!({"path": "f.txt"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("it is now a symlink"), "{err}");
    d.outside_is_untouched("f.txt", "theirs");
}

#[test]
fn search_never_reads_through_a_subdirectory_that_became_a_symlink() {
    let d = dirs();
    std::fs::create_dir_all(d.ws.join("sub")).unwrap();
    std::fs::write(d.ws.join("sub/a.txt"), "needle inside\n").unwrap();
    std::fs::write(d.outside.join("a.txt"), "needle outside\n").unwrap();
    std::fs::write(d.ws.join("top.txt"), "needle top\n").unwrap();
    let held = Judged {
        path: &d.ws,
        raw: ".",
        workspace: &d.ws,
        verb: Verb::Search,
    }
    .hold(false)
    .unwrap();
    // The walk listed `sub/a.txt`; then `sub` was swapped before the file was opened.
    d.swap_sub_for_a_link_outside();
    let err = held
        .open_below(Path::new("sub/a.txt"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`sub` changed since"), "{err}");
    let mut text = String::new();
    held.open_below(Path::new("top.txt"))
        .unwrap()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "needle top\n");
    let out = search(d.place(&d.ws), &json!({"pattern": "needle"})).unwrap();
    assert_eq!(out.content, "top.txt:1: needle top\n");
}

#[test]
fn a_judged_path_that_is_not_absolute_and_resolved_is_refused() {
    let d = dirs();
    for judged in ["sub/x", "/a/../b", "./b"] {
        let err = read_file(d.place(Path::new(judged)), &json!({"path": "x"})).unwrap_err();
        assert!(matches!(err, ToolError::Tampered(_)), "{judged}: {err}");
    }
}

#[test]
fn the_file_tools_do_not_follow_dev_or_proc_links() {
    let d = dirs();
    let err = read_file(
        d.place(Path::new("/dev/stdin")),
        &json!({"path": "/dev/stdin"}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("do not follow symlinks under /dev or /proc"),
        "{err}"
    );
}

#[test]
fn a_directory_on_the_way_that_became_a_file_is_named_in_the_error() {
    let d = dirs();
    std::fs::create_dir(d.ws.join("sub")).unwrap();
    let judged = d.judged("sub/new.txt");
    std::fs::remove_dir(d.ws.join("sub")).unwrap();
    std::fs::write(d.ws.join("sub"), "a file now").unwrap();
    let err = write_file(
        d.place(&judged),
        &json!({"path": "sub/new.txt", "content": "x"}),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(err, "cannot write sub/new.txt: sub is not a directory");
    assert_eq!(
        std::fs::read_to_string(d.ws.join("sub")).unwrap(),
        "a file now"
    );
}

#[test]
fn a_file_with_a_name_near_the_length_limit_is_still_written_atomically() {
    let d = dirs();
    let name = "n".repeat(250);
    let judged = d.judged(&name);
    std::fs::write(&judged, "old").unwrap();
    write_file(d.place(&judged), &json!({"path": name, "content": "new"})).unwrap();
    assert_eq!(std::fs::read_to_string(&judged).unwrap(), "new");
    assert_eq!(std::fs::read_dir(&d.ws).unwrap().count(), 1);
}
