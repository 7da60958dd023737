"""readers.webdataset against tars written by Python's tarfile (ustar, GNU and pax formats)
and the webdataset project's own test shards."""

import io
import os
import tarfile

import numpy as np
import pytest

import stoker
from stoker import fn


def _add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_samples_match_what_tarfile_wrote(tmp_path, fmt):
    rng = np.random.default_rng(2)
    long_dir = "d" * 60 + "/" + "e" * 50 if fmt != tarfile.USTAR_FORMAT else "dir"
    truth = []
    path = str(tmp_path / "shard.tar")
    with tarfile.open(path, "w", format=fmt) as tar:
        dirinfo = tarfile.TarInfo(long_dir)
        dirinfo.type = tarfile.DIRTYPE
        tar.addfile(dirinfo)
        for i in range(7):
            key = f"{long_dir}/sample{i:03d}"
            img = rng.integers(0, 256, int(rng.integers(1, 3000)), dtype=np.uint8).tobytes()
            ext = "jpeg" if i % 2 else "jpg"
            _add(tar, f"{key}.{ext}", img)
            if i != 4:  # sample 4 has no label
                _add(tar, f"{key}.cls", str(i).encode())
            _add(tar, f"{key}.json", b"{}")  # an extension nobody asked for
            truth.append((key, img, str(i).encode() if i != 4 else b""))
    for missing, expect in [("empty", truth), ("skip", [t for t in truth if t[2]])]:
        pipe = stoker.Pipeline(batch_size=len(expect), num_threads=2, seed=0)
        with pipe:
            img, cls = fn.readers.webdataset(paths=[path], ext=["jpg;jpeg", "cls"],
                                             missing_component_behavior=missing, name="R")
            pipe.set_outputs(img, cls)
        assert pipe.epoch_size("R") == len(expect)
        img, cls = pipe.run()
        for i, (key, data, label) in enumerate(expect):
            assert img.source_info(i) == f"{path}:{key}"
            assert img[i].numpy().tobytes() == data
            assert cls[i].numpy().tobytes() == label
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        img, cls = fn.readers.webdataset(paths=[path], ext=["jpg;jpeg", "cls"],
                                         missing_component_behavior="error")
        pipe.set_outputs(img)
    with pytest.raises(ValueError, match="sample '.*sample004' has no component for extension "
                                         "'cls'"):
        pipe.build()


def test_corrupt_tar_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.tar"
    with tarfile.open(path, "w") as tar:
        _add(tar, "a.jpg", b"x" * 600)
        _add(tar, "b.jpg", b"y" * 10)
    raw = bytearray(path.read_bytes())
    raw[1536 + 5] ^= 0x20  # the second header (after 512 + 1024 bytes), in its name
    path.write_bytes(bytes(raw))
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        (img,) = (fn.readers.webdataset(paths=[str(path)], ext=["jpg"]),)
        pipe.set_outputs(img)
    with pytest.raises(ValueError, match="bad.tar: tar header at offset 1536: checksum "
                                         "mismatch"):
        pipe.build()


def test_webdataset_project_shards(shared_data):
    d = os.path.join(shared_data, "containers", "webdataset")
    pipe = stoker.Pipeline(batch_size=90, num_threads=2, seed=0)
    with pipe:
        png, cls = fn.readers.webdataset(paths=[os.path.join(d, "sample.tgz")],
                                         ext=["png", "cls"], name="R")
        pipe.set_outputs(png, cls)
    assert pipe.epoch_size("R") == 90
    png, cls = pipe.run()
    labels = [int(cls[i].numpy().tobytes()) for i in range(90)]
    assert set(labels) <= set(range(10))
    assert all(png[i].numpy()[:4].tobytes() == b"\x89PNG" for i in range(90))
    assert png.source_info(0).endswith("sample.tgz:10")
    pipe = stoker.Pipeline(batch_size=1000, seed=0)
    with pipe:
        txt = fn.readers.webdataset(paths=[os.path.join(d, "testgz.tar")], ext=["txt.gz"],
                                    name="R")
        pipe.set_outputs(txt)
    assert pipe.epoch_size("R") == 1000  # pax headers with fractional mtimes
    (txt,) = pipe.run()
    assert all(txt[i].numpy()[:2].tobytes() == b"\x1f\x8b" for i in range(0, 1000, 97))
    pipe = stoker.Pipeline(batch_size=3, seed=0)
    with pipe:
        gz = fn.readers.webdataset(paths=[os.path.join(d, "compressed.tar")], ext=["txt.gz"])
        pipe.set_outputs(gz)
    (gz,) = pipe.run()
    assert [gz.source_info(i).split(":")[-1] for i in range(3)] == [
        "compressed/0001", "compressed/0002", "compressed/0003"]


def _dali_layout_tar(shared_data, tmp_path):
    """Rebuilds the tar DALI_extra's index files describe (its data file is not in
    ../shared): the members named in the v1.2 index, in its order, from the same photos."""
    idx_dir = os.path.join(shared_data, "containers", "dali-idx", "webdataset")
    v12 = os.path.join(idx_dir, "legacy_index_formats", "v1.2.idx")
    lines = open(v12).read().split("\n")[1:]
    path = str(tmp_path / "train.tar")
    truth = []
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for line in filter(None, lines):
            w = line.split()
            names = w[3::4]
            cls_name = next(n for n in names if n.endswith(".cls"))
            jpg_name = next(n for n in names if n.endswith(".jpg"))
            label = cls_name.split("/")[2]
            photo = os.path.join(shared_data, "photos", "dali-imagenet-classes", label,
                                 os.path.basename(jpg_name))
            image = open(photo, "rb").read()
            for name in names:
                _add(tar, name, label.encode() if name.endswith(".cls") else image)
            truth.append((jpg_name[:-4], image, label.encode()))
    return path, idx_dir, v12, truth


def test_dali_index_files_and_our_index_tool(shared_data, tmp_path):
    import subprocess
    import sys

    path, idx_dir, v12, truth = _dali_layout_tar(shared_data, tmp_path)
    # Our index of the rebuilt tar is DALI's v1.2 file, byte for byte: same layout.
    r = subprocess.run([sys.executable, "-m", "stoker.tools.index", "webdataset", path],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "47 samples" in r.stdout
    assert open(path + ".idx").read() == open(v12).read()
    outputs = {}
    for index in [None, os.path.join(idx_dir, "train.idx"), v12]:
        pipe = stoker.Pipeline(batch_size=47, num_threads=2, seed=0)
        with pipe:
            img, cls = fn.readers.webdataset(paths=[path], ext=["jpg", "cls"],
                                             index_paths=[index] if index else [], name="R")
            pipe.set_outputs(img, cls)
        assert pipe.epoch_size("R") == 47
        img, cls = pipe.run()
        for i, (key, image, label) in enumerate(truth):
            assert img[i].numpy().tobytes() == image, (index, i)
            assert cls[i].numpy().tobytes() == label
        outputs[index] = [img.source_info(i) for i in range(47)]
    # v1.1 has no member names: samples are keyed by their line number.
    assert outputs[None] == outputs[v12] == [f"{path}:{t[0]}" for t in truth]
    assert outputs[os.path.join(idx_dir, "train.idx")][5] == f"{path}:5"


def test_index_that_does_not_fit_the_shard(shared_data, tmp_path):
    path, idx_dir, v12, truth = _dali_layout_tar(shared_data, tmp_path)
    short = tmp_path / "short.tar"
    short.write_bytes(open(path, "rb").read()[:100_000])
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        img = fn.readers.webdataset(paths=[str(short)], ext=["jpg"], index_paths=[v12])
        pipe.set_outputs(img)
    with pytest.raises(ValueError, match="v1.2.idx:2: member 'single_cpy/jpeg/84/"
                                         "peacock-90051_640.jpg' .* runs past the end"):
        pipe.build()
