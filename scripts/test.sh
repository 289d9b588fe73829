#!/usr/bin/env bash
# The test command: installs the mock servers the provider tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/test-servers.sh
cargo test "$@"
