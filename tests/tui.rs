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

/// `start_demo`, playing `scenario` (a path from the crate's root) instead of the demo.
fn start_scenario(dir: &Path, name: &str, scenario: &str) -> Tmux {
    for sub in ["home", "state", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let command = format!(
        "cd {root} && env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES XDG_CONFIG_HOME={home}/.config HOME={home} AIRLOCK_HOME={state} TMPDIR={tmp} AIRLOCK_EXIT_STATUS_FILE={status} {bin} --scenario {scenario}; echo AIRLOCK-ENDED; sleep 60",
        root = env!("CARGO_MANIFEST_DIR"),
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
    tmux.wait_until_armed("+    return a + b");
    tmux.keys("y");
    tmux.wait_until_armed("c6 wants to run bash");
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
    tmux.wait_until_armed("+    return a + b");
    // Chords are not answers: Ctrl-D (quit elsewhere), Ctrl-A and Ctrl-Y leave the modal open.
    for chord in ["C-d", "C-a", "C-y"] {
        tmux.keys(chord);
    }
    // `N` after them opens the reason box only if the modal is still open: the chords were
    // taken (keys are taken in order) and none answered it.
    tmux.keys("N");
    let screen = tmux.wait_until("neither the reason box nor the next request came", |s| {
        s.contains("why not?") || s.contains("c6 wants to run bash")
    });
    assert!(
        screen.contains("why not?") && screen.contains("wants to run edit_file"),
        "a chord answered the modal:\n{screen}"
    );
    // Back to the options (the reason is dropped); still armed.
    tmux.keys("Escape");
    tmux.wait_for_gone("why not?");
    tmux.wait_until_armed("+    return a + b");
    tmux.keys("y");

    // Then the test run asks; allow it and watch its output arrive.
    tmux.wait_until_armed("python3 -m unittest -v");
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
    // The checks go on streaming under the question: a module checked after it was asked
    // shows the cockpit still running, waiting for the answer.
    let asked_at = checked_modules(&screen);
    let screen = tmux.wait_until("nothing more was drawn after the question", |s| {
        checked_modules(s) > asked_at || s.contains("AIRLOCK-ENDED")
    });
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

/// The highest "checked module N" of the demo's lint on screen (0 when none is).
fn checked_modules(screen: &str) -> u32 {
    screen
        .split("checked module ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .max()
        .unwrap_or(0)
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
    tmux.wait_until_armed("wants to run edit_file");
    tmux.keys("y");
    // Once the modal is gone the prompt is in sight again: empty.
    tmux.wait_until_armed("c6 wants to run bash");
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
    for (round, open) in ["F1", "?"].into_iter().enumerate() {
        tmux.wait_until_armed("wants to run edit_file");
        tmux.keys(open);
        tmux.wait_for("every key, mouse too");
        // Waited for, not read off the first frame with the title (one can be caught half
        // drawn on a loaded machine).
        tmux.wait_for("the help, over the modal");
        tmux.keys("Escape");
        // Polled fast: the second Esc below must come while the modal arms again.
        let screen = tmux.wait_until_quickly(
            &format!("Esc after {open} did not bring the modal back"),
            |s| {
                !s.contains("every key, mouse too")
                    && s.contains("edit calc.py — waiting for approval")
                    && s.contains("wants to run edit_file")
            },
        );
        assert!(
            !screen.contains("every key, mouse too")
                && screen.contains("wants to run edit_file")
                && screen.contains("edit calc.py — waiting for approval"),
            "Esc after {open} did more than close the help:\n{screen}"
        );
        // A second Esc right away, meant for the help, finds the modal arming again: it is
        // dropped, and the footer counts it.
        tmux.keys("Escape");
        let dropped = format!(
            "{} typed before the modal was ready",
            if round == 0 { "1 key" } else { "2 keys" }
        );
        let screen = tmux.wait_for(&dropped);
        assert!(
            screen.contains("edit calc.py — waiting for approval"),
            "a second Esc denied the call:\n{screen}"
        );
    }
    tmux.wait_until_armed("wants to run edit_file");
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
    tmux.wait_for_gone("Ctrl-C again to quit");
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

/// A person reviews a proposal in the real cockpit: drops the second of three hunks of a file
/// change, then edits a command before approving it. What ran is what they left.
#[test]
fn a_person_drops_a_hunk_and_edits_a_command_before_approving() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["home", "state", "tmp", "ws"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "LINE 2\n")
        .replace("line 10\n", "LINE 10\n")
        .replace("line 18\n", "LINE 18\n");
    std::fs::write(dir.path().join("ws/f.txt"), &old).unwrap();
    let scenario = serde_json::json!({"name": "review", "prompt": "go", "steps": [
        {"calls": [{"tool": "write_file", "args": {"path": "f.txt", "content": new}}]},
        {"calls": [{"tool": "bash", "args": {"command": "echo proposed > made.txt"}}]},
        {"say": "all done", "expect_seen": ["user changed it before approving"]}
    ]});
    std::fs::write(dir.path().join("s.json"), scenario.to_string()).unwrap();
    let command = format!(
        "cd {root} && env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES XDG_CONFIG_HOME={home}/.config HOME={home} AIRLOCK_HOME={state} TMPDIR={tmp} AIRLOCK_EXIT_STATUS_FILE={status} {bin} --scenario s.json --workspace ws; echo AIRLOCK-ENDED; sleep 60",
        root = dir.path().display(),
        home = dir.path().join("home").display(),
        state = dir.path().join("state").display(),
        tmp = dir.path().join("tmp").display(),
        status = dir.path().join("exit-status").display(),
        bin = env!("CARGO_BIN_EXE_airlock"),
    );
    // The scenario's prompt is sent as the cockpit starts.
    let tmux = Tmux::start("review", 120, 40, &command);
    tmux.wait_until_armed("[hunk 1 of 3: kept]");
    tmux.keys("]");
    tmux.keys("Space");
    let screen = tmux.wait_for("[hunk 2 of 3: DROPPED]");
    assert!(screen.contains("2 of 3 hunks kept"), "{screen}");
    tmux.keys("End");
    tmux.wait_for("lines 5-28 of 28");
    tmux.keys("y");
    tmux.wait_until_armed("wants to run bash");
    tmux.keys("e");
    tmux.wait_for("edit the command");
    tmux.keys("C-u");
    tmux.type_text("echo edited > made.txt");
    tmux.keys("Enter");
    let screen = tmux.wait_until_armed("MODIFIED BY YOU");
    assert!(screen.contains("echo edited > made.txt"), "{screen}");
    tmux.keys("y");
    tmux.wait_for("all done");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/f.txt")).unwrap(),
        old.replace("line 2\n", "LINE 2\n")
            .replace("line 18\n", "LINE 18\n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/made.txt")).unwrap(),
        "edited\n"
    );
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
    assert_the_terminal_is_restored(&tmux);
}

/// `e` on a file change opens it in the person's `$EDITOR` (here a `sed` that changes a word,
/// then one that fails): the screen comes back, the edited change is shown again, marked, and
/// what is written is the edited text; a failing editor changes nothing and the modal says so.
#[test]
fn a_file_change_edited_in_the_editor_is_shown_again_and_written_as_edited() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["home", "state", "tmp", "ws"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    let scenario = serde_json::json!({"name": "edit", "prompt": "go", "steps": [
        {"calls": [{"tool": "write_file", "args": {"path": "new.txt", "content": "proposed words\n"}}]},
        {"calls": [{"tool": "write_file", "args": {"path": "other.txt", "content": "kept\n"}}]},
        {"say": "all done"}
    ]});
    std::fs::write(dir.path().join("s.json"), scenario.to_string()).unwrap();
    // The editor: changes `proposed` to `edited` the first time, fails the second.
    let script = dir.path().join("editor.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ -e {flag} ]; then exit 3; fi\ntouch {flag}\nsed -i s/proposed/edited/ \"$1\"\n",
            flag = dir.path().join("edited-once").display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", script.to_str().unwrap()])
        .status()
        .unwrap();
    let command = format!(
        "cd {root} && env -u AIRLOCK_PROVIDER -u AIRLOCK_MODEL -u AIRLOCK_BASE_URL -u AIRLOCK_MODE -u AIRLOCK_RULES -u VISUAL EDITOR={editor} XDG_CONFIG_HOME={home}/.config HOME={home} AIRLOCK_HOME={state} TMPDIR={tmp} AIRLOCK_EXIT_STATUS_FILE={status} {bin} --scenario s.json --workspace ws; echo AIRLOCK-ENDED; sleep 60",
        root = dir.path().display(),
        editor = script.display(),
        home = dir.path().join("home").display(),
        state = dir.path().join("state").display(),
        tmp = dir.path().join("tmp").display(),
        status = dir.path().join("exit-status").display(),
        bin = env!("CARGO_BIN_EXE_airlock"),
    );
    let tmux = Tmux::start("editor", 120, 40, &command);
    tmux.wait_until_armed("+proposed words");
    tmux.keys("e");
    let screen = tmux.wait_until_armed("MODIFIED BY YOU");
    assert!(screen.contains("+edited words"), "{screen}");
    tmux.keys("y");
    tmux.wait_until_armed("other.txt");
    tmux.keys("e");
    let screen = tmux.wait_for("ended with exit status: 3; nothing changed");
    assert!(screen.contains("+kept"), "{screen}");
    tmux.keys("y");
    tmux.wait_for("all done");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/new.txt")).unwrap(),
        "edited words\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/other.txt")).unwrap(),
        "kept\n"
    );
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
    assert_the_terminal_is_restored(&tmux);
}

/// The sub-agents scenario: the session's agent starts two sub-agents at once; each streams
/// its command's output into the results pane and asks once; the two requests wait in one
/// queue, each naming its agent, and are answered in the order they came; the session's agent
/// then finishes with both answers.
#[test]
fn two_sub_agents_each_ask_once_and_the_parent_finishes_with_both_answers() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_scenario(dir.path(), "subagents", "assets/scenarios/subagents.json");
    // Both ask before either is answered: one on screen, the other behind it in the queue.
    let first = tmux.wait_until_armed("1 of 2 waiting");
    assert!(
        first.contains("a1 (run the tests) · a1-c1 wants to run bash"),
        "{first}"
    );
    assert!(first.contains("[a2] $ for f in *.py"), "{first}");
    assert!(first.contains("(a1 1, a2 1)"), "{first}");
    tmux.keys("y");
    let second = tmux.wait_until_armed("a2 (count the lines of code)");
    assert!(second.contains("the only one waiting"), "{second}");
    tmux.keys("y");
    // Each sub-agent's command streams into the results pane, tagged with its agent.
    tmux.wait_for("Both sub-agents reported back");
    // The turn is over when the status bar no longer says it works.
    let screen = tmux.wait_for_gone("· working");
    for shown in [
        "[a1] $ for part",
        "checking calc",
        "[a2] $ for f in",
        "16 calc.py",
    ] {
        assert!(screen.contains(shown), "{shown}:\n{screen}");
    }
    tmux.keys("F3");
    let list = tmux.wait_for("agents (Enter shows one");
    assert!(
        list.contains("a1     done") && list.contains("a2     done"),
        "{list}"
    );
    tmux.keys("Escape");
    tmux.wait_for_gone("agents (Enter shows one");
    tmux.keys("C-d");
    assert_eq!(wait_for_file(&dir.path().join("exit-status")).trim(), "0");
    assert_the_terminal_is_restored(&tmux);
}

#[test]
fn a_destructive_command_approved_by_mistake_is_undone_from_the_results_pane_and_the_tests_pass_again()
 {
    let dir = tempfile::tempdir().unwrap();
    let tmux = start_scenario(dir.path(), "undo", "assets/scenarios/undo.json");
    tmux.wait_until_armed("+    return a + b");
    tmux.keys("y");
    tmux.wait_until_armed("rm -f calc.py test_calc.py");
    tmux.keys("y");
    let screen = tmux.wait_for("deleted 2");
    assert!(screen.contains("tidied"), "{screen}");
    let workspace = std::fs::read_dir(dir.path().join("tmp/airlock-demo"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the demo's scratch workspace");
    assert!(!workspace.join("calc.py").exists());
    tmux.wait_for_gone("· working");
    // The results pane: the rm run is the newest; u shows what undo would do.
    tmux.keys("Tab");
    tmux.keys("u");
    // The fix the edit made is part of what comes back (a frame may be caught half drawn:
    // each is waited for).
    tmux.wait_for("bring back calc.py");
    tmux.wait_for("+    return a + b");
    // The whole plan is read (G: to its end) before `y` is live.
    tmux.keys("G");
    // `y` is live once the plan was in sight and armed: the title says so.
    let plan = tmux.wait_for("y undo · n keeps");
    assert!(plan.contains("bring back test_calc.py"), "{plan}");
    tmux.keys("y");
    tmux.wait_for("undid c2");
    // The fix is kept, the files are back, and the tests pass again.
    let tests = std::process::Command::new("python3")
        .args(["-m", "unittest"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert!(
        tests.status.success(),
        "{}",
        String::from_utf8_lossy(&tests.stderr)
    );
    tmux.keys("C-c");
    tmux.keys("C-c");
    assert_the_terminal_is_restored(&tmux);
}
