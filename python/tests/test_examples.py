"""Every example in examples/ runs (with tiny sizes)."""

import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _run(name, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=300, env=os.environ)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_training_pipeline_example(jpeg_folder):
    out = _run("01_training_pipeline.py", "--data", jpeg_folder, "--size", "32",
               "--batch-size", "8", "--batches", "2")
    assert "24 images" in out
    assert "batch 1: images (8, 3, 32, 32) float16" in out


def test_training_pipeline_example_generates_data():
    pytest.importorskip("PIL")
    out = _run("01_training_pipeline.py", "--size", "32", "--batches", "1")
    assert "48 images" in out


def test_external_source_example():
    out = _run("02_external_source.py")
    assert "batch 2:" in out and out.strip().endswith("done")
