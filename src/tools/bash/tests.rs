use std::sync::{Arc, Mutex};

use super::*;
use crate::output::BoundedOutput;
use reading::{Buffer, FILE_BATCH, PIPE_BYTES};

fn spec(command: &str, dir: &std::path::Path, timeout: Duration, sink: OutputSink) -> BashRun {
    BashRun {
        command: command.into(),
        workspace: dir.to_path_buf(),
        timeout,
        cancel: CancellationToken::new(),
        sink,
        log: Some(dir.join("run.log")),
        log_limits: LogLimits::DEFAULT,
        hidden_env: Vec::new(),
        note: None,
        sandbox: None,
    }
}

/// A sink that sends each piece's text on a channel, as it is delivered.
fn sink_to_channel() -> (OutputSink, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let sink = OutputSink::new(move |_, piece| {
        let _ = tx.send(String::from_utf8_lossy(piece.text).into_owned());
    });
    (sink, rx)
}

#[test]
fn output_filed_in_batches_from_thinned_pieces_reads_exactly_as_every_byte_filed_read_by_read() {
    let mut reads: Vec<(Stream, Vec<u8>)> = Vec::new();
    for i in 0..3000u32 {
        let stream = if i % 7 == 0 {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        // Reads that end mid-line, some bigger than a batch, streams interleaved.
        let text = format!("line {i} {}\npart of {i}", "x".repeat((i % 13) as usize));
        reads.push((stream, text.into_bytes()));
        if i % 500 == 0 {
            reads.push((Stream::Stdout, "y\n".repeat(FILE_BATCH).into_bytes()));
        }
        // A flood read in small reads of a few hundred lines each: pieces that skip lines
        // while the kept part of earlier reads still waits unfiled.
        if i % 700 == 3 {
            for k in 0..50u32 {
                let lines: String = (0..300 + k * 7).map(|n| format!("{k}.{n}\n")).collect();
                reads.push((Stream::Stdout, lines.into_bytes()));
            }
        }
    }
    let mut direct = BoundedOutput::new();
    let mut batched = Batched::new();
    let mut thinner = crate::output::Thinner::new();
    for (stream, bytes) in &reads {
        direct.push(*stream, bytes);
        for piece in thinner.thin(bytes) {
            batched.push(*stream, piece);
        }
    }
    direct.finish();
    let batched = batched.finish();
    assert_eq!(batched.render(), direct.render());
    assert_eq!(batched.total_lines(), direct.total_lines());
    assert_eq!(batched.omitted_lines(), direct.omitted_lines());
}

#[test]
fn an_output_pipe_is_widened_to_a_mebibyte_where_the_system_allows_it() {
    let (read, _write) = nix::unistd::pipe().unwrap();
    let before = nix::fcntl::fcntl(&read, nix::fcntl::FcntlArg::F_GETPIPE_SZ).unwrap();
    let allowed: i32 = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(before);
    let after = widen(&read).unwrap();
    assert_eq!(after, allowed.min(PIPE_BYTES).max(before));
}

#[test]
fn a_read_buffer_given_back_is_handed_out_again_instead_of_a_new_one() {
    // A size no run uses, so other tests cannot take it in between.
    let first = Buffer::take(4321);
    let address = first.as_ptr();
    drop(first);
    let again = Buffer::take(4321);
    assert_eq!(again.as_ptr(), address);
    assert_eq!(again.len(), 4321);
}

#[test]
fn a_character_split_across_reads_waits_for_its_last_byte() {
    let e = "é".as_bytes();
    assert_eq!(utf8_ready(&[b'a', e[0]]), 1);
    assert_eq!(utf8_ready(&[b'a', e[0], e[1]]), 3);
    assert_eq!(utf8_ready(&[b'a', 0xff]), 2);
    let crab = "🦀".as_bytes();
    assert_eq!(utf8_ready(&[b'a', crab[0], crab[1], crab[2]]), 1);
    assert_eq!(utf8_ready(crab), 4);
    assert_eq!(utf8_ready(&[]), 0);
}

#[test]
fn an_invalid_byte_early_in_a_batch_does_not_let_a_split_character_at_its_end_through() {
    let e = "é".as_bytes();
    let mut batch = vec![b'x', 0xff, b'y'];
    batch.push(e[0]);
    assert_eq!(utf8_ready(&batch), 3);
}

#[tokio::test]
async fn output_streams_while_the_command_is_still_running() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, mut rx) = sink_to_channel();
    // The command waits for a file the test creates only after it has seen the first line:
    // if output were held until the end, this would time out instead.
    let run = tokio::spawn(run(spec(
        "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second",
        dir.path(),
        Duration::from_secs(20),
        sink,
    )));
    let first = rx.recv().await.unwrap();
    assert_eq!(first, "first\n");
    std::fs::write(dir.path().join("go"), "").unwrap();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.status, ToolStatus::Ok);
    assert_eq!(outcome.content, "exit code 0\nfirst\nsecond\n");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("run.log")).unwrap(),
        "first\nsecond\n"
    );
}

#[tokio::test]
async fn output_held_back_to_pace_a_flood_still_reaches_the_viewer_while_the_command_waits() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, mut rx) = sink_to_channel();
    // Past the head, the second burst comes a moment after the first went out, so it is held
    // for pacing: it must go out on the pace's timer, not when the command ends.
    let run = tokio::spawn(run(spec(
        "seq 1 300; sleep 0.002; seq 301 310; echo marker; \
         while [ ! -e go ]; do sleep 0.01; done; echo done",
        dir.path(),
        Duration::from_secs(20),
        sink,
    )));
    let mut seen = String::new();
    while !seen.contains("marker\n") {
        seen.push_str(&rx.recv().await.unwrap());
    }
    std::fs::write(dir.path().join("go"), "").unwrap();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.status, ToolStatus::Ok);
    while let Ok(more) = rx.try_recv() {
        seen.push_str(&more);
    }
    assert!(seen.ends_with("marker\ndone\n"), "{seen}");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink_seen = seen.clone();
    let sink = OutputSink::new(move |_, piece| {
        sink_seen
            .lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(piece.text));
    });
    let outcome = run(spec(
        "sleep 300 & echo $! > child.pid; wait",
        dir.path(),
        Duration::from_millis(300),
        sink,
    ))
    .await
    .unwrap();
    assert_eq!(outcome.status, ToolStatus::TimedOut);
    assert!(
        outcome.content.starts_with("timed out after 0s"),
        "{}",
        outcome.content
    );
    let pid = std::fs::read_to_string(dir.path().join("child.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let gone = || {
        std::fs::read_to_string(&stat)
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !gone() {
        assert!(
            std::time::Instant::now() < deadline,
            "the background child outlived the timeout"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_flood_fills_the_log_only_to_its_cap_and_the_result_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let sink = OutputSink::discard();
    let mut run_spec = spec(
        "yes | head -c 5000000",
        dir.path(),
        Duration::from_secs(60),
        sink,
    );
    run_spec.log_limits = LogLimits {
        head: 64 * 1024,
        tail: 16 * 1024,
    };
    let outcome = run(run_spec).await.unwrap();
    let log = std::fs::read(dir.path().join("run.log")).unwrap();
    assert!(
        log.len() < 100 * 1024,
        "the log grew to {} bytes",
        log.len()
    );
    let text = String::from_utf8(log).unwrap();
    let left_out = 5_000_000 - 64 * 1024 - 16 * 1024;
    assert!(
        text.contains(&format!(
            "[airlock: {left_out} bytes of output were left out"
        )),
        "{}",
        &text[64 * 1024..64 * 1024 + 200]
    );
    assert!(text.ends_with("y\ny\n"));
    assert!(
        outcome.content.contains(&format!(
            "it keeps the first 64 KiB and the last 16 KiB of the output, {left_out} bytes between them were left out"
        )),
        "{}",
        outcome.content
    );
}

#[tokio::test]
async fn a_command_never_sees_a_hidden_variable_the_config_names() {
    let dir = tempfile::tempdir().unwrap();
    let sink = OutputSink::discard();
    let mut run_spec = spec(
        "echo \"[${HOME:+home}] [${PATH:+path}] [${AIRLOCK_TEST_HIDDEN-unset}]\"",
        dir.path(),
        Duration::from_secs(20),
        sink,
    );
    run_spec.hidden_env = vec!["HOME".into()];
    let outcome = run(run_spec).await.unwrap();
    assert_eq!(outcome.content, "exit code 0\n[] [path] [unset]\n");
}

#[tokio::test]
async fn a_shell_that_exits_leaving_a_child_on_its_pipe_ends_after_the_grace_not_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // The background `sleep` keeps stdout open after the shell exits: the reader must be
    // stopped when the drain grace runs out, and the group killed.
    let outcome = run(spec(
        "sleep 30 & echo started",
        dir.path(),
        Duration::from_secs(20),
        OutputSink::discard(),
    ))
    .await
    .unwrap();
    assert_eq!(outcome.status, ToolStatus::Ok);
    assert_eq!(outcome.content, "exit code 0\nstarted\n");
}

#[tokio::test]
async fn output_held_for_pacing_goes_out_when_the_pipes_end_even_if_the_shell_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, mut rx) = sink_to_channel();
    // The shell closes its output and waits: the last lines must reach the viewer now, not
    // when the shell ends.
    let run = tokio::spawn(run(spec(
        "seq 1 50000; exec >&- 2>&-; while [ ! -e go ]; do sleep 0.01; done",
        dir.path(),
        Duration::from_secs(20),
        sink,
    )));
    let mut seen = String::new();
    while !seen.ends_with("\n50000\n") {
        let piece = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await;
        seen.push_str(&piece.expect("the last lines never came").unwrap());
    }
    std::fs::write(dir.path().join("go"), "").unwrap();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.status, ToolStatus::Ok);
}

/// The nice values of this process's threads named `name`.
fn nice_of_threads(name: &str) -> Vec<i64> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // Field 19 (nice), counted after the `)` that ends the thread's name.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after.split(' ').collect();
        found.push(fields[16].parse().unwrap());
    }
    found
}

#[tokio::test]
async fn a_commands_output_is_read_on_a_thread_of_its_own_below_the_cockpits_priority() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, mut rx) = sink_to_channel();
    let run = tokio::spawn(run(spec(
        "echo reading; while [ ! -e go ]; do sleep 0.01; done",
        dir.path(),
        Duration::from_secs(20),
        sink,
    )));
    assert_eq!(rx.recv().await.unwrap(), "reading\n");
    let nice = nice_of_threads("airlock-pump");
    assert!(!nice.is_empty(), "no pump thread while the command runs");
    assert!(
        nice.iter().all(|n| *n == i64::from(pump::PUMP_NICE)),
        "{nice:?}"
    );
    // The runtime's own threads keep their priority.
    let own = nice_of_threads("tokio-runtime-w");
    assert!(own.iter().all(|n| *n == 0), "{own:?}");
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_eq!(run.await.unwrap().unwrap().status, ToolStatus::Ok);
}
