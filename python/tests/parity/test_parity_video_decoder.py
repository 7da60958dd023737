"""decoders.video against DALI 2.4's decoders.video on the CPU (its wheel's libavcodec takes VP9,
not H.264 or HEVC): the same frames chosen (each of DALI's output frames is closest to the frame
stoker put in its place, among all the video's frames), the constant padding exact, the pixels
within the two conversions' difference (DALI converts with libswscale's defaults; stoker sites
chroma as the stream says, docs/dali_differences.md)."""

import numpy as np
import pytest

import stoker
from parity_util import SKIP_REASON, dali
from video_fixtures import videos_or_skip

PARITY = {
    "decoders.video": "tolerance: the same frames (closest match) and padding; pixels within the "
                      "RGB conversions' difference (VP9, DALI's CPU backend)",
}


@pytest.fixture(scope="module")
def vp9(tmp_path_factory):
    if dali is None:
        pytest.skip(SKIP_REASON)
    if not stoker._stoker.build_info()["ffmpeg"]:
        pytest.skip("stoker was built without FFmpeg: no video")
    return videos_or_skip(tmp_path_factory.mktemp("videos"))["vp9_smooth"]


def decode(lib, path, **kw):
    data = np.fromfile(path, np.uint8)
    mod = stoker if lib == "stoker" else dali

    @mod.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe_def():
        enc = mod.fn.external_source(source=lambda: [data], batch=True)
        return mod.fn.decoders.video(enc, device="cpu", **kw)

    pipe = pipe_def()
    pipe.build()
    (out,) = pipe.run()
    return np.array(out.at(0)).astype(np.float64)


CASES = [
    {},
    dict(frames=[3, 1, 28, 1, 17]),
    dict(start_frame=25, sequence_length=8),
    dict(start_frame=25, sequence_length=8, pad_mode="edge"),
    dict(start_frame=25, sequence_length=8, pad_mode="reflect_1001"),
    dict(start_frame=25, sequence_length=8, pad_mode="reflect_101"),
    dict(start_frame=25, sequence_length=8, pad_mode="none"),
    dict(start_frame=24, sequence_length=4, pad_mode="constant", fill_value=[7, 8, 9]),
    dict(start_frame=20, end_frame=35, stride=3),
    dict(start_frame=2, stride=7),
    dict(frames=[3, 31, 29], pad_mode="edge"),
]


@pytest.mark.parametrize("kw", CASES, ids=[str(c) for c in CASES])
def test_same_frames_as_dali(vp9, kw):
    every = decode("stoker", vp9)
    ours, theirs = decode("stoker", vp9, **kw), decode("dali", vp9, **kw)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    fill = np.array(kw.get("fill_value", [0]), np.float64)
    for k, (o, t) in enumerate(zip(ours, theirs)):
        is_pad = not any(np.array_equal(o, f) for f in every)
        if is_pad:  # the constant: exact in both
            assert (o == fill).all() and (t == fill).all(), k
            continue
        same = np.abs(o - t).mean()
        closest = min(np.abs(t - f).mean() for f in every)
        assert same <= closest + 1e-9, (k, same, closest)
        assert same < 3, (k, same)
