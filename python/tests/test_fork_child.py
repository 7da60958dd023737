"""A child process forked after stoker started (a torch DataLoader worker, multiprocessing's
"fork") may free the pipelines it inherited — garbage collected there, in a reference cycle —
without waiting for threads that run only in the parent: it used to hang or crash."""

import os
import subprocess
import sys

import pytest

_RUN = r"""
import gc, os, sys, numpy as np, stoker
from stoker import fn

gc.disable()  # the pipeline below is freed by the child's collection, not the parent's


def make():
    p = stoker.Pipeline(batch_size=2, num_threads=3, prefetch_queue_depth=2)
    with p:
        p.set_outputs(fn.external_source(name="x") + 1)
    p.build()
    for _ in range(3):
        p.feed_input("x", [np.zeros(3, np.uint8)] * 2)
    p.run()
    cycle = [p]
    cycle.append(cycle)  # only the cycle collector frees it


make()
pid = os.fork()
if pid == 0:
    gc.collect()
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child", "exit", os.WEXITSTATUS(status) if os.WIFEXITED(status) else
      "signal %d" % os.WTERMSIG(status))
gc.collect()  # and the parent still frees its own copy, joining its threads
print("parent done")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_frees_an_inherited_pipeline_without_hanging():
    r = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "child exit 0" in r.stdout and "parent done" in r.stdout, r.stdout + r.stderr[-2000:]
