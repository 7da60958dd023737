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
