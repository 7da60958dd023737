"""stoker.Pipeline: a definition (stoker.definition) that is built and run. ``build()`` hands the
graph to the native core, which validates it (errors name the operator and the line that
defined it), prunes unused nodes and starts the executor; ``run()`` returns the next batch.
Epochs, checkpoints and closing are here too; what it measures is stoker.stats."""

import atexit
import threading
import warnings
import weakref

from stoker import _stoker, dot, output_descs, types
from stoker._caller import user_stacklevel
from stoker.batch import Batch, _stream_handle
from stoker.conditionals import ConditionStack
from stoker.definition import Definition
from stoker.distributed import _distributed_device
from stoker.external import ExternalSources, worker_timeout
from stoker.options import configure
from stoker.stats import Statistics

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


class Pipeline(Definition, Statistics):
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

    `py_worker_timeout`: seconds one call of a parallel external source's callback may run in
    a worker process; a longer one makes run() raise WorkerTimeoutError naming the worker and
    the sample, and stops the workers. Default None: no limit (as DALI).

    `output_dtype`, `output_ndim`, `output_layout` (DALI's): what each output must be — a value
    for every output, or a list with one per output (None: any); build() checks the count and
    every batch run() returns is checked (RuntimeError naming the output). `stream_policy` and
    `concurrency` (stoker.pipeline.StreamPolicy, OperatorConcurrency) are accepted for DALI's
    scripts and change nothing.

    In a distributed job (torchrun, torch.distributed) readers take this process's shard and a
    pipeline with GPU operators and no `device_id` runs on the process's GPU (LOCAL_RANK).

    Statistics: `stats()` holds everything measured (`report()` as a table; help(stoker.stats)).
    """

    def __init__(self, batch_size=-1, num_threads=1, device_id=None, seed=-1,
                 prefetch_queue_depth=2, cpu_budget=None, py_num_workers=1,
                 py_start_method="fork", py_callback_pickler=None, enable_conditionals=False,
                 py_worker_timeout=None, output_dtype=None, output_ndim=None,
                 output_layout=None, stream_policy=None, concurrency=None, **options):
        self._setup(_stoker.PipelineOptions())
        self._output_descs = output_descs.declared(output_dtype, output_ndim, output_layout)
        output_descs.check_executor_args(stream_policy, concurrency)
        self._exec_pipelined = options.get("exec_pipelined", True)  # DALI's, for run(**inputs)
        if enable_conditionals:
            self._conditions = ConditionStack(self)
        if py_callback_pickler is not None and py_start_method == "fork":
            raise ValueError("py_callback_pickler applies to py_start_method 'spawn' or "
                             "'forkserver' (fork copies the sources without pickling)")
        self._py_workers = (py_num_workers, py_start_method, py_callback_pickler,
                            worker_timeout(py_worker_timeout))
        if device_id == types.CPU_ONLY_DEVICE_ID:  # DALI's spelling of "no GPU"
            device_id = None
        configure(self._options, dict(
            batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=seed,
            prefetch_queue_depth=prefetch_queue_depth, cpu_budget=cpu_budget, **options))

    def _setup(self, options):
        super()._setup(options)
        # py_num_workers, py_start_method, py_callback_pickler, py_worker_timeout
        self._py_workers = (1, "fork", None, None)
        self._ran = False  # run() was called (plugins restore checkpoints only before)
        self._fed_ahead = False
        self._end_delivered = False
        self._epoch_iterations = 0
        self._runs = 0  # run() calls that went to the native pipeline
        self._output_descs = (None, None, None)  # output_dtype, output_ndim, output_layout
        self._declared = None  # those, one list each per output, once built (None: none given)
        self._exec_pipelined = True
        self._to_consume, self._counted = 0, False  # empty()'s account (_count_scheduled)
        self._build_lock = threading.Lock()

    py_num_workers = property(lambda self: self._py_workers[0])
    py_start_method = property(lambda self: self._py_workers[1])
    py_worker_timeout = property(lambda self: self._py_workers[3])

    # -- building ----------------------------------------------------------------------------
    def start_py_workers(self):
        """Starts the worker processes of parallel external sources now (else build() does).
        Forking after CUDA is initialised is fine if the sources do not use CUDA (workers.py)."""
        self._define()
        _close_at_exit(self)
        self._external.start_workers(self.batch_size, *self._py_workers)

    def build(self):
        if self._native is not None:
            return
        with self._build_lock:  # the native build runs without the GIL: one build per pipeline
            if self._native is None:
                self._build()

    def _build(self):
        self._define()
        declared = output_descs.per_output(self._output_descs, len(self._outputs))
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
        self._declared = declared

    @property
    def seed(self):
        """The seed in use (builds the pipeline: a seed of -1 is drawn, or taken from the
        checkpoint, at build time)."""
        self.build()
        return self._native.seed

    # -- running -----------------------------------------------------------------------------
    def run(self, cuda_stream=None, /, **pipeline_inputs):
        """The next batch: a tuple with one stoker.Batch per output. Raises StopIteration at
        the end of an external source's data (call reset() to start its next epoch).

        `pipeline_inputs` (DALI's): batches for external sources by name, fed before this run
        (feed_input); as in DALI, only with prefetch_queue_depth=1 or exec_pipelined=False.
        `cuda_stream` (a cudaStream_t, torch or cupy stream): GPU outputs are ordered on it (it
        waits for them, and their memory is recycled only after its work)."""
        if pipeline_inputs:
            if not self._inputs_possible():
                raise RuntimeError(
                    "When using pipeline_inputs named arguments, either `prefetch_queue_depth` in "
                    "Pipeline constructor shall be set to 1 (for both devices) or "
                    "`exec_pipelined` shall be set to False. Received: prefetch_queue_depth="
                    f"{self.prefetch_queue_depth}, exec_pipelined={self._exec_pipelined}. Please "
                    "set the `prefetch_queue_depth` or `exec_pipelined` argument in the Pipeline "
                    "constructor properly or provide inputs to the Pipeline via another mean "
                    "(e.g. `feed_input` function or `source` argument in the "
                    "`fn.external_source` operator.)")
            self.build()
            for name in pipeline_inputs:
                if self._external.get(name) is None:
                    raise KeyError(f'Could not find an input operator with name "{name}"')
            for name, value in pipeline_inputs.items():
                self.feed_input(name, value)
        self._count_scheduled()
        return self._take(cuda_stream)

    def _count_scheduled(self):
        """DALI's account of batches asked for and not yet taken (empty()): the first request
        after build or reset prepares the queue's depth (one without pipelining), each later
        one a batch more; a request that meets the end of a source's data, none."""
        first = max(1, self._options.prefetch_queue_depth) if self._exec_pipelined else 1
        self._to_consume += 1 if self._counted else first
        self._counted = True

    def _take(self, cuda_stream):
        self._to_consume = max(0, self._to_consume - 1)  # taken, whatever comes of it
        try:
            batches = self._next_batches()
        except StopIteration:
            self._to_consume = 0
            raise
        self._to_consume = max(0, self._to_consume)
        if cuda_stream is not None:
            stream = _stream_handle(cuda_stream) or 1  # 0: the legacy default stream
            for b in batches:
                b._impl.prepare_for_consumer(stream)
        return batches

    def _inputs_possible(self):
        o = self._options
        return not self._exec_pipelined or (
            not o.auto_prefetch and o.prefetch_queue_depth == 1 and o.gpu_queue_depth == 1)

    def _next_batches(self):
        self.build()
        self._ran = True
        if self._end_delivered:
            raise StopIteration
        # The batches to prepare now: one, or at the first run as many as the queue holds.
        ahead = 1 if self._fed_ahead else self._options.prefetch_queue_depth
        self._fed_ahead = True
        for _ in range(ahead):
            if type(self).iter_setup is not Definition.iter_setup:
                self.iter_setup()  # feeds the sources without a callable (DALI's pattern)
            ended = self._external.any_exhausted()
            self._external.feed(self._native, 1)
            if not ended and self._external.any_exhausted():
                self._to_consume -= 1  # no batch for this request after all (empty())
        self._runs += 1
        for es in self._external.feeders():
            if es.missing(self._runs):
                self._runs -= 1
                raise RuntimeError(es.missing_message())
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
                                  stacklevel=user_stacklevel())
            # Zero-copy views of a mapped file that then shrank read zeros where its bytes
            # were (the process lives on; what stoker itself reads fails naming the file).
            for path in _stoker.take_mapping_damage():
                warnings.warn(f"'{path}' shrank while stoker had it mapped: views of its bytes "
                              f"taken before (batches still held) read zeros past its new end; "
                              f"use dont_use_mmap=True for files that change under a job",
                              RuntimeWarning, stacklevel=user_stacklevel())
        batches = tuple(Batch(o) for o in outputs)
        output_descs.check(batches, self._declared)
        return batches

    # DALI's split form of run(), as its older scripts and plugins call it.
    def schedule_run(self):
        """Asks for the next batch (it is prepared ahead anyway); outputs() returns it."""
        self.build()
        self._count_scheduled()

    def outputs(self, cuda_stream=None):
        """A batch schedule_run() asked for (as run(), `cuda_stream` too). As in DALI, the
        first schedule_run() asks for the queue's depth of batches; StopIteration when none
        is left to take."""
        if self._to_consume == 0:
            raise StopIteration
        return self._take(cuda_stream)

    share_outputs = outputs

    def output_dtype(self):
        """DALI's: the type declared for each output (`output_dtype=`), None where none is."""
        self.build()
        return list(self._declared[0]) if self._declared else [None] * len(self._outputs)

    def output_ndim(self):
        """DALI's: the dimensions declared for each output (`output_ndim=`), None where none
        are."""
        self.build()
        return list(self._declared[1]) if self._declared else [None] * len(self._outputs)

    def input_feed_count(self, input_name):
        """DALI's: how many batches external source `input_name` is fed before the first
        batch comes out — the queue's depth, as run() feeds callable sources."""
        self.build()
        if self._external.get(input_name) is None:
            known = ", ".join(sorted(self._external)) or "none"
            raise KeyError(f"The pipeline doesn't have an input named \"{input_name}\" "
                           f"(external sources: {known}).")
        return self._options.prefetch_queue_depth

    def save_graph_to_dot_file(self, filename, *, show_tensors=False, show_ids=None,
                               use_colors=False):
        """Writes the built graph (the operators the outputs need) to `filename` in Graphviz's
        dot language: an operator per node (name, operator, backend), an edge per input (and
        a node per tensor with show_tensors), coloured by backend with use_colors. show_ids
        is accepted and has no effect, as in DALI."""
        self.build()
        if show_ids is not None:
            warnings.warn('The argument "show_ids" is deprecated because it no longer has any '
                          "effect.", DeprecationWarning, stacklevel=2)
        with open(filename, "w", encoding="utf-8") as f:
            f.write(dot.graph_dot(self._nodes, [(o._node, o._index) for o in self._outputs],
                                  show_tensors, use_colors))

    def enable_api_check(self, enable):
        """DALI's switch for its check that run() and schedule_run() are not mixed; stoker
        allows mixing them, so there is nothing to switch."""

    def empty(self):
        """DALI's: no batch asked for (run() or schedule_run(); the first request asks for the
        queue's depth) is waiting to be taken."""
        return self._to_consume == 0

    def release_outputs(self):
        """Nothing to do: a batch's memory returns to the pools when its last reference goes."""

    # -- epochs ------------------------------------------------------------------------------
    def reset(self):
        """Starts the next epoch of external sources (after StopIteration)."""
        if self._end_delivered or self._external.any_exhausted():
            self._external.reset(self._native)
            self._fed_ahead = False
            self._end_delivered = False
            self._counted = False  # the next request prepares the queue's depth again
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

    # -- checkpoints -------------------------------------------------------------------------
    def checkpoint(self, filename=None):
        """The pipeline's state after the last batch run() returned, as a string (also written
        to `filename` when given). Build the same pipeline with `checkpoint=` this string to
        continue from there. Readers and random operators are covered, and external sources
        whose source is a callable (they are called from the saved epoch and iteration on, as
        DALI does); an iterable starts again."""
        self.build()
        state = self._native.checkpoint() + self._external.checkpoint_line()
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as f:
                f.write(state)
        return state

    def _forget_runs(self):
        """Marks a pipeline whose batches were all dropped unseen (an iterator's prepared first
        batch) as not run, so that _restart_from may rebuild it; readers only (external
        sources cannot give their batches again)."""
        self._ran = False
        self._fed_ahead = False
        self._runs = 0
        self._to_consume, self._counted = 0, False

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

    # -- closing -----------------------------------------------------------------------------
    def close(self):
        """Stops the pipeline: its threads, its device work and its operators end now. Batches
        already returned stay valid. Later run() calls raise RuntimeError."""
        if self._native is not None:
            self._native.close()
        self._external.close()

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
