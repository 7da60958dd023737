"""coord_transform against DALI 2.4: M and T (lists and scalars), MT, transforms.* matrices as
MT, float and uint8 points, float and rounded uint8 outputs."""
import numpy as np

from parity_util import SKIP_REASON, assert_same, dali, run

import pytest

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"coord_transform": "exact"}

_RNG = np.random.default_rng(2)
_POINTS = [np.float32(_RNG.random((n, 3)) * 100) for n in (5, 0, 17)]
_U8 = [np.uint8(_RNG.integers(0, 255, (n, 2))) for n in (4, 1, 9)]


def test_coord_transform_equals_dali():
    def define(fn, types):
        p = fn.external_source(source=lambda: _POINTS, batch=True)
        q = fn.external_source(source=lambda: _U8, batch=True)
        return (fn.coord_transform(p, M=[0.5, 0.1, -0.2, 0.3, 1.5, 0.25], T=[10.0, -0.4]),
                fn.coord_transform(p, MT=[1, 0, 0, 0.5, 0, 1, 0, 0.25, 0, 0, 1, -3.0]),
                fn.coord_transform(p, M=2.5, T=1.5),
                fn.coord_transform(q, M=[0.5, 0.0, 0.0, 2.0], T=[10, 0.4], dtype=types.UINT8),
                fn.coord_transform(q, MT=fn.transforms.rotation(angle=33.0,
                                                                center=[100.0, 50.0])))
    ours, theirs = (run(lib, define, 3)[0] for lib in ("stoker", "dali"))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_same(a, b, what=f"output {k}")
