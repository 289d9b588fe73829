//! The real binary in a real terminal (tmux), driven as a person would: wait for the approval
//! modal, read the diff, press `y`, watch output stream, quit, and check the terminal came back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/tmux.rs"]
mod tmux;

use std::path::Path;

use std::time::{Duration, Instant};
use tmux::Tmux;

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} was never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The demo cockpit, in a tmux session of 120x40 with a home, state and temp directory of its
/// own (the demo's workspace is made under that temp directory); it writes its exit status to
/// `dir/exit-status`, and the shell says AIRLOCK-ENDED once it has exited.
fn start_demo(dir: &Path, name: &str) -> Tmux {
    for sub in ["home", "state", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let command = format!(
        "env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES XDG_CONFIG_HOME={home}/.config HOME={home} AIRLOCK_HOME={state} TMPDIR={tmp} AIRLOCK_EXIT_STATUS_FILE={status} {bin}; echo AIRLOCK-ENDED; sleep 60",
        home = dir.join("home").display(),
        state = dir.join("state").display(),
        tmp = dir.join("tmp").display(),
        status = dir.join("exit-status").display(),
        bin = env!("CARGO_BIN_EXE_airlock"),
    );
    Tmux::start(name, 120, 40, &command)
}

/// Answers the demo's two approvals (the edit, then the test run) once each is on screen and armed.
fn approve_the_edit_and_the_test_run(tmux: &Tmux) {
    tmux.wait_for("wants to run edit_file");
    tmux.wait_for("+    return a + b");
    std::thread::sleep(Duration::from_millis(600)); // past the arm delay
    tmux.keys("y");
    tmux.wait_for("c6 wants to run bash");
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");
}

/// The terminal is the shell's again: the cockpit has left the alternate screen and shown the
/// cursor, and the shell's line after it is there.
fn assert_the_terminal_is_restored(tmux: &Tmux) {
    let screen = tmux.wait_for("AIRLOCK-ENDED");
    assert!(
        !screen.contains("conversation"),
        "the cockpit is still on screen:\n{screen}"
    );
    let flags = tmux.run(&[
        "display-message",
        "-p",
        "-t",
        "airlock",
        "#{alternate_on} #{cursor_flag}",
    ]);
    assert_eq!(
        flags.trim(),
        "0 1",
        "alternate screen and cursor flags after quitting"
    );
}

#[test]
fn the_cockpit_runs_the_demo_with_a_person_approving_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let status_file = dir.path().join("exit-status");
    let tmux = start_demo(dir.path(), "demo");

    // The edit asks first: the modal shows the diff before any key is live.
    // (Not just "approval": the status bar counts the batch's questions before the modal opens.)
    tmux.wait_for("wants to run edit_file");
    let screen = tmux.wait_for("+    return a + b");
    assert!(screen.contains("-    return a - b"), "{screen}");
    std::thread::sleep(Duration::from_millis(600)); // past the arm delay
    // Chords are not answers: Ctrl-D (quit elsewhere), Ctrl-A and Ctrl-Y leave the modal open.
    for chord in ["C-d", "C-a", "C-y"] {
        tmux.keys(chord);
    }
    std::thread::sleep(Duration::from_millis(500));
    let screen = tmux.screen();
    assert!(
        screen.contains("+    return a + b") && screen.contains("waiting for"),
        "a chord answered the modal:\n{screen}"
    );
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");

    // Then the test run asks; allow it and watch its output arrive.
    tmux.wait_for("python3 -m unittest -v");
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");
    tmux.wait_for("OK");

    // The hard deny never asks; the two long checks stream side by side; the turn ends.
    tmux.wait_for("lint: checked module");
    // (A fragment: the conversation wraps between words, so the sentence may span two rows.)
    tmux.wait_for("I did not touch anything");
    // (Idle: no "working" between the grants and the key hints.)
    let screen = tmux.wait_for("grants 0 · Enter send");
    assert!(
        screen.contains("✗ c7"),
        "the rm -rf ~/.cache/pip was denied: {screen}"
    );

    // Quit, and the terminal is ours again: no alternate screen, the shell's line is there.
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&status_file).trim(), "0");
    assert_the_terminal_is_restored(&tmux);
}

#[test]
fn quitting_while_tools_stream_asks_first_then_stops_them_exits_zero_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_demo(dir.path(), "quit");
    approve_the_edit_and_the_test_run(&tmux);
    // The two long checks are running (each streams for about three seconds).
    tmux.wait_for("lint: checked module 2 of 15");
    tmux.keys("C-d");
    // Not just "quit?": the question that counts the running tools.
    let screen = tmux.wait_for("Quitting kills them");
    assert!(
        screen.contains("2 tools are running. Quitting kills them and stops the turn."),
        "{screen}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let screen = tmux.screen();
    assert!(
        screen.contains("Quitting kills them") && !screen.contains("AIRLOCK-ENDED"),
        "Ctrl-D quit without waiting for the answer:\n{screen}"
    );
    tmux.keys("y");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
    assert_the_terminal_is_restored(&tmux);
    // The checks were stopped with the cockpit: nothing of theirs still runs in the workspace.
    let workspace_root = dir.path().join("tmp");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_under(&workspace_root);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still running after quitting: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The command lines of processes whose working directory is inside `root`.
fn processes_under(root: &Path) -> Vec<String> {
    let root = std::fs::canonicalize(root).unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let proc_dir = entry.path();
        let Ok(cwd) = std::fs::read_link(proc_dir.join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&root) {
            let cmdline = std::fs::read(proc_dir.join("cmdline")).unwrap_or_default();
            found.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
        }
    }
    found
}

/// Keys typed as the modal appears (within its arm delay) are dropped, and the modal says so:
/// they neither answer it nor wait, unseen, in the draft it hides to be sent with the next
/// prompt (as "yy" once reached the model in front of one).
#[test]
fn keys_typed_as_the_modal_appears_never_reach_the_next_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_demo(dir.path(), "early");
    tmux.wait_for_quickly("wants to run edit_file");
    tmux.type_text("yy");
    let screen = tmux.wait_for("2 keys typed before the modal was ready were ignored");
    assert!(
        screen.contains("wants to run edit_file") && screen.contains("waiting for approval"),
        "an early key answered the modal:\n{screen}"
    );
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");
    // Once the modal is gone the prompt is in sight again: empty.
    tmux.wait_for("c6 wants to run bash");
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("y");
    tmux.wait_for("grants 0 · Enter send");
    let screen = tmux.screen();
    assert!(
        screen.contains("Ask the agent…"),
        "the draft is not empty:\n{screen}"
    );
    tmux.type_text("hi there");
    tmux.keys("Enter");
    let screen = tmux.wait_for("> hi there");
    assert!(!screen.contains("yyhi"), "{screen}");
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
}

/// `F1` and `?` open the help over the modal; `Esc` then closes the help only, and the call
/// still waits for its answer.
#[test]
fn the_help_opens_over_the_modal_and_esc_closes_only_the_help() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_demo(dir.path(), "help");
    tmux.wait_for("wants to run edit_file");
    std::thread::sleep(Duration::from_millis(600));
    for open in ["F1", "?"] {
        tmux.keys(open);
        let screen = tmux.wait_for("every key, mouse too");
        assert!(screen.contains("the help, over the modal"), "{screen}");
        tmux.keys("Escape");
        std::thread::sleep(Duration::from_millis(300));
        let screen = tmux.screen();
        assert!(
            !screen.contains("every key, mouse too")
                && screen.contains("wants to run edit_file")
                && screen.contains("edit calc.py — waiting for approval"),
            "Esc after {open} did more than close the help:\n{screen}"
        );
        // A second Esc right away, meant for the help, finds the modal arming again.
        tmux.keys("Escape");
        std::thread::sleep(Duration::from_millis(600));
        let screen = tmux.screen();
        assert!(
            screen.contains("edit calc.py — waiting for approval"),
            "a second Esc denied the call:\n{screen}"
        );
    }
    tmux.keys("y");
    tmux.wait_for("c6 wants to run bash");
    tmux.keys("C-c");
    tmux.wait_for("grants 0 · Enter send");
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
}

/// `Ctrl-C` on an empty, idle prompt says how to quit; a second one within two seconds quits.
#[test]
fn ctrl_c_twice_on_an_empty_idle_prompt_quits() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_demo(dir.path(), "ctrlc");
    approve_the_edit_and_the_test_run(&tmux);
    tmux.wait_for("grants 0 · Enter send");
    tmux.keys("C-c");
    tmux.wait_for("Ctrl-C again to quit");
    // It goes after two seconds, and the next Ctrl-C only says it again.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!tmux.screen().contains("Ctrl-C again to quit"));
    tmux.keys("C-c");
    tmux.wait_for("Ctrl-C again to quit");
    tmux.keys("C-c");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
    assert_the_terminal_is_restored(&tmux);
}

/// At 80x24 the demo's first modal leaves the conversation's latest lines (why the edit is
/// made) in sight above it.
#[test]
fn at_80x24_the_first_modal_leaves_the_conversation_in_sight() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_demo(dir.path(), "narrow");
    tmux.run(&["resize-window", "-t", "airlock", "-x", "80", "-y", "24"]);
    let screen = tmux.wait_for("wants to run edit_file");
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows.iter().position(|r| r.contains("┌ approval")).unwrap();
    let above = rows[..top].join("\n");
    assert!(top >= 5, "{screen}");
    assert!(above.contains("Here is the fix."), "{screen}");
    tmux.keys("C-c");
    tmux.wait_for("grants 0 · Enter send");
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
}
