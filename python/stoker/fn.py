"""Operators, generated at import from the native schemas: ``fn.decoders.image``,
``fn.resize``, ``fn.random.coin_flip``… Each function's signature and docstring come from its
schema; calling one inside a pipeline definition adds a node and returns its output(s)."""

import inspect
import sys
import types as _pytypes
from enum import Enum

import numpy as np

from stoker import _stoker
from stoker.pipeline import DataNode, _current_pipeline, _ExternalSource

_RESERVED = ("device", "name")


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
    lines.append("Outputs: " + ", ".join(schema["outputs"]))
    lines.append("Backends: " + ", ".join(schema["backends"]))
    lines += ["", "Keyword arguments:"]
    for a in schema["args"]:
        default = "required" if a["required"] else f"default {a.get('default', None)!r}"
        per_sample = ", per-sample tensor allowed" if a["per_sample"] else ""
        lines.append(f"  {a['name']} ({a['type']}, {default}{per_sample}): {a['doc']}")
    lines.append("  device (str, default 'cpu'): where the operator runs.")
    lines.append("  name (str, optional): a unique name (readers: for epoch_size/reader_meta).")
    return "\n".join(lines)


def _make_op(schema):
    op_name = schema["name"]
    arg_names = {a["name"] for a in schema["args"]}
    n_inputs = len(schema["inputs"])

    def op(*inputs, device="cpu", name=None, **kwargs):
        pipe = _current_pipeline()
        if pipe is None:
            raise RuntimeError(f"fn.{op_name} called outside a pipeline definition: use it in a "
                               f"@stoker.pipeline_def function or inside `with pipe:`")
        if len(inputs) != n_inputs:
            expected = ", ".join(schema["inputs"]) or "none"
            raise TypeError(f"fn.{op_name} expects {n_inputs} input(s) ({expected}), "
                            f"got {len(inputs)}")
        args, arg_inputs = {}, {}
        for k, v in kwargs.items():
            if v is None and k in arg_names:
                continue  # None means "not given"
            if isinstance(v, DataNode):
                arg_inputs[k] = v
            else:
                args[k] = _plain(v)
        return pipe._add_node(op_name, inputs, args, arg_inputs, name, device,
                              len(schema["outputs"]))

    params = [inspect.Parameter(i, inspect.Parameter.POSITIONAL_ONLY) for i in schema["inputs"]]
    for a in schema["args"]:
        default = inspect.Parameter.empty if a["required"] else a.get("default", None)
        params.append(inspect.Parameter(a["name"], inspect.Parameter.KEYWORD_ONLY,
                                        default=default))
    params.append(inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default="cpu"))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    short = op_name.rsplit(".", 1)[-1]
    op.__name__ = short
    op.__qualname__ = op_name
    op.__doc__ = _docstring(schema)
    op.__signature__ = inspect.Signature(params)
    return op


def external_source(source=None, *, batch=True, cycle=False, layout=None, dtype=None,
                    name=None, device="cpu"):
    """Data from Python. `source` is a callable returning a batch (called with the iteration
    number if it takes an argument), an iterable of batches, or with batch=False a callable
    taking a SampleInfo and returning one sample. A batch is a list of arrays (numpy, or any
    array with __array__ / DLPack on the CPU) or one array whose first axis is the batch. When
    the source raises StopIteration (or an iterable ends and cycle is False), run() raises
    StopIteration; reset() starts the next epoch."""
    pipe = _current_pipeline()
    if pipe is None:
        raise RuntimeError("fn.external_source called outside a pipeline definition")
    if source is None:
        raise TypeError("fn.external_source needs a `source`")
    index = len(pipe._nodes)
    node_name = name or f"external_source_{index}"
    feeder = _ExternalSource(node_name, source, batch, cycle, layout, pipe.batch_size)
    args = {"layout": layout or ""}
    if dtype is not None:
        args["dtype"] = _plain(dtype)
    return pipe._add_node("external_source", [], args, {}, node_name, device, 1,
                          external=feeder)


def _install():
    module = sys.modules[__name__]
    for schema in _stoker.schemas():
        if schema["name"] == "external_source":
            continue  # the Python wrapper above adds the source handling
        parts = schema["name"].split(".")
        target = module
        for p in parts[:-1]:
            if not hasattr(target, p):
                ns = _pytypes.ModuleType(f"{target.__name__}.{p}")
                ns.__doc__ = f"stoker.fn.{p} operators"
                setattr(target, p, ns)
                sys.modules[ns.__name__] = ns
            target = getattr(target, p)
        setattr(target, parts[-1], _make_op(schema))


_install()
