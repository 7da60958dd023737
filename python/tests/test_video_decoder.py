"""decoders.video (whole videos given as bytes) on the CPU: its frames are readers.video's
frames of the same file (one decoding path), chosen by DALI's rules (frames, start/end/length,
stride, pad_mode; readers/video_index_test.cpp has them rule by rule); bad input is named. The
mixed backend against this one: test_video_reader_gpu.py. DALI 2.4 (its CPU decoders.video
takes VP9) is compared in parity/test_parity_video_decoder.py."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

from video_fixtures import decode_videos as decode, videos_or_skip

if not _stoker.build_info()["ffmpeg"]:
    pytest.skip("stoker was built without FFmpeg: no video", allow_module_level=True)


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return videos_or_skip(tmp_path_factory.mktemp("videos"))


def all_frames(path, frames):
    """Every frame of `path` through readers.video, in order."""
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.readers.video(filenames=[path], sequence_length=frames))
    pipe.build()
    (out,) = pipe.run()
    return np.array(out.at(0))


def test_frames_as_readers_video_decodes_them(videos):
    for name in ("h264", "hevc", "vp9", "mpeg4", "odd444"):
        path = videos[name]
        every = decode([path])[0]
        n = every.shape[0]
        assert np.array_equal(every, all_frames(path, n)), name
        (picked,) = decode([path], frames=[7, 2, n - 1, 2, 0])
        assert np.array_equal(picked, every[[7, 2, n - 1, 2, 0]]), name


def test_ranges_and_padding(videos):
    path = videos["h264"]  # 30 frames
    every = decode([path])[0]
    (out,) = decode([path], start_frame=25, sequence_length=8, pad_mode="constant",
                    fill_value=[7, 8, 9])
    assert np.array_equal(out[:5], every[25:30])
    assert (out[5:] == np.array([7, 8, 9], np.uint8)).all()
    (out,) = decode([path], start_frame=25, sequence_length=8, pad_mode="reflect_1001")
    assert np.array_equal(out, every[[25, 26, 27, 28, 29, 29, 28, 27]])
    (out,) = decode([path], start_frame=25, sequence_length=8, pad_mode="edge")
    assert np.array_equal(out, every[[25, 26, 27, 28, 29, 29, 29, 29]])
    (out,) = decode([path], start_frame=20, end_frame=35, stride=3, pad_mode="none")
    assert np.array_equal(out, every[[20, 23, 26, 29]])
    (out,) = decode([path], start_frame=3, stride=9)
    assert np.array_equal(out, every[[3, 12, 21]])


def test_a_batch_of_different_videos(videos):
    paths = [videos["h264"], videos["vp9"], videos["odd444"]]
    outs = decode(paths, sequence_length=4, stride=2)
    assert [o.shape for o in outs] == [(4, 70, 96, 3), (4, 70, 96, 3), (4, 69, 95, 3)]
    for path, o in zip(paths, outs):
        assert np.array_equal(o, decode([path])[0][[0, 2, 4, 6]])


def test_bad_input_is_named(videos, tmp_path):
    h264 = videos["h264"]
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00" * 1000)
    for kw, error, message in [
        (dict(paths=[str(junk)]), ValueError, "not a video file FFmpeg can read"),
        (dict(paths=[h264], frames=[1], stride=2), ValueError,
         "`frames` cannot be given with start_frame, end_frame, sequence_length or stride"),
        (dict(paths=[h264], end_frame=4, sequence_length=2), ValueError,
         "give end_frame or sequence_length, not both"),
        (dict(paths=[h264], pad_mode="wrap"), ValueError, "pad_mode must be"),
        (dict(paths=[h264], fill_value=[1, 2]), ValueError, "fill_value takes 1 or 3 values"),
        (dict(paths=[h264], fill_value=[300]), ValueError, r"fill_value must be in \[0, 255\]"),
        (dict(paths=[h264], start_frame=40), ValueError,
         "start_frame 40 is not among the video's 30 frames"),
        (dict(paths=[h264], frames=[3, 31], pad_mode="none"), ValueError,
         "frame 31 is past the video's 30 frames"),
    ]:
        with pytest.raises(error, match=message):
            decode(kw.pop("paths"), **kw)


def test_closing_while_decoding_ahead(videos):
    # The pipeline decodes the next batches ahead; closing it stops them midway (samples not
    # reached stay empty), which must not touch what was not opened.
    data = [np.fromfile(videos["longgop"], np.uint8)] * 4
    for _ in range(5):
        pipe = stoker.Pipeline(batch_size=4, num_threads=2, prefetch_queue_depth=3)
        with pipe:
            enc = fn.external_source(source=lambda: data, batch=True)
            pipe.set_outputs(fn.decoders.video(enc))
        pipe.build()
        pipe.run()
        del pipe
