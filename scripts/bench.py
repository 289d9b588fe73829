#!/usr/bin/env python3
"""Whole-process benchmarks: each scenario runs its arm and its floor interleaved (A B A B ...),
reports medians and the ratio, and writes one JSON per scenario to target/bench/.

Run through scripts/bench.sh (it builds the release binary first). BENCH_ROUNDS sets the rounds.
BENCH_BASELINE=/path/to/another/airlock adds that build's cockpit and exec arms to S1 and S3
(and its denied and parked arms to S8), interleaved with the rest, so two builds are compared
under the same load. BENCH_AIRLOCK=/path/to/airlock runs every scenario on that build instead of
target/release/airlock (for scenarios without a baseline arm: run the two builds in turn).
BENCH_WRITE_MB sets the size of S8's write (100 by default). BENCH_BUSY=N
keeps N cores busy (`yes > /dev/null`) for the whole run: S1's goal is stated for a machine that is
doing something else too (load about 1.5 on two cores with BENCH_BUSY=1).

Every scenario needs only the release build (target/release/airlock), python3, git, GNU time and
(for S11) strace. `scripts/bench.py` with no arguments runs them all:

S1  10M lines of tool output: the cockpit and `airlock exec` against `seq | cat`.
S2  keys typed while two tools flood: key -> frame latency.
S3  8 parallel `sleep 1` calls from one model turn (every sample <= 1.10 s), and 64 parallel
    `sleep 1` calls (every sample <= 1.20 s); cockpit and `airlock exec`, interleaved with one
    `sleep 1`. Beside the 64-call arms, two floors that run no airlock at all, started by one
    bash loop: 64 `bash -c 'sleep 1'` bare, and the same each in namespaces of its own made by
    util-linux `unshare` (user, PID with a fork, mount, network: what the sandbox makes per
    command, without Landlock, covers or a launcher), so what the machine charges for 64
    namespaced processes is measured in the same run.
S4  write_file over a 50k-line file: the diff and the approval modal's frame in-process
    (`airlock bench-cockpit diff --old FILE --new FILE --repeat N`, N = BENCH_DIFF_REPEAT, 20:
    the median of N in each round, then the median over the rounds) against a whole
    `git diff --no-index` (<= 1.0x), and the whole cockpit pipeline from the moment the harness
    starts the process until that modal is drawn (the wall clock the cockpit reports at that
    frame, less the harness's at the start; <= 2x `git diff`). The process's exit after that
    (its databases closed) is reported beside it. Then, in the same in-process measure, the
    modal reviewed hunk by hunk: `]` and Space on one of its 1,000 hunks, the key and the
    frame that shows it dropped (<= 16 ms, one frame).
S5  peak RSS with 1M and 10M lines of output, and RSS per run over 200 runs.
S6  process start to first frame (<= 16 ms), offline and with a model configured.
S7  idle windows (prompt, finished output, a silent running tool): CPU and bytes written.
S8  a 100 MB write_file denied and parked in `airlock exec`: peak RSS and wall time.
S9  one 1 GB line of output in `airlock exec`: bytes of events, peak RSS.
S10 the fixed cost of a one-call turn: `airlock exec --approvals dangerously-allow-all` with a
    configured OpenAI-compatible model (AIRLOCK_PROVIDER=openai, AIRLOCK_MODEL,
    AIRLOCK_BASE_URL, OPENAI_API_KEY) served by MockModel, a server in threads of this script on
    127.0.0.1: its first answer is one `bash` call `echo hi`, its second a closing message, both
    SSE streams built once (keep-alive, one `sendall` each). Whole process, start to exit, goal
    <= 30 ms (median). The phases as the server sees them: start -> first request received whole;
    first answer sent -> second request received (the answer parsed, the gate, the sandbox, the
    command, its result sent back); second answer sent -> process exit. The server's own time per
    request (received -> answer sent) is reported too. Also the same turn with the scripted
    model (`--scenario`).
S11 idle wake-ups with the approval modal up: `bench-cockpit idle --idle modal` (a `touch` call
    that asks; nobody answers) against `--idle prompt` (the quiet window), interleaved, windows of
    BENCH_MODAL_SECONDS (6 s: longer than any 5 s fallback wait, so one would show). Counted over
    the window: context switches (voluntary + nonvoluntary, summed over every thread of
    /proc/self/task/*/status, end minus start) and CPU time; then each arm once under
    `strace -f -ttt -T -e trace=epoll_wait,epoll_pwait,poll,ppoll,select,pselect6,futex,
    nanosleep,clock_nanosleep,read`, counting the calls that returned inside the window (the
    report gives its start and end as Unix-epoch seconds). Goal: no more than the quiet window
    shows. After the window the real `airlock approve CODE` (the code the modal shows) runs as a
    child with the same AIRLOCK_HOME; from its exit to the first frame without the modal:
    <= 100 ms. (The cockpit hears the answer through inotify on the state directory.)
S12 many agents: 8 sub-agents started in one step, each running 4 commands that stream at once
    (`seq` and `yes`, 32 floods); once all 32 stream, 300 keys typed into the prompt, one every
    10 ms. Goals: key -> frame p99 < 50 ms and max < 100 ms (S2's), and the process's peak RSS
    (GNU time) <= 150 MiB: 32 floods are thinned to what the panes can show.
"""

import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AIRLOCK = Path(os.environ.get("BENCH_AIRLOCK", ROOT / "target" / "release" / "airlock"))
OUT = ROOT / "target" / "bench"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
BASELINE = os.environ.get("BENCH_BASELINE")
BUSY = int(os.environ.get("BENCH_BUSY", "0"))


GNU_TIME = "/usr/bin/time"


def run(argv, env, rss=False, ok=(0,)):
    """Runs one sample: wall seconds; with `rss`, the peak RSS (KiB) GNU time reports; and the
    JSON object the program printed, if it printed one (`airlock bench-cockpit` does).

    (A child forked from this Python process would report Python's own peak: Linux keeps the
    high-water mark across exec. GNU time is a small C program, so its child starts near zero.)
    """
    with tempfile.NamedTemporaryFile("r") as rss_file:
        if rss:
            argv = [GNU_TIME, "-f", "%M", "-o", rss_file.name, *argv]
        start_unix = time.time()
        start = time.perf_counter()
        # Only the harness's one-line report is read; anything else (the megabytes of events
        # `airlock exec` prints) goes to /dev/null, as in the floor arms.
        reports = "bench-cockpit" in map(str, argv)
        out_to = subprocess.PIPE if reports else subprocess.DEVNULL
        done = subprocess.run(argv, env=env, stdout=out_to, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        if done.returncode not in ok:
            sys.exit(f"bench: {' '.join(map(str, argv))} failed ({done.returncode}): "
                     f"{done.stderr.decode(errors='replace').strip()}")
        sample = {"wall_s": wall, "start_unix_s": start_unix}
        if rss:
            sample["max_rss_kib"] = int(rss_file.read().split()[-1])
        if reports:
            sample["report"] = json.loads(done.stdout)
        return sample


def settle(env):
    """Before a sample: drop the run logs earlier samples left (a 10M-line run leaves 79 MB) and
    flush dirty pages, so no sample pays for an earlier one's writeback."""
    home = Path(env["AIRLOCK_HOME"])
    for state in (home, home.parent / "state-baseline"):
        shutil.rmtree(state / "runs", ignore_errors=True)
    os.sync()


def interleave(arms, env, rss=False, ok=(0,), rounds=None):
    """Runs every arm once per round, in turn, and returns each arm's samples."""
    samples = {name: [] for name in arms}
    for _ in range(rounds or ROUNDS):
        for name, argv in arms.items():
            settle(env)
            samples[name].append(run(argv, env, rss, ok))
    return samples


def median(samples, key):
    return statistics.median(s[key] for s in samples)


def report_median(samples, key):
    return statistics.median(s["report"][key] for s in samples)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def scenario(work, name, calls):
    """A scripted turn: one batch of bash calls, then a closing message."""
    path = work / f"{name}.json"
    steps = [{"calls": [{"tool": "bash", "args": {"command": c}} for c in calls]}] if calls else []
    steps.append({"say": "done"})
    path.write_text(json.dumps({"name": name, "prompt": name, "steps": steps}))
    return path


def cockpit_argv(work, measure, scenario_path=None, *extra, workspace="ws"):
    """The cockpit, headless: `airlock bench-cockpit` (real state, render, loop and tools against
    a ratatui backend writing to /dev/null, synthetic keys), printing what it measured."""
    argv = [str(AIRLOCK), "bench-cockpit", measure]
    if workspace:
        argv += ["--workspace", str(work / workspace)]
    if scenario_path:
        argv += ["--scenario", str(scenario_path)]
    return argv + [str(e) for e in extra]


def exec_argv(work, scenario_path):
    return [str(AIRLOCK), "exec", "--scenario", str(scenario_path), "--workspace",
            str(work / "ws"), "--approvals", "dangerously-allow-all"]


def versions():
    def out(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.strip()
        except OSError:
            return None
    return {"airlock": out([str(AIRLOCK), "--version"]), "rustc": out(["rustc", "--version"]),
            "kernel": platform.release(), "python": platform.python_version(),
            "cpus": os.cpu_count()}


def baseline_arms(work, scenario_path):
    """With BENCH_BASELINE: the same cockpit and exec arms, run by the baseline build."""
    if not BASELINE:
        return {}
    cockpit, headless = cockpit_argv(work, "flood", scenario_path), exec_argv(work, scenario_path)
    # Its own state directory: builds of different schema versions cannot share one.
    own = ["env", f"AIRLOCK_HOME={work / 'state-baseline'}", BASELINE]
    return {"baseline_cockpit": [*own, *cockpit[1:]],
            "baseline_headless": [*own, *headless[1:]]}


def baseline_summary(samples, floor):
    """The baseline arms' medians (and ratio to the floor), for the printed line."""
    if not BASELINE:
        return ""
    c, h = (median(samples[k], "wall_s") for k in ("baseline_cockpit", "baseline_headless"))
    return f"; baseline build: cockpit {c:.3f} s ({c / floor:.2f}x), exec {h:.3f} s ({h / floor:.2f}x)"


def write(report):
    OUT.mkdir(parents=True, exist_ok=True)
    report["rounds"] = ROUNDS
    report["busy_cores"] = BUSY
    report["loadavg"] = os.getloadavg()
    report["versions"] = versions()
    (OUT / f"{report['id']}.json").write_text(json.dumps(report, indent=2))
    verdict = "meets" if report["meets_goal"] else "MISSES"
    print(f"{report['id']}: {report['summary']} — goal {report['goal']}: {verdict}")


def s1(work, env):
    lines = 10_000_000
    s1 = scenario(work, "s1", [f"seq 1 {lines}"])
    arms = {
        "cockpit": cockpit_argv(work, "flood", s1),
        "headless": exec_argv(work, s1),
        "floor": ["bash", "-c", f"seq 1 {lines} | cat > /dev/null"],
        **baseline_arms(work, s1),
    }
    samples = interleave(arms, env)
    c, h, f = (median(samples[k], "wall_s") for k in ("cockpit", "headless", "floor"))
    seen = samples["cockpit"][0]["report"]["lines_seen"]
    write({"id": "S1", "scenario": f"an approved tool prints {lines} lines: the whole cockpit "
           "process (headless backend) until the finished run is drawn; also `airlock exec`",
           "samples": samples, "median_s": {"cockpit": c, "headless": h, "floor": f},
           "ratio": c / f, "ratio_headless": h / f, "lines_seen_by_the_cockpit": seen,
           "goal": "<= 1.25x the floor", "meets_goal": c / f <= 1.25,
           "summary": f"cockpit {c:.3f} s ({c / f:.2f}x), exec {h:.3f} s ({h / f:.2f}x), "
                      f"floor {f:.3f} s" + baseline_summary(samples, f)})


def s2(work, env):
    wide = "x" * 300
    s2 = scenario(work, "s2", ["seq 1 1000000000", f"yes {wide}"])
    keys, every = 300, 10
    samples = interleave({"cockpit": cockpit_argv(work, "keys", s2, "--keys", keys,
                                                  "--every-ms", every)}, env)["cockpit"]
    latencies = [x for s in samples for x in s["report"]["key_to_frame_samples_ms"]]
    for s in samples:
        del s["report"]["key_to_frame_samples_ms"]
    intervals = [s["report"]["frame_interval_ms"]["p50"] for s in samples]
    p99, worst = percentile(latencies, 99), max(latencies)
    lines = [s["report"]["lines_seen"] for s in samples]
    write({"id": "S2", "scenario": f"{keys} keys typed into the prompt, one every {every} ms, "
           "while two tools flood (`seq`, and `yes` with 300-character lines)",
           "samples": samples, "key_to_frame_ms": {"p50": percentile(latencies, 50),
                                                   "p99": p99, "max": worst,
                                                   "count": len(latencies)},
           "frame_interval_p50_ms": statistics.median(intervals),
           "lines_seen_per_round": lines,
           "goal": "p99 < 50 ms, max < 100 ms", "meets_goal": p99 < 50 and worst < 100,
           "summary": f"key -> frame p50 {percentile(latencies, 50):.1f} ms, p99 {p99:.1f} ms, "
                      f"max {worst:.1f} ms over {len(latencies)} keys "
                      f"(frame interval p50 {statistics.median(intervals):.1f} ms)"})


def s3(work, env):
    """8 parallel `sleep 1` calls from one model turn, and 64: the cockpit and `airlock exec`,
    all arms interleaved with the floor (one `sleep 1`)."""
    s3 = scenario(work, "s3", ["sleep 1"] * 8)
    s3_64 = scenario(work, "s3-64", ["sleep 1"] * 64)
    loop = "for i in $(seq 64); do {} bash -c 'sleep 1' & done; wait"
    namespaces = "unshare --user --map-root-user --pid --fork --mount --net"
    arms = {
        "cockpit": cockpit_argv(work, "flood", s3),
        "headless": exec_argv(work, s3),
        "cockpit_64": cockpit_argv(work, "flood", s3_64),
        "headless_64": exec_argv(work, s3_64),
        "floor": ["sleep", "1"],
        "bare_64": ["bash", "-c", loop.format("")],
        **baseline_arms(work, s3),
    }
    # Only where this user may make those namespaces (as the sandbox itself would).
    if subprocess.run(namespaces.split() + ["true"], capture_output=True).returncode == 0:
        arms["namespaces_64"] = ["bash", "-c", loop.format(namespaces)]
    samples = interleave(arms, env)
    m = {k: median(v, "wall_s") for k, v in samples.items()}
    c, h, f = m["cockpit"], m["headless"], m["floor"]
    worst = max(s["wall_s"] for k in ("cockpit", "headless") for s in samples[k])
    worst_64 = max(s["wall_s"] for k in ("cockpit_64", "headless_64") for s in samples[k])
    finished_64 = {len(s["report"]["lines_seen"]) for s in samples["cockpit_64"]}
    floors_64 = f"; floors for 64: bare {m['bare_64']:.3f} s" + (
        f", in namespaces {m['namespaces_64']:.3f} s" if "namespaces_64" in m else "")
    write({"id": "S3", "scenario": "8 approved `sleep 1` calls from one model turn, whole "
           "process: the cockpit (until all are drawn finished) and `airlock exec`; and the same "
           "with 64 calls", "samples": samples, "median_s": m,
           "max_s": worst, "max_s_64": worst_64, "ratio": c / f,
           "runs_drawn_by_the_cockpit_64": sorted(finished_64),
           "goal": "8 calls: every sample <= 1.10 s; 64 calls: every sample <= 1.20 s",
           "meets_goal": worst <= 1.10 and worst_64 <= 1.20,
           "summary": f"8 calls: cockpit median {c:.3f} s, exec {h:.3f} s, worst {worst:.3f} s; "
                      f"64 calls: cockpit median {m['cockpit_64']:.3f} s, exec "
                      f"{m['headless_64']:.3f} s, worst {worst_64:.3f} s (floor {f:.3f} s)"
                      + floors_64 + baseline_summary(samples, f)})


def s4(work, env):
    ws = work / "ws4"
    ws.mkdir(exist_ok=True)
    n = 50_000
    old = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(n))
    some = "".join(f"line {i}: the quick brown fox JUMPED over the lazy dog\n" if i % 50 == 0
                   else f"line {i}: the quick brown fox jumps over the lazy dog\n"
                   for i in range(n))
    every = "".join(f"row {i * 7}: a completely different text {i % 13}\n" for i in range(n))
    (ws / "big.txt").write_text(old)
    (work / "s4-old.txt").write_text(old)
    repeat = int(os.environ.get("BENCH_DIFF_REPEAT", "20"))
    arms = {}
    for name, content in (("some", some), ("every", every)):
        (work / f"s4-{name}.txt").write_text(content)
        path = work / f"s4-{name}.json"
        path.write_text(json.dumps({"name": name, "prompt": name, "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "big.txt", "content": content}}]},
            {"say": "done"}]}))
        arms[f"cockpit_{name}"] = cockpit_argv(work, "modal", path, workspace="ws4")
        arms[f"git_{name}"] = ["git", "diff", "--no-index", str(ws / "big.txt"),
                               str(work / f"s4-{name}.txt")]
        # The diff and the modal frame in-process (`repeat` times in one process), on the same
        # text: the release build's own measure, no cargo needed.
        arms[f"inproc_{name}"] = cockpit_argv(work, "diff", None, "--old", work / "s4-old.txt",
                                              "--new", work / f"s4-{name}.txt",
                                              "--repeat", repeat, workspace=None)
    samples = interleave(arms, env, ok=(0, 1))
    m = {k: median(v, "wall_s") for k, v in samples.items() if not k.startswith("inproc_")}
    # Per round the median of `repeat` timings; over the rounds, the median of those.
    inproc = {f"{what}_{name}": statistics.median(s["report"][f"{what}_ms"]["median"]
                                                  for s in samples[f"inproc_{name}"]) / 1000
              for what in ("diff", "diff_and_modal_frame") for name in ("some", "every")}
    fastest = min(s["report"]["diff_and_modal_frame_ms"]["min"]
                  for s in samples["inproc_some"]) / 1000
    # Reviewing it hunk by hunk: Space on a hunk of the 1,000 and the frame that shows it.
    toggle = statistics.median(s["report"]["hunk_toggle_frame_ms"]["median"]
                               for s in samples["inproc_some"])
    toggle_worst = max(s["report"]["hunk_toggle_frame_ms"]["median"]
                       for s in samples["inproc_some"])
    hunks = samples["inproc_some"][0]["report"]["hunks"]
    diff_frame = inproc["diff_and_modal_frame_some"]
    ratio = diff_frame / m["git_some"]
    # The pipeline: from the moment the harness started the process until the modal was drawn
    # (the process's exit after that, its databases closed, is in `median_s` too).
    to_modal = {name: statistics.median(s["report"]["modal_drawn_unix_s"] - s["start_unix_s"]
                                        for s in samples[f"cockpit_{name}"])
                for name in ("some", "every")}
    whole = to_modal["some"] / m["git_some"]
    write({"id": "S4", "scenario": f"write_file replacing a {n}-line file (1 line in 50 "
           "changed; and every line changed): the diff computed and the approval modal drawn "
           f"(in-process, `airlock bench-cockpit diff`, {repeat} times per round), and the whole "
           "process from start until that modal has been drawn",
           "samples": samples, "median_s": m, "in_process_median_s": inproc,
           "median_start_to_modal_drawn_s": to_modal,
           "in_process_fastest_diff_and_modal_frame_s": fastest,
           "ratio": ratio, "ratio_whole_pipeline": whole,
           "ratio_whole_pipeline_every_line": to_modal["every"] / m["git_every"],
           "hunks": hunks, "hunk_toggle_frame_ms": toggle,
           "hunk_toggle_frame_ms_worst_round": toggle_worst,
           "goal": "in-process <= 1.0x git diff; whole pipeline <= 2x git diff; a fully changed "
                   "file bounded by a deadline; a hunk toggled and redrawn within one frame "
                   "(16 ms)",
           "meets_goal": ratio <= 1.0 and whole <= 2.0 and m["cockpit_every"] <= 1.0
                         and toggle_worst <= 16,
           "summary": f"diff + modal frame {diff_frame * 1000:.1f} ms (fastest "
                      f"{fastest * 1000:.1f} ms) vs git diff {m['git_some'] * 1000:.0f} ms = "
                      f"{ratio:.2f}x; whole pipeline, start to modal drawn "
                      f"{to_modal['some'] * 1000:.0f} ms ({whole:.2f}x; the process exits after "
                      f"{m['cockpit_some'] * 1000:.0f} ms); every line changed: diff "
                      f"{inproc['diff_every'] * 1000:.1f} ms, start to modal "
                      f"{to_modal['every'] * 1000:.0f} ms (exit {m['cockpit_every'] * 1000:.0f} "
                      f"ms) vs git {m['git_every'] * 1000:.0f} ms; Space on one of {hunks} hunks "
                      f"and its frame {toggle:.2f} ms"})


def s5(work, env):
    arms = {
        "cockpit_idle": cockpit_argv(work, "first-frame", scenario(work, "s5-idle", [])),
        "cockpit_1M": cockpit_argv(work, "flood", scenario(work, "s5-1m", ["seq 1 1000000"])),
        "cockpit_10M": cockpit_argv(work, "flood",
                                    scenario(work, "s5-10m", ["seq 1 10000000"])),
        "exec_idle": exec_argv(work, scenario(work, "s5-idle", [])),
        "exec_1M": exec_argv(work, scenario(work, "s5-1m", ["seq 1 1000000"])),
        "exec_10M": exec_argv(work, scenario(work, "s5-10m", ["seq 1 10000000"])),
    }
    samples = interleave(arms, env, rss=True)
    rss = {k: median(v, "max_rss_kib") for k, v in samples.items()}
    grow = {f"{arm}_{n}": (rss[f"{arm}_{n}"] - rss[f"{arm}_idle"]) / 1024
            for arm in ("cockpit", "exec") for n in ("1M", "10M")}
    flat = all(abs(grow[f"{a}_10M"] - grow[f"{a}_1M"]) <= 4 for a in ("cockpit", "exec"))
    # 200 runs in one cockpit, resident memory after each finished run: runs of 100k lines,
    # then runs of 1M lines (ten times the output, the same kept head and tail).
    # Runs of 10 lines give the cost of a run with (almost) no output.
    long_runs = {n: long_run_slope(work, env, n) for n in (10, 100_000, 1_000_000)}
    slope = {n: r["slope_kib_per_run_from_run_50"] for n, r in long_runs.items()}
    # What grows per run is the conversation (the head and tail each result sends the model,
    # about 4 KiB here, kept for the model's next step) and one line per call; never the
    # output: ten times the output per run must not change the slope (RSS noise: 4 KiB).
    per_run_ok = abs(slope[1_000_000] - slope[100_000]) <= 4
    write({"id": "S5", "scenario": "peak RSS of the cockpit (headless backend) and of "
           "`airlock exec` printing 1M and 10M lines, against the same process with no tool; "
           "then 200 runs of 10, of 100k and of 1M lines, in one cockpit each",
           "samples": samples, "median_rss_kib": rss, "growth_mib": grow,
           "runs": {str(n): r for n, r in long_runs.items()},
           "goal": "+<= 32 MiB over idle, flat in N, no growth per run",
           "meets_goal": max(grow.values()) <= 32 and flat and per_run_ok,
           "summary": f"cockpit idle {rss['cockpit_idle'] / 1024:.1f} MiB, "
                      f"+{grow['cockpit_1M']:.1f} / +{grow['cockpit_10M']:.1f} MiB at 1M / 10M; "
                      f"exec +{grow['exec_1M']:.1f} / +{grow['exec_10M']:.1f} MiB; 200 runs: "
                      f"{slope[10]:.1f} / {slope[100_000]:.1f} / {slope[1_000_000]:.1f} KiB per "
                      "run of 10 / 100k / 1M lines (from run 50)"})


def long_run_slope(work, env, lines, runs=200):
    """One cockpit running `runs` calls of `seq 1 lines` (25 model steps of 8 calls: the agent
    stops a turn at 50 steps); the resident memory after each finished run and its slope."""
    steps = [{"calls": [{"tool": "bash", "args": {"command": f"seq 1 {lines}"}}] * 8}
             for _ in range(runs // 8)] + [{"say": "done"}]
    path = work / f"s5-runs-{lines}.json"
    path.write_text(json.dumps({"name": "runs", "prompt": "runs", "steps": steps}))
    settle(env)
    report = run(cockpit_argv(work, "runs", path), env)["report"]
    series = dict(report["rss_kib_after_runs"])
    # From run 50 on: the cockpit keeps the output windows of the newest 32 finished runs.
    xs = [x for x in series if x >= 50]
    slope = 0.0
    if len(xs) > 1:
        mx = statistics.mean(xs)
        my = statistics.mean(series[x] for x in xs)
        slope = (sum((x - mx) * (series[x] - my) for x in xs) /
                 sum((x - mx) ** 2 for x in xs))
    marks = {n: series[max(k for k in series if k <= n)] for n in (8, 50, 100, 150, 200)
             if any(k <= n for k in series)}
    return {"rss_kib_after_run": marks, "slope_kib_per_run_from_run_50": slope,
            "peak_rss_kib": report["peak_rss_kib"], "count": report["runs"]}


def s6(work, env):
    offline = dict(env)
    unreachable = dict(env, AIRLOCK_PROVIDER="openai", AIRLOCK_MODEL="bench",
                       AIRLOCK_BASE_URL="http://10.255.255.1:9/v1", OPENAI_API_KEY="unused")
    arms = {
        "cockpit_demo": (cockpit_argv(work, "first-frame", workspace=None), offline),
        "cockpit_model": (cockpit_argv(work, "first-frame"), unreachable),
        "minimal": (cockpit_argv(work, "minimal", workspace=None), offline),
    }
    samples = {name: [] for name in arms}
    for _ in range(ROUNDS):
        for name, (argv, arm_env) in arms.items():
            samples[name].append(run(argv, arm_env))
    wall = {k: median(v, "wall_s") * 1000 for k, v in samples.items()}
    inner = {k: report_median(v, "first_frame_ms") for k, v in samples.items()}
    worst = max(wall["cockpit_demo"], wall["cockpit_model"])
    write({"id": "S6", "scenario": "process start to first frame (then exit): the offline demo "
           "(scratch copy made), and a configured model at an unreachable address",
           "samples": samples, "median_wall_ms": wall, "median_first_frame_in_process_ms": inner,
           "ratio": wall["cockpit_demo"] / wall["minimal"],
           "goal": "<= 16 ms; never waits on network or terminal replies",
           "meets_goal": worst <= 16,
           "summary": f"demo {wall['cockpit_demo']:.1f} ms, model configured "
                      f"{wall['cockpit_model']:.1f} ms, minimal ratatui app "
                      f"{wall['minimal']:.1f} ms (whole processes)"})


def s7(work, env):
    seconds = float(os.environ.get("BENCH_IDLE_SECONDS", "3"))
    arms = {
        "prompt": cockpit_argv(work, "idle", scenario(work, "s7-prompt", []), "--idle",
                               "prompt", "--seconds", seconds),
        "output": cockpit_argv(work, "idle", scenario(work, "s7-out", ["seq 1 100000"]),
                               "--idle", "output", "--seconds", seconds),
        "running": cockpit_argv(work, "idle", scenario(work, "s7-run", ["sleep 600"]),
                                "--idle", "running", "--seconds", seconds),
    }
    samples = interleave(arms, env, rounds=min(ROUNDS, 3))
    cpu = {k: max(s["report"]["cpu_percent_of_a_core"] for s in v) for k, v in samples.items()}
    written = {k: sum(s["report"]["bytes_written"] for s in v) for k, v in samples.items()}
    frames = {k: sum(s["report"]["frames"] for s in v) for k, v in samples.items()}
    quiet = written["prompt"] == 0 and written["output"] == 0
    write({"id": "S7", "scenario": f"idle windows of {seconds} s: prompt waiting, finished output "
           "on screen, a running tool that prints nothing", "samples": samples,
           "cpu_percent_worst": cpu, "bytes_written": written, "frames": frames,
           "goal": "<= 0.5 % of a core, no bytes written when nothing changes",
           "meets_goal": max(cpu.values()) <= 0.5 and quiet,
           "summary": f"CPU worst {cpu['prompt']:.3f} % / {cpu['output']:.3f} % / "
                      f"{cpu['running']:.3f} % of a core; bytes written {written['prompt']} / "
                      f"{written['output']} / {written['running']} (the running tool's "
                      f"elapsed seconds, {frames['running']} frames)"})


def s8(work, env):
    """One `write_file` of BENCH_WRITE_MB (100) megabytes of text in `airlock exec`: judged and
    denied (`--approvals deny`: the policy asks, nobody is there to approve), and judged and
    parked (`--approvals park`). Every sample starts from an empty state directory: a parked run
    leaves its checkpoint file and its approval there, hundreds of megabytes at this size."""
    megabytes = int(os.environ.get("BENCH_WRITE_MB", "100"))
    line = "the quick brown fox jumps over the lazy dog, line {:09d}\n"
    content = "".join(line.format(i) for i in range(megabytes * 1_000_000 // len(line.format(0))))
    size = len(content.encode())
    path = work / "s8.json"
    path.write_text(json.dumps({"name": "s8", "prompt": "s8", "steps": [
        {"calls": [{"tool": "write_file", "args": {"path": "big.txt", "content": content}}]},
        {"say": "done", "expect": ["denied"]}]}))
    del content
    (work / "ws8").mkdir(exist_ok=True)
    state = work / "state8"

    def arm(approvals, binary=AIRLOCK):
        return ["env", f"AIRLOCK_HOME={state}", str(binary), "exec", "--scenario", str(path),
                "--workspace", str(work / "ws8"), "--approvals", approvals]

    # (argv, the exit status it must end with: 0 completed, 5 parked)
    arms = {"denied": (arm("deny"), 0), "parked": (arm("park"), 5)}
    if BASELINE:
        arms["baseline_denied"] = (arm("deny", BASELINE), 0)
        arms["baseline_parked"] = (arm("park", BASELINE), 5)
    samples = {name: [] for name in arms}
    for _ in range(ROUNDS):
        for name, (argv, status) in arms.items():
            shutil.rmtree(state, ignore_errors=True)
            settle(env)
            sample = run(argv, env, rss=True, ok=(status,))
            sample["state_bytes"] = sum(f.stat().st_size for f in state.rglob("*") if f.is_file())
            samples[name].append(sample)
    shutil.rmtree(state, ignore_errors=True)
    rss = {k: median(v, "max_rss_kib") * 1024 / size for k, v in samples.items()}
    wall = {k: median(v, "wall_s") for k, v in samples.items()}
    kept = {k: median(v, "state_bytes") / size for k, v in samples.items()}
    baseline = ""
    if BASELINE:
        baseline = (f"; baseline build: denied {rss['baseline_denied']:.2f}x in "
                    f"{wall['baseline_denied']:.2f} s, parked {rss['baseline_parked']:.2f}x in "
                    f"{wall['baseline_parked']:.2f} s")
    write({"id": "S8", "scenario": f"one write_file of {size} bytes of text in `airlock exec`, "
           "judged and denied (nobody approves), and judged and parked; whole process",
           "content_bytes": size, "samples": samples,
           "median_peak_rss_per_content_byte": rss, "median_wall_s": wall,
           "median_state_bytes_per_content_byte": kept,
           "goal": "denied: peak RSS < 3x the content, wall < 2 s",
           "meets_goal": rss["denied"] < 3 and wall["denied"] < 2,
           "summary": f"denied: peak RSS {rss['denied']:.2f}x the content "
                      f"({median(samples['denied'], 'max_rss_kib') / 1024:.0f} MiB), "
                      f"{wall['denied']:.2f} s; parked: {rss['parked']:.2f}x, "
                      f"{wall['parked']:.2f} s; state left {kept['denied']:.1f}x / "
                      f"{kept['parked']:.1f}x the content" + baseline})


def run_counted(argv, env):
    """One sample whose standard output is counted as it is read, not kept: wall seconds, peak
    RSS (KiB, GNU time) and the bytes printed."""
    with tempfile.NamedTemporaryFile("r") as rss_file, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([GNU_TIME, "-f", "%M", "-o", rss_file.name, *map(str, argv)],
                                env=env, stdout=subprocess.PIPE, stderr=err)
        printed = 0
        while chunk := os.read(proc.stdout.fileno(), 1 << 20):
            printed += len(chunk)
        proc.stdout.close()
        status = proc.wait()
        wall = time.perf_counter() - start
        if status != 0:
            err.seek(0)
            sys.exit(f"bench: {' '.join(map(str, argv))} failed ({status}): "
                     f"{err.read().decode(errors='replace').strip()}")
        return {"wall_s": wall, "max_rss_kib": int(rss_file.read().split()[-1]),
                "stdout_bytes": printed}


def s9(work, env):
    """A command printing one line of 1 GB (no newline) in `airlock exec`: the bytes of events it
    prints (every output path is bounded in bytes, not only in lines), its wall time and peak
    RSS, against the same command piped through `cat` (the floor)."""
    size = 1_000_000_000
    command = f"head -c {size} /dev/zero | tr '\\0' x"
    path = scenario(work, "s9", [command])
    arms = {"exec": exec_argv(work, path)}
    if BASELINE:
        arms["baseline_exec"] = ["env", f"AIRLOCK_HOME={work / 'state-baseline'}", BASELINE,
                                 *exec_argv(work, path)[1:]]
    samples = {name: [] for name in [*arms, "floor"]}
    for _ in range(ROUNDS):
        for name, argv in arms.items():
            settle(env)
            samples[name].append(run_counted(argv, env))
        settle(env)
        samples["floor"].append(run(["bash", "-c", f"{command} | cat > /dev/null"], env, rss=True))
    wall = {k: median(v, "wall_s") for k, v in samples.items()}
    rss = {k: median(v, "max_rss_kib") / 1024 for k, v in samples.items()}
    printed = {k: max(s["stdout_bytes"] for s in v) for k, v in samples.items() if k in arms}
    baseline = ""
    if BASELINE:
        baseline = (f"; baseline build: {printed['baseline_exec']:,} bytes of events, "
                    f"{wall['baseline_exec']:.2f} s, {rss['baseline_exec']:.0f} MiB")
    write({"id": "S9", "scenario": f"`airlock exec` running `{command}`: one line of {size} "
           "bytes with no newline; the bytes of events printed, wall time and peak RSS, against "
           "the command piped through `cat`", "samples": samples, "median_wall_s": wall,
           "median_peak_rss_mib": rss, "most_stdout_bytes": printed,
           "ratio": wall["exec"] / wall["floor"],
           "goal": "<= 4 MiB of events, peak RSS <= 32 MiB",
           "meets_goal": printed["exec"] <= 4 << 20 and rss["exec"] <= 32,
           "summary": f"{printed['exec']:,} bytes of events, {wall['exec']:.2f} s "
                      f"({wall['exec'] / wall['floor']:.2f}x the floor's {wall['floor']:.2f} s), "
                      f"peak RSS {rss['exec']:.0f} MiB" + baseline})


def sse(*chunks):
    """An OpenAI Chat Completions stream: each chunk as one `data:` event, then `[DONE]`."""
    return "".join(f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks) + \
        "data: [DONE]\n\n"


class MockModel:
    """An OpenAI-compatible Chat Completions server on 127.0.0.1, in threads of this process:
    the first request of a turn is answered with one `bash` call (`echo hi`), a request that
    carries a tool result (`tool_call_id`) with a closing message. Both answers are built once,
    as whole HTTP/1.1 responses (SSE bodies with a Content-Length, keep-alive), so answering is
    one `sendall`; requests are read with their Content-Length, not parsed as JSON. It records
    when each request was received whole and when each answer was sent (perf_counter), and how
    long it took itself from the one to the other (its own cost, reported with S10)."""

    def __init__(self):
        tool_call = sse({"id": "b1", "object": "chat.completion.chunk", "model": "bench",
                         "choices": [{"index": 0, "finish_reason": None, "delta": {
                             "role": "assistant", "tool_calls": [{
                                 "index": 0, "id": "call_1", "type": "function",
                                 "function": {"name": "bash",
                                              "arguments": '{"command":"echo hi"}'}}]}}]},
                        {"id": "b1", "object": "chat.completion.chunk", "model": "bench",
                         "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        final = sse({"id": "b2", "object": "chat.completion.chunk", "model": "bench",
                     "choices": [{"index": 0, "finish_reason": None,
                                  "delta": {"role": "assistant", "content": "done"}}]},
                    {"id": "b2", "object": "chat.completion.chunk", "model": "bench",
                     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self.answers = {kind: (f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               f"Content-Length: {len(body.encode())}\r\n"
                               f"Connection: keep-alive\r\n\r\n{body}").encode()
                        for kind, body in (("call", tool_call), ("final", final))}
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.events = []
        self.connections = 0
        self.paths = set()
        threading.Thread(target=self.accept, daemon=True).start()

    def reset(self):
        with self.lock:
            self.events = []
            self.connections = 0

    def record(self, what, when):
        with self.lock:
            self.events.append((what, when))

    def accept(self):
        while True:
            conn, _ = self.listener.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.connections += 1
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    chunk = conn.recv(max(65536, length - len(buf)))
                    if not chunk:
                        return
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                received = time.perf_counter()
                kind = "final" if b'"tool_call_id"' in body else "call"
                conn.sendall(self.answers[kind])
                sent = time.perf_counter()
                self.paths.add(head.split(b" ")[1].decode(errors="replace"))
                self.record(f"{kind}_received", received)
                self.record(f"{kind}_sent", sent)


def s10(work, env):
    """The fixed cost of a one-call turn: `airlock exec` with a configured OpenAI-compatible
    model (MockModel), whose first answer is one `bash` call `echo hi` and whose second is a
    closing message, `--approvals dangerously-allow-all`; whole process, start to exit. The
    phases as the server sees them, and the same turn with the scripted model."""
    server = MockModel()
    model_env = dict(env, AIRLOCK_PROVIDER="openai", AIRLOCK_MODEL="bench",
                     AIRLOCK_BASE_URL=f"http://127.0.0.1:{server.port}/v1",
                     OPENAI_API_KEY="bench", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                  "all_proxy"):
        model_env.pop(proxy, None)
    model_argv = [str(AIRLOCK), "exec", "--workspace", str(work / "ws"), "--approvals",
                  "dangerously-allow-all", "say hi"]
    scripted_argv = exec_argv(work, scenario(work, "s10", ["echo hi"]))
    arms = {"model": (model_argv, model_env), "scripted": (scripted_argv, env)}
    samples = {name: [] for name in arms}
    for _ in range(ROUNDS):
        for name, (argv, arm_env) in arms.items():
            settle(env)
            server.reset()
            start = time.perf_counter()
            done = subprocess.run(argv, env=arm_env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
            end = time.perf_counter()
            if done.returncode != 0:
                sys.exit(f"bench: {' '.join(argv)} failed ({done.returncode}): "
                         f"{done.stderr.decode(errors='replace').strip()}")
            sample = {"wall_s": end - start}
            if name == "model":
                with server.lock:
                    seen = dict(server.events)
                    count = len(server.events)
                    sample["connections"] = server.connections
                if count != 4:
                    sys.exit(f"bench: S10 expected two requests, the server saw {count // 2}: "
                             f"{done.stderr.decode(errors='replace').strip()}")
                sample["phases_ms"] = {
                    "start_to_first_request": (seen["call_received"] - start) * 1000,
                    "first_answer_to_second_request":
                        (seen["final_received"] - seen["call_sent"]) * 1000,
                    "second_answer_to_exit": (end - seen["final_sent"]) * 1000,
                }
                sample["server_ms"] = ((seen["call_sent"] - seen["call_received"]) * 1000,
                                       (seen["final_sent"] - seen["final_received"]) * 1000)
            samples[name].append(sample)
    wall = {k: median(v, "wall_s") * 1000 for k, v in samples.items()}
    worst = max(s["wall_s"] for s in samples["model"]) * 1000
    phases = {k: statistics.median(s["phases_ms"][k] for s in samples["model"])
              for k in samples["model"][0]["phases_ms"]}
    own = [ms for s in samples["model"] for ms in s["server_ms"]]
    write({"id": "S10", "scenario": "one-call turn (`echo hi`) in `airlock exec` against a local "
           "mock OpenAI-compatible server (SSE, keep-alive, pre-built answers), "
           "--approvals dangerously-allow-all, whole process start to exit; phases seen from "
           "the server; and the same turn with the scripted model",
           "samples": samples, "median_wall_ms": wall, "worst_wall_ms": worst,
           "median_phases_ms": phases, "request_paths": sorted(server.paths),
           "connections_per_turn": sorted({s["connections"] for s in samples["model"]}),
           "mock_server_own_ms": {"median": statistics.median(own), "max": max(own),
                                  "what": "request received whole -> answer sent, per request"},
           "goal": "<= 30 ms (median, model arm)", "meets_goal": wall["model"] <= 30,
           "summary": f"model {wall['model']:.1f} ms (worst {worst:.1f}): start -> request "
                      f"{phases['start_to_first_request']:.1f} ms, answer -> next request "
                      f"{phases['first_answer_to_second_request']:.1f} ms, answer -> exit "
                      f"{phases['second_answer_to_exit']:.1f} ms (mock server's own "
                      f"{statistics.median(own) * 1000:.0f} us a request); scripted "
                      f"{wall['scripted']:.1f} ms"})


def wakeup_syscalls(trace, start, end):
    """The syscalls of an `strace -f -ttt -T` log that returned inside [start, end] (Unix-epoch
    seconds): a whole line returned at its timestamp plus its duration, a resumed one at its
    timestamp; per syscall name."""
    counts = {}
    for line in trace.read_text(errors="replace").splitlines():
        parts = line.split(None, 2)
        if len(parts) < 3 or "<unfinished" in line:
            continue
        try:
            ts = float(parts[1])
        except ValueError:
            continue
        rest = parts[2]
        if rest.startswith("<..."):
            name, returned = rest[5:].split()[0], ts
        elif rest[:1].isalpha():
            name = rest.split("(", 1)[0]
            took = rest.rsplit("<", 1)[-1].rstrip(">") if rest.endswith(">") else "0"
            try:
                returned = ts + float(took)
            except ValueError:
                returned = ts
        else:
            continue  # signals, exits
        if start <= returned <= end:
            counts[name] = counts.get(name, 0) + 1
    return counts


def s12(work, env):
    agents, per_agent = 8, 4
    wide = "y" * 200
    commands = ["seq 1 1000000000", f"yes {wide}", "seq 5 1000000000", "yes short line"]
    scripts = {f"flood {i + 1}": {"steps": [
        {"say": f"flooding {i + 1}", "calls": [{"tool": "bash", "args": {"command": c}}
                                                for c in commands[:per_agent]]},
        {"say": "done"}]} for i in range(agents)}
    path = work / "s12.json"
    path.write_text(json.dumps({"name": "s12", "prompt": "s12", "steps": [
        {"calls": [{"tool": "agent", "args": {"task": task, "prompt": task}} for task in scripts]},
        {"say": "done"}], "agents": scripts}))
    keys, every, floods = 300, 10, agents * per_agent
    samples = interleave({"cockpit": cockpit_argv(work, "keys", path, "--keys", keys,
                                                  "--every-ms", every, "--flooding", floods)},
                         env, rss=True)["cockpit"]
    latencies = [x for s in samples for x in s["report"]["key_to_frame_samples_ms"]]
    for s in samples:
        del s["report"]["key_to_frame_samples_ms"]
    p99, worst = percentile(latencies, 99), max(latencies)
    peak = max(s["max_rss_kib"] for s in samples) / 1024
    runs = [s["report"]["runs"] for s in samples]
    write({"id": "S12", "scenario": f"{agents} sub-agents each running {per_agent} streaming "
           f"commands at once ({floods} floods); {keys} keys typed into the prompt, one every "
           f"{every} ms, once all of them stream",
           "samples": samples, "key_to_frame_ms": {"p50": percentile(latencies, 50),
                                                   "p99": p99, "max": worst,
                                                   "count": len(latencies)},
           "peak_rss_mib": peak, "runs_per_round": runs,
           "goal": "p99 < 50 ms, max < 100 ms, peak RSS <= 150 MiB",
           "meets_goal": p99 < 50 and worst < 100 and peak <= 150,
           "summary": f"key -> frame p50 {percentile(latencies, 50):.1f} ms, p99 {p99:.1f} ms, "
                      f"max {worst:.1f} ms over {len(latencies)} keys; peak RSS {peak:.1f} MiB "
                      f"({runs[0]} runs on screen)"})


def s11(work, env):
    """An idle cockpit with the approval modal up (a call that asks; nobody answers), against
    the same window with only the prompt waiting (the quiet window): context switches of every
    thread and CPU time over the window; once each under strace, the syscalls that returned in
    the window; then `airlock approve CODE` from another process, timed from its exit to the
    first frame without the modal."""
    if not shutil.which("strace"):
        sys.exit("bench: S11 needs strace (apt-get install strace)")
    seconds = float(os.environ.get("BENCH_MODAL_SECONDS", "6"))
    arms = {
        "modal": cockpit_argv(work, "idle", scenario(work, "s11-modal", ["touch answered.txt"]),
                              "--idle", "modal", "--seconds", seconds),
        "quiet": cockpit_argv(work, "idle", scenario(work, "s11-quiet", []), "--idle", "prompt",
                              "--seconds", seconds),
    }
    samples = interleave(arms, env, rounds=min(ROUNDS, 3))
    for arm in samples.values():
        for s in arm:
            if s["report"].get("answer", {}).get("error"):
                sys.exit(f"bench: S11: {s['report']['answer']['error']}")
    switches = {k: [s["report"]["context_switches"]["total"] for s in v]
                for k, v in samples.items()}
    cpu = {k: max(s["report"]["cpu_percent_of_a_core"] for s in v) for k, v in samples.items()}
    frames = {k: sum(s["report"]["frames"] for s in v) for k, v in samples.items()}
    answers = [s["report"]["answer"] for s in samples["modal"]]
    gone = [a["exit_to_modal_gone_ms"] for a in answers]
    if not all(a["modal_gone"] for a in answers) or None in gone:
        sys.exit(f"bench: S11: the modal did not go after `airlock approve`: {answers}")
    traced = {}
    calls = "epoll_wait,epoll_pwait,poll,ppoll,select,pselect6,futex,nanosleep,clock_nanosleep,read"
    for name, argv in arms.items():
        trace = work / f"s11-{name}.strace"
        settle(env)
        sample = run(["strace", "-f", "-ttt", "-T", "-e", f"trace={calls}", "-o", str(trace),
                      *argv], env)
        rep = sample["report"]
        counts = wakeup_syscalls(trace, rep["window_start_epoch_s"], rep["window_end_epoch_s"])
        traced[name] = {"syscalls_returned_in_window": counts, "total": sum(counts.values()),
                        "window_s": rep["window_s"],
                        "context_switches": rep["context_switches"]["total"]}
    excess = max(switches["modal"]) - max(switches["quiet"])
    excess_traced = traced["modal"]["total"] - traced["quiet"]["total"]
    write({"id": "S11", "scenario": f"idle windows of {seconds} s with the approval modal up and "
           "nobody answering, against the prompt waiting (the quiet window); then the answer "
           "from another process (`airlock approve CODE`)", "samples": samples,
           "context_switches": switches, "cpu_percent_worst": cpu, "frames": frames,
           "strace": traced, "approve_exit_to_modal_gone_ms": gone,
           "what_is_counted": "context switches: voluntary + nonvoluntary, summed over every "
                              "thread alive at the window's end (/proc/self/task/*/status), "
                              "end minus start; strace: the listed syscalls of every thread "
                              "that returned between the window's start and end",
           "goal": "no wake-ups beyond the quiet window's (context switches and traced syscalls); "
                   "the modal gone <= 100 ms after `airlock approve` exits",
           "meets_goal": excess <= 0 and excess_traced <= 0 and max(gone) <= 100,
           "summary": f"context switches in the window: modal {switches['modal']}, quiet "
                      f"{switches['quiet']}; strace, syscalls returned in the window: modal "
                      f"{traced['modal']['total']} {traced['modal']['syscalls_returned_in_window']}"
                      f", quiet {traced['quiet']['total']}; CPU {cpu['modal']:.3f} % / "
                      f"{cpu['quiet']:.3f} %; approve exit -> modal gone "
                      f"{', '.join(f'{g:.1f}' for g in gone)} ms"})


def main():
    if not Path(GNU_TIME).exists():
        sys.exit(f"bench: {GNU_TIME} is missing; install GNU time (apt-get install time)")
    if not AIRLOCK.exists():
        sys.exit(f"bench: {AIRLOCK} is missing; run scripts/bench.sh (it builds it)")
    chosen = sys.argv[1:] or ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10",
                              "S11", "S12"]
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(BUSY)]
    try:
        run_chosen(chosen)
    finally:
        for p in busy:
            p.kill()
            p.wait()


def run_chosen(chosen):
    with tempfile.TemporaryDirectory(prefix="airlock-bench-") as tmp:
        work = Path(tmp)
        (work / "ws").mkdir()
        env = dict(os.environ, AIRLOCK_HOME=str(work / "state"), HOME=str(work / "home"))
        env.pop("AIRLOCK_PROVIDER", None)
        for name in chosen:
            {"S1": s1, "S2": s2, "S3": s3, "S4": s4, "S5": s5, "S6": s6, "S7": s7, "S8": s8,
             "S9": s9, "S10": s10, "S11": s11, "S12": s12}[name.upper()](work, env)


if __name__ == "__main__":
    main()
