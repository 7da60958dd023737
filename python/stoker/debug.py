"""Debug mode (DALI's ``pipeline_def(debug=True)``): the pipeline function runs at every
``run()`` and each operator call runs at once, so its value can be printed and inspected::

    @stoker.pipeline_def(batch_size=8, num_threads=2, debug=True)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs)
        print(images)               # DataNodeDebug(decoders.image_1: 8 samples, uint8 HWC ...)
        images.get()                # the stoker.Batch itself
        return images, labels

    p = pipe()
    images, labels = p.run()

Each call site (the k-th operator call of the function) gets a pipeline of its own, made at the
first run: the operator behind external sources that take its inputs (and per-sample
arguments). Readers and random operators keep their state from run to run, so the function must
call its operators in the same order every time. It is a tool for looking at data, far slower
than the pipeline itself (each call is a pipeline step).

With enable_conditionals=True, `if`s on pipeline values run here too: a call inside a branch
sees that branch's samples (a pipeline per call site and sample count; a branch no sample takes
runs nothing), and a merge puts the branches' samples back in the batch's order."""

import collections

import numpy as np

from stoker import fn, output_descs, rewrite
from stoker.conditionals import ConditionStack
from stoker.definition import _returned, pop, push
from stoker.node import DataNode, _Expr
from stoker.runner import Pipeline

# The operator that puts the branches of an `if` back together: run here, in Python.
_MERGE = "_conditional.merge"


class DataNodeDebug(DataNode):
    """An operator's output in debug mode: the batch it gave in this run (get())."""

    def __init__(self, pipeline, node, index, name, batch):
        super().__init__(pipeline, node, index, name)
        self._batch = batch

    def get(self):
        """The batch (a stoker.Batch)."""
        return self._batch

    def __repr__(self):
        b = self._batch
        shapes = b.shape()
        text = (f"DataNodeDebug({self.name}: {len(b)} samples, {b.dtype} "
                f"{b.layout() or '(no layout)'} on the {'GPU' if b.device == 'gpu' else 'CPU'}, "
                f"shapes {shapes[:4]}{' ...' if len(shapes) > 4 else ''}")
        if len(b) and b.device != "gpu":
            first = np.array(b.at(0))
            if first.size <= 12:
                text += f", sample 0: {first.ravel().tolist()}"
            elif first.size:
                text += (f", sample 0: min {first.min()}, max {first.max()}, "
                         f"mean {first.mean():.4g}")
        return text + ")"


class _NoSamples:
    """The value of an operator in an `if` branch that no sample of this batch takes."""

    device, dtype = "cpu", None

    def layout(self):
        return ""

    def shape(self):
        return []

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())


class DebugPipeline(Pipeline):
    """A pipeline in debug mode (made by pipeline_def(debug=True)): run() calls the function."""

    def __init__(self, func, args, kwargs, **pipeline_kwargs):
        super().__init__(**pipeline_kwargs)
        self._conditional = self._conditions is not None
        if self._conditional:
            func = rewrite.convert(func, strict=True)
        self._func, self._args, self._kwargs = func, args, kwargs
        self._sites = {}    # (call number, samples) -> its pipeline
        self._call = 0
        self._fed = {}      # external source name -> batches fed (feed_input), in order

    def build(self):
        pass  # each call site's pipeline is built at its first run

    def feed_input(self, data_node, data, layout=None, cuda_stream=None, use_copy_kernel=False):
        """DALI's debug-mode feed_input: the batch waits, under the external source's name (or
        its DataNode's), for a run whose pipeline function calls that source; feeds queue up,
        one batch per run. A source nothing calls keeps what it was fed, as in DALI."""
        name = data_node.name if isinstance(data_node, DataNode) else data_node
        self._fed.setdefault(name, collections.deque()).append((data, layout))

    def run(self, cuda_stream=None, /, **pipeline_inputs):
        """The function run once more, eagerly; `pipeline_inputs` fed (feed_input) first."""
        for name, value in pipeline_inputs.items():
            self.feed_input(name, value)
        return super().run(cuda_stream)

    def _inputs_possible(self):
        return True  # each run takes its feeds at once

    def _fed_batch(self, name, external):
        """What a fed external source (`external`, without a source) gives this run."""
        fed = self._fed.get(name)
        if external.source is not None:
            if fed:
                raise RuntimeError(f"Cannot use `feed_input` on the external source '{name}' "
                                   f"with a `source` argument specified.")
            return None
        if not fed:  # (DALI waits here for ever)
            raise RuntimeError(f"debug mode: external source '{name}' has no batch fed for "
                               f"this run: call feed_input('{name}', batch) or "
                               f"run({name}=batch) first")
        return fed.popleft()

    def _next_batches(self):  # run(), outputs(): the function runs again, eagerly
        self._call = 0
        self._nodes = []
        if self._conditional:  # the `if` levels of this run's trace
            self._conditions = ConditionStack(self)
        push(self)
        try:
            outputs = self._func(*self._args, **self._kwargs)
        finally:
            pop()
        batches = tuple(self._value(o).get() for o in _returned(outputs, self._func.__name__))
        output_descs.check(batches, output_descs.per_output(self._output_descs, len(batches)))
        return batches

    def _value(self, x):
        if isinstance(x, _Expr):
            x = x._materialize()
        if not isinstance(x, DataNodeDebug):
            raise TypeError(f"debug mode: expected an operator's output, got {type(x).__name__}")
        return x

    def _add_node(self, op, inputs, args, arg_inputs, name, device, num_outputs,
                  external=None):
        traced = self._conditions is not None and not self._conditions.raw
        if traced:  # values from outside the current `if` branch come in split
            inputs = [self._conditions.input(x) for x in inputs]
            arg_inputs = {k: self._conditions.input(v) for k, v in arg_inputs.items()}
        values = [self._value(x) for x in inputs]
        arg_values = {k: self._value(v) for k, v in arg_inputs.items()}
        k = self._call
        self._call += 1
        fed = self._fed_batch(name, external) if op == "external_source" and external else None
        # Inside an `if` branch a call sees some of the batch's samples: a pipeline per count.
        first = values[0] if values else next(iter(arg_values.values()), None)
        samples = len(first.get()) if first is not None else self._options.batch_size
        if op == _MERGE:
            batches, placed = [self._merge(k, *values)], values[0].get().device
        elif fed is not None:  # an external source given its batch by feed_input
            data, layout = fed
            site = self._site(k, len(data), op, [], args, {}, name, device, num_outputs, external)
            site["pipe"].feed_input(name, data, layout=layout)
            batches, placed = site["pipe"].run(), site["device"]
        elif samples == 0:  # a branch no sample takes: nothing to run
            on_gpu = any(v.get().device == "gpu" for v in values)
            batches, placed = [_NoSamples()] * num_outputs, "gpu" if on_gpu else device or "cpu"
        else:
            site = self._site(k, samples, op, values, args, arg_values, name, device,
                              num_outputs, external)
            for j, x in enumerate(values):
                site["pipe"].feed_input(f"in{j}", list(x.get()), layout=x.get().layout())
            for a, x in arg_values.items():
                site["pipe"].feed_input(f"arg_{a}", list(x.get()), layout=x.get().layout())
            batches, placed = site["pipe"].run(), site["device"]
        index = len(self._nodes)
        label = name or f"{op}_{k}"
        self._nodes.append({"op": op, "name": label, "device": placed})
        outs = [DataNodeDebug(self, index, i, label if num_outputs == 1 else f"{label}[{i}]", b)
                for i, b in enumerate(batches)]
        result = outs[0] if num_outputs == 1 else tuple(outs)
        if traced:
            self._conditions.produced(result, bool(inputs or arg_inputs))
        return result

    def _site(self, k, samples, op, *make_args):
        known = next((s["op"] for (c, _), s in self._sites.items() if c == k), op)
        if known != op:
            raise RuntimeError(f"debug mode: call {k} of the pipeline function is {op} in this "
                               f"run but was {known} before; call the operators in the "
                               f"same order every run")
        site = self._sites.get((k, samples))
        if site is None:
            site = self._make_site(k, samples, op, *make_args)
            self._sites[(k, samples)] = site
        return site

    def _merge(self, k, if_values, else_values, predicate):
        """The two branches' samples in the batch's order (the merge, as the native one)."""
        yes, no = if_values.get(), else_values.get()
        if not len(yes) or not len(no):
            return no if not len(yes) else yes
        for what, a, b in (("type", yes.dtype, no.dtype), ("layout", yes.layout(), no.layout()),
                           ("dimensions", len(yes.shape()[0]), len(no.shape()[0]))):
            if a != b:
                raise ValueError(f"the `if` and `else` branches give one variable values of "
                                 f"different kinds, which cannot be merged into one batch: "
                                 f"{what} {a} in the `if` branch, {b} in the `else` branch")
        taken = {True: iter(list(yes)), False: iter(list(no))}
        pred = predicate.get()
        pred = pred.as_cpu() if pred.device == "gpu" else pred
        merged = [next(taken[bool(np.array(pred.at(i)))]) for i in range(len(pred))]
        site = self._site(k, len(merged), _MERGE, [if_values], {}, {}, None,
                          yes.device, 1, None)
        site["pipe"].feed_input("in0", merged, layout=yes.layout())
        return site["pipe"].run()[0]

    def _make_site(self, k, samples, op, inputs, args, arg_inputs, name, device, num_outputs,
                   external):
        o = self._options
        seed = o.seed if o.seed >= 0 else -1
        pipe = Pipeline(batch_size=samples, num_threads=o.num_threads,
                        device_id=o.device_id,
                        seed=seed if seed < 0 else seed + 7919 * (k + 1), prefetch_queue_depth=1)
        with pipe:
            ins = [fn.external_source(name=f"in{j}",
                                      device="gpu" if x.get().device == "gpu" else "cpu")
                   for j, x in enumerate(inputs)]
            ains = {a: fn.external_source(name=f"arg_{a}") for a in arg_inputs}
            if op == _MERGE:  # the merged samples, fed in order
                outs = ins[0]
            else:
                outs = pipe._add_node(op, ins, args, ains, name, device, num_outputs,
                                      external=external)
            pipe.set_outputs(*(outs if isinstance(outs, tuple) else (outs,)))
        pipe.build()
        placed = pipe._nodes[-1]["device"]
        return {"op": op, "pipe": pipe, "device": placed}
