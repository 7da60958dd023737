#!/usr/bin/env bash
# The parity and drop-in suites against DALI's GPU backends, on the GPU machine (no registry
# there, 64 MiB per transfer). The same command runs in each of several back-to-back calls while
# the machine stays warm; each call leaves what it carried outside the repo copy, and the call
# that completes DALI builds stoker's module and runs the suites:
#   here:  bash ../shared/tools/dali/stage.sh .carry/dali    (DALI 2.4 in ~5 parts)
#          bash scripts/gpu_dali_suite.sh --stage-data       (.carry/shared, .carry/videos,
#                                                             .carry/nvcomp-inc, .carry/pylib
#                                                             (with nvJPEG2000),
#                                                             .carry/ffmpeg, .carry/lmdb)
#   there: call 1 carries .carry/dali/d1 and .carry/dali/d5; calls 2-4 d2, d3, d4, each with
#          some of .carry/shared/data's folders (gathered in $DATA; a call carries 64 MiB with
#          the tree); the last the rest with .carry/nvcomp-inc, .carry/videos, .carry/pylib,
#          .carry/ffmpeg and .carry/lmdb (FFmpeg is built there first, about a minute).
#          Every call runs  bash scripts/gpu_dali_suite.sh [pytest paths...]  (default: the
#          drop-in suite and the parity modules with GPU cases; name modules to run others).
# Logs and a summary go under $OUT. Environment: DALI_STATE (/root/dali), DATA
# (/root/suite-data), BUILD (/root/build-gpu), SUITE_BUDGET (seconds for pytest, 540).
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--stage-data" ]]; then
  # What the scripts and parity modules read, as they find it under ../shared/data, plus the
  # test videos (the GPU machine has no ffmpeg tool) and nvCOMP's header (DALI's staged copy
  # keeps nvCOMP's library, not its headers).
  mkdir -p .carry/shared/data/photos .carry/shared/data/containers .carry/shared/data/jpeg/dali \
    .carry/videos
  for d in photos/dali-imagenet-classes photos/dali-coco jpeg/dali/mixed containers/caffe-lmdb \
           containers/caffe2-lmdb containers/tfrecord containers/webdataset containers/dali-idx; do
    rm -rf ".carry/shared/data/$d"; cp -r "../shared/data/$d" ".carry/shared/data/$d"
  done
  python3 python/tests/video_fixtures.py .carry/videos > /dev/null
  # For the machine's Python 3.12: lz4 (decoders.inflate's examples compress with it), soundfile
  # with cffi and pycparser (the audio tests write their files with it; bench/audio.py's baseline
  # reads with it).
  rm -rf .carry/pylib; mkdir -p .carry/pylib
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 -d .carry/pylib/whl lz4 soundfile cffi pycparser
  for w in .carry/pylib/whl/*.whl; do python3 -m zipfile -e "$w" .carry/pylib/site; done
  rm -rf .carry/pylib/whl
  # nvJPEG2000's and nvTIFF's headers and libraries (DALI's staged copy has none): stoker's mixed
  # decoders build and decode JPEG 2000 and TIFF with them there, and DALI's nvImageCodec finds
  # them beside DALI.
  python3 - <<'EOF'
import nvidia, os, shutil
for lib in ("nvjpeg2k", "nvtiff"):
    for p in nvidia.__path__:
        d = os.path.join(p, lib)
        if os.path.isdir(os.path.join(d, "lib")):
            shutil.copytree(d, f".carry/pylib/{lib}", dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
            break
    else:
        raise SystemExit(f"{lib}: pip install nvidia-{lib}-cu13 (scripts/setup does)")
EOF
  python3 - <<'EOF'
import nvidia, os, shutil
for p in nvidia.__path__:
    inc = os.path.join(p, "libnvcomp", "include")
    if os.path.isdir(inc):
        shutil.copytree(inc, ".carry/nvcomp-inc/include", dirs_exist_ok=True)
        break
else:
    raise SystemExit("nvCOMP's headers: pip install nvidia-libnvcomp-cu13 (scripts/setup does)")
EOF
  # FFmpeg's source (built there: the video examples and readers) and liblmdb (Debian 12's
  # header and library: the Caffe readers; its C ABI runs on the machine's newer glibc).
  bash scripts/gpu_ffmpeg.sh stage .carry/ffmpeg > /dev/null
  rm -rf .carry/lmdb; mkdir -p .carry/lmdb/include .carry/lmdb/lib
  cp /usr/include/lmdb.h .carry/lmdb/include/
  cp -P /usr/lib/x86_64-linux-gnu/liblmdb.so* .carry/lmdb/lib/
  du -sh .carry/ffmpeg .carry/lmdb
  du -sh .carry/dali/d* .carry/shared .carry/videos .carry/nvcomp-inc .carry/pylib
  exit 0
fi

OUT=${OUT:-$PWD/gpu_dali_out}; mkdir -p "$OUT"
STATE=${DALI_STATE:-/root/dali}; DATA=${DATA:-/root/suite-data}; BUILD=${BUILD:-/root/build-gpu}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
# What a command needs to import stoker's module and DALI as the suites do.
suite_env() {
  [[ -d "$STATE/codecs/lib" ]] && bash scripts/gpu_codecs.sh env "$STATE/codecs"
  [[ -d "$STATE/ffmpeg/lib" ]] && echo "export FFMPEG_PREFIX=$STATE/ffmpeg"
  local nvcomp; nvcomp=$(ls "$STATE"/site/nvidia/libnvcomp/lib*/libnvcomp.so* 2>/dev/null | head -1)
  # nvJPEG2000 comes with DALI's dependencies (stoker's mixed decoders use it for JPEG 2000).
  local nvjpeg2k; nvjpeg2k=$(ls "$STATE"/site/nvidia/nvjpeg2k/lib/libnvjpeg2k.so* 2>/dev/null | head -1)
  local nvtiff; nvtiff=$(ls "$STATE"/site/nvidia/nvtiff/lib/libnvtiff.so* 2>/dev/null | head -1)
  echo "export PYTHONPATH=$BUILD/python:$STATE/site:$STATE/pylib"
  echo "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:\${LD_LIBRARY_PATH:-}"
  echo "export STOKER_SHARED_DATA=$DATA STOKER_TEST_VIDEOS=$DATA/videos STOKER_NVCOMP_LIBRARY=$nvcomp"
  [[ -n "$nvjpeg2k" ]] && echo "export STOKER_NVJPEG2K_LIBRARY=$nvjpeg2k"
  [[ -n "$nvtiff" ]] && echo "export STOKER_NVTIFF_LIBRARY=$nvtiff"
  # nvTIFF opens nvCOMP itself (LZW and Deflate) through the loader's path.
  [[ -n "$nvcomp" ]] && echo "export LD_LIBRARY_PATH=$(dirname "$nvcomp"):\${LD_LIBRARY_PATH:-}"
  return 0
}
# `eval "$(bash scripts/gpu_dali_suite.sh --env)"` in a later call: a benchmark against DALI.
[[ "${1:-}" == "--env" ]] && { suite_env; exit 0; }

for part in .carry/dali/d*; do
  [[ -d "$part" ]] && bash "$part/unpack.sh" "$part" "$STATE" | tee -a "$OUT/summary.txt"
done
[[ -d .carry/shared/data ]] && mkdir -p "$DATA" && cp -r .carry/shared/data/. "$DATA/"
[[ -d .carry/videos ]] && mkdir -p "$DATA/videos" && cp .carry/videos/* "$DATA/videos/"
[[ -d .carry/nvcomp-inc/include ]] && mkdir -p "$STATE/nvcomp-inc" \
  && cp -r .carry/nvcomp-inc/include "$STATE/nvcomp-inc/"
[[ -d .carry/pylib/site ]] && mkdir -p "$STATE/pylib" && cp -r .carry/pylib/site/. "$STATE/pylib/"
for lib in nvjpeg2k nvtiff; do
  [[ -d .carry/pylib/$lib ]] && mkdir -p "$STATE/site/nvidia/$lib" \
    && cp -r ".carry/pylib/$lib/." "$STATE/site/nvidia/$lib/"
done
[[ -d .carry/lmdb/lib ]] && mkdir -p "$STATE/lmdb" && cp -rP .carry/lmdb/. "$STATE/lmdb/"
# The codec libraries (scripts/gpu_codecs.sh): decoders.audio, WebP, TIFF, JPEG 2000.
# Once: a carried folder stays in the repo copy for later calls, and copying it again would undo
# the .pc files' prefix that `gpu_codecs.sh env` writes while the background build reads them.
[[ -d .carry/codecs/lib && ! -d "$STATE/codecs" ]] && mkdir -p "$STATE/codecs" \
  && cp -r .carry/codecs/. "$STATE/codecs/"
if [[ -d .carry/ffmpeg && ! -d "$STATE/ffmpeg/lib" ]]; then
  log "FFmpeg (from .carry/ffmpeg)"
  bash scripts/gpu_ffmpeg.sh build .carry/ffmpeg "$STATE/ffmpeg" | tee -a "$OUT/summary.txt"
fi

# The module builds in a session of its own as soon as its headers are there, so the calls that
# carry DALI's other parts overlap it; the call that runs the suites waits for it. The build uses
# a copy of the tree: the repo copy is laid anew at each call.
build_module() {
  eval "$(suite_env)"
  local extra=()
  for l in /usr/lib/x86_64-linux-gnu/liblz4.so{,.1}; do [[ -e $l ]] && extra=(-DSTOKER_LZ4_LIBRARY="$l"); done
  [[ -e "$STATE/lmdb/lib/liblmdb.so" ]] && extra+=(-DSTOKER_LMDB_INCLUDE="$STATE/lmdb/include" \
    -DSTOKER_LMDB_LIBRARY="$STATE/lmdb/lib/liblmdb.so")
  cmake -S "$STATE/src" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_CUDA=ON \
    -DSTOKER_CUDA_ARCHITECTURES=native -DSTOKER_TESTS=OFF -DPython_EXECUTABLE="$(command -v python3)" \
    -DSTOKER_NVCOMP_INCLUDE="$STATE/nvcomp-inc/include" "${extra[@]}" \
    && cmake --build "$BUILD" -j "$(nproc)" --target _stoker
}
if [[ -d "$STATE/nvcomp-inc/include" && ! -e "$STATE/build.started" ]]; then
  log "build (module only, in the background)"
  rm -rf "$STATE/src"; mkdir -p "$STATE/src"
  tar --exclude=./.carry --exclude=./.git -cf - . | tar -C "$STATE/src" -xf -
  touch "$STATE/build.started"
  export -f build_module suite_env; export STATE BUILD DATA
  setsid bash -c "cd '$STATE/src'; build_module > '$STATE/build.log' 2>&1; echo \$? > '$STATE/build.rc'" \
    < /dev/null > /dev/null 2>&1 &
fi
if [[ ! -d "$STATE/site/nvidia/dali" ]]; then
  log "DALI not complete yet: carry the next part"; exit 0
fi
if [[ ! -e "$STATE/build.started" || ! -d "$DATA/videos" ]]; then
  log "carry .carry/nvcomp-inc and .carry/videos before the run"; exit 0
fi
while [[ ! -e "$STATE/build.rc" ]]; do sleep 5; done
cp "$STATE/build.log" "$OUT/build.log"
if [[ "$(cat "$STATE/build.rc")" != 0 ]]; then
  log "build FAILED"; grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1
fi
grep -E "liblz4|nvCOMP|liblmdb|FFmpeg|sndfile|KissFFT|cuFFT" "$OUT/build.log" | tee -a "$OUT/summary.txt"

eval "$(suite_env)"
log "suites against DALI $(python3 -c 'import nvidia.dali as d; print(d.__version__)' 2>/dev/null)"
(( $# )) || set -- python/tests/parity/test_dropin.py $(grep -l "gpu" \
  python/tests/parity/test_parity_*.py)
timeout "${SUITE_BUDGET:-540}" python3 -m pytest "$@" -q -rfs -p no:cacheprovider \
  > "$OUT/pytest.log" 2>&1
rc=$?
tail -40 "$OUT/pytest.log" | tee -a "$OUT/summary.txt"
(( rc == 124 )) && log "pytest ran past ${SUITE_BUDGET:-540} s"
exit $rc
