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


def test_demo_says_what_to_install_without_pillow(tmp_path):
    blocker = tmp_path / "block" / "PIL"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no Pillow here')\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker.parent}{os.pathsep}"
                                       f"{os.environ.get('PYTHONPATH', '')}"}
    r = subprocess.run([sys.executable, "-m", "stoker.demo", "--epochs", "1", "--images", "8"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert r.returncode != 0
    assert "pip install pillow" in r.stderr and "--data DIR" in r.stderr
    assert "Traceback" not in r.stderr
