"""cpu_affinity: every thread a pipeline starts runs on the given cores (so the training thread
can keep a core of its own); the caller keeps its cores; bad lists are refused by name."""
import json
import os
import threading

import numpy as np
import pytest

import stoker
from stoker import fn

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"),
                                reason="CPU affinity needs Linux (os.sched_getaffinity)")


def _thread_ids():
    return {int(t) for t in os.listdir("/proc/self/task")}


def _pipe(root, **kw):
    pipe = stoker.Pipeline(batch_size=4, num_threads=3, seed=5, **kw)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True)
        pipe.set_outputs(fn.resize(fn.decoders.image(jpegs), size=(16, 16)), labels)
    return pipe


def _started_threads_cores(root, **kw):
    before = _thread_ids()
    pipe = _pipe(root, **kw)
    batches = [[np.asarray(o.as_array()).copy() for o in pipe.run()] for _ in range(3)]
    cores = {t: os.sched_getaffinity(t) for t in _thread_ids() - before}
    pipe.close()
    return cores, batches


def test_every_thread_the_pipeline_starts_runs_on_the_given_cores(jpeg_folder):
    mine = os.sched_getaffinity(0)
    core = max(mine)
    cores, pinned = _started_threads_cores(jpeg_folder, cpu_affinity=[core])
    assert len(cores) >= 3  # the producer, two pool workers, the reader's I/O threads
    assert all(c == {core} for c in cores.values()), cores
    assert os.sched_getaffinity(0) == mine  # the caller keeps its own cores
    _, free = _started_threads_cores(jpeg_folder)
    for a, b in zip(pinned, free):  # where threads run never changes what they make
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_pinned_training_thread_and_the_pipeline_on_the_other_cores(jpeg_folder):
    """The recommended set-up: the training thread on one core, the pipeline on the rest;
    threads the pipeline starts do not inherit the training thread's core."""
    all_cores = sorted(os.sched_getaffinity(0))
    result = {}

    def training_thread():
        os.sched_setaffinity(0, {all_cores[0]})  # this thread only
        result["cores"], _ = _started_threads_cores(jpeg_folder, cpu_affinity=all_cores[1:])
        result["mine"] = os.sched_getaffinity(0)

    t = threading.Thread(target=training_thread)
    t.start()
    t.join()
    assert result["mine"] == {all_cores[0]}
    assert all(c == set(all_cores[1:]) for c in result["cores"].values()), result["cores"]
    assert os.sched_getaffinity(0) == set(all_cores)  # other threads untouched


@pytest.mark.parametrize("bad", ["0-3", 3, [], [1.5], [-1], [True]])
def test_lists_that_are_not_core_numbers_are_refused(bad):
    with pytest.raises(ValueError, match="cpu_affinity must be"):
        stoker.Pipeline(batch_size=1, cpu_affinity=bad)


def test_a_core_the_machine_does_not_have_is_refused_at_build(jpeg_folder):
    pipe = _pipe(jpeg_folder, cpu_affinity=[0, 99999])
    with pytest.raises(ValueError, match=r"cpu_affinity: core 99999 does not exist \(this "
                                         r"machine's cores are 0-\d+\)"):
        pipe.build()
    assert os.sched_getaffinity(0)  # the caller's cores are back


def test_serialize_keeps_the_cores_and_deserialize_can_change_them(jpeg_folder):
    core = max(os.sched_getaffinity(0))
    pipe = _pipe(jpeg_folder, cpu_affinity=range(core, core + 1))
    doc = json.loads(pipe.serialize())
    assert doc["options"]["cpu_affinity"] == [core]
    assert stoker.Pipeline.deserialize(pipe.serialize()).options.cpu_affinity == [core]
    again = stoker.Pipeline.deserialize(pipe.serialize(), cpu_affinity=None)
    assert again.options.cpu_affinity == []
    assert json.loads(_pipe(jpeg_folder).serialize())["options"]["cpu_affinity"] == []
