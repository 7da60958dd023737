"""Pipelines with enable_conditionals=True are freed at `del`, as plain pipelines are: nothing of
the conditionals' tracing (the `if` levels, their splits, the converted functions) holds the
pipeline in a reference cycle that only the garbage collector would break, keeping the native
pipeline's threads alive until it runs."""

import gc
import os
import threading
import weakref

import numpy as np

from stoker import Pipeline, fn, pipeline_def

BATCH = 4


def index(info):
    return np.array(info.idx_in_batch, np.int32)


def helper(x):  # user code called from the pipeline: converted too
    if x > 1:
        return x * 2
    return x


@pipeline_def(enable_conditionals=True, batch_size=BATCH, num_threads=2)
def branches():
    x = fn.external_source(source=index, batch=False)
    a, b = x > 0, x < 3
    if a and not b or x == 2:
        y = helper(x) + 1
        if x > 2:
            y = y * 3
    else:
        y = x - 1
    return y, (x if a else y), a or b


@pipeline_def(enable_conditionals=True, batch_size=BATCH, num_threads=2, debug=True)
def branches_in_debug_mode():
    x = fn.external_source(source=index, batch=False)
    if x > 1:
        x = x + 10
    return x


class Subclass(Pipeline):
    def __init__(self):
        super().__init__(batch_size=BATCH, num_threads=2, enable_conditionals=True)

    def define_graph(self):
        x = fn.random.uniform(range=(0, 1))
        if x > 0.5:
            x = x + 1
        return x


def threads():
    """Python threads and the process's native threads (stoker's workers are not Python's)."""
    return threading.active_count(), len(os.listdir("/proc/self/task"))


def test_conditional_pipelines_are_freed_at_del_without_the_collector():
    makers = [branches, branches_in_debug_mode, Subclass]
    for make in makers:  # anything built once per process (the converted code) is built now
        pipe = make()
        pipe.run()
        del pipe
    before = threads()
    gc.collect()
    gc.disable()
    try:
        for k in range(50):
            pipe = makers[k % len(makers)]()
            pipe.run()
            pipe.run()
            ref = weakref.ref(pipe)
            del pipe
            assert ref() is None, f"{makers[k % len(makers)].__name__}: alive after del"
        after = threads()
    finally:
        gc.enable()
    assert after[0] <= before[0] and after[1] <= before[1], (before, after)
