"""Loader core through readers.file: sharding with rotation or sticking, padding, global
shuffle coverage, checkpoint and resume."""

import numpy as np
import pytest

import stoker
from stoker import fn, types


def _reader_pipe(root, batch, seed=3, checkpoint=None, **reader_args):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=seed, checkpoint=checkpoint)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, name="Reader", **reader_args)
        pipe.set_outputs(jpegs, labels)
    return pipe


def _paths(batch):
    return [batch.source_info(i) for i in range(len(batch))]


@pytest.mark.parametrize("shards", [1, 3, 8])
@pytest.mark.parametrize("pad", [False, True])
def test_global_shuffle_reads_every_sample_once_per_epoch(jpeg_folder, shards, pad):
    # Without padding a batch may run over into the next epoch (as in DALI), so batch 1 keeps
    # the epochs apart; with padding, batch 2 and every epoch is batch-divisible.
    batch = 2 if pad else 1
    pipes = [_reader_pipe(jpeg_folder, batch, shard_id=k, num_shards=shards, shuffle="global",
                          pad_last_batch=pad) for k in range(shards)]
    orders = []
    for epoch in range(3):
        seen = []
        for p in pipes:
            meta = p.reader_meta()
            assert meta["pad_last_batch"] == pad and meta["number_of_shards"] == shards
            for (jpegs, _) in p:
                seen += _paths(jpegs)
            assert len(seen) % batch == 0
        assert len(set(seen)) == 24  # every sample of the dataset...
        assert len(seen) == sum(p.reader_meta()["shard_size"] for p in pipes)  # ...once
        if not pad:
            assert len(seen) == 24
        orders.append(seen)
    assert orders[0] != orders[1] != orders[2]  # a fresh permutation each epoch


def test_global_shuffle_exactly_once_with_padding(jpeg_folder):
    # 24 samples, 5 shards (sizes 4 and 5), batch 3 -> every shard reads 6 per epoch.
    pipes = [_reader_pipe(jpeg_folder, 3, shard_id=k, num_shards=5, shuffle="global",
                          pad_last_batch=True) for k in range(5)]
    assert pipes[0].reader_meta()["epoch_size_padded"] == 25  # DALI's: 5 x ceil(24 / 5)
    counts = {}
    for p in pipes:
        batches = list(p)
        assert len(batches) == 2
        paths = [x for b, _ in batches for x in _paths(b)]
        real = len(set(paths))
        assert real in (4, 5)
        assert len(set(paths[:real])) == real  # the shard's samples, each once
        assert all(x == paths[real - 1] for x in paths[real:])  # then its last, repeated
        for x in paths[:real]:
            counts[x] = counts.get(x, 0) + 1
    assert sorted(counts.values()) == [1] * 24


def test_stick_to_shard_and_rotation(jpeg_folder):
    stick = _reader_pipe(jpeg_folder, 4, shard_id=1, num_shards=3, stick_to_shard=True)
    rotate = _reader_pipe(jpeg_folder, 4, shard_id=1, num_shards=3)
    e1 = [x for b, _ in stick for x in _paths(b)]
    e2 = [x for b, _ in stick for x in _paths(b)]
    assert e1 == e2  # the same shard every epoch
    r1 = [x for b, _ in rotate for x in _paths(b)]
    r2 = [x for b, _ in rotate for x in _paths(b)]
    assert r1 == e1 and not set(r2) & set(r1)  # the next epoch reads the next shard


@pytest.mark.parametrize("shuffle", ["buffer", "global"])
def test_checkpoint_resumes_exactly_over_epochs(jpeg_folder, shuffle):
    @stoker.pipeline_def
    def train(root):
        jpegs, labels = fn.readers.file(file_root=root, shuffle=shuffle, initial_fill=8,
                                        name="Reader")
        images = fn.random_resized_crop(fn.decoders.image(jpegs), size=(16, 16))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                          dtype=types.FLOAT16)
        return images, labels

    def take(pipe, n):
        return [tuple(np.asarray(x).tobytes() for x in pipe.run()) for _ in range(n)]

    original = train(jpeg_folder, batch_size=5, num_threads=2, seed=11, prefetch_queue_depth=3)
    take(original, 7)  # 35 samples: past the first epoch of 24, mid second
    state = original.checkpoint()
    assert state.startswith("stoker-checkpoint v1\nseed 11\niteration 7\nop Reader ")
    expected = take(original, 9)  # through the third epoch

    resumed = train(jpeg_folder, batch_size=5, num_threads=3, seed=-1, checkpoint=state)
    assert resumed.seed == 11
    assert take(resumed, 9) == expected
    # A checkpoint of the resumed pipeline resumes too.
    again = train(jpeg_folder, batch_size=5, num_threads=1, seed=11,
                  checkpoint=resumed.checkpoint())
    assert take(again, 2) == take(resumed, 2)


def test_checkpoint_errors(jpeg_folder):
    p = _reader_pipe(jpeg_folder, 4, seed=5)
    p.run()
    state = p.checkpoint()
    with pytest.raises(ValueError, match="taken with seed 5 but this pipeline has seed 6"):
        _reader_pipe(jpeg_folder, 4, seed=6, checkpoint=state).build()
    with pytest.raises(ValueError, match=r"invalid checkpoint \(line 1\): expected "
                                         r"'stoker-checkpoint v1'"):
        _reader_pipe(jpeg_folder, 4, checkpoint="hello").build()
    other = stoker.Pipeline(batch_size=4, seed=5, checkpoint=state)
    with other:
        jpegs, _ = fn.readers.file(file_root=jpeg_folder, name="Other")
        other.set_outputs(jpegs)
    with pytest.raises(ValueError, match="has a state for operator 'Reader', which this "
                                         "pipeline does not have"):
        other.build()
    bad = state.replace("op Reader v2", "op Reader v9")
    with pytest.raises(ValueError, match="readers.file.*invalid reader state 'v9"):
        _reader_pipe(jpeg_folder, 4, seed=5, checkpoint=bad).build()


def test_on_error_skip_warns_counts_and_replaces(tmp_path, jpeg_folder):
    import shutil

    root = tmp_path / "data"
    shutil.copytree(jpeg_folder, root)
    bad = sorted((root / "class_1").iterdir())[0]
    bad.write_bytes(b"\xff\xd8\xff\xe0 this is not really a JPEG")
    pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=1, on_error="skip")
    with pipe:
        jpegs, labels = fn.readers.file(file_root=str(root), stick_to_shard=True)
        images = fn.resize(fn.decoders.image(jpegs), size=(8, 8))
        pipe.set_outputs(images, labels)
    with pytest.warns(RuntimeWarning, match=f"skipped a bad sample: decoders.image .*sample "
                                            f"\\d+ \\(source '{bad}'\\)"):
        seen = []
        for _ in range(3):  # one epoch of 23 good files, and one more
            images, labels = pipe.run()
            assert len(images) == 8
            seen += [images.source_info(i) for i in range(8)]
    assert str(bad) not in seen and len(set(seen)) == 23
    stats = pipe.error_stats()
    assert stats["skipped"] >= 1 and str(bad) in stats["recent"][0]
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'skip'"):
        p = stoker.Pipeline(batch_size=1, on_error="ignore")
        with p:
            p.set_outputs(fn.random.coin_flip())
        p.build()


def test_on_error_skip_cannot_replace_external_source_data():
    import numpy as np

    pipe = stoker.Pipeline(batch_size=2, on_error="skip")
    with pipe:
        enc = fn.external_source(lambda: [np.frombuffer(b"junk", np.uint8)] * 2)
        pipe.set_outputs(fn.decoders.image(enc))
    with pytest.raises(ValueError, match="cannot replace samples that come from an "
                                         "external_source"):
        pipe.run()
