//! In-process benchmarks (criterion): the diff the approval modal shows, the frames the cockpit
//! draws, how tool output is taken in, freezing a large call, and the sandbox's plan (the walk
//! every session's first command waits for). `cargo bench`; the
//! whole-process scenarios are in `scripts/bench.sh` (see BENCHMARKS.md). S4 times the diff and
//! the modal frame with the release build alone (`airlock bench-cockpit diff`), on the same
//! request as here.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use airlock::facts::diff;
use airlock::output::BoundedOutput;
use airlock::protocol::{AgentEvent, ApprovalRequest, FrozenCall, Stream};
use airlock::ui::app::{App, Status};
use airlock::ui::render;

const LINES: usize = 50_000;

fn old_file() -> String {
    (0..LINES)
        .map(|i| format!("line {i}: the quick brown fox jumps over the lazy dog\n"))
        .collect()
}

/// One line in fifty changed.
fn some_changed() -> String {
    (0..LINES)
        .map(|i| {
            if i % 50 == 0 {
                format!("line {i}: the quick brown fox JUMPED over the lazy dog\n")
            } else {
                format!("line {i}: the quick brown fox jumps over the lazy dog\n")
            }
        })
        .collect()
}

fn every_changed() -> String {
    (0..LINES)
        .map(|i| format!("row {}: a completely different text {}\n", i * 7, i % 13))
        .collect()
}

/// The request the gate makes for that write, as `airlock bench-cockpit diff` (S4) builds it.
fn write_request(old: &str, new: &str) -> ApprovalRequest {
    airlock::cli::bench::write_request(old, new)
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, 40)).expect("a test backend always starts")
}

fn diffs(c: &mut Criterion) {
    let old = old_file();
    let (some, every) = (some_changed(), every_changed());
    let mut group = c.benchmark_group("diff");
    group.sample_size(20);
    group.bench_function("50k lines, 1 in 50 changed", |b| {
        b.iter(|| diff::unified("big.txt", black_box(&old), black_box(&some)))
    });
    group.bench_function("50k lines, every line changed", |b| {
        b.iter(|| diff::unified("big.txt", black_box(&old), black_box(&every)))
    });
    // What S4 compares with `git diff --no-index`: the diff and the modal frame that shows it.
    group.bench_function("50k lines, 1 in 50 changed, diff and modal frame", |b| {
        let mut terminal = terminal();
        b.iter(|| {
            let request = write_request(&old, &some);
            let mut app = App::new(Status::default(), Instant::now());
            app.on_agent_event(AgentEvent::ApprovalRequested {
                request: Box::new(request),
            });
            terminal
                .draw(|frame| {
                    render::render(&app, frame);
                })
                .expect("drawing to a test backend cannot fail");
        })
    });
    group.finish();
}

fn frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    // The modal over a 50k-line diff, scrolled to its middle: only the window is styled.
    let old = old_file();
    let mut app = App::new(Status::default(), Instant::now());
    app.on_agent_event(AgentEvent::ApprovalRequested {
        request: Box::new(write_request(&old, &some_changed())),
    });
    let mut terminal = terminal();
    group.bench_function("approval modal, 50k-line diff", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| {
                    render::render(black_box(&app), frame);
                })
                .is_ok()
        })
    });
    // Two runs with full head and tail windows (one with 300-character lines), as in S2.
    let mut app = App::new(Status::default(), Instant::now());
    for (id, line) in [("c1", "12345678".to_string()), ("c2", "x".repeat(300))] {
        app.on_agent_event(AgentEvent::ToolStarted {
            call_id: id.into(),
            tool: "bash".into(),
            title: format!("$ flood {id}"),
        });
        let chunk = format!("{line}\n").repeat(2_000);
        for _ in 0..10 {
            app.on_agent_event(AgentEvent::ToolOutput {
                call_id: id.into(),
                stream: Stream::Stdout,
                text: chunk.clone(),
                skipped: 0,
            });
        }
    }
    group.bench_function("two flooding runs", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| {
                    render::render(black_box(&app), frame);
                })
                .is_ok()
        })
    });
    // A long session: 500 turns of prose to wrap, each with a tool line; only the last screen
    // of it is visible.
    let mut app = App::new(Status::default(), Instant::now());
    let prose = "The tests fail because add() subtracts; the workspace holds one module, and \
                 nothing outside it is read. "
        .repeat(12);
    for turn in 0..500u64 {
        app.on_agent_event(AgentEvent::TurnStarted {
            turn,
            prompt: format!("Question {turn}: why do the tests fail?"),
        });
        app.on_agent_event(AgentEvent::TextDelta {
            text: prose.clone(),
        });
        app.on_agent_event(AgentEvent::ToolStarted {
            call_id: format!("c{turn}"),
            tool: "bash".into(),
            title: "$ python -m unittest".into(),
        });
    }
    group.bench_function("conversation of 500 long turns", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| {
                    render::render(black_box(&app), frame);
                })
                .is_ok()
        })
    });
    group.finish();
}

fn ingestion(c: &mut Criterion) {
    let mut group = c.benchmark_group("ingest");
    // 64 KiB reads, as the bash tool makes them: short lines (seq) and 300-character lines.
    for (name, line) in [
        ("seq-like lines", "1234567".to_string()),
        ("300-char lines", "y".repeat(300)),
    ] {
        let read = format!("{line}\n").repeat(64 * 1024 / (line.len() + 1));
        let reads = 64;
        group.throughput(Throughput::Bytes((read.len() * reads) as u64));
        group.bench_function(format!("bounded output, 64 KiB reads, {name}"), |b| {
            b.iter(|| {
                let mut out = BoundedOutput::new();
                for _ in 0..reads {
                    out.push(Stream::Stdout, black_box(read.as_bytes()));
                }
                out
            })
        });
        group.bench_function(
            format!("cockpit state, 64 KiB output events, {name}"),
            |b| {
                let mut app = App::new(Status::default(), Instant::now());
                app.on_agent_event(AgentEvent::ToolStarted {
                    call_id: "c1".into(),
                    tool: "bash".into(),
                    title: "$ flood".into(),
                });
                b.iter(|| {
                    for _ in 0..reads {
                        app.on_agent_event(AgentEvent::ToolOutput {
                            call_id: "c1".into(),
                            stream: Stream::Stdout,
                            text: read.clone(),
                            skipped: 0,
                        });
                    }
                })
            },
        );
    }
    group.finish();
}

fn freezing(c: &mut Criterion) {
    let mut group = c.benchmark_group("freeze");
    let args = json!({"path": "big.txt", "content": some_changed()});
    group.throughput(Throughput::Bytes(
        args["content"].as_str().map_or(0, str::len) as u64,
    ));
    group.bench_function("write_file of a 50k-line file", |b| {
        b.iter(|| FrozenCall::freeze("write_file", black_box(&args)))
    });
    group.finish();
}

/// The sandbox's plan for `workspace-write` on this machine, with a workspace in the system temp
/// dir beside the state dir (as a trial or `scripts/bench.py` has it): the walk of `/`, `/etc`,
/// `/tmp` and the homes, every entry judged by name.
fn sandbox_plan(c: &mut Criterion) {
    use airlock::facts::paths::PathContext;
    use airlock::sandbox::{Profile, plan::Plan};
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let (ws, state, own) = (
        dir.path().join("ws"),
        dir.path().join("state"),
        dir.path().join("own"),
    );
    for d in [&ws, &state, &own] {
        let _ = std::fs::create_dir_all(d);
    }
    let home = std::env::var_os("HOME").map_or_else(|| "/root".into(), std::path::PathBuf::from);
    let Ok(ctx) = PathContext::new(&ws, &home, &state) else {
        return;
    };
    c.bench_function("sandbox plan, workspace-write", |b| {
        b.iter(|| Plan::make(black_box(&ctx), Profile::WorkspaceWrite, || Ok(own.clone())))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = diffs, frames, ingestion, freezing, sandbox_plan
}
criterion_main!(benches);
