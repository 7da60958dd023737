"""Subscripts of DataNodes (``x[1]``, ``x[:, 1:3]``, ``x[::-1]``, ``x[i]`` with a per-sample
DataNode ``i``, ``x[stoker.newaxis]``), as DALI's ``DataNode.__getitem__``: per axis an index
(the axis is dropped; negative counts from the end; out of range is an error when the pipeline
runs), a range lo:hi:step (Python's slice rules), ``None`` or ``:`` for the whole axis, and
``newaxis`` (optionally named: ``newaxis("F")``) for a new axis of extent 1. Axes past the
subscripts are kept whole. Ellipsis is not supported (neither is it in DALI).

It builds one native ``_tensor_subscript`` node (new axes included), or
``_subscript_dim_check`` where nothing is picked (``x[:, :]``)."""

import numbers

import numpy as np


class _NewAxis:
    """``stoker.newaxis``: a new axis of extent 1 in a subscript; ``newaxis("C")`` also names
    it in the layout (DALI's nvidia.dali.newaxis)."""

    def __init__(self, name=None):
        if name is not None:
            if not isinstance(name, str):
                raise TypeError("Axis name must be a single-character string")
            if len(name) != 1:
                raise ValueError("Axis name must be a single-character string")
        self._name = name

    @property
    def name(self):
        return self._name

    def __call__(self, name=None):
        return _NewAxis(name)

    def __repr__(self):
        return "stoker.newaxis" + (f"({self._name!r})" if self._name else "")


newaxis = _NewAxis()


def _bound(value, node_type):
    """An index or slice bound: a DataNode (per-sample), or an integer constant."""
    if value is None or isinstance(value, node_type):
        return value
    if isinstance(value, (bool, numbers.Integral, np.integer)):
        return int(value)
    raise TypeError(f"Invalid type for an index: {type(value).__name__} (indices and slice "
                    f"bounds are integers or DataNodes)")


def subscript(node, val, DataNode):  # noqa: N803 (the class, passed by stoker.node)
    """node[val] (DataNode.__getitem__). DataNode: the class of per-sample bounds (given by
    stoker.node, which imports this module)."""
    subs = []        # per subscript: (at, lo, hi, step)
    new_axes = []    # positions in the result
    names = []
    d = 0            # axes of the result so far
    for idx in val if isinstance(val, tuple) else (val,):
        if idx is None:
            subs.append((None, None, None, None))  # as DALI: None is ":", not a new axis
            d += 1
        elif isinstance(idx, slice):
            subs.append((None, _bound(idx.start, DataNode), _bound(idx.stop, DataNode),
                         _bound(idx.step, DataNode)))
            d += 1
        elif isinstance(idx, _NewAxis):
            new_axes.append(d)
            if idx.name is not None:
                names.append(idx.name)
            d += 1
        elif idx is Ellipsis:
            raise NotImplementedError("Ellipsis in indexing is not implemented")
        elif isinstance(idx, (float, str)):
            raise TypeError(f"Invalid type for an index: {type(idx).__name__}")
        else:
            subs.append((_bound(idx, DataNode), None, None, None))
    if names and len(names) != len(new_axes):
        raise ValueError("New axis name must be specified for all axes or none.")

    args, arg_inputs = {}, {}
    for k, parts in enumerate(subs):
        for key, v in zip(("at", "lo", "hi", "step"), parts):
            if v is not None:
                (arg_inputs if isinstance(v, DataNode) else args)[f"{key}_{k}"] = v
    pipe = node._pipeline
    if not args and not arg_inputs and not new_axes:  # only full ranges: check the rank
        return pipe._add_node("_subscript_dim_check", [node], {"num_subscripts": len(subs)},
                              {}, None, None, 1)
    # As DALI: with only full ranges before a trailing new axis the rank is not checked (the
    # new axis's position is).
    last = val[-1] if isinstance(val, tuple) and val else val
    only_full = not args and not arg_inputs
    args["num_subscripts"] = 0 if only_full and isinstance(last, _NewAxis) else len(subs)
    if new_axes:
        args["new_axes"] = new_axes
        args["new_axis_names"] = "".join(names)
    return pipe._add_node("_tensor_subscript", [node], args, arg_inputs, None, None, 1)
