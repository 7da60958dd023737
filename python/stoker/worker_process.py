"""The worker processes of parallel external sources (the pipeline's side: stoker.workers).

A worker runs the sources' callbacks and writes what they return into shared-memory chunks
(memfd files the pipeline creates and passes over a Unix socket, so every start method sees the
same memory); only the chunk number and each array's offset, shape and type go back through
the result pipe. A chunk belongs to one task at a time, so no two processes write it at once; a
worker grows a chunk (ftruncate) when the samples do not fit, and the pipeline maps the new
size from the size in the result.

Tasks (tuples, from the pool's shared queue or the worker's own pipe):
  ("samples", task, source, chunk, epoch, iteration, first, count, batch_size): per-sample
      callbacks for samples first .. first + count - 1 of the iteration (indices in the batch)
  ("batch", task, source, chunk, epoch, iteration): a batch callback (or the next batch of an
      iterable, which always runs in one worker, its own)
Results: (task, chunk, chunk_size, "ok", arrays, seconds) where arrays holds per sample a tuple
of (offset, shape, dtype) per output; (task, chunk, 0, "stop", None, seconds) at the end of the
data; (task, chunk, 0, "error", (pickled exception or None, text, traceback, index), seconds).

While a callback runs, the worker's slot of the shared `status` array says which (task, sample,
time it started): the pipeline reads it to name the worker and the sample when a callback
outlasts py_worker_timeout or a worker dies, without a message per sample.
"""

import mmap
import os
import pickle
import signal
import socket
import sys
import time
import traceback
from multiprocessing import connection

import numpy as np

ALIGN = 64  # each array starts on a cache line (SIMD loads in the operators that read it)


def _align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


class SampleInfo:
    """What a per-sample callback receives (batch=False): the sample's index in the epoch and in
    its batch, the iteration (batch) index in the epoch and the epoch's index."""

    __slots__ = ("idx_in_epoch", "idx_in_batch", "iteration", "epoch_idx")

    def __init__(self, idx_in_epoch, idx_in_batch, iteration, epoch_idx):
        self.idx_in_epoch = idx_in_epoch
        self.idx_in_batch = idx_in_batch
        self.iteration = iteration
        self.epoch_idx = epoch_idx

    def __repr__(self):
        return (f"SampleInfo(idx_in_epoch={self.idx_in_epoch}, idx_in_batch={self.idx_in_batch}, "
                f"iteration={self.iteration}, epoch_idx={self.epoch_idx})")


class BatchInfo:
    """What a batch callback receives with batch_info=True: the iteration (batch) index in the
    epoch and the epoch's index."""

    __slots__ = ("iteration", "epoch_idx")

    def __init__(self, iteration, epoch_idx):
        self.iteration = iteration
        self.epoch_idx = epoch_idx

    def __repr__(self):
        return f"BatchInfo(iteration={self.iteration}, epoch_idx={self.epoch_idx})"


class SourceSpec:
    """What a worker needs of a source: the callable or iterable and how to call it."""

    def __init__(self, name, source, kind, num_outputs, batch_info, cycle=False):
        self.name = name
        self.cycle = cycle  # an iterable starts again at its end instead of stopping
        self.source = source
        self.kind = kind  # "sample", "batch" (callable), "iterable" or "generator"
        self.num_outputs = num_outputs  # None: one output, not wrapped in a tuple
        self.batch_info = batch_info  # a batch callable: 0 (no argument), 1 (iteration), 2


def as_sample(x, where):
    """`x` as a numpy array a chunk can take (host memory, not objects)."""
    if isinstance(x, np.ndarray):
        a = x
    else:
        dev = getattr(x, "__dlpack_device__", None)
        if dev is not None and dev()[0] not in (1, 3):
            raise TypeError(f"{where} is on a device (DLPack device type {dev()[0]}); a "
                            f"parallel source returns CPU data")
        if getattr(x, "__cuda_array_interface__", None) is not None:
            raise TypeError(f"{where} is GPU data; a parallel source returns CPU data")
        a = np.asarray(x)
    if a.dtype.hasobject or a.dtype.kind not in "biufc":
        raise TypeError(f"{where}: expected an array of numbers, got "
                        f"{type(x).__name__} of dtype {a.dtype}")
    return a


def split_outputs(value, spec, where):
    """One sample's value as a tuple with an array per output."""
    if spec.num_outputs is None:
        return (as_sample(value, where),)
    if not isinstance(value, (tuple, list)) or len(value) != spec.num_outputs:
        got = f"{len(value)} values" if isinstance(value, (tuple, list)) else \
            type(value).__name__
        raise TypeError(f"{where}: the source has num_outputs={spec.num_outputs}, so it returns "
                        f"a tuple of {spec.num_outputs} arrays; got {got}")
    return tuple(as_sample(v, f"{where}, output {o}") for o, v in enumerate(value))


def batch_samples(value, spec, where):
    """A batch callback's value (a list of samples or an array with the batch first, or with
    num_outputs a tuple of those) as a list of per-sample tuples."""
    outputs = (value,) if spec.num_outputs is None else value
    if spec.num_outputs is not None and (not isinstance(value, (tuple, list)) or
                                         len(value) != spec.num_outputs):
        raise TypeError(f"{where}: the source has num_outputs={spec.num_outputs}, so it returns "
                        f"a tuple of {spec.num_outputs} batches")
    columns = []
    for o, batch in enumerate(outputs):
        what = where if spec.num_outputs is None else f"{where}, output {o}"
        if isinstance(batch, (list, tuple)):
            columns.append([as_sample(s, f"{what}, sample {i}") for i, s in enumerate(batch)])
        else:
            arr = as_sample(batch, what)
            if arr.ndim == 0:
                raise TypeError(f"{what}: a batch is a list of samples or an array whose first "
                                f"axis is the batch; got a scalar")
            columns.append(list(arr))
    sizes = {len(c) for c in columns}
    if len(sizes) > 1:
        raise ValueError(f"{where}: the outputs have different batch sizes {sorted(sizes)}")
    return list(zip(*columns))


class Chunks:
    """The worker's mappings of the pipeline's chunks, by number."""

    def __init__(self, sock):
        self.sock = sock
        self.fds = {}
        self.maps = {}

    def _receive_until(self, chunk):
        while chunk not in self.fds:
            msg, fds, _, _ = socket.recv_fds(self.sock, 16, 1)
            if not msg:
                raise EOFError("the pipeline closed the chunk socket")
            self.fds[int.from_bytes(msg, "little")] = fds[0]

    def write(self, chunk, samples):
        """Writes `samples` (tuples of arrays) into `chunk`; their (offset, shape, dtype) and the
        chunk's size."""
        self._receive_until(chunk)
        layout, end = [], 0
        for sample in samples:
            entry = []
            for a in sample:
                entry.append((end, a.shape, a.dtype.str))
                end = _align(end + a.nbytes)
            layout.append(tuple(entry))
        fd = self.fds[chunk]
        size = os.fstat(fd).st_size
        if end > size:  # grow by a quarter more than needed, so that growing is rare
            size = _align(end + end // 4)
            os.ftruncate(fd, size)
        m = self.maps.get(chunk)
        if m is None or len(m) < size:
            m = self.maps[chunk] = mmap.mmap(fd, size)
        buf = np.frombuffer(m, np.uint8, count=size)
        for sample, entry in zip(samples, layout):
            for a, (offset, _, _) in zip(sample, entry):
                if a.nbytes:
                    dst = buf[offset:offset + a.nbytes].view(a.dtype).reshape(a.shape)
                    np.copyto(dst, a, casting="no")
        del buf
        return layout, size


class Iterators:
    """The iterables and generator functions this worker runs, one iterator per epoch."""

    def __init__(self):
        self.state = {}  # source -> (epoch, iterator or None once ended)

    def next(self, s, spec, epoch):
        current = self.state.get(s)
        if current is None or current[0] != epoch:
            it = iter(spec.source() if spec.kind == "generator" else spec.source)
            current = self.state[s] = (epoch, it)
        if current[1] is None:
            raise StopIteration
        try:
            return next(current[1])
        except StopIteration:
            if spec.cycle:
                self.state[s] = (epoch, iter(spec.source() if spec.kind == "generator"
                                             else spec.source))
                return next(self.state[s][1])
            self.state[s] = (epoch, None)  # prefetched tasks past the end stop too
            raise


class Progress:
    """This worker's slot of the pipeline's status array: (task, sample index in the batch or -1
    for a batch call, CLOCK_MONOTONIC when the call started); task 0: no callback running. The
    task is written last and cleared first, so a reader that sees it sees its sample."""

    FIELDS = 3

    def __init__(self, status, worker_id):
        self.status = status
        self.base = worker_id * self.FIELDS

    def begin(self, task, sample):
        if self.status is not None:
            b = self.base
            self.status[b] = 0
            self.status[b + 1] = sample
            self.status[b + 2] = time.monotonic()
            self.status[b] = task

    def end(self):
        if self.status is not None:
            self.status[self.base] = 0


_NO_PROGRESS = Progress(None, 0)


def run_task(task, specs, chunks, iterators, progress=_NO_PROGRESS):
    kind, task_id, s, chunk = task[:4]
    spec = specs[s]
    start = time.perf_counter()
    index = None
    try:
        if kind == "samples":
            epoch, iteration, first, count, batch_size = task[4:]
            samples = []
            for i in range(first, first + count):
                index = i
                info = SampleInfo(iteration * batch_size + i, i, iteration, epoch)
                where = f"external_source '{spec.name}': sample {i} of iteration {iteration}"
                progress.begin(task_id, i)
                value = spec.source(info)
                progress.end()
                samples.append(split_outputs(value, spec, where))
        else:
            epoch, iteration = task[4:]
            progress.begin(task_id, -1)
            if spec.kind in ("iterable", "generator"):
                value = iterators.next(s, spec, epoch)
            elif spec.batch_info == 2:
                value = spec.source(BatchInfo(iteration, epoch))
            elif spec.batch_info == 1:
                value = spec.source(iteration)
            else:
                value = spec.source()
            progress.end()
            samples = batch_samples(value, spec, f"external_source '{spec.name}': the batch "
                                                 f"of iteration {iteration}")
        layout, size = chunks.write(chunk, samples)
        return (task_id, chunk, size, "ok", layout, time.perf_counter() - start)
    except StopIteration:
        progress.end()
        return (task_id, chunk, 0, "stop", None, time.perf_counter() - start)
    except Exception as e:  # reported to the pipeline, which raises it in run()
        progress.end()
        tb = traceback.format_exc()
        try:
            exc = pickle.dumps(e)
            pickle.loads(exc)
        except Exception:
            exc = None
        return (task_id, chunk, 0, "error", (exc, f"{type(e).__name__}: {e}", tb, index),
                time.perf_counter() - start)


def _die_with_parent():
    """Linux: the kernel ends this worker when the pipeline's process ends, however it ends."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(worker_id, sources, loads, shared, shared_lock, own, results, sock, parent,
         status=None):
    """A worker's loop. `sources`: SourceSpecs, or their pickled bytes with `loads` (spawn);
    `shared`: the tasks any worker may take (read under `shared_lock`); `own`: tasks for this
    worker only (iterables) and None to stop; `results`: the pipe back; `status`: the shared
    array of Progress slots."""
    _die_with_parent()
    # The process whose end ends this worker: the pipeline's (fork, spawn) or, with forkserver,
    # the server, which ends with the pipeline's process. (The pipeline's pid alone would make
    # every forkserver worker quit at its first idle second.) Reparented at once: it is gone.
    watched = os.getppid()
    if watched == 1:
        watched = parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the training process's to handle
    try:
        specs = loads(sources) if loads is not None else sources
    except Exception as e:
        results.send((None, None, 0, "error",
                      (None, f"the worker could not unpickle the sources: "
                             f"{type(e).__name__}: {e}", traceback.format_exc(), None), 0.0))
        return
    chunks, iterators = Chunks(sock), Iterators()
    progress = Progress(status, worker_id)
    while True:
        ready = connection.wait([own, shared], timeout=1.0)
        if not ready:
            if os.getppid() != watched:
                return
            continue
        if own in ready:
            task = own.recv()
        else:
            with shared_lock:
                if not shared.poll():
                    continue  # another worker took it
                task = shared.recv()
        if task is None:
            return
        results.send(run_task(task, specs, chunks, iterators, progress))
        sys.stdout.flush()
