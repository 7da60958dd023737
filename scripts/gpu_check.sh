#!/usr/bin/env bash
# Builds stoker with CUDA on the GPU machine and runs every C++ test (GPU tests included) and
# the Python tests, with a timeout on each, logs under $OUT (or ./gpu_check_out).
#   scripts/gpu_check.sh            build + all tests (GPU_CHECK_PYTHON=0: the C++ ones only;
#                                   GPU_CHECK_CPP=0: the Python ones only; GPU_CHECK_SHARD=k/n:
#                                   the k-th of n parts of the Python test files, as the whole
#                                   Python suite takes longer than one call there: run 1/2 with
#                                   the C++ tests, then GPU_CHECK_CPP=0 GPU_CHECK_SHARD=2/2)
#   scripts/gpu_check.sh --bench    build + the headline benchmark (bench/harness.py --plan
#                                   headline: the README's figures, ~5 minutes), no tests
#   scripts/gpu_check.sh --all      build + all tests + the headline benchmark
#   BENCH_PLAN (another bench/harness.py plan), BENCH_PROFILE=full, BENCH_ITEMS=A:B (part of
#   the plan) and BENCH_AB_ENV=K=V (with BENCH_PLAN=ab / ab-cpu / ab-train: without and with
#   that environment) change what --bench runs; BENCH_SECTIONS other bench/run.sh sections
#   (e.g. "fedgap" with FED_GAP_ARGS: where a fed training step's time goes).
# One device call (10 minutes) takes either of the first two, not always --all. The full plan
# and the other benchmark sections: bench/run.sh (BENCH_SECTIONS, HARNESS_ARGS="--items A:B"
# over several calls, then bench/harness.py --merge).
# The GPU machine has no network: everything must already be installed there (it is: CUDA,
# gtest headers, libjpeg-turbo, nanobind, numpy, pytest; see the device notes in docs/dev).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_check_out}
# The device call's limit (10 minutes): the Python tests get what is left of it, so a hung test
# is named in the summary instead of the call ending with nothing said.
BUDGET=${GPU_CHECK_BUDGET:-570}
START=$SECONDS
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
JOBS=$(nproc)
status=0
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

{ nvidia-smi; nvcc --version; } > "$OUT/machine.txt" 2>&1
# What the machine lacks, when carried (docs/dev/gpu_machine.md): FFmpeg's source (built once per
# machine, outside the repo copy), the codec libraries, liblmdb and the test videos.
EXTRA=()
if [[ -d .carry/ffmpeg && -z "${FFMPEG_PREFIX:-}" ]]; then
  [[ -d /root/ffmpeg/lib ]] || { log "FFmpeg (from .carry/ffmpeg)"
    bash scripts/gpu_ffmpeg.sh build .carry/ffmpeg /root/ffmpeg > "$OUT/ffmpeg.log" 2>&1 \
      || log "FFmpeg build FAILED"; }
  export FFMPEG_PREFIX=/root/ffmpeg
fi
if [[ -d .carry/codecs ]]; then  # copied out: the next call replaces the repo copy
  mkdir -p /root/codecs && cp -r .carry/codecs/. /root/codecs/
  eval "$(bash scripts/gpu_codecs.sh env /root/codecs)"
fi
[[ -e .carry/lmdb/lib/liblmdb.so ]] && mkdir -p /root/lmdb && cp -rP .carry/lmdb/. /root/lmdb/ \
  && EXTRA+=(-DSTOKER_LMDB_INCLUDE=/root/lmdb/include -DSTOKER_LMDB_LIBRARY=/root/lmdb/lib/liblmdb.so)
[[ -d .carry/videos ]] && export STOKER_TEST_VIDEOS=$PWD/.carry/videos
log "configure"
# STOKER_TESTS=ON explicitly: a build folder configured without tests (a benchmark's) keeps
# that setting in its cache otherwise.
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_CUDA=ON -DSTOKER_TESTS=ON -DSTOKER_CUDA_ARCHITECTURES=native \
     -DPython_EXECUTABLE="$(command -v python3)" "${EXTRA[@]}" > "$OUT/configure.log" 2>&1; then
  # Ninja may be missing there; fall back to Makefiles.
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTOKER_CUDA=ON -DSTOKER_TESTS=ON -DSTOKER_CUDA_ARCHITECTURES=native \
     -DPython_EXECUTABLE="$(command -v python3)" "${EXTRA[@]}" > "$OUT/configure.log" 2>&1 || {
    log "configure FAILED"; tail -30 "$OUT/configure.log"; exit 1; }
fi
grep -A22 "stoker .* configuration" "$OUT/configure.log" | tee -a "$OUT/summary.txt"
log "build"
if ! cmake --build "$BUILD" -j "$JOBS" > "$OUT/build.log" 2>&1; then
  log "build FAILED"; grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1
fi
BUILD=$(cd "$BUILD" && pwd)  # absolute from here on (BUILD may be given either way)
MODE=${1:-}
if [[ "$MODE" != "--bench" ]]; then
if [[ "${GPU_CHECK_CPP:-1}" != 0 ]]; then
log "C++ tests"
timeout 900 ctest --test-dir "$BUILD" --output-on-failure -j 4 --timeout 300 \
  > "$OUT/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed" "$OUT/ctest.log" | tee -a "$OUT/summary.txt"
grep -E "\(Failed\)|\(Timeout\)|SEGFAULT" "$OUT/ctest.log" | tee -a "$OUT/summary.txt"
echo "skipped (they need ../shared, liblmdb or protobuf): $(grep -c '(Skipped)' "$OUT/ctest.log")" \
  | tee -a "$OUT/summary.txt"
log "compute-sanitizer (memcheck, racecheck) over the GPU tests"
if command -v compute-sanitizer > /dev/null 2>&1 || [[ -x /usr/local/cuda/bin/compute-sanitizer ]]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck; do
    for t in "$BUILD/src/kernels/stoker_kernels_gpu_test" "$BUILD/src/core/stoker_core_test"; do
      timeout 600 "$CS" --tool "$tool" --error-exitcode 3 "$t" \
        --gtest_filter='*Gpu*:MemoryPool.*' >> "$OUT/sanitizer.log" 2>&1 \
        || { status=1; echo "$tool FAILED on $t" | tee -a "$OUT/summary.txt"; }
    done
  done
  PYTHONPATH="$BUILD/python" timeout 900 "$CS" --error-exitcode 3 \
    python3 -m pytest python/tests/test_gpu.py python/tests/test_gpu_decoders.py -q -o addopts="" -p no:cacheprovider \
    -k "not torch" >> "$OUT/sanitizer.log" 2>&1 \
    || { status=1; echo "memcheck FAILED on test_gpu.py" | tee -a "$OUT/summary.txt"; }
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log" | sort | uniq -c \
    | tee -a "$OUT/summary.txt"
else
  log "compute-sanitizer not found: skipped"
fi
fi
if [[ "${GPU_CHECK_PYTHON:-1}" != 0 ]]; then
log "Python tests"
# Tools that never touch the GPU (dataset making, container writing, the harness's bookkeeping)
# are left to CI: the device's minutes go to GPU work.
LEFT=$(( BUDGET - (SECONDS - START) )); (( LEFT < 120 )) && LEFT=120
TESTS=(python/tests)
if [[ -n "${GPU_CHECK_SHARD:-}" ]]; then  # every n-th file from the k-th: similar halves
  k=${GPU_CHECK_SHARD%/*} n=${GPU_CHECK_SHARD#*/}
  mapfile -t TESTS < <(find python/tests -name 'test_*.py' | sort \
    | grep -v -e test_make_dataset -e test_convert | awk -v k="$k" -v n="$n" 'NR % n == k % n')
  log "Python tests, part $GPU_CHECK_SHARD: ${#TESTS[@]} files"
fi
PYTHONPATH="$BUILD/python" timeout "$LEFT" python3 -m pytest "${TESTS[@]}" -v \
  -o addopts="" -p no:cacheprovider --ignore=python/tests/test_make_dataset.py \
  --ignore=python/tests/test_convert.py \
  --deselect=python/tests/test_bench_harness.py::test_parts_merge_into_one_table \
  --deselect=python/tests/test_bench_harness.py::test_a_failing_loader_is_reported_not_fatal \
  --deselect=python/tests/test_bench_harness.py::test_a_measurement_over_its_time_is_killed_and_its_stacks_kept \
  --deselect=python/tests/test_bench_harness.py::test_a_fed_gap_variant_over_its_time_is_killed_with_its_stacks_kept \
  > "$OUT/pytest.log" 2>&1
rc=$?
(( rc != 0 )) && status=1
grep -E "^(FAILED|ERROR) " "$OUT/pytest.log" | tee -a "$OUT/summary.txt"
if (( rc == 124 )); then  # -v writes each test's name before it runs: the last line is the hung one
  echo "Python tests stopped after ${LEFT} s, in: $(tail -1 "$OUT/pytest.log")" | tee -a "$OUT/summary.txt"
else
  tail -1 "$OUT/pytest.log" | tee -a "$OUT/summary.txt"
fi
fi
fi
if [[ "$MODE" == "--bench" || "$MODE" == "--all" ]]; then
  log "benchmark (bench/run.sh ${BENCH_SECTIONS:-harness} --plan ${BENCH_PLAN:-headline})"
  BENCH_SECTIONS=${BENCH_SECTIONS:-harness} BENCH_COUNT=${BENCH_COUNT:-2560} \
    HARNESS_ARGS="--plan ${BENCH_PLAN:-headline} ${BENCH_PROFILE:+--profile $BENCH_PROFILE} ${BENCH_AB_ENV:+--ab-env $BENCH_AB_ENV} ${BENCH_ITEMS:+--items $BENCH_ITEMS}" \
    timeout 540 bench/run.sh > "$OUT/bench.log" 2>&1 || status=1
  grep -v "^|" "$OUT/bench.log" | tail -20 | tee -a "$OUT/summary.txt"
fi
log "done: status $status"
exit $status
