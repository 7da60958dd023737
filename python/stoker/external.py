"""External sources: data from Python fed into a pipeline.

What a source returns is handed to the native pipeline as it is, without a copy, when it can
be (numpy arrays, torch/JAX/cupy tensors, any DLPack producer, CUDA array interface objects);
the pipeline keeps a reference to each array until it is done with its memory. With
``no_copy=False`` (the default, as in DALI) the pipeline copies the batch when it is fed, so the
source may overwrite its arrays afterwards; with ``no_copy=True`` nothing is copied and the
arrays must stay unchanged until the pipeline is done with them.

GPU data goes to ``device="gpu"`` sources. Its producer's pending work is ordered before the
pipeline's without blocking the host: DLPack producers are asked (``__dlpack__(stream=...)``)
to make the pipeline's feed stream wait for their stream; for the CUDA array interface, the
stream it names is waited for.
"""

import inspect
import warnings

from stoker._caller import user_stacklevel
from stoker.worker_process import BatchInfo, SampleInfo  # noqa: F401 (stoker.types shows them)

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_CYCLE = {None: False, False: False, "no": False, "raise": False, True: True, "quiet": True}


def worker_timeout(seconds):
    """py_worker_timeout checked: None (wait for the workers as long as they take, as DALI) or
    the seconds one call of a parallel source's callback may run (a float)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"py_worker_timeout must be None (no timeout) or a positive number of "
                         f"seconds, got {seconds!r}")
    return float(seconds)


def source_kind(source, batch):
    """"sample" (a per-sample callable), "batch" (a batch callable), "generator" (a generator
    function, called for each epoch's iterator), "iterable", or None (fed with feed_input)."""
    if source is None:
        return None
    func = source.func if hasattr(source, "func") and hasattr(source, "args") else source
    if inspect.isgeneratorfunction(func):
        return "generator"
    if callable(source):
        return "batch" if batch else "sample"
    if hasattr(source, "__iter__"):
        return "iterable"
    return "invalid"


_ARITY_RULE = ("the `source` callable must accept either 0 or 1 positional arguments to "
               "indicate whether it accepts the batch or sample indexing information.")


def _arity(source, where):
    """How many arguments the source is called with: every positional parameter counts,
    defaulted ones too (DALI's rule: `lambda d=d: ...` is given the iteration number)."""
    try:
        params = list(inspect.signature(source).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: called with nothing
        return 0
    for p in params:
        found = {p.VAR_POSITIONAL: f"var-positional argument `*{p.name}`",
                 p.VAR_KEYWORD: f"var-keyword argument `**{p.name}`",
                 p.KEYWORD_ONLY: f"keyword-only argument `{p.name}`"}.get(p.kind)
        if found:
            raise TypeError(f"{where}: {_ARITY_RULE} Found {found} which is not allowed.")
    if len(params) > 1:
        raise TypeError(f"{where}: {_ARITY_RULE} Found more than one positional argument, "
                        f"which is not allowed.")
    return len(params)


class ExternalSource:
    """Feeds the external_source nodes `names` (one per output) from a Python callable or
    iterable; with parallel=True the pipeline's worker processes run it (stoker.workers)."""

    def __init__(self, names, source, batch, cycle, layouts, batch_size, device, no_copy,
                 num_outputs=None, batch_info=False, parallel=False, prefetch_queue_depth=None,
                 bytes_per_sample_hint=None, name=None):
        self.names = list(names)  # the nodes, one per output
        self.name = name or self.names[0]  # the source's name, in errors and statistics
        self.live = list(self.names)  # the nodes the built pipeline kept
        self.source = source
        self.kind = source_kind(source, batch)
        self.num_outputs = num_outputs
        self.batch_size = batch_size
        self.device = device
        self.layouts = layouts
        self.no_copy = bool(no_copy) or bool(parallel)  # workers' arrays are shared memory
        self.parallel = bool(parallel)
        # 2 batches ahead by default (DALI: 1): with one, the workers idle while the slowest
        # of them ends each batch and until run() asks for the next (bench/python_source.py).
        self.prefetch_queue_depth = 2 if prefetch_queue_depth is None else prefetch_queue_depth
        self.bytes_per_sample_hint = bytes_per_sample_hint
        self.pool = None  # the pipeline's WorkerPool, when parallel and started
        self.iteration = 0  # the next batch to compute, in this epoch
        self.epoch = 0
        self._iterator = None
        self.exhausted = False
        self.fed = 0  # batches given with feed_input (no source)
        where = f"external_source '{self.name}'"
        if cycle not in _CYCLE:
            raise ValueError(f"{where}: cycle must be True/'quiet', False/'no' or 'raise', got "
                             f"{cycle!r}")
        self.cycle = _CYCLE[cycle]
        if self.kind == "invalid":
            raise TypeError(f"{where}: source must be a callable or an iterable, got "
                            f"{type(source).__name__}")
        if self.kind == "iterable" and not batch:
            raise TypeError(f"{where}: batch=False needs a callable source taking a SampleInfo")
        if self.kind in ("sample", "batch") and cycle not in (None, False):
            raise ValueError(f"{where}: cycle applies to iterables and generator functions, not "
                             f"to a callable source")
        arity = _arity(source, where) if self.kind in ("sample", "batch") else 0
        # A sample callable: called per sample with a SampleInfo, or (as DALI does for one
        # taking no argument) with nothing; the workers always pass the SampleInfo.
        if self.kind == "sample" and not (arity == 1 or (arity == 0 and not parallel)):
            raise TypeError(f"{where}: with batch=False the source is called with one argument "
                            f"(a SampleInfo){'' if parallel else ' or none'}; "
                            f"{getattr(source, '__name__', source)!r} takes {arity}")
        self.sample_info = arity == 1
        # A batch callable: 0 (no argument), 1 (the iteration number), 2 (a BatchInfo).
        self.batch_info_mode = 0 if arity == 0 else (2 if batch_info else 1)
        if self.parallel:
            if self.kind is None:
                raise ValueError(f"{where}: parallel=True needs a source (the workers call it)")
            if not isinstance(self.prefetch_queue_depth, int) or self.prefetch_queue_depth < 1:
                raise ValueError(f"{where}: prefetch_queue_depth must be at least 1, got "
                                 f"{prefetch_queue_depth!r}")
            if self.prefetch_queue_depth > 64:  # the pipeline's queues' range (each batch held)
                raise ValueError(f"{where}: prefetch_queue_depth must be at most 64, got "
                                 f"{prefetch_queue_depth!r} (its range is [1, 64])")
            if bytes_per_sample_hint is not None and (not isinstance(bytes_per_sample_hint, int)
                                                      or bytes_per_sample_hint < 1):
                raise ValueError(f"{where}: bytes_per_sample_hint must be a positive number of "
                                 f"bytes, got {bytes_per_sample_hint!r}")

    def start(self, epoch, iteration):
        """Continues at batch `iteration` of `epoch` (a new epoch, or a checkpoint's place)."""
        self._iterator = None
        self.exhausted = False
        self.epoch, self.iteration = epoch, iteration
        if self.pool is not None:
            self.pool.start_epoch(self.name, epoch, iteration)

    def _iterate(self):
        if self._iterator is None:
            self._iterator = iter(self.source() if self.kind == "generator" else self.source)
        try:
            return next(self._iterator)
        except StopIteration:
            if not self.cycle:
                raise
            self._iterator = iter(self.source() if self.kind == "generator" else self.source)
            return next(self._iterator)

    def next_batch(self):
        """The next batch, as the source gives it (one batch; with num_outputs a tuple)."""
        if self.exhausted:
            raise StopIteration
        if self.pool is not None:
            data = self.pool.next_batch(self.name)  # per output, a list of arrays
            self.iteration += 1
            return data if self.num_outputs is not None else data[0]
        if self.kind == "sample":
            first = self.iteration * self.batch_size
            data = [self.source(SampleInfo(first + i, i, self.iteration, self.epoch))
                    if self.sample_info else self.source() for i in range(self.batch_size)]
            if self.num_outputs is not None:
                data = self._transpose(data)
        elif self.kind == "batch":
            if self.batch_info_mode == 2:
                data = self.source(BatchInfo(self.iteration, self.epoch))
            elif self.batch_info_mode == 1:
                data = self.source(self.iteration)
            else:
                data = self.source()
        else:
            data = self._iterate()
        self.iteration += 1
        return data

    def _transpose(self, samples):
        n = self.num_outputs
        for i, s in enumerate(samples):
            if not isinstance(s, (tuple, list)) or len(s) != n:
                raise TypeError(f"external_source '{self.name}': the source has num_outputs={n}, "
                                f"so each sample is a tuple of {n} arrays; sample {i} is "
                                f"{type(s).__name__}")
        return tuple([s[o] for s in samples] for o in range(n))

    def end(self, native):
        """Marks the end of the epoch's data at the nodes."""
        self.exhausted = True
        for name in self.live:
            native.feed_end(name)

    def feed(self, native, data):
        """Feeds `data` (from next_batch) to `native` (a built _stoker.Pipeline)."""
        if self.num_outputs is None:
            self.push(native, data)
        else:
            if not isinstance(data, (tuple, list)) or len(data) != self.num_outputs:
                raise TypeError(f"external_source '{self.name}': the source has num_outputs="
                                f"{self.num_outputs}, so it returns a tuple of "
                                f"{self.num_outputs} batches; got {type(data).__name__}")
            for name, batch in zip(self.names, data):
                if name in self.live:
                    self.push(native, batch, node=name)

    def feed_input(self, native, data, layout=None):
        """pipe.feed_input's batch for this source (one made without a `source`)."""
        self.push(native, data, layout)
        self.fed += 1

    def missing(self, runs):
        """Whether the `runs`-th run() would wait for a batch no feed_input gave."""
        return self.source is None and self.fed < runs

    def missing_message(self):
        return (f"external_source '{self.name}' has no batch for this iteration: give one with "
                f"pipe.feed_input('{self.name}', batch) before run() (in a Pipeline subclass: "
                f"in iter_setup)")

    def push(self, native, data, layout=None, node=None):
        """Hands `data` (one batch) to `native` as node `node`'s next batch (the first)."""
        node = node or self.names[0]
        stream = native.feed_stream() if self.device == "gpu" else 0
        waits = set()
        if isinstance(data, (list, tuple)):
            payload = [self._export(x, stream, waits) for x in data]
        else:
            payload = self._export(data, stream, waits)
        if layout is None:
            layout = self.layouts[self.names.index(node)]
        native.feed_input(node, payload, layout, not self.no_copy, sorted(waits))

    def _export(self, x, stream, waits):
        return export_array(x, f"external_source '{self.name}'", self.device == "gpu", stream,
                            waits)


def export_array(x, where, on_gpu, stream, waits):
    """`x` in a form the native side imports without copying: a numpy array (host data), a
    DLPack capsule (CUDA data, ordered before `stream`) or an (address, shape, dtype, owner)
    tuple (CUDA array interface; its stream is added to `waits`). `where` names the taker in
    errors; `on_gpu`: it takes CUDA data."""
    import numpy as np

    dlpack_device = getattr(x, "__dlpack_device__", None)
    kind = dlpack_device()[0] if dlpack_device is not None else None
    cai = getattr(x, "__cuda_array_interface__", None) if kind is None else None
    if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED) or cai is not None:
        if not on_gpu:
            raise TypeError(f"{where} runs on the CPU but got GPU data ({type(x).__name__}); "
                            f"use device='gpu' for GPU data")
        if cai is not None:
            return _from_cuda_array_interface(x, cai, where, waits)
        try:
            return x.__dlpack__(stream=stream)
        except TypeError:  # a producer predating the stream argument
            waits.add(1)  # it assumes the legacy default stream: wait for that
            return x.__dlpack__()
    if kind is not None and kind not in (_KDL_CPU, _KDL_CUDA_HOST):
        raise TypeError(f"{where}: got data on DLPack device type {kind}; it takes host (CPU) "
                        f"or CUDA data")
    if kind is not None and not hasattr(x, "__array__"):
        x = np.from_dlpack(x)
    # A view where possible (torch CPU tensors, JAX CPU arrays); a copy only when `x` is not
    # C-contiguous or not an array yet (lists). 0-d samples stay 0-d (ascontiguousarray alone
    # would make them 1-d).
    a = np.asarray(x)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(a.shape)


def _from_cuda_array_interface(x, cai, where, waits):
    import numpy as np

    shape = tuple(int(d) for d in cai["shape"])
    dtype = np.dtype(cai["typestr"])
    strides = cai.get("strides")
    if strides is not None:
        expected, step = [], dtype.itemsize
        for d in reversed(shape):
            expected.insert(0, step)
            step *= d
        if tuple(strides) != tuple(expected) and 0 not in shape:
            raise TypeError(f"{where}: samples must be C-contiguous (got strides {strides} for "
                            f"shape {shape})")
    if cai.get("mask") is not None:
        raise TypeError(f"{where}: masked CUDA arrays are not supported")
    stream = cai.get("stream")
    if stream is not None:
        if stream == 0:
            raise ValueError(f"{where}: __cuda_array_interface__ gives stream 0, which the "
                             f"protocol forbids (1: legacy default, 2: per-thread default)")
        waits.add(int(stream))
    return (int(cai["data"][0]), shape, dtype.name, x)


class FedVideos(ExternalSource):
    """experimental.inputs.video's node `name`: each video fed makes several batches (the
    native operator counts them), so run() asks for a feed only when those are used up; with
    `blocking`, run() waits for a feed from another thread instead."""

    def __init__(self, name, batch_size, device, no_copy, blocking):
        super().__init__([name], None, True, None, [""], batch_size, device, no_copy)
        self.blocking = bool(blocking)

    def feed_input(self, native, data, layout=None):
        self.push(native, data, layout)
        self.fed = native.fed_batches(self.names[0])

    def missing(self, runs):
        return not self.blocking and self.fed < runs

    def missing_message(self):
        return (f"experimental.inputs.video '{self.name}' has no video for this iteration: the "
                f"videos fed are used up; feed the next with pipe.feed_input('{self.name}', "
                f"[encoded_video]) before run() (or build it with blocking=True to wait for one "
                f"fed from another thread)")


class ExternalSources:
    """A pipeline's external sources by node name: feeding them, their epochs, the worker pool
    of the parallel ones, and their place for checkpoints (epoch, batches returned)."""

    def __init__(self):
        self._nodes = {}  # node name -> ExternalSource (one source may have several nodes)
        self.pool = None
        self.epoch = 0  # epochs ended (StopIteration) and started again with reset()
        self.delivered = 0  # batches run() returned in this epoch

    def __bool__(self):
        return bool(self._nodes)

    def __iter__(self):
        return iter(self._nodes)

    def get(self, name):
        return self._nodes.get(name)

    def add(self, name, es):
        self._nodes[name] = es

    def feeders(self):
        seen, out = set(), []
        for es in self._nodes.values():
            if id(es) not in seen:
                seen.add(id(es))
                out.append(es)
        return out

    def prune(self, live):
        """Keeps the nodes the built pipeline kept (`live` names)."""
        self._nodes = {k: v for k, v in self._nodes.items() if k in live}
        for es in self.feeders():
            es.live = [n for n in es.names if n in live]

    def start_workers(self, batch_size, num_workers, start_method, pickler, timeout=None):
        """Starts the worker pool for the parallel sources (py_num_workers=0: they run in this
        process, as DALI does; py_worker_timeout, `timeout`, applies to worker processes)."""
        if self.pool is not None:
            return
        parallel = [es for es in self.feeders() if es.parallel]
        if not parallel or num_workers == 0:
            return
        from stoker.workers import WorkerPool  # multiprocessing only where it is used

        self.pool = WorkerPool(parallel, batch_size, num_workers, start_method, pickler, timeout)
        for es in parallel:
            es.pool = self.pool
            es.start(self.epoch, es.iteration)

    def close(self):
        if self.pool is not None:
            self.pool.close()
            # The sources and the pool refer to each other (a cycle): broken, so both go at
            # the pipeline's `del` without the garbage collector.
            for es in self.feeders():
                if getattr(es, "pool", None) is self.pool:
                    es.pool = None
            self.pool = None

    def feed(self, native, count):
        """Feeds `count` batches of every source. When one source ends, the epoch ends for all
        (as in DALI): each of them gets its end mark for that iteration."""
        sources = [es for es in self.feeders() if es.source is not None]
        for _ in range(count):
            if any(es.exhausted for es in sources):
                return
            batches = []
            for es in sources:
                try:
                    batches.append(es.next_batch())
                except StopIteration:
                    for e in sources:
                        e.end(native)
                    return
            for es, data in zip(sources, batches):
                es.feed(native, data)

    def any_exhausted(self):
        return any(es.exhausted for es in self.feeders())

    def reset(self, native):
        """The next epoch of every source."""
        native.discard_ends()
        self.epoch += 1
        self.delivered = 0
        for es in self.feeders():
            es.start(self.epoch, 0)

    # -- checkpoints -----------------------------------------------------------------------
    _TAG = "external_sources "

    def checkpoint_line(self):
        """The place to continue from: the epoch and the batches returned in it. Callables are
        called from there on restore; iterables cannot be positioned (they start again)."""
        if not self:
            return ""
        return f"{self._TAG}epoch {self.epoch} iteration {self.delivered}\n"

    @classmethod
    def split_checkpoint(cls, text):
        """(the native pipeline's part of `text`, (epoch, iteration) or None)."""
        lines, place = [], None
        for line in (text or "").splitlines(keepends=True):
            if line.startswith(cls._TAG):
                words = line.split()
                try:
                    place = (int(words[2]), int(words[4]))
                except (IndexError, ValueError):
                    raise ValueError(f"invalid checkpoint: bad line {line.strip()!r}") from None
            else:
                lines.append(line)
        return "".join(lines), place

    def restore(self, place):
        """Continues every source at `place` (from split_checkpoint)."""
        self.epoch, self.delivered = place
        for es in self.feeders():
            if es.kind in ("iterable", "generator"):
                warnings.warn(f"external_source '{es.name}': its source is an iterable, whose "
                              f"place a checkpoint cannot hold; it starts from its beginning "
                              f"(use a callable taking a SampleInfo or BatchInfo to resume it)",
                              RuntimeWarning, stacklevel=user_stacklevel())
                es.start(self.epoch, 0)
            else:
                es.start(self.epoch, self.delivered)

    def shm_statistics(self, batch_size):
        pool = self.pool
        chunks = [c for st in pool.states for c in st.chunks] if pool is not None else []
        return {"capacities": [c.size for c in chunks],
                "per_sample_capacities": [c.size / batch_size for c in chunks]}

    def stats(self):
        """Parallel sources: per source, batches, the seconds run() waited for the workers,
        the seconds the callbacks took in them, and the shared memory's chunks and capacity."""
        return self.pool.stats() if self.pool is not None else {}
