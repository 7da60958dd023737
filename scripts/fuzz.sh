#!/usr/bin/env bash
# A libFuzzer campaign over every fuzz target (make fuzz): builds them with clang (ASan + UBSan +
# libFuzzer) in build-fuzz, runs each for FUZZ_SECONDS (default 300) seeded from its corpora
# (fuzz/corpus/<target> in the tree, ../shared/data where present), keeps what it learns in
# build-fuzz/corpus/<target>, and writes crashing inputs to build-fuzz/findings/. Prints, per
# target: executions, coverage (libFuzzer's cov/ft), corpus size and findings.
# FUZZ_RUNS=N stops a target after N executions (FUZZ_SECONDS still caps its time).
#   FUZZ_TARGETS="npy png_decode" FUZZ_SECONDS=600 make fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
B=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-300}
CXX=${FUZZ_CXX:-clang++-14}
command -v "$CXX" > /dev/null || { echo "fuzz: $CXX not found (scripts/setup installs it)"; exit 1; }
# The libraries under test are instrumented too (fuzzer-no-link: coverage for libFuzzer to steer
# by; ASan/UBSan: their bugs caught where they happen), not only the targets' own files.
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
# The project is C++ only (no C compiler to set).
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$san" -DSTOKER_CUDA=OFF -DSTOKER_TESTS=OFF -DSTOKER_PYTHON=OFF > /dev/null
all=$(cd "$B/fuzz" && ls ./*.seeds | sed 's|^\./||; s|\.seeds$||' | sort)
targets=${FUZZ_TARGETS:-$all}
cmake --build "$B" -j "$(nproc)" --target $(for t in $targets; do echo "${t}_fuzzer"; done) > "$B/fuzz-build.log"
mkdir -p "$B/findings" "$B/logs"
# Leaks inside system libraries are not the targets' findings (fuzz/lsan_suppressions.txt).
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan_suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
summary="$B/fuzz-summary.txt"
printf "%-15s %12s %8s %8s %8s %s\n" target executions cov ft corpus findings | tee "$summary"
for t in $targets; do
  mkdir -p "$B/corpus/$t"
  seeds=()
  while read -r d; do [[ -n "$d" && -d "$d" ]] && seeds+=("$d"); done < "$B/fuzz/$t.seeds"
  "$B/fuzz/${t}_fuzzer" -max_total_time="$SECONDS_EACH" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} \
    -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$B/findings/$t-" "$B/corpus/$t" "${seeds[@]}" \
    > "$B/logs/$t.log" 2>&1 || true
  runs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$B/logs/$t.log" | grep -o "[0-9]*$" || echo "?")
  last=$(grep -E "#[0-9]+.*cov:" "$B/logs/$t.log" | tail -1)
  cov=$(echo "$last" | grep -o "cov: [0-9]*" | grep -o "[0-9]*" || echo "?")
  ft=$(echo "$last" | grep -o "ft: [0-9]*" | grep -o "[0-9]*" || echo "?")
  found=$(ls "$B/findings" | grep -c "^$t-" || true)
  printf "%-15s %12s %8s %8s %8s %s\n" "$t" "$runs" "$cov" "$ft" "$(ls "$B/corpus/$t" | wc -l)" \
    "$found" | tee -a "$summary"
done
