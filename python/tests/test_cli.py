"""The `stoker` command (python -m stoker): info, convert and index on small data."""

import json
import os
import subprocess
import sys
import time

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
    assert info["libwebp"] is None or info["libwebp"].count(".") == 2  # None: built without
    assert info["libtiff"] is None or info["libtiff"].count(".") == 2
    assert len(info["devices"]) == (_stoker_device_count() if _stoker.cuda_available() else 0)
    for d in info["devices"]:
        assert d["name"] and d["memory_gib"] > 0 and "." in d["compute_capability"]
        assert isinstance(d["nvjpeg_hardware"], bool) and isinstance(d["nvjpeg_cuda"], bool)
        # This build's kernels run on the GPU the tests run on (the build compiled for it),
        # NVDEC and NVOFA say "" or why not.
        assert d["kernels"] is True
        assert isinstance(d["nvdec"], str) and isinstance(d["nvofa"], str)
    archs = info["cuda"]["architectures"]
    if info["cuda"]["built"]:
        # CMake's syntax: "90-real" (SASS), "90-virtual" (PTX), "90" (both), or "native".
        assert archs and all(a.split("-")[0].isdigit() or a == "native" for a in archs), archs
    else:
        assert archs == []
    text = _stoker_cmd("info")
    assert text.returncode == 0 and text.stdout.startswith(f"stoker {stoker.__version__} (")
    assert "libjpeg-turbo" in text.stdout
    # FFmpeg (video): its libraries' versions, or said to be missing.
    if info["ffmpeg"]:
        assert info["ffmpeg"].startswith("libavformat ") and "libavcodec " in info["ffmpeg"]
        assert f"FFmpeg (readers.video): {info['ffmpeg']}" in text.stdout
    else:
        assert "FFmpeg (readers.video): no (built without it)" in text.stdout
    if not _stoker.cuda_available():
        assert "GPUs: none seen" in text.stdout
    if info["cuda"]["built"]:
        assert "; kernels for sm_" in text.stdout or "kernels for native" in text.stdout
    # nvJPEG2000 and nvTIFF: where PyPI's packages are installed (scripts/setup), their libraries
    # load with every entry point stoker uses (a missing one would say "lacks").
    for key, module, name in (("nvjpeg2k", "nvidia.nvjpeg2k", "nvJPEG2000"),
                              ("nvtiff", "nvidia.nvtiff", "nvTIFF")):
        if not info["cuda"]["built"]:
            assert info[key] is True or "no CUDA" in info[key]
            continue
        try:
            __import__(module)
            installed = True
        except ImportError:
            installed = False
        if installed and "built without" not in str(info[key]):
            assert info[key] is True, info[key]
        assert (f"{name} (" in text.stdout and
                ("yes" if info[key] is True else f"no: {info[key]}") in text.stdout)


def test_version_is_the_package_version_without_loading_the_native_module():
    r = _stoker_cmd("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"stoker {stoker.__version__}"
    from stoker import _version
    assert stoker.__version__ == _version.__version__
    # One place: the CMake project and the wheel's metadata read _version.py.
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    pyproject = open(os.path.join(root, "pyproject.toml"), encoding="utf-8").read()
    assert 'dynamic = ["version"]' in pyproject and "python/stoker/_version.py" in pyproject
    assert "version = " not in pyproject.split("[project]")[1].split("[")[0]


def _stoker_device_count():
    torch = pytest.importorskip("torch")
    return torch.cuda.device_count()


def test_convert_then_index_gives_the_index_convert_wrote(jpeg_folder, tmp_path):
    out = tmp_path / "shards"
    r = _stoker_cmd("convert", jpeg_folder, str(out), "--shards", "2")
    assert r.returncode == 0, r.stderr
    assert "tfrecord: 24 samples in 2 files" in r.stdout
    assert r.stderr.splitlines() == ["[1/2] 12 of 24 samples written",
                                     "[2/2] 24 of 24 samples written"]  # progress
    j = _stoker_cmd("convert", jpeg_folder, str(tmp_path / "again"), "--shards", "2",
                    "--formats", "tfrecord", "--json", "--quiet")
    assert j.returncode == 0 and j.stderr == ""
    done = json.loads(j.stdout)
    assert done["samples"] == 24 and [os.path.basename(p) for p in done["files"]["tfrecord"]] == \
        ["data-00000.tfrecord", "data-00001.tfrecord"]
    for fmt, ext in (("tfrecord", "tfrecord"), ("recordio", "rec"), ("webdataset", "tar")):
        shard = out / f"data-00001.{ext}"
        written = (out / f"data-00001.{ext}.idx").read_text()
        r = _stoker_cmd("index", fmt, str(shard), "-o", str(tmp_path / f"{fmt}.idx"))
        assert r.returncode == 0, r.stderr
        if fmt != "recordio":  # recordio's keys restart at 0 in a fresh index
            assert (tmp_path / f"{fmt}.idx").read_text() == written, fmt
    j = _stoker_cmd("index", "tfrecord", str(out / "data-00000.tfrecord"), "-o",
                    str(tmp_path / "j.idx"), "--json")
    assert j.returncode == 0, j.stderr
    assert json.loads(j.stdout) == [{"file": str(out / "data-00000.tfrecord"), "records": 12,
                                     "index": str(tmp_path / "j.idx")}]
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


# -- stoker diagnose ------------------------------------------------------------------------

def _diagnose_json(folder, tmp_path, threads):
    r = _stoker_cmd("diagnose", "--data", folder, "--batch", "4", "--threads", threads,
                    "--seconds", "0.5", "--warmup", "0.2", "--png", str(tmp_path / "h.png"),
                    "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def test_diagnose_measures_the_loader_and_names_its_bottleneck(jpeg_folder, tmp_path):
    out = _diagnose_json(jpeg_folder, tmp_path, "2")
    assert out["loader_alone"]["images_per_s"] > 0 and out["loader_alone"]["cores"] > 0
    assert out["bottleneck"] and isinstance(out["recommendations"], list)
    assert {o["name"] for o in out["operators"]} >= {"reader", "decode", "normalize"}
    assert "ms/sample" in out["report"]
    if not _stoker.cuda_available():
        assert "synthetic" not in out and any("no CUDA GPU" in n for n in out["notes"])
        # A CPU-only pipeline limited by its decoder: the CPU stage's busiest operator.
        assert out["bottleneck"].startswith("the CPU stage: operator")
    else:  # the model on synthetic data and fed by stoker, their utilisation histograms
        assert out["synthetic"]["images_per_s"] > 0 and out["fed"]["pct_of_synthetic"] > 0
        hist = json.loads(open(out["histogram_json"]).read())
        assert set(hist["gpu_util"]) == {"synthetic data", "fed by stoker"}
    text = _stoker_cmd("diagnose", "--data", jpeg_folder, "--batch", "4", "--threads", "2",
                       "--seconds", "0.3", "--warmup", "0")
    assert text.returncode == 0 and "loader alone:" in text.stdout and "bottleneck:" in text.stdout


def test_diagnose_with_auto_threads_recommends_what_the_tuner_chose(jpeg_folder, tmp_path):
    out = _diagnose_json(jpeg_folder, tmp_path, "auto")
    assert out["threads"] == "auto" and out["loader_alone"]["threads_used"] >= 1
    chosen = out.get("fed", out["loader_alone"])["threads_used"]
    assert out["recommendations"][0].startswith(f"num_threads='auto' settled at {chosen} ")
    for bad in ("0", "x"):
        r = _stoker_cmd("diagnose", "--data", jpeg_folder, "--threads", bad)
        assert r.returncode == 2 and "--threads" in r.stderr


def test_diagnose_refuses_a_missing_folder(tmp_path):
    r = _stoker_cmd("diagnose", "--data", str(tmp_path / "nope"))
    assert r.returncode == 2 and "not a folder" in r.stderr


def _stats(busy, starved, ops, queue=(0.0, 2)):
    stages = [{"stage": s, "busy": b, "starved": st, "queue_mean": queue[0],
               "queue_capacity": queue[1]}
              for s, b, st in zip(("cpu", "mixed", "gpu"), busy, starved)]
    stages.append({"stage": "consumer", "busy": 0, "starved": 1, "queue_mean": 0,
                   "queue_capacity": 0})
    return {"stages": stages, "operators": ops}


def _op(name, op, backend, seconds, samples=1000, gpu_seconds=0.0, gpu_runs=0):
    return {"name": name, "op": op, "backend": backend, "seconds": seconds, "samples": samples,
            "gpu_seconds": gpu_seconds, "gpu_runs": gpu_runs, "counters": {}}


def test_bottleneck_rules():
    from stoker.tools.diagnose import bottleneck
    ops = [_op("reader", "readers.file", "cpu", 0.1), _op("decode", "decoders.image", "mixed", 2.0),
           _op("resize", "resize", "gpu", 0.5, gpu_seconds=3.0, gpu_runs=10)]
    st = _stats((1.0, 9.0, 2.0), (0.0, 0.5, 7.0), ops)
    # Fed training at 98% of synthetic: the model is the limit.
    what, recs = bottleneck(20000, 4600, 4500, st, 16, 3.0)
    assert what.startswith("the GPU (the model itself)") and "97.8%" in what and recs == []
    # The loader alone is 4x faster than the model needs, yet training loses: contention.
    what, recs = bottleneck(20000, 4600, 4100, st, 16, 3.0)
    assert what.startswith("host contention") and any("num_threads=4" in r for r in recs)
    assert any("cpu_affinity=range(1, os.cpu_count())" in r for r in recs)
    assert any("num_threads='auto'" in r for r in recs)
    # The loader is slower than the model: its busiest, least starved stage (mixed: decoder).
    what, _ = bottleneck(3000, 4600, 2900, st, 16, 3.0)
    assert what.startswith("the decoder 'decode'")
    # No GPU: the CPU stage's heaviest operator; a reader there means storage.
    cpu_ops = [_op("reader", "readers.file", "cpu", 5.0),
               _op("decode", "decoders.image", "cpu", 1.0)]
    what, recs = bottleneck(500, None, None, _stats((9.0,), (0.0,), cpu_ops), 2, 1.9)
    assert what.startswith("storage: the reader 'reader'") and "stoker convert" in recs[0]
    # The advice fits the machine: no GPU advice without a GPU, no "more threads" when every
    # core was busy; both where the machine has them.
    decode_ops = [_op("decode", "decoders.image", "cpu", 5.0)]
    cpu_only = _stats((9.0,), (0.0,), decode_ops)
    _, recs = bottleneck(500, None, None, cpu_only, 2, 1.95, gpu=False, machine_cores=2)
    assert not any("GPU:" in r or "device='mixed'" in r for r in recs)
    assert any("the 2 cores were all busy: more threads cannot help" in r for r in recs)
    assert not any(r.startswith("more threads") for r in recs)
    _, recs = bottleneck(500, None, None, cpu_only, 4, 3.9, gpu=True, machine_cores=16)
    assert any("device='mixed'" in r for r in recs)
    assert any(r.startswith("more threads: 12 of the 16 cores were idle") for r in recs)
    # With the training thread's waits per step: cited when fed blocks it far more often.
    what, _ = bottleneck(20000, 4600, 4100, st, 16, 3.0, waits=(1.0, 88.2))
    assert "; the training thread blocked 88 times per step fed, 1 on synthetic data (on an " \
        "H100 these were waits for the CUDA driver's locks" in what, what
    what, _ = bottleneck(20000, 4600, 4100, st, 16, 3.0, waits=(1.0, 4.0))
    assert "blocked" not in what
    gpu_stage = _stats((1.0, 1.0, 9.0), (5.0, 5.0, 0.0), ops, queue=(1.9, 2))
    what, recs = bottleneck(3000, 4600, 2900, gpu_stage, 16, 3.0)
    assert what.startswith("the GPU stage: operator 'resize' (300.00 ms")
    assert any("queue is usually full" in r for r in recs)


def test_diagnose_plot_draws_the_histograms(tmp_path):
    pytest.importorskip("matplotlib")
    h = tmp_path / "h.json"
    h.write_text(json.dumps({"title": "t", "gpu_util": {"synthetic data": [95, 97, 99],
                                                          "fed by stoker": [80, 90, 99]}}))
    r = _stoker_cmd("diagnose", "--plot", str(h), "--png", str(tmp_path / "h.png"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_measures_each_thread_count(jpeg_folder):
    r = _stoker_cmd("bench", "--data", jpeg_folder, "--threads", "1,2,auto", "--batch", "4",
                    "--seconds", "0.3", "--warmup", "0.1", "--device", "cpu", "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert [x["threads"] for x in out["results"]] == [1, 2, "auto"] and out["device"] == "cpu"
    for x in out["results"]:
        used = x["threads_used"]
        assert x["images_per_s"] > 0 and 0 < x["cores"] <= used * 1.1 + 0.5
        assert x["busiest_stage"] == "cpu" and used >= 1
    assert [x["threads_used"] for x in out["results"][:2]] == [1, 2]
    assert "[3/3] auto threads" in r.stderr  # progress on stderr
    text = _stoker_cmd("bench", "--data", jpeg_folder, "--threads", "1", "--batch", "4",
                       "--seconds", "0.2", "--warmup", "0", "--device", "cpu")
    assert text.returncode == 0 and "threads   images/s   cores busy" in text.stdout
    bad = _stoker_cmd("bench", "--data", jpeg_folder, "--threads", "0,x")
    assert bad.returncode == 2 and "expected numbers" in bad.stderr
    text = _stoker_cmd("bench", "--data", jpeg_folder, "--threads", "auto", "--batch", "4",
                       "--seconds", "0.2", "--warmup", "0", "--device", "cpu")
    assert text.returncode == 0 and " auto:" in text.stdout


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="Linux only")
def test_thread_stats_count_the_calling_threads_waits():
    """The training thread's counters (diagnose, bench/fed_gap.py): blocking shows as voluntary
    switches, running as run time; another thread's waits are not counted."""
    import threading
    from stoker.tools.thread_stats import per_step, thread_sched
    before = thread_sched()
    t = threading.Thread(target=lambda: [time.sleep(0.001) for _ in range(50)])
    t.start()
    t.join()  # the join blocks this thread about once
    for _ in range(20):
        time.sleep(0.001)  # each sleep blocks this thread once
    spin = time.thread_time()  # 50 ms of this thread's CPU time, however busy the machine
    while time.thread_time() - spin < 0.05:
        pass
    step = per_step(before, thread_sched(), 2)
    assert 10 <= step["voluntary"] < 20, step  # 20+ waits over 2 steps, not the other's 50
    assert step["run_ms"] >= 20, step  # the 50 ms spin, over 2 steps
    assert step["runq_wait_ms"] >= 0 and step["involuntary"] >= 0
    assert per_step(None, before, 1) is None and per_step(before, before, 0) is None
