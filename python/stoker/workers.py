"""Parallel external sources (``fn.external_source(..., parallel=True)``): a pool of worker
processes per pipeline runs the sources' callbacks ahead of the pipeline.

How the data travels: the pipeline creates shared-memory chunks (memfd files) and gives each
worker their file descriptors over a Unix socket; a task names the chunk its samples go to. The
worker writes each array into the chunk once; the pipeline maps the chunk and feeds views of it
to the native pipeline without copying (no pickling of the data, no copy in this process). A
chunk comes back to its source's free list when the last view of it is gone, which is when the
pipeline (and any batch that still shows the source's output) is done with the memory — so a
chunk is never overwritten while something reads it, however long a batch is kept.

Per-sample sources (batch=False) split each batch into tasks that any idle worker takes from a
shared queue; batch callables are one task per batch; an iterable or generator function runs in
one worker of its own (its state lives there), one batch after another. ``prefetch_queue_depth``
batches per source are computed ahead. Tasks are numbered and results matched to their batch,
so batches come out in order whatever order the workers finish in; at the end of an epoch
(StopIteration) or after reset() the tasks still running are discarded as they come back.

Start methods: "fork" (default, as DALI and torch's DataLoader on Linux), "spawn" and
"forkserver". With fork, a worker is a copy of this process: its callbacks must not use CUDA
(the workers are started before the pipeline's own threads; unlike DALI, a process that has
already initialised CUDA may still fork them, as torch's DataLoader does). With spawn and
forkserver the sources are pickled (``py_callback_pickler``: e.g. cloudpickle for lambdas).

A worker that dies (a crash, os._exit, the OOM killer) is an error in run() naming it and the
sample it was on, never a hang. A callback that never returns is stopped only with
``py_worker_timeout`` (seconds; DALI 2.4 has no such option and waits forever, which stays the
default): run() then raises WorkerTimeoutError naming the worker and the sample once one call
of a source has run longer than that. Without it, run() warns once after SLOW_CALLBACK_WARNING
seconds. Either error stops every worker (killed and reaped), so the pipeline closes at once.
"""

import collections
import gc
import math
import mmap
import multiprocessing
import os
import pickle
import signal
import socket
import time
import warnings
import weakref
from multiprocessing import connection

import numpy as np

from stoker._caller import user_stacklevel
from stoker import worker_process
from stoker.worker_process import Progress, SourceSpec

_START_METHODS = ("fork", "spawn", "forkserver")


class WorkerError(RuntimeError):
    """A worker process ended unexpectedly (crashed, was killed, or could not start)."""


class WorkerTimeoutError(WorkerError, TimeoutError):
    """A source's callback ran in a worker longer than the pipeline's py_worker_timeout."""


# Seconds one callback call may run before run(), waiting, warns that it may hang (once per
# pipeline; only without py_worker_timeout, which fails instead).
SLOW_CALLBACK_WARNING = 60.0


class _Chunk:
    __slots__ = ("id", "fd", "map", "size")

    def __init__(self, chunk_id, size):
        self.id = chunk_id
        self.fd = os.memfd_create(f"stoker-source-{chunk_id}", os.MFD_CLOEXEC)
        self.size = size
        os.ftruncate(self.fd, size)
        self.map = mmap.mmap(self.fd, size)

    def views(self, size, layout):
        """Arrays over the chunk at `layout` (per sample, per output: offset, shape, dtype),
        all views of one holder array, which is returned too."""
        if size > len(self.map):  # a worker grew the file
            self.map = mmap.mmap(self.fd, size)
        self.size = max(self.size, size)
        holder = np.frombuffer(self.map, np.uint8, count=size)
        samples = []
        for entry in layout:
            outs = []
            for offset, shape, dtype in entry:
                dt = np.dtype(dtype)
                n = dt.itemsize * math.prod(shape)
                outs.append(holder[offset:offset + n].view(dt).reshape(shape))
            samples.append(outs)
        return holder, samples


class _Batch:
    """One scheduled batch of a source: its tasks and what came back."""

    __slots__ = ("epoch", "iteration", "tasks", "done", "stop", "error")

    def __init__(self, epoch, iteration):
        self.epoch, self.iteration = epoch, iteration
        self.tasks = {}  # task id -> (chunk, first sample)
        self.done = {}  # task id -> samples (lists of arrays per output)
        self.stop = False
        self.error = None


class _SourceState:
    def __init__(self, index, es, depth, bytes_hint, dedicated):
        self.index = index
        self.es = es
        self.depth = depth
        self.bytes_hint = bytes_hint
        self.dedicated = dedicated  # worker index for iterables, else None
        self.free = []  # chunks ready for reuse
        self.chunks = []
        self.scheduled = collections.deque()  # _Batch, oldest first
        self.next_iteration = 0
        self.epoch = 0
        self.ended = False  # the epoch's data ended: nothing is scheduled until start_epoch
        self.wait_seconds = 0.0
        self.worker_seconds = 0.0
        self.batches = 0


class WorkerPool:
    """The worker processes of one pipeline and the state of its parallel sources."""

    def __init__(self, sources, batch_size, num_workers, start_method="fork", pickler=None,
                 timeout=None):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 1:
            raise ValueError(f"py_num_workers must be a positive number of processes, got "
                             f"{num_workers!r}")
        if start_method not in _START_METHODS:
            raise ValueError(f"py_start_method must be one of {', '.join(_START_METHODS)}, got "
                             f"{start_method!r}")
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.start_method = start_method
        self.timeout = timeout  # py_worker_timeout: seconds one callback call may run, or None
        # How often a waiting run() looks at the workers' progress.
        limit = SLOW_CALLBACK_WARNING if timeout is None else timeout
        self._tick = min(1.0, max(0.02, limit / 4))
        self._warned = False
        dedicated = [es for es in sources if es.kind in ("iterable", "generator")]
        if len(dedicated) > num_workers:
            raise ValueError(f"{len(dedicated)} parallel sources are iterables or generator "
                             f"functions, each needing a worker of its own, but py_num_workers is "
                             f"{num_workers}")
        self.states = []
        for i, es in enumerate(sources):
            own = dedicated.index(es) if es in dedicated else None
            depth = es.prefetch_queue_depth
            self.states.append(_SourceState(i, es, depth, es.bytes_per_sample_hint, own))
        self._by_name = {st.es.name: st for st in self.states}
        self._next_task = 0
        self._next_chunk = 0
        self._task_batch = {}  # task id -> [state, _Batch or None, chunk, (epoch, iteration)]
        self._returned = collections.deque()  # chunks whose views are gone (any thread)
        self._closed = False
        self._broken = None  # (error class, message) once the pool is stopped for good
        self._start(pickler)

    # -- processes ---------------------------------------------------------------------------
    def _start(self, pickler):
        ctx = multiprocessing.get_context(self.start_method)
        specs = [SourceSpec(st.es.name, st.es.source, st.es.kind, st.es.num_outputs,
                            st.es.batch_info_mode, st.es.cycle) for st in self.states]
        loads = None
        if self.start_method != "fork":
            specs, loads = _pickled(specs, pickler)
        self._shared_r, self._shared_w = ctx.Pipe(duplex=False)
        # Kept: a spawned worker opens the lock's semaphore by name after start() returns.
        self._shared_lock = shared_lock = ctx.Lock()
        # The workers' Progress slots: which callback each one runs, since when.
        self._status = ctx.RawArray("d", Progress.FIELDS * self.num_workers)
        self._procs, self._own, self._results, self._socks = [], [], [], []
        child_ends = []
        for w in range(self.num_workers):
            own_r, own_w = ctx.Pipe(duplex=False)
            res_r, res_w = ctx.Pipe(duplex=False)
            sock_parent, sock_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            proc = ctx.Process(
                target=worker_process.main, name=f"stoker-source-worker-{w}", daemon=True,
                args=(w, specs, loads, self._shared_r, shared_lock, own_r, res_w, sock_child,
                      os.getpid(), self._status))
            self._procs.append(proc)
            self._own.append(own_w)
            self._results.append(res_r)
            self._socks.append(sock_parent)
            child_ends += [own_r, res_w, sock_child]
        frozen = self.start_method == "fork"
        if frozen:  # the children's collector leaves this process's objects alone
            gc.freeze()
        try:
            with warnings.catch_warnings():
                # Python 3.12 warns about fork() in a process with threads (stoker's, torch's);
                # a worker only runs Python callbacks, like torch's DataLoader workers.
                warnings.simplefilter("ignore", DeprecationWarning)
                for p in self._procs:
                    p.start()
        except Exception as e:
            self.close()
            raise WorkerError(f"parallel external_source: could not start the workers "
                              f"({self.start_method}): {type(e).__name__}: {e}") from e
        finally:
            if frozen:
                gc.unfreeze()
            for end in child_ends:
                end.close()
        self._shared_r.close()

    def close(self, graceful=True):
        """Stops the workers (they also end with this process) and releases the chunks' files.
        graceful: each worker ends its task first (2 s at most); else they are killed now (a
        broken pool). Either way every worker is reaped (no zombies)."""
        if self._closed:
            return
        self._closed = True
        if graceful:
            for own in getattr(self, "_own", []):
                try:
                    own.send(None)
                except (OSError, ValueError):
                    pass
        deadline = time.monotonic() + (2.0 if graceful else 0.0)
        self._closed_pids = [p.pid for p in getattr(self, "_procs", [])]
        for p in getattr(self, "_procs", []):
            if p.pid is None:
                continue
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(1.0)
            if not p.is_alive():
                p.close()  # its sentinel's descriptor, now rather than when collected
        for c in list(getattr(self, "_own", [])) + list(getattr(self, "_results", [])) + \
                list(getattr(self, "_socks", [])):
            c.close()
        if hasattr(self, "_shared_w"):
            self._shared_w.close()
        for st in self.states:
            for chunk in st.chunks:
                os.close(chunk.fd)  # the mappings live on while views of them do
            # Batches made ahead and tasks in flight hold views of the chunks; each view's
            # finalizer (a global registry) holds this pool: dropped here, or neither the
            # views, the chunks' mappings (and their descriptors) nor the pool are ever freed.
            st.chunks, st.free = [], []
            st.scheduled.clear()
        self._task_batch.clear()
        self._returned.clear()

    @property
    def pids(self):
        if self._closed:  # (closed Process objects no longer answer)
            return list(getattr(self, "_closed_pids", []))
        return [p.pid for p in self._procs]

    # -- chunks ------------------------------------------------------------------------------
    def _chunk_for(self, st, samples):
        self._take_returned()
        if st.free:
            return st.free.pop()
        hint = st.bytes_hint or (1 << 20)
        size = max(mmap.PAGESIZE, worker_process._align(hint * samples))
        chunk = _Chunk(self._next_chunk, size)
        self._next_chunk += 1
        st.chunks.append(chunk)
        tag = chunk.id.to_bytes(8, "little")
        for sock in self._socks:  # every worker may take the task that uses it
            socket.send_fds(sock, [tag], [chunk.fd])
        return chunk

    def _give_back(self, st, chunk):
        """A finalizer's callback (any thread, any time): only queues the chunk."""
        self._returned.append((st, chunk))

    def _take_returned(self):
        while self._returned:
            st, chunk = self._returned.popleft()
            if not self._closed:
                st.free.append(chunk)

    # -- scheduling --------------------------------------------------------------------------
    def _task_id(self):
        self._next_task += 1
        return self._next_task

    def _schedule(self, st):
        """Schedules st's next batch (at its current epoch)."""
        es = st.es
        batch = _Batch(st.epoch, st.next_iteration)
        st.next_iteration += 1
        if es.kind == "sample":
            n = self.batch_size
            parts = min(n, 2 * self.num_workers)  # small enough tasks for idle workers to share
            bounds = [n * k // parts for k in range(parts + 1)]
            for first, end in zip(bounds, bounds[1:]):
                if end == first:
                    continue
                chunk = self._chunk_for(st, end - first)
                t = self._task_id()
                batch.tasks[t] = first
                self._task_batch[t] = [st, batch, chunk, (batch.epoch, batch.iteration)]
                self._shared_w.send(("samples", t, st.index, chunk.id, batch.epoch,
                                     batch.iteration, first, end - first, self.batch_size))
        else:
            chunk = self._chunk_for(st, self.batch_size)
            t = self._task_id()
            batch.tasks[t] = 0
            self._task_batch[t] = [st, batch, chunk, (batch.epoch, batch.iteration)]
            msg = ("batch", t, st.index, chunk.id, batch.epoch, batch.iteration)
            if st.dedicated is not None:
                self._own[st.dedicated].send(msg)
            else:
                self._shared_w.send(msg)
        st.scheduled.append(batch)

    def _fill(self, st):
        while not st.ended and len(st.scheduled) < st.depth:
            self._schedule(st)

    def _discard(self, st):
        """Drops st's scheduled batches; tasks still running are dropped as they come back."""
        for batch in st.scheduled:
            for t in batch.tasks:
                entry = self._task_batch.get(t)
                if entry is not None:
                    entry[1] = None
        st.scheduled.clear()

    def start_epoch(self, name, epoch, iteration=0):
        """Starts source `name` (again) at `iteration` of `epoch`, dropping what was ahead."""
        st = self._by_name[name]
        self._discard(st)
        st.epoch, st.next_iteration, st.ended = epoch, iteration, False

    # -- results -----------------------------------------------------------------------------
    def _receive(self, timeout):
        """Handles the results that are ready (waiting up to `timeout`)."""
        sentinels = [p.sentinel for p in self._procs]
        ready = connection.wait(self._results + sentinels, timeout)
        # Results first: a worker that reports a failure and exits is ready both ways.
        for r in sorted(ready, key=lambda r: isinstance(r, int)):
            if isinstance(r, int):  # a sentinel: the process ended
                if self._broken is None:
                    self._broken = (WorkerError, self._death(sentinels.index(r)))
                continue
            try:
                while r.poll():
                    self._handle(r.recv())
            except EOFError:
                if self._broken is None:
                    self._broken = (WorkerError, self._death(self._results.index(r)))
        if self._broken is not None:
            self.close(graceful=False)
            raise self._broken[0](self._broken[1])

    def _death(self, w):
        p = self._procs[w]
        p.join(0.5)
        code = p.exitcode
        if code is not None and code < 0:
            how = f"was killed by signal {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
        call = self._running(w)
        source, on = self._describe(*call[:2]) if call is not None else (None, None)
        who = f"external_source '{source}' (parallel)" if source else "parallel external_source"
        where = f" in the source's callback, on {on}" if on else ""
        return (f"{who}: worker {w} (pid {p.pid}) {how}{where} — a callback may have crashed the "
                f"interpreter or the machine ran out of memory; the pipeline's workers are "
                f"stopped (build a new pipeline)")

    # -- progress ----------------------------------------------------------------------------
    def _running(self, w):
        """(task, sample in the batch or -1, seconds so far) of the callback worker `w` runs,
        or None."""
        b = w * Progress.FIELDS
        for _ in range(3):  # a slot read while the worker rewrites it is read again
            task, sample, started = self._status[b:b + Progress.FIELDS]
            if task == self._status[b]:
                break
        if task == 0:
            return None
        return int(task), int(sample), time.monotonic() - started

    def _describe(self, task, sample):
        """(the source's name, the call) of task `task` at `sample` (>= 0: that sample of the
        batch; -1: a batch call), as the callback got them; (None, None) for an unknown task."""
        entry = self._task_batch.get(task)
        if entry is None:
            return None, None
        st, _, _, (epoch, iteration) = entry
        return st.es.name, _call_text(iteration, epoch, sample, self.batch_size)

    def _check_progress(self):
        """Raises WorkerTimeoutError when a callback has run longer than py_worker_timeout
        (stopping the workers first); without a timeout, warns once about a slow one."""
        limit = self.timeout if self.timeout is not None else SLOW_CALLBACK_WARNING
        for w, p in enumerate(self._procs):
            call = self._running(w)
            if call is None or call[2] <= limit:
                continue
            source, on = self._describe(*call[:2])
            what = (f"external_source '{source}' (parallel): its callback has run for "
                    f"{call[2]:.1f} s in worker {w} (pid {p.pid}), on {on}" if source else
                    f"parallel external_source: a callback has run for {call[2]:.1f} s in worker "
                    f"{w} (pid {p.pid})")
            if self.timeout is None:
                if not self._warned:
                    self._warned = True
                    warnings.warn(f"{what}; run() waits for it (give the Pipeline "
                                  f"py_worker_timeout=<seconds> to fail instead)",
                                  RuntimeWarning, stacklevel=user_stacklevel())
                continue
            self._broken = (WorkerTimeoutError,
                            f"{what}, longer than py_worker_timeout={self.timeout:g} s; the "
                            f"pipeline's workers are stopped (build a new pipeline)")
            self.close(graceful=False)
            raise WorkerTimeoutError(self._broken[1])

    def _handle(self, result):
        task, _, size, status, payload, seconds = result
        if task is None:  # the worker could not start
            _, text, tb, _ = payload
            raise WorkerError(f"parallel external_source: {text}\n\nWorker traceback:\n{tb}")
        st, batch, chunk, _ = self._task_batch.pop(task)
        st.worker_seconds += seconds
        if batch is None or status != "ok":
            st.free.append(chunk)
        if batch is None:  # discarded (end of epoch, reset)
            return
        first = batch.tasks[task]
        if status == "ok":
            holder, samples = chunk.views(size, payload)
            weakref.finalize(holder, self._give_back, st, chunk)
            batch.done[task] = (first, samples)
        elif status == "stop":
            batch.done[task] = (first, None)
            batch.stop = True
        else:
            batch.done[task] = (first, None)
            if batch.error is None or (payload[3] or 0) < (batch.error[3] or 0):
                batch.error = payload

    def next_batch(self, name):
        """The next batch of source `name`: a list per output of arrays (views of shared
        memory). Raises StopIteration at the end of its data, or the callback's exception."""
        if self._broken is not None:
            raise self._broken[0](self._broken[1])
        st = self._by_name[name]
        if st.ended:
            raise StopIteration
        self._fill(st)
        batch = st.scheduled[0]
        start = time.perf_counter()
        while len(batch.done) < len(batch.tasks):
            self._receive(self._tick)
            self._check_progress()
        if not batch.stop and batch.error is None:
            st.scheduled.popleft()
        st.wait_seconds += time.perf_counter() - start
        if batch.error is not None:
            st.scheduled.popleft()
            self._fill(st)
            raise _worker_exception(st.es.name, batch, batch.error, self.batch_size)
        if batch.stop:  # nothing more of this epoch until start_epoch (the pipeline's reset)
            self._discard(st)
            st.ended = True
            raise StopIteration
        st.batches += 1
        self._fill(st)
        outputs = None
        for first, samples in sorted(batch.done.values(), key=lambda d: d[0]):
            if outputs is None:
                outputs = [[] for _ in samples[0]] if samples else []
            for sample in samples:
                for o, a in enumerate(sample):
                    outputs[o].append(a)
        return outputs or [[] for _ in range(st.es.num_outputs or 1)]

    def stats(self):
        """Per source: batches, the seconds this process waited for workers, the seconds the
        callbacks took in the workers, and the shared memory its chunks hold."""
        self._take_returned()
        return {st.es.name: {"batches": st.batches, "wait_seconds": st.wait_seconds,
                             "worker_seconds": st.worker_seconds, "chunks": len(st.chunks),
                             "shm_capacity": sum(c.size for c in st.chunks)}
                for st in self.states}


def _pickled(specs, pickler):
    """The specs as bytes for spawn/forkserver, and the function that unpickles them."""
    dumps, loads, dkw, lkw = pickle.dumps, pickle.loads, {}, {}
    if pickler is not None:
        if isinstance(pickler, tuple):
            pickler, dkw, lkw = (tuple(pickler) + ({}, {}))[:3]
        dumps, loads = pickler.dumps, pickler.loads
    try:
        data = dumps(specs, **dkw)
    except Exception as e:
        hint = ("define the source at module level, pass py_callback_pickler=cloudpickle (or "
                "dill), or use py_start_method='fork'") if pickler is None else \
            "check that the source is picklable with the given py_callback_pickler"
        raise ValueError(f"parallel external_source: the sources must be pickled for "
                         f"py_start_method other than 'fork', and pickling failed "
                         f"({type(e).__name__}: {e}); {hint}") from e
    return data, (_Loads(loads, lkw) if lkw else loads)


class _Loads:
    def __init__(self, loads, kwargs):
        self.loads, self.kwargs = loads, kwargs

    def __call__(self, data):
        return self.loads(data, **self.kwargs)


def _call_text(iteration, epoch, sample, batch_size):
    """A callback call as the source saw it: a sample (its index in the epoch and the batch) or
    a batch (sample None or -1)."""
    if sample is None or sample < 0:
        return f"the batch of iteration {iteration}, epoch {epoch}"
    return (f"sample {iteration * batch_size + sample} (index {sample} in the batch) of "
            f"iteration {iteration}, epoch {epoch}")


def _worker_exception(name, batch, error, batch_size):
    exc_bytes, text, tb, index = error
    where = (f"external_source '{name}' (parallel): the source raised {text} for "
             f"{_call_text(batch.iteration, batch.epoch, index, batch_size)}")
    note = f"{where}\n\nWorker traceback:\n{tb.rstrip()}"
    exc = None
    if exc_bytes is not None:
        try:
            exc = pickle.loads(exc_bytes)
        except Exception:
            exc = None
    if isinstance(exc, Exception) and hasattr(exc, "add_note"):
        exc.add_note(note)
        return exc
    return RuntimeError(note)
