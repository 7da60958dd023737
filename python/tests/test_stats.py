"""pipe.operator_times(), stats() and report(): every operator counted, sizes exact, times that
add up to the stages' busy time; the Chrome/Perfetto trace (trace=, STOKER_TRACE)."""

import json
import os
import subprocess
import sys
import time

import pytest

import stoker
from stoker import fn, types


def _train_pipe(folder, batch=4):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=3)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=folder, name="reader")
        images = fn.decoders.image(jpegs, name="decode")
        images = fn.resize(images, size=(32, 48), name="resize")
        pipe.set_outputs(fn.crop_mirror_normalize(images, dtype=types.FLOAT, mean=[1, 2, 3],
                                                  output_layout="CHW", name="normalize"), labels)
    return pipe


def test_operator_times_count_every_run_and_their_bytes(jpeg_folder):
    pipe = _train_pipe(jpeg_folder)
    t0 = time.perf_counter()
    for _ in range(5):
        pipe.run()
    wall = time.perf_counter() - t0
    ops = {o["name"]: o for o in pipe.operator_times()}
    assert {"reader", "decode", "resize", "normalize"} <= set(ops)
    for o in ops.values():
        assert o["backend"] == "cpu"
        # at least the 5 delivered batches; prefetching may have run a few more
        assert o["runs"] >= 5 and o["samples"] == 4 * o["runs"]
        assert o["seconds"] >= 0
    assert ops["decode"]["op"] == "decoders.image" and ops["decode"]["seconds"] > 0
    r = ops["resize"]
    assert r["bytes_out"] == r["samples"] * 32 * 48 * 3  # uint8 HWC
    n = ops["normalize"]
    assert n["bytes_in"] == n["samples"] * 32 * 48 * 3 and n["bytes_out"] == 4 * n["bytes_in"]
    # The CPU stage's busy time holds its operators' time (and little else). Compared once the
    # stage is idle (its queue full): an iteration in flight has operator time but no busy
    # time yet.
    deadline = time.monotonic() + 30
    while True:
        cpu = next(s for s in pipe.stage_stats() if s["stage"] == "cpu")
        ops = {o["name"]: o for o in pipe.operator_times()}
        if all(o["runs"] == cpu["iterations"] for o in ops.values()):
            time.sleep(0.05)
            again = next(s for s in pipe.stage_stats() if s["stage"] == "cpu")
            if again["iterations"] == cpu["iterations"]:
                break
        assert time.monotonic() < deadline, "the CPU stage never stopped"
        time.sleep(0.05)
    total = sum(o["seconds"] for o in ops.values())
    assert total <= cpu["busy"] + 1e-6 and cpu["busy"] <= wall + 1.0


def _wait_until(cond, timeout=60.0):
    t0 = time.perf_counter()
    while not cond():
        assert time.perf_counter() - t0 < timeout, "timed out"
        time.sleep(0.01)


def test_queue_occupancy_is_what_the_consumer_found(jpeg_folder):
    pipe = _train_pipe(jpeg_folder)  # prefetch_queue_depth 2
    pipe.run()  # the first run finds an empty queue
    cpu = lambda: pipe.stage_stats()[0]  # noqa: E731
    _wait_until(lambda: cpu()["iterations"] >= 3)  # 1 delivered + 2 waiting: the queue is full
    time.sleep(0.3)  # the third is counted just before it is queued
    pipe.run()  # finds it full
    st = cpu()
    assert st["queue_capacity"] == 2 and st["queue_mean"] == pytest.approx(1.0)
    assert pipe.stage_stats()[-1]["queue_capacity"] == 0  # the consumer has no output queue


def test_cpu_times_count_the_pipelines_threads(jpeg_folder):
    pipe = _train_pipe(jpeg_folder)
    pipe.run()
    t0 = time.perf_counter()
    for _ in range(5):
        pipe.run()
    c = pipe.cpu_times()
    assert set(c["threads"]) == {"cpu stage", "workers"}  # num_threads=2: one worker
    assert all(v >= 0 for v in c["threads"].values()) and sum(c["threads"].values()) > 0
    assert c["wall"] >= time.perf_counter() - t0
    # Two threads cannot use more than two cores (5% for the clocks' granularity).
    assert 0 < c["cores"] <= 2 * 1.05
    cpu_stage = pipe.stage_stats()[0]
    assert 0 < cpu_stage["cpu"] <= c["wall"] + 0.05
    assert cpu_stage["cpu"] == pytest.approx(c["threads"]["cpu stage"], abs=0.5)
    text = pipe.report()
    assert "CPU cores busy" in text and "queue" in text


def test_stats_and_report_hold_everything(jpeg_folder):
    pipe = _train_pipe(jpeg_folder)
    for _ in range(3):
        pipe.run()
    s = pipe.stats()
    assert set(s) == {"stages", "operators", "cpu", "memory", "errors", "autotune", "gpu",
                      "external_sources"}
    assert s["gpu"]["available"] is False and s["gpu"]["why"] == "the pipeline has no GPU stages"
    assert s["autotune"] == {"threads": 2, "changes": [], "prefetch_queue_depth": 2,
                             "prefetch_changes": []}
    assert [st["stage"] for st in s["stages"]] == ["cpu", "consumer"]
    assert all("counters" in o for o in s["operators"])
    assert s["memory"]["host"]["bytes_in_use"] > 0 and s["errors"]["skipped"] == 0
    text = pipe.report()
    for name in ("reader", "decode", "resize", "normalize", "cpu", "consumer", "ms/sample"):
        assert name in text


@pytest.mark.skipif(not stoker._stoker.cuda_available(), reason="no CUDA device: GPU test skipped")
def test_gpu_operators_are_counted_in_their_stages(jpeg_folder, tmp_path):
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3, device_id=0,
                           trace=tmp_path / "t.json")
    with pipe:
        jpegs, _ = fn.readers.file(file_root=jpeg_folder)
        images = fn.decoders.image(jpegs, device="mixed", name="decode")
        pipe.set_outputs(fn.resize(images, device="gpu", size=(32, 32), name="resize"))
    for _ in range(4):
        pipe.run()
    ops = {o["name"]: o for o in pipe.operator_times()}
    assert ops["decode"]["backend"] == "mixed" and ops["resize"]["backend"] == "gpu"
    assert ops["decode"]["runs"] >= 4 and ops["resize"]["samples"] == 4 * ops["resize"]["runs"]
    assert ops["resize"]["bytes_out"] == ops["resize"]["samples"] * 32 * 32 * 3
    for name in ("decode", "resize"):  # GPU time of the runs the GPU has finished
        assert 1 <= ops[name]["gpu_runs"] <= ops[name]["runs"] and ops[name]["gpu_seconds"] > 0
    assert "GPU ms/batch" in pipe.report()
    pipe.close()
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    tracks = {e["args"]["name"]: e["tid"] for e in events if e["ph"] == "M"}
    assert {"cpu stage", "mixed stage", "gpu stage", "consumer (run)", "mixed stage stream",
            "gpu stage stream"} <= set(tracks)
    spans = [e for e in events if e["ph"] == "X"]
    on = {(e["name"], e["tid"]) for e in spans}
    assert ("decode", tracks["mixed stage"]) in on and ("resize", tracks["gpu stage"]) in on
    assert ("decode", tracks["cpu stage"]) in on  # the mixed decoder's host part, a batch ahead
    # Every device run has its GPU span on its stage's stream (the last ones read at close),
    # starting after its host run began, in iteration order.
    for name, stage in (("decode", "mixed stage"), ("resize", "gpu stage")):
        host = {e["args"]["iteration"]: e for e in spans
                if e["name"] == name and e["tid"] == tracks[stage]}
        gpu = [e for e in spans if e["name"] == name and e["tid"] == tracks[stage + " stream"]]
        assert sorted(e["args"]["iteration"] for e in gpu) == sorted(host)
        assert all(e["cat"] == "gpu" and e["dur"] >= 0 for e in gpu)
        for e in gpu:
            assert e["ts"] >= host[e["args"]["iteration"]]["ts"] - 50  # µs: anchor's error
        starts = [e["ts"] for e in sorted(gpu, key=lambda e: e["args"]["iteration"])]
        assert starts == sorted(starts)


@pytest.mark.skipif(not stoker._stoker.cuda_available(), reason="no CUDA device: GPU test skipped")
def test_gpu_utilization_is_sampled_through_nvml(jpeg_folder):
    pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=3, device_id=0)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=jpeg_folder)
        images = fn.decoders.image(jpegs, device="mixed", name="decode", hw_decoder_load=1.0)
        pipe.set_outputs(fn.resize(images, device="gpu", size=(64, 64)))
    assert pipe.gpu_utilization()["samples"] == 0  # sampling starts with the first run()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.0:
        pipe.run()
    g = pipe.gpu_utilization()
    if not g["available"]:
        pytest.skip(f"NVML not available: {g['why']}")
    assert g["samples"] >= 5 and 0 <= g["sm_percent"] <= 100, g
    assert g["nvjpg_percent"] == -1 or 0 <= g["nvjpg_percent"] <= 100, g
    if pipe.operator_stats("decode")["hw_images"] > 0 and g["nvjpg_percent"] >= 0:
        assert g["nvjpg_percent"] > 0, g  # the engines decoded for two seconds
    assert pipe.stats()["gpu"]["samples"] >= g["samples"]
    assert "GPU (NVML" in pipe.report()


def test_trace_file_has_every_operator_on_its_stage_track(jpeg_folder, tmp_path):
    path = tmp_path / "trace.json"
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3, trace=path)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=jpeg_folder, name="reader")
        images = fn.resize(fn.decoders.image(jpegs, name="decode"), size=(16, 16), name="resize")
        pipe.set_outputs(images, labels)
    for _ in range(3):
        pipe.run()
    times = {o["name"]: o for o in pipe.operator_times()}
    pipe.close()
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    assert set(names.values()) == {"cpu stage", "consumer (run)"}
    spans = [e for e in events if e["ph"] == "X"]
    cpu_track = next(t for t, n in names.items() if n == "cpu stage")
    for op in ("reader", "decode", "resize"):
        runs = [e for e in spans if e["name"] == op]
        # operator_times() was read before close(); the CPU stage may have run ahead since
        # (prefetch depth 2, and one iteration in flight)
        assert times[op]["runs"] <= len(runs) <= times[op]["runs"] + 3
        assert all(e["tid"] == cpu_track and e["dur"] >= 0 and e["cat"] == "cpu" for e in runs)
        assert sorted(e["args"]["iteration"] for e in runs) == list(range(len(runs)))
        first = sorted(runs, key=lambda e: e["args"]["iteration"])[:times[op]["runs"]]
        total = sum(e["dur"] for e in first) / 1e6
        assert total == pytest.approx(times[op]["seconds"], rel=1e-3, abs=1e-5)
    iterations = [e for e in spans if e["name"] == "iteration"]
    assert len(iterations) >= 3
    # each operator run lies inside its iteration's span
    for e in spans:
        if e["name"] == "decode":
            it = next(i for i in iterations if i["args"]["iteration"] == e["args"]["iteration"])
            assert it["ts"] - 1 <= e["ts"] and e["ts"] + e["dur"] <= it["ts"] + it["dur"] + 1
    assert any(e["name"] == "waiting for a batch" for e in spans)


def test_stoker_trace_environment_variable_and_an_unwritable_path(jpeg_folder, tmp_path):
    script = (
        "import stoker\nfrom stoker import fn\n"
        "p = stoker.Pipeline(batch_size=2, seed=1)\n"
        "with p:\n"
        f"    j, l = fn.readers.file(file_root={jpeg_folder!r})\n"
        "    p.set_outputs(l)\n"
        "p.run()\np.close()\nprint('ok')\n")
    good = tmp_path / "env.json"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "STOKER_TRACE": str(good)})
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    assert any(e["name"] == "readers.file" or e["ph"] == "X"
               for e in json.loads(good.read_text())["traceEvents"])
    bad = tmp_path / "no" / "such" / "dir" / "t.json"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "STOKER_TRACE": str(bad)})
    assert r.returncode == 0 and "ok" in r.stdout  # closing still works
    assert f"cannot write the pipeline trace to '{bad}'" in r.stderr
