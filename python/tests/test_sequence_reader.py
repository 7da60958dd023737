"""readers.sequence (DALI's frame-folder reader): small JPEG/PNG frame folders written with PIL,
read back against PIL's decoding of the same files; which windows are sequences and in what
order (readers/sequence_index_test.cpp has the rules one by one); image types, EXIF
orientation; epochs and shards (every sequence once per epoch across the shards); errors naming
the file. The comparison with DALI 2.4 itself is parity/test_parity_sequence_reader.py."""

import os
import re
import warnings

import numpy as np
import pytest
from PIL import Image, ImageOps

import stoker
from stoker import fn, ops


def write_streams(root, streams, size=(8, 6), ext="jpg", seed=0):
    """streams: {folder: frame count}; frame i of a stream is <folder>/<i:03d>.<ext>, random
    pixels (W x H = size)."""
    rng = np.random.default_rng(seed)
    for name, count in streams.items():
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(count):
            a = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
            Image.fromarray(a).save(os.path.join(root, name, f"{i:03d}.{ext}"))
    return str(root)


def pil(path, mode="RGB"):
    with Image.open(path) as im:
        a = np.asarray(ImageOps.exif_transpose(im).convert(mode))
    return a[..., None] if a.ndim == 2 else a


def read(batch_size=2, epochs=1, name="S", **kw):
    """Every sample of `epochs` epochs: [(frames array, source_info)], and reader_meta."""
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=2, seed=5)
    with pipe:
        pipe.set_outputs(fn.readers.sequence(name=name, **kw))
    pipe.build()
    meta = pipe.reader_meta(name)
    out = []
    for _ in range(epochs * -(-meta["epoch_size"] // batch_size)):
        (b,) = pipe.run()
        assert b.layout() == "FHWC"
        out += [(np.array(b.at(i)), b.source_info(i)) for i in range(len(b))]
    return out, meta


def windows(root, length, step=1, stride=1):
    """DALI's rule, written out: streams in sorted order, starts 0, step, ... while the last
    frame is in the stream."""
    result = []
    for s in sorted(os.listdir(root)):
        frames = sorted(os.listdir(os.path.join(root, s)))
        for i in range(0, len(frames), step):
            if i + (length - 1) * stride >= len(frames):
                break
            result.append([os.path.join(root, s, frames[i + k * stride]) for k in range(length)])
    return result


@pytest.mark.parametrize("length,step,stride", [(3, 1, 1), (3, 2, 1), (2, 1, 3), (3, 3, 2),
                                                (1, 1, 1)])
def test_sequences_are_the_windows_dali_cuts_decoded_as_pil_decodes(tmp_path, length, step,
                                                                    stride):
    root = write_streams(tmp_path, {"b": 5, "a": 7, "c": 2})
    expected = windows(root, length, step, stride)
    got, meta = read(batch_size=3, sequence_length=length, step=step, stride=stride,
                     file_root=root)
    assert meta["epoch_size"] == len(expected)
    got = got[:len(expected)]
    for (frames, info), paths in zip(got, expected):
        assert frames.dtype == np.uint8 and frames.shape == (length, 6, 8, 3)
        np.testing.assert_array_equal(frames, np.stack([pil(p) for p in paths]))
        last = os.path.basename(paths[-1])
        assert info == f"{paths[0]} .. {last} ({length} frames, stride {stride})"


def test_png_frames_and_image_types(tmp_path):
    rng = np.random.default_rng(1)
    os.makedirs(tmp_path / "s")
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (5, 7, 4), dtype=np.uint8)).save(
            tmp_path / "s" / f"{i}.png")
    paths = [str(tmp_path / "s" / f"{i}.png") for i in range(3)]
    for image_type, check in (
            ("RGB", lambda f, p: np.testing.assert_array_equal(f, pil(p))),
            (stoker.types.BGR, lambda f, p: np.testing.assert_array_equal(f, pil(p)[..., ::-1])),
            # Grey from colour: weighed as PIL weighs it, within rounding.
            (stoker.types.GRAY, lambda f, p: np.testing.assert_allclose(
                f.astype(int), pil(p, "L").astype(int), atol=1)),
            ("ANY_DATA", lambda f, p: np.testing.assert_array_equal(f, pil(p, "RGBA")))):
        got, _ = read(batch_size=1, file_root=str(tmp_path), sequence_length=3,
                      image_type=image_type)
        frames = got[0][0]
        assert frames.shape[:3] == (3, 5, 7)
        for f, p in zip(frames, paths):
            check(f, p)


def test_exif_orientation_is_applied(tmp_path):
    """As DALI's decoder: frames are shown as EXIF says (a quarter turn swaps the axes)."""
    os.makedirs(tmp_path / "s")
    a = np.zeros((6, 10, 3), np.uint8)
    a[:3, :5] = 255
    a[3:, 5:] = (255, 0, 0)
    for i in range(2):
        exif = Image.Exif()
        exif[0x0112] = 6
        Image.fromarray(a).save(tmp_path / "s" / f"{i}.jpg", exif=exif, quality=100)
    got, _ = read(batch_size=1, file_root=str(tmp_path), sequence_length=2)
    frames = got[0][0]
    assert frames.shape == (2, 10, 6, 3)
    np.testing.assert_array_equal(frames[0], pil(str(tmp_path / "s" / "0.jpg")))


def test_streams_and_frames_sorted_as_dali_sorts_them(tmp_path):
    """Paths sorted bytewise ("a b" < "a.b" < "a", "X" < "_" < "y"), one folder level, hidden
    entries and other files skipped, extensions in any case."""
    root = write_streams(tmp_path, {"a": 2, "a.b": 1, "a b": 1, ".hidden": 1, "a/nested": 1})
    rng = np.random.default_rng(7)
    for name in ("a/X.JPG", "a/_1.jpeg", "a/y.Png", "a/.h.jpg"):
        Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)).save(
            tmp_path / name, format="PNG" if name.endswith("Png") else "JPEG")
    (tmp_path / "a" / "notes.txt").write_text("x")
    Image.fromarray(np.zeros((6, 8, 3), np.uint8)).save(tmp_path / "top.jpg")
    got, meta = read(batch_size=1, file_root=root, sequence_length=1)
    order = [info.split(" .. ")[0][len(root) + 1:] for _, info in got]
    assert order == ["a b/000.jpg", "a.b/000.jpg", "a/000.jpg", "a/001.jpg", "a/X.JPG",
                     "a/_1.jpeg", "a/y.Png"]
    for frames, info in got:
        np.testing.assert_array_equal(frames[0], pil(info.split(" .. ")[0]))


@pytest.mark.parametrize("shards,pad,shuffle", [(1, False, False), (3, False, False),
                                                (3, True, False), (2, False, True),
                                                (3, False, "global")])
def test_every_sequence_once_per_epoch_across_shards(tmp_path, shards, pad, shuffle):
    root = write_streams(tmp_path, {"a": 9, "b": 6, "c": 4}, size=(4, 4))
    expected = windows(root, 3, 2, 1)  # 4 + 2 + 1 = 7 sequences
    assert len(expected) == 7
    by_pixels = {np.stack([pil(p) for p in w]).tobytes(): w[0] for w in expected}
    batch = 2
    for epoch in range(2):
        seen = []
        for k in range(shards):
            kw = dict(file_root=root, sequence_length=3, step=2, shard_id=k, num_shards=shards,
                      pad_last_batch=pad, stick_to_shard=True)
            if shuffle == "global":
                kw["shuffle"] = "global"
            elif shuffle:
                kw["random_shuffle"] = True
                kw["initial_fill"] = 3
            got, meta = read(batch_size=batch, epochs=epoch + 1, **kw)
            assert meta["epoch_size"] == 7
            assert meta["epoch_size_padded"] == (-(-7 // shards) * shards if pad else 7)
            size = 7 * (k + 1) // shards - 7 * k // shards
            # Epochs follow one another in the stream of samples; padded ones hold whole batches.
            per_epoch = -(-(-(-7 // shards)) // batch) * batch if pad else size
            epoch_samples = got[epoch * per_epoch:(epoch + 1) * per_epoch]
            assert len(epoch_samples) == per_epoch
            firsts = [by_pixels[f.tobytes()] for f, _ in epoch_samples]
            if pad:
                assert all(p == firsts[size - 1] for p in firsts[size:])
            seen += firsts[:size]
        assert sorted(seen) == sorted(w[0] for w in expected), (epoch, shards)


def test_older_names(tmp_path):
    root = write_streams(tmp_path, {"a": 3})
    expected = np.stack([pil(os.path.join(root, "a", f"{i:03d}.jpg")) for i in range(2)])
    for make in (lambda: fn.sequence_reader(file_root=root, sequence_length=2),
                 lambda: ops.SequenceReader(file_root=root, sequence_length=2)(),
                 lambda: ops.readers.Sequence(file_root=root, sequence_length=2)()):
        pipe = stoker.Pipeline(batch_size=1, num_threads=1)
        with pipe, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pipe.set_outputs(make())
        pipe.build()
        np.testing.assert_array_equal(np.array(pipe.run()[0].at(0)), expected)


def test_argument_and_dataset_errors(tmp_path):
    root = write_streams(tmp_path / "r", {"a": 2, "b": 1})
    os.makedirs(tmp_path / "empty" / "s")
    (tmp_path / "empty" / "s" / "notes.txt").write_text("x")
    prefix = r"readers\.sequence \(defined at .*\): "
    cases = [
        (dict(file_root=str(tmp_path / "nope")), OSError,
         f"{prefix}file_root '{tmp_path}/nope' is not a folder \\(or cannot be read\\)"),
        (dict(file_root=str(tmp_path / "empty")), ValueError,
         f"{prefix}file_root '{tmp_path}/empty' holds no frames: expected image files in its "
         f"sub-folders \\('{tmp_path}/empty/\\*/\\*', a folder per stream\\)"),
        (dict(file_root=root, sequence_length=3), ValueError,
         f"{prefix}readers.sequence: no sequence of 3 frames \\(stride 1: 3 frames of a "
         f"stream\\) fits in the 2 streams of '{root}' \\(the longest has 2 frames\\)"),
        (dict(file_root=root, sequence_length=2, stride=2), ValueError,
         "no sequence of 2 frames \\(stride 2: 3 frames of a stream\\)"),
        (dict(file_root=root, sequence_length=0), ValueError,
         "readers.sequence: sequence_length must be >= 1, got 0"),
        (dict(file_root=root, step=0), ValueError, "readers.sequence: step must be >= 1, got 0"),
        (dict(file_root=root, stride=-1), ValueError,
         "readers.sequence: stride must be >= 1, got -1"),
        (dict(file_root=root, image_type=stoker.types.YCbCr), ValueError,
         "readers.sequence: image_type must be RGB, BGR, GRAY or ANY_DATA, got 'YCbCr'"),
        (dict(sequence_length=1), TypeError, "missing required argument 'file_root'"),
    ]
    for kw, error, message in cases:
        kw.setdefault("sequence_length", 1)
        with pytest.raises(error, match=message):
            read(batch_size=1, **kw)


def _bad_stream(tmp_path, damage):
    root = write_streams(tmp_path, {"a": 3})
    bad = os.path.join(root, "a", "001.jpg")
    damage(bad)
    return root, bad


@pytest.mark.parametrize("damage,error,cause", [
    (lambda p: open(p, "wb").write(b"notajpeg"), ValueError,
     "not a recognised image format"),
    # DALI refuses a truncated frame too (its decoder fails); libjpeg-turbo's warning raises.
    (lambda p: open(p, "r+b").truncate(os.path.getsize(p) // 2), ValueError,
     "invalid JPEG: Premature end of JPEG file"),
    (lambda p: Image.fromarray(np.zeros((5, 5, 3), np.uint8)).save(p), ValueError,
     "is \\(5, 5, 3\\) but the sequence's first frame '.*000.jpg' is \\(6, 8, 3\\): the frames "
     "of a sequence must have one shape"),
])
def test_unreadable_frames_name_the_sample_and_the_file(tmp_path, damage, error, cause):
    root, bad = _bad_stream(tmp_path, damage)
    with pytest.raises(error) as e:
        read(batch_size=1, file_root=root, sequence_length=3)
    text = str(e.value)
    assert text.startswith("Error in operator readers.sequence (defined at "), text
    assert (f"iteration 0, sample 0 (source '{root}/a/000.jpg .. 002.jpg (3 frames, stride "
            f"1)'): frame '{bad}'") in text, text
    assert re.search(cause, text), text


def test_missing_frame_file_and_on_error_skip(tmp_path):
    root = write_streams(tmp_path, {"a": 3, "b": 2})
    bad = os.path.join(root, "a", "001.jpg")
    os.remove(bad)
    os.symlink(os.path.join(root, "gone.jpg"), bad)  # listed, unreadable
    with pytest.raises(OSError, match=f"cannot open '{bad}': No such file or directory"):
        read(batch_size=1, file_root=root, sequence_length=2)
    # on_error="skip": the two sequences that need the frame are replaced by good ones.
    pipe = stoker.Pipeline(batch_size=3, num_threads=1, on_error="skip")
    with pipe:
        pipe.set_outputs(fn.readers.sequence(file_root=root, sequence_length=2))
    pipe.build()
    with pytest.warns(RuntimeWarning, match="skipped a bad sample"):
        (b,) = pipe.run()
    assert all(np.array(b.at(i)).shape == (2, 6, 8, 3) for i in range(len(b)))
    assert pipe.error_stats()["skipped"] >= 1
