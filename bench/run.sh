#!/usr/bin/env bash
# Runs the benchmarks with their figures under $OUT (default bench_out/). Expects a build with
# the Python module in $BUILD (default build-gpu, as scripts/gpu_check.sh makes it).
#   BENCH_PHOTOS: a folder of JPEGs for the decode benchmark (default: .carry/photos, a copy of
#   ../shared/data/photos/dali-imagenet-classes carried to the GPU machine; else the shared one)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench_out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/$BUILD/python"
if python3 -c "import sys, stoker._stoker as s; sys.exit(0 if s.cuda_available() else 1)"; then
  echo "== the fused augmentation kernel alone"
  "$BUILD/bench/stoker_bench_resample_gpu" | tee "$OUT/resample_gpu.txt"
  echo "== GPU training feed (decode -> RRC -> flip -> normalize, fp16 NCHW) vs torch DataLoader"
  BENCH_JPEGS=${BENCH_JPEGS:-.carry/bench-jpegs}
  if [[ -d "$BENCH_JPEGS" ]]; then
    echo "== nvJPEG's hardware decoder alone (the engines' ceiling)"
    "$BUILD/bench/stoker_bench_nvjpeg" "$BENCH_JPEGS" 3 | tee "$OUT/nvjpeg.md"
    GPU_BENCH_ARGS="--images $BENCH_JPEGS ${GPU_BENCH_ARGS:-}"
  fi
  # 12 pipeline threads: the README's figures (8 and 16 are in bench/RESULTS.md).
  GPU_BENCH_ARGS="--threads ${GPU_BENCH_THREADS:-12} ${GPU_BENCH_ARGS:-}"
  python3 bench/gpu_pipeline.py ${GPU_BENCH_ARGS:-} > "$OUT/gpu_pipeline.md"
  cat "$OUT/gpu_pipeline.md"
fi
[[ -n "${BENCH_GPU_ONLY:-}" ]] && exit 0
echo "== readers: 1 GiB per format from the page cache"
python3 bench/readers.py --gb "${READERS_GB:-1.0}" --dir "${BENCH_DIR:-/tmp/stoker-bench-readers}" \
  --json "$OUT/readers.json"
PHOTOS=${BENCH_PHOTOS:-.carry/photos}
[[ -d "$PHOTOS" ]] || PHOTOS=../shared/data/photos/dali-imagenet-classes
if [[ -d "$PHOTOS" ]]; then
  echo "== decode + random-resized-crop + flip + normalize vs PIL + torchvision"
  python3 bench/decode_augment.py --images "$PHOTOS" --threads "${DECODE_THREADS:-1,16}" \
    > "$OUT/decode_augment.md"
  cat "$OUT/decode_augment.md"
else
  echo "== decode benchmark skipped: no photos (set BENCH_PHOTOS)"
fi
