"""python_function against DALI 2.4: the same numpy function per sample (two inputs, two
outputs of other types and shapes) and per batch gives the same samples; so does
dl_tensor_python_function (DLPack capsules in and out, per batch by default), whose every
error both libraries raise. DALI needs exec_async=False and exec_pipelined=False for them;
stoker accepts and ignores them."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"python_function": "exact"}

_DATA = [np.arange(k * 3 + 3, dtype=np.float32).reshape(-1, 3) * (k + 1) for k in range(4)]


def per_sample(a, b):
    return np.sqrt(a) + b[::-1], a.astype(np.int32).sum(axis=0)


def per_batch(xs):
    return [x[:1] * 2 for x in xs]


def test_python_function_equals_dali():
    def define(fn, types):
        x = fn.external_source(source=lambda: [d.copy() for d in _DATA], batch=True)
        y, z = fn.python_function(x, x, function=per_sample, num_outputs=2)
        w = fn.python_function(x, function=per_batch, batch_processing=True)
        return y, z, w
    out = run_both(define, 4, exec_async=False, exec_pipelined=False)
    for k, what in enumerate(("per sample, output 0", "per sample, output 1", "per batch")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=what)


def _layouts_of(lib):
    """The outputs' layouts of python_function and dl_tensor_python_function in `lib`: none
    without output_layouts (also where an input's would fit), a string for every output, a
    shorter list for the first outputs."""
    from parity_util import _lib

    pipeline_def, fn, types, extra = _lib(lib)

    @pipeline_def(batch_size=2, num_threads=1, exec_async=False, exec_pipelined=False, **extra)
    def pipe():
        x = fn.external_source(source=lambda: [d.copy() for d in _DATA[:2]], batch=True,
                               layout="HW")
        plain = fn.python_function(x, function=lambda a: a + 1)
        every = fn.python_function(x, x, function=lambda a, b: (b, a * 2), num_outputs=2,
                                   output_layouts="XY")
        first = fn.python_function(x, function=lambda a: (a, a), num_outputs=2,
                                   output_layouts=["AB"])
        empty = fn.python_function(x, function=lambda a: a, output_layouts=[])
        dl = fn.dl_tensor_python_function(x, function=lambda a: a, batch_processing=True)
        return (plain, *every, *first, empty, dl)

    p = pipe()
    p.build()
    return [b.layout() for b in p.run()]


def test_output_layouts_equal_dalis():
    dali_layouts = _layouts_of("dali")
    assert dali_layouts == ["", "XY", "XY", "AB", "", "", ""]
    assert _layouts_of("stoker") == dali_layouts


def test_more_output_layouts_than_outputs_fail_as_in_dali():
    from parity_util import run

    for lib in ("stoker", "dali"):
        with pytest.raises(Exception, match="output_layouts|number of outputs"):
            run(lib, lambda fn, types: fn.python_function(
                fn.external_source(source=lambda: [np.zeros(3)] * 2, batch=True),
                function=lambda a: a, output_layouts=["A", "B"]), 2,
                exec_async=False, exec_pipelined=False)


# -- dl_tensor_python_function: DLPack capsules in and out ----------------------------------


class _Producer:
    """A capsule as a DLPack producer (numpy's from_dlpack takes producers, not capsules)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def _arr(capsule):
    return np.from_dlpack(_Producer(capsule))


def dl_batch(xs, ys):  # the default, batch_processing=True: a list of capsules per input
    assert all(type(c).__name__ == "PyCapsule" for c in xs + ys)
    xs, ys = [_arr(x) for x in xs], [_arr(y) for y in ys]  # a capsule is taken once
    # x * 1: numpy marks arrays from legacy capsules read-only and will not export them.
    return ([(x * 2 + y).__dlpack__() for x, y in zip(xs, ys)],
            [(x * 1)[:, ::2].__dlpack__() for x in xs])  # strided: the library copies it


def dl_sample(x):
    a = _arr(x)
    return (a.sum(axis=1).astype(np.int64).__dlpack__(),)  # a 1-tuple: its entry is output 0


def dl_no_inputs():
    return np.full(2, 7, np.uint8).__dlpack__()


def test_dl_tensor_python_function_equals_dali():
    def define(fn, types):
        x = fn.external_source(source=lambda: [d.copy() for d in _DATA], batch=True)
        y = fn.external_source(source=lambda: [d[::-1].copy() for d in _DATA], batch=True)
        a, b = fn.dl_tensor_python_function(x, y, function=dl_batch, num_outputs=2)
        c = fn.dl_tensor_python_function(x, function=dl_sample, batch_processing=False)
        d = fn.dl_tensor_python_function(function=dl_no_inputs, batch_processing=False)
        e = fn.dl_tensor_python_function(x, function=lambda xs: xs)  # the capsules as given
        return a, b, c, d, e
    out = run_both(define, 4, exec_async=False, exec_pipelined=False)
    for k in range(5):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"output {k}")


def test_dl_tensor_python_function_class_form_equals_dali():
    from parity_util import _lib

    def outputs(lib):
        pipeline_def, fn, types, extra = _lib(lib)
        ops = __import__(f"{'stoker' if lib == 'stoker' else 'nvidia.dali'}.ops",
                         fromlist=["ops"])
        op = ops.DLTensorPythonFunction(function=dl_batch, num_outputs=2,
                                        synchronize_stream=False, output_layouts=["HW"])

        @pipeline_def(batch_size=2, num_threads=1, exec_async=False, exec_pipelined=False,
                      **extra)
        def pipe():
            x = fn.external_source(source=lambda: [d.copy() for d in _DATA[:2]], batch=True)
            return tuple(op(x, x))

        p = pipe()
        p.build()
        return [([np.array(s) for s in b], b.layout()) for b in p.run()]

    for (s, s_layout), (d, d_layout) in zip(outputs("stoker"), outputs("dali")):
        assert s_layout == d_layout
        assert_same(s, d)


def _bad_dtype(xs):
    return [np.zeros(2, np.int32 if i else np.int16).__dlpack__() for i in range(len(xs))]


def _bad_ndim(xs):
    return [np.zeros((2,) * (1 + (i > 0))).__dlpack__() for i in range(len(xs))]


# (function, arguments, what stoker's error says, what DALI's says): both refuse each.
_ERRORS = [
    (lambda xs: [1] * len(xs), {}, "returns DLPack capsules .* got int",
     "should return a list of DLPack tensors"),
    (lambda xs: None, {}, "returned None", "returned 0 outputs and 1 were expected"),
    (lambda x: None, {"batch_processing": False}, "returned None for sample 0",
     "returned 0 outputs and 1 were expected"),
    (lambda xs: xs[0], {}, "returns a list of samples .* got PyCapsule", "not iterable"),
    (lambda xs: xs[:2], {}, "output 0 has 2 samples, the batch has 4",
     "wrong size .* of a size 2 and should be of size 4"),
    (lambda xs: [xs, xs], {"num_outputs": 2}, "returns a tuple of 2 outputs; got list",
     "must be a tuple"),
    (lambda xs: (xs, xs, xs), {"num_outputs": 2}, "returned 3 outputs",
     "got 3, expected 2"),
    (lambda xs: [xs[0]] * len(xs), {}, "the same DLPack capsule is returned twice",
     "consumed only once"),
    (lambda xs: [(_arr(x), x)[1] for x in xs], {}, "the DLPack capsule was consumed already",
     "consumed only once"),
    (_bad_dtype, {}, "sample 1 has dtype int32, sample 0 has int16", "consistent data type"),
    (_bad_ndim, {}, "sample 1 has 2 dimensions, sample 0 has 1", "same number of dimensions"),
]


@pytest.mark.parametrize("case", range(len(_ERRORS)))
def test_dl_tensor_python_function_errors_as_dali(case):
    from parity_util import run

    function, kwargs, stoker_says, dali_says = _ERRORS[case]

    def define(fn, types):
        x = fn.external_source(source=lambda: [d.copy() for d in _DATA], batch=True)
        out = fn.dl_tensor_python_function(x, function=function, **kwargs)
        return tuple(out) if isinstance(out, list) else out  # num_outputs=2: a list

    for lib, says in (("stoker", stoker_says), ("dali", dali_says)):
        with pytest.raises((RuntimeError, ValueError, TypeError), match=says):
            run(lib, define, 4, exec_async=False, exec_pipelined=False)
