"""readers.caffe against the shared Caffe LMDB (written with liblmdb + protobuf) and LMDBs
written here with the `lmdb` package and a hand-encoded Datum (caffe.proto field numbers)."""

import hashlib
import os

import numpy as np
import pytest

import stoker
from stoker import fn
from stoker.tools.convert import field as _field, varint as _varint


def _lmdb_pipe(reader, path, batch, **kwargs):
    """A pipeline of fn.readers.<reader> (caffe or caffe2), built; skips without liblmdb."""
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=0)
    with pipe:
        out = getattr(fn.readers, reader)(path=path, name="R", **kwargs)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    try:
        pipe.build()
    except RuntimeError as e:
        if "built without liblmdb" in str(e):
            pytest.skip("stoker was built without liblmdb")
        raise
    return pipe


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
    assert images.layout() == "HWC"
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
    assert dec[0].shape() == [h, w, 3]


def test_missing_database_is_reported(tmp_path):
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        images, _ = fn.readers.caffe(path=str(tmp_path / "nope"))
        pipe.set_outputs(images)
    with pytest.raises((OSError, RuntimeError), match="nope"):
        pipe.build()


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
    images, labels = _caffe2_run(str(tmp_path / "raw"), 2, label_type=2)  # dense: all labels
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


# --- messages serialized by the protobuf runtime (tests/proto_schemas.py) -------------------

def _put_all(tmp_path, name, values):
    lmdb = pytest.importorskip("lmdb")
    env = lmdb.open(str(tmp_path / name), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i, v in enumerate(values):
            txn.put(f"{i:08d}".encode(), v)
    env.close()
    return str(tmp_path / name)


def test_datums_serialized_by_protobuf(tmp_path):
    pytest.importorskip("google.protobuf")
    from proto_schemas import Datum

    rng = np.random.default_rng(5)
    chw = [rng.integers(0, 256, (c, h, w), dtype=np.uint8) for c, h, w in [(3, 5, 7), (1, 2, 9)]]
    raw = [Datum(channels=a.shape[0], height=a.shape[1], width=a.shape[2], data=a.tobytes(),
                 label=-3 + i).SerializeToString() for i, a in enumerate(chw)]
    images, labels = _lmdb_pipe("caffe", _put_all(tmp_path, "raw", raw), 2).run()
    for i, a in enumerate(chw):
        np.testing.assert_array_equal(images[i].numpy(), a.transpose(1, 2, 0))
        assert labels.at(i)[0] == -3 + i
    blobs = [os.urandom(n) for n in (1, 700, 70_000)]
    enc = [Datum(data=b, label=1000 + i, encoded=True).SerializeToString()
           for i, b in enumerate(blobs)]
    images, labels = _lmdb_pipe("caffe", _put_all(tmp_path, "enc", enc), 3).run()
    for i, b in enumerate(blobs):
        assert images[i].numpy().tobytes() == b
        assert labels.at(i)[0] == 1000 + i


def _protos(image, *labels):
    """TensorProtos: an encoded image and label tensors given as (data_type name, values)."""
    from proto_schemas import TensorProto, TensorProtos

    msg = TensorProtos()
    img = msg.protos.add()
    if isinstance(image, bytes):
        img.data_type = TensorProto.STRING
        img.dims.append(1)
        img.string_data.append(image)
    else:
        img.data_type = TensorProto.BYTE
        img.dims.extend(image.shape)
        img.byte_data = image.tobytes()
    for kind, values in labels:
        t = msg.protos.add()
        t.data_type = getattr(TensorProto, kind)
        t.dims.append(len(values))
        {"INT32": t.int32_data, "INT64": t.int64_data, "FLOAT": t.float_data}[kind].extend(values)
    return msg.SerializeToString()


def _caffe2_run(path, batch, **kwargs):
    return _lmdb_pipe("caffe2", path, batch, **kwargs).run()


def test_tensor_protos_serialized_by_protobuf_and_label_types(tmp_path):
    pytest.importorskip("google.protobuf")
    rng = np.random.default_rng(6)
    pixels = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)
    single = _put_all(tmp_path, "single", [_protos(b"\xff\xd8one", ("INT32", [7])),
                                           _protos(pixels, ("INT32", [2]))])
    images, labels = _caffe2_run(single, 2)
    assert images.at(0).tobytes() == b"\xff\xd8one"
    np.testing.assert_array_equal(images[1].numpy(), pixels)
    assert [labels.at(i).tolist() for i in range(2)] == [[7], [2]]

    sparse = _put_all(tmp_path, "sparse", [_protos(b"a", ("INT32", [0, 3])),
                                           _protos(b"b", ("INT64", [4]))])
    _, labels = _caffe2_run(sparse, 2, label_type=1, num_labels=5)
    assert labels.at(0).tolist() == [1, 0, 0, 1, 0] and str(labels.dtype) == "int32"
    assert labels.at(1).tolist() == [0, 0, 0, 0, 1]

    dense = _put_all(tmp_path, "dense", [_protos(b"a", ("FLOAT", [0.5, -1.0, 2.0]))])
    _, labels = _caffe2_run(dense, 1, label_type=2)
    assert labels.at(0).tolist() == [0.5, -1.0, 2.0] and str(labels.dtype) == "float32"

    weighted = _put_all(tmp_path, "weighted",
                        [_protos(b"a", ("INT32", [1, 3]), ("FLOAT", [0.25, 0.75]))])
    _, labels = _caffe2_run(weighted, 1, label_type=3, num_labels=4)
    assert labels.at(0).tolist() == [0, 0.25, 0, 0.75] and str(labels.dtype) == "float32"

    (images,) = _caffe2_run(single, 2, label_type=4)
    assert images.at(0).tobytes() == b"\xff\xd8one"


def test_caffe2_label_errors(tmp_path):
    pytest.importorskip("google.protobuf")
    path = _put_all(tmp_path, "two", [_protos(b"a", ("INT32", [1, 2]))])
    with pytest.raises(ValueError, match="label_type 0 \\(single label\\) expects one label, "
                                         "the record has 2"):
        _caffe2_run(path, 1)
    with pytest.raises(ValueError, match=f"source '{path}\\[00000000\\]'\\): label index 2 is "
                                         "outside \\[0, num_labels=2\\)"):
        _caffe2_run(path, 1, label_type=1, num_labels=2)
    with pytest.raises(ValueError, match="expected TensorProtos with 3 tensors \\(image, labels, "
                                         "weights\\) for label_type 3, got 2"):
        _caffe2_run(path, 1, label_type=3, num_labels=4)
    with pytest.raises(ValueError, match="label_type must be 0-4, got 9"):
        _caffe2_run(path, 1, label_type=9)


def test_lmdb_views_outlive_the_pipeline(tmp_path):
    """Encoded images view LMDB's map (no copy): the database stays open while they live."""
    import gc

    blobs = [os.urandom(n) for n in (100, 5000, 70_000)]
    path = _put_all(tmp_path, "enc", [_datum(data=b, label=i, encoded=True)
                                      for i, b in enumerate(blobs)])
    pipe = _lmdb_pipe("caffe", path, 3)
    images, _ = pipe.run()
    arrays = [images[i].numpy() for i in range(3)]
    del pipe, images
    gc.collect()
    assert [a.tobytes() for a in arrays] == blobs
