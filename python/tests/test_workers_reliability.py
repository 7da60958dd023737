"""Parallel external sources that go wrong in their worker processes: a callback that never
returns (py_worker_timeout), a worker that exits or is killed, a slow callback without a
timeout, and forkserver workers left idle. Each hang or death runs in a subprocess of its own
with a timeout, and asserts the exit code, the error's text (the worker, its pid, the sample as
the callback got it) and that no worker is left running or unreaped, after the error and after
the pipeline is deleted."""

import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, workers

BATCH = 4
STOKER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(stoker.__file__)))

# Callbacks for the subprocesses, in a module of their own so that spawn can pickle them.
SOURCES = """
import os, signal, time
import numpy as np

def hangs_at_five(info):
    if info.idx_in_epoch == 5:
        time.sleep(3600)
    return np.full((2,), info.idx_in_epoch, np.int32)

def batch_hangs_at_two(iteration):
    if iteration == 2:
        time.sleep(3600)
    return [np.zeros(2, np.int32)] * 4

def generator_hangs_second():
    yield [np.zeros(2, np.int32)] * 4
    time.sleep(3600)
    yield [np.zeros(2, np.int32)] * 4

def exits_at_six(info):
    if info.idx_in_epoch == 6:
        os._exit(3)
    return np.zeros(2, np.int32)
"""

# The repro: builds a pipeline with `source`, runs until it fails, prints the error, then the
# state of every worker (/proc: "gone" once reaped; "Z" would be a zombie) after the error and
# after `del pipe`.
DRIVER = """
import os, sys, time
import stoker, sources
from stoker import fn

def state(pid):
    try:
        return open(f"/proc/{{pid}}/stat").read().split()[2]
    except FileNotFoundError:
        return "gone"

def main():
    @stoker.pipeline_def(batch_size=4, num_threads=1, py_num_workers=2,
                         py_start_method="{start}", {timeout})
    def p():
        return fn.external_source(source=sources.{source}, batch={batch}, parallel=True,
                                  name="src")
    pipe = p()
    pipe.build()
    pids = pipe._external.pool.pids
    {before}
    start = time.monotonic()
    try:
        for _ in range(10):
            pipe.run()
        print("no error")
    except Exception as e:
        print(f"{{type(e).__name__}}: {{e}}")
    print(f"raised after {{time.monotonic() - start:.1f}} s")
    print("after the error:", sorted({{state(q) for q in pids}}))
    try:
        pipe.run()
    except Exception as e:
        print(f"again: {{type(e).__name__}}")
    del pipe
    print("after del:", sorted({{state(q) for q in pids}}))

if __name__ == "__main__":
    main()
"""


def repro(tmp_path, source, batch=False, start="fork", timeout="py_worker_timeout=0.5",
          before="", limit=30):
    (tmp_path / "sources.py").write_text(SOURCES)
    script = tmp_path / "repro.py"
    script.write_text(DRIVER.format(source=source, batch=batch, start=start, timeout=timeout,
                                    before=before))
    env = {**os.environ, "PYTHONPATH": f"{STOKER_DIR}:{tmp_path}"}
    t = time.monotonic()
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=limit, env=env, cwd=tmp_path)
    return res, time.monotonic() - t


def check_stopped(res):
    assert res.returncode == 0, res.stderr
    assert "after the error: ['gone']" in res.stdout, res.stdout
    assert "after del: ['gone']" in res.stdout, res.stdout


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_a_hanging_sample_callback_fails_after_py_worker_timeout(tmp_path, start):
    res, took = repro(tmp_path, "hangs_at_five", start=start)
    check_stopped(res)
    assert ("WorkerTimeoutError: external_source 'src' (parallel): its callback has run for "
            in res.stdout), res.stdout
    assert ("s in worker 1 (pid " in res.stdout or "s in worker 0 (pid " in res.stdout)
    assert ("on sample 5 (index 1 in the batch) of iteration 1, epoch 0, longer than "
            "py_worker_timeout=0.5 s; the pipeline's workers are stopped" in res.stdout), res.stdout
    assert "again: WorkerTimeoutError" in res.stdout  # the pipeline stays failed
    assert took < 15


def test_a_hanging_batch_callback_and_generator_fail_after_py_worker_timeout(tmp_path):
    res, _ = repro(tmp_path, "batch_hangs_at_two", batch=True)
    check_stopped(res)
    assert "on the batch of iteration 2, epoch 0, longer than py_worker_timeout" in res.stdout
    res, _ = repro(tmp_path, "generator_hangs_second", batch=True)
    check_stopped(res)
    assert "on the batch of iteration 1, epoch 0, longer than py_worker_timeout" in res.stdout


def test_a_worker_that_exits_is_an_error_naming_the_sample(tmp_path):
    res, _ = repro(tmp_path, "exits_at_six", timeout="")
    check_stopped(res)
    assert ("WorkerError: external_source 'src' (parallel): worker 1 (pid" in res.stdout or
            "WorkerError: external_source 'src' (parallel): worker 0 (pid" in res.stdout)
    assert (") exited with code 3 in the source's callback, on sample 6 (index 2 in the batch) of "
            "iteration 1, epoch 0" in res.stdout), res.stdout


def test_a_killed_worker_is_an_error_even_without_a_timeout(tmp_path):
    # No py_worker_timeout: the callback hangs; a timer kills the worker running a callback.
    kill = textwrap.dedent("""
    import signal, threading
    def kill_hung():
        pool = pipe._external.pool
        for w, pid in enumerate(pids):
            if pool._running(w) is not None:
                os.kill(pid, signal.SIGKILL)
    threading.Timer(1.0, kill_hung).start()
    """).replace("\n", "\n    ")
    res, took = repro(tmp_path, "hangs_at_five", timeout="", before=kill)
    check_stopped(res)
    assert (") was killed by signal SIGKILL in the source's callback, on sample 5 (index 1 in "
            "the batch) of iteration 1, epoch 0" in res.stdout), res.stdout
    assert took < 15


def slow_at_one(info):
    if info.idx_in_epoch == 1:
        time.sleep(0.8)
    return np.zeros(2, np.int32)


def two_batches():
    for _ in range(3):
        yield [np.zeros(2, np.int32)] * BATCH


def test_without_a_timeout_a_slow_callback_is_warned_about(monkeypatch):
    monkeypatch.setattr(workers, "SLOW_CALLBACK_WARNING", 0.2)

    @pipeline_def(batch_size=BATCH, num_threads=1, py_num_workers=1)
    def p():
        return fn.external_source(source=slow_at_one, batch=False, parallel=True, name="slow")

    pipe = p()
    pipe.build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.run()  # waits for the slow sample, and gets it
        pipe.run()
    texts = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(texts) == 1, texts
    assert texts[0].startswith("external_source 'slow' (parallel): its callback has run for ")
    assert ("in worker 0 (pid " in texts[0] and "on sample 1 (index 1 in the batch) of iteration "
            "0, epoch 0; run() waits for it (give the Pipeline py_worker_timeout=<seconds> to "
            "fail instead)" in texts[0])
    assert caught[0].filename == __file__  # points at the run() call


def test_py_worker_timeout_is_checked_and_leaves_normal_callbacks_alone():
    for bad in (0, -1.0, "5", True):
        with pytest.raises(ValueError, match=r"py_worker_timeout must be None \(no timeout\) or "
                                             r"a positive number of seconds, got"):
            pipeline_def(lambda: None, batch_size=1, py_worker_timeout=bad)()

    @pipeline_def(batch_size=BATCH, num_threads=1, py_num_workers=2, py_worker_timeout=5)
    def p():
        return fn.external_source(source=slow_at_one, batch=False, parallel=True)

    pipe = p()
    assert pipe.py_worker_timeout == 5.0
    for _ in range(3):
        (out,) = pipe.run()
        assert [np.array(x).tolist() for x in out] == [[0, 0]] * BATCH
    pipe.close()


def test_forkserver_workers_stay_while_idle():
    # A generator function has a worker of its own; the other one waits for tasks and used to
    # mistake the forkserver (its parent) for a dead pipeline after one idle second.
    @pipeline_def(batch_size=BATCH, num_threads=1, py_num_workers=2,
                  py_start_method="forkserver")
    def p():
        return fn.external_source(source=two_batches, batch=True, parallel=True)

    pipe = p()
    pipe.run()
    time.sleep(1.6)
    pipe.run()
    assert all(q.is_alive() for q in pipe._external.pool._procs)
    pipe.close()


def test_dropped_parallel_pipelines_free_their_shared_memory_and_descriptors_at_del():
    # Batches made ahead held views of the pool's chunks, whose finalizers (a global registry)
    # held the pool: every pipeline left its memfd chunks mapped and their descriptors open.
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import gc, os
        import numpy as np
        import stoker
        from stoker import fn
        gc.disable()
        def fds():
            return len(os.listdir("/proc/self/fd"))
        def mapped():
            return sum("stoker-source" in line for line in open("/proc/self/maps"))
        counts = []
        for k in range(6):
            @stoker.pipeline_def(batch_size=4, num_threads=2, device_id=None, py_num_workers=2)
            def pipe():
                return fn.external_source(lambda info: np.full(64, info.idx_in_epoch, np.int32),
                                          parallel=True, batch=False)
            p = pipe()
            for _ in range(3):
                p.run()
            del p
            counts.append((fds(), mapped()))
        print("COUNTS", counts)
        """)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = eval(done.stdout.split("COUNTS", 1)[1])
    assert counts[-1] == counts[1], counts  # (the first pipeline sets up multiprocessing's own)
    assert counts[-1][1] == 0, counts


def test_a_parallel_sources_queue_depth_has_the_pipelines_range():
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, device_id=None, py_num_workers=1)
    with pipe, pytest.raises(ValueError, match=r"prefetch_queue_depth must be at most 64, got "
                                               r"1000000 \(its range is \[1, 64\]\)"):
        fn.external_source(lambda info: np.zeros(2), parallel=True, batch=False,
                           prefetch_queue_depth=10**6)
