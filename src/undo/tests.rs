use std::os::unix::fs::{PermissionsExt, symlink};
use std::process::Command;

use super::*;
use crate::protocol::UndoAction;

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws")).unwrap();
        fs::create_dir_all(dir.path().join("state")).unwrap();
        World { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn history(&self) -> History {
        History::open(&self.dir.path().join("state"), "s1", &self.ws()).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.ws().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.ws().join(rel)).ok()
    }

    /// Runs `command` in the workspace as call `id`, with checkpoints around it.
    fn call(&self, history: &History, id: &str, command: &str) -> ChangeCount {
        history.before(id, &format!("$ {command}")).unwrap();
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(self.ws())
            .status()
            .unwrap();
        assert!(status.success(), "{command}");
        history.after(id).unwrap()
    }
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn an_approved_rm_rf_src_is_undone_byte_for_byte_with_modes_and_links() {
    let w = World::new();
    w.write("src/app.py", "print('hello')\n");
    w.write("src/sub/deep.txt", "deep\n");
    fs::write(w.ws().join("src/run.sh"), b"#!/bin/sh\necho \xff binary\n").unwrap();
    fs::set_permissions(w.ws().join("src/run.sh"), fs::Permissions::from_mode(0o751)).unwrap();
    fs::set_permissions(w.ws().join("src/sub"), fs::Permissions::from_mode(0o700)).unwrap();
    symlink("app.py", w.ws().join("src/link")).unwrap();
    let history = w.history();
    let count = w.call(&history, "c1", "rm -rf src");
    assert_eq!((count.deleted, count.created, count.modified), (4, 0, 0));
    assert!(!w.ws().join("src").exists());

    let plan = history.plan("c1", false).unwrap();
    assert!(plan.files.iter().all(|f| f.conflict.is_none()), "{plan:?}");
    assert!(plan.files.iter().any(|f| f.path == "src/app.py"
        && f.action == UndoAction::BringBack
        && f.diff.iter().any(|l| l.contains("+print('hello')"))));
    let said = history.apply(&plan, false).unwrap();
    assert!(said.contains("undid c1"), "{said}");
    assert_eq!(w.read("src/app.py").unwrap(), "print('hello')\n");
    assert_eq!(w.read("src/sub/deep.txt").unwrap(), "deep\n");
    assert_eq!(
        fs::read(w.ws().join("src/run.sh")).unwrap(),
        b"#!/bin/sh\necho \xff binary\n"
    );
    assert_eq!(mode(&w.ws().join("src/run.sh")), 0o751);
    assert_eq!(mode(&w.ws().join("src/sub")), 0o700);
    assert_eq!(
        fs::read_link(w.ws().join("src/link")).unwrap(),
        PathBuf::from("app.py")
    );
}

#[test]
fn a_script_that_writes_ten_files_and_deletes_two_is_undone() {
    let w = World::new();
    w.write("keep1.txt", "one\n");
    w.write("keep2.txt", "two\n");
    w.write("script.py", "import os\nfor i in range(10):\n    open(f'out{i}.txt', 'w').write(str(i))\nos.remove('keep1.txt')\nos.remove('keep2.txt')\n");
    let history = w.history();
    let count = w.call(&history, "c1", "python3 script.py");
    assert_eq!((count.created, count.deleted), (10, 2));
    assert_eq!(count.words(), "created 10, deleted 2");
    let plan = history.plan("c1", false).unwrap();
    history.apply(&plan, false).unwrap();
    assert_eq!(w.read("keep1.txt").unwrap(), "one\n");
    assert_eq!(w.read("keep2.txt").unwrap(), "two\n");
    for i in 0..10 {
        assert!(w.read(&format!("out{i}.txt")).is_none());
    }
}

#[test]
fn undoing_a_middle_call_that_a_later_call_changed_again_shows_the_conflict() {
    let w = World::new();
    w.write("f.txt", "original\n");
    let history = w.history();
    w.call(&history, "c1", "echo one > f.txt");
    w.call(&history, "c2", "echo two > f.txt");
    let plan = history.plan("c1", false).unwrap();
    let f = &plan.files[0];
    let conflict = f.conflict.as_deref().unwrap();
    assert!(conflict.contains("changed again later by c2"), "{conflict}");
    // Without a choice to overwrite, the later call's work stays.
    let said = history.apply(&plan, false).unwrap();
    assert!(said.contains("left as they are"), "{said}");
    assert_eq!(w.read("f.txt").unwrap(), "two\n");
    // With every later call, there is no conflict: back to the original.
    let plan = history.plan("c1", true).unwrap();
    assert_eq!(plan.calls.len(), 2);
    assert!(plan.files[0].conflict.is_none());
    history.apply(&plan, false).unwrap();
    assert_eq!(w.read("f.txt").unwrap(), "original\n");
}

#[test]
fn a_file_the_user_edited_after_the_call_is_overwritten_only_by_choice() {
    let w = World::new();
    w.write("f.txt", "original\n");
    let history = w.history();
    w.call(&history, "c1", "echo agent > f.txt");
    w.write("f.txt", "the user's edit\n");
    let plan = history.plan("c1", false).unwrap();
    let conflict = plan.files[0].conflict.as_deref().unwrap();
    assert!(conflict.contains("someone else"), "{conflict}");
    assert!(
        plan.files[0].diff.iter().any(|l| l == "-the user's edit"),
        "{:?}",
        plan.files[0].diff
    );
    history.apply(&plan, false).unwrap();
    assert_eq!(w.read("f.txt").unwrap(), "the user's edit\n");
    let plan = history.plan("c1", false).unwrap();
    history.apply(&plan, true).unwrap();
    assert_eq!(w.read("f.txt").unwrap(), "original\n");
    // The user's edit was kept by that undo: undoing the undo brings it back.
    let undo = history.records().last().unwrap().clone();
    assert_eq!(undo.undoes, vec!["c1".to_string()]);
    let back = history.plan(&undo.call_id, false).unwrap();
    history.apply(&back, false).unwrap();
    assert_eq!(w.read("f.txt").unwrap(), "the user's edit\n");
}

#[test]
fn a_plan_is_applied_only_if_the_workspace_still_gives_it() {
    let w = World::new();
    w.write("f.txt", "original\n");
    let history = w.history();
    w.call(&history, "c1", "echo agent > f.txt");
    let plan = history.plan("c1", false).unwrap();
    w.write("f.txt", "changed after the plan was shown\n");
    let refused = history.apply(&plan, true).unwrap_err();
    assert!(
        refused.contains("changed since this undo was shown"),
        "{refused}"
    );
    assert_eq!(
        w.read("f.txt").unwrap(),
        "changed after the plan was shown\n"
    );
}

#[test]
fn undo_never_writes_through_a_directory_that_became_a_link() {
    let w = World::new();
    w.write("src/a.txt", "mine\n");
    let outside = w.dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("a.txt"), "outside\n").unwrap();
    let history = w.history();
    w.call(&history, "c1", "echo changed > src/a.txt");
    // Something replaces the directory with a link out of the workspace.
    fs::remove_dir_all(w.ws().join("src")).unwrap();
    symlink(&outside, w.ws().join("src")).unwrap();
    let plan = history.plan("c1", false).unwrap();
    let file = plan.files.iter().find(|f| f.path == "src/a.txt").unwrap();
    assert!(
        file.conflict.as_deref().unwrap().contains("is a link now"),
        "{file:?}"
    );
    history.apply(&plan, true).unwrap();
    assert_eq!(
        fs::read_to_string(outside.join("a.txt")).unwrap(),
        "outside\n"
    );
}

#[test]
fn the_model_is_told_once_what_an_undo_put_back() {
    let w = World::new();
    w.write("f.txt", "original\n");
    let history = w.history();
    w.call(&history, "c1", "echo agent > f.txt && echo new > g.txt");
    assert!(history.take_news().is_empty());
    let plan = history.plan("c1", false).unwrap();
    history.apply(&plan, false).unwrap();
    let news = history.take_news();
    assert_eq!(news.len(), 1);
    assert!(
        news[0].contains("undid c1")
            && news[0].contains("Back as they were before: f.txt")
            && news[0].contains("Deleted (the undone calls created them): g.txt"),
        "{news:?}"
    );
    assert!(history.take_news().is_empty());
}

#[test]
fn a_reopened_session_keeps_its_checkpoints() {
    let w = World::new();
    w.write("f.txt", "original\n");
    {
        let history = w.history();
        w.call(&history, "c1", "rm f.txt");
    }
    let again = w.history();
    assert_eq!(again.records().len(), 1);
    let plan = again.plan("c1", false).unwrap();
    again.apply(&plan, false).unwrap();
    assert_eq!(w.read("f.txt").unwrap(), "original\n");
}

#[test]
fn a_repositorys_git_directory_is_never_recorded_or_touched() {
    let w = World::new();
    w.write(".git/index", "index\n");
    w.write("f.txt", "x\n");
    let history = w.history();
    let count = w.call(&history, "c1", "echo y > .git/index && echo y > f.txt");
    assert_eq!(count.modified, 1);
    let record = history.records().pop().unwrap();
    assert!(record.changes.iter().all(|c| !c.path.starts_with(".git")));
    let plan = history.plan("c1", false).unwrap();
    history.apply(&plan, false).unwrap();
    assert_eq!(w.read(".git/index").unwrap(), "y\n");
    assert_eq!(w.read("f.txt").unwrap(), "x\n");
}

#[test]
fn a_bulky_ignored_directory_is_kept_by_size_only_and_undo_says_it_cannot_bring_it_back() {
    let w = World::new();
    w.write(".gitignore", "cache/\n");
    w.write("cache/blob.bin", &"z".repeat(4096));
    w.write("f.txt", "x\n");
    let history = w.history().with_limits(Limits {
        max_file: 1 << 20,
        bulky_dir: 1024,
        ..Limits::default()
    });
    let count = w.call(&history, "c1", "rm -rf cache && echo y > f.txt");
    assert_eq!((count.deleted, count.modified, count.not_kept), (1, 1, 1));
    let plan = history.plan("c1", false).unwrap();
    let blob = plan
        .files
        .iter()
        .find(|f| f.path == "cache/blob.bin")
        .unwrap();
    assert!(blob.not_kept);
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("cannot be brought back")),
        "{plan:?}"
    );
    let said = history.apply(&plan, false).unwrap();
    assert!(said.contains("cache/blob.bin"), "{said}");
    assert_eq!(w.read("f.txt").unwrap(), "x\n");
    assert!(!w.ws().join("cache/blob.bin").exists());
}

#[test]
fn a_first_read_keeps_at_most_its_budget_of_new_content_and_says_what_it_could_not_keep() {
    let w = World::new();
    for i in 0..10 {
        w.write(&format!("f{i}.txt"), &format!("{i}").repeat(1000));
    }
    let history = w.history().with_limits(Limits {
        new_bytes: 4000,
        ..Limits::default()
    });
    let count = w.call(&history, "c1", "rm f*.txt");
    assert_eq!(count.deleted, 10);
    // About a budget's worth came into the store; the rest is known by size and time only.
    assert!(count.not_kept >= 5, "{count:?}");
    assert!(history.objects.all().len() <= 4);
    let plan = history.plan("c1", false).unwrap();
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("cannot be brought back"))
    );
    history.apply(&plan, false).unwrap();
    let back = (0..10)
        .filter(|i| w.ws().join(format!("f{i}.txt")).exists())
        .count();
    assert_eq!(back, 10 - count.not_kept);
}

#[test]
fn unchanged_files_are_not_read_again_and_a_content_is_kept_once() {
    let w = World::new();
    for i in 0..20 {
        w.write(&format!("same{i}.txt"), "the same content\n");
    }
    let history = w.history();
    w.call(&history, "c1", "echo a > one.txt");
    w.call(&history, "c2", "echo b > two.txt");
    // Twenty files of one content, and two others: three contents in the store.
    assert_eq!(history.objects.all().len(), 3);
    let index_before = fs::metadata(history.dir.join("index.json"))
        .unwrap()
        .modified()
        .unwrap();
    // Nothing changed: the index is not written again.
    history.before("c3", "$ true").unwrap();
    assert_eq!(history.after("c3").unwrap(), ChangeCount::default());
    let index_after = fs::metadata(history.dir.join("index.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(index_before, index_after);
    assert_eq!(
        history.records().len(),
        2,
        "a call that changed nothing is not recorded"
    );
}

mod pruning {
    use super::*;
    use crate::undo::prune::{Bounds, prune};
    use std::time::{Duration, SystemTime};

    fn bounds() -> Bounds {
        Bounds {
            max_age: Duration::from_secs(3600),
            budget: u64::MAX,
            session_budget: u64::MAX,
            recent: Duration::from_secs(60),
            grace: Duration::ZERO,
        }
    }

    fn session(w: &World, name: &str, file: &str, text: &str) -> History {
        w.write(file, text);
        let history = History::open(&w.dir.path().join("state"), name, &w.ws()).unwrap();
        w.call(&history, "c1", &format!("rm {file}"));
        history
    }

    #[test]
    fn an_old_sessions_history_goes_with_the_contents_only_it_named_and_the_running_one_stays() {
        let w = World::new();
        session(&w, "old", "old.txt", "only the old session had this\n");
        let running = session(&w, "running", "new.txt", "the running session's\n");
        let later = SystemTime::now() + Duration::from_secs(2 * 3600);
        let pruned = prune(&w.dir.path().join("state"), "running", later, bounds());
        assert_eq!(pruned.sessions, 1);
        assert!(pruned.contents >= 1);
        assert!(!session_dir(&w.dir.path().join("state"), "old").exists());
        // The running session's call can still be undone.
        let plan = running.plan("c1", false).unwrap();
        running.apply(&plan, false).unwrap();
        assert_eq!(w.read("new.txt").unwrap(), "the running session's\n");
    }

    #[test]
    fn over_its_budget_a_session_drops_its_oldest_records_first() {
        let w = World::new();
        let history = session(&w, "s", "a.txt", &"a".repeat(1000));
        w.write("b.txt", &"b".repeat(1000));
        w.call(&history, "c2", "rm b.txt");
        drop(history);
        let small = Bounds {
            session_budget: 1500,
            ..bounds()
        };
        let pruned = prune(
            &w.dir.path().join("state"),
            "other",
            SystemTime::now(),
            small,
        );
        assert_eq!(pruned.records, 1);
        let again = History::open(&w.dir.path().join("state"), "s", &w.ws()).unwrap();
        let ids: Vec<String> = again.records().into_iter().map(|r| r.call_id).collect();
        assert_eq!(ids, vec!["c2".to_string()]);
        assert!(again.plan("c1", false).is_err());
        let plan = again.plan("c2", false).unwrap();
        again.apply(&plan, false).unwrap();
        assert_eq!(w.read("b.txt").unwrap(), "b".repeat(1000));
    }

    #[test]
    fn a_content_just_written_is_never_swept_though_no_history_names_it_yet() {
        let w = World::new();
        let objects = Objects::new(w.dir.path().join("state/undo/objects"));
        let hash = objects
            .put_bytes(b"being read in by another process")
            .unwrap();
        let with_grace = Bounds {
            grace: Duration::from_secs(3600),
            ..bounds()
        };
        prune(
            &w.dir.path().join("state"),
            "x",
            SystemTime::now(),
            with_grace,
        );
        assert!(objects.has(&hash));
        prune(
            &w.dir.path().join("state"),
            "x",
            SystemTime::now(),
            bounds(),
        );
        assert!(!objects.has(&hash));
    }
}
