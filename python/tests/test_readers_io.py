"""How readers reach the bytes: mapped or read with pread (dont_use_mmap), read ahead on the
reader's own threads (num_io_threads, prefetch_queue_depth), with and without read_ahead. None
of it may change what a pipeline produces; batches stay valid after the pipeline is gone."""

import gc
import io
import os
import tarfile

import numpy as np
import pytest

import stoker
import stoker.tfrecord
from stoker import _stoker, fn

IO_VARIANTS = [
    dict(),
    dict(dont_use_mmap=True),
    dict(dont_use_mmap=True, num_io_threads=4, prefetch_queue_depth=1),
    dict(num_io_threads=1, prefetch_queue_depth=4, read_ahead=True),
]


def _readers(shared_data, jpeg_folder, tmp_path):
    """name -> (reader function of io kwargs, number of samples)."""
    flowers = os.path.join(shared_data, "containers", "tfrecord", "tfx-flowers",
                           "flowers.tfrecord")
    shard = str(tmp_path / "shard.tar")
    rng = np.random.default_rng(3)
    with tarfile.open(shard, "w") as tar:
        for i in range(30):
            for ext, size in [("jpg", int(rng.integers(1, 70_000))), ("cls", 2)]:
                data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
                info = tarfile.TarInfo(f"s{i:03d}.{ext}")
                info.size = len(data)

                tar.addfile(info, io.BytesIO(data))
    npy_dir = tmp_path / "npy"
    npy_dir.mkdir()
    for i in range(12):
        a = rng.standard_normal((3, int(rng.integers(1, 9)))).astype(np.float32)
        np.save(npy_dir / f"a{i:02d}.npy", np.asfortranarray(a) if i % 3 == 0 else a)
    return {
        "file": (lambda **io: fn.readers.file(file_root=jpeg_folder, **io), 24),
        "tfrecord": (lambda **io: fn.readers.tfrecord(
            path=[flowers], features={
                "image_raw": stoker.tfrecord.FixedLenFeature((), stoker.tfrecord.string, ""),
                "label": stoker.tfrecord.FixedLenFeature([1], stoker.tfrecord.int64, -1)},
            **io), 25),
        "webdataset": (lambda **io: fn.readers.webdataset(paths=[shard], ext=["jpg", "cls"],
                                                          **io), 30),
        "numpy": (lambda **io: fn.readers.numpy(file_root=str(npy_dir), **io), 12),
    }


def _epochs(reader, io, epochs=2, batch=5):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=9)
    with pipe:
        out = reader(random_shuffle=True, initial_fill=8, **io)
        out = list(out.values()) if isinstance(out, dict) else out
        out = out if isinstance(out, (list, tuple)) else [out]
        pipe.set_outputs(*out)
    result = []
    for _ in range(epochs * 6):
        for b in pipe.run():
            result.append([(b.source_info(i), b[i].numpy().tobytes(), b[i].numpy().shape)
                           for i in range(len(b))])
    return result


@pytest.mark.parametrize("name", ["file", "tfrecord", "webdataset", "numpy"])
def test_io_settings_never_change_the_output(shared_data, jpeg_folder, tmp_path, name):
    reader, _ = _readers(shared_data, jpeg_folder, tmp_path)[name]
    reference = _epochs(reader, {})
    for io in IO_VARIANTS[1:]:
        assert _epochs(reader, io) == reference, io


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_batches_outlive_the_pipeline(shared_data, jpeg_folder, tmp_path, dont_use_mmap):
    readers = _readers(shared_data, jpeg_folder, tmp_path)
    for name, (reader, n) in readers.items():
        pipe = stoker.Pipeline(batch_size=n, num_threads=2, seed=1)
        with pipe:
            out = reader(dont_use_mmap=dont_use_mmap)
            out = list(out.values()) if isinstance(out, dict) else out
            pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
        batches = pipe.run()
        arrays = [b[i].numpy() for b in batches for i in range(len(b))]
        copies = [a.copy() for a in arrays]
        del pipe, batches
        gc.collect()
        for a, c in zip(arrays, copies):  # views of mappings or pooled buffers: still valid
            assert np.array_equal(a, c), name


def test_io_argument_errors(jpeg_folder):
    for kwargs, message in [(dict(num_io_threads=0), "num_io_threads must be in \\[1, 64\\], got 0"),
                            (dict(prefetch_queue_depth=0),
                             "prefetch_queue_depth must be at least 1, got 0")]:
        pipe = stoker.Pipeline(batch_size=2)
        with pipe:
            data, _ = fn.readers.file(file_root=jpeg_folder, **kwargs)
            pipe.set_outputs(data)
        with pytest.raises(ValueError, match=message):
            pipe.build()


def test_files_removed_after_build_are_reported_with_their_path(tmp_path, jpeg_folder):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(jpeg_folder, root)
    pipe = stoker.Pipeline(batch_size=24, num_threads=2, on_error="raise")
    with pipe:
        data, _ = fn.readers.file(file_root=str(root), prefetch_queue_depth=1)
        pipe.set_outputs(data)
    pipe.build()
    victim = sorted(root.rglob("*.jpg"))[5]
    victim.unlink()
    # The first batch may have been read ahead already; the second one reads the file again.
    with pytest.raises(OSError, match=f"cannot open '{victim}'"):
        for _ in range(3):
            pipe.run()


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_records_that_fail_on_the_io_threads_are_skipped(tmp_path, dont_use_mmap):
    """A record whose CRC fails is found by an I/O thread (the index file spares the scan at
    build); on_error='skip' replaces it with the next record and names file and offset."""
    import struct

    def frame(payload):
        length = struct.pack("<Q", len(payload))
        return (length + struct.pack("<I", _stoker.masked_crc32c(length)) + payload +
                struct.pack("<I", _stoker.masked_crc32c(payload)))

    def example(i):  # tf.train.Example {"i": int64_list [i]}
        feat = b"\x1a\x03\x0a\x01" + bytes([i])  # Feature.int64_list.value = [i]
        entry = b"\x0a\x01i" + b"\x12" + bytes([len(feat)]) + feat
        return b"\x0a" + bytes([len(entry) + 2]) + b"\x0a" + bytes([len(entry)]) + entry

    records = [frame(example(i)) for i in range(6)]
    offsets = np.cumsum([0] + [len(r) for r in records])[:-1]
    bad = bytearray(records[2])
    bad[-6] ^= 0xFF  # in the payload: the data CRC no longer matches
    records[2] = bytes(bad)
    path, idx = tmp_path / "d.tfrecord", tmp_path / "d.idx"
    path.write_bytes(b"".join(records))
    idx.write_text("".join(f"{o} {len(r)}\n" for o, r in zip(offsets, records)))
    pipe = stoker.Pipeline(batch_size=5, num_threads=2, seed=0, on_error="skip")
    with pipe:
        out = fn.readers.tfrecord(path=[str(path)], index_path=[str(idx)], check_crc=True,
                                  dont_use_mmap=dont_use_mmap, features={
                                      "i": stoker.tfrecord.FixedLenFeature([1],
                                                                           stoker.tfrecord.int64)})
        pipe.set_outputs(out["i"])
    with pytest.warns(RuntimeWarning, match=f"\\(record 2 at offset {offsets[2]}\\)"):
        (values,) = pipe.run()
    assert [int(values.at(k)[0]) for k in range(5)] == [0, 1, 3, 4, 5]
    assert pipe.error_stats()["skipped"] >= 1  # counted when produced (prefetch included)
