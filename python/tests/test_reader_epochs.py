"""Epochs are epochs, for every reader: swept over shuffle modes (random_shuffle, the global
shuffle, shuffle_after_epoch), shard counts, stick_to_shard, pad_last_batch and batch sizes,
one epoch of all shards delivers every sample of the dataset exactly once (plus padding at the
end of each shard's epoch, repeating its last sample), and a checkpoint taken anywhere resumes
the same stream. The issue's case: 2,560 files, random_shuffle, batch 64, 1/2/3/8 shards; and
the torch iterator's epochs are permutations."""

import itertools
import os
import shutil
import subprocess

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, tfrecord
from stoker.tools.convert import write_shard

N = 11  # samples in every test dataset: 3 shards hold 3, 4 and 4


def _write_files(root):
    for i in range(N):
        d = root / f"class{i % 3}"
        d.mkdir(exist_ok=True)
        (d / f"s{i:02d}.jpg").write_bytes(bytes([i]) * 4)
    return lambda **kw: fn.readers.file(file_root=str(root), **kw)[0]


def _write_numpy(root):
    for i in range(N):
        np.save(root / f"a{i:02d}.npy", np.full((2,), i, np.int32))
    return lambda **kw: fn.readers.numpy(file_root=str(root), **kw)


def _write_fits(root):
    fits = pytest.importorskip("astropy.io.fits")
    if not _stoker.build_info()["cfitsio"]:
        pytest.skip("stoker was built without cfitsio")
    for i in range(N):
        fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.full((2,), i, np.int32))]).writeto(
            root / f"a{i:02d}.fits")
    return lambda **kw: fn.experimental.readers.fits(file_root=str(root), **kw)


def _container(fmt, ext, make):
    def write(root):
        # Four files of 4, 0, 5 and 2 samples (an empty one holds a place in file orders).
        paths, start = [], 0
        for k, count in enumerate((4, 0, 5, 2)):
            path = str(root / f"part{k}.{ext}")
            write_shard(fmt, path, [(bytes([start + i]) * 3, start + i, "jpg")
                                    for i in range(count)], first_id=start)
            paths.append(path)
            start += count
        if fmt == "webdataset":  # tar cannot hold an empty file list: drop the empty shard
            paths = [p for p in paths if os.path.getsize(p + ".idx") > 20]
        return lambda **kw: make(paths, **kw)
    return write


def _lmdb(reader):
    def write(root):
        lmdb = pytest.importorskip("lmdb")
        from stoker.tools.convert import field, varint
        env = lmdb.open(str(root / "db"), map_size=1 << 22)
        with env.begin(write=True) as txn:
            for i in range(N):
                if reader == "caffe":  # an encoded Datum
                    value = (field(4, bytes([i]) * 3) + varint(5 << 3) + varint(i) +
                             varint(7 << 3) + varint(1))
                else:  # a TensorProtos with one uint8 tensor
                    value = field(1, field(1, varint(3)) + varint(2 << 3) + varint(3) +
                                  field(5, bytes([i]) * 3))
                txn.put(f"{i:04d}".encode(), value)
        env.close()
        if reader == "caffe":
            return lambda **kw: fn.readers.caffe(path=str(root / "db"), **kw)[0]
        return lambda **kw: fn.readers.caffe2(path=str(root / "db"), label_type=4, **kw)
    return write


def _video(root):
    # Two videos of 5 and 6 frames: one-frame sequences make 11 samples.
    if shutil.which("ffmpeg") is None or not _stoker.build_info()["ffmpeg"]:
        pytest.skip("video needs FFmpeg in stoker and the ffmpeg tool")
    paths = []
    for k, seconds in enumerate((0.2, 0.24)):
        paths.append(str(root / f"v{k}.mp4"))
        subprocess.run(f"ffmpeg -v error -y -f lavfi -i testsrc2=size=32x24:rate=25:"
                       f"duration={seconds} -c:v libx264 -g 4 {paths[-1]}", shell=True, check=True)
    return lambda **kw: fn.readers.video(filenames=paths, sequence_length=1, **kw)


_FORMATS = {
    "file": _write_files,
    "numpy": _write_numpy,
    "fits": _write_fits,
    "tfrecord": _container("tfrecord", "tfrecord", lambda paths, **kw: fn.readers.tfrecord(
        path=paths, index_path=[p + ".idx" for p in paths],
        features={"image/class/label": tfrecord.FixedLenFeature([1], tfrecord.int64, -1)},
        **kw)["image/class/label"]),
    "mxnet": _container("recordio", "rec", lambda paths, **kw: fn.readers.mxnet(
        path=paths, index_path=[p + ".idx" for p in paths], **kw)[0]),
    "webdataset": _container("webdataset", "tar", lambda paths, **kw: fn.readers.webdataset(
        paths=paths, ext=["jpg"], **kw)),
    "caffe": _lmdb("caffe"),
    "caffe2": _lmdb("caffe2"),
    "video": _video,
}

_SHUFFLES = {
    "none": {},
    "random_shuffle": {"random_shuffle": True, "initial_fill": 4},
    "global": {"shuffle": "global"},
    "shuffle_after_epoch": {"shuffle_after_epoch": True},
}


@pytest.fixture(scope="module", params=sorted(_FORMATS))
def reader(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(request.param)
    return request.param, _FORMATS[request.param](root)


def _pipe(make, batch, checkpoint=None, **kw):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=1, seed=7, checkpoint=checkpoint)
    with pipe:
        out = make(name="R", num_io_threads=1, prefetch_queue_depth=1, **kw)
        pipe.set_outputs(out if not isinstance(out, (list, tuple)) else out[0])
    return pipe


def _stream(pipe, batches):
    out = []
    for _ in range(batches):
        (b,) = pipe.run()
        out += [b.source_info(i) for i in range(len(b))]
    return out


def _shard_size(k, n):  # DALI's shard k of n: [N*k/n, N*(k+1)/n)
    return N * (k + 1) // n - N * k // n


@pytest.mark.parametrize("shuffle", sorted(_SHUFFLES))
def test_every_epoch_holds_every_sample_once_across_shards(reader, shuffle):
    name, make = reader
    cases = 0
    for shards, stick, pad, batch in itertools.product((1, 3), (False, True), (False, True),
                                                       (2, 3)):
        if stick and shuffle == "shuffle_after_epoch":
            continue  # DALI refuses the pair; tested below
        own = stick or shuffle in ("global", "shuffle_after_epoch")
        padded = -(-(-(-N // shards)) // batch) * batch  # ceil(ceil(N / shards) / batch) * batch
        epochs = [[] for _ in range(3)]
        for k in range(shards):
            pipe = _pipe(make, batch, shard_id=k, num_shards=shards, stick_to_shard=stick,
                         pad_last_batch=pad, **_SHUFFLES[shuffle])
            lengths = [padded if pad else _shard_size(k if own else (k + e) % shards, shards)
                       for e in range(3)]
            assert pipe.reader_meta("R")["shard_size"] == lengths[0]
            stream = _stream(pipe, -(-sum(lengths) // batch))
            for e in range(3):
                part, stream = stream[:lengths[e]], stream[lengths[e]:]
                real = _shard_size(k if own else (k + e) % shards, shards)
                assert len(set(part[:real])) == real, (name, shuffle, shards, stick, pad, batch)
                assert part[real:] == [part[real - 1]] * (len(part) - real)  # padding at the end
                epochs[e] += part[:real]
        for e, seen in enumerate(epochs):
            assert len(seen) == N and len(set(seen)) == N, (name, shuffle, shards, stick, pad,
                                                            batch, e)
        if shuffle in ("random_shuffle", "global") and shards == 1:
            assert epochs[0] != epochs[1] or epochs[0] != sorted(epochs[0]), "not shuffled"
        cases += 1
    assert cases >= 8


@pytest.mark.parametrize("shuffle", sorted(_SHUFFLES))
def test_checkpoints_resume_the_same_stream(reader, shuffle):
    name, make = reader
    for shards, pad, stop in ((1, False, 5), (3, True, 3), (3, False, 7)):
        args = dict(shard_id=shards - 1, num_shards=shards, pad_last_batch=pad,
                    **_SHUFFLES[shuffle])
        a = _pipe(make, 2, **args)
        _stream(a, stop)
        state = a.checkpoint()
        b = _pipe(make, 2, checkpoint=state, **args)
        assert _stream(b, 12) == _stream(a, 12), (name, shuffle, shards, pad, stop)


def test_shuffle_after_epoch_refuses_stick_to_shard(reader):
    _, make = reader
    with pytest.raises(ValueError, match="shuffle_after_epoch and stick_to_shard cannot be both "
                                         "true"):
        _pipe(make, 2, shuffle_after_epoch=True, stick_to_shard=True).build()


@pytest.fixture(scope="module")
def files_2560(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    for c in range(10):
        d = root / f"n{c:08d}"
        d.mkdir()
        for i in range(256):
            (d / f"img_{i:04d}.JPEG").write_bytes(b"")
    return str(root)


@pytest.mark.parametrize("shards", [1, 2, 3, 8])
def test_random_shuffle_over_2560_files_gives_2560_per_epoch(files_2560, shards):
    """The issue's case: readers.file(random_shuffle=True), batch 64."""
    streams = []
    for k in range(shards):
        pipe = stoker.Pipeline(batch_size=64, num_threads=2, seed=1)
        with pipe:
            jpegs, _ = fn.readers.file(file_root=files_2560, random_shuffle=True, shard_id=k,
                                       num_shards=shards)
            pipe.set_outputs(jpegs)
        streams.append(_stream(pipe, -(-2 * 2560 // shards // 64) + 1))
    for e in range(2):
        seen = []
        for k, s in enumerate(streams):
            start = sum(_shard_size_of(2560, (k + j) % shards, shards) for j in range(e))
            seen += s[start:start + _shard_size_of(2560, (k + e) % shards, shards)]
        assert len(seen) == 2560 and len(set(seen)) == 2560, (shards, e)
    if shards > 1:  # DALI's fixed pre-shuffle: shards are random subsets, not runs of classes
        first = {os.path.basename(os.path.dirname(p)) for p in streams[0][:64]}
        assert len(first) >= 8


def _shard_size_of(n, k, shards):
    return n * (k + 1) // shards - n * k // shards


def test_torch_iterator_epochs_are_permutations(files_2560):
    """ClassificationIterator over 3 padded shards: with PARTIAL every epoch is a permutation
    of the dataset; FILL returns the padding too (repeats of a shard's last sample); DROP only
    full batches, none repeated. Labels are the files' positions in `files` (DALI's default)."""
    torch_plugin = pytest.importorskip("stoker.plugins.torch")
    policy_t = torch_plugin.LastBatchPolicy
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(files_2560) for f in fs)
    for policy in (policy_t.PARTIAL, policy_t.FILL, policy_t.DROP):
        per_epoch = [[] for _ in range(3)]
        for k in range(3):
            pipe = stoker.Pipeline(batch_size=64, num_threads=2, seed=1)
            with pipe:
                _, labels = fn.readers.file(files=files, random_shuffle=True, shard_id=k,
                                            num_shards=3, pad_last_batch=True, name="Reader")
                pipe.set_outputs(labels, labels)
            it = torch_plugin.ClassificationIterator(pipe, reader_name="Reader",
                                                     last_batch_policy=policy, auto_reset=True)
            for e in range(3):
                for batch in it:
                    per_epoch[e] += batch[0]["label"].flatten().tolist()
        for e, ids in enumerate(per_epoch):
            if policy == policy_t.PARTIAL:
                assert sorted(ids) == list(range(2560)), (policy, e)
            elif policy == policy_t.FILL:
                assert set(ids) == set(range(2560)) and len(ids) == 3 * 896, (policy, e)
            else:
                assert len(ids) == len(set(ids)) == 3 * 832, (policy, e)
