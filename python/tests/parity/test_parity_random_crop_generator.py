"""random_crop_generator against DALI 2.4: windows by distribution (area fractions and aspect
ratios within their ranges and alike in mean; int32 [y, x] and [h, w] outputs), as the other
random windows (test_parity_random.py)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"random_crop_generator": "distribution"}

_SHAPES = [np.int64([480, 640, 3]), np.int64([100, 50, 3]), np.int64([300, 300, 1])] * 20


def _windows(lib):
    def define(fn, types):
        s = fn.external_source(source=lambda: _SHAPES, batch=True)
        return tuple(fn.random_crop_generator(s, random_area=[0.2, 0.9],
                                              random_aspect_ratio=[0.5, 2.0]))
    out = run(lib, define, len(_SHAPES), iterations=10)
    rows = []
    for anchors, shapes in out:
        for k, (a, s) in enumerate(zip(anchors, shapes)):
            assert a.dtype == np.int32 and s.dtype == np.int32 and a.shape == (2,)
            h, w = _SHAPES[k][:2]
            assert 0 <= a[0] and a[0] + s[0] <= h and 0 <= a[1] and a[1] + s[1] <= w
            rows.append((s[0] * s[1] / (h * w), s[1] / s[0]))
    return np.array(rows)


def test_windows_are_drawn_alike():
    ours, theirs = _windows("stoker"), _windows("dali")
    for k, what in enumerate(("area", "aspect")):
        assert abs(ours[:, k].mean() - theirs[:, k].mean()) < 0.05 * theirs[:, k].mean(), what
    assert ours[:, 0].min() > 0.15 and ours[:, 0].max() <= 1.0
