"""Inputs that claim more than they hold, and smaller reader and codec faults: a tiny video whose
frames claim 16000x16000 pixels is refused before anything is allocated (readers.video and
decoders.video, under a 2 GiB address-space limit); Resize(random_resize=True) with a huge range
draws from it without listing it; EXIF orientations stored as LONG or SLONG are applied;
readers.coco(lazy_init=True) reads its annotations at the first run, not at build;
readers.video under on_error="skip" skips an unreadable file among readable ones; and
as_array() of a batch with too many dimensions says why."""

import io
import os
import struct
import subprocess
import sys
import textwrap
import warnings
import zlib

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, ops

needs_ffmpeg = pytest.mark.skipif(not _stoker.build_info()["ffmpeg"],
                                  reason="stoker was built without FFmpeg: no video")

# --- Videos written by hand: AVI (RIFF) with PNG frames (FourCC MPNG), no ffmpeg tool needed.

def _png(w, h, rows=None):
    """A PNG of w x h RGB pixels; for huge claims only its first rows are in the data (a small
    file that claims a big image)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = rows if rows is not None else (h if w * h < 10**6 else 4)
    raw = b"".join(b"\0" + bytes([(37 * y + 3 * x) % 256 for x in range(3 * w)])
                   if w * h < 10**6 else b"\0" + b"\x80" * (3 * w) for y in range(rows))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _avi(frames, w, h, fps=25):
    """An AVI of the given PNG frames; its headers say w x h."""
    def ck(tag, data):
        return tag + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")

    def lst(kind, data):
        return ck(b"LIST", kind + data)
    biggest = max(len(f) for f in frames)
    avih = struct.pack("<10I4I", 1000000 // fps, 0, 0, 0x10, len(frames), 0, 1, biggest, w, h,
                       0, 0, 0, 0)
    strh = struct.pack("<4s4sIHHIIIIIIIIhhhh", b"vids", b"MPNG", 0, 0, 0, 0, 1, fps, 0,
                       len(frames), biggest, 0xFFFFFFFF, 0, 0, 0, w & 0x7FFF, h & 0x7FFF)
    strf = struct.pack("<IiiHH4sIiiII", 40, w, h, 1, 24, b"MPNG", w * h * 3, 0, 0, 0, 0)
    hdrl = lst(b"hdrl", ck(b"avih", avih) + lst(b"strl", ck(b"strh", strh) + ck(b"strf", strf)))
    movi, idx1 = b"", b""
    for f in frames:
        idx1 += struct.pack("<4sIII", b"00dc", 0x10, 4 + len(movi), len(f))
        movi += ck(b"00dc", f)
    body = b"AVI " + hdrl + lst(b"movi", movi) + ck(b"idx1", idx1)
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.fixture
def small_video(tmp_path):
    path = tmp_path / "small.avi"
    path.write_bytes(_avi([_png(32, 24)] * 4, 32, 24))
    return str(path)


def _run_limited(code, limit_bytes=2 << 30, timeout=60):
    """`code` in a fresh interpreter whose address space is capped at `limit_bytes`."""
    prelude = ("import resource\n"
               f"resource.setrlimit(resource.RLIMIT_AS, ({limit_bytes}, {limit_bytes}))\n")
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout)


_VIDEO_CODE = """
    import numpy as np
    import stoker
    from stoker import fn
    path, which = {path!r}, {which!r}
    # No device: CUDA would reserve more address space than the limit allows.
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        if which == "reader":
            pipe.set_outputs(fn.readers.video(filenames=[path], sequence_length=2))
        else:
            data = fn.external_source(source=lambda: [np.fromfile(path, np.uint8)] * 2,
                                      batch=True)
            pipe.set_outputs(fn.decoders.video(data))
    try:
        pipe.build()
        pipe.run()
        print("NO ERROR")
    except Exception as e:
        print(type(e).__name__, e)
    # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec).
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    print("peak MiB", int(hwm) // 1024)
"""


@needs_ffmpeg
@pytest.mark.parametrize("which", ["reader", "decoder"])
def test_video_claiming_huge_frames_is_refused_before_allocation(tmp_path, which,
                                                                 address_space_cap):
    """A 6 KB AVI whose headers and PNG frames claim 16000x16000: refused with an error naming
    the operator, the file (or sample) and the claimed size, with memory to spare under a 2 GiB
    address-space limit (before: readers.video peaked at 2.7 GB, decoders.video asked for
    30 GB)."""
    path = tmp_path / "huge.avi"
    path.write_bytes(_avi([_png(16000, 16000)] * 20, 16000, 16000))
    assert path.stat().st_size < 16_000
    r = _run_limited(_VIDEO_CODE.format(path=str(path), which=which))
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    op = "readers.video" if which == "reader" else "decoders.video"
    where = "huge.avi" if which == "reader" else "sample 0"
    assert out.startswith("ValueError"), out
    assert op in out and where in out, out
    assert "its frames are 16000x16000 pixels, above max_pixels (134217728)" in out, out
    assert int(out.split("peak MiB")[1]) < 400, out


@needs_ffmpeg
def test_video_frames_larger_than_the_header_are_refused_before_allocation(tmp_path,
                                                                          address_space_cap):
    """Headers that say 32x24 and frames that claim 16000x16000 (from the fourth on): the
    decoder refuses those frames without allocating them."""
    path = tmp_path / "liar.avi"
    path.write_bytes(_avi([_png(32, 24)] * 3 + [_png(16000, 16000)] * 3, 32, 24))
    r = _run_limited(_VIDEO_CODE.format(path=str(path), which="decoder"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ValueError"), r.stdout
    assert "decoders.video" in r.stdout and "sample 0" in r.stdout
    assert "frames above max_pixels, 134217728 pixels, are refused" in r.stdout, r.stdout
    assert int(r.stdout.split("peak MiB")[1]) < 400, r.stdout


@needs_ffmpeg
def test_hand_made_video_reads(small_video):
    """The hand-made AVI itself decodes (the tests above fail for their size, not their
    format)."""
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.readers.video(filenames=[small_video], sequence_length=2))
    (video,) = pipe.run()
    assert [tuple(s) for s in video.shape()] == [(2, 24, 32, 3)] * 2


# --- Resize(random_resize=True): a range, not a list of its values.

def test_old_random_resize_with_a_huge_range_draws_from_it(address_space_cap):
    """resize_b=10**8 listed every value (> 6 GB) at definition; now a draw from the range: the
    pipeline is defined and built under a 1 GiB address-space limit."""
    r = _run_limited("""
        import warnings
        import numpy as np
        from stoker import ops, Pipeline
        warnings.simplefilter("ignore", DeprecationWarning)
        class P(Pipeline):
            def __init__(self):
                super().__init__(batch_size=1, num_threads=1, device_id=None)
                self.input = ops.ExternalSource(source=lambda: [np.zeros((4, 4, 3), np.uint8)])
                self.resize = ops.Resize(random_resize=True, resize_a=256, resize_b=10**8)
            def define_graph(self):
                return self.resize(self.input())
        P().build()
        print("BUILT")
    """, limit_bytes=1 << 30)
    assert r.returncode == 0 and "BUILT" in r.stdout, r.stderr[-2000:]


def test_old_random_resize_draws_every_size_of_the_range_evenly():
    class P(stoker.Pipeline):
        def __init__(self):
            super().__init__(batch_size=300, num_threads=1, device_id=None, seed=4)
            self.input = ops.ExternalSource(
                source=lambda: [np.zeros((8, 10, 3), np.uint8)] * 300)
            self.resize = ops.Resize(random_resize=True, resize_a=20, resize_b=22)

        def define_graph(self):
            return self.resize(self.input())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        (out,) = P().run()
    shorter = [min(s[:2]) for s in out.shape()]
    counts = {v: shorter.count(v) for v in set(shorter)}
    assert set(counts) == {20, 21, 22}, counts  # the ends as often as the middle
    assert min(counts.values()) > 70, counts


# --- EXIF orientation stored as LONG or SLONG.

def _exif(orientation, type_code, big_endian):
    """An APP1 'Exif' payload whose IFD0 holds only the orientation, of TIFF type `type_code`."""
    e = ">" if big_endian else "<"
    value = (struct.pack(e + "HH", orientation, 0) if type_code == 3
             else struct.pack(e + ("I" if type_code == 4 else "i"), orientation))
    tiff = ((b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8)
            + struct.pack(e + "H", 1) + struct.pack(e + "HHI", 0x0112, type_code, 1) + value
            + struct.pack(e + "I", 0))
    return b"Exif\0\0" + tiff


def _jpeg(orientation, type_code, big_endian):
    from PIL import Image
    rng = np.random.default_rng(orientation)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (24, 40, 3), dtype=np.uint8)).save(
        buf, "JPEG", quality=92, exif=_exif(orientation, type_code, big_endian))
    return buf.getvalue()


def _decode(blobs, **kw):
    pipe = stoker.Pipeline(batch_size=len(blobs), num_threads=1)
    with pipe:
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        pipe.set_outputs(fn.decoders.image(data, **kw))
    (out,) = pipe.run()
    return [np.array(out[i]) for i in range(len(blobs))]


def test_exif_orientation_stored_as_long_or_slong_is_applied():
    """As PIL's exif_transpose applies it (stoker's documented reference), in both byte orders;
    a negative SLONG is out of range: the image as stored."""
    PIL = pytest.importorskip("PIL.Image")
    from PIL import ImageOps
    blobs = [_jpeg(o, t, big) for t in (4, 9) for big in (False, True) for o in range(1, 9)]
    got = _decode(blobs)
    stored = _decode(blobs, adjust_orientation=False)
    for k, (blob, g, s) in enumerate(zip(blobs, got, stored)):
        want = np.array(ImageOps.exif_transpose(_with_exif_of(PIL, s, blob)))
        np.testing.assert_array_equal(g, want, err_msg=f"blob {k}")
    assert sum(g.shape != s.shape for g, s in zip(got, stored)) == 4 * 4  # 5..8 swap axes
    negative = _jpeg(6, 9, False).replace(struct.pack("<i", 6), struct.pack("<i", -6), 1)
    assert _decode([negative])[0].shape == (24, 40, 3)


def _with_exif_of(PIL, pixels, blob):
    """`pixels` as a PIL image carrying the EXIF of `blob` (for exif_transpose)."""
    img = PIL.fromarray(pixels)
    img.info["exif"] = PIL.open(io.BytesIO(blob)).info["exif"]
    return img


# --- readers.coco(lazy_init=True).

def _coco(folder):
    from PIL import Image
    os.makedirs(folder / "images", exist_ok=True)
    Image.fromarray(np.full((8, 10, 3), 90, np.uint8)).save(folder / "images" / "a.jpg")
    (folder / "ann.json").write_text(
        '{"images": [{"id": 1, "file_name": "a.jpg", "width": 10, "height": 8}], '
        '"annotations": [{"id": 5, "image_id": 1, "category_id": 3, "bbox": [1, 2, 4, 3], '
        '"area": 12, "iscrowd": 0}], "categories": [{"id": 3, "name": "c"}]}')


def _coco_pipe(folder, **kw):
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        images, boxes, labels = fn.readers.coco(file_root=str(folder / "images"),
                                                annotations_file=str(folder / "ann.json"), **kw)
        pipe.set_outputs(images, boxes, labels)
    return pipe


def test_coco_lazy_init_reads_the_annotations_at_the_first_run(tmp_path):
    """DALI's lazy_init: the build does not read the annotations (they may not exist yet);
    the first run does."""
    pipe = _coco_pipe(tmp_path, lazy_init=True)
    pipe.build()  # no annotations yet
    _coco(tmp_path)
    images, boxes, labels = pipe.run()
    assert np.array(boxes[0]).tolist() == [[1, 2, 4, 3]]
    assert np.array(labels[0]).tolist() == [1]
    # Still missing at the first run: that run fails, naming the file.
    missing = _coco_pipe(tmp_path / "none", lazy_init=True)
    missing.build()
    with pytest.raises(OSError, match=r"readers\.coco.*annotations_file.*none/ann\.json"):
        missing.run()
    # Without lazy_init the build reads them.
    with pytest.raises(OSError, match=r"readers\.coco.*annotations_file.*none/ann\.json"):
        _coco_pipe(tmp_path / "none").build()


# --- readers.video under on_error="skip": an unreadable file among readable ones.

def _video_reader_pipe(files, on_error):
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, on_error=on_error)
    with pipe:
        video, labels = fn.readers.video(name="V", filenames=files,
                                         labels=list(range(len(files))), sequence_length=1)
        pipe.set_outputs(video, labels)
    return pipe


@needs_ffmpeg
def test_video_reader_skips_an_unreadable_file_under_on_error_skip(tmp_path, small_video):
    junk = tmp_path / "junk.avi"
    junk.write_bytes(b"\0" * 4096)
    files = [small_video, str(junk), small_video]
    pipe = _video_reader_pipe(files, "skip")
    pipe.build()  # was: "video '.../junk.avi': not a video file FFmpeg can read"
    labels_seen = set()
    with pytest.warns(RuntimeWarning, match=r"skipped a bad sample: readers\.video.*source "
                                            r"'.*junk\.avi'\): video '.*junk\.avi': not a video "
                                            r"file FFmpeg can read"):
        for _ in range(pipe.reader_meta("V")["epoch_size"]):
            video, labels = pipe.run()
            labels_seen |= {int(np.array(labels[i])[0]) for i in range(len(labels))}
            assert all(tuple(s) == (1, 24, 32, 3) for s in video.shape())
    assert labels_seen == {0, 2}
    stats = pipe.error_stats()
    assert stats["skipped"] >= 1
    assert any("junk.avi" in m for m in stats["recent"]), stats["recent"]
    # on_error="raise": the first run names the file (the build cannot know the mode).
    raising = _video_reader_pipe(files, "raise")
    raising.build()
    with pytest.raises(ValueError, match=r"readers\.video.*junk\.avi': not a video file"):
        raising.run()
    # No readable file at all: the build fails, as before.
    with pytest.raises(ValueError, match=r"junk\.avi': not a video file"):
        _video_reader_pipe([str(junk)], "skip").build()


# --- as_array() beyond numpy's dimensions.

def test_as_array_of_too_many_dimensions_says_why():
    shape = (1,) * 64
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source=lambda: [np.zeros(shape, np.uint8)] * 2,
                                            batch=True))
    (out,) = pipe.run()
    assert out.at(0).shape == shape  # the samples themselves are fine
    message = (r"as_array: the samples have 64 dimensions \(shape \(1, 1, 1, .*\)\); with the "
               r"batch's dimension that is 65, more than numpy's 64")
    with pytest.raises(ValueError, match=message):
        out.as_array()
    with pytest.raises(ValueError, match=message):
        np.asarray(out)
