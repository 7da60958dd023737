"""The values a pipeline definition passes around: DataNode (one output of an operator node)
and _Expr (arithmetic on DataNodes and constants, fused into one `arithmetic` operator when
first used). Split from pipeline.py, which records the nodes.

A DataNode refers to its pipeline weakly: the pipeline holds its outputs' DataNodes, and a
strong reference back would make every pipeline a reference cycle that only the garbage
collector frees (threads, pools and GPU memory held until it runs)."""

import contextlib
import weakref

from stoker.subscript import subscript


class DataNode:
    """A value in a pipeline being defined: output `index` of operator node `node`.

    Python operators on DataNodes (+ - * / // % **, comparisons, & | ^, unary -, abs())
    build expressions that run as one fused `arithmetic` operator (see stoker.math)."""

    __hash__ = object.__hash__  # == builds an expression; identity stays the hash

    def __init__(self, pipeline, node, index, name):
        self._pipeline = pipeline
        self._node = node
        self._index = index
        self.name = name

    @property
    def _pipeline(self):
        pipe = self._pipeline_ref()
        if pipe is None:
            raise RuntimeError(f"{self.name}: the pipeline this value belongs to no longer exists")
        return pipe

    @_pipeline.setter
    def _pipeline(self, pipe):
        self._pipeline_ref = weakref.ref(pipe)

    def __repr__(self):
        return f"DataNode({self.name})"

    def gpu(self):
        """This value copied to the GPU (one asynchronous copy per batch); a value already on
        the GPU is returned as it is (as in DALI). The pipeline needs a device_id. Under
        STOKER_FORCE_CPU=1 the value stays on the CPU."""
        if self._pipeline._nodes[self._node]["device"] in ("gpu", "mixed"):
            return self
        return self._pipeline._add_node("copy_to_device", [self], {}, {}, None, "mixed", 1)

    def _on_gpu(self):
        return self._pipeline._nodes[self._node]["device"] in ("gpu", "mixed")

    def _gpu_to_cpu(self, what):
        raise ValueError(
            f"{self.name}.{what}: the value is on the GPU and stoker runs a pipeline's CPU "
            f"operators before its GPU ones, so GPU data cannot come back to the CPU inside a "
            f"pipeline (DALI's dynamic executor allows it); use device='gpu', or compute it "
            f"from the CPU value before .gpu()")

    def cpu(self):
        """This value on the CPU: the value itself when it is there (GPU values cannot move back
        to the CPU inside a stoker pipeline: an error says so)."""
        if self._on_gpu():
            self._gpu_to_cpu("cpu()")
        return self

    def shape(self, *, dtype=None, device="cpu"):
        """The run-time shape of each sample as a new DataNode (1-D, int64 unless `dtype`), on
        `device` (as DALI's DataNode.shape())."""
        if device == "cpu" and self._on_gpu():
            self._gpu_to_cpu("shape(device='cpu')")
        args = {} if dtype is None else {"dtype": getattr(dtype, "value", dtype)}
        return self._pipeline._add_node("shapes", [self], args, {}, None, device, 1)

    def property(self, key, *, device="cpu"):
        """A metadata property of each sample as a new DataNode (as DALI): "source_info" (the
        file or record it came from) or "layout", each a 1-D uint8 tensor."""
        if device == "cpu" and self._on_gpu():
            self._gpu_to_cpu(f"property({key!r}, device='cpu')")
        return self._pipeline._add_node("get_property", [self], {"key": key}, {}, None, device,
                                        1)

    def source_info(self, *, device="cpu"):
        """The "source_info" property (see property())."""
        return self.property("source_info", device=device)

    BOOL_MESSAGE = (
        "a DataNode has no truth value at definition time; it stands for data that exists only "
        "when the pipeline runs. To branch on it per sample, use `if`/`elif`/`else`, `and`, "
        "`or`, `not` or `x if c else y` in a pipeline_def(enable_conditionals=True) function "
        "(`while`, `assert`, comprehension filters and bool() cannot take pipeline values)")

    def __bool__(self):
        raise TypeError(f"{self.name}: {self.BOOL_MESSAGE}")

    def __getitem__(self, index):
        """NumPy-like indexing, as DALI: x[1], x[:, 1:3], x[::-1], x[i] with a per-sample
        DataNode i, x[stoker.newaxis] (see stoker.subscript)."""
        return subscript(self, index, DataNode)

    def __iter__(self):
        # Without this, iter() would call __getitem__(0), (1), ... forever.
        raise TypeError(f"{self.name}: a DataNode is not iterable (its samples exist only when "
                        f"the pipeline runs); index it per axis instead, e.g. x[0]")

    def _binary(self, fn, other, reverse=False):
        return _Expr(fn, [other, self] if reverse else [self, other])

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, True)
    def __sub__(self, o): return self._binary("sub", o)
    def __rsub__(self, o): return self._binary("sub", o, True)
    def __mul__(self, o): return self._binary("mul", o)
    def __rmul__(self, o): return self._binary("mul", o, True)
    def __truediv__(self, o): return self._binary("div", o)
    def __rtruediv__(self, o): return self._binary("div", o, True)
    def __floordiv__(self, o): return self._binary("fdiv", o)
    def __rfloordiv__(self, o): return self._binary("fdiv", o, True)
    def __mod__(self, o): return self._binary("mod", o)
    def __rmod__(self, o): return self._binary("mod", o, True)
    def __pow__(self, o): return self._binary("pow", o)
    def __rpow__(self, o): return self._binary("pow", o, True)
    def __and__(self, o): return self._binary("and", o)
    def __rand__(self, o): return self._binary("and", o, True)
    def __or__(self, o): return self._binary("or", o)
    def __ror__(self, o): return self._binary("or", o, True)
    def __xor__(self, o): return self._binary("xor", o)
    def __rxor__(self, o): return self._binary("xor", o, True)
    def __eq__(self, o): return self._binary("eq", o)  # noqa: E704
    def __ne__(self, o): return self._binary("ne", o)
    def __lt__(self, o): return self._binary("lt", o)
    def __le__(self, o): return self._binary("le", o)
    def __gt__(self, o): return self._binary("gt", o)
    def __ge__(self, o): return self._binary("ge", o)
    def __neg__(self): return _Expr("neg", [self])
    def __pos__(self): return self
    def __abs__(self): return _Expr("abs", [self])


def _constant(v):
    """$value:type for the native expression (bool, int as int32, float as float32)."""
    if isinstance(v, bool):
        return f"${int(v)}:b"
    if isinstance(v, int):
        return f"${v}:i32"
    if isinstance(v, float):
        return f"${v!r}:f32"
    raise TypeError(f"arithmetic: constants must be bool, int or float, got {type(v).__name__}")


def _array_constant(pipe, value):
    from stoker.conditionals import constant  # (imports this module)

    return constant(pipe, value)


class _Expr(DataNode):
    """An expression of DataNodes and constants. It becomes one `arithmetic` operator when
    first used (as an input, argument or pipeline output); sub-expressions not used on their
    own are fused into it."""

    def __init__(self, fn, args):
        pipes = {a._pipeline for a in args if isinstance(a, DataNode)}
        if not pipes:
            raise TypeError(f"arithmetic: {fn} needs at least one DataNode operand")
        if len(pipes) > 1:
            raise ValueError("arithmetic: operands belong to different pipelines")
        self._pipeline = pipes.pop()
        # Lists, tuples and numpy values are types.Constant nodes (as DALI): they broadcast.
        args = [a if isinstance(a, (DataNode, bool, int, float, str)) else
                _array_constant(self._pipeline, a) for a in args]
        self._fn, self._args, self._out = fn, args, None
        # Where it was written (inside which branches of `if`s on pipeline values): it is built
        # there, even when first used deeper.
        conditions = self._pipeline._conditions
        self._position = conditions.position() if conditions is not None else None
        for a in args:
            if not isinstance(a, DataNode):
                _constant(a)  # checks the type now, where the user wrote it

    @property
    def name(self):
        return f"({self._fn} ...)" if self._out is None else self._out.name

    @property
    def _node(self):
        return self._materialize()._node

    @property
    def _index(self):
        return self._materialize()._index

    def _render(self, leaves):
        parts = []
        for a in self._args:
            if isinstance(a, _Expr) and a._out is None:
                parts.append(a._render(leaves))
            elif isinstance(a, DataNode):
                key = (a._node, a._index)
                slot = next((k for k, (kk, _) in enumerate(leaves) if kk == key), None)
                if slot is None:
                    slot = len(leaves)
                    leaves.append((key, a))
                parts.append(f"&{slot}")
            else:
                parts.append(_constant(a))
        return f"{self._fn}({','.join(parts)})"

    def _materialize(self):
        if self._out is None:
            leaves = []
            expr = self._render(leaves)
            # On the GPU when any operand is GPU data (CPU operands are copied there).
            nodes = self._pipeline._nodes
            device = "gpu" if any(nodes[k[0]]["device"] in ("gpu", "mixed")
                                  for k, _ in leaves) else "cpu"
            conditions = self._pipeline._conditions
            with (conditions.at(self._position) if self._position is not None
                  else contextlib.nullcontext()):
                self._out = self._pipeline._add_node("arithmetic", [a for _, a in leaves],
                                                     {"expr": expr}, {}, None, device, 1)
        return self._out
