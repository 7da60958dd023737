"""bbox_paste against DALI 2.4: per-sample ratios and paste places, both box formats."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"bbox_paste": "exact"}

_RNG = np.random.default_rng(9)
_BOXES = [np.float32(_RNG.random((n, 4)) * 0.6) for n in (4, 0, 7, 1)]
_RATIOS = [np.float32(r) for r in (1.0, 2.5, 4.0, 1.1)]
_X = [np.float32(v) for v in (0.0, 0.5, 1.0, 0.7)]
_Y = [np.float32(v) for v in (1.0, 0.3, 0.0, 0.5)]


@pytest.mark.parametrize("ltrb", [False, True])
def test_bbox_paste_equals_dali(ltrb):
    def define(fn, types):
        b = fn.external_source(source=lambda: _BOXES, batch=True)
        r = fn.external_source(source=lambda: _RATIOS, batch=True)
        x = fn.external_source(source=lambda: _X, batch=True)
        y = fn.external_source(source=lambda: _Y, batch=True)
        return (fn.bbox_paste(b, ratio=r, paste_x=x, paste_y=y, ltrb=ltrb),
                fn.bbox_paste(b, ratio=2.0, ltrb=ltrb))
    ours, theirs = (run(lib, define, 4)[0] for lib in ("stoker", "dali"))
    for k in range(2):
        assert_same(ours[k], theirs[k], what=f"output {k}")
