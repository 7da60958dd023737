"""readers.video on the CPU: the test videos of video_fixtures.py (H.264 with B-frames and long
GOPs, HEVC, VP9, MPEG-4; mp4, mkv, webm, avi; 4:2:0, 4:2:2, 4:4:4, odd sizes, BT.709 full
range, a variable frame rate), a truncated file and a file with no video, read back against PyAV:
its frames' planes through the documented conversion (tests/reference.py), its frame numbers and
its timestamps; DALI's rules for sequences, file lists, labels, padding and outputs; errors
naming the file. The sequence rules are DALI's (readers/video_index_test.cpp tests them one by
one); DALI's own reader runs on NVDEC only, so the comparison with it runs on the GPU machine."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

from reference import chroma_upsample, ycbcr_to_rgb
from video_fixtures import videos_or_skip

av = pytest.importorskip("av", reason="PyAV (scripts/setup installs it)")
if not _stoker.build_info()["ffmpeg"]:
    pytest.skip("stoker was built without FFmpeg: no video", allow_module_level=True)
if shutil.which("ffmpeg") is None:
    pytest.skip("the ffmpeg tool is missing (scripts/setup installs it)", allow_module_level=True)

@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return videos_or_skip(tmp_path_factory.mktemp("videos"))


def pyav_frames(path):
    """Every frame in display order: (planes as float arrays, its time in seconds), and the
    stream's colour description."""
    with av.open(path) as c:
        out = []
        for f in c.decode(video=0):
            planes = []
            for k, p in enumerate(f.planes):
                a = np.frombuffer(p, np.uint8).reshape(-1, p.line_size)[:p.height, :p.width]
                planes.append(a.astype(np.float64))
            out.append((planes, float(f.pts * f.time_base), f.colorspace, f.color_range))
        return out


def reference_rgb(frame, clip=True):
    (y, cb, cr), _, colorspace, color_range = frame
    h, w = y.shape
    # libswscale's 4:4:4 conversion of other formats is not modelled: the streams here are 8-bit.
    return ycbcr_to_rgb(y, chroma_upsample(cb, w, h), chroma_upsample(cr, w, h),
                        bt709=colorspace == 1, full_range=color_range == 2, clip=clip)


def run(batch, iterations=1, **kw):
    """[iteration][output][sample] as numpy arrays."""
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=5)
    with pipe:
        out = fn.readers.video(name="V", **kw)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    pipe.build()
    result = []
    for _ in range(iterations):
        result.append([[np.array(b.at(i)) for i in range(len(b))] for b in pipe.run()])
    return result


@pytest.mark.parametrize("name", ["h264", "longgop", "hevc", "vp9", "mpeg4", "odd444", "422",
                                  "bt709full"])
def test_frames_are_pyav_planes_converted_as_documented(videos, name):
    path = videos[name]
    ref = pyav_frames(path)
    length, stride, step = 4, 3, 5
    starts = list(range(0, len(ref) - (length - 1) * stride, step))
    (out,) = run(len(starts), filenames=[path], labels=[7], sequence_length=length, stride=stride,
                 step=step, enable_frame_num="sequence")
    video, labels, numbers = out
    for seq, lab, num, start in zip(video, labels, numbers, starts):
        assert seq.shape == (length,) + ref[0][0][0].shape + (3,) and seq.dtype == np.uint8
        assert lab.tolist() == [7]
        assert num.tolist() == [start + k * stride for k in range(length)]
        for k in range(length):
            want = reference_rgb(ref[start + k * stride])
            # Fixed-point coefficients and rounding to nearest: within 0.52 of the real value.
            assert np.abs(seq[k] - want).max() <= 0.52, (name, start, k)


def test_float_normalized_and_ycbcr_outputs(videos):
    path = videos["h264"]
    ref = pyav_frames(path)
    common = dict(filenames=[path], sequence_length=3, stride=2, step=7)
    (u8,) = run(2, **common)[0]
    (f32,) = run(2, dtype="float32", **common)[0]
    (norm,) = run(2, dtype="float32", normalized=True, **common)[0]
    (ycc,) = run(2, image_type="YCbCr", **common)[0]
    for i, start in enumerate((0, 7)):
        assert f32[i].dtype == np.float32 and norm[i].dtype == np.float32
        for k in range(3):
            frame = ref[start + 2 * k]
            want = reference_rgb(frame, clip=False)  # floats are not clamped (DALI's neither)
            assert np.abs(f32[i][k] - want).max() < 0.02
            assert np.abs(norm[i][k] - want / 255).max() < 0.02 / 255
            assert f32[i][k].min() < 0 or f32[i][k].max() > 255  # the pattern leaves the cube
            # uint8: the float rounded and saturated
            assert np.abs(np.clip(f32[i][k], 0, 255) - u8[i][k]).max() <= 0.5 + 1e-3
            y, cb, cr = frame[0]
            h, w = y.shape
            want_ycc = np.stack([y, chroma_upsample(cb, w, h), chroma_upsample(cr, w, h)], -1)
            assert np.abs(ycc[i][k] - want_ycc).max() <= 0.5


def test_frame_numbers_and_timestamps_match_pyav(videos):
    for name in ("h264", "vp9", "vfr"):
        path = videos[name]
        ref = pyav_frames(path)
        (out,) = run(3, filenames=[path], labels=[], sequence_length=4, step=2,
                     enable_frame_num="scalar", enable_timestamps=True,
                     skip_vfr_check=name == "vfr")
        video, labels, first, times = out
        for i, start in enumerate((0, 2, 4)):
            assert labels[i].tolist() == [0]  # labels=[]: each file's position
            assert first[i].tolist() == [start] and first[i].dtype == np.int32
            assert times[i].dtype == np.float64
            want = [ref[start + k][1] - ref[0][1] for k in range(4)]
            np.testing.assert_allclose(times[i], want, atol=1e-9, err_msg=name)
            assert np.abs(video[i][0] - reference_rgb(ref[start])).max() <= 0.52


def test_variable_frame_rate_is_refused_unless_told(videos):
    with pytest.raises(ValueError, match=r"vfr\.mkv' has a variable frame rate .*skip_vfr_check"):
        run(1, filenames=[videos["vfr"]], sequence_length=2)
    # 30 fps in a millisecond time base (33, 33, 34 ms) is not variable.
    run(1, filenames=[videos["vp9"]], sequence_length=2)


def test_file_root_labels_and_every_sequence_once(tmp_path, videos):
    for cls, names in (("cats", ["h264", "vp9"]), ("dogs", ["mpeg4"])):
        (tmp_path / cls).mkdir()
        for n in names:
            ext = os.path.splitext(videos[n])[1]
            shutil.copy(videos[n], tmp_path / cls / f"{n}{ext}")
    # 30 frames each, step = sequence_length = 8: 3 sequences per file; classes and files in
    # sorted order (cats/h264, cats/vp9, dogs/mpeg4).
    (out,) = run(9, file_root=str(tmp_path), sequence_length=8)
    video, labels = out
    assert [int(x[0]) for x in labels] == [0] * 6 + [1] * 3
    assert [v.shape for v in video] == [(8, 70, 96, 3)] * 9
    h264 = pyav_frames(videos["h264"])
    assert np.abs(video[1][0] - reference_rgb(h264[8])).max() <= 0.52


def test_file_list_ranges_by_time_and_by_frame_number(tmp_path, videos):
    path = videos["h264"]  # 30 frames at 25 fps
    lst = tmp_path / "list.txt"
    lst.write_text(f"{path} 3 0.1 0.9\n{path} 4 -0.4 0\n{path} 5 1 1\n")
    (out,) = run(14, file_list=str(lst), sequence_length=2, step=2, enable_frame_num=True)
    _, labels, first = out
    # 0.1 s -> frame ceil(2.5) = 3, 0.9 s -> floor(22.5) = 22: starts 3, 5, ..., 19; -0.4 s
    # from the end -> 30 + ceil(-10) = 20, to the end: 20, ..., 28; the third line is an empty
    # range and skipped (DALI's rules).
    assert [int(x[0]) for x in first] == list(range(3, 20, 2)) + list(range(20, 29, 2))
    assert [int(x[0]) for x in labels] == [3] * 9 + [4] * 5
    lst.write_text(f"{path} 1 0.1 0.9\n")
    (out,) = run(1, file_list=str(lst), sequence_length=2, step=100, enable_frame_num=True,
                 file_list_include_preceding_frame=True)
    assert out[2][0].tolist() == [2]  # floor(2.5)
    lst.write_text(f"{path} 1 4 10\n{path} 2 -6 -1\n")
    (out,) = run(2, file_list=str(lst), sequence_length=3, step=100, enable_frame_num=True,
                 file_list_frame_num=True)
    assert [x.tolist() for x in out[2]] == [[4], [24]]


def test_pad_sequences_zero_the_missing_frames(videos):
    path = videos["h264"]  # 30 frames
    ref = pyav_frames(path)
    (out,) = run(4, filenames=[path], labels=[1], sequence_length=8, stride=2, step=9,
                 pad_sequences=True, enable_frame_num="sequence", enable_timestamps=True)
    video, _, numbers, times = out
    # Starts 0, 9, 18, 27: 8 frames span 15; 18 keeps (29 - 18) // 2 + 1 = 6, 27 keeps 2.
    assert [n.tolist() for n in numbers] == [
        list(range(0, 16, 2)), list(range(9, 25, 2)), [18, 20, 22, 24, 26, 28, -1, -1],
        [27, 29, -1, -1, -1, -1, -1, -1]]
    assert times[3].tolist()[2:] == [-1.0] * 6
    assert not video[3][2:].any() and not video[2][6:].any()
    assert np.abs(video[3][1] - reference_rgb(ref[29])).max() <= 0.52
    # Without padding the last two starts are dropped.
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.readers.video(name="V", filenames=[path], sequence_length=8,
                                          stride=2, step=9))
    pipe.build()
    assert pipe.reader_meta("V")["epoch_size"] == 2


def test_one_or_four_io_threads_give_the_same_batches(videos):
    kw = dict(filenames=[videos["h264"], videos["hevc"]], labels=[0, 1], sequence_length=5,
              step=3, random_shuffle=True, initial_fill=5, enable_frame_num=True)
    a = run(4, iterations=4, num_io_threads=1, **kw)
    b = run(4, iterations=4, num_io_threads=4, prefetch_queue_depth=3, **kw)
    for x, y in zip(a, b):
        for ox, oy in zip(x, y):
            assert all(np.array_equal(p, q) for p, q in zip(ox, oy))


def test_bad_files_and_arguments_are_named(tmp_path, videos):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00" * 4096)
    audio = tmp_path / "audio.wav"
    subprocess.run(f"ffmpeg -v error -y -f lavfi -i sine=duration=0.2 {audio}", shell=True,
                   check=True)
    cut = tmp_path / "cut.mkv"
    data = open(videos["hevc"], "rb").read()
    cut.write_bytes(data[:len(data) * 2 // 3])
    h264 = videos["h264"]
    cases = [
        (dict(filenames=[str(junk)]), ValueError, r"junk\.mp4': not a video file"),
        # An FFmpeg with a WAV demuxer finds no video stream in it; the wheel's subset (video
        # containers only) cannot open it as a video at all.
        (dict(filenames=[str(audio)]), ValueError,
         r"audio\.wav': (no video stream|not a video file FFmpeg can read)"),
        (dict(filenames=[str(tmp_path / "none.mp4")]), IOError, r"none\.mp4"),
        (dict(filenames=[h264], file_root=str(tmp_path)), ValueError,
         "give exactly one of `filenames`, `file_root` and `file_list`"),
        (dict(file_root=str(tmp_path), labels=[1]), ValueError, "`labels` go with `filenames`"),
        (dict(filenames=[h264], enable_frame_num=True), ValueError,
         "frame numbers and timestamps need `file_list`, or `filenames` with `labels`"),
        (dict(filenames=[h264], labels=[0], enable_frame_num="every"), ValueError,
         "enable_frame_num must be 'none', 'scalar' or 'sequence'"),
        (dict(filenames=[h264, h264], labels=[0]), ValueError, "got 1 labels for 2 files"),
        (dict(filenames=[h264], normalized=True), ValueError, "normalized needs dtype=float32"),
        (dict(filenames=[h264], dtype="int16"), TypeError, "dtype must be uint8 or float32"),
        (dict(filenames=[h264], image_type="BGR"), ValueError, "image_type must be RGB or YCbCr"),
        (dict(filenames=[h264], channels=1), ValueError, "channels must be 3"),
        (dict(filenames=[h264], sequence_length=40), ValueError,
         "no sequence of 40 frames .* fits in the 1 files given"),
        (dict(filenames=[h264], step=0), ValueError, "step != 0"),
    ]
    for kw, error, message in cases:
        kw.setdefault("sequence_length", 2)
        with pytest.raises(error, match=message):
            run(1, **kw)
    # A truncated file (HEVC with B-frames): its index has gaps, which read as a variable frame
    # rate; told to go on, it reads the frames that are there, as PyAV does.
    with pytest.raises(ValueError, match=r"cut\.mkv' has a variable frame rate"):
        run(1, filenames=[str(cut)], sequence_length=2)
    with av.open(str(cut)) as c:
        readable = [f.pts for f in c.decode(video=0)]
    (out,) = run(len(readable), filenames=[str(cut)], labels=[0], sequence_length=1,
                 skip_vfr_check=True, enable_timestamps=True)
    tb = 1 / 1000  # Matroska's time base
    assert [float(t[0]) for t in out[2]] == pytest.approx([(p - readable[0]) * tb
                                                           for p in readable])
    # Corrupt bytes inside the stream: the sequence that needs them fails, naming the file, the
    # sample and its frames.
    data = bytearray(open(h264, "rb").read())
    at = len(data) // 3
    data[at:at + 3000] = np.random.default_rng(1).integers(0, 256, 3000, np.uint8).tobytes()
    bad = tmp_path / "corrupt.mp4"
    bad.write_bytes(bytes(data))
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.readers.video(name="V", filenames=[str(bad)], sequence_length=1,
                                          skip_vfr_check=True))
    pipe.build()
    with pytest.raises(ValueError, match=r"source '.*corrupt\.mp4 frames (\d+)\.\.\1 step 1'\): "
                                         r"video '.*corrupt\.mp4': decoding failed"):
        for _ in range(pipe.reader_meta("V")["epoch_size"]):
            pipe.run()


def test_on_error_skip_replaces_the_sequences_a_corrupt_file_spoils(tmp_path, videos):
    """on_error='skip': sequences whose frames cannot be decoded are replaced by the next ones
    read, each skip named with the file, its frames and the cause."""
    h264 = videos["h264"]
    data = bytearray(open(h264, "rb").read())
    at = len(data) // 3
    data[at:at + 3000] = np.random.default_rng(1).integers(0, 256, 3000, np.uint8).tobytes()
    bad = tmp_path / "corrupt.mp4"
    bad.write_bytes(bytes(data))
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, on_error="skip")
    with pipe:
        frames, labels = fn.readers.video(name="V", filenames=[h264, str(bad)], labels=[0, 1],
                                          sequence_length=2, skip_vfr_check=True)
        pipe.set_outputs(frames, labels)
    pipe.build()
    batches = pipe.reader_meta("V")["epoch_size"] // 4
    with pytest.warns(RuntimeWarning, match="skipped a bad sample"):
        for _ in range(batches):
            frames_out, labels_out = pipe.run()
            assert all(np.array(f).shape[0] == 2 for f in frames_out)
    stats = pipe.error_stats()
    assert stats["skipped"] >= 1
    assert any(re.search(r"corrupt\.mp4 frames \d+\.\.\d+ step 1'\): video '.*corrupt\.mp4': "
                         r"decoding failed", m) for m in stats["recent"]), stats["recent"]
