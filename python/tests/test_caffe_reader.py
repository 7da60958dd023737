"""readers.caffe against the shared Caffe LMDB (written with liblmdb + protobuf) and LMDBs
written here with the `lmdb` package and a hand-encoded Datum (caffe.proto field numbers)."""

import hashlib
import os

import numpy as np
import pytest

import stoker
from stoker import fn


def _lmdb_pipe(reader, path, batch):
    """A pipeline of fn.readers.<reader> (caffe or caffe2), built; skips without liblmdb."""
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=0)
    with pipe:
        images, labels = getattr(fn.readers, reader)(path=path, name="R")
        pipe.set_outputs(images, labels)
    try:
        pipe.build()
    except RuntimeError as e:
        if "built without liblmdb" in str(e):
            pytest.skip("stoker was built without liblmdb")
        raise
    return pipe


def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _datum(channels=0, height=0, width=0, data=b"", label=0, encoded=False):
    msg = b""
    for number, value in ((1, channels), (2, height), (3, width)):
        if value:
            msg += _varint(number << 3) + _varint(value)
    msg += _varint(4 << 3 | 2) + _varint(len(data)) + data
    msg += _varint(5 << 3) + _varint(label)
    if encoded:
        msg += _varint(7 << 3) + _varint(1)
    return msg


def test_raw_and_encoded_datums_written_here(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    rng = np.random.default_rng(0)
    chw = [rng.integers(0, 256, (3, h, w), dtype=np.uint8) for h, w in [(4, 5), (2, 3), (6, 1)]]
    env = lmdb.open(str(tmp_path / "raw"), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i, a in enumerate(chw):
            txn.put(f"{i:08d}".encode(), _datum(3, a.shape[1], a.shape[2], a.tobytes(), label=i + 7))
    env.close()
    images, labels = _lmdb_pipe("caffe", str(tmp_path / "raw"), 3).run()
    assert images.layout == "HWC"
    for i, a in enumerate(chw):
        np.testing.assert_array_equal(images[i].numpy(), a.transpose(1, 2, 0))
        assert labels.at(i)[0] == i + 7
    assert images.source_info(1) == f"{tmp_path / 'raw'}[00000001]"

    env = lmdb.open(str(tmp_path / "enc"), map_size=1 << 24)
    blobs = [os.urandom(int(n)) for n in (10, 0, 3000)]
    with env.begin(write=True) as txn:
        for i, b in enumerate(blobs):
            txn.put(f"k{i}".encode(), _datum(data=b, label=i, encoded=True))
    env.close()
    images, labels = _lmdb_pipe("caffe", str(tmp_path / "enc"), 3).run()
    for i, b in enumerate(blobs):
        assert images[i].numpy().tobytes() == b


def test_shared_caffe_lmdb(shared_data):
    root = os.path.join(shared_data, "containers")
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(root, "caffe-lmdb.contents.tsv"))
            if not line.startswith("#")]
    pipe = _lmdb_pipe("caffe", os.path.join(root, "caffe-lmdb"), len(rows))
    assert pipe.epoch_size("R") == 62
    images, labels = pipe.run()
    for i, row in enumerate(rows):  # LMDB order is the keys' order, as in the table
        assert images.source_info(i).endswith(f"[{row[0]}]")
        assert labels.at(i)[0] == int(row[1])
        assert hashlib.sha1(images[i].numpy().tobytes()).hexdigest() == row[5]
    decode = stoker.Pipeline(batch_size=4, num_threads=2, seed=0)
    with decode:
        enc, _ = fn.readers.caffe(path=os.path.join(root, "caffe-lmdb"))
        decode.set_outputs(fn.decoders.image(enc))
    (dec,) = decode.run()
    w, h = map(int, rows[0][4].split("x"))
    assert dec[0].shape == (h, w, 3)


def test_missing_database_is_reported(tmp_path):
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        images, _ = fn.readers.caffe(path=str(tmp_path / "nope"))
        pipe.set_outputs(images)
    with pytest.raises((OSError, RuntimeError), match="nope"):
        pipe.build()


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _tensor(dims, data_type, **data):
    msg = _field(1, b"".join(_varint(d) for d in dims)) + _varint(2 << 3) + _varint(data_type)
    if "strings" in data:
        msg += b"".join(_field(6, s) for s in data["strings"])
    if "bytes" in data:
        msg += _field(5, data["bytes"])
    if "ints" in data:
        msg += _field(4, b"".join(_varint(v & ((1 << 64) - 1)) for v in data["ints"]))
    if "floats" in data:
        msg += _field(3, np.asarray(data["floats"], "<f4").tobytes())
    return msg


def test_caffe2_tensor_protos_written_here(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    rng = np.random.default_rng(1)
    raw = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(2, 3), (4, 1)]]
    env = lmdb.open(str(tmp_path / "raw"), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i, a in enumerate(raw):
            value = _field(1, _tensor(a.shape, 3, bytes=a.tobytes())) + \
                _field(1, _tensor([2], 2, ints=[i, -i - 1]))
            txn.put(f"{i:03d}".encode(), value)
    env.close()
    images, labels = _lmdb_pipe("caffe2", str(tmp_path / "raw"), 2).run()
    for i, a in enumerate(raw):
        np.testing.assert_array_equal(images[i].numpy(), a)
        assert labels.at(i).tolist() == [i, -i - 1]
    env = lmdb.open(str(tmp_path / "enc"), map_size=1 << 24)
    with env.begin(write=True) as txn:
        txn.put(b"a", _field(1, _tensor([1], 4, strings=[b"\xff\xd8encoded"])) +
                _field(1, _tensor([1], 1, floats=[0.25])))
    env.close()
    images, labels = _lmdb_pipe("caffe2", str(tmp_path / "enc"), 1).run()
    assert images.at(0).tobytes() == b"\xff\xd8encoded"
    assert labels.at(0).tolist() == [0.25] and str(labels.dtype) == "float32"


def test_shared_caffe2_lmdb(shared_data):
    root = os.path.join(shared_data, "containers")
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(root, "caffe2-lmdb.contents.tsv"))
            if not line.startswith("#")]
    pipe = _lmdb_pipe("caffe2", os.path.join(root, "caffe2-lmdb"), len(rows))
    assert pipe.epoch_size("R") == 14
    images, labels = pipe.run()
    for i, row in enumerate(rows):
        assert images.source_info(i).endswith(f"[{row[0]}]")
        assert labels.at(i).tolist() == [int(row[1])]
        assert hashlib.sha1(images[i].numpy().tobytes()).hexdigest() == row[5]
