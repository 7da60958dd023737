#!/usr/bin/env bash
# Runs the benchmarks with their figures under $OUT (default bench_out/). Expects a build with
# the Python module in $BUILD (default build-gpu, as scripts/gpu_check.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench_out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/$BUILD/python"
echo "== readers: 1 GiB per format from the page cache"
python3 bench/readers.py --gb "${READERS_GB:-1.0}" --dir "${BENCH_DIR:-/tmp/stoker-bench-readers}" \
  --json "$OUT/readers.json"
