"""Parallel external sources (fn.external_source(parallel=True)): callbacks run in worker
processes and hand their arrays over through shared memory. Checked against the same source run
in this process (and against DALI's parallel external source), for every kind of source, start
method, epoch end, error, crash, checkpoint and the memory's reuse."""

import os
import signal

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.workers import WorkerError

BATCH = 4


class Samples:
    """A per-sample callable with state set at construction (as DALI's examples write them):
    two outputs of varying shape; the epoch ends after `iterations` batches."""

    def __init__(self, iterations=3, scale=1):
        self.iterations = iterations
        self.scale = scale

    def __call__(self, info):
        if info.iteration >= self.iterations:
            raise StopIteration
        n = 1 + (info.idx_in_epoch * 7) % 5
        image = np.arange(n * 3, dtype=np.float32).reshape(n, 3) * self.scale + info.idx_in_epoch
        label = np.array([info.idx_in_epoch, info.idx_in_batch, info.iteration, info.epoch_idx],
                         np.int64)
        return image, label


def batch_callback(info):
    if info.iteration >= 2:
        raise StopIteration
    return np.full((BATCH, 2), info.iteration * 10 + info.epoch_idx, np.int32)


def batches_generator():
    for i in range(3):
        yield [np.full((i + 1,), i, np.uint8) for _ in range(BATCH)]


def fails_at_five(info):
    if info.idx_in_epoch == 5:
        raise ValueError(f"bad sample {info.idx_in_epoch}")
    return np.zeros(2, np.float32)


class Unpicklable(Exception):
    def __init__(self, handle):
        super().__init__("holds a handle")
        self.handle = handle

    def __reduce__(self):
        raise TypeError("no pickling")


def fails_unpicklably(info):
    raise Unpicklable(lambda: None)


def crashes(info):
    if info.idx_in_epoch == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return np.zeros(1, np.uint8)


def big_samples(info):
    return np.full((3 << 20,), info.idx_in_epoch % 256, np.uint8)  # 3 MiB: past the hint


def returns_text(info):
    return "not an array"


def pipe_of(source, parallel, workers=2, start="fork", num_outputs=2, batch=False, **es_args):
    @pipeline_def(batch_size=BATCH, num_threads=1, py_num_workers=workers, py_start_method=start)
    def p():
        out = fn.external_source(source, num_outputs=num_outputs, batch=batch,
                                 parallel=parallel, **es_args)
        return out
    return p()


def epochs(pipe, count):
    """Per epoch, the batches (tuples of lists of numpy arrays) until StopIteration."""
    out = []
    for _ in range(count):
        batches = []
        try:
            while True:
                batches.append(tuple([np.array(x) for x in b] for b in pipe.run()))
        except StopIteration:
            pass
        out.append(batches)
        pipe.reset()
    return out


def assert_same(a, b):
    assert len(a) == len(b)
    for ea, eb in zip(a, b):
        assert len(ea) == len(eb)
        for ba, bb in zip(ea, eb):
            for oa, ob in zip(ba, bb):
                for x, y in zip(oa, ob):
                    np.testing.assert_array_equal(x, y)
                    assert x.dtype == y.dtype


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_per_sample_source_gives_what_it_gives_in_process(start):
    serial = epochs(pipe_of(Samples(), parallel=False), 2)
    parallel = epochs(pipe_of(Samples(), parallel=True, workers=3, start=start), 2)
    assert [len(e) for e in serial] == [3, 3]
    assert_same(serial, parallel)
    # SampleInfo: idx_in_epoch, idx_in_batch, iteration, epoch_idx (the second epoch is 1)
    labels = parallel[1][2][1]
    assert [list(x) for x in labels] == [[8 + i, i, 2, 1] for i in range(BATCH)]


def test_batch_callable_gets_batch_info_and_its_batches_stay_in_order():
    pipe = pipe_of(batch_callback, parallel=True, num_outputs=None, batch=True, batch_info=True,
                   prefetch_queue_depth=3)
    got = epochs(pipe, 2)
    assert [[int(b[0][0][0]) for b in e] for e in got] == [[0, 10], [1, 11]]


def test_iterable_and_generator_function_run_in_a_worker_of_their_own():
    data = [[np.full((2,), i * 4 + k, np.int16) for k in range(BATCH)] for i in range(3)]
    pipe = pipe_of(data, parallel=True, num_outputs=None, batch=True, prefetch_queue_depth=2)
    got = epochs(pipe, 2)  # each epoch iterates the list again
    for e in got:
        assert [[int(s[0]) for s in b[0]] for b in e] == [[i * 4 + k for k in range(BATCH)]
                                                          for i in range(3)]
    gen = pipe_of(batches_generator, parallel=True, num_outputs=None, batch=True)
    assert [[b[0][0].shape for b in e] for e in epochs(gen, 2)] == [[(1,), (2,), (3,)]] * 2
    quiet = pipe_of(batches_generator, parallel=True, num_outputs=None, batch=True, cycle="quiet")
    first = [int(quiet.run()[0].as_array()[0][0]) for _ in range(7)]
    assert first == [0, 1, 2, 0, 1, 2, 0]


def test_the_pipeline_reads_the_workers_memory_without_copying():
    pipe = pipe_of(Samples(), parallel=True)
    image, label = pipe.run()
    pool = pipe._external.pool
    spans = []
    for st in pool.states:
        for c in st.chunks:
            base = np.frombuffer(c.map, np.uint8).ctypes.data
            spans.append((base, base + len(c.map)))
    for batch in (image, label):
        for i in range(BATCH):
            address = np.asarray(batch[i]).ctypes.data
            assert any(lo <= address < hi for lo, hi in spans), "a sample was copied"


def test_chunks_are_reused_and_grow_to_fit():
    pipe = pipe_of(big_samples, parallel=True, num_outputs=None, bytes_per_sample_hint=1024)
    for i in range(12):
        (out,) = pipe.run()
        assert np.asarray(out[1])[0] == (i * BATCH + 1) % 256
        assert out[1].shape() == [3 << 20]
    s = pipe.stats()["external_sources"]
    name = next(iter(s))
    assert s[name]["batches"] >= 12
    # pipeline queue + prefetched + the one in hand, each split in 4 tasks: not one per batch
    assert s[name]["chunks"] <= 4 * 6
    assert all(c >= 3 << 20 for c in pipe.external_source_shm_statistics()["capacities"])


def test_the_workers_exception_reaches_run_with_its_traceback():
    pipe = pipe_of(fails_at_five, parallel=True, num_outputs=None)
    with pytest.raises(ValueError, match="bad sample 5") as e:
        pipe.run()  # the first run prepares two batches (the pipeline's queue)
    note = "\n".join(getattr(e.value, "__notes__", []))
    assert "sample 5 (index 1 in the batch) of iteration 1, epoch 0" in note
    assert "Worker traceback" in note and "fails_at_five" in note


def test_an_exception_that_cannot_be_pickled_is_reported_as_text():
    pipe = pipe_of(fails_unpicklably, parallel=True, num_outputs=None)
    with pytest.raises(RuntimeError, match="Unpicklable: holds a handle") as e:
        pipe.run()
    assert "fails_unpicklably" in str(e.value)


def test_a_crashed_worker_is_an_error_not_a_hang():
    pipe = pipe_of(crashes, parallel=True, num_outputs=None, workers=2)
    with pytest.raises(WorkerError, match=r"worker \d \(pid \d+\) was killed by signal SIGKILL"):
        for _ in range(3):
            pipe.run()


def test_what_a_source_returns_is_checked():
    pipe = pipe_of(returns_text, parallel=True, num_outputs=None)
    with pytest.raises(TypeError, match=r"external_source '.*': sample 0 of iteration 0: "
                                        r"expected an array of numbers"):
        pipe.run()
    pipe = pipe_of(lambda info: np.zeros(1), parallel=True, num_outputs=2)
    with pytest.raises(TypeError, match="num_outputs=2, so it returns a tuple of 2 arrays"):
        pipe.run()


def test_spawn_needs_a_picklable_source():
    pipe = pipe_of(lambda info: np.zeros(1), parallel=True, num_outputs=None, start="spawn")
    with pytest.raises(ValueError, match="py_callback_pickler=cloudpickle"):
        pipe.build()
    cloudpickle = pytest.importorskip("cloudpickle")

    @pipeline_def(batch_size=BATCH, num_threads=1, py_num_workers=1, py_start_method="spawn",
                  py_callback_pickler=cloudpickle)
    def p():
        return fn.external_source(lambda info: np.full(1, info.idx_in_epoch), parallel=True)
    (out,) = p().run()
    assert [int(np.asarray(x)[0]) for x in out] == [0, 1, 2, 3]


def test_a_checkpoint_holds_the_sources_place():
    pipe = pipe_of(Samples(iterations=4), parallel=True)
    epochs(pipe, 1)  # the first epoch, then reset
    pipe.run()
    saved = pipe.checkpoint()
    assert "external_sources epoch 1 iteration 1" in saved
    rest = [pipe.run() for _ in range(2)]
    resumed = pipe_of(Samples(iterations=4), parallel=True)
    resumed.options.checkpoint = saved
    again = [resumed.run() for _ in range(2)]
    for a, b in zip(rest, again):
        for x, y in zip(a[1], b[1]):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert list(np.asarray(again[0][1][0])) == [4, 0, 1, 1]  # epoch 1, iteration 1


def test_prefetching_computes_batches_ahead(tmp_path):
    pipe = pipe_of(MarksFiles(str(tmp_path)), parallel=True, num_outputs=None,
                   prefetch_queue_depth=3)
    pipe.run()
    deadline = __import__("time").monotonic() + 10
    # the pipeline's queue (2 batches) and 3 more ahead
    while len(os.listdir(tmp_path)) < 5 * BATCH and __import__("time").monotonic() < deadline:
        __import__("time").sleep(0.01)
    assert sorted(int(n) for n in os.listdir(tmp_path)) == list(range(5 * BATCH))


class MarksFiles:
    def __init__(self, folder):
        self.folder = folder

    def __call__(self, info):
        open(os.path.join(self.folder, str(info.idx_in_epoch)), "w").close()
        return np.zeros(1, np.uint8)


def test_zero_workers_run_the_source_in_this_process():
    pipe = pipe_of(Samples(), parallel=True, workers=0)
    assert_same(epochs(pipe_of(Samples(), parallel=False), 1), epochs(pipe, 1))
    assert pipe._external.pool is None


def test_the_workers_end_with_the_pipeline():
    pipe = pipe_of(Samples(), parallel=True, workers=2)
    pipe.run()
    pids = pipe._external.pool.pids
    pipe.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="py_num_workers must be a positive"):
        pipe_of(Samples(), parallel=True, workers=-1).build()
    with pytest.raises(ValueError, match="py_start_method must be one of"):
        pipe_of(Samples(), parallel=True, start="thread").build()
    with pytest.raises(ValueError, match="prefetch_queue_depth must be at least 1"):
        pipe_of(Samples(), parallel=True, prefetch_queue_depth=0)
    with pytest.raises(TypeError, match="called with one argument"):
        pipe_of(lambda: np.zeros(1), parallel=True, num_outputs=None)
    with pytest.raises(ValueError, match="py_callback_pickler applies to"):
        pipeline_def(lambda: None, batch_size=1, py_callback_pickler=object())()
    assert types.SampleInfo(1, 2, 3, 4).iteration == 3 and types.BatchInfo(5, 6).epoch_idx == 6


def test_dali_gives_the_same_batches():
    dali = pytest.importorskip("nvidia.dali")
    import nvidia.dali.fn as dfn

    # spawn: DALI refuses to fork once CUDA is initialized in the process (an earlier GPU test)
    @dali.pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, py_num_workers=2,
                       py_start_method="spawn")
    def dp():
        return tuple(dfn.external_source(Samples(), num_outputs=2, batch=False, parallel=True))

    pipe = dp()
    pipe.build()
    theirs = []
    for _ in range(2):
        batches = []
        try:
            while True:
                batches.append(tuple([np.array(t) for t in out] for out in pipe.run()))
        except StopIteration:
            pipe.reset()
        theirs.append(batches)
    ours = epochs(pipe_of(Samples(), parallel=True), 2)
    assert_same(theirs, ours)


def test_the_report_shows_the_workers_time():
    pipe = pipe_of(Samples(iterations=10), parallel=True)
    for _ in range(4):
        pipe.run()
    text = pipe.report()
    assert "parallel source" in text and "external_source_" in text
    s = pipe.stats()["external_sources"]
    assert list(s.values())[0]["worker_seconds"] > 0


def test_a_gpu_source_uploads_what_the_workers_wrote():
    from stoker import _stoker

    if not _stoker.cuda_available():
        pytest.skip("no GPU: device='gpu' sources run on the GPU machine")

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=0, py_num_workers=2)
    def p():
        images, labels = fn.external_source(Samples(), num_outputs=2, batch=False,
                                            parallel=True, device="gpu")
        return images, labels
    serial = epochs(pipe_of(Samples(), parallel=False), 1)
    got = []
    pipe = p()
    try:
        while True:
            got.append(tuple([np.array(x) for x in b.as_cpu()] for b in pipe.run()))
    except StopIteration:
        pass
    assert_same(serial, [got])
