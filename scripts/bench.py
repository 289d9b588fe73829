#!/usr/bin/env python3
"""Whole-process benchmarks: each scenario runs its arm and its floor interleaved (A B A B ...),
reports medians and the ratio, and writes one JSON per scenario to target/bench/.

Run through scripts/bench.sh (it builds the release binary first). BENCH_ROUNDS sets the rounds.
"""

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AIRLOCK = ROOT / "target" / "release" / "airlock"
OUT = ROOT / "target" / "bench"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


GNU_TIME = "/usr/bin/time"


def run(argv, env, rss=False):
    """Runs one sample: wall seconds and, with `rss`, the peak RSS (KiB) GNU time reports.

    (A child forked from this Python process would report Python's own peak: Linux keeps the
    high-water mark across exec. GNU time is a small C program, so its child starts near zero.)
    """
    with tempfile.NamedTemporaryFile("r") as rss_file:
        if rss:
            argv = [GNU_TIME, "-f", "%M", "-o", rss_file.name, *argv]
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"bench: {' '.join(map(str, argv))} failed ({done.returncode}): "
                     f"{done.stderr.decode(errors='replace').strip()}")
        sample = {"wall_s": wall}
        if rss:
            sample["max_rss_kib"] = int(rss_file.read().split()[-1])
        return sample


def interleave(arms, env, rss=False):
    """Runs every arm once per round, in turn, and returns each arm's samples."""
    samples = {name: [] for name in arms}
    for _ in range(ROUNDS):
        for name, argv in arms.items():
            samples[name].append(run(argv, env, rss))
    return samples


def median(samples, key):
    return statistics.median(s[key] for s in samples)


def scenario(work, name, calls):
    """A scripted turn: one batch of bash calls, then a closing message."""
    path = work / f"{name}.json"
    steps = [{"calls": [{"tool": "bash", "args": {"command": c}} for c in calls]}] if calls else []
    steps.append({"say": "done"})
    path.write_text(json.dumps({"name": name, "prompt": name, "steps": steps}))
    return path


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


def write(report):
    OUT.mkdir(parents=True, exist_ok=True)
    report["rounds"] = ROUNDS
    report["loadavg"] = os.getloadavg()
    report["versions"] = versions()
    (OUT / f"{report['id']}.json").write_text(json.dumps(report, indent=2))
    verdict = "meets" if report["meets_goal"] else "MISSES"
    print(f"{report['id']}: {report['summary']} — goal {report['goal']}: {verdict}")


def s1(work, env):
    lines = 10_000_000
    arms = {
        "airlock": exec_argv(work, scenario(work, "s1", [f"seq 1 {lines}"])),
        "floor": ["bash", "-c", f"seq 1 {lines} | cat > /dev/null"],
    }
    samples = interleave(arms, env)
    a, f = median(samples["airlock"], "wall_s"), median(samples["floor"], "wall_s")
    write({"id": "S1-headless", "scenario": f"an approved tool prints {lines} lines, headless "
           "(airlock exec, every chunk printed as a JSON event to /dev/null)",
           "samples": samples, "median_s": {"airlock": a, "floor": f}, "ratio": a / f,
           "goal": "<= 1.25x the floor", "meets_goal": a / f <= 1.25,
           "summary": f"median {a:.3f} s vs floor {f:.3f} s = {a / f:.2f}x"})


def s3(work, env):
    arms = {
        "airlock": exec_argv(work, scenario(work, "s3", ["sleep 1"] * 8)),
        "floor": ["sleep", "1"],
    }
    samples = interleave(arms, env)
    a, f = median(samples["airlock"], "wall_s"), median(samples["floor"], "wall_s")
    worst = max(s["wall_s"] for s in samples["airlock"])
    write({"id": "S3", "scenario": "8 approved `sleep 1` calls from one model turn (whole process)",
           "samples": samples, "median_s": {"airlock": a, "floor": f}, "max_s": worst,
           "ratio": a / f, "goal": "all finished <= 1.10 s", "meets_goal": worst <= 1.10,
           "summary": f"median {a:.3f} s, worst {worst:.3f} s (floor {f:.3f} s)"})


def s5(work, env):
    arms = {
        "idle": exec_argv(work, scenario(work, "s5-idle", [])),
        "1M": exec_argv(work, scenario(work, "s5-1m", ["seq 1 1000000"])),
        "10M": exec_argv(work, scenario(work, "s5-10m", ["seq 1 10000000"])),
    }
    samples = interleave(arms, env, rss=True)
    rss = {k: median(v, "max_rss_kib") for k, v in samples.items()}
    grow = {k: (rss[k] - rss["idle"]) / 1024 for k in ("1M", "10M")}
    flat = abs(grow["10M"] - grow["1M"]) <= 4
    write({"id": "S5-headless", "scenario": "peak RSS of a whole headless run printing 1M and 10M "
           "lines, against a run with no tool", "samples": samples, "median_rss_kib": rss,
           "growth_mib": grow, "goal": "+<= 32 MiB over idle, flat in N",
           "meets_goal": max(grow.values()) <= 32 and flat,
           "summary": f"idle {rss['idle'] / 1024:.1f} MiB, +{grow['1M']:.1f} MiB at 1M, "
                      f"+{grow['10M']:.1f} MiB at 10M"})


def main():
    if not Path(GNU_TIME).exists():
        sys.exit(f"bench: {GNU_TIME} is missing; install GNU time (apt-get install time)")
    if not AIRLOCK.exists():
        sys.exit(f"bench: {AIRLOCK} is missing; run scripts/bench.sh (it builds it)")
    chosen = sys.argv[1:] or ["S1", "S3", "S5"]
    with tempfile.TemporaryDirectory(prefix="airlock-bench-") as tmp:
        work = Path(tmp)
        (work / "ws").mkdir()
        env = dict(os.environ, AIRLOCK_HOME=str(work / "state"), HOME=str(work / "home"))
        env.pop("AIRLOCK_PROVIDER", None)
        for name in chosen:
            {"S1": s1, "S3": s3, "S5": s5}[name.upper()](work, env)


if __name__ == "__main__":
    main()
