"""Conditionals against DALI 2.4: the same pipeline definitions with enable_conditionals=True
(nested ifs, elif, early returns, and/or/not, Python constants merged, operators without
inputs inside branches, images cropped or flipped per sample, a branch with no samples) give
the same samples. Predicates come from external sources, so that both libraries take the same
branches."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"_conditional.split": "exact", "_conditional.merge": "exact",
          "_conditional.not_": "exact", "_conditional.validate_logical": "exact",
          "constant": "exact"}

BATCH = 7


def index(info):
    return np.array(info.idx_in_batch, np.int32)


def image(info):
    i = info.idx_in_batch
    return (np.arange(5 * (i + 3) * 3) * 7 % 256).astype(np.uint8).reshape(5, i + 3, 3)


def both(define):
    out = run_both(define, BATCH, enable_conditionals=True)
    assert len(out["stoker"][0]) == len(out["dali"][0])
    for k, (a, b) in enumerate(zip(out["stoker"][0], out["dali"][0])):
        assert_same(a, b, what=f"output {k}")


def test_nested_elif_and_unchanged_values():
    def define(fn, types):
        x = fn.external_source(source=index, batch=False)
        z = x * 3
        if x == 0:
            y = x + 100
        elif x < 4:
            if x % 2 == 0:
                y = z - 1
            else:
                y = z * z
        else:
            y = x
        return y, z
    both(define)


def test_early_returns():
    def define(fn, types):
        x = fn.external_source(source=index, batch=False)
        if x > 3:
            return x * 10, x
        return x, x * 2
    both(define)


def test_logical_expressions():
    def define(fn, types):
        x = fn.external_source(source=index, batch=False)
        a, b, c = x > 1, x < 5, x == 6
        if a and not b or c:
            y = x * 10
        else:
            y = x
        return y, a and b, a or c, not a, not x
    both(define)


def test_python_constants_in_branches():
    def define(fn, types):
        x = fn.external_source(source=index, batch=False)
        if x > 2:
            y = 5
            w = 0.5
        else:
            y = 7
            w = x * 0.25
        return y, fn.cast(w, dtype=types.FLOAT)
    both(define)


def test_images_processed_per_branch_and_an_empty_branch():
    def define(fn, types):
        img = fn.external_source(source=image, batch=False, layout="HWC")
        x = fn.external_source(source=index, batch=False)
        if x % 3 == 0:
            out = fn.flip(img, horizontal=1)
        elif x % 3 == 1:
            out = fn.crop(img, crop=(3, 2), crop_pos_x=0.0, crop_pos_y=1.0)
        else:
            out = img
        if x > 100:  # no sample takes this branch
            never = fn.flip(img, vertical=1)
        else:
            never = img
        return out, never
    both(define)


def test_constants():
    def define(fn, types):
        x = fn.external_source(source=index, batch=False)
        return (x + types.Constant(np.arange(4, dtype=np.int32)),
                fn.constant(fdata=[1.5, 2.5, 3.5, 4.5], shape=[2, 2], dtype=types.FLOAT),
                fn.constant(idata=[3], shape=[2], dtype=types.UINT8))
    both(define)


def test_constant_default_dtype_follows_the_data():
    """Without `dtype`: float32 for fdata, int32 for idata (DALI's rule)."""
    def define(fn, types):
        return (fn.constant(idata=[1, 2, 3], layout="X"), fn.constant(idata=4),
                fn.constant(fdata=[1.0, 2.0]), fn.constant(fdata=3.0, shape=[2, 2]))
    both(define)
