"""Threads the system refuses: every place a pipeline starts threads (the thread pool, the CPU
stage's lanes, a reader's I/O threads) turns the refusal into a RuntimeError naming the thread,
the number asked for and the system's reason, and joins the threads it had started. Before,
build() hung in the executor's constructor (condition variables destroyed under waiting
workers, holding the GIL, Ctrl-C ignored), and a reader's refused I/O thread aborted the
process.

Each case runs in a subprocess whose address space is capped (RLIMIT_AS, as `ulimit -v`), so a
thread's stack cannot be mapped past the cap, with a timeout: a hang fails the test."""

import os
import subprocess
import sys
import textwrap

import pytest

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_AS and /proc/self/task are Linux's", allow_module_level=True)

HELPERS = """
import collections, os, re, resource
import stoker
from stoker import fn, pipeline_def

def address_space():
    return int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")

def threads():
    return len(os.listdir("/proc/self/task"))

def capped(mb, call):
    # call() with the address space capped at what the process holds now plus `mb` MiB: the
    # error's text, or "ok".
    resource.setrlimit(resource.RLIMIT_AS, (address_space() + (mb << 20), resource.RLIM_INFINITY))
    try:
        call()
        return "ok"
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

def refused(text):
    # The part of a refusal's message that names whose threads they were.
    m = re.search(r"cannot start thread \\d+ of \\d+ for ([^:]*): Resource temporarily "
                  r"unavailable", text)
    return m.group(1) if m else None
"""


def _run(code, timeout=60):
    env = dict(os.environ)
    env.pop("STOKER_TRACE", None)
    r = subprocess.run([sys.executable, "-c", HELPERS + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=timeout, env=env)
    return r.returncode, r.stdout + r.stderr


def test_pool_threads_refused_under_ulimit_v_are_an_error_not_a_hang(address_space_cap):
    # The repro: 400 threads under `ulimit -v 3000000` (each stack takes 8 MiB of
    # address space, so some 350 fit).
    rc, out = _run("""
        resource.setrlimit(resource.RLIMIT_AS, (3_000_000 * 1024, 3_000_000 * 1024))
        base = threads()

        @pipeline_def(batch_size=2, num_threads=400, device_id=None)
        def pipe():
            return fn.random.uniform(shape=[2])

        p = pipe()
        try:
            p.build()
            print("built")
        except RuntimeError as e:
            print("ERROR", e)
        del p
        print("threads after", threads() - base)

        @pipeline_def(batch_size=2, num_threads=4, device_id=None)
        def small():
            return fn.random.uniform(shape=[2])

        q = small()
        q.build()
        print("then", len(q.run()[0]), "samples")
    """)
    assert rc == 0, out
    assert "ERROR cannot start thread " in out, out
    assert "of 400 for the pipeline's thread pool (num_threads): Resource temporarily " \
           "unavailable" in out, out
    assert "threads after 0" in out, out  # every started worker was joined
    assert "then 2 samples" in out, out


def test_num_threads_beyond_its_range_is_refused_before_any_thread_starts():
    # The other repro (num_threads=40000): beyond the documented range, a ValueError
    # naming the option, the value and the range, at construction (the C++ builder refuses it
    # too, for serialised pipelines: test_limits.py).
    rc, out = _run("""
        @pipeline_def(batch_size=2, num_threads=40000, device_id=None)
        def pipe():
            return fn.random.uniform(shape=[2])

        try:
            pipe().build()
        except ValueError as e:
            print("ERROR", e)
    """, timeout=30)
    assert rc == 0, out
    assert "ERROR num_threads must be at most 1024, got 40000 (its range is [1, 1024])" in out


def test_cpu_lanes_threads_refused_are_an_error_and_the_started_ones_joined(
        address_space_cap):
    # The CPU stage's two lanes start after the pool: a cap that leaves room for the pool's
    # workers and not for both lanes fails on a lane. Caps from 0 to 120 MiB over what the
    # process holds: every build either runs or fails with the refusal's error, no thread is
    # left behind, and some caps hit the lanes.
    rc, out = _run("""
        @pipeline_def(batch_size=2, num_threads=8, device_id=None, cpu_lanes=2,
                      prefetch_queue_depth=1)
        def pipe():
            return fn.random.uniform(shape=[2])

        base = threads()
        seen = collections.Counter()
        for mb in range(0, 120, 2):
            p = pipe()
            result = capped(mb, lambda: (p.build(), p.run()))
            seen["ok" if result == "ok" else refused(result) or result] += 1
            del p
            assert threads() == base, (mb, threads(), base)
        print(dict(seen))
    """)
    assert rc == 0, out
    seen = eval(out.strip().splitlines()[-1])
    assert set(seen) <= {"ok", "the pipeline's thread pool (num_threads)",
                         "the CPU stage's lanes"}, seen
    assert seen.get("the CPU stage's lanes", 0) >= 1, seen
    assert seen.get("ok", 0) >= 1, seen


def test_reader_io_threads_refused_are_an_error_and_the_started_ones_joined(tmp_path):
    # A reader starts its I/O threads at the first run: with the address space capped after
    # build(), some of its 64 start and the next is refused. The run fails naming the reader
    # and num_io_threads; the threads it had started (loading already) are joined. Before,
    # the refused thread aborted the process (joinable std::threads destroyed).
    for c in range(3):
        (tmp_path / f"c{c}").mkdir()
        (tmp_path / f"c{c}" / "x.jpg").write_bytes(bytes(100))
    rc, out = _run(f"""
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def pipe():
            data, _ = fn.readers.file(file_root={str(tmp_path)!r}, num_io_threads=64)
            return data

        p = pipe()
        p.build()
        base = threads()
        print(capped(30, p.run))
        print("threads after", threads() - base)
    """)
    assert rc == 0, out
    assert "RuntimeError: Error in operator readers.file" in out, out
    assert "of 64 for the reader's I/O threads (num_io_threads): Resource temporarily " \
           "unavailable" in out, out
    # The CPU stage's thread ends with the failed run too: never more threads than before.
    after = int(out.split("threads after ")[1].split()[0])
    assert after <= 0, out
