"""The `stoker` command (python -m stoker): info, convert and index on small data."""

import json
import subprocess
import sys

import pytest

import stoker
from stoker import _stoker


def _stoker_cmd(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "stoker", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def test_info_reports_the_build_and_what_it_sees():
    r = _stoker_cmd("info", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["stoker"] == stoker.__version__
    assert info["cuda"]["built"] == _stoker.built_with_cuda
    assert info["libjpeg_turbo"][0].isdigit() or info["libjpeg_turbo"].startswith("libjpeg")
    assert info["libpng"].count(".") == 2
    assert len(info["devices"]) == (_stoker_device_count() if _stoker.cuda_available() else 0)
    for d in info["devices"]:
        assert d["name"] and d["memory_gib"] > 0 and "." in d["compute_capability"]
        assert isinstance(d["nvjpeg_hardware"], bool) and isinstance(d["nvjpeg_cuda"], bool)
    text = _stoker_cmd("info")
    assert text.returncode == 0 and text.stdout.startswith(f"stoker {stoker.__version__} (")
    assert "libjpeg-turbo" in text.stdout
    if not _stoker.cuda_available():
        assert "GPUs: none seen" in text.stdout


def _stoker_device_count():
    torch = pytest.importorskip("torch")
    return torch.cuda.device_count()


def test_convert_then_index_gives_the_index_convert_wrote(jpeg_folder, tmp_path):
    out = tmp_path / "shards"
    r = _stoker_cmd("convert", jpeg_folder, str(out), "--shards", "2")
    assert r.returncode == 0, r.stderr
    assert "tfrecord: 24 samples in 2 files" in r.stdout
    for fmt, ext in (("tfrecord", "tfrecord"), ("recordio", "rec"), ("webdataset", "tar")):
        shard = out / f"data-00001.{ext}"
        written = (out / f"data-00001.{ext}.idx").read_text()
        r = _stoker_cmd("index", fmt, str(shard), "-o", str(tmp_path / f"{fmt}.idx"))
        assert r.returncode == 0, r.stderr
        if fmt != "recordio":  # recordio's keys restart at 0 in a fresh index
            assert (tmp_path / f"{fmt}.idx").read_text() == written, fmt
    # (reading the shards back through the readers: test_convert.py)


def test_bad_command_lines_say_what_is_wrong(tmp_path):
    r = _stoker_cmd("index", "zip", "x")
    assert r.returncode == 2 and "invalid choice: 'zip'" in r.stderr and "stoker index" in r.stderr
    r = _stoker_cmd("index", "tfrecord", str(tmp_path / "missing.tfrecord"))
    assert r.returncode == 1 and "missing.tfrecord" in r.stderr
    r = _stoker_cmd("convert", str(tmp_path), str(tmp_path / "o"), "--formats", "parquet")
    assert r.returncode == 2 and "unknown formats ['parquet']" in r.stderr
    r = _stoker_cmd("frobnicate")
    assert r.returncode == 2 and "invalid choice: 'frobnicate'" in r.stderr
    r = _stoker_cmd()
    assert r.returncode == 2 and "stoker info" in r.stdout
