"""Sample-major chains: cpu operators that each feed the next (decoder -> resize -> flip ->
normalize...) run per sample in one pass. The batches, errors and skipped samples must be exactly
those of running each operator over the batch on its own (STOKER_SAMPLE_MAJOR=0)."""
import shutil

import numpy as np
import pytest

import stoker
from stoker import fn, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def _train(root, coin_first=False, **kw):
    pipe = stoker.Pipeline(batch_size=8, num_threads=3, seed=7, **kw)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="reader")
        if coin_first:
            mirror = fn.random.coin_flip(name="coin")
        images = fn.decoders.image_random_crop(jpegs, name="decoder")
        images = fn.resize(images, size=(24, 24), name="resize")
        if not coin_first:
            # Defined among the chain's members and independent of them: runs before the chain.
            mirror = fn.random.coin_flip(name="coin")
        out = fn.crop_mirror_normalize(images, mirror=mirror, mean=MEAN, std=STD,
                                       dtype=types.FLOAT16, output_layout="CHW", name="cmn")
        pipe.set_outputs(out, labels)
    return pipe


def _heavy(root):
    pipe = stoker.Pipeline(batch_size=8, num_threads=3, seed=3)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=root, name="reader")
        images = fn.decoders.image(jpegs, name="decoder")
        images = fn.flip(images, horizontal=fn.random.coin_flip(), vertical=fn.random.coin_flip(),
                         name="flip")
        images = fn.rotate(images, angle=fn.random.uniform(range=(-10.0, 10.0)), keep_size=True,
                           name="rotate")
        images = fn.random_resized_crop(images, size=(20, 20), name="rrc")
        images = fn.crop(images, crop=(16, 16), name="crop")
        pipe.set_outputs(fn.crop_mirror_normalize(images, mean=MEAN, std=STD, name="cmn"))
    return pipe


def _val(root):
    pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=1)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=root, name="reader")
        images = fn.resize(fn.decoders.image(jpegs, name="decoder"), resize_shorter=20,
                           name="resize")
        # A cast is not chained: the chain ends before it, the normalize runs on its own.
        images = fn.cast(images, dtype=types.FLOAT, name="cast")
        pipe.set_outputs(fn.crop_mirror_normalize(images, crop=(16, 16), name="cmn"))
    return pipe


def _batches(make, root, monkeypatch, sample_major, runs=3):
    monkeypatch.setenv("STOKER_SAMPLE_MAJOR", "1" if sample_major else "0")
    pipe = make(root)
    out = [[np.asarray(o.as_array()) for o in pipe.run()] for _ in range(runs)]
    return out, pipe.operator_times()


@pytest.mark.parametrize("make", [_train, _heavy, _val], ids=["train", "heavy", "val"])
def test_chains_give_the_same_batches(jpeg_folder, monkeypatch, make):
    ref, ref_times = _batches(make, jpeg_folder, monkeypatch, False)
    got, times = _batches(make, jpeg_folder, monkeypatch, True)
    for a, b in zip(ref, got):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert all(t["chain"] == -1 for t in ref_times)
    # Every member counts its runs, samples and bytes as it would on its own (the producer may
    # have run ahead by a different number of batches).
    assert [t["name"] for t in times] == [r["name"] for r in ref_times]
    for t in times:
        assert t["runs"] >= 3 and t["samples"] == 8 * t["runs"]
        if t["chain"] >= 0:
            assert t["seconds"] > 0 and t["bytes_in"] > 0 and t["bytes_out"] > 0


def test_which_operators_are_chained(jpeg_folder, monkeypatch):
    chains = {}
    for make in (_train, _heavy, _val):
        _, times = _batches(make, jpeg_folder, monkeypatch, True, runs=1)
        chains[make.__name__] = [t["name"] for t in times if t["chain"] == 0]
        assert all(t["chain"] in (-1, 0) for t in times)
    assert chains == {"_train": ["decoder", "resize", "cmn"],
                      "_heavy": ["decoder", "flip", "rotate", "rrc", "crop", "cmn"],
                      "_val": ["decoder", "resize"]}
    pipe = _train(jpeg_folder)
    pipe.run()
    assert "run per sample, one pass: decoder -> resize -> cmn" in pipe.report()


def _broken_folder(tmp_path, jpeg_folder):
    """The JPEG folder with one file cut just after its scan header: the header reads, the
    pixels of any window fail to decode (in the chain's pass, after every member's batch
    part)."""
    root = tmp_path / "data"
    shutil.copytree(jpeg_folder, root)
    bad = sorted((root / "class_1").iterdir())[2]
    data = bad.read_bytes()
    sos = data.index(b"\xff\xda")
    bad.write_bytes(data[: sos + 2 + int.from_bytes(data[sos + 2:sos + 4], "big") + 4])
    return str(root), str(bad)


def _first_error(make, root, monkeypatch, sample_major):
    monkeypatch.setenv("STOKER_SAMPLE_MAJOR", "1" if sample_major else "0")
    pipe = make(root)
    with pytest.raises(ValueError) as e:
        for _ in range(4):
            pipe.run()
    return str(e.value)


def test_an_error_in_the_pass_is_reported_as_without_chains(tmp_path, jpeg_folder, monkeypatch):
    root, bad = _broken_folder(tmp_path, jpeg_folder)
    ref = _first_error(_train, root, monkeypatch, False)
    got = _first_error(_train, root, monkeypatch, True)
    assert got == ref
    assert "decoders.image_random_crop" in got and f"(source '{bad}')" in got
    assert "sample " in got


def test_skipped_samples_are_replaced_as_without_chains(tmp_path, jpeg_folder, monkeypatch):
    root, bad = _broken_folder(tmp_path, jpeg_folder)
    runs = {}
    for sample_major in (False, True):
        monkeypatch.setenv("STOKER_SAMPLE_MAJOR", "1" if sample_major else "0")
        # The coin flip is defined before the decoder: moved up before the chain, it would be
        # drawn again, in the replacement round, for the replaced samples (with chains only).
        pipe = _train(root, coin_first=True, on_error="skip")
        with pytest.warns(RuntimeWarning, match="skipped a bad sample"):
            batches = [pipe.run() for _ in range(4)]
        runs[sample_major] = [[np.asarray(o.as_array()) for o in b] for b in batches]
        sources = [b[0].source_info(i) for b in batches for i in range(8)]
        assert bad not in sources
        assert pipe.error_stats()["skipped"] >= 1
    for a, b in zip(runs[False], runs[True]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
