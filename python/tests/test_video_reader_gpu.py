"""readers.video on the GPU (NVDEC) against readers.video on the CPU (libavcodec): H.264, HEVC
and VP9 decoders are exact by their standards and both backends convert with one integer
definition (kernels/color/yuv_to_rgb.hpp), so the frames are equal bit for bit (MPEG-4 Part 2
within its decoders' inverse DCT); sequences, labels, frame numbers and timestamps too. Streams
NVDEC or this path does not take are refused by name. Skipped without a GPU with NVDEC, or a
stoker built without FFmpeg."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

from video_fixtures import decode_videos, videos_or_skip

if not _stoker.cuda_available():
    pytest.skip("no GPU", allow_module_level=True)
if not _stoker.build_info()["ffmpeg"]:
    pytest.skip("stoker was built without FFmpeg: no video", allow_module_level=True)


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return videos_or_skip(tmp_path_factory.mktemp("videos"))


def run(device, batch, iterations=2, **kw):
    """[iteration][output][sample] as numpy arrays; checks that gpu outputs are on the GPU."""
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=3, device_id=0)
    with pipe:
        out = fn.readers.video(device=device, name="V", **kw)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    pipe.build()
    result = []
    for _ in range(iterations):
        try:
            batches = pipe.run()
        except RuntimeError as e:
            if "libnvcuvid" in str(e):
                pytest.skip(f"no NVDEC here: {e}")
            raise
        if device == "gpu":
            assert all(b.device == "gpu" for b in batches)
            batches = [b.as_cpu() for b in batches]
        result.append([[np.array(b.at(i)) for i in range(len(b))] for b in batches])
    return result


def assert_alike(cpu, gpu, atol=0, mean=0.0):
    for it, (c, g) in enumerate(zip(cpu, gpu)):
        assert len(c) == len(g)
        for k, (co, go) in enumerate(zip(c, g)):
            for i, (x, y) in enumerate(zip(co, go)):
                assert x.shape == y.shape and x.dtype == y.dtype, (it, k, i, x.shape, y.shape)
                if atol == 0 or k > 0:
                    assert np.array_equal(x, y), (it, k, i, np.abs(x.astype(float) - y).max())
                else:
                    d = np.abs(x.astype(float) - y)
                    assert d.max() <= atol and d.mean() <= mean, (it, k, i, d.max(), d.mean())


@pytest.mark.parametrize("name", ["h264", "longgop", "h264_big", "h264_smooth", "hevc_smooth",
                                  "vp9_smooth", "bt709full", "mpeg4"])
def test_gpu_frames_equal_the_cpu_frames(videos, name):
    kw = dict(filenames=[videos[name]], labels=[3], sequence_length=5, stride=2, step=3,
              enable_frame_num="sequence", enable_timestamps=True)
    # MPEG-4 Part 2 leaves the inverse DCT to the decoder: planes within 2 levels, RGB (which
    # mixes three planes) within 8, a fraction of a level on average.
    atol, mean = (8, 0.5) if name == "mpeg4" else (0, 0.0)
    assert_alike(run("cpu", 3, **kw), run("gpu", 3, **kw), atol, mean)


def test_output_types_and_padding(videos):
    path = videos["h264_smooth"]
    for extra in (dict(dtype="float32"), dict(dtype="float32", normalized=True),
                  dict(image_type="YCbCr")):
        kw = dict(filenames=[path], sequence_length=4, **extra)
        assert_alike(run("cpu", 2, **kw), run("gpu", 2, **kw))
    kw = dict(filenames=[path], labels=[0], sequence_length=8, stride=3, step=9,
              pad_sequences=True, enable_frame_num="sequence")
    cpu, gpu = run("cpu", 4, iterations=1, **kw), run("gpu", 4, iterations=1, **kw)
    assert_alike(cpu, gpu)
    assert not gpu[0][0][-1][2:].any()  # the last sequence's missing frames are zero


def test_shuffled_epochs_across_files_with_io_threads(videos):
    kw = dict(filenames=[videos["h264"], videos["longgop"], videos["h264_big"]], labels=[0, 1, 2],
              sequence_length=3, step=4, random_shuffle=True, initial_fill=6,
              enable_frame_num=True, num_io_threads=4, prefetch_queue_depth=3)
    assert_alike(run("cpu", 4, iterations=5, **kw), run("gpu", 4, iterations=5, **kw))


def test_streams_nvdec_does_not_take_are_named(videos):
    with pytest.raises(RuntimeError, match=r"odd444\.mp4': stoker's NVDEC path decodes 8-bit "
                                           r"4:2:0 video; this stream is yuv444p"):
        run("gpu", 1, filenames=[videos["odd444"]], sequence_length=2)
    with pytest.raises(RuntimeError, match=r"hevc\.mkv': NVDEC decodes hevc from \d+x\d+ to "
                                           r"\d+x\d+; this stream is 96x70"):
        run("gpu", 1, filenames=[videos["hevc"]], sequence_length=2)


def test_mixed_decoders_video_equals_the_cpu_one(videos):
    """decoders.video on NVDEC (mixed) against its CPU backend: listed frames in any order with
    repeats, ranges with each padding, a batch of different videos."""
    paths = [videos[n] for n in ("h264", "hevc_smooth", "vp9_smooth", "bt709full")]

    for kw in ({}, dict(frames=[7, 2, 12, 2, 0]),
               dict(start_frame=20, sequence_length=14, stride=2, fill_value=[9, 8, 7]),
               dict(start_frame=25, sequence_length=8, pad_mode="reflect_101")):
        for c, g in zip(decode_videos(paths, "cpu", **kw), decode_videos(paths, "mixed", **kw)):
            assert c.shape == g.shape and np.array_equal(c, g), kw


def test_gpu_batches_are_one_array_for_torch(videos):
    """A gpu reader's batch is one device buffer per output (its sequences gathered), so the torch
    iterator hands it over through DLPack as one tensor; it equals the CPU reader's batch."""
    torch = pytest.importorskip("torch")
    from stoker.plugins.torch import GenericIterator
    kw = dict(filenames=[videos["h264_smooth"], videos["hevc_smooth"]], labels=[4, 7],
              sequence_length=6, stride=2, name="V")

    def pipe(device):
        p = stoker.Pipeline(batch_size=3, num_threads=2, seed=3, device_id=0)
        with p:
            p.set_outputs(*fn.readers.video(device=device, **kw))
        return p

    gpu = GenericIterator(pipe("gpu"), ["frames", "label"], reader_name="V")
    cpu = GenericIterator(pipe("cpu"), ["frames", "label"], reader_name="V")
    batches = 0
    for g, c in zip(gpu, cpu):
        frames, labels = g[0]["frames"], g[0]["label"]
        assert frames.is_cuda and labels.is_cuda and tuple(frames.shape[:2]) == (3, 6)
        assert torch.equal(frames.cpu(), c[0]["frames"])
        assert torch.equal(labels.cpu(), c[0]["label"])
        batches += 1
    assert batches >= 2
