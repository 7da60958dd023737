"""stoker.math against nvidia.dali.math: DALI's 29 functions, the same definition run on both,
per input type: the output types must be DALI's, the values DALI's within float rounding."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import stoker  # noqa: E402

UNARY = ["abs", "fabs", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "floor", "ceil"]
BINARY = ["pow", "fpow", "atan2", "min", "max"]

# Inputs inside every function's domain where it matters (acosh >= 1, |atanh| < 1 are chosen
# per function below), negative values where the type allows.
VALUES = {np.float32: [0.25, 0.5, 0.75, -0.5, 2.5, 7.0], np.float64: [0.3, 0.6, 0.9, -0.2, 3.7],
          np.int32: [0, 1, 2, -3, 5], np.uint8: [0, 1, 2, 3, 250], np.int64: [1, 2, 4, -7]}


def _input(dtype, fn):
    v = np.array(VALUES[dtype], dtype=dtype)
    if fn == "acosh":
        v = (np.abs(v) + 1).astype(dtype)
    if fn in ("asin", "acos", "atanh") and np.issubdtype(dtype, np.integer):
        v = np.array([0] * len(v), dtype=dtype)
    if fn in ("asin", "acos", "atanh"):
        v = np.clip(v, -0.9, 0.9).astype(dtype)
    if fn in ("log", "log2", "log10", "sqrt", "rsqrt"):
        v = (np.abs(v) + 1).astype(dtype)
    return v


def _source(dtype, fn, reverse=False):
    v = _input(dtype, fn)
    v = v[::-1].copy() if reverse else v
    return lambda: [v]


def _run(lib, dtype, functions):
    mod = stoker if lib == "stoker" else dali
    kwargs = {} if lib == "stoker" else {"device_id": None}

    @mod.pipeline_def(batch_size=1, num_threads=1, **kwargs)
    def pipe():
        outs = []
        for f in functions:
            x = mod.fn.external_source(source=_source(dtype, f))
            g = getattr(mod.math, f)
            if f in BINARY:
                y = mod.fn.external_source(source=_source(dtype, f, reverse=True))
                outs.append(g(x, y))
            else:
                outs.append(g(x))
        return tuple(outs)
    p = pipe()
    p.build()
    return [(str(np.dtype(np.asarray(o.as_array()).dtype)), np.asarray(o.as_array())[0])
            for o in p.run()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_math_functions_equal_dali(dtype):
    functions = UNARY + BINARY
    if dtype == np.uint8:  # DALI's pow of uint8 wraps as C++ does; stoker saturates
        functions = [f for f in functions if f != "pow"]
    ours, theirs = _run("stoker", dtype, functions), _run("dali", dtype, functions)
    for f, (t1, a), (t2, b) in zip(functions, ours, theirs):
        assert t1 == t2, f"{f}: type {t1}, DALI {t2}"
        tol = 1e-6 if t1 == "float32" else 1e-12
        if f == "pow" and np.issubdtype(a.dtype, np.integer):
            # DALI's integer pow gives 0 for every negative exponent; stoker's gives 1 and -1
            # for the bases 1 and -1, as mathematics does (docs/dali_differences.md).
            x = _input(dtype, f)
            y = x[::-1]
            exact_one = (y < 0) & (np.abs(x.astype(np.int64)) == 1)
            odd_minus_one = (x == -1) & (y % 2 == 1)
            assert (a[exact_one] == np.where(odd_minus_one, -1, 1)[exact_one]).all()
            a, b = a[~exact_one], b[~exact_one]
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol,
                                   atol=tol, err_msg=f)
