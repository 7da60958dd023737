"""scripts/make_dataset.py on a few source photos: class folders, ImageNet-like sizes, the
mean file size calibrated to the target, the manifest, the same files for any number of
workers, and containers that read back as the folder."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "make_dataset.py")


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Three 'photos': smooth gradients with texture, 1024x768 and 600x800."""
    from PIL import Image
    root = tmp_path_factory.mktemp("src")
    rng = np.random.default_rng(1)
    for k, (w, h) in enumerate([(1024, 768), (600, 800), (1024, 700)]):
        y, x = np.mgrid[0:h, 0:w]
        a = np.stack([x * 255 // w, y * 255 // h, (x + y) % 256], -1).astype(np.float32)
        a += rng.normal(0, 2, a.shape)
        Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(root / f"p{k}.jpg", quality=95)
    return str(root)


def _make(out, sources, *extra):
    r = subprocess.run([sys.executable, SCRIPT, str(out), "--src", sources, "--count", "24",
                        "--classes", "3", "--target-kb", "90", "--shards", "2", *extra],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_dataset_manifest_sizes_and_containers(sources, tmp_path):
    out = tmp_path / "ds"
    assert "24 JPEGs in" in _make(out, sources, "--workers", "2")
    info = json.loads((out / "MANIFEST.json").read_text())
    assert info["count"] == 24 and info["classes"] == 3
    assert abs(info["mean_kb"] - 90) / 90 < 0.1 and info["noise_sigma"] > 5, info  # calibrated
    assert info["sizes"].get("500x375", 0) + info["sizes"].get("375x500", 0) >= 12
    assert set(os.listdir(out / "jpeg")) == {"0000", "0001", "0002"}
    files = sorted((out / "jpeg").rglob("*.jpg"))
    assert len(files) == 24
    mean = sum(f.stat().st_size for f in files) / 24 / 1000
    assert mean == pytest.approx(info["mean_kb"])
    assert "mean file" in (out / "MANIFEST.md").read_text()

    import stoker
    from stoker import fn
    pipe = stoker.Pipeline(batch_size=24, num_threads=2, seed=1)
    tars = sorted(str(p) for p in (out / "webdataset").glob("*.tar"))
    with pipe:
        a, _ = fn.readers.file(file_root=str(out / "jpeg"))
        b, _ = fn.readers.webdataset(paths=tars, ext=["jpg", "cls"])
        pipe.set_outputs(a, fn.decoders.image(b))
    a, b = pipe.run()
    assert [a[i].numpy().tobytes() for i in range(24)] == [f.read_bytes() for f in files]
    assert b.shape()[0][2] == 3  # decodable


def test_the_same_files_for_any_number_of_workers(sources, tmp_path):
    _make(tmp_path / "a", sources, "--workers", "1", "--formats", "")
    _make(tmp_path / "b", sources, "--workers", "3", "--formats", "")
    fa = sorted((tmp_path / "a" / "jpeg").rglob("*.jpg"))
    fb = sorted((tmp_path / "b" / "jpeg").rglob("*.jpg"))
    assert [f.read_bytes() for f in fa] == [f.read_bytes() for f in fb]
    assert not (tmp_path / "a" / "tfrecord").exists()


def test_no_sources_is_a_clear_error(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "x"), "--src", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "no JPEGs under" in r.stderr


def test_unknown_container_format_is_refused_before_rendering(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "x"), "--formats", "jpeg,tfrecord"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "--formats: unknown container format 'jpeg' (known: tfrecord, recordio, webdataset) " \
        "(the JPEG folder is always written)" in r.stderr
    assert not (tmp_path / "x").exists()
