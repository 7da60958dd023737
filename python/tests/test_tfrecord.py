"""readers.tfrecord against an independent writer (TensorFlow's documented framing and the
protobuf wire format, written here by hand) and against files TensorFlow wrote."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import stoker
from stoker import fn, tfrecord
from stoker.tools.convert import field as _field, varint as _varint


def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _masked(data):
    c = _crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _example(features):
    body = b""
    for key, (kind, values) in features.items():
        if kind == "bytes":
            lst = b"".join(_field(1, v) for v in values)
            feat = _field(1, lst)
        elif kind == "int64":
            feat = _field(3, _field(1, b"".join(_varint(v) for v in values)))
        else:
            feat = _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
        body += _field(1, _field(1, key.encode()) + _field(2, feat))
    return _field(1, body)


def _write_tfrecord(path, records):
    with open(path, "wb") as f:
        for r in records:
            length = struct.pack("<Q", len(r))
            f.write(length + struct.pack("<I", _masked(length)) + r +
                    struct.pack("<I", _masked(r)))


@pytest.fixture
def written(tmp_path):
    rng = np.random.default_rng(3)
    files, truth = [], []
    for k in range(2):
        recs = []
        for i in range(5 + k):
            blob = rng.integers(0, 256, int(rng.integers(1, 50)), dtype=np.uint8).tobytes()
            label = int(rng.integers(-5, 1 << 40))
            box = rng.normal(size=int(rng.integers(0, 4))).astype(np.float32).tolist()
            feats = {"data": ("bytes", [blob]), "label": ("int64", [label]),
                     "box": ("float", box)}
            if i % 3 == 0:
                feats.pop("label")  # exercises the default
            recs.append(_example(feats))
            truth.append((blob, label if i % 3 else -1, box))
        path = str(tmp_path / f"part{k}.tfrecord")
        _write_tfrecord(path, recs)
        files.append(path)
    return files, truth


FEATURES = {"data": tfrecord.FixedLenFeature((), tfrecord.string),
            "label": tfrecord.FixedLenFeature([1], tfrecord.int64, -1),
            "box": tfrecord.VarLenFeature(tfrecord.float32)}


@pytest.mark.parametrize("use_index", [False, True])
def test_every_record_matches_what_was_written(written, tmp_path, use_index):
    files, truth = written
    indexes = None
    if use_index:
        r = subprocess.run([sys.executable, "-m", "stoker.tools.index", "tfrecord", *files],
                           capture_output=True, text=True, env=os.environ)
        assert r.returncode == 0, r.stderr
        assert "part1.tfrecord: 6 records" in r.stdout
        indexes = [f + ".idx" for f in files]
    pipe = stoker.Pipeline(batch_size=11, num_threads=2, seed=1)
    with pipe:
        out = fn.readers.tfrecord(path=files, index_path=indexes, features=FEATURES,
                                  check_crc=True, name="R")
        pipe.set_outputs(out["data"], out["label"], out["box"])
    assert pipe.epoch_size("R") == 11
    data, label, box = pipe.run()
    assert str(label.dtype) == "int64" and str(box.dtype) == "float32"
    for i, (blob, lab, bx) in enumerate(truth):
        assert data[i].numpy().tobytes() == blob
        assert label[i].numpy().tolist() == [lab]
        np.testing.assert_array_equal(box[i].numpy(), np.array(bx, np.float32))
    assert data.source_info(5) == f"{files[1]} (record 0 at offset 0)"


def test_errors_name_the_file_and_offset(written, tmp_path):
    files, _ = written
    raw = bytearray(open(files[0], "rb").read())
    raw[30] ^= 0xFF
    bad = str(tmp_path / "bad.tfrecord")
    open(bad, "wb").write(bytes(raw))
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        out = fn.readers.tfrecord(path=bad, features=FEATURES, check_crc=True)
        pipe.set_outputs(out["data"])
    with pytest.raises(ValueError, match=f"{bad}: record at offset 0: data CRC mismatch"):
        pipe.build()
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        out = fn.readers.tfrecord(path=files[0], features={
            "nope": tfrecord.FixedLenFeature([1], tfrecord.int64)})
        pipe.set_outputs(out["nope"])
    with pytest.raises(ValueError, match=r"sample 0 \(source '.*part0.tfrecord \(record 0 at "
                                         r"offset 0\)'\): feature 'nope' is missing from the "
                                         r"record and has no default"):
        pipe.run()
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        out = fn.readers.tfrecord(path=files[0], features={
            "data": tfrecord.FixedLenFeature([1], tfrecord.int64)})
        pipe.set_outputs(out["data"])
    with pytest.raises(TypeError, match="feature 'data' holds bytes values, expected int64"):
        pipe.run()


def test_flowers_written_by_tensorflow_decode_and_match(shared_data):
    path = os.path.join(shared_data, "containers", "tfrecord", "tfx-flowers", "flowers.tfrecord")
    pipe = stoker.Pipeline(batch_size=25, num_threads=2, seed=1)
    with pipe:
        out = fn.readers.tfrecord(path=path, features={
            "image_raw": tfrecord.FixedLenFeature((), tfrecord.string, ""),
            "label": tfrecord.FixedLenFeature([1], tfrecord.int64, -1),
            "height": tfrecord.FixedLenFeature([1], tfrecord.int64),
            "width": tfrecord.FixedLenFeature([1], tfrecord.int64)}, shuffle="global")
        images = fn.decoders.image(out["image_raw"])
        pipe.set_outputs(images, out["label"], out["height"], out["width"])
    images, labels, heights, widths = pipe.run()
    assert sorted(np.bincount(labels.as_array().ravel()).tolist()) == [5] * 5
    for i in range(25):
        assert images[i].shape() == [heights.at(i)[0], widths.at(i)[0], 3]


def test_gzip_tfrecord(shared_data):
    path = os.path.join(shared_data, "containers", "tfrecord", "tfx-gzip", "data.tfrecord.gz")
    pipe = stoker.Pipeline(batch_size=100, seed=1)
    with pipe:
        out = fn.readers.tfrecord(path=path, features={
            "session_index": tfrecord.FixedLenFeature([1], tfrecord.int64)}, name="R")
        pipe.set_outputs(out["session_index"])
    assert pipe.epoch_size("R") == 100
    (s,) = pipe.run()
    assert s.as_array().shape == (100, 1)


def test_examples_serialized_by_protobuf(tmp_path):
    """The same check with tf.train.Example messages serialized by the protobuf runtime
    (map entries in its order, packed int64/float lists, negative int64s, empty lists)."""
    pytest.importorskip("google.protobuf")
    from proto_schemas import Example

    rng = np.random.default_rng(8)
    truth, records = [], []
    for i in range(12):
        ex = Example()
        blob = rng.integers(0, 256, int(rng.integers(0, 5000)), dtype=np.uint8).tobytes()
        ints = rng.integers(-(1 << 62), 1 << 62, int(rng.integers(0, 6))).tolist()
        floats = rng.normal(size=3).astype(np.float32).tolist()
        ex.features.feature["image/encoded"].bytes_list.value.append(blob)
        ex.features.feature["ids"].int64_list.value.extend(ints)
        ex.features.feature["xyz"].float_list.value.extend(floats)
        ex.features.feature["unused"].bytes_list.value.extend([b"a", b"b"])
        records.append(ex.SerializeToString())
        truth.append((blob, ints, floats))
    path = str(tmp_path / "pb.tfrecord")
    _write_tfrecord(path, records)
    pipe = stoker.Pipeline(batch_size=12, num_threads=2, seed=0)
    with pipe:
        out = fn.readers.tfrecord(path=[path], check_crc=True, features={
            "image/encoded": tfrecord.FixedLenFeature((), tfrecord.string),
            "ids": tfrecord.VarLenFeature(tfrecord.int64),
            "xyz": tfrecord.FixedLenFeature([3], tfrecord.float32)})
        pipe.set_outputs(out["image/encoded"], out["ids"], out["xyz"])
    blobs, ids, xyz = pipe.run()
    for i, (blob, ints, floats) in enumerate(truth):
        assert blobs[i].numpy().tobytes() == blob
        assert ids[i].numpy().tolist() == ints
        assert xyz[i].numpy().tolist() == floats


def test_var_len_feature_with_a_partial_shape(tmp_path):
    """DALI's VarLenFeature(partial_shape, dtype, default): the values shaped (n, *partial),
    n = count / volume; a count the volume does not divide is an error."""
    path = str(tmp_path / "partial.tfrecord")
    rows = [list(range(6 * k)) for k in (1, 2, 0)]
    _write_tfrecord(path, [_example({"v": ("int64", r), "f": ("float", [0.5] * 6)})
                           for r in rows])
    pipe = stoker.Pipeline(batch_size=3, num_threads=1, seed=0)
    with pipe:
        out = fn.readers.tfrecord(path=[path], features={
            "v": tfrecord.VarLenFeature([3], tfrecord.int64, 0),
            "f": tfrecord.VarLenFeature([2, 3], tfrecord.float32, 0.0)})
        pipe.set_outputs(out["v"], out["f"])
    v, f = pipe.run()
    for i, r in enumerate(rows):
        np.testing.assert_array_equal(v[i].numpy(), np.array(r, np.int64).reshape(-1, 3))
        assert f[i].numpy().shape == (1, 2, 3)
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        pipe.set_outputs(fn.readers.tfrecord(path=[path], features={
            "v": tfrecord.VarLenFeature([4], tfrecord.int64, 0)})["v"])
    with pytest.raises(ValueError, match="not a multiple"):
        pipe.run()
    with pytest.raises(ValueError):
        tfrecord.VarLenFeature([0], tfrecord.int64, 0)
