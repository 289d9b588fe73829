#!/usr/bin/env bash
# Whole-process benchmarks (see BENCHMARKS.md): builds the release binary, then runs each scenario
# against its floor, interleaved, and writes target/bench/<id>.json.
#   scripts/bench.sh            # every scenario, S1 to S11
#   BENCH_ROUNDS=9 scripts/bench.sh S3
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
exec python3 scripts/bench.py "$@"
