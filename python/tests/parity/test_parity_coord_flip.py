"""coord_flip against DALI 2.4: the same points, layouts, flips and centres (per sample too)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"coord_flip": "exact"}

_RNG = np.random.default_rng(8)
_POINTS = {d: [_RNG.random((n, d), dtype=np.float32) for n in (4, 0, 9)] for d in (1, 2, 3)}
_FLIPS = [np.int32(k % 2) for k in range(3)]
_CENTRES = [np.float32(0.2 + 0.3 * k) for k in range(3)]


@pytest.mark.parametrize("dims,layout", [(1, ""), (2, ""), (2, "yx"), (3, ""), (3, "zyx")])
def test_coord_flip_equals_dali(dims, layout):
    def define(fn, types):
        data = fn.external_source(source=lambda: [p.copy() for p in _POINTS[dims]], batch=True)
        flips = fn.external_source(source=lambda: _FLIPS, batch=True)
        centres = fn.external_source(source=lambda: _CENTRES, batch=True)
        kwargs = {"layout": layout} if layout else {}
        return (fn.coord_flip(data, **kwargs),
                fn.coord_flip(data, flip_x=0, flip_y=1, flip_z=1, center_y=0.25, center_z=0.8,
                              **kwargs),
                fn.coord_flip(data, flip_x=flips, center_x=centres, **kwargs))
    out = run_both(define, 3)
    for k in range(3):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"coord_flip output {k}")
