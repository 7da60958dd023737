"""segmentation.random_mask_pixel against DALI 2.4 by distribution: the same foreground pixels
drawn about equally often, the same output type and shape."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"segmentation.random_mask_pixel": "distribution"}


def test_foreground_draws_alike():
    mask = np.zeros((8, 9, 1), np.uint8)
    mask[1, 2], mask[4, 5], mask[6, 1], mask[7, 8] = 3, 7, 9, 2

    def define(fn, types):
        m = fn.external_source(source=lambda: [mask] * 100, batch=True, layout="HWC")
        return fn.segmentation.random_mask_pixel(m, foreground=1, threshold=2.5)

    freq = {}
    for lib in ("stoker", "dali"):
        draws = [tuple(s.tolist()) for it in run(lib, define, 100, iterations=4) for s in it[0]]
        assert set(draws) == {(1, 2, 0), (4, 5, 0), (6, 1, 0)}, lib
        freq[lib] = np.array([draws.count(p) for p in sorted(set(draws))]) / len(draws)
    np.testing.assert_allclose(freq["stoker"], 1 / 3, atol=0.08)
    np.testing.assert_allclose(freq["dali"], 1 / 3, atol=0.08)
