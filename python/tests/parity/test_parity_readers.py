"""Readers against DALI 2.4 on the same files: the same samples (bytes and labels) in the same
order unshuffled, the same shard contents under DALI's sharding rules, DALI's exact orders where
DALI fixes them (random_shuffle's pre-shuffle of file lists, shuffle_after_epoch), the same
reader_meta, and the same number of batches per epoch from the torch iterators for every
LastBatchPolicy."""

import itertools
import os

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from stoker.tools.convert import field, varint, write_shard  # noqa: E402

PARITY = {
    "readers.file": "exact",
    "readers.numpy": "exact",
    "readers.tfrecord": "exact",
    "readers.mxnet": "exact",
    "readers.webdataset": "exact",
    "readers.caffe": "exact",
    "readers.caffe2": "exact",
}

N = 13


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The same 13 samples in every format: sample i's bytes are bytes([i]) * (i + 3)."""
    root = tmp_path_factory.mktemp("parity_readers")
    blobs = [bytes([i]) * (i + 3) for i in range(N)]
    files = root / "files"
    for i, b in enumerate(blobs):
        d = files / f"class{i % 4}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:02d}.jpg").write_bytes(b)
    (root / "list.txt").write_text("".join(f"files/class{i % 4}/f{i:02d}.jpg {100 + i}\n"
                                           for i in range(N)))
    npy = root / "npy"
    npy.mkdir()
    for i in range(N):
        np.save(npy / f"a{i:02d}.npy", np.arange(i + 1, dtype=np.int16) * i)
    # A list in another order, names relative to the list's folder (no file_root).
    (npy / "list.txt").write_text("".join(f"a{i:02d}.npy\n" for i in reversed(range(N))))
    containers = {}
    for fmt, ext in (("tfrecord", "tfrecord"), ("recordio", "rec"), ("webdataset", "tar")):
        paths, start = [], 0
        # (DALI's readers.mxnet takes one index file: one .rec file there.)
        for k, count in enumerate((N,) if fmt == "recordio" else (5, 3, 5)):
            path = str(root / f"part{k}.{ext}")
            write_shard(fmt, path, [(blobs[start + i], start + i, "jpg") for i in range(count)],
                        first_id=start)
            paths.append(path)
            start += count
        containers[fmt] = paths
    lmdb = pytest.importorskip("lmdb")
    for kind in ("caffe", "caffe2"):
        env = lmdb.open(str(root / kind), map_size=1 << 22)
        with env.begin(write=True) as txn:
            for i, b in enumerate(blobs):
                if kind == "caffe":
                    value = field(4, b) + varint(5 << 3) + varint(i) + varint(7 << 3) + varint(1)
                else:  # TensorProtos: the bytes as a STRING tensor, the label as INT32
                    value = (field(1, field(1, varint(1)) + varint(2 << 3) + varint(4) +
                                   field(6, b)) +
                             field(1, field(1, varint(1)) + varint(2 << 3) + varint(2) +
                                   field(4, varint(i))))
                txn.put(f"{i:04d}".encode(), value)
        env.close()
    return {"root": root, "blobs": blobs, "containers": containers}


def _readers(d):
    """name -> reader(fn, **loader_args) giving (data, label) nodes."""
    c, root = d["containers"], d["root"]

    def tfrecord(fn, **kw):
        from importlib import import_module
        lib = "nvidia.dali" if fn.__name__.startswith("nvidia") else "stoker"
        tfr = import_module(lib + ".tfrecord")
        out = fn.readers.tfrecord(path=c["tfrecord"], index_path=[p + ".idx" for p in c["tfrecord"]],
                                  features={"image/encoded": tfr.FixedLenFeature((), tfr.string, ""),
                                            "image/class/label": tfr.FixedLenFeature([1], tfr.int64,
                                                                                     -1)}, **kw)
        return out["image/encoded"], out["image/class/label"]

    return {
        "file": lambda fn, **kw: fn.readers.file(file_root=str(root / "files"), **kw),
        "file_list": lambda fn, **kw: fn.readers.file(file_list=str(root / "list.txt"),
                                                      file_root=str(root), **kw),
        "files": lambda fn, **kw: fn.readers.file(
            files=sorted(str(p) for p in (root / "files").rglob("*.jpg")), **kw),
        "numpy": lambda fn, **kw: (fn.readers.numpy(file_root=str(root / "npy"), **kw),) * 2,
        "numpy_list": lambda fn, **kw: (fn.readers.numpy(file_list=str(root / "npy" / "list.txt"),
                                                         **kw),) * 2,
        "numpy_o_direct": lambda fn, **kw: (fn.readers.numpy(file_root=str(root / "npy"),
                                                             use_o_direct=True, dont_use_mmap=True,
                                                             **kw),) * 2,
        "tfrecord": tfrecord,
        "mxnet": lambda fn, **kw: fn.readers.mxnet(path=c["recordio"],
                                                   index_path=[p + ".idx" for p in c["recordio"]],
                                                   **kw),
        "webdataset": lambda fn, **kw: fn.readers.webdataset(
            paths=c["webdataset"], index_paths=[p + ".idx" for p in c["webdataset"]],
            ext=["jpg", "cls"], **kw),
        "caffe": lambda fn, **kw: fn.readers.caffe(path=str(root / "caffe"), **kw),
        "caffe2": lambda fn, **kw: fn.readers.caffe2(path=str(root / "caffe2"), **kw),
    }


def _stream(lib, reader, samples, batch=1, **kw):
    """The first `samples` (data, label) pairs of the reader, as bytes."""
    out = run(lib, lambda fn, types: tuple(reader(fn, name="Reader", **kw)), batch,
              iterations=-(-samples // batch))
    pairs = []
    for data, labels in out:
        pairs += [(x.tobytes(), y.tobytes()) for x, y in zip(data, labels)]
    return pairs[:samples]


READERS = ("file", "file_list", "files", "numpy", "numpy_list", "numpy_o_direct", "tfrecord",
           "mxnet", "webdataset", "caffe", "caffe2")


@pytest.mark.parametrize("name", READERS)
def test_unshuffled_reads_are_the_same_samples_in_the_same_order(data, name):
    reader = _readers(data)[name]
    for shards, stick in ((1, False), (3, False), (3, True)):
        for k in range(shards):
            kw = dict(shard_id=k, num_shards=shards, stick_to_shard=stick)
            ours, theirs = (_stream(lib, reader, 2 * N + 3, **kw) for lib in ("stoker", "dali"))
            assert ours == theirs, (name, shards, k, stick)


@pytest.mark.parametrize("name", READERS)
def test_random_shuffle_epochs_hold_the_same_samples_per_shard(data, name):
    """Order within an epoch is each library's own random draw (docs/dali_differences.md);
    which samples each shard's epochs hold is the same, and random_shuffle with initial_fill=1
    (a buffer of one) is DALI's order exactly, pre-shuffle included."""
    reader = _readers(data)[name]
    for shards in (1, 3):
        for k in range(shards):
            kw = dict(shard_id=k, num_shards=shards, random_shuffle=True)
            sizes = [N * (s + 1) // shards - N * s // shards for s in range(shards)]
            epochs = [sizes[(k + e) % shards] for e in range(3)]
            streams = {lib: _stream(lib, reader, sum(epochs), initial_fill=4, **kw)
                       for lib in ("stoker", "dali")}
            start = 0
            for e, length in enumerate(epochs):
                ours, theirs = (sorted(s[start:start + length]) for s in streams.values())
                assert ours == theirs, (name, shards, k, e)
                start += length
            exact = {lib: _stream(lib, reader, 2 * N, initial_fill=1, **kw)
                     for lib in ("stoker", "dali")}
            assert exact["stoker"] == exact["dali"], (name, shards, k)


@pytest.mark.parametrize("name", READERS)
def test_shuffle_after_epoch_orders_are_dalis(data, name):
    reader = _readers(data)[name]
    if name.startswith("caffe"):
        pytest.skip("DALI's Caffe readers have no shuffle_after_epoch")
    for shards, seed in ((1, None), (3, None), (2, 99)):
        for k in range(shards):
            kw = dict(shard_id=k, num_shards=shards, shuffle_after_epoch=True)
            if seed is not None:
                kw["shuffle_after_epoch_seed"] = seed
            size = N * (k + 1) // shards - N * k // shards
            ours, theirs = (_stream(lib, reader, 4 * size, **kw) for lib in ("stoker", "dali"))
            assert ours == theirs, (name, shards, k, seed)


@pytest.mark.parametrize("name", ("file", "tfrecord", "caffe"))
def test_reader_meta_is_the_same(data, name):
    reader = _readers(data)[name]
    keys = ("epoch_size", "epoch_size_padded", "number_of_shards", "shard_id", "pad_last_batch",
            "stick_to_shard")
    for shards, k, pad, stick, batch in itertools.product((1, 3, 5), (0, 2), (False, True),
                                                          (False, True), (1, 4)):
        if k >= shards:
            continue
        metas = []
        for lib in ("stoker", "dali"):
            from parity_util import _lib
            pipeline_def, fn, types, extra = _lib(lib)

            @pipeline_def(batch_size=batch, num_threads=1, seed=1, **extra)
            def p():
                return tuple(reader(fn, name="Reader", shard_id=k, num_shards=shards,
                                    pad_last_batch=pad, stick_to_shard=stick))
            pipe = p()
            pipe.build()
            meta = pipe.reader_meta("Reader")
            metas.append({key: int(meta[key]) for key in keys})
        assert metas[0] == metas[1], (name, shards, k, pad, stick, batch)


def _torch_epochs(lib, reader, policy_name, pad, shards, k, epochs=3, batch=4):
    from parity_util import _lib
    pipeline_def, fn, types, extra = _lib(lib)
    if lib == "stoker":
        from stoker.plugins.torch import DALIGenericIterator, LastBatchPolicy
    else:
        from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    @pipeline_def(batch_size=batch, num_threads=1, seed=1, **extra)
    def p():
        return reader(fn, name="Reader", shard_id=k, num_shards=shards, pad_last_batch=pad)[1]
    it = DALIGenericIterator(p(), ["label"], reader_name="Reader",
                             last_batch_policy=getattr(LastBatchPolicy, policy_name),
                             auto_reset=True)
    out = []
    for _ in range(epochs):
        out.append([b[0]["label"].reshape(-1).tolist() for b in it])
    return out


@pytest.mark.parametrize("policy", ["FILL", "DROP", "PARTIAL"])
@pytest.mark.parametrize("pad", [False, True])
def test_torch_iterator_epochs_are_the_same(data, policy, pad):
    """The same batches (labels) in every epoch: steps per epoch, trimmed and dropped batches,
    shard rotation, FILL's read-ahead into the next epoch."""
    pytest.importorskip("torch")
    reader = _readers(data)["tfrecord"]  # labels of one shape, as the iterators need
    for shards in (1, 3):
        for k in range(shards):
            ours, theirs = (_torch_epochs(lib, reader, policy, pad, shards, k)
                            for lib in ("stoker", "dali"))
            assert ours == theirs, (policy, pad, shards, k)
