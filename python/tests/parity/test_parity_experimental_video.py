"""experimental.readers.video and experimental.inputs.video against DALI 2.4's CPU backends, on
the codecs its wheel decodes there (MJPEG, VP8, VP9). MJPEG's frames are equal to DALI's byte
for byte (its chroma sits between luma columns, as libswscale, DALI's conversion, assumes), and so
is everything else: which clips, their order (the pre-shuffle exactly, initial_fill=1), epochs,
shards, labels, frame numbers, timestamps, padding, file_list ranges (formats, roundings, DALI's
quirks), reader_meta; the batches experimental.inputs.video cuts fed videos into. VP8 and VP9
frames: each is closest to DALI's frame in its place, within the chroma siting difference
(libswscale sites unsited 4:2:0 chroma between luma columns, stoker on the even ones:
docs/dali_differences.md)."""

import numpy as np
import pytest

import stoker
from parity_util import SKIP_REASON, dali
from video_fixtures import videos_or_skip

PARITY = {
    "experimental.readers.video": "exact: MJPEG frames, clips, order, epochs, shards, labels, "
                                  "frame numbers, timestamps, padding, file_list ranges; VP8/VP9 "
                                  "frames within the chroma siting difference",
    "experimental.inputs.video": "exact: the sequences and batches of fed videos (MJPEG frames "
                                 "equal), partial and padded ends, several videos, late feeds",
}


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    if dali is None:
        pytest.skip(SKIP_REASON)
    if not stoker._stoker.build_info()["ffmpeg"]:
        pytest.skip("stoker was built without FFmpeg: no video")
    return videos_or_skip(tmp_path_factory.mktemp("videos"))


def _image_type(lib, kw):
    if lib == "dali" and "image_type" in kw:
        kw["image_type"] = {"RGB": dali.types.RGB, "YCbCr": dali.types.YCbCr}[kw["image_type"]]
    return kw


def read(lib, batch, iterations, **kw):
    """([iteration][output][sample] as numpy arrays, reader_meta) of the reader."""
    mod = stoker if lib == "stoker" else dali
    kw = _image_type(lib, dict(kw))

    @mod.pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=3)
    def pipe_def():
        out = mod.fn.experimental.readers.video(name="V", device="cpu", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    pipe = pipe_def()
    pipe.build()
    meta = pipe.reader_meta("V")
    keys = ("epoch_size", "epoch_size_padded", "number_of_shards", "shard_id", "pad_last_batch",
            "stick_to_shard")
    meta = {k: int(meta[k]) for k in keys}
    out = []
    for _ in range(iterations):
        out.append([[np.array(b.at(i)) for i in range(len(b))] for b in pipe.run()])
    return out, meta


def same(batch, iterations=3, exact_frames=True, **kw):
    """Both readers with `kw`: every output equal (frames too, or within the siting
    difference); returns the samples' frame numbers where asked for."""
    ours, our_meta = read("stoker", batch, iterations, **kw)
    theirs, their_meta = read("dali", batch, iterations, **kw)
    assert our_meta == their_meta, (kw, our_meta, their_meta)
    for it, (o, t) in enumerate(zip(ours, theirs)):
        assert len(o) == len(t), (kw, len(o), len(t))
        for k, (x, y) in enumerate(zip(o, t)):
            for i, (a, b) in enumerate(zip(x, y)):
                where = (kw, it, k, i)
                assert a.shape == b.shape and a.dtype == b.dtype, (where, a.shape, b.shape,
                                                                   a.dtype, b.dtype)
                if k == 0 and not exact_frames:
                    d = np.abs(a.astype(np.float64) - b)
                    assert d.mean() < 6 and np.percentile(d, 99) < 70, (where, d.mean())
                else:
                    shown = (a, b) if k else np.abs(a.astype(int) - b).max()
                    assert np.array_equal(a, b), (where, shown)
    return ours


CASES = [
    dict(sequence_length=4),
    dict(sequence_length=4, stride=2, step=3, enable_frame_num="sequence",
         enable_timestamps=True),
    dict(sequence_length=3, step=0, enable_frame_num=True),  # step <= 0: stride x length
    dict(sequence_length=7, pad_mode="constant", fill_value=[10, 20, 30],
         enable_frame_num="scalar", enable_timestamps=True),
    dict(sequence_length=7, pad_mode="constant", fill_value=[99], enable_frame_num="sequence",
         enable_timestamps=True),
    dict(sequence_length=9, stride=3, pad_mode="edge", enable_frame_num="sequence",
         enable_timestamps=True),
    dict(sequence_length=9, stride=3, pad_mode="repeat", enable_frame_num="sequence"),
    dict(sequence_length=9, stride=3, pad_mode="reflect_1001", enable_frame_num="sequence"),
    dict(sequence_length=9, stride=3, pad_mode="symmetric", enable_frame_num="sequence"),
    dict(sequence_length=9, stride=3, pad_mode="reflect_101", enable_frame_num="sequence"),
    dict(sequence_length=9, stride=3, pad_mode="reflect", enable_frame_num="sequence",
         enable_timestamps=True),
    dict(sequence_length=40, pad_mode="constant", enable_frame_num="sequence"),  # padding only
    dict(sequence_length=40, uniform_sample=True, enable_frame_num="sequence",
         enable_timestamps=True),
    dict(sequence_length=1, uniform_sample=True, enable_frame_num="sequence"),
    dict(sequence_length=5, uniform_sample=True, stride=4, step=2, pad_mode="constant",
         enable_frame_num=True),  # stride, step and pad_mode do not apply
    dict(sequence_length=3, random_shuffle=True, initial_fill=1, enable_frame_num=True),
    dict(sequence_length=3, num_shards=3, shard_id=1, enable_frame_num=True),
    dict(sequence_length=3, num_shards=3, shard_id=2, pad_last_batch=True, stick_to_shard=True,
         enable_frame_num=True),
    dict(sequence_length=3, num_shards=2, shard_id=1, random_shuffle=True, initial_fill=1),
]


@pytest.mark.parametrize("kw", CASES, ids=[str(c) for c in CASES])
def test_mjpeg_clips_frames_and_metadata(videos, kw):
    # Two files of 30 and 33 frames (25 and 30 fps, AVI's and Matroska's time bases, 4:2:0 and
    # 4:2:2), labelled; enough iterations to wrap the epoch.
    same(5, iterations=6, filenames=[videos["mjpeg"], videos["mjpeg422"]], labels=[4, 7], **kw)


def test_outputs_without_labels_and_from_file_root(videos, tmp_path):
    same(3, filenames=[videos["mjpeg"]], sequence_length=4, enable_timestamps=True)
    for cls, name in (("b_class", "mjpeg"), ("a_class", "mjpeg422")):
        (tmp_path / cls).mkdir()
        (tmp_path / cls / f"{name}.video").symlink_to(videos[name])
    same(4, iterations=4, file_root=str(tmp_path), sequence_length=6, enable_frame_num=True)


LISTS = [
    # (lines, arguments): timestamps between frames, on frames, past the end (frame 0: DALI's
    # quirk, an empty range skipped), negative times (not counted from the end: empty).
    ("{a} 3 0.1 0.5\n{b} 4 0.134 0.533\n", {}),
    ("{a} 3 0.1 0.5\n{b} 4 0.134 0.533\n", {"file_list_rounding": "start_up_end_down"}),
    ("{a} 3 0.1 0.5\n{b} 4 0.134 0.533\n", {"file_list_rounding": "all_up"}),
    ("{a} 3 0.1 0.5\n{b} 4 0.134 0.533\n", {"file_list_rounding": "all_down"}),
    ("{a} 3 0.5 2.0\n{b} 4 0.2 0.8\n{a} 5 -0.5 -0.1\n{b} 6\n", {}),
    ("{a} 1 0.3\n{b} 2 0 0.6\n", {"file_list_include_end": False}),
    # frame numbers: fractions rounded, negative ones from the end, an end past the file
    # (clamped, or with include_end=False padded)
    ("{a} 1 4.5 10.5\n{b} 2 -6 -1\n{b} 3 -6.5 -1.5\n", {"file_list_format": "frames"}),
    ("{a} 1 4.5 10.5\n{b} 2 -6.5 -1.5\n", {"file_list_format": "frames",
                                           "file_list_rounding": "start_up_end_down"}),
    ("{a} 1 25 40\n{b} 2 3 3\n{b} 9 30\n", {"file_list_format": "frames"}),
    ("{a} 1 25 40\n", {"file_list_format": "frames", "file_list_include_end": False,
                       "pad_mode": "edge"}),
    ("{a} 1 25 40\n", {"file_list_format": "frames", "file_list_include_end": False,
                       "pad_mode": "constant"}),
]


@pytest.mark.parametrize("lines,kw", LISTS, ids=[f"{i}" for i in range(len(LISTS))])
def test_file_list_ranges(videos, tmp_path, lines, kw):
    lst = tmp_path / "list.txt"
    lst.write_text(lines.format(a=videos["mjpeg"], b=videos["mjpeg422"]))
    # (DALI prints a warning for each empty range it skips; stoker skips them silently.)
    same(4, iterations=4, file_list=str(lst), sequence_length=2, step=3,
         enable_frame_num="sequence", enable_timestamps=True, **kw)


def test_random_shuffle_buffer_reads_each_clip_once_per_epoch(videos):
    """A buffer of one is DALI's order exactly (CASES); a larger one draws differently (as
    stoker's other readers: docs/dali_differences.md) over the same clips per epoch."""
    kw = dict(filenames=[videos["mjpeg"], videos["mjpeg422"]], labels=[0, 1], sequence_length=3,
              random_shuffle=True, initial_fill=4, enable_frame_num=True)
    n = 10 + 11
    for lib in ("stoker", "dali"):
        out, _ = read(lib, 1, n, **kw)
        clips = sorted((int(o[1][0][0]), int(o[2][0][0])) for o in out)
        assert clips == sorted([(0, f) for f in range(0, 30, 3)] +
                               [(1, f) for f in range(0, 33, 3)]), (lib, clips)


@pytest.mark.parametrize("name", ["vp9_smooth", "vp8"])
def test_vp8_vp9_frames_within_the_siting_difference(videos, name):
    ours = same(3, iterations=2, exact_frames=False, filenames=[videos[name]], labels=[2],
                sequence_length=4, stride=2, pad_mode="reflect_101", enable_frame_num="sequence",
                enable_timestamps=True)
    # Each frame is the one in its place: closer to it than to any other frame of the video.
    every, _ = read("stoker", 1, 1, filenames=[videos[name]], sequence_length=30)
    theirs, _ = read("dali", 3, 2, filenames=[videos[name]], labels=[2], sequence_length=4,
                     stride=2, pad_mode="reflect_101")
    frames = every[0][0][0].astype(np.float64)
    for o, t in zip(ours, theirs):
        for seq, tseq, numbers in zip(o[0], t[0], o[2]):
            for f, tf, n in zip(seq, tseq, numbers):
                d = np.abs(frames - tf).mean(axis=(1, 2, 3))
                assert int(np.argmin(d)) == n, (name, n, d)


def test_both_refuse(videos, tmp_path):
    mjpeg = videos["mjpeg"]
    lst = tmp_path / "list.txt"
    lst.write_text(f"{mjpeg} 0\n")
    for kw in (dict(filenames=[mjpeg], labels=[], sequence_length=2),
               dict(filenames=[mjpeg], sequence_length=2, pad_mode="wrap"),
               dict(filenames=[mjpeg], sequence_length=2, enable_frame_num="every"),
               dict(filenames=[mjpeg], sequence_length=2, fill_value=[300]),
               dict(file_list=str(lst), sequence_length=2, file_list_format="seconds"),
               dict(file_list=str(lst), sequence_length=2, file_list_rounding="nearest"),
               dict(filenames=[mjpeg], sequence_length=40),  # no clip fits, no padding
               dict(filenames=[mjpeg], file_root="/tmp", sequence_length=2)):
        for lib in ("stoker", "dali"):
            with pytest.raises(Exception):
                read(lib, 1, 1, **kw)


# -- experimental.inputs.video --------------------------------------------------------------
def fed(lib, batch, feeds, runs_between, **kw):
    """The batches experimental.inputs.video returns: the videos feeds[k] (paths) fed, then
    runs_between[k] runs, for each k."""
    mod = stoker if lib == "stoker" else dali

    @mod.pipeline_def(batch_size=batch, num_threads=2, device_id=None)
    def pipe_def():
        return mod.fn.experimental.inputs.video(name="vid", device="cpu", **kw)

    pipe = pipe_def()
    pipe.build()
    out = []
    for k, (paths, runs) in enumerate(zip(feeds, runs_between)):
        for p in paths:
            pipe.feed_input("vid", [np.fromfile(p, np.uint8)])
        for _ in range(runs):
            (b,) = pipe.run()
            assert b.layout() == "FHWC"
            out.append([np.array(b.at(i)) for i in range(len(b))])
    return out


@pytest.mark.parametrize("policy", ["partial", "pad"])
def test_inputs_video_batches(videos, policy):
    # 30 frames in sequences of 4, 3 a batch: 8 sequences, the last of 2 frames (partial) or
    # padded; 33 frames: 9 sequences, the last of 1. Fed before the runs: DALI 2.4 refuses a
    # video fed after the earlier ones were used up ("No data was provided": always with
    # 'pad', at times with 'partial', as its prefetching races the feed); stoker takes it
    # (test_video_readers_extra.py, docs/dali_differences.md).
    a, b = videos["mjpeg"], videos["mjpeg422"]
    feeds, runs = [[a, b, a, b]], [12]
    ours = fed("stoker", 3, feeds, runs, sequence_length=4, last_sequence_policy=policy)
    theirs = fed("dali", 3, feeds, runs, sequence_length=4, last_sequence_policy=policy)
    assert [[x.shape for x in o] for o in ours] == [[x.shape for x in t] for t in theirs]
    for o, t in zip(ours, theirs):
        for x, y in zip(o, t):
            assert np.array_equal(x, y)
