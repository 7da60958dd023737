"""experimental.readers.video, experimental.inputs.video and readers.video_resize: what DALI's CPU
comparison (parity/test_parity_experimental_video.py) cannot show — the codecs DALI's CPU
backend lacks (H.264, HEVC: the same frames as readers.video's, one decoder), YCbCr output
(DALI 2.4's CPU path fails there), videos fed after earlier ones were used up, blocking feeds —
and every error, named. readers.video_resize is readers.video then resize, frame for frame. The
gpu and mixed backends (NVDEC) are held to the CPU ones where there is a GPU."""

import threading
import time

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

from video_fixtures import videos_or_skip

if not _stoker.build_info()["ffmpeg"]:
    pytest.skip("stoker was built without FFmpeg: no video", allow_module_level=True)

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(), reason="no GPU: NVDEC paths")


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return videos_or_skip(tmp_path_factory.mktemp("videos"))


def run(op, batch, iterations=1, device="cpu", **kw):
    """[iteration][output][sample] as numpy arrays of fn.<op>(**kw)."""
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=5,
                           device_id=0 if device != "cpu" else None)
    f = fn
    for part in op.split("."):
        f = getattr(f, part)
    with pipe:
        out = f(name="V", device=device, **kw)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    pipe.build()
    result = []
    for _ in range(iterations):
        batches = pipe.run()
        if device != "cpu":
            assert batches[0].device == "gpu"
            batches = [b.as_cpu() for b in batches]
        result.append([[np.array(b.at(i)) for i in range(len(b))] for b in batches])
    return result


def new_reader(batch, iterations=1, **kw):
    return run("experimental.readers.video", batch, iterations, **kw)


# -- experimental.readers.video ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["h264", "hevc", "mpeg4", "vfr"])
def test_codecs_dali_cpu_lacks_read_as_readers_video_reads_them(videos, name):
    # Clips of 4 frames 3 apart every 5 frames: readers.video's sequences, the same frames.
    kw = dict(filenames=[videos[name]], labels=[3], sequence_length=4, stride=3, step=5,
              enable_frame_num="sequence", enable_timestamps=True)
    (new,) = new_reader(4, **kw)
    (old,) = run("readers.video", 4, skip_vfr_check=True, **kw)
    for a, b in zip(new, old):
        for x, y in zip(a, b):
            assert np.array_equal(x, y), name


def test_ycbcr_output_is_the_decoded_planes(videos):
    path = videos["mjpeg"]
    (ycc,) = new_reader(2, filenames=[path], sequence_length=3, image_type="YCbCr")[0]
    (old,) = run("readers.video", 2, filenames=[path], sequence_length=3, image_type="YCbCr")[0]
    assert all(np.array_equal(a, b) for a, b in zip(ycc, old))


def test_empty_file_list_ranges_are_skipped(videos, tmp_path):
    lst = tmp_path / "list.txt"
    # A range past the last frame's time reads as frame 0 (DALI's quirk): empty, skipped.
    lst.write_text(f"{videos['mjpeg']} 1 0.5 5.0\n{videos['mjpeg']} 2 0.2 0.4\n")
    (out,) = new_reader(3, file_list=str(lst), sequence_length=2, enable_frame_num=True)
    assert [int(x[0]) for x in out[1]] == [2, 2, 2]
    assert [int(x[0]) for x in out[2]] == [5, 7, 5]  # 0.2 s .. 0.4 s: frames 5..9, 2 clips
    lst.write_text(f"{videos['mjpeg']} 1 0.5 5.0\n")
    with pytest.raises(ValueError, match="file_list ranges are empty"):
        new_reader(1, file_list=str(lst), sequence_length=2)


def test_end_past_the_file_without_padding_is_named(videos, tmp_path):
    lst = tmp_path / "list.txt"
    lst.write_text(f"{videos['mjpeg']} 1 26 34\n")  # 30 frames
    kw = dict(file_list=str(lst), sequence_length=4, file_list_format="frames",
              file_list_include_end=False)
    # Clips at 26 (frames 26..29) and 30 (30..33: past the file, inside the range).
    with pytest.raises(ValueError, match=r"mjpeg\.avi': frame 30 is outside the sample's frames "
                                         r"\[0, 30\) and pad_mode is 'none' .*include_end=False"):
        new_reader(1, 2, **kw)
    (out,) = new_reader(2, pad_mode="constant", enable_frame_num="sequence", **kw)
    assert [x.tolist() for x in out[2]] == [[26, 27, 28, 29], [30, 31, 32, 33]]
    assert out[0][0].any() and not out[0][1].any()  # DALI's: numbered, but padding


def test_unreadable_files_are_named_or_skipped(videos, tmp_path):
    junk = tmp_path / "junk.webm"
    junk.write_bytes(b"\x00" * 4096)
    with pytest.raises(ValueError, match=r"junk\.webm': not a video file"):
        new_reader(1, filenames=[str(junk)], sequence_length=2)
    with pytest.raises(ValueError, match=r"junk\.webm': not a video file"):
        new_reader(1, filenames=[videos["mjpeg"], str(junk)], sequence_length=2)
    pipe = stoker.Pipeline(batch_size=4, num_threads=1, on_error="skip")
    with pipe:
        pipe.set_outputs(*fn.experimental.readers.video(
            filenames=[str(junk), videos["mjpeg"]], labels=[0, 1], sequence_length=10))
    pipe.build()
    with pytest.warns(RuntimeWarning, match="skipped a bad sample"):
        _, labels = pipe.run()
    assert [int(np.array(x)[0]) for x in labels] == [1, 1, 1, 1]


def test_arguments_are_checked(videos, tmp_path):
    mjpeg = videos["mjpeg"]
    lst = tmp_path / "list.txt"
    lst.write_text(f"{mjpeg} 0\n")
    cases = [
        (dict(filenames=[mjpeg], file_root=str(tmp_path)), ValueError,
         "give exactly one of `filenames`, `file_root` and `file_list`"),
        (dict(file_root=str(tmp_path), labels=[1]), ValueError, "`labels` go with `filenames`"),
        (dict(filenames=[mjpeg], labels=[]), ValueError, "got 0 labels for 1 files"),
        (dict(filenames=[mjpeg], fill_value=[256]), ValueError,
         r"fill_value must be in \[0, 255\], got 256"),
        (dict(filenames=[mjpeg], fill_value=[1, 2], pad_mode="constant"), ValueError,
         "fill_value takes 1 value or 3"),
        (dict(filenames=[mjpeg], pad_mode="wrap"), ValueError, "pad_mode must be none, constant"),
        (dict(filenames=[mjpeg], enable_frame_num="every"), ValueError,
         "enable_frame_num must be 'none', 'scalar' or 'sequence'"),
        (dict(filenames=[mjpeg], image_type="BGR"), ValueError, "image_type must be RGB or YCbCr"),
        (dict(filenames=[mjpeg], sequence_length=0), ValueError,
         "sequence_length must be >= 1, got 0"),
        (dict(filenames=[mjpeg], stride=0), ValueError, r"stride must be in \[1, 2147483647\]"),
        (dict(filenames=[mjpeg], step=2**31), ValueError, "step must be at most 2147483647"),
        (dict(file_list=str(lst), file_list_format="seconds"), ValueError,
         "file_list_format must be 'frames' or 'timestamps', got 'seconds'"),
        (dict(file_list=str(lst), file_list_rounding="nearest"), ValueError,
         "file_list_rounding must be 'start_down_end_up'"),
        (dict(filenames=[mjpeg], sequence_length=40), ValueError,
         "no sequence of 40 frames .* fits in the 1 files given"),
        (dict(filenames=[mjpeg], sequence_length=10**8, pad_mode="edge"), ValueError,
         r"sequence_length would make an output of 1e\+08x70x96x3"),
    ]
    for kw, error, message in cases:
        kw.setdefault("sequence_length", 2)
        with pytest.raises(error, match=message):
            new_reader(1, **kw)


# -- experimental.inputs.video ----------------------------------------------------------------
def video_input_pipe(batch=3, **kw):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2)
    with pipe:
        pipe.set_outputs(fn.experimental.inputs.video(name="vid", **kw))
    pipe.build()
    return pipe


def shapes(batch):
    assert batch.layout() == "FHWC"
    return [np.array(x).shape[0] for x in batch]


def test_inputs_video_sequences_are_the_videos_frames(videos):
    path = videos["h264"]  # 30 frames: DALI's CPU backend lacks H.264
    pipe = video_input_pipe(sequence_length=4, last_sequence_policy="pad")
    pipe.feed_input("vid", [np.fromfile(path, np.uint8)])
    got = [np.array(x) for _ in range(3) for x in pipe.run()[0]]
    assert [g.shape[0] for g in got] == [4] * 8
    (every,) = run("readers.video", 1, filenames=[path], sequence_length=30)[0]
    frames = np.concatenate(got)
    assert np.array_equal(frames[:30], every[0]) and not frames[30:].any()


def test_inputs_video_takes_videos_fed_after_the_last_was_used_up(videos):
    data = np.fromfile(videos["mjpeg"], np.uint8)
    pipe = video_input_pipe(sequence_length=4)
    pipe.feed_input("vid", [data])
    assert [shapes(pipe.run()[0]) for _ in range(3)] == [[4, 4, 4], [4, 4, 4], [4, 2]]
    with pytest.raises(RuntimeError, match=r"experimental.inputs.video 'vid' has no video for "
                                           r"this iteration.*feed_input\('vid'"):
        pipe.run()
    pipe.feed_input("vid", [data])  # DALI 2.4 at times refuses this one
    assert shapes(pipe.run()[0]) == [4, 4, 4]


def test_inputs_video_blocking_waits_for_a_feed(videos):
    data = np.fromfile(videos["mjpeg"], np.uint8)
    pipe = video_input_pipe(batch=8, sequence_length=4, blocking=True)
    feeder = threading.Timer(0.3, lambda: pipe.feed_input("vid", [data]))
    start = time.monotonic()
    feeder.start()
    assert shapes(pipe.run()[0]) == [4] * 7 + [2]
    assert time.monotonic() - start >= 0.25
    feeder.join()


def test_inputs_video_refuses_what_it_cannot_take(videos):
    data = np.fromfile(videos["mjpeg"], np.uint8)
    pipe = video_input_pipe(sequence_length=4)
    with pytest.raises(ValueError, match="feed one video at a time .* got 2 samples"):
        pipe.feed_input("vid", [data, data])
    with pytest.raises(TypeError, match="expected the encoded video as uint8 bytes, got int32"):
        pipe.feed_input("vid", [data.astype(np.int32)])
    with pytest.raises(ValueError, match=r"vid feed 0': not a video file"):
        pipe.feed_input("vid", [np.zeros(1000, np.uint8)])
    with pytest.raises(ValueError, match="last_sequence_policy must be 'partial' or 'pad'"):
        video_input_pipe(sequence_length=4, last_sequence_policy="drop")
    with pytest.raises(ValueError, match="sequence_length must be >= 1, got 0"):
        video_input_pipe(sequence_length=0)
    pipe = video_input_pipe(sequence_length=10**8, last_sequence_policy="pad")
    with pytest.raises(ValueError, match=r"sequence_length would make an output of 1e\+08x"):
        pipe.feed_input("vid", [data])
    with pytest.raises(ValueError, match="experimental.inputs.video 'vid' takes its videos from "
                                         "feed_input, which cannot be serialized"):
        pipe.serialize()


# -- readers.video_resize -----------------------------------------------------------------------
RESIZES = [
    dict(size=[40, 50]),
    dict(resize_shorter=33, interp_type="cubic"),
    dict(resize_x=120, mode="not_larger", max_size=[60, 100], antialias=False),
    dict(size=[31, 17], dtype="float32", normalized=True, interp_type="lanczos3"),
    dict(roi_start=[0.1, 0.2], roi_end=[0.9, 0.7], roi_relative=True, size=[20, 20]),
    dict(resize_z=8, size=[40, 50]),  # the frames are 2-D: resize_z ignored, as DALI's
    dict(resize_z=8),
]


@pytest.mark.parametrize("resize", RESIZES, ids=[str(r) for r in RESIZES])
def test_video_resize_is_readers_video_then_resize(videos, resize):
    resize = dict(resize)
    reader = dict(filenames=[videos["h264"], videos["vp9"]], labels=[1, 2], sequence_length=3,
                  stride=2, enable_frame_num=True)
    for k in ("dtype", "normalized"):
        if k in resize:
            reader[k] = resize.pop(k)
    (got,) = run("readers.video_resize", 3, **reader, **resize)
    pipe = stoker.Pipeline(batch_size=3, num_threads=2, seed=5)
    with pipe:
        video, labels, frames = fn.readers.video(name="V", **reader)
        pipe.set_outputs(fn.resize(video, **resize), labels, frames)
    pipe.build()
    want = [[np.array(x) for x in b] for b in pipe.run()]
    for a, b in zip(got, want):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and np.array_equal(x, y)


def test_video_resize_takes_per_sample_sizes_and_its_old_name(videos):
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=5)
    with pipe:
        width = fn.random.uniform(range=[20, 40], dtype="int32")
        with pytest.warns(DeprecationWarning, match="video_reader_resize"):
            video = fn.video_reader_resize(filenames=[videos["h264"]], sequence_length=2,
                                           resize_x=fn.cast(width, dtype="float32"),
                                           resize_y=24)
        pipe.set_outputs(video, width)
    pipe.build()
    video, width = pipe.run()
    for v, w in zip(video, width):
        assert np.array(v).shape == (2, 24, int(np.array(w)), 3)
    assert video.layout() == "FHWC"


@pytest.mark.parametrize("op", ["experimental.readers.video", "readers.video_resize"])
def test_checkpoints_continue_where_they_were_taken(videos, op):
    def make(checkpoint=None):
        pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=3, checkpoint=checkpoint,
                               enable_checkpointing=True)
        extra = {"size": [8, 8]} if op == "readers.video_resize" else {}
        f = fn.readers.video_resize if op == "readers.video_resize" else \
            fn.experimental.readers.video
        with pipe:
            pipe.set_outputs(*f(name="R", filenames=[videos["vp9"], videos["mjpeg"]],
                                labels=[0, 1], sequence_length=3, random_shuffle=True,
                                initial_fill=4, enable_frame_num=True, **extra))
        pipe.build()
        return pipe

    pipe = make()
    for _ in range(3):
        pipe.run()
    state = pipe.checkpoint()
    after = [[np.array(x).tolist() for b in pipe.run()[1:] for x in b] for _ in range(3)]
    again = make(state)
    assert [[np.array(x).tolist() for b in again.run()[1:] for x in b] for _ in range(3)] == after
    assert again.reader_meta("R")["epoch_size"] == 20  # 10 clips of 3 in each 30-frame file


def test_video_resize_errors_name_it(videos):
    with pytest.raises(ValueError, match="readers.video_resize: unknown mode 'fit'"):
        run("readers.video_resize", 1, filenames=[videos["h264"]], sequence_length=2, size=[8, 8],
            mode="fit")
    with pytest.raises(ValueError, match="readers.video_resize: got 1 labels for 2 files"):
        run("readers.video_resize", 1, filenames=[videos["h264"]] * 2, labels=[0],
            sequence_length=2, size=[8, 8])


# -- the GPU backends: NVDEC, held to the CPU ones -----------------------------------------------
def nvdec_or_skip(f):
    try:
        return f()
    except RuntimeError as e:
        if "libnvcuvid" in str(e) or "NVDEC" in str(e):
            pytest.skip(f"no NVDEC here: {e}")
        raise


@needs_gpu
def test_gpu_new_reader_equals_cpu(videos):
    kw = dict(filenames=[videos["h264"], videos["hevc_smooth"]], labels=[0, 1],
              sequence_length=5, stride=2, pad_mode="reflect_1001", fill_value=[9],
              enable_frame_num="sequence", enable_timestamps=True)
    cpu = new_reader(4, 3, **kw)
    gpu = nvdec_or_skip(lambda: new_reader(4, 3, device="gpu", **kw))
    for c, g in zip(cpu, gpu):
        for x, y in zip(c, g):
            assert all(np.array_equal(a, b) for a, b in zip(x, y))
    kw.update(pad_mode="constant", sequence_length=40)
    cpu, gpu = new_reader(2, **kw), nvdec_or_skip(lambda: new_reader(2, device="gpu", **kw))
    assert all(np.array_equal(a, b) for a, b in zip(cpu[0][0], gpu[0][0]))


@needs_gpu
def test_mixed_inputs_video_equals_cpu(videos):
    data = np.fromfile(videos["h264"], np.uint8)
    out = {}
    for device in ("cpu", "mixed"):
        pipe = stoker.Pipeline(batch_size=3, num_threads=2, device_id=0)
        with pipe:
            pipe.set_outputs(fn.experimental.inputs.video(name="vid", device=device,
                                                          sequence_length=4,
                                                          last_sequence_policy="pad"))
        pipe.build()
        pipe.feed_input("vid", [data])
        batches = nvdec_or_skip(lambda: [pipe.run()[0] for _ in range(3)])
        if device == "mixed":
            assert batches[0].device == "gpu"
            batches = [b.as_cpu() for b in batches]
        out[device] = [np.array(x) for b in batches for x in b]
    assert all(np.array_equal(a, b) for a, b in zip(out["cpu"], out["mixed"]))


@needs_gpu
def test_gpu_video_resize_is_near_cpu(videos):
    kw = dict(filenames=[videos["h264_smooth"]], labels=[0], sequence_length=3, size=[100, 130],
              enable_frame_num=True)
    cpu = run("readers.video_resize", 2, **kw)
    gpu = nvdec_or_skip(lambda: run("readers.video_resize", 2, device="gpu", **kw))
    for x, y in zip(cpu[0][0], gpu[0][0]):
        assert x.shape == y.shape and np.abs(x.astype(int) - y).max() <= 1
    assert [a.tolist() for a in cpu[0][2]] == [a.tolist() for a in gpu[0][2]]
