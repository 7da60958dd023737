"""DALI's declared outputs: Pipeline(output_dtype=, output_ndim=, output_layout=) say what each
output must be; the declarations are checked against the outputs' count at build() and every
batch run() returns is checked against them (RuntimeError naming the output), as DALI 2.4 does.
Each is a single value (for every output), a list with one entry per output, or None; None in a
list is a wildcard. Also DALI's executor enums, accepted for its scripts (stoker's executor has
one stream per stage and runs operators concurrently as it sees fit)."""

import numbers
from enum import Enum

from stoker import types


class StreamPolicy(Enum):
    """DALI's ``nvidia.dali.pipeline.StreamPolicy`` (Pipeline's ``stream_policy``): accepted and
    ignored; stoker's stages each have their own CUDA stream."""

    SINGLE = "single"
    PER_BACKEND = "per_backend"
    PER_OPERATOR = "per_operator"
    UNSPECIFIED = "unspecified"


class OperatorConcurrency(Enum):
    """DALI's ``nvidia.dali.pipeline.OperatorConcurrency`` (Pipeline's ``concurrency``):
    accepted and ignored."""

    NONE = "none"
    BACKEND = "backend"
    FULL = "full"
    UNSPECIFIED = "unspecified"


def check_executor_args(stream_policy, concurrency):
    for name, value, enum in (("stream_policy", stream_policy, StreamPolicy),
                              ("concurrency", concurrency, OperatorConcurrency)):
        if value is not None and not isinstance(value, enum):
            raise TypeError(f"`{name}` must be a stoker.pipeline.{enum.__name__} or None, got "
                            f"{value!r}")


def _each(value):
    return value if isinstance(value, (list, tuple)) else [value]


def declared(output_dtype, output_ndim, output_layout):
    """The three declarations, checked as DALI checks them when the Pipeline is made."""
    for dtype in _each(output_dtype):
        if dtype is not None and not isinstance(dtype, types.DALIDataType):
            where = " in the list" if isinstance(output_dtype, (list, tuple)) else ""
            raise TypeError(f"`output_dtype` must be either: a value from stoker.types."
                            f"DALIDataType, a list of these or None. Found type "
                            f"{type(dtype)}{where}.")
    for ndim in _each(output_ndim):
        if ndim is not None and not isinstance(ndim, numbers.Integral):  # (True is 1, as there)
            raise TypeError(f"`output_ndim` must be either: an int, a list of ints or None. "
                            f"Found type {type(ndim)}.")
        if ndim is not None and ndim < 0:
            raise ValueError(f"`output_ndim` must be non-negative. Found value {ndim}.")
    for layout in _each(output_layout):
        if layout is not None and not isinstance(layout, str):
            raise TypeError(f"`output_layout` must be either: a string, a list of strings or "
                            f"None. Found type {type(layout)}.")
    return output_dtype, output_ndim, output_layout


def per_output(descs, count):
    """The declarations as one list each of `count` entries (a single value broadcast), or
    None when nothing is declared; RuntimeError when a list's length is not `count`."""
    # An empty layout declares nothing (DALI: "layout.empty() || ..."); DALI checks the
    # lengths of the dtype and ndim lists only.
    dtype, ndim, layout = descs
    if isinstance(layout, (list, tuple)):
        layout = (list(layout) + [None] * count)[:count]
    descs = (dtype, ndim, layout)
    if all(d is None or d == "" for d in descs):
        return None
    lists = [list(d) if isinstance(d, (list, tuple)) else [d] * count for d in descs]
    lists[2] = [x or None for x in lists[2]]
    if any(len(x) != count for x in lists):
        shown = [[str(v) if isinstance(v, types.DALIDataType) else v for v in x] for x in lists]
        raise RuntimeError(f"Lengths of provided output descriptions do not match. \n"
                           f"Expected num_outputs={count}.\nReceived:\n"
                           f"output_dtype={shown[0]}\noutput_ndim={shown[1]}\n"
                           f"output_layout={shown[2]}")
    return lists


# DALI's names of types in its messages.
_DALI_NAMES = {"float32": "float", "float64": "double"}


def check(batches, lists):
    """RuntimeError for the first output of `batches` (stoker.Batch) that is not as declared."""
    if lists is None:
        return
    dtypes, ndims, layouts = lists
    for i, b in enumerate(batches):
        got = b._impl.dtype
        if dtypes[i] is not None and got != dtypes[i].value:
            raise RuntimeError(f"Data type in the output_idx={i} does not match. Expected: "
                               f"{_DALI_NAMES.get(dtypes[i].value, dtypes[i].value)}. Received: "
                               f"{_DALI_NAMES.get(got, got)}.")
        if ndims[i] is not None and b.ndim() != ndims[i]:
            raise RuntimeError(f"Number of dimensions in the output_idx={i} does not match. "
                               f"Expected: {ndims[i]}. Received: {b.ndim()}.")
        if layouts[i] is not None and b.layout() != layouts[i]:
            raise RuntimeError(f"Layout in the output_idx={i} does not match. Expected: "
                               f"{layouts[i]}. Received: {b.layout()}.")
