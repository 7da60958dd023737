"""A pipeline's definition: the operator nodes that ``fn.*`` calls record while the pipeline is
being defined (inside ``with pipe:``, a ``@pipeline_def`` function or a subclass's
``define_graph``), its outputs, the external sources fed from Python, and its serialized form.
stoker.runner.Pipeline builds and runs it; stoker.stats measures it.

Recording is separate from running so that the modules that record (fn, the Python wrappers,
DataNode's methods, conditionals) need nothing of the runner: this module imports nothing that
imports it back."""

import threading

from stoker import _schema, rewrite, serialize
from stoker._caller import caller_location
from stoker.distributed import _distributed_shard
from stoker.external import ExternalSources
from stoker.node import DataNode

_local = threading.local()  # .stack: the pipelines being defined on this thread, innermost last


def current_pipeline():
    """The pipeline being defined on this thread (None outside a definition)."""
    stack = getattr(_local, "stack", [])
    return stack[-1] if stack else None


_current_pipeline = current_pipeline  # the name earlier modules (and plugins) import


def push(pipe):
    """Makes `pipe` the pipeline being defined (until pop())."""
    if not hasattr(_local, "stack"):
        _local.stack = []
    _local.stack.append(pipe)


def pop():
    _local.stack.pop()


def _returned(outputs, who):
    """What a pipeline function (or define_graph) returned, as a tuple of DataNodes."""
    if isinstance(outputs, DataNode):
        return (outputs,)
    if not isinstance(outputs, (tuple, list)):
        raise TypeError(f"{who} must return DataNodes (operator outputs), got "
                        f"{type(outputs).__name__}")
    return tuple(outputs)


class Definition:
    """The definition half of stoker.Pipeline: nodes, outputs, define_graph/set_outputs,
    feed_input's sources and serialize(). Holds the options (`stoker.PipelineOptions`)."""

    def _setup(self, options):
        self._options = options  # stoker.PipelineOptions: every option, once
        self._nodes = []
        self._outputs = None
        self._external = ExternalSources()
        self._conditions = None  # enable_conditionals: the `if` levels being traced
        self._native = None  # the built native pipeline (stoker.runner)

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

    def __enter__(self):
        push(self)
        return self

    def __exit__(self, *exc):
        pop()
        return False

    def _add_node(self, op, inputs, args, arg_inputs, name, device, num_outputs,
                  external=None):
        """Records a node of operator `op` (what every fn function calls); its DataNode(s)."""
        if self._native is not None:
            raise RuntimeError("the pipeline is already built; define operators before build()")
        if device == "gpu" and op in _schema.GPU_BY_COPY:
            result = self._add_node(op, inputs, args, arg_inputs, name, "cpu", num_outputs,
                                    external)
            copied = [x.gpu() for x in (result if num_outputs > 1 else (result,))]
            return copied[0] if num_outputs == 1 else tuple(copied)
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
        if _schema.is_reader(op) and not _schema.SHARD_ARGS & (set(args) | set(arg_inputs)):
            auto = _distributed_shard()  # each process of a job reads its shard
            args = {**args, **auto}
        index = len(self._nodes)
        if name is None:
            name = f"{op}_{index}"
        self._nodes.append({
            "op": op, "name": name, "device": device, "defined_at": caller_location(),
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

    def _define(self):
        """Runs a subclass's define_graph (once) and checks that there are outputs."""
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if not self._outputs and type(self).define_graph is not Definition.define_graph:
            graph = self.define_graph
            if self._conditions is not None:  # its `if`s on pipeline values become branches
                graph = rewrite.convert(type(self).define_graph, strict=True).__get__(self)
            with self:  # a subclass's graph (DALI's class-based API, stoker.ops)
                outputs = graph()
            self.set_outputs(*_returned(outputs, f"{type(self).__name__}.define_graph"))
        if not self._outputs:
            raise ValueError("the pipeline has no outputs: return them from the @pipeline_def "
                             "function or call set_outputs()")

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
        es.feed_input(self._native, data, layout)

    def build(self):
        raise NotImplementedError  # stoker.runner.Pipeline

    # -- the serialized form (stoker.serialize) ------------------------------------------------
    def serialize(self, define_graph=None, filename=None, *, path=None):
        """The pipeline's definition as JSON (a versioned schema, "stoker.pipeline" version
        2): its options, every operator node (op, name, device, inputs, arguments and argument
        inputs) and the outputs. `Pipeline.deserialize()` rebuilds it; the same seed gives the
        same batches. The shard a reader took from a distributed job's environment is left out
        (the loading process takes its own). Written to `filename` (or `path`; a path as the
        first argument works too) when given. `define_graph` (DALI's, deprecated there): a
        function returning the outputs of a pipeline that has none yet. Raises ValueError for
        an external_source (its Python source cannot be serialized)."""
        if define_graph is not None and not callable(define_graph):
            define_graph, path = None, define_graph  # serialize("pipe.json")
        if filename is not None and path is not None:
            raise ValueError("serialize: give the file as `filename` or `path`, not both")
        if define_graph is not None and not self._outputs:  # (ignored once there is a graph)
            defined = len(self._nodes)
            try:
                with self:
                    self.set_outputs(*_returned(define_graph(), "define_graph"))
            except BaseException:
                del self._nodes[defined:]  # what the failed function recorded
                raise
        elif not self._outputs and type(self).define_graph is not Definition.define_graph:
            self._define()  # a subclass's define_graph (DALI's class-based API)
        return serialize.to_json(self, filename if filename is not None else path)

    # -- DALI's current-pipeline stack (what `with pipe:` does) ------------------------------
    @staticmethod
    def current():
        """The pipeline being defined on this thread (None outside a definition)."""
        return current_pipeline()

    @staticmethod
    def push_current(pipeline):
        """Makes `pipeline` the one being defined, until pop_current(); returns the previous
        one (DALI's; `with pipeline:` does both)."""
        prev = current_pipeline()
        push(pipeline)
        return prev

    @staticmethod
    def pop_current():
        """Restores the pipeline that push_current() replaced."""
        pop()

    @classmethod
    def deserialize(cls, serialized, **options):
        """A pipeline from `serialize()`'s JSON (the text, or a path to it). Keyword arguments
        override the saved options (e.g. device_id=1, num_threads=8, checkpoint=...)."""
        return serialize.from_json(cls, serialized, options)
