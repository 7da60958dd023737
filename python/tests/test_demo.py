import os
import subprocess
import sys


def test_demo_runs_and_reports_throughput(tmp_path, jpeg_folder):
    r = subprocess.run([sys.executable, "-m", "stoker.demo", "--data", jpeg_folder,
                        "--epochs", "2", "--batch-size", "8", "--threads", "2", "--size", "64"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert "images/s overall" in r.stdout
    assert "24 images in" in r.stdout
    assert "(8, 3, 64, 64) float16" in r.stdout


def test_demo_generates_sample_data_when_none_given(tmp_path):
    r = subprocess.run([sys.executable, "-m", "stoker.demo", "--epochs", "1", "--images", "16",
                        "--batch-size", "8", "--threads", "2", "--size", "32"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env={**os.environ, "DATA": ""})
    assert r.returncode == 0, r.stderr
    assert "generating 16 sample JPEGs" in r.stdout
    assert (tmp_path / "demo_data" / "jpegs_16" / "class_0").is_dir()
