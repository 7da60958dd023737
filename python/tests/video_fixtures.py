"""The test videos, made by the ffmpeg tool: H.264 with B-frames and long GOPs, HEVC, VP9,
MPEG-4; mp4, mkv, webm, avi; 4:2:0, 4:2:2, 4:4:4, odd sizes, BT.709 full range, a variable
frame rate. Machines without the tool (the GPU machine) take them made elsewhere:
`python3 python/tests/video_fixtures.py DIR` writes them, and STOKER_TEST_VIDEOS=DIR points the
tests at them."""

import os
import shutil
import subprocess
import sys

import pytest

PATTERN = "-f lavfi -i testsrc2=size={w}x{h}:rate={rate}:duration={seconds}"

# name: (file, encoder arguments, pattern's size/rate/duration)
VIDEOS = {
    "h264": ("h264.mp4", "-c:v libx264 -g 12 -bf 3 -pix_fmt yuv420p", {}),
    "longgop": ("longgop.mp4", "-c:v libx264 -g 300 -bf 2 -pix_fmt yuv420p", {"seconds": 2}),
    "hevc": ("hevc.mkv", "-c:v libx265 -x265-params log-level=none -pix_fmt yuv420p", {}),
    "vp9": ("vp9.webm", "-c:v libvpx-vp9 -pix_fmt yuv420p", {"rate": 30, "seconds": 1}),
    "mpeg4": ("mpeg4.avi", "-c:v mpeg4 -q:v 3", {}),
    "odd444": ("odd444.mp4", "-vf format=yuv444p,crop=95:69 -c:v libx264 -pix_fmt yuv444p", {}),
    "422": ("422.mp4", "-vf format=yuv422p -c:v libx264 -pix_fmt yuv422p", {}),
    "bt709full": ("bt709.mp4", "-c:v libx264 -pix_fmt yuv420p -colorspace bt709 -color_range pc",
                  {}),
    "vfr": ("vfr.mkv", "-vf \"setpts='(N+2*floor(N/5))/(25*TB)'\" -vsync passthrough -c:v libx264 "
            "-pix_fmt yuv420p", {}),
    "h264_big": ("h264_big.mp4", "-c:v libx264 -g 16 -bf 2 -pix_fmt yuv420p",
                 {"w": 320, "h": 240}),
    # The pattern blurred: colours that change smoothly, so that converters that site chroma
    # differently (DALI's NVDEC reader) differ little. HEVC at 320x240: NVDEC's smallest HEVC
    # frame is 144x144.
    "h264_smooth": ("h264_smooth.mp4", "-vf gblur=sigma=4 -c:v libx264 -g 12 -bf 3 "
                    "-pix_fmt yuv420p", {"w": 320, "h": 240}),
    "hevc_smooth": ("hevc_smooth.mkv", "-vf gblur=sigma=4 -c:v libx265 -x265-params "
                    "log-level=none:keyint=12 -pix_fmt yuv420p", {"w": 320, "h": 240}),
    "vp9_smooth": ("vp9_smooth.webm", "-vf gblur=sigma=4 -c:v libvpx-vp9 -g 12 -pix_fmt yuv420p",
                   {"w": 320, "h": 240, "rate": 30, "seconds": 1}),
    "mpeg4_smooth": ("mpeg4_smooth.avi", "-vf gblur=sigma=4 -c:v mpeg4 -q:v 3 -g 12",
                     {"w": 320, "h": 240}),
    # What DALI's CPU video decoding takes (VP8, VP9, MJPEG): MJPEG's chroma is sited between
    # luma columns, as libswscale (DALI's conversion) assumes, so its frames come out equal.
    "mjpeg": ("mjpeg.avi", "-c:v mjpeg -q:v 3 -pix_fmt yuvj420p", {}),
    "mjpeg422": ("mjpeg422.mkv", "-c:v mjpeg -q:v 3 -pix_fmt yuvj422p",
                 {"w": 64, "h": 48, "rate": 30, "seconds": 1.1}),
    "vp8": ("vp8.webm", "-c:v libvpx -g 10 -pix_fmt yuv420p", {}),
}


def make(path, args, w=96, h=70, rate=25, seconds=1.2):
    cmd = (f"ffmpeg -v error -y {PATTERN.format(w=w, h=h, rate=rate, seconds=seconds)} {args} "
           f"{path}")
    subprocess.run(cmd, shell=True, check=True)
    return str(path)


def make_videos(folder):
    os.makedirs(folder, exist_ok=True)
    return {name: make(os.path.join(folder, f), args, **kw) for name, (f, args, kw) in
            VIDEOS.items()}


def videos_or_skip(folder):
    """{name: path}: the videos of STOKER_TEST_VIDEOS, or made in `folder` by the ffmpeg tool;
    skips the test without either."""
    given = os.environ.get("STOKER_TEST_VIDEOS")
    if given:
        return {name: os.path.join(given, f) for name, (f, _, _) in VIDEOS.items()}
    if shutil.which("ffmpeg") is None:
        pytest.skip("no test videos: the ffmpeg tool is missing (scripts/setup installs it) and "
                    "STOKER_TEST_VIDEOS is not set")
    return make_videos(str(folder))


if __name__ == "__main__":
    for name, path in make_videos(sys.argv[1]).items():
        print(name, path)


def decode_videos(paths, device="cpu", **kw):
    """The files at `paths` through decoders.video (cpu, or mixed: checked to be on the GPU),
    one batch: its samples as numpy arrays (layout FHWC checked)."""
    import numpy as np
    import stoker
    from stoker import fn

    data = [np.fromfile(p, np.uint8) for p in paths]
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2,
                           device_id=0 if device == "mixed" else None)
    with pipe:
        enc = fn.external_source(source=lambda: data, batch=True)
        pipe.set_outputs(fn.decoders.video(enc, device=device, **kw))
    pipe.build()
    (out,) = pipe.run()
    if device == "mixed":
        assert out.device == "gpu"
        out = out.as_cpu()
    assert out.layout() == "FHWC"
    return [np.array(out.at(i)) for i in range(len(out))]
