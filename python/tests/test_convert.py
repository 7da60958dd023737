"""stoker.tools.convert: a class-folder tree written as TFRecord, RecordIO and webdataset
shards, read back by stoker's readers (with the written indexes) sample for sample."""

import struct

import numpy as np
import pytest

import stoker
from stoker import fn, tfrecord
from stoker.tools import convert


def _read(build, n):
    pipe = stoker.Pipeline(batch_size=n, num_threads=2, seed=1)
    with pipe:
        data, labels = build()
        pipe.set_outputs(data, labels)
    data, labels = pipe.run()
    return ([data[i].numpy().tobytes() for i in range(n)],
            [int(np.asarray(labels[i]).ravel()[0]) for i in range(n)])


def test_every_format_reads_back_as_the_folder(jpeg_folder, tmp_path):
    samples = convert.folder_samples(jpeg_folder)
    n = len(samples)
    written = convert.convert(samples, str(tmp_path), shards=3)
    assert [len(v) for v in written.values()] == [3, 3, 3]
    expect = _read(lambda: fn.readers.file(file_root=jpeg_folder), n)
    assert expect[0] == [open(p, "rb").read() for p, _ in samples]
    assert expect[1] == [label for _, label in samples]
    tf = written["tfrecord"]
    got = _read(lambda: tuple(fn.readers.tfrecord(
        path=tf, index_path=[p + ".idx" for p in tf], check_crc=True,
        features={"image/encoded": tfrecord.FixedLenFeature((), tfrecord.string, ""),
                  "image/class/label": tfrecord.FixedLenFeature([1], tfrecord.int64, -1)}
    ).values()), n)
    assert got == expect
    rec = written["recordio"]
    assert _read(lambda: fn.readers.mxnet(path=rec, index_path=[p + ".idx" for p in rec]),
                 n) == expect
    tar = written["webdataset"]
    img, cls = _read(lambda: fn.readers.webdataset(paths=tar, ext=["jpg", "cls"],
                                                   index_paths=[p + ".idx" for p in tar]), n)
    assert img == expect[0]


def test_recordio_splits_records_at_the_magic_number_as_mxnet_does(tmp_path):
    magic = struct.pack("<I", 0xCED7230A)
    # IRHeader is 24 bytes: offsets 4 and 12 of the image are aligned in the record's data, 1
    # is not (it stays inside a part).
    images = [b"abcd" + magic + b"efgh" + magic + b"x" + magic + b"tail",
              magic + b"12", b"plain", magic]
    recs = [convert.recordio(img, label, i) for i, (img, label) in
            enumerate(zip(images, [1, 2, 3, 4]))]
    assert recs[2].count(magic) == 1  # whole
    assert recs[0].count(magic) == 4  # first, middle, last part headers + the unaligned one
    path = str(tmp_path / "split.rec")
    convert.write_shard("recordio", path, [(img, lab, "jpg") for img, lab in
                                           zip(images, [1, 2, 3, 4])])
    got = _read(lambda: fn.readers.mxnet(path=[path], index_path=[path + ".idx"]), 4)
    assert got == (images, [1, 2, 3, 4])


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no class sub-folders"):
        convert.folder_samples(str(tmp_path))
    with pytest.raises(ValueError, match="unknown format 'lmdb'"):
        convert.write_shard("lmdb", str(tmp_path / "x"), [])
    with pytest.raises(ValueError, match=r"unknown container format 'jpeg' \(known: tfrecord, "
                                         r"recordio, webdataset\)"):
        convert.convert([], str(tmp_path / "y"), ["jpeg"])  # was a KeyError
    assert not (tmp_path / "y").exists()
    with pytest.raises(SystemExit):
        convert.main([str(tmp_path), str(tmp_path / "out"), "--formats", "zip"])


def test_command_line(jpeg_folder, tmp_path, capsys):
    convert.main([jpeg_folder, str(tmp_path), "--formats", "webdataset", "--shards", "2"])
    assert "webdataset: 24 samples in 2 files" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "data-00000.tar", "data-00000.tar.idx", "data-00001.tar", "data-00001.tar.idx"]
