"""Operators, generated at import from the native schemas: ``fn.decoders.image``,
``fn.resize``, ``fn.random.coin_flip``… Each function's signature and docstring come from its
schema; calling one inside a pipeline definition adds a node and returns its output(s)."""

import inspect
import sys
import types as _pytypes
import warnings
from enum import Enum

import numpy as np

from stoker import _stoker
from stoker.external import ExternalSource
from stoker.pipeline import DataNode, _current_pipeline

_RESERVED = ("device", "name")

# Arguments that tune DALI's own machinery (its memory pre-allocation, thread pinning, stage
# splitting, output size hints) and have nothing to tune here: accepted, so that DALI scripts
# run unchanged, and ignored (docs/dali_differences.md).
DALI_TUNING_ARGS = frozenset({
    "bytes_per_sample_hint", "preserve", "device_memory_padding", "host_memory_padding",
    "device_memory_padding_jpeg2k", "host_memory_padding_jpeg2k", "preallocate_width_hint",
    "preallocate_height_hint", "affine", "split_stages", "use_chunk_allocator",
    "use_fast_idct", "memory_stats", "use_batched_decode", "minibatch_size",
    "skip_cached_images", "cache_size", "cache_threshold", "cache_type", "cache_debug",
    "cache_batch_copy", "prefetch_queue_depth_hint",
    "seed",  # on operators that draw nothing
})


def _plain(value):
    """Converts enums, numpy scalars/arrays and tuples to plain Python values."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _docstring(schema):
    lines = [schema["doc"], ""]
    if schema["inputs"]:
        lines.append("Inputs: " + ", ".join(schema["inputs"]))
    lines.append("Outputs: " + (", ".join(schema["outputs"]) or "depend on the arguments"))
    lines.append("Backends: " + ", ".join(schema["backends"]))
    if schema["sequences"]:
        lines.append("Sequences: FHWC/FCHW clips are processed frame by frame, one random "
                     "decision per clip; arguments given through fn.per_frame vary by frame.")
    lines += ["", "Keyword arguments:"]
    for a in schema["args"]:
        default = "required" if a["required"] else f"default {a.get('default', None)!r}"
        per_sample = ", per-sample tensor allowed" if a["per_sample"] else ""
        lines.append(f"  {a['name']} ({a['type']}, {default}{per_sample}): {a['doc']}")
    lines.append("  device (str, default: 'gpu' when an input is on the GPU, else 'cpu'): where the "
                 "operator runs.")
    lines.append("  name (str, optional): a unique name (readers: for epoch_size/reader_meta).")
    return "\n".join(lines)


def _constant_input(pipe, value, where, k):
    from stoker.conditionals import constant
    try:
        return constant(pipe, value)
    except TypeError:
        raise TypeError(f"{where}: input {k} must be a DataNode (an operator's output) or a "
                        f"number or numeric array (made a constant), got "
                        f"{type(value).__name__}") from None


def _make_op(schema):
    op_name = schema["name"]
    arg_names = {a["name"] for a in schema["args"]}
    n_inputs = len(schema["inputs"])

    def op(*inputs, device=None, name=None, **kwargs):
        pipe = _current_pipeline()
        if pipe is None:
            raise RuntimeError(f"fn.{op_name} called outside a pipeline definition: use it in a "
                               f"@stoker.pipeline_def function or inside `with pipe:`")
        variadic = schema["variadic_inputs"]
        fewest = n_inputs - schema["optional_inputs"]
        if not (fewest <= len(inputs) <= n_inputs or (variadic and len(inputs) > n_inputs)):
            expected = ", ".join(schema["inputs"]) or "none"
            more = " or more" if variadic else ""
            count = f"{fewest} to {n_inputs}" if fewest < n_inputs else f"{n_inputs}"
            raise TypeError(f"fn.{op_name} expects {count}{more} input(s) ({expected}), "
                            f"got {len(inputs)}")
        # Python numbers and arrays given as inputs become constant nodes (DALI's rule).
        inputs = tuple(x if isinstance(x, DataNode) or x is None else
                       _constant_input(pipe, x, f"fn.{op_name}", k) for k, x in enumerate(inputs))
        args, arg_inputs = {}, {}
        for k, v in kwargs.items():
            if v is None and k in arg_names:
                continue  # None means "not given"
            if k in DALI_TUNING_ARGS and k not in arg_names:
                continue
            if isinstance(v, DataNode):
                arg_inputs[k] = v
            else:
                args[k] = _plain(v)
        n_out = len(schema["outputs"])
        if schema["dynamic_outputs"]:
            n_out = len(_stoker.output_names(op_name, args, len(inputs)))
        elif schema["outputs_from"]:  # one output per entry of a list argument
            entries = args.get(schema["outputs_from"])
            if not entries:
                raise TypeError(f"fn.{op_name} needs `{schema['outputs_from']}`")
            n_out = len(entries) if isinstance(entries, list) else 1
        return pipe._add_node(op_name, inputs, args, arg_inputs, name, device, n_out)

    first_optional = len(schema["inputs"]) - schema["optional_inputs"]
    params = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY,
                                default=None if k >= first_optional else inspect.Parameter.empty)
              for k, name in enumerate(schema["inputs"])]
    if schema["variadic_inputs"]:
        params.append(inspect.Parameter("more", inspect.Parameter.VAR_POSITIONAL))
    for a in schema["args"]:
        default = inspect.Parameter.empty if a["required"] else a.get("default", None)
        params.append(inspect.Parameter(a["name"], inspect.Parameter.KEYWORD_ONLY,
                                        default=default))
    # device=None: "gpu" when an input is on the GPU, else "cpu" (DALI's placement rule).
    params.append(inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    short = op_name.rsplit(".", 1)[-1]
    op.__name__ = short
    op.__qualname__ = op_name
    op.__doc__ = _docstring(schema)
    op.__signature__ = inspect.Signature(params)
    return op


def external_source(source=None, num_outputs=None, *, batch=None, cycle=None, layout=None,
                    dtype=None, ndim=None, name=None, device="cpu", no_copy=None, parallel=None,
                    prefetch_queue_depth=None, bytes_per_sample_hint=None, batch_info=False,
                    cuda_stream=None, use_copy_kernel=None, blocking=None):
    """Data from Python. `source` is a callable returning a batch (called with the iteration
    number if it takes an argument, or a types.BatchInfo with batch_info=True), an iterable of
    batches, a generator function (called for each epoch), or with batch=False a callable
    taking a types.SampleInfo and returning one sample. Without a source, batches are given with
    `pipe.feed_input(node, batch)` before each run() (DALI's iter_setup does it). A batch is a
    list of arrays or one array whose first axis is the batch: numpy, torch, JAX, cupy, any
    DLPack producer or CUDA array interface object. With `num_outputs`, the source returns a
    tuple of that many batches (samples, with batch=False) and a tuple of outputs is returned;
    `layout`, `dtype` and `ndim` may then be lists (one per output). When the source raises
    StopIteration (or an iterable ends and cycle is False/"no"/"raise"), run() raises
    StopIteration; reset() starts the next epoch. cycle=True/"quiet" repeats an iterable.

    parallel=True: the pipeline's worker processes (Pipeline's py_num_workers, py_start_method)
    run the source, `prefetch_queue_depth` batches ahead (default 2; DALI's is 1), and hand the
    samples over
    through shared memory without copying (stoker.workers); batch defaults to False then.
    `bytes_per_sample_hint` sizes the first shared-memory chunks.

    device="cpu" takes host data; device="gpu" takes CUDA data (ordered after the producer's
    stream, without blocking the host) or host data (uploaded). no_copy=False (default): the
    batch is copied when fed, so the source may reuse its arrays at once. no_copy=True: the
    pipeline uses the arrays themselves, keeping a reference until it is done with them; they
    must stay unchanged until then (return new arrays each time, or a fixed list of arrays that
    never change). cuda_stream, use_copy_kernel and blocking are accepted for DALI's scripts
    (GPU data is ordered through DLPack; a missing batch is an error, never a wait)."""
    pipe = _current_pipeline()
    if pipe is None:
        raise RuntimeError("fn.external_source called outside a pipeline definition")
    if device not in ("cpu", "gpu"):
        raise ValueError(f"fn.external_source: device must be 'cpu' or 'gpu', got {device!r}")
    if num_outputs is not None:
        if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 1:
            raise ValueError(f"fn.external_source: num_outputs must be a positive integer, got "
                             f"{num_outputs!r}")
        if name is not None:
            raise ValueError("fn.external_source: name cannot be given with num_outputs (each "
                             "output is a node of its own)")
    parallel = bool(parallel)
    if batch is None:
        batch = not parallel
    n = num_outputs or 1
    per_output = {}
    for key, value in (("layout", layout), ("dtype", dtype), ("ndim", ndim)):
        values = list(value) if isinstance(value, (list, tuple)) else [value] * n
        if len(values) != n:
            raise ValueError(f"fn.external_source: {key} has {len(values)} values for "
                             f"{n} outputs")
        per_output[key] = values
    index = len(pipe._nodes)
    base = name or f"external_source_{index}"
    names = [base] if num_outputs is None else [f"{base}[{k}]" for k in range(n)]
    layouts = [lay or "" for lay in per_output["layout"]]

    def node(k, feeder):
        args = {"layout": layouts[k]}
        if per_output["dtype"][k] is not None:
            args["dtype"] = _plain(per_output["dtype"][k])
        if per_output["ndim"][k] is not None:
            args["ndim"] = int(per_output["ndim"][k])
        return pipe._add_node("external_source", [], args, {}, names[k], device, 1,
                              external=feeder)

    if source is None and num_outputs is not None:  # fed node by node with feed_input
        return tuple(node(k, ExternalSource([names[k]], None, batch, cycle, [layouts[k]],
                                            pipe.batch_size, device, no_copy))
                     for k in range(n))
    feeder = ExternalSource(names, source, batch, cycle, layouts, pipe.batch_size, device,
                            no_copy, num_outputs, batch_info, parallel, prefetch_queue_depth,
                            bytes_per_sample_hint, name=base)
    outs = tuple(node(k, feeder) for k in range(n))
    return outs if num_outputs is not None else outs[0]


def _tfrecord(path, *, features, index_path=None, device="cpu", name=None, **kwargs):
    """Reads tf.train.Example records from TFRecord files. `features` maps keys to
    stoker.tfrecord.FixedLenFeature / VarLenFeature; returns a dict of outputs by key.
    Other keyword arguments: those of the native schema (check_crc, shard_id, num_shards,
    random_shuffle, shuffle, stick_to_shard, pad_last_batch, initial_fill, lazy_init)."""
    from stoker import tfrecord

    pipe = _current_pipeline()
    if pipe is None:
        raise RuntimeError("fn.readers.tfrecord called outside a pipeline definition")
    if not features:
        raise ValueError("fn.readers.tfrecord needs `features`")
    paths = [path] if isinstance(path, str) else list(path)
    indexes = [] if index_path is None else ([index_path] if isinstance(index_path, str)
                                             else list(index_path))
    names = list(features)
    args = {
        "path": paths, "index_path": indexes, "feature_names": names,
        "feature_types": [features[k].dtype for k in names],
        "feature_var_len": [int(features[k].var_len) for k in names],
        "feature_shapes": [",".join(str(d) for d in features[k].shape) for k in names],
        "feature_defaults": [tfrecord._default_text(features[k]) for k in names],
    }
    args.update({k: _plain(v) for k, v in kwargs.items()})
    outs = pipe._add_node("readers.tfrecord", [], args, {}, name, device, len(names))
    outs = outs if isinstance(outs, tuple) else (outs,)
    return dict(zip(names, outs))


def _choice(a, *, p=None, shape=None, device="cpu", name=None):
    """Draws from `a` (a list of values, an integer n for 0..n-1, or a DataNode holding a 1-D
    list per sample) with probabilities `p` (uniform when None), one tensor of `shape` per
    sample. int32 output when the values are integers, float32 otherwise."""
    pipe = _current_pipeline()
    if pipe is None:
        raise RuntimeError("fn.random.choice called outside a pipeline definition")
    args, arg_inputs = {}, {}
    if isinstance(a, DataNode):
        arg_inputs["a"] = a
        args["a_is_list"] = True
    elif isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        args["a"], args["integer"] = [int(a)], True
    else:
        values = list(a)
        if not values:
            raise ValueError("fn.random.choice: `a` is empty")
        args["a"] = [float(v) for v in values]
        args["a_is_list"] = True
        args["integer"] = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                              for v in values)
    if isinstance(p, DataNode):
        arg_inputs["p"] = p
    elif p is not None:
        args["p"] = [float(v) for v in p]
    if shape is not None:
        args["shape"] = [int(shape)] if isinstance(shape, int) else [int(s) for s in shape]
    return pipe._add_node("random.choice", [], args, arg_inputs, name, device, 1)


def namespace(module, path, doc):
    """The nested module `module`.path[0].path[1]... (made on first use, registered in
    sys.modules), documented as doc.format(name) (fn's and ops's namespaces)."""
    target = module
    for p in path:
        if not hasattr(target, p):
            ns = _pytypes.ModuleType(f"{target.__name__}.{p}")
            ns.__doc__ = doc.format(p)
            setattr(target, p, ns)
            sys.modules[ns.__name__] = ns
        target = getattr(target, p)
    return target


_PUBLIC = []  # what dir(fn) lists: the operators and their namespaces


def _resolve(module, dotted):
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def _deprecated(old, new, op):
    """fn.<old>: DALI's deprecated name of fn.<new> (`op`; the schema's deprecated_names), which
    warns as DALI does and runs `op`."""

    def alias(*args, **kwargs):
        warnings.warn(f"WARNING: `stoker.fn.{old}` is now deprecated. Use `stoker.fn.{new}` "
                      f"instead.", DeprecationWarning, stacklevel=2)
        return op(*args, **kwargs)

    alias.__name__, alias.__qualname__ = old.rsplit(".", 1)[-1], old
    alias.__doc__ = f"Deprecated: DALI's older name of fn.{new}.\n\n{op.__doc__ or ''}"
    alias.__signature__ = inspect.signature(op)
    return alias


def __dir__():
    return sorted(_PUBLIC)


def _install():
    module = sys.modules[__name__]
    for schema in _stoker.schemas():
        if schema["name"] in ("external_source", "readers.tfrecord", "random.choice",
                              "python_function"):
            continue  # Python wrappers (above) add the source handling / features dict
        parts = schema["name"].split(".")
        target = namespace(module, parts[:-1], "stoker.fn.{} operators")
        setattr(target, parts[-1], _make_op(schema))
    native = {s["name"]: s for s in _stoker.schemas()}
    module.readers.tfrecord = _tfrecord
    module.random.choice = _choice
    from stoker import python_function as _pf

    module.python_function = _pf.python_function
    module.torch_python_function = _pf.torch_python_function
    module.dl_tensor_python_function = _pf.python_function  # DALI's name for the DLPack form
    # What a user passes: features instead of the native schema's per-feature lists.
    tf_schema = dict(native["readers.tfrecord"])
    tf_schema["args"] = [a for a in tf_schema["args"] if not a["name"].startswith("feature_")]
    _tfrecord.__doc__ = _tfrecord.__doc__ + "\n\n" + _docstring(tf_schema)
    _tfrecord.__qualname__ = _tfrecord.__name__ = "tfrecord"
    _choice.__qualname__ = _choice.__name__ = "choice"
    aliases = {old: s["name"] for s in native.values() for old in s["deprecated_names"]}
    for old, new in aliases.items():
        *path, short = old.split(".")
        setattr(namespace(module, path, "stoker.fn.{} operators"), short,
                _deprecated(old, new, _resolve(module, new)))
    _PUBLIC.extend(sorted({name.split(".")[0] for name in list(native) + list(aliases)
                           if not name.startswith("_")} |
                          {"torch_python_function", "dl_tensor_python_function"}))
    for space in {s["name"].split(".")[0] for s in native.values() if "." in s["name"]}:
        ns = getattr(module, space)
        ns.__dir__ = (lambda ns=ns: sorted(k for k in vars(ns) if not k.startswith("_")))


_install()
