"""readers.mxnet against RecordIO files written here from MXNet's documented format
(dmlc-core recordio: magic 0xced7230a, cflag/length word, 4-byte padding, records split where
their data holds the magic at an aligned position; IRHeader image records)."""

import struct

import numpy as np
import pytest

import stoker
from stoker import fn

MAGIC = 0xCED7230A


def _write_record(f, data):
    """Writes one record the way dmlc::RecordIOWriter::WriteRecord does."""
    magic = struct.pack("<I", MAGIC)
    cuts = [i for i in range(0, len(data) - 3, 4) if data[i:i + 4] == magic]
    parts, start = [], 0
    for c in cuts:
        parts.append(data[start:c])
        start = c + 4
    parts.append(data[start:])
    for k, part in enumerate(parts):
        if len(parts) == 1:
            flag = 0
        else:
            flag = 1 if k == 0 else (3 if k == len(parts) - 1 else 2)
        f.write(magic + struct.pack("<I", (flag << 29) | len(part)) + part)
        f.write(b"\0" * ((4 - len(part) % 4) % 4))


def _image_record(labels, image, rec_id):
    if len(labels) == 1:
        header = struct.pack("<IfQQ", 0, labels[0], rec_id, 0)
    else:
        header = struct.pack("<IfQQ", len(labels), 0.0, rec_id, 0) + \
            struct.pack(f"<{len(labels)}f", *labels)
    return header + image


@pytest.fixture
def rec_file(tmp_path):
    rng = np.random.default_rng(4)
    magic = struct.pack("<I", MAGIC)
    truth, offsets = [], []
    path, idx = tmp_path / "data.rec", tmp_path / "data.idx"
    with open(path, "wb") as f:
        for i in range(9):
            image = bytearray(rng.integers(0, 256, int(rng.integers(1, 60)), dtype=np.uint8))
            if i % 3 == 1:  # the magic inside the data, at aligned positions: split records
                image[4:8] = magic
                image += magic + b"tail"
            labels = [float(i)] if i % 2 == 0 else [float(i), -1.5, 2.25]
            offsets.append(f.tell())
            data = _image_record(labels, bytes(image), i)
            _write_record(f, data)
            truth.append((bytes(image), labels))
    keys = list(range(9))
    rng.shuffle(keys)  # MXNet index files need not be sorted
    idx.write_text("".join(f"{k}\t{offsets[k]}\n" for k in keys))
    return str(path), str(idx), truth, offsets


@pytest.mark.parametrize("use_index", [False, True])
def test_every_record_matches_what_was_written(rec_file, use_index):
    path, idx, truth, offsets = rec_file
    pipe = stoker.Pipeline(batch_size=9, num_threads=2, seed=0)
    with pipe:
        data, labels = fn.readers.mxnet(path=[path], index_path=[idx] if use_index else [],
                                        name="R")
        pipe.set_outputs(data, labels)
    assert pipe.epoch_size("R") == 9
    data, labels = pipe.run()
    for i, (image, labs) in enumerate(truth):
        assert data[i].numpy().tobytes() == image, i
        assert labels[i].numpy().tolist() == labs
    assert data.source_info(3) == f"{path} (record 3 at offset {offsets[3]})"


def test_corrupt_files_name_file_and_offset(rec_file, tmp_path):
    path, idx, _, _ = rec_file
    raw = bytearray(open(path, "rb").read())
    bad = tmp_path / "bad.rec"
    bad.write_bytes(bytes(raw[:8]) + b"garbage-garbage!" + bytes(raw[8:]))
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        data, _ = fn.readers.mxnet(path=[str(bad)])
        pipe.set_outputs(data)
    with pytest.raises(ValueError, match="bad.rec: record at offset \\d+: bad magic"):
        pipe.build()
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        data, _ = fn.readers.mxnet(path=[path], index_path=[str(tmp_path / "nope.idx")])
        pipe.set_outputs(data)
    with pytest.raises(OSError, match="nope.idx"):
        pipe.build()


def test_index_tool_writes_an_index_the_reader_uses(rec_file, tmp_path):
    import subprocess
    import sys

    path, _, truth, offsets = rec_file
    out = tmp_path / "tool.idx"
    r = subprocess.run([sys.executable, "-m", "stoker.tools.index", "recordio", path, "-o",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "9 records" in r.stdout
    assert out.read_text() == "".join(f"{k}\t{o}\n" for k, o in enumerate(offsets))
    pipe = stoker.Pipeline(batch_size=9, num_threads=1, seed=0)
    with pipe:
        data, labels = fn.readers.mxnet(path=[path], index_path=[str(out)])
        pipe.set_outputs(data, labels)
    data, labels = pipe.run()
    assert [data[i].numpy().tobytes() for i in range(9)] == [t[0] for t in truth]
