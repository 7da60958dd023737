#!/usr/bin/env bash
# Runs the benchmarks with their figures under $OUT (default bench_out/). Expects a build with
# the Python module in $BUILD (default build-gpu, as scripts/gpu_check.sh makes it).
#   BENCH_SECTIONS: which sections, space-separated (default: all of them)
#     harness  stoker vs the alternatives (bench/harness.py) on an ImageNet-like dataset made by
#              scripts/make_dataset.py from the bench source photos (.carry/bench-sources, a copy
#              of the shared ones carried to the GPU machine; else ../shared's). HARNESS_ARGS
#              are passed on (e.g. "--part 1/2" to spread the plan over device calls).
#     kernels  the fused augmentation kernel, nvJPEG's engines alone (and their CUDA calls per
#              image), and the GPU training feed
#              in its decoder configurations (bench/gpu_pipeline.py)
#     fedgap   where a fed training step's time goes (bench/fed_gap.py; FED_GAP_ARGS passed on,
#              e.g. "--variants fed,fed-pin --profile-steps 30"); not in the default sections
#     readers  container readers against raw reads
#     numpygpu readers.numpy with device="gpu" against DALI's GPU (GDS) reader (bench/numpy_gpu.py;
#              needs DALI: eval "$(bash scripts/gpu_dali_suite.sh --env)"); not in the defaults
#     decode   decode + augment per core against PIL + torchvision
#   BENCH_DATA: where the dataset is made (default /tmp/stoker-bench-data; reused when there)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench_out}
BUILD=${BUILD:-build-gpu}
SECTIONS=${BENCH_SECTIONS:-harness kernels readers decode}
mkdir -p "$OUT"
[[ "$BUILD" == /* ]] || BUILD="$PWD/$BUILD"
export PYTHONPATH="$BUILD/python"
has() { [[ " $SECTIONS " == *" $1 "* ]]; }
GPU=0
python3 -c "import sys, stoker._stoker as s; sys.exit(0 if s.cuda_available() else 1)" && GPU=1
DATA=${BENCH_DATA:-/tmp/stoker-bench-data}
SOURCES=.carry/bench-sources
[[ -d "$SOURCES" ]] || SOURCES=""
if has harness || has kernels || has fedgap; then
  if [[ ! -f "$DATA/MANIFEST.json" ]]; then
    echo "== dataset (scripts/make_dataset.py)"
    python3 scripts/make_dataset.py "$DATA" --count "${BENCH_COUNT:-2560}" \
      ${SOURCES:+--src "$SOURCES"} | tee "$OUT/dataset.txt"
  fi
  cp "$DATA/MANIFEST.md" "$OUT/dataset-manifest.md"
fi
if has harness; then
  echo "== stoker vs the alternatives (bench/harness.py)"
  python3 bench/harness.py --data "$DATA/jpeg" --json "$OUT/harness.json" --logs "$OUT/hangs" \
    --markdown "$OUT/harness.md" ${HARNESS_ARGS:-} || echo "(some measurements failed)"
fi
if has fedgap; then
  echo "== where a fed training step's time goes (bench/fed_gap.py)"
  python3 bench/fed_gap.py --data "$DATA/jpeg" --json "$OUT/fed_gap.json" ${FED_GAP_ARGS:-} \
    | tee "$OUT/fed_gap.md"
fi
if has kernels && [[ $GPU == 1 ]]; then
  echo "== the fused augmentation kernel alone"
  "$BUILD/bench/stoker_bench_resample_gpu" | tee "$OUT/resample_gpu.txt"
  echo "== nvJPEG's hardware decoder alone (the engines' ceiling)"
  "$BUILD/bench/stoker_bench_nvjpeg" "$DATA/jpeg" 3 | tee "$OUT/nvjpeg.md"
  if [[ -x "$BUILD/bench/stoker_bench_nvjpeg_calls" ]]; then  # built where nvjpeg.h was found
    echo "== nvJPEG's CUDA calls per image, per way of calling it"
    "$BUILD/bench/stoker_bench_nvjpeg_calls" "$DATA/jpeg" 2 | tee "$OUT/nvjpeg_calls.md"
  fi
  echo "== GPU training feed (decode -> RRC -> flip -> normalize, fp16 NCHW) vs torch DataLoader"
  # 12 pipeline threads: the README's figures (the harness measures 4 and 16).
  python3 bench/gpu_pipeline.py --images "$DATA/jpeg" --threads "${GPU_BENCH_THREADS:-12}" \
    ${GPU_BENCH_ARGS:-} > "$OUT/gpu_pipeline.md"
  cat "$OUT/gpu_pipeline.md"
fi
if has readers; then
  echo "== readers: 1 GiB per format from the page cache"
  python3 bench/readers.py --gb "${READERS_GB:-1.0}" --dir "${BENCH_DIR:-/tmp/stoker-bench-readers}" \
    --json "$OUT/readers.json"
fi
if has numpygpu; then
  echo "== readers.numpy on the GPU against DALI's GDS reader"
  python3 bench/numpy_gpu.py --dir "${NPY_DIR:-/tmp/stoker-bench-npy}" ${NUMPY_GPU_ARGS:-} \
    --json "$OUT/numpy_gpu.json" | tee "$OUT/numpy_gpu.md"
fi
if has decode; then
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
fi
