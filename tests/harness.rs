//! The headless cockpit the benchmarks drive (`airlock bench-cockpit`): the real session, agent,
//! tools, state, render and loop against a backend writing to /dev/null, with synthetic keys.
//! These check what it reports, and the loop behaviours the benchmarks rely on: nothing drawn
//! while idle, one frame a second for a silent tool, every key reaching the prompt in a flood.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Bench { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A scenario: one batch of tool calls, then a closing message.
    fn scenario(&self, name: &str, calls: Value) -> String {
        let path = self.path().join(format!("{name}.json"));
        let steps = json!([{ "calls": calls }, { "say": "done" }]);
        let text = json!({ "name": name, "prompt": name, "steps": steps });
        std::fs::write(&path, text.to_string()).unwrap();
        path.display().to_string()
    }

    fn bash(&self, name: &str, commands: &[&str]) -> String {
        let calls: Vec<Value> = commands
            .iter()
            .map(|c| json!({ "tool": "bash", "args": { "command": c } }))
            .collect();
        self.scenario(name, Value::Array(calls))
    }

    fn run(&self, args: &[&str]) -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .arg("bench-cockpit")
            .args(args)
            .args(["--workspace", &self.path().join("ws").display().to_string()])
            .args(["--limit", "120"])
            .env("HOME", self.path().join("home"))
            .env("AIRLOCK_HOME", self.path().join("state"))
            .env_remove("AIRLOCK_PROVIDER")
            .output()
            .expect("the airlock binary runs");
        assert!(
            out.status.success(),
            "bench-cockpit {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one JSON report on stdout")
    }
}

#[test]
fn the_headless_cockpit_sees_a_flood_to_its_last_line_and_draws_the_finished_run() {
    let bench = Bench::new();
    let scenario = bench.bash("flood", &["seq 1 200000"]);
    let report = bench.run(&["flood", "--scenario", &scenario]);
    assert_eq!(report["lines_seen"], json!([200000]));
    assert!(report["frames"].as_u64().unwrap() >= 2, "{report}");
    assert!(report["bytes_written"].as_u64().unwrap() > 0, "{report}");
}

#[test]
fn an_idle_cockpit_draws_nothing_and_writes_nothing() {
    let bench = Bench::new();
    let scenario = bench.bash("nothing", &[]);
    let report = bench.run(&[
        "idle",
        "--idle",
        "prompt",
        "--scenario",
        &scenario,
        "--seconds",
        "1",
    ]);
    assert_eq!(report["frames"], 0, "{report}");
    assert_eq!(report["bytes_written"], 0, "{report}");
}

#[test]
fn finished_output_on_screen_draws_nothing_more() {
    let bench = Bench::new();
    let scenario = bench.bash("output", &["seq 1 1000"]);
    let report = bench.run(&[
        "idle",
        "--idle",
        "output",
        "--scenario",
        &scenario,
        "--seconds",
        "1",
    ]);
    assert_eq!(report["output_lines_on_screen"], 1000);
    assert_eq!(report["frames"], 0, "{report}");
    assert_eq!(report["bytes_written"], 0, "{report}");
}

#[test]
fn a_silent_running_tool_redraws_only_when_its_elapsed_seconds_change() {
    let bench = Bench::new();
    let scenario = bench.bash("silent", &["sleep 600"]);
    let report = bench.run(&[
        "idle",
        "--idle",
        "running",
        "--scenario",
        &scenario,
        "--seconds",
        "2.5",
    ]);
    // Whole seconds tick over two or three times in 2.5 s; a 10 Hz redraw would be 25 frames.
    let frames = report["frames"].as_u64().unwrap();
    assert!((1..=4).contains(&frames), "{report}");
}

#[test]
fn every_key_typed_while_two_tools_flood_reaches_the_prompt() {
    let bench = Bench::new();
    let wide = "x".repeat(300);
    let scenario = bench.bash("keys", &["seq 1 1000000000", &format!("yes {wide}")]);
    let report = bench.run(&[
        "keys",
        "--scenario",
        &scenario,
        "--keys",
        "40",
        "--every-ms",
        "10",
    ]);
    assert_eq!(report["draft_chars"], 40, "{report}");
    assert_eq!(report["key_to_frame_ms"]["count"], 40, "{report}");
    let seen = report["lines_seen"].as_array().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|n| n.as_u64().unwrap() > 0), "{report}");
}

#[test]
fn a_file_write_is_shown_in_the_modal_with_its_diff_before_anything_runs() {
    let bench = Bench::new();
    let old: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(bench.path().join("ws/big.txt"), &old).unwrap();
    let new = old.replace("line 1000\n", "line one thousand\n");
    let scenario = bench.scenario(
        "write",
        json!([{ "tool": "write_file", "args": { "path": "big.txt", "content": new } }]),
    );
    let report = bench.run(&["modal", "--scenario", &scenario]);
    assert!(report["modal_drawn_ms"].as_f64().unwrap() > 0.0, "{report}");
    // Shut down at the modal: the write was denied, the file is as it was.
    assert_eq!(
        std::fs::read_to_string(bench.path().join("ws/big.txt")).unwrap(),
        old
    );
}

#[test]
fn the_first_frame_is_reported_and_a_minimal_app_is_the_floor() {
    let bench = Bench::new();
    let scenario = bench.bash("first", &[]);
    let first = bench.run(&["first-frame", "--scenario", &scenario]);
    assert!(first["first_frame_ms"].as_f64().unwrap() > 0.0, "{first}");
    let minimal = bench.run(&["minimal"]);
    assert!(
        minimal["first_frame_ms"].as_f64().unwrap() > 0.0,
        "{minimal}"
    );
}

#[test]
fn without_a_scratch_state_directory_the_harness_refuses_to_run() {
    let bench = Bench::new();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["bench-cockpit", "minimal"])
        .env("HOME", bench.path().join("home"))
        .env_remove("AIRLOCK_HOME")
        .output()
        .expect("the airlock binary runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("set AIRLOCK_HOME"), "{stderr}");
    assert!(!bench.path().join("home/.local/state/airlock").exists());
}

#[test]
fn the_in_process_diff_measure_reports_the_diff_and_the_modal_it_timed() {
    let bench = Bench::new();
    let old: String = (0..500).map(|i| format!("line {i}\n")).collect();
    let new: String = (0..500)
        .map(|i| {
            if i % 50 == 0 {
                format!("line {i} changed\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    let (old_path, new_path) = (bench.path().join("old.txt"), bench.path().join("new.txt"));
    std::fs::write(&old_path, old).unwrap();
    std::fs::write(&new_path, new).unwrap();
    let report = bench.run(&[
        "diff",
        "--old",
        &old_path.display().to_string(),
        "--new",
        &new_path.display().to_string(),
        "--repeat",
        "3",
    ]);
    assert_eq!(report["old_lines"], 500, "{report}");
    assert_eq!(report["new_lines"], 500, "{report}");
    assert_eq!(report["added"], 10, "{report}");
    assert_eq!(report["removed"], 10, "{report}");
    assert_eq!(report["approximate"], false, "{report}");
    assert_eq!(report["modal_drawn"], true, "{report}");
    for timed in ["diff_ms", "diff_and_modal_frame_ms"] {
        let t = &report[timed];
        assert_eq!(t["count"], 3, "{report}");
        let (median, min) = (t["median"].as_f64().unwrap(), t["min"].as_f64().unwrap());
        assert!(min > 0.0 && min <= median, "{report}");
    }
}

#[test]
fn the_diff_measure_needs_both_files() {
    let bench = Bench::new();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["bench-cockpit", "diff", "--repeat", "1"])
        .env("HOME", bench.path().join("home"))
        .env("AIRLOCK_HOME", bench.path().join("state"))
        .output()
        .expect("the airlock binary runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--old FILE and --new FILE"), "{stderr}");
}

#[test]
fn a_waiting_modal_is_counted_idle_then_answered_from_another_process() {
    let bench = Bench::new();
    let scenario = bench.bash("modal", &["touch answered.txt"]);
    let report = bench.run(&[
        "idle",
        "--idle",
        "modal",
        "--scenario",
        &scenario,
        "--seconds",
        "1",
    ]);
    assert_eq!(report["state"], "modal", "{report}");
    let (start, end) = (
        report["window_start_epoch_s"].as_f64().unwrap(),
        report["window_end_epoch_s"].as_f64().unwrap(),
    );
    // Unix-epoch seconds (after 2020), about the window's length apart.
    assert!(start > 1.6e9 && end > start, "{report}");
    assert!((end - start - report["window_s"].as_f64().unwrap()).abs() < 0.5);
    let switches = &report["context_switches"];
    assert!(switches["total"].is_u64(), "{report}");
    assert!(
        switches["threads_at_end"].as_u64().unwrap() >= 1,
        "{report}"
    );
    assert!(switches["by_thread_name"].is_object(), "{report}");
    assert!(report["cpu_percent_of_a_core"].is_f64(), "{report}");
    // Nothing changes on screen while the modal waits.
    assert_eq!(report["frames"], 0, "{report}");
    let answer = &report["answer"];
    assert!(answer["error"].is_null(), "{report}");
    assert_eq!(answer["approve_exit_code"], 0, "{report}");
    assert!(!answer["code"].as_str().unwrap().is_empty(), "{report}");
    assert_eq!(answer["modal_gone"], true, "{report}");
    assert!(answer["exit_to_modal_gone_ms"].is_f64(), "{report}");
    assert!(
        answer["spawn_to_modal_gone_ms"].as_f64().unwrap() > 0.0,
        "{report}"
    );
}

#[test]
fn an_idle_window_reports_its_wake_ups_and_where_it_lies_in_time() {
    let bench = Bench::new();
    let scenario = bench.bash("quiet", &[]);
    let report = bench.run(&[
        "idle",
        "--idle",
        "prompt",
        "--scenario",
        &scenario,
        "--seconds",
        "1",
    ]);
    assert!(report["context_switches"]["total"].is_u64(), "{report}");
    assert!(report["answer"].is_null(), "{report}");
    let (start, end) = (
        report["window_start_epoch_s"].as_f64().unwrap(),
        report["window_end_epoch_s"].as_f64().unwrap(),
    );
    assert!(start > 1.6e9 && end > start, "{report}");
}
