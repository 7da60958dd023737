#!/usr/bin/env bash
# FFmpeg for the GPU machine, which has none and no registry (docs/dev/gpu_machine.md).
#   scripts/gpu_ffmpeg.sh stage DIR          here: Debian 12's FFmpeg source (its upstream
#                                            tarball, ~10 MB), nasm (its assembler) and
#                                            nv-codec-headers (NVDEC's, from scripts/setup's
#                                            libffmpeg-nvenc-dev) into DIR
#   scripts/gpu_ffmpeg.sh build DIR PREFIX   there: a minimal shared FFmpeg from DIR into PREFIX
#                                            (about a minute on 16 cores)
# Then build stoker with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig (scripts/gpu_check.sh does it
# when FFMPEG_PREFIX is set): CMake finds it as it finds Debian's here, and the build tree's
# RPATH finds its libraries at run time.
#
# The build keeps what readers.video needs: the demuxers of the usual containers, the decoders
# of the codecs NVDEC also decodes (H.264, HEVC, VP8, VP9, MPEG-4, MJPEG, AV1's parser), their
# parsers and the bitstream filters that turn MP4/Matroska packets into what NVDEC takes, PNG
# frames (screen recordings and exported animations; with zlib) and libswscale. Same version as
# here (Debian's 5.1), so tests behave alike on both machines and in the wheel.
set -euo pipefail

case "${1:-}" in
  stage)
    dir=${2:?usage: gpu_ffmpeg.sh stage DIR}
    mkdir -p "$dir" && dir=$(realpath "$dir")
    lists=$(mktemp -d)
    trap 'rm -rf "$lists"' EXIT
    mkdir -p "$lists/lists"
    # A deb-src entry only for this download: the machine's own sources stay as they are.
    printf 'deb-src http://deb.debian.org/debian bookworm main\n' \
      'deb-src http://deb.debian.org/debian-security bookworm-security main\n' > "$lists/src.list"
    apt=(-o Dir::Etc::SourceList="$lists/src.list" -o Dir::Etc::SourceParts=/dev/null
         -o Dir::State::Lists="$lists/lists")
    apt-get "${apt[@]}" update -qq 2> /dev/null
    (cd "$dir" && apt-get "${apt[@]}" source --download-only ffmpeg > /dev/null 2>&1)
    rm -f "$dir"/*.debian.tar.xz "$dir"/*.dsc "$dir"/*.asc
    (cd "$lists" && apt-get download nasm > /dev/null 2>&1 && dpkg-deb -x nasm_*.deb x \
      && cp x/usr/bin/nasm "$dir/nasm")
    cp -r /usr/include/ffnvcodec "$dir/"
    ls -la "$dir"
    ;;
  build)
    dir=$(realpath "${2:?usage: gpu_ffmpeg.sh build DIR PREFIX}")
    prefix=${3:?usage: gpu_ffmpeg.sh build DIR PREFIX}
    work=$(mktemp -d)
    tar -xf "$dir"/ffmpeg_*.orig.tar.xz -C "$work"
    mkdir -p "$work/bin" && cp "$dir/nasm" "$work/bin/" && chmod +x "$work/bin/nasm"
    export PATH="$work/bin:$PATH"
    cd "$work"/ffmpeg-*
    # hypot has a new symbol version in glibc 2.35; binding the old one keeps the wheel that
    # carries this FFmpeg installable on glibc 2.34 (manylinux_2_34: RHEL 9, Ubuntu 22.04).
    printf '__asm__(".symver hypot,hypot@GLIBC_2.2.5");\n' > "$work/glibc_compat.h"
    ./configure --prefix="$prefix" --enable-shared --disable-static --enable-pic \
      --extra-cflags="-include $work/glibc_compat.h" \
      --disable-programs --disable-doc --disable-network --disable-autodetect \
      --disable-everything --disable-avdevice --disable-avfilter --disable-swresample \
      --enable-protocol=file \
      --enable-demuxer=mov,matroska,avi,mpegts,ivf,h264,hevc,m4v \
      --enable-decoder=h264,hevc,vp8,vp9,mpeg4,mjpeg,png --enable-zlib \
      --enable-parser=h264,hevc,vp8,vp9,mpeg4video,mjpeg,png,av1 \
      --enable-bsf=null,h264_mp4toannexb,hevc_mp4toannexb,mpeg4_unpack_bframes,vp9_superframe_split,av1_frame_split \
      > "$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; exit 1; }
    make -j "$(nproc)" > "$work/make.log" 2>&1 || { tail -30 "$work/make.log"; exit 1; }
    make install > /dev/null
    cp -r "$dir/ffnvcodec" "$prefix/include/"
    rm -rf "$work"
    echo "FFmpeg in $prefix: $(ls "$prefix/lib" | grep -c '\.so') shared objects"
    ;;
  *)
    sed -n '2,15p' "$0"
    exit 2
    ;;
esac
