"""Masks of labels through the resampling and window operators in the dtypes DALI 2.4 takes for
them, nearest-neighbour where they resample: equal to DALI's outputs (the operators are declared
in their own modules; this one adds the mask types)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

RNG = np.random.default_rng(9)


def _masks(dtype, high):
    # Blocks of labels (as a segmentation map has), up to `high`.
    out = []
    for h, w in ((30, 41), (17, 23), (44, 36)):
        m = np.zeros((h, w, 1), dtype)
        for _ in range(8):
            y, x = RNG.integers(0, h - 4), RNG.integers(0, w - 4)
            m[y:y + RNG.integers(2, 9), x:x + RNG.integers(2, 9)] = RNG.integers(1, high)
        out.append(m)
    return out


_CASES = [
    ("warp_affine int32", np.int32, 70000,
     lambda fn, t, m: fn.warp_affine(m, matrix=[0.8, 0.15, 3.2, -0.1, 1.2, -2.7], fill_value=0,
                                     interp_type=t.INTERP_NN)),
    ("rotate int32", np.int32, 70000,
     lambda fn, t, m: fn.rotate(m, angle=23.0, fill_value=0, interp_type=t.INTERP_NN)),
    ("resize uint16", np.uint16, 60000,
     lambda fn, t, m: fn.resize(m, size=[37, 29], interp_type=t.INTERP_NN)),
    ("resize int16", np.int16, 30000,
     lambda fn, t, m: fn.resize(m, size=[13, 52], interp_type=t.INTERP_NN)),
    ("crop int8", np.int8, 120, lambda fn, t, m: fn.crop(m, crop=[12, 15])),
    ("crop uint32", np.uint32, 2**31, lambda fn, t, m: fn.crop(m, crop=[12, 15], crop_pos_x=0.2)),
    ("crop int64", np.int64, 2**40, lambda fn, t, m: fn.crop(m, crop=[16, 20], crop_pos_y=0.9)),
]


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_masks_alike(case):
    name, dtype, high, op = case
    masks = _masks(dtype, high)

    def define(fn, types):
        m = fn.external_source(source=lambda: masks, batch=True, layout="HWC")
        return op(fn, types, m)

    out = run_both(define, len(masks))
    assert_same(out["stoker"][0][0], out["dali"][0][0], what=name)
    for s in out["stoker"][0][0]:
        assert s.dtype == dtype
