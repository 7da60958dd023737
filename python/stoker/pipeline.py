"""Pipeline definition by tracing: ``fn.*`` calls inside ``with pipe:`` (or a function decorated
with ``@pipeline_def``) record operator nodes; ``build()`` hands the graph to the native core,
which validates it (errors name the operator and the line that defined it), prunes unused
nodes and starts the executor."""

import atexit
import inspect
import os
import threading
import weakref
import warnings

from stoker import _stoker
from stoker.distributed import _distributed_device, _distributed_shard
from stoker.options import configure
from stoker import rewrite
from stoker import types
from stoker.batch import Batch
from stoker.conditionals import ConditionStack
from stoker.external import ExternalSources
from stoker.node import DataNode

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_local = threading.local()


def _current_pipeline():
    stack = getattr(_local, "stack", [])
    return stack[-1] if stack else None


def _caller_location():
    """'file.py:line' of the first frame outside the stoker package."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            filename = os.path.abspath(frame.f_code.co_filename)
            if not filename.startswith(_PACKAGE_DIR + os.sep):
                return f"{frame.f_code.co_filename}:{frame.f_lineno}"
            frame = frame.f_back
        return ""
    finally:
        del frame


_live = weakref.WeakSet()
_exit_hook = False


def _close_at_exit(pipe):
    """Pipelines still alive at interpreter exit are closed by an atexit hook, registered when
    the first one is built: atexit runs hooks last-registered-first, so this one runs before
    those of libraries imported earlier (torch), while CUDA is intact."""
    global _exit_hook
    _live.add(pipe)
    if not _exit_hook:
        atexit.register(_close_all)
        _exit_hook = True


def _close_all():
    for pipe in list(_live):
        pipe.close()


class Pipeline:
    """A data pipeline: a graph of operators run on a pool of `num_threads` threads, with
    `prefetch_queue_depth` batches prepared ahead of the consumer.

    The same `seed` gives bit-identical outputs for any `num_threads` and
    `prefetch_queue_depth`; `seed=-1` draws one at random (see `pipe.seed`).

    Every option of `stoker.PipelineOptions` (`help(stoker.PipelineOptions)`) may be given by
    name; `pipe.options` holds them. The ones below take DALI's forms.

    `checkpoint`: a string from `pipe.checkpoint()` of the same pipeline definition; the new
    pipeline continues exactly where that one was (readers' positions and shuffle buffers, the
    random streams). With seed=-1 the checkpoint's seed is used.

    `on_error`: "raise" (default) fails the batch on a bad sample, with an error naming the
    operator, the sample and its source; "skip" replaces a sample whose reading or decoding
    fails with the reader's next one, warns (RuntimeWarning naming the source) and counts it
    (`pipe.error_stats()`).

    `pinned_outputs`: CPU outputs in page-locked memory (when CUDA is available), so that a
    framework's copy to the GPU (`tensor.cuda(non_blocking=True)`) is asynchronous DMA.

    `num_threads="auto"`: the pipeline chooses how many threads work while it runs, up to
    `cpu_budget` (default: the machine's cores): more while the consumer waits for batches and
    more threads help, fewer while it does not (the training process keeps the rest); it
    settles within seconds and then holds (`pipe.autotune()` lists its changes). Outputs are
    the same for any thread count.

    `prefetch_queue_depth="auto"`: the queue of finished batches (2 at first) grows by one, up
    to 6, when the consumer waits while the pipeline was blocked on a full queue (it delivers
    in bursts); see `pipe.autotune()`.

    `trace`: a path; when the pipeline closes, a Chrome/Perfetto trace (JSON) is written there:
    a track per stage thread and the consumer, a span per operator run and stage iteration
    (open it in ui.perfetto.dev). Default: the STOKER_TRACE environment variable, if set.

    `cpu_affinity`: the cores (ints) the pipeline's threads may run on (default: any); e.g.
    `os.sched_setaffinity(0, {0})` in the training thread, `cpu_affinity=range(1, 16)` here.

    In a distributed job (torchrun, torch.distributed) readers take this process's shard and a
    pipeline with GPU operators and no `device_id` runs on the process's GPU (LOCAL_RANK).
    """

    def __init__(self, batch_size=-1, num_threads=1, device_id=None, seed=-1,
                 prefetch_queue_depth=2, cpu_budget=None, py_num_workers=1,
                 py_start_method="fork", py_callback_pickler=None, enable_conditionals=False,
                 **options):
        self._setup(_stoker.PipelineOptions())
        if enable_conditionals:
            self._conditions = ConditionStack(self)
        if py_callback_pickler is not None and py_start_method == "fork":
            raise ValueError("py_callback_pickler applies to py_start_method 'spawn' or "
                             "'forkserver' (fork copies the sources without pickling)")
        self._py_workers = (py_num_workers, py_start_method, py_callback_pickler)
        if device_id == types.CPU_ONLY_DEVICE_ID:  # DALI's spelling of "no GPU"
            device_id = None
        configure(self._options, dict(
            batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=seed,
            prefetch_queue_depth=prefetch_queue_depth, cpu_budget=cpu_budget, **options))

    def _setup(self, options):
        self._options = options  # stoker.PipelineOptions: every option, once
        self._nodes = []
        self._outputs = None
        self._external = ExternalSources()
        self._py_workers = (1, "fork", None)  # py_num_workers, py_start_method, pickler
        self._native = None
        self._conditions = None  # enable_conditionals: the `if` levels being traced
        self._ran = False  # run() was called (plugins restore checkpoints only before)
        self._fed_ahead = False
        self._end_delivered = False
        self._epoch_iterations = 0
        self._runs = 0  # run() calls that went to the native pipeline
        self._scheduled = 0  # schedule_run() calls not yet collected by outputs()

    @property
    def options(self):
        """The pipeline's options (stoker.PipelineOptions; change them before build())."""
        return self._options

    @property
    def batch_size(self):
        return self._options.batch_size

    @property
    def num_threads(self):
        return "auto" if self._options.auto_threads else self._options.num_threads

    @property
    def cpu_budget(self):
        """num_threads="auto": the most threads it may use (None: the machine's cores)."""
        o = self._options
        return o.num_threads if o.auto_threads and o.num_threads > 0 else None

    @property
    def device_id(self):
        return self._options.device_id

    @property
    def prefetch_queue_depth(self):
        o = self._options
        if o.auto_prefetch:
            return "auto"
        if o.prefetch_queue_depth == o.gpu_queue_depth:
            return o.prefetch_queue_depth
        return {"cpu_size": o.prefetch_queue_depth, "gpu_size": o.gpu_queue_depth}

    # -- definition ------------------------------------------------------------------------
    def __enter__(self):
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(self)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        return False

    def _add_node(self, op, inputs, args, arg_inputs, name, device, num_outputs,
                  external=None):
        if self._native is not None:
            raise RuntimeError("the pipeline is already built; define operators before build()")
        traced = self._conditions is not None and not self._conditions.raw
        if traced:  # values from outside the current `if` branch come in split
            inputs = [self._conditions.input(x) if isinstance(x, DataNode) else x
                      for x in inputs]
            arg_inputs = {k: self._conditions.input(v) for k, v in arg_inputs.items()}
        # References first: an expression among them becomes its own node now, before this
        # node's index is taken.
        refs = [self._ref(x, op) for x in inputs]
        arg_refs = {k: self._ref(v, op) for k, v in arg_inputs.items()}
        if device is None:  # as DALI: on the GPU when an input is there, else on the CPU
            on_gpu = any(self._nodes[n]["device"] in ("mixed", "gpu") for n, _ in refs)
            device = "gpu" if on_gpu else "cpu"
        auto = {}
        if op.startswith("readers.") and not {"shard_id", "num_shards"} & (set(args) |
                                                                           set(arg_inputs)):
            auto = _distributed_shard()  # each process of a job reads its shard
            args = {**args, **auto}
        index = len(self._nodes)
        if name is None:
            name = f"{op}_{index}"
        self._nodes.append({
            "op": op, "name": name, "device": device, "defined_at": _caller_location(),
            "inputs": refs, "args": args, "arg_inputs": arg_refs,
            "auto_args": sorted(auto),  # not the user's: left out of serialize()
        })
        if external is not None:
            self._external.add(name, external)
        outs = [DataNode(self, index, k, f"{name}[{k}]") for k in range(num_outputs)]
        result = outs[0] if num_outputs == 1 else tuple(outs)
        if traced:
            self._conditions.produced(result, bool(inputs or arg_inputs))
        return result

    def _ref(self, node, op):
        if not isinstance(node, DataNode):
            raise TypeError(f"{op}: expected a DataNode (an operator's output), "
                            f"got {type(node).__name__}")
        if node._pipeline is not self:
            raise ValueError(f"{op}: the input {node.name} belongs to another pipeline")
        return (node._node, node._index)

    def set_outputs(self, *outputs):
        for o in outputs:
            self._ref(o, "set_outputs")
        self._outputs = list(outputs)

    # -- DALI's class-based API (stoker.ops) -------------------------------------------------
    def define_graph(self):
        """Override in a subclass: build the graph with stoker.ops (or fn) operators and return
        its outputs (build() calls it once)."""
        raise NotImplementedError

    def iter_setup(self):
        """Override in a subclass: called before each batch is prepared (at the first run,
        once per batch the queue holds), where sources without a callable are fed with
        feed_input."""

    def feed_input(self, data_node, data, layout=None, cuda_stream=None, use_copy_kernel=False):
        """Gives the external source `data_node` (its DataNode or name; one made without a
        `source`) its next batch: a list of arrays or one array whose first axis is the batch
        (numpy, DLPack producers, CUDA array interface objects), as a callable source returns
        it. `cuda_stream` and `use_copy_kernel` are accepted for DALI's scripts; GPU data is
        ordered through DLPack."""
        self.build()
        name = data_node.name if isinstance(data_node, DataNode) else data_node
        if isinstance(data_node, DataNode):
            name = self._nodes[data_node._node]["name"]
        es = self._external.get(name)
        if es is None:
            known = ", ".join(sorted(self._external)) or "none"
            raise ValueError(f"feed_input: no external source named '{name}' in the pipeline "
                             f"(external sources: {known})")
        if es.source is not None:
            raise ValueError(f"feed_input: external source '{name}' has a source of its own; "
                             f"feed_input feeds those made without one")
        es.push(self._native, data, layout)
        es.fed += 1

    # -- running ---------------------------------------------------------------------------
    def _define(self):
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if not self._outputs and type(self).define_graph is not Pipeline.define_graph:
            graph = self.define_graph
            if self._conditions is not None:  # its `if`s on pipeline values become branches
                graph = rewrite.convert(type(self).define_graph, strict=True).__get__(self)
            with self:  # a subclass's graph (DALI's class-based API, stoker.ops)
                outputs = graph()
            self.set_outputs(*_returned(outputs, f"{type(self).__name__}.define_graph"))
        if not self._outputs:
            raise ValueError("the pipeline has no outputs: return them from the @pipeline_def "
                             "function or call set_outputs()")

    py_num_workers = property(lambda self: self._py_workers[0])
    py_start_method = property(lambda self: self._py_workers[1])

    def start_py_workers(self):
        """Starts the worker processes of parallel external sources now (else build() does).
        Forking after CUDA is initialised is fine if the sources do not use CUDA (workers.py)."""
        self._define()
        _close_at_exit(self)
        self._external.start_workers(self.batch_size, *self._py_workers)

    def build(self):
        if self._native is not None:
            return
        self.start_py_workers()  # before the pipeline's threads exist (fork copies none)
        if self.device_id is None and any(n["device"] != "cpu" for n in self._nodes):
            self._options.device_id = _distributed_device()  # each process of a job: its GPU
        checkpoint, place = ExternalSources.split_checkpoint(self._options.checkpoint)
        self._options.checkpoint = checkpoint
        self._native = _stoker.Pipeline.build(
            self._nodes, [(o._node, o._index) for o in self._outputs], self._options)
        self._external.prune(set(self._native.external_source_names()))
        if place is not None:
            self._external.restore(place)

    def _feed(self, count):
        self._external.feed(self._native, count)

    def run(self):
        """The next batch: a tuple with one stoker.Batch per output. Raises StopIteration at
        the end of an external source's data (call reset() to start its next epoch)."""
        self.build()
        self._ran = True
        if self._end_delivered:
            raise StopIteration
        # The batches to prepare now: one, or at the first run as many as the queue holds.
        ahead = 1 if self._fed_ahead else self._options.prefetch_queue_depth
        self._fed_ahead = True
        for _ in range(ahead):
            if type(self).iter_setup is not Pipeline.iter_setup:
                self.iter_setup()  # feeds the sources without a callable (DALI's pattern)
            self._feed(1)
        self._runs += 1
        for es in self._external.feeders():
            if es.source is None and es.fed < self._runs:
                self._runs -= 1
                raise RuntimeError(
                    f"external_source '{es.name}' has no batch for this iteration: give one "
                    f"with pipe.feed_input('{es.name}', batch) before run() (in a Pipeline "
                    f"subclass: in iter_setup)")
        try:
            outputs = self._native.run()
        except StopIteration:
            self._end_delivered = True
            raise
        else:
            self._external.delivered += 1
        finally:
            if self._options.on_error == "skip":
                for incident in self._native.take_incidents():
                    warnings.warn(f"stoker skipped a bad sample: {incident}", RuntimeWarning,
                                  stacklevel=2)
        return tuple(Batch(o) for o in outputs)

    # DALI's split form of run(), as its older scripts and plugins call it.
    def schedule_run(self):
        """Asks for the next batch (it is prepared ahead anyway); outputs() returns it."""
        self.build()
        self._scheduled += 1

    def outputs(self):
        """The batch schedule_run() asked for (as run())."""
        if self._scheduled == 0:
            raise RuntimeError("outputs() without schedule_run(): call schedule_run() first, or "
                               "run()")
        self._scheduled -= 1
        return self.run()

    share_outputs = outputs

    def release_outputs(self):
        """Nothing to do: a batch's memory returns to the pools when its last reference goes."""

    def _forget_runs(self):
        """Marks a pipeline whose batches were all dropped unseen (an iterator's prepared first
        batch) as not run, so that _restart_from may rebuild it; readers only (external
        sources cannot give their batches again)."""
        self._ran = False
        self._fed_ahead = False
        self._runs = 0

    def _restart_from(self, checkpoint):
        """Rebuilds this pipeline, which has not run yet, to continue from `checkpoint` (what
        the framework iterators' load_state_dict does)."""
        if self._ran:
            raise ValueError("the pipeline has already run: restore a checkpoint into a new one")
        if self._native is not None:
            self._native.close()
            self._native = None
        self._options.checkpoint = checkpoint
        self.build()

    def close(self):
        """Stops the pipeline: its threads, its device work and its operators end now. Batches
        already returned stay valid. Later run() calls raise RuntimeError."""
        if self._native is not None:
            self._native.close()
        self._external.close()

    def gpu_utilization(self):
        """The GPU's utilisation sampled through NVML every 100 ms since the first run()
        (pipelines with GPU operators): {"available", "why" (when not), "samples",
        "sm_percent" (kernels running), "nvjpg_percent" (JPEG engines busy; -1 where NVML has
        no such counter)} — the whole GPU's, training included."""
        self.build()
        return self._native.gpu_utilization()

    def autotune(self):
        """num_threads="auto": {"threads": the threads working now, "changes": [{"time",
        "threads", "rate", "wait", "why"}]}, each change the tuner made: when (seconds of
        measured windows), the new count, the images/s and the share of the time the consumer
        waited before it, and why. With a fixed num_threads: that count, no changes. Also
        "prefetch_queue_depth" (the consumer's queue now) and "prefetch_changes" ({"time",
        "depth", "wait", "blocked", "why"}) for prefetch_queue_depth="auto"."""
        self.build()
        return self._native.autotune()

    def operator_stats(self, name):
        """Counters of operator `name` (e.g. a mixed decoder's split between the hardware
        decoder and the CPU: hw_images, cpu_images, hw_load)."""
        self.build()
        return self._native.operator_stats(name)

    def stage_stats(self):
        """Where each stage's thread spent its time since the start, in seconds: a list of
        {"stage", "iterations", "busy", "starved", "blocked", "queue_mean", "queue_capacity",
        "cpu", "threads"} for "cpu", "mixed", "gpu" (those the pipeline has) and "consumer" (its
        "starved": waiting in run()). "queue_mean" is how many finished batches the stage's
        output queue held, on average, when run() was called (near 0: the consumer waits for
        this stage; near "queue_capacity": the pipeline is ahead); "cpu" the CPU seconds of the
        stage's threads. "threads": CPU-only pipelines with 8 or more threads run two
        iterations at once in the CPU stage (two lanes sharing the threads, so that one batch's
        serial parts and end are filled with the other's samples; same batches, in order;
        cpu_lanes=1 turns it off); their busy and blocked seconds are the lanes' mean. The stage
        with the most busy time and the least starved time is the bottleneck."""
        self.build()
        return self._native.stage_stats()

    def reset(self):
        """Starts the next epoch of external sources (after StopIteration)."""
        if self._end_delivered or self._external.any_exhausted():
            self._external.reset(self._native)
            self._fed_ahead = False
            self._end_delivered = False
        self._epoch_iterations = 0

    def __iter__(self):
        """Iterates over one epoch: the shard size of the reader divided by the batch size
        (rounded up; the last batch continues into the next epoch), or until an external
        source ends."""
        self.build()
        self._epoch_iterations = 0
        return self

    def __next__(self):
        readers = self._native.reader_names()
        if readers and not self._external:
            shard = self._native.reader_meta(readers[0])["shard_size"]
            if self._epoch_iterations >= -(-shard // self.batch_size):
                raise StopIteration
        try:
            out = self.run()
        except StopIteration:
            self.reset()
            raise
        self._epoch_iterations += 1
        return out

    def epoch_size(self, name=None):
        """Samples in the dataset of reader `name` (all shards); name may be omitted when the
        pipeline has one reader."""
        return self.reader_meta(name)["epoch_size"]

    def reader_meta(self, name=None):
        self.build()
        return self._native.reader_meta(name or "")

    def serialize(self, path=None):
        """The pipeline's definition as JSON (a versioned schema, "stoker.pipeline" version
        2): its options, every operator node (op, name, device, inputs, arguments and argument
        inputs) and the outputs. `Pipeline.deserialize()` rebuilds it; the same seed gives the
        same batches. The shard a reader took from a distributed job's environment is left out
        (the loading process takes its own). Written to `path` too when given. Raises
        ValueError for an external_source (its Python source cannot be serialized)."""
        from stoker import serialize  # it imports this module
        return serialize.to_json(self, path)

    @classmethod
    def deserialize(cls, serialized, **options):
        """A pipeline from `serialize()`'s JSON (the text, or a path to it). Keyword arguments
        override the saved options (e.g. device_id=1, num_threads=8, checkpoint=...)."""
        from stoker import serialize
        return serialize.from_json(cls, serialized, options)

    def checkpoint(self):
        """The pipeline's state after the last batch run() returned, as a string. Build the
        same pipeline with `checkpoint=` this string to continue from there. Readers and random
        operators are covered, and external sources whose source is a callable (they are called
        from the saved epoch and iteration on, as DALI does); an iterable starts again."""
        self.build()
        return self._native.checkpoint() + self._external.checkpoint_line()

    def error_stats(self):
        """{"skipped": samples replaced so far (on_error="skip"), "warnings": samples used
        despite a warning (JPEGs decoded past corrupt or truncated data, as DALI and PIL decode
        them; strict=True on the decoder raises instead), "recent": the last incidents
        (operator, sample, source, error or warning)}."""
        self.build()
        return self._native.error_stats()

    def operator_times(self):
        """Per operator, in graph order: {"name", "op", "backend", "runs", "samples", "seconds"
        (its stage thread's time in it; for mixed and gpu operators the host's part), "bytes_in",
        "bytes_out", "gpu_runs", "gpu_seconds"} since the start. The GPU figures (mixed and gpu
        operators; CUDA events on their stage's stream around each run) count the runs the GPU
        has finished, so gpu_runs may trail runs by the iterations in flight."""
        self.build()
        return self._native.operator_times()

    def cpu_times(self):
        """CPU seconds of stoker's threads since the first run(): {"threads": {"cpu stage",
        "mixed stage", "gpu stage", "workers" (the pool of num_threads - 1), "gpu stage
        workers": seconds}, "wall": seconds since the first run(), "cores": their sum over
        "wall"} — the cores the pipeline keeps busy (the readers' I/O threads and the CUDA
        driver's are not counted)."""
        self.build()
        t = self._native.cpu_times()
        t["cores"] = sum(t["threads"].values()) / t["wall"] if t["wall"] > 0 else 0.0
        return t

    def stats(self):
        """Everything the pipeline measures, in one dict: "stages" (stage_stats()), "operators"
        (operator_times(), each with the operator's own counters under "counters", e.g. a mixed
        decoder's split), "cpu" (cpu_times()), "memory" (memory_stats()), "errors"
        (error_stats()), "autotune" (autotune()), "gpu" (gpu_utilization()) and
        "external_sources" (parallel sources: per source "batches", "wait_seconds" that run()
        waited for the workers, "worker_seconds" their callbacks took, "chunks" and
        "shm_capacity" of the shared memory)."""
        ops = self.operator_times()
        for o in ops:
            o["counters"] = self._native.operator_stats(o["name"])
        return {"stages": self.stage_stats(), "operators": ops, "cpu": self.cpu_times(),
                "memory": self.memory_stats(), "errors": self.error_stats(),
                "autotune": self.autotune(), "gpu": self.gpu_utilization(),
                "external_sources": self._external.stats()}

    def external_source_shm_statistics(self):
        """DALI's view of the parallel sources' shared memory: {"capacities": bytes per chunk,
        "per_sample_capacities": bytes per chunk over the batch size}."""
        return self._external.shm_statistics(self.batch_size)

    def report(self):
        """stats() as a readable table: where each stage's time went, then each operator's time
        per sample, bytes out and (device operators) GPU time per batch (the busiest stage that is
        never starved is the bottleneck), and the automatic thread count's changes."""
        from stoker.report import format_report
        return format_report(self.stats())

    def memory_stats(self):
        """Per pool ("host", "pinned", "device"): bytes_in_use, peak_bytes_in_use,
        bytes_reserved (in use + cached free blocks), budget (0: none), allocations, how many
        were reused from the cache, "not_waited": fresh blocks made because every cached
        one was still in use on the GPU (reusing it would have made the stage wait), and
        "release_events": CUDA events recorded as buffers came back (one per stream that used
        a buffer; a batch whose last GPU use was already queued shares one event instead)."""
        self.build()
        return self._native.memory_stats()

    def trim_memory(self):
        """Returns the pools' cached free blocks to the system (buffers in use stay; the pools
        grow again as needed), e.g. between training and evaluation."""
        self.build()
        self._native.trim_memory()

    @property
    def seed(self):
        """The seed in use (builds the pipeline: a seed of -1 is drawn, or taken from the
        checkpoint, at build time)."""
        self.build()
        return self._native.seed

    def __del__(self):
        # Stops the prefetching thread; the native destructor never blocks on Python (stoker's
        # threads never take the GIL; a waiting python_function call is withdrawn).
        self._native = None
        external = getattr(self, "_external", None)
        if external is not None:
            external.close()
        release = getattr(_stoker, "release_borrowed", None)
        if release is not None:  # (at interpreter exit the module may be torn down first)
            release()


# pipeline_def lives with the conditionals it switches on (DALI's scripts import it from here).
from stoker.definition import _returned, do_not_convert, pipeline_def  # noqa: E402,F401
