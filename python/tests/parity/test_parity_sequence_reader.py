"""readers.sequence against DALI 2.4's (deprecated) frame-folder reader on the same folders:
the same sequences (which windows, in which order, across epoch ends and shards) with the same
frames, shape, layout and dtype; the same folder and file ordering; image types; EXIF
orientation; the pre-shuffle of random_shuffle exactly (initial_fill=1); the same reader_meta;
and an error from both where DALI refuses the data. DALI's source_info is empty for this reader
(stoker names the frames: docs/dali_differences.md). Cases where DALI 2.4 itself crashes (step=0
loops forever; ANY_DATA on a greyscale JPEG; a frame whose EXIF orientation turns it a quarter)
are not run on DALI."""

import itertools
import os
import warnings

import numpy as np
import pytest

from parity_util import SKIP_REASON, _lib, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from PIL import Image  # noqa: E402

PARITY = {
    "readers.sequence": "exact: sequences, frames, order, shards, reader_meta; GRAY from colour "
                        "PNG within 1 (grey weights, as decoders.image)",
}


def _write(root, streams, size=(8, 6), ext="jpg", seed=0):
    rng = np.random.default_rng(seed)
    for name, count in streams.items():
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(count):
            a = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
            Image.fromarray(a).save(os.path.join(root, name, f"{i:03d}.{ext}"))
    return str(root)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Streams of 7, 5, 2 and 4 frames, the last a PNG stream of another size."""
    r = tmp_path_factory.mktemp("frames")
    _write(r, {"b": 5, "a": 7, "c": 2})
    _write(r, {"d": 4}, size=(5, 9), ext="png", seed=1)
    return str(r)


def _types(lib, kw):
    if lib == "dali" and "image_type" in kw:
        kw = dict(kw, image_type=getattr(dali.types, kw["image_type"]))
    return kw


def _read(lib, samples, batch=3, **kw):
    """The first `samples` sequences of the reader."""
    kw = _types(lib, kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # DALI deprecates the reader
        out = run(lib, lambda fn, types: fn.readers.sequence(name="Reader", **kw), batch,
                  iterations=-(-samples // batch))
    return [s for (b,) in out for s in b][:samples]


def _same(samples, atol=0, **kw):
    ours, theirs = (_read(lib, samples, **kw) for lib in ("stoker", "dali"))
    assert_same(ours, theirs, atol=atol, what=str(kw))
    return ours


@pytest.mark.parametrize("length,step,stride", [(3, 1, 1), (3, 2, 1), (2, 1, 3), (3, 3, 2),
                                                (1, 1, 1), (4, 1, 1)])
def test_sequences_frames_and_order_over_two_epochs(root, length, step, stride):
    ours = _same(17, file_root=root, sequence_length=length, step=step, stride=stride)
    assert all(s.ndim == 4 and s.shape[0] == length and s.dtype == np.uint8 for s in ours)


def test_layout_and_source_info(root):
    got = {}
    for lib in ("stoker", "dali"):
        pipe_def, fn, _, extra = _lib(lib)

        @pipe_def(batch_size=2, num_threads=1, **extra)
        def p():
            return fn.readers.sequence(file_root=root, sequence_length=2)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pipe = p()
        pipe.build()
        (b,) = pipe.run()
        got[lib] = (b.layout(), b[0].source_info())
    assert got["stoker"][0] == got["dali"][0] == "FHWC"
    assert got["dali"][1] == ""
    assert got["stoker"][1] == f"{root}/a/000.jpg .. 001.jpg (2 frames, stride 1)"


@pytest.mark.parametrize("image_type", ["RGB", "BGR", "GRAY", "ANY_DATA"])
def test_image_types(root, image_type):
    # GRAY from colour PNG: stoker weighs as PIL does, DALI rounds differently (within 1).
    _same(13, atol=1 if image_type == "GRAY" else 0, file_root=root, sequence_length=2,
          image_type=image_type)


def test_folder_and_file_order(tmp_path):
    r = _write(tmp_path, {"a": 2, "a.b": 1, "a b": 1, "B": 1, ".hidden": 1, "a/nested": 1})
    rng = np.random.default_rng(3)
    for name in ("a/X.JPG", "a/_1.jpeg", "a/y.Png", "a/.h.jpg"):
        Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)).save(
            tmp_path / name, format="PNG" if name.endswith("Png") else "JPEG")
    (tmp_path / "a" / "notes.txt").write_text("x")
    Image.fromarray(np.zeros((6, 8, 3), np.uint8)).save(tmp_path / "top.jpg")
    _same(10, batch=1, file_root=r, sequence_length=1)


def test_exif_orientation(tmp_path):
    a = np.zeros((6, 10, 3), np.uint8)
    a[:3, :5] = 255
    a[3:, 5:] = (255, 0, 0)
    os.makedirs(tmp_path / "s")
    for i, orientation in enumerate((3, 2, 4)):
        exif = Image.Exif()
        exif[0x0112] = orientation
        Image.fromarray(a).save(tmp_path / "s" / f"{i}.jpg", exif=exif, quality=100)
    _same(3, batch=1, file_root=str(tmp_path), sequence_length=1)


def test_shards_padding_and_reader_meta(root):
    keys = ("epoch_size", "epoch_size_padded", "number_of_shards", "shard_id", "pad_last_batch",
            "stick_to_shard")
    for shards, pad, stick in itertools.product((1, 2, 3), (False, True), (False, True)):
        for k in range(shards):
            kw = dict(file_root=root, sequence_length=2, step=2, shard_id=k, num_shards=shards,
                      pad_last_batch=pad, stick_to_shard=stick)
            _same(14, batch=2, **kw)
            metas = []
            for lib in ("stoker", "dali"):
                pipe_def, fn, _, extra = _lib(lib)

                @pipe_def(batch_size=2, num_threads=1, **extra)
                def p():
                    return fn.readers.sequence(name="Reader", **kw)

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    pipe = p()
                pipe.build()
                meta = pipe.reader_meta("Reader")
                metas.append({key: int(meta[key]) for key in keys})
            assert metas[0] == metas[1], kw


def test_random_shuffle(root):
    """A buffer of one is DALI's order exactly (the pre-shuffle of the sequence list); a larger
    buffer draws differently, over the same sequences per epoch."""
    n = 14  # sequences of 2 frames: 6 + 4 + 1 + 3
    for shards in (1, 3):
        for k in range(shards):
            kw = dict(file_root=root, sequence_length=2, random_shuffle=True, shard_id=k,
                      num_shards=shards, stick_to_shard=True)
            _same(20, batch=2, initial_fill=1, **kw)
            size = n * (k + 1) // shards - n * k // shards
            ours, theirs = (_read(lib, 2 * size, batch=1, initial_fill=4, **kw)
                            for lib in ("stoker", "dali"))
            for e in range(2):
                epoch = slice(e * size, (e + 1) * size)
                assert (sorted(x.tobytes() for x in ours[epoch]) ==
                        sorted(x.tobytes() for x in theirs[epoch])), (shards, k, e)


@pytest.mark.parametrize("case", ["missing", "short", "corrupt", "shapes", "ycbcr"])
def test_both_refuse(tmp_path, case):
    r = _write(tmp_path / "r", {"a": 3})
    kw = dict(file_root=r, sequence_length=3)
    if case == "missing":
        kw["file_root"] = str(tmp_path / "nope")
    elif case == "short":
        kw["sequence_length"] = 4
    elif case == "corrupt":
        (tmp_path / "r" / "a" / "001.jpg").write_bytes(b"notajpeg")
    elif case == "shapes":
        Image.fromarray(np.zeros((5, 5, 3), np.uint8)).save(tmp_path / "r" / "a" / "002.jpg")
    else:
        kw["image_type"] = "YCbCr"
    for lib in ("stoker", "dali"):
        with pytest.raises((RuntimeError, ValueError, OSError)):
            _read(lib, 1, batch=1, **kw)
