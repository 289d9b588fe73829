//! What the measures read off the process and report: times, CPU, memory, context switches,
//! and the spreads of samples.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

pub(super) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// CPU time of the whole process (every thread), from the kernel.
pub(super) fn cpu_time() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// A field of /proc/self/status in KiB (VmRSS, VmHWM).
pub(super) fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

pub(super) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

pub(super) fn spread(mut values: Vec<f64>) -> Value {
    values.sort_by(f64::total_cmp);
    json!({
        "count": values.len(),
        "p50": percentile(&values, 50.0),
        "p90": percentile(&values, 90.0),
        "p99": percentile(&values, 99.0),
        "max": values.last().copied().unwrap_or(0.0),
    })
}

/// The context switches of each thread of this process so far (voluntary + involuntary, from
/// `/proc/self/task/*/status`), with the thread's name. Every switch is a wake-up: a thread
/// that blocks and is woken again counts one voluntary switch, one preempted counts one
/// involuntary switch.
pub(super) fn switches() -> BTreeMap<u32, (String, u64)> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        let mut name = String::new();
        let mut count = 0;
        for line in status.lines() {
            if let Some(n) = line.strip_prefix("Name:") {
                name = n.trim().to_string();
            } else if line.starts_with("voluntary_ctxt_switches:")
                || line.starts_with("nonvoluntary_ctxt_switches:")
            {
                count += line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        out.insert(tid, (name, count));
    }
    out
}

/// The context switches between two `switches()` readings: the sum over the threads alive at
/// the end (a thread started in between counts from zero), per thread name, and how many
/// threads ended in between (their switches are lost with them).
pub(super) fn switches_between(
    before: &BTreeMap<u32, (String, u64)>,
    after: &BTreeMap<u32, (String, u64)>,
) -> Value {
    let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0;
    for (tid, (name, count)) in after {
        let was = before.get(tid).map_or(0, |(_, c)| *c);
        let delta = count.saturating_sub(was);
        total += delta;
        *by_name.entry(name.clone()).or_default() += delta;
    }
    let ended = before.keys().filter(|t| !after.contains_key(t)).count();
    let started = after.keys().filter(|t| !before.contains_key(t)).count();
    json!({
        "total": total,
        "by_thread_name": by_name,
        "threads_at_end": after.len(),
        "threads_started": started,
        "threads_ended": ended,
    })
}

/// Now, as seconds since the Unix epoch (to match strace -ttt's timestamps).
pub(super) fn epoch_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The median and the least of some times (milliseconds).
pub(super) fn median_min(mut values: Vec<f64>) -> Value {
    values.sort_by(f64::total_cmp);
    let median = match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    json!({
        "median": median,
        "min": values.first().copied().unwrap_or(0.0),
        "count": values.len(),
    })
}
