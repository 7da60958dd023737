"""python_function against DALI 2.4: the same numpy function per sample (two inputs, two
outputs of other types and shapes) and per batch gives the same samples. DALI needs
exec_async=False and exec_pipelined=False for it; stoker accepts and ignores them."""
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
