#!/usr/bin/env bash
# The optional codec libraries for the GPU machine, which has none of their -dev packages (and no
# registry): Debian's libraries and headers for libwebp, libtiff, OpenJPEG, libsndfile and KissFFT
# with the libraries they need that Ubuntu 24.04 lacks, and pkg-config files naming them, so that
# CMake finds them there as it does here (cfitsio stays behind: it links libcurl and its ~25
# libraries).
#   here:  bash scripts/gpu_codecs.sh stage .carry/codecs          (about 10 MB)
#   there: eval "$(bash scripts/gpu_codecs.sh env .carry/codecs)"   before CMake configures
set -euo pipefail
mode=${1:?stage or env}; dir=${2:?folder}
case "$mode" in
stage)
  rm -rf "$dir"; mkdir -p "$dir/include" "$dir/lib/pkgconfig"
  libs=$(ldd /usr/lib/x86_64-linux-gnu/lib{webp,webpdemux,tiff,openjp2,sndfile,kissfft-float}.so \
         | awk '/=> \//{print $3}' | grep -v -E '/lib(c|m|gcc_s|stdc\+\+|z|lzma|zstd|pthread|dl)\.so' \
         | sort -u)
  for l in $libs /usr/lib/x86_64-linux-gnu/lib{webp,webpdemux,tiff,openjp2,sndfile,kissfft-float}.so*; do
    cp -P "$l" "$dir/lib/"; [[ -L "$l" ]] && cp "$(readlink -f "$l")" "$dir/lib/"
  done
  cp -r /usr/include/webp /usr/include/kissfft "$dir/include/"
  cp /usr/include/x86_64-linux-gnu/tiff*.h /usr/include/tiff*.h "$dir/include/" 2>/dev/null || true
  cp -r /usr/include/openjpeg-2.5 "$dir/include/"
  cp /usr/include/sndfile.h "$dir/include/"
  pc() {  # name, version, cflags suffix, libs
    printf 'prefix=PREFIX\nName: %s\nDescription: carried\nVersion: %s\nCflags: -I${prefix}/include%s\nLibs: -L${prefix}/lib %s\n' \
      "$1" "$2" "$3" "$4" > "$dir/lib/pkgconfig/$1.pc"
  }
  pc libwebp "$(pkg-config --modversion libwebp)" "" -lwebp
  pc libwebpdemux "$(pkg-config --modversion libwebpdemux)" "" -lwebpdemux
  pc libtiff-4 "$(pkg-config --modversion libtiff-4)" "" -ltiff
  pc libopenjp2 "$(pkg-config --modversion libopenjp2)" " -I\${prefix}/include/openjpeg-2.5" -lopenjp2
  pc sndfile "$(pkg-config --modversion sndfile)" "" -lsndfile
  du -sh "$dir" ;;
env)
  d=$(cd "$dir" && pwd)
  sed -i "s|^prefix=.*|prefix=$d|" "$d"/lib/pkgconfig/*.pc
  echo "export PKG_CONFIG_PATH=$d/lib/pkgconfig:\${PKG_CONFIG_PATH:-}"
  echo "export CMAKE_PREFIX_PATH=$d:\${CMAKE_PREFIX_PATH:-}"
  echo "export LD_LIBRARY_PATH=$d/lib:\${LD_LIBRARY_PATH:-}" ;;
*) echo "usage: $0 stage|env DIR" >&2; exit 2 ;;
esac
