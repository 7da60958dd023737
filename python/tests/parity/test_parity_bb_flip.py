"""bb_flip against DALI 2.4: the same boxes, formats and flips (per sample too), flat boxes."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"bb_flip": "exact"}

_RNG = np.random.default_rng(4)
_BOXES = [_RNG.random((n, 4), dtype=np.float32) * np.float32(0.6) for n in (4, 0, 9, 1)]
_FLIPS = [np.int32(k % 2) for k in range(4)]


@pytest.mark.parametrize("ltrb", [False, True])
def test_bb_flip_equals_dali(ltrb):
    def define(fn, types):
        data = fn.external_source(source=lambda: [b.copy() for b in _BOXES], batch=True)
        flat = fn.external_source(source=lambda: [b.reshape(-1).copy() for b in _BOXES],
                                  batch=True)
        flips = fn.external_source(source=lambda: _FLIPS, batch=True)
        return (fn.bb_flip(data, ltrb=ltrb),
                fn.bb_flip(data, ltrb=ltrb, horizontal=0, vertical=1),
                fn.bb_flip(data, ltrb=ltrb, horizontal=flips, vertical=flips),
                fn.bb_flip(flat, ltrb=ltrb))
    out = run_both(define, 4)
    for k in range(4):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"bb_flip output {k}")
