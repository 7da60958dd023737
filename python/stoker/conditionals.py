"""Conditionals: ``if``/``else``, ``and``, ``or``, ``not`` and ``x if c else y`` on pipeline values
inside ``pipeline_def(enable_conditionals=True)`` (DALI's conditional execution)::

    @stoker.pipeline_def(enable_conditionals=True, batch_size=32, num_threads=4)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs)
        if fn.random.coin_flip(probability=0.25, dtype=types.BOOL):
            images = fn.rotate(images, angle=fn.random.uniform(range=(10, 30)), fill_value=0)
        return fn.resize(images, size=(224, 224)), labels

The condition is one scalar per sample, on the CPU. Each branch runs on its samples only:
values from before the ``if`` used in a branch are split (``_conditional.split``, views, no
copy), and every variable a branch assigns is merged back in the batch's order
(``_conditional.merge``), so it must be assigned in both branches (or before the ``if``), with
the same structure (tuples, lists, dicts) and, per sample, the same type, layout and number of
dimensions. Python numbers and arrays assigned in a branch become constants (``constant``); a
Python value that is the same in both branches stays a Python value. Operators without inputs
(readers, random draws) called in a branch run for the whole batch and are split, as in DALI.
As in DALI 2.4, the condition of an ``if`` and the operand of ``not`` may be any numeric scalar
(taken by truthiness: non-zero is true), while the sides of ``and``/``or`` must be bool scalars
(an int or float side fails at run time in ``_conditional.validate_logical``; a Python number
beside a pipeline value becomes a constant first, so ``flag and True`` runs). ``and``/``or``
evaluate their right side only for the samples that need it. ``x if c else y`` on a pipeline
value is a stoker addition and takes its condition as ``if`` does.

stoker.rewrite rewrites the function's source so that these constructs call the functions
below; with a Python condition they do exactly what Python does."""

import contextlib
import weakref

import numpy as np

from stoker import rewrite
from stoker.node import DataNode, _Expr


class _Undefined:
    """The value of a variable not set (yet) when an ``if`` starts or ends."""

    def __repr__(self):
        return "<undefined>"


UNDEFINED = _Undefined()


def state(local_vars, names):
    """The values of `names` in `local_vars` (locals()), UNDEFINED where unset."""
    return tuple(local_vars.get(n, UNDEFINED) for n in names)


def call(f, *args, **kwargs):
    """f(*args, **kwargs), with f converted first when it is user code (helpers may hold their
    own ``if`` statements on pipeline values)."""
    func = getattr(f, "__func__", None)
    if func is not None and rewrite.convertible(func):
        return rewrite.convert(func)(f.__self__, *args, **kwargs)
    if rewrite.convertible(f):
        return rewrite.convert(f)(*args, **kwargs)
    method = getattr(type(f), "__call__", None)  # an object of a user class with __call__
    if not isinstance(f, type) and rewrite.convertible(method):
        return rewrite.convert(method)(f, *args, **kwargs)
    return f(*args, **kwargs)


def python_test(value, why):
    """The condition of an ``if`` left to Python (it has `why`)."""
    if isinstance(value, DataNode):
        raise TypeError(f"{value.name}: an `if` on a pipeline value cannot have {why}; write it so "
                        f"that both branches end the same way (assign variables in both, or "
                        f"return in both)")
    return value


def _stack(node):
    stack = node._pipeline._conditions
    if stack is None:
        raise TypeError(DataNode.BOOL_MESSAGE)
    return stack


def if_stmt(cond, if_true, if_false, values, names, returns):
    """An ``if`` statement: the branches take the variables `names` (their `values` before the
    statement) and give them back (or, with `returns`, the statement's return value)."""
    if not isinstance(cond, DataNode):
        return if_true(*values) if cond else if_false(*values)
    stack = _stack(cond)
    scope = stack.push(cond, "the condition of an `if` statement")
    try:
        results = []
        for branch, body in ((True, if_true), (False, if_false)):
            scope.branch = branch
            results.append(stack.leave_branch(body(*values)))
        scope.branch = None
        merged = stack.merge_branches(scope, *results, names, returns)
    finally:
        stack.pop()
    stack.register(merged)
    return merged


def if_exp(cond, if_true, if_false):
    """``if_true() if cond else if_false()``."""
    return if_stmt(cond, if_true, if_false, (), (), True)


def not_(value):
    if not isinstance(value, DataNode):
        return not value
    return value._pipeline._add_node("_conditional.not_", [value], {}, {}, None, "cpu", 1)


def _logical(pipe, value, name, side):
    """`value`, one side of `name` ("and"/"or") whose other side is a pipeline value, checked
    per sample at run time (bool scalars on the CPU). A Python number, bool or array becomes a
    constant first, as DALI's operator inputs do: `flag and True` runs; `flag and 1` fails at
    run time like an int32 pipeline value."""
    if not isinstance(value, DataNode):
        if not _numeric(value):
            raise TypeError(f"`{name}`: its {side} side is {type(value).__name__} "
                            f"{value!r:.60}, and the other side is a pipeline value; both sides "
                            f"must be pipeline values or numbers (conditions are bool scalars "
                            f"per sample)")
        value = constant(pipe, value)
    if pipe._nodes[value._node]["device"] != "cpu":
        raise ValueError(f"`{name}`: its {side} side {value.name} is on the GPU; logical "
                         f"expressions take bool scalars on the CPU")
    return pipe._add_node("_conditional.validate_logical", [value],
                          {"expression_name": name, "expression_side": side}, {}, None, "cpu", 1)


def _lazy(left, right, name):
    """`left and right()` / `left or right()`: right() runs only for the samples that need it."""
    if not isinstance(left, DataNode):
        if name == "and":
            return left and right()
        return left or right()
    stack = _stack(left)
    pipe = left._pipeline
    left = _logical(pipe, left, name, "left")
    scope = stack.push(left, f"the left side of `{name}`")
    try:
        sides = {}
        for branch in (True, False):
            scope.branch = branch
            evaluate = (branch if name == "and" else not branch)
            value = _logical(pipe, right(), name, "right") if evaluate else scope.predicate
            sides[branch] = stack.input(value)
        scope.branch = None
        merged = stack.merge_nodes(scope, sides[True], sides[False])
    finally:
        stack.pop()
    stack.register(merged)
    return merged


def and_(left, right):
    return _lazy(left, right, "and")


def or_(left, right):
    return _lazy(left, right, "or")


# -- the graph side --------------------------------------------------------------------------------

class _Scope:
    """One level of ``if``: its predicate (a value of the level above), the branch being traced
    (True, False, or None while merging) and the splits made for it."""

    def __init__(self, predicate):
        self.predicate = predicate
        self.branch = None
        self.splits = {}  # (node, output) of the level above -> (true part, false part)


def _key(node):
    return (node._node, node._index)


def _structure(value):
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_structure(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((k, _structure(v)) for k, v in value.items()))
    return "*"


def _map(fn, a, b):
    """fn over the leaves of two values of the same structure."""
    if isinstance(a, (tuple, list)):
        return type(a)(_map(fn, x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return {k: _map(fn, a[k], b[k]) for k in a}
    return fn(a, b)


def _numeric(value):
    return isinstance(value, (bool, int, float, np.generic, np.ndarray))


def _same(a, b):
    if a is b:
        return True
    if isinstance(a, DataNode) or isinstance(b, DataNode) or type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (a comparison that does not give one truth value)
        return False


class ConditionStack:
    """The ``if`` levels of a pipeline being defined (pipe._conditions), and where each value
    was produced, so that a value is split on its way into a branch and merged on its way out."""

    def __init__(self, pipe):
        # A weak reference: the pipeline holds its stack (pipe._conditions), and a strong one
        # back would make a cycle that only the garbage collector frees, keeping the native
        # pipeline's threads alive after `del pipe` (as DataNode, which holds it weakly too).
        self._pipe_ref = weakref.ref(pipe)
        self.stack = [_Scope(None)]
        self.origin = {}  # (node, output) -> (scope, branch) it belongs to; absent: top level
        self.raw = False  # adding split/merge nodes: no splitting of their inputs

    @property
    def _pipe(self):
        return self._pipe_ref()

    def position(self):
        return tuple((s, s.branch) for s in self.stack)

    @contextlib.contextmanager
    def at(self, position):
        """Traces at `position` (an enclosing level: an expression written there is built
        there, even when first used deeper)."""
        ok = len(position) <= len(self.stack) and all(
            s is self.stack[k] and b == self.stack[k].branch for k, (s, b) in enumerate(position))
        if not ok:
            raise ValueError("an expression computed in one branch of an `if` on a pipeline "
                             "value is used outside that branch without having been assigned to "
                             "a variable there")
        saved = self.stack
        self.stack = saved[:len(position)]
        try:
            yield
        finally:
            self.stack = saved

    def _add(self, op, inputs, device, outputs, args=None):
        self.raw = True
        try:
            return self._pipe._add_node(op, inputs, args or {}, {}, None, device, outputs)
        finally:
            self.raw = False

    def _device(self, *nodes):
        return "gpu" if any(self._pipe._nodes[n._node]["device"] in ("gpu", "mixed")
                            for n in nodes) else "cpu"

    def input(self, value):
        """`value` as the current branch sees it (split on its way in where needed)."""
        if isinstance(value, _Expr):
            value = value._materialize()
        level, node = 0, value
        origin = self.origin.get(_key(value))
        if origin is not None:
            scope, branch = origin
            level = next((k for k, s in enumerate(self.stack) if s is scope), None)
            if level is None or scope.branch != branch:
                where = "the other branch" if level is not None else "a branch"
                raise ValueError(f"{value.name} was computed in {where} of an `if` on a pipeline "
                                 f"value and is used where that branch does not run; assign it "
                                 f"to a variable in both branches to use it after the `if`")
        for scope in self.stack[level + 1:]:
            parts = scope.splits.get(_key(node))
            if parts is None:
                parts = self._add("_conditional.split", [node, scope.predicate],
                                  self._device(node), 2)
                scope.splits[_key(node)] = parts
                self.origin[_key(parts[0])] = (scope, True)
                self.origin[_key(parts[1])] = (scope, False)
            assert scope.branch is not None
            node = parts[0] if scope.branch else parts[1]
        return node

    def produced(self, outputs, has_inputs):
        """Records an operator's outputs in the current branch (those of operators without
        inputs belong to the top level: they run for the whole batch and are split)."""
        if len(self.stack) == 1 or not has_inputs:
            return
        top = self.stack[-1]
        for out in outputs if isinstance(outputs, tuple) else (outputs,):
            self.origin[_key(out)] = (top, top.branch)

    def register(self, value):
        """Records the DataNodes in `value` (a merge's results) at the current level."""
        if isinstance(value, (tuple, list)):
            for v in value:
                self.register(v)
        elif isinstance(value, dict):
            self.register(list(value.values()))
        elif isinstance(value, DataNode):
            self.produced(value, True)

    def push(self, condition, what):
        predicate = self.input(condition)
        if self._pipe._nodes[predicate._node]["device"] != "cpu":
            raise ValueError(f"{what} ({predicate.name}) is on the GPU; conditions are scalars on "
                             f"the CPU, one per sample")
        scope = _Scope(predicate)
        self.stack.append(scope)
        return scope

    def pop(self):
        self.stack.pop()

    def leave_branch(self, value):
        """A branch's results, every pipeline value in them as this branch sees it."""
        if isinstance(value, (tuple, list)):
            return type(value)(self.leave_branch(v) for v in value)
        if isinstance(value, dict):
            return {k: self.leave_branch(v) for k, v in value.items()}
        return self.input(value) if isinstance(value, DataNode) else value

    def merge_branches(self, scope, if_values, else_values, names, returns):
        if returns:
            return self._merge_value(scope, if_values, else_values, "the return value")
        merged = []
        for name, a, b in zip(names, if_values, else_values):
            if a is UNDEFINED and b is UNDEFINED:
                merged.append(UNDEFINED)
                continue
            if a is UNDEFINED or b is UNDEFINED:
                missing = "`if`" if a is UNDEFINED else "`else`"
                raise RuntimeError(
                    f"variable '{name}' is set in only one branch of an `if` on a pipeline "
                    f"value; set it in the {missing} branch too (or before the `if`), so that "
                    f"every sample has a value")
            merged.append(self._merge_value(scope, a, b, f"variable '{name}'"))
        return tuple(merged)

    def _merge_value(self, scope, a, b, what):
        if _structure(a) != _structure(b):
            raise ValueError(
                f"{what} has a different structure in the two branches of an `if` on a pipeline "
                f"value ({_shape_text(a)} and {_shape_text(b)}); its values are merged into one "
                f"batch, so tuples, lists and dicts must match (their contents may differ)")

        def leaf(x, y):
            if not isinstance(x, DataNode) and not isinstance(y, DataNode) and _same(x, y):
                return x
            for v in (x, y):
                if not isinstance(v, DataNode) and not _numeric(v):
                    raise TypeError(f"{what} is {x!r} in the `if` branch and {y!r} in the `else` "
                                    f"branch; only pipeline values, numbers and arrays can "
                                    f"differ between the branches of an `if` on a pipeline "
                                    f"value")
            other = y if isinstance(y, DataNode) else x if isinstance(x, DataNode) else None
            sides = [self._promote(scope, v, branch, other)
                     for v, branch in ((x, True), (y, False))]
            return self.merge_nodes(scope, *sides)

        return _map(leaf, a, b)

    def _promote(self, scope, value, branch, like):
        """`value` as a node of `branch` (a Python number or array becomes a constant, on the
        GPU when the other branch's value is there)."""
        if isinstance(value, DataNode):
            return value
        saved, scope.branch = scope.branch, branch
        try:
            node = self.input(constant(self._pipe, value))
            return node.gpu() if like is not None and self._device(like) == "gpu" else node
        finally:
            scope.branch = saved

    def merge_nodes(self, scope, if_node, else_node):
        for (node, index), parts in scope.splits.items():  # passed through both unchanged
            if _key(parts[0]) == _key(if_node) and _key(parts[1]) == _key(else_node):
                return DataNode(self._pipe, node, index,
                                f"{self._pipe._nodes[node]['name']}[{index}]")
        return self._add("_conditional.merge", [if_node, else_node, scope.predicate],
                         self._device(if_node, else_node), 1)


def _shape_text(value):
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_shape_text(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else (
            f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_shape_text(v)}" for k, v in value.items()) + "}"
    return "*"


def constant(pipe, value, dtype=None, shape=None, layout=None, device=None):
    """A node giving `value` (a number or array) for every sample (types.Constant)."""
    array = np.asarray(value)
    if isinstance(value, np.ndarray) and array.dtype == np.float64:
        array = array.astype(np.float32)  # DALI carries double arrays as float32
    if isinstance(value, np.ndarray) and dtype is None and array.dtype in (np.int64, np.uint64):
        # ... and, without a dtype, 64-bit integer arrays as 32-bit ones (out of range: an error)
        narrow = np.int32 if array.dtype == np.int64 else np.uint32
        limits = np.iinfo(narrow)
        if array.size and (array.min() < limits.min or array.max() > limits.max):
            bad = array.min() if array.min() < limits.min else array.max()
            raise OverflowError(f"types.Constant: {bad} is out of range for {limits.dtype} "
                                f"(give a dtype to keep 64 bits)")
        array = array.astype(narrow)
    if dtype is None:
        if isinstance(value, (bool, np.bool_)) or array.dtype == np.bool_:
            dtype = "bool"
        elif array.dtype.kind in "iu" and not isinstance(value, (np.ndarray, np.generic)):
            dtype = "int32"  # Python ints, as DALI's Constant
        elif array.dtype.kind == "f" and not isinstance(value, (np.ndarray, np.generic)):
            dtype = "float32"
        else:
            dtype = array.dtype.name
    dtype = getattr(dtype, "value", dtype)
    dtype = {"float": "float32", "double": "float64"}.get(str(dtype), str(dtype))
    if array.dtype.kind not in "biuf":
        raise TypeError(f"types.Constant: expected a number or a numeric array, got "
                        f"{type(value).__name__}")
    args = {"shape": list(array.shape) if shape is None else
            ([int(shape)] if isinstance(shape, int) else [int(s) for s in shape]),
            "dtype": dtype}
    if array.dtype.kind == "f":
        args["fdata"] = [float(v) for v in array.ravel()]
    else:
        args["idata"] = [int(v) for v in array.ravel()]
    if layout:
        args["layout"] = layout
    node = pipe._add_node("constant", [], args, {}, None, "cpu", 1)
    return node.gpu() if device == "gpu" else node
