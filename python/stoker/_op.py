"""The Python function of a native operator, made from its schema: fn's generated functions
(stoker.fn), and the operators Python compositions call by name (stoker.wrappers)."""

import inspect
import warnings
from enum import Enum

import numpy as np

from stoker import _stoker
from stoker._schema import DALI_TUNING_ARGS, SCHEMAS, Deferred, translate
from stoker.conditionals import constant
from stoker.definition import current_pipeline
from stoker.node import DataNode


def plain(value):
    """Converts enums, numpy scalars/arrays and tuples to plain Python values."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def docstring(schema):
    """help(fn.<op>): the schema's doc, inputs, outputs, backends and arguments."""
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


def pipeline_for(where):
    """The pipeline being defined; outside a definition a RuntimeError naming `where`."""
    pipe = current_pipeline()
    if pipe is None:
        raise RuntimeError(f"{where} called outside a pipeline definition: use it in a "
                           f"@stoker.pipeline_def function or inside `with pipe:`")
    return pipe


def _constant_input(pipe, value, where, k):
    try:
        return constant(pipe, value)
    except TypeError:
        raise TypeError(f"{where}: input {k} must be a DataNode (an operator's output) or a "
                        f"number or numeric array (made a constant), got "
                        f"{type(value).__name__}") from None


def _deprecated_argument(old, new):
    if new.startswith("nothing"):
        text = f"The argument `{old}` is no longer used and will be removed in a future release."
    else:
        text = f"The argument `{old}` is a deprecated alias for `{new}`. Use `{new}` instead."
    warnings.warn(text, DeprecationWarning, stacklevel=4)


def make(schema):
    """fn.<schema name>: adds a node of the operator to the pipeline being defined and returns
    its output(s); signature and docstring from the schema."""
    op_name = schema["name"]
    arg_names = {a["name"] for a in schema["args"]}
    per_sample_args = {a["name"] for a in schema["args"] if a["per_sample"]}
    n_inputs = len(schema["inputs"])

    def op(*inputs, device=None, name=None, **kwargs):
        pipe = pipeline_for(f"fn.{op_name}")
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
        # DALI 2.4's deprecated spellings (output_dtype, ...) as today's, with DALI's warning.
        kwargs = translate(f"fn.{op_name}", op_name, kwargs, arg_names, _deprecated_argument)
        if any(isinstance(v, Deferred) for v in kwargs.values()):
            from stoker import fn  # noqa: PLC0415 (fn is built from this module)
            kwargs = {k: v.draw(fn) if isinstance(v, Deferred) else v for k, v in kwargs.items()}
        args, arg_inputs = {}, {}
        for k, v in kwargs.items():
            if v is None and k in arg_names:
                continue  # None means "not given"
            if k in DALI_TUNING_ARGS and k not in arg_names:
                continue
            if isinstance(v, DataNode):
                arg_inputs[k] = v
            elif isinstance(v, np.ndarray) and v.ndim > 1 and k in per_sample_args:
                # DALI makes numpy arrays constant argument inputs: a 2-D array is one tensor
                # for every sample (multi_paste's anchors, box lists), not a nested list.
                arg_inputs[k] = constant(pipe, v)
            else:
                args[k] = plain(v)
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
    op.__name__ = op_name.rsplit(".", 1)[-1]
    op.__qualname__ = op_name
    op.__doc__ = docstring(schema)
    op.__signature__ = inspect.Signature(params)
    return op


_made = {}


def call(op_name, *inputs, **kwargs):
    """Native operator `op_name` as fn.<op_name> would call it (Python compositions use it, so
    that they need not import stoker.fn, which installs them)."""
    if op_name not in _made:
        _made[op_name] = make(SCHEMAS[op_name])
    return _made[op_name](*inputs, **kwargs)
