//! The cost of a checkpoint (`airlock::undo::History`) on a large workspace: 10,000 files in
//! 100 directories, 200 MiB, seeded text. Times the first read (the baseline), a call that
//! changes nothing, a call that rewrites 100 files, and what the store grows by when each call
//! changes one 4 KiB file. `cargo bench --bench checkpoint`; prints a table and saves the numbers
//! to `target/bench-checkpoint.json`.
//!
//! The workspace and state directories are built under `target/bench-worlds/checkpoint` (not
//! /tmp, often a small tmpfs) and removed at the end (`CHECKPOINT_KEEP=1` keeps them).
//! `CHECKPOINT_SAMPLES=n` sets the samples of each timed step (default 40). The workspace was
//! just written, so it is in the page cache: the times are the scan's, not a cold disk's.

#![allow(clippy::expect_used)]

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use airlock::protocol::{ChangeCount, WorkspaceHistory};
use airlock::undo::History;

const FILES: usize = 10_000;
const DIRS: usize = 100;
const LARGE: usize = 300;
const TOTAL: u64 = 200 << 20;
const CHANGED: usize = 100;
const STORAGE_CALLS: usize = 50;
const ONE_FILE: usize = 4096;
const SESSION: &str = "bench";

/// xorshift64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// `size` bytes of text from `seed`: lowercase words, a newline every fifty bytes or so.
fn text(seed: u64, size: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(size + 8);
    while out.len() < size {
        let r = rng.next();
        for k in 0..8 {
            let b = (r >> (k * 8)) as u8;
            out.push(match b {
                0..=39 => b' ',
                40..=44 => b'\n',
                _ => b'a' + b % 26,
            });
        }
    }
    out.truncate(size);
    out
}

/// The workspace: file `i` is `d{i % 100}/f{i}.txt`.
struct World {
    root: PathBuf,
    sizes: Vec<usize>,
    small: Vec<usize>,
    generation: u64,
}

impl World {
    fn build(root: &Path) -> World {
        let mut rng = Rng::new(42);
        let mut large = vec![false; FILES];
        for k in 0..LARGE {
            large[k * FILES / LARGE] = true;
        }
        let mut sizes = vec![0usize; FILES];
        let mut small_total = 0u64;
        for i in (0..FILES).filter(|&i| !large[i]) {
            sizes[i] = 1024 + (rng.next() % (7 * 1024 + 1)) as usize;
            small_total += sizes[i] as u64;
        }
        // The rest of the 200 MiB over the large files, by weights 1 to 8 (about 150 KiB to 1 MiB).
        let weights: Vec<u64> = (0..LARGE).map(|_| 1 + rng.next() % 8).collect();
        let (rest, sum) = (TOTAL - small_total, weights.iter().sum::<u64>());
        let mut given = 0u64;
        for (k, i) in (0..FILES).filter(|&i| large[i]).enumerate() {
            let size = if k + 1 == LARGE {
                rest - given
            } else {
                rest * weights[k] / sum
            };
            sizes[i] = size as usize;
            given += size;
        }
        for d in 0..DIRS {
            fs::create_dir_all(root.join(format!("d{d:03}"))).expect("create a directory");
        }
        let small = (0..FILES).filter(|&i| !large[i]).collect();
        let world = World {
            root: root.to_path_buf(),
            sizes,
            small,
            generation: 0,
        };
        for i in 0..FILES {
            fs::write(world.path(i), text(i as u64, world.sizes[i])).expect("write a file");
        }
        world
    }

    fn path(&self, i: usize) -> PathBuf {
        self.root.join(format!("d{:03}/f{i:05}.txt", i % DIRS))
    }

    /// Rewrites file `i` with new content of `size` bytes (its own size when `None`).
    fn rewrite(&mut self, i: usize, size: Option<usize>) {
        self.generation += 1;
        let seed = ((i as u64) << 32) ^ self.generation;
        fs::write(self.path(i), text(seed, size.unwrap_or(self.sizes[i]))).expect("rewrite");
    }

    /// The `n` small files of sample `s`, spread over the directories; another set each sample.
    fn picks(&self, s: usize, n: usize) -> Vec<usize> {
        let stride = self.small.len() / n;
        (0..n)
            .map(|k| self.small[(k * stride + s) % self.small.len()])
            .collect()
    }
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Median, p90 and max of `samples` (milliseconds).
fn stats(samples: &[f64]) -> Value {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = (v[(n - 1) / 2] + v[n / 2]) / 2.0;
    let p90 = v[((n * 9).div_ceil(10)).max(1) - 1];
    json!({ "n": n, "median_ms": median, "p90_ms": p90, "max_ms": v[n - 1] })
}

/// The table's rows: a label and where its numbers are in the JSON.
const ROWS: &str = "\
baseline: first before, fresh state dir|/baseline_before
nothing changed: before|/nothing_changed/before
nothing changed: after|/nothing_changed/after
nothing changed: before + after|/nothing_changed/pair
100 files changed in the call: after|/changed_100/after
100 files changed: the next before|/changed_100/before_after_a_changing_call
100 files changed outside a call: before|/changed_100/before_100_changed_outside_a_call
(writing the 100 files, not the history's)|/changed_100/writing_the_100_files
1 file (4 KiB) changed: before+edit+after, other files|/storage/different_file/call_ms
1 file (4 KiB) changed: before+edit+after, same file|/storage/same_file/call_ms";

fn row(name: &str, s: &Value) {
    let [median, p90, max] =
        ["median_ms", "p90_ms", "max_ms"].map(|k| s[k].as_f64().unwrap_or(0.0));
    let n = s["n"].as_u64().unwrap_or(0);
    println!("{name:<58} {n:>4} {median:>10.2} {p90:>10.2} {max:>10.2}");
}

/// Bytes under `dir`: (files, apparent bytes, allocated bytes).
fn bytes_under(dir: &Path) -> (u64, u64, u64) {
    let (mut files, mut len, mut blocks) = (0, 0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                files += 1;
                len += meta.len();
                blocks += meta.blocks() * 512;
            }
        }
    }
    (files, len, blocks)
}

fn store_bytes(state: &Path) -> Value {
    let (files, bytes, allocated) = bytes_under(&state.join("undo").join("objects"));
    let session = state.join("undo").join(SESSION);
    let (_, session_bytes, _) = bytes_under(&session);
    let index = fs::metadata(session.join("index.json")).map_or(0, |m| m.len());
    let records = fs::metadata(session.join("records.jsonl")).map_or(0, |m| m.len());
    json!({
        "objects": files, "objects_bytes": bytes, "objects_allocated_bytes": allocated,
        "session_bytes": session_bytes, "index_json_bytes": index, "records_jsonl_bytes": records,
    })
}

/// Writes back what is dirty, so that no step is timed while an earlier one's writes go out.
fn sync() {
    let _ = std::process::Command::new("sync").status();
}

fn call(history: &History, id: &str) -> (f64, f64, ChangeCount) {
    let t = Instant::now();
    history.before(id, "$ bench").expect("before");
    let (before, t) = (ms(t), Instant::now());
    let count = history.after(id).expect("after");
    (before, ms(t), count)
}

fn diff(a: &Value, b: &Value, key: &str) -> i64 {
    b[key].as_i64().unwrap_or(0) - a[key].as_i64().unwrap_or(0)
}

/// What `calls` calls, each changing one 4 KiB file (`same`: the same one every time), add.
fn storage_run(world: &mut World, history: &History, state: &Path, same: bool, tag: &str) -> Value {
    let files = world.picks(7, STORAGE_CALLS);
    let start = store_bytes(state);
    let mut pair = Vec::new();
    for (k, &i) in files.iter().enumerate() {
        let i = if same { files[0] } else { i };
        let id = format!("{tag}-{k}");
        let t = Instant::now();
        history.before(&id, "$ edit").expect("before");
        world.rewrite(i, Some(ONE_FILE));
        let count = history.after(&id).expect("after");
        pair.push(ms(t));
        assert_eq!(count.modified, 1, "each call changes one file");
    }
    let end = store_bytes(state);
    let calls = STORAGE_CALLS as f64;
    json!({
        "calls": STORAGE_CALLS, "bytes_changed_per_call": ONE_FILE,
        "objects_bytes_added_per_call": diff(&start, &end, "objects_bytes") as f64 / calls,
        "objects_allocated_added_per_call": diff(&start, &end, "objects_allocated_bytes") as f64 / calls,
        "session_bytes_added_per_call": diff(&start, &end, "session_bytes") as f64 / calls,
        "call_ms": stats(&pair), "after": end,
    })
}

fn main() {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let base = target.join("bench-worlds").join("checkpoint");
    let _ = fs::remove_dir_all(&base);
    let samples = std::env::var("CHECKPOINT_SAMPLES").map_or(40, |s| s.parse().unwrap_or(40));
    let samples = samples.max(2);

    let t = Instant::now();
    let mut world = World::build(&base.join("workspace"));
    let (files, bytes, _) = bytes_under(&world.root);
    println!(
        "workspace: {files} files in {DIRS} directories, {:.1} MiB, written in {:.0} ms ({})",
        bytes as f64 / (1 << 20) as f64,
        ms(t),
        world.root.display()
    );

    // a. The baseline: the first read on a fresh state directory keeps every content.
    let mut baseline = Vec::new();
    let mut kept = None;
    for k in 0..3 {
        let state = base.join(format!("state-{k}"));
        let history = History::open(&state, SESSION, &world.root).expect("open");
        sync();
        let t = Instant::now();
        history.before("c0", "baseline").expect("baseline");
        baseline.push(ms(t));
        history.after("c0").expect("after the baseline");
        if k < 2 {
            drop(history);
            let _ = fs::remove_dir_all(&state);
        } else {
            kept = Some((history, state));
        }
    }
    let (history, state) = kept.expect("the last baseline is kept");
    let baseline_store = store_bytes(&state);
    sync();

    // b. A call that changes nothing.
    let (mut nb, mut na, mut np) = (Vec::new(), Vec::new(), Vec::new());
    for s in 0..samples + 3 {
        let (b, a, count) = call(&history, &format!("n{s}"));
        assert_eq!(count, ChangeCount::default(), "nothing changed");
        if s >= 3 {
            nb.push(b);
            na.push(a);
            np.push(b + a);
        }
    }

    // c. A call that rewrites 100 small files; then 100 files changed outside any call.
    let (mut cb, mut cw, mut ca, mut cp) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for s in 0..samples + 1 {
        let id = format!("m{s}");
        let t = Instant::now();
        history.before(&id, "$ sed -i").expect("before");
        // The first sample's `before` follows a call that changed nothing; the others follow one
        // that changed 100 files.
        if s > 0 {
            cb.push(ms(t));
        }
        let t = Instant::now();
        for i in world.picks(s, CHANGED) {
            world.rewrite(i, None);
        }
        cw.push(ms(t));
        let t = Instant::now();
        let count = history.after(&id).expect("after");
        ca.push(ms(t));
        assert_eq!(count.modified, CHANGED, "the call changed 100 files");
    }
    for s in 0..samples {
        for i in world.picks(samples + 1 + s, CHANGED) {
            world.rewrite(i, None);
        }
        cp.push(call(&history, &format!("o{s}")).0);
    }
    drop(history);

    // 3. Storage: a fresh state directory, then 50 calls changing one 4 KiB file each.
    let state2 = base.join("state-storage");
    let history = History::open(&state2, SESSION, &world.root).expect("open");
    history.before("s0", "baseline").expect("baseline");
    history.after("s0").expect("after the baseline");
    let storage_baseline = store_bytes(&state2);
    sync();
    let different = storage_run(&mut world, &history, &state2, false, "sd");
    let same = storage_run(&mut world, &history, &state2, true, "ss");
    drop(history);

    let results = json!({
        "workspace": { "files": files, "dirs": DIRS, "bytes": bytes },
        "baseline_before": stats(&baseline),
        "baseline_store": baseline_store,
        "nothing_changed": { "before": stats(&nb), "after": stats(&na), "pair": stats(&np) },
        "changed_100": {
            "before_after_a_changing_call": stats(&cb),
            "writing_the_100_files": stats(&cw),
            "after": stats(&ca),
            "before_100_changed_outside_a_call": stats(&cp),
        },
        "storage": { "baseline": storage_baseline, "different_file": different,
                     "same_file": same },
    });

    println!(
        "\n{:<58} {:>4} {:>10} {:>10} {:>10}",
        "checkpoint step", "n", "median ms", "p90 ms", "max ms"
    );
    for (name, pointer) in ROWS.lines().filter_map(|l| l.split_once('|')) {
        row(name, &results.pointer(pointer).cloned().unwrap_or_default());
    }

    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mib = |v: &Value| num(v) / (1 << 20) as f64;
    println!("\nstorage (objects: the content store; session: index.json, records.jsonl, ...)");
    println!(
        "  after the baseline: {} objects, {:.1} MiB ({:.1} MiB allocated); session {:.2} MiB (index.json {:.2} MiB)",
        storage_baseline["objects"],
        mib(&storage_baseline["objects_bytes"]),
        mib(&storage_baseline["objects_allocated_bytes"]),
        mib(&storage_baseline["session_bytes"]),
        mib(&storage_baseline["index_json_bytes"])
    );
    for (name, run) in [
        ("a different file each call", &different),
        ("the same file each call", &same),
    ] {
        println!(
            "  {STORAGE_CALLS} calls, {name}: {} objects, {:.1} MiB; per call: {} bytes changed, {:.0} added to objects ({:.0} allocated), {:.0} to the session",
            run["after"]["objects"],
            mib(&run["after"]["objects_bytes"]),
            ONE_FILE,
            num(&run["objects_bytes_added_per_call"]),
            num(&run["objects_allocated_added_per_call"]),
            num(&run["session_bytes_added_per_call"])
        );
    }

    let out = target.join("bench-checkpoint.json");
    match serde_json::to_string_pretty(&results).map(|text| fs::write(&out, text)) {
        Ok(Ok(())) => println!("\nsaved {}", out.display()),
        _ => eprintln!("could not save {}", out.display()),
    }
    if std::env::var_os("CHECKPOINT_KEEP").is_none() {
        let _ = fs::remove_dir_all(&base);
    }
}
