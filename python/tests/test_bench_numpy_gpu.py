"""bench/numpy_gpu.py (readers.numpy with device="gpu" against DALI's GPU reader), run here with
the CPU readers: both libraries measured in one run, each figure a median over the repeats."""

import json
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")


def test_numpy_gpu_bench_measures_both_readers_in_one_run(tmp_path, dali):
    """bench/numpy_gpu.py on a machine without a GPU (--device cpu): stoker's and DALI's
    readers.numpy, at their defaults and with use_o_direct, each a median over the files read."""
    out = tmp_path / "npy.json"
    r = subprocess.run([sys.executable, os.path.join(BENCH, "numpy_gpu.py"), "--dir",
                        str(tmp_path / "npy"), "--mb", "0.05", "--count", "16", "--batch", "4",
                        "--threads", "1", "--repeats", "2", "--device", "cpu", "--json",
                        str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads(out.read_text())["results"]
    assert [(x["library"], x["use_o_direct"]) for x in rows] == [
        ("stoker", False), ("stoker", True), ("dali", False), ("dali", True)], rows
    for x in rows:
        assert x["samples_per_s"] > 0 and x["range"][0] <= x["samples_per_s"] <= x["range"][1]
    assert "| page cache | stoker | False |" in r.stdout
