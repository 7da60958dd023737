"""DataNode subscripts against DALI 2.4: indices, ranges with every step DALI allows (negative
ones too), out-of-range bounds, per-sample indices and bounds, None (a full range in DALI),
new axes with and without names; values, shapes, dtypes and layouts (through get_property) and
which subscripts are errors in both."""
import numpy as np
import pytest

import stoker
from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "_tensor_subscript": "exact: values, shapes, dtypes and layouts of DataNode subscripts",
    "_subscript_dim_check": "exact: x[:, :] passes the input through after the rank check",
}

_RNG = np.random.default_rng(4)
_DATA = [_RNG.integers(-50, 50, shape).astype(np.int16)
         for shape in ((2, 3, 4), (3, 4, 5), (4, 2, 3))]
_IDX = [np.int32(v) for v in (1, -1, 0)]
_LO = [np.int64(v) for v in (-2, 1, 0)]
_STEP = [np.int32(v) for v in (-1, 2, -2)]


def _na(fn):
    return stoker.newaxis if fn.__name__.startswith("stoker") else dali.newaxis


CASES = {
    "index": lambda x, fn: x[1],
    "negative index": lambda x, fn: x[-2, 1],
    "three indices": lambda x, fn: x[0, 1, 2],
    "range": lambda x, fn: x[:, 1:3],
    "step 2": lambda x, fn: x[::2],
    "reversed": lambda x, fn: x[::-1],
    "negative steps": lambda x, fn: x[1:, ::-2, 3:0:-1],
    "bounds out of range": lambda x, fn: x[-100:100, 100:-100:-1],
    "empty range": lambda x, fn: x[:, 5:1],
    "None": lambda x, fn: x[None, 0],
    "full ranges": lambda x, fn: x[:, :, :],
    "chained": lambda x, fn: x[1][::-1][0],
    "new axis": lambda x, fn: x[_na(fn)],
    "new axes around an index": lambda x, fn: x[_na(fn), 1, _na(fn)],
    "trailing new axis": lambda x, fn: x[:, :, :, _na(fn)],
    "named new axes": lambda x, fn: x[_na(fn)("F"), 0, _na(fn)("A")],
}


def _define(case, layout):
    def define(fn, types):
        x = fn.external_source(source=lambda: _DATA, batch=True, layout=layout)
        y = CASES[case](x, fn)
        return y, fn.get_property(y, key="layout")
    return define


@pytest.mark.parametrize("layout", ["HWC", ""])
@pytest.mark.parametrize("case", list(CASES))
def test_subscripts_equal_dali(case, layout):
    if case == "named new axes" and not layout:
        pytest.skip("an error in both (names need a layout): test_errors_alike")
    out = {lib: run(lib, _define(case, layout), len(_DATA))[0] for lib in ("stoker", "dali")}
    assert_same(out["stoker"][0], out["dali"][0], what=case)
    assert_same(out["stoker"][1], out["dali"][1], what=f"{case}: layout")


def test_per_sample_indices_and_bounds_equal_dali():
    def define(fn, types):
        x = fn.external_source(source=lambda: _DATA, batch=True, layout="HWC")
        i = fn.external_source(source=lambda: _IDX, batch=True)
        lo = fn.external_source(source=lambda: _LO, batch=True)
        step = fn.external_source(source=lambda: _STEP, batch=True)
        return x[i], x[:, lo:], x[::step, i], x[lo:i:step]
    out = {lib: run(lib, define, len(_DATA))[0] for lib in ("stoker", "dali")}
    for k in range(4):
        assert_same(out["stoker"][k], out["dali"][k], what=f"output {k}")


ERRORS = {
    "index out of range": lambda x, fn: x[2],
    "negative index out of range": lambda x, fn: x[:, -4],
    "too many indices": lambda x, fn: x[0, 0, 0, 0],
    "too many full ranges": lambda x, fn: x[:, :, :, :],
    "new axis past the end": lambda x, fn: x[:, :, :, :, _na(fn)],
    "zero step": lambda x, fn: x[::0],
    "names without a layout": lambda x, fn: x[_na(fn)("F")],
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_alike(case):
    def define(fn, types):
        x = fn.external_source(source=lambda: _DATA, batch=True,
                               layout="" if "layout" in case else "HWC")
        return ERRORS[case](x, fn)
    for lib in ("stoker", "dali"):
        with pytest.raises(Exception):
            run(lib, define, len(_DATA))
