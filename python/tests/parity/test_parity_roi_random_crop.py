"""roi_random_crop against DALI 2.4 by distribution: the same set of places drawn, each about
as often, for a bounded and an unbounded window."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"roi_random_crop": "distribution"}


@pytest.mark.parametrize("kwargs", [
    {"crop_shape": [10, 4], "roi_start": [20, 5], "roi_end": [26, 15], "in_shape": [30, 40]},
    {"crop_shape": [6], "roi_start": [2], "roi_shape": [3]},
], ids=["bounded", "unbounded"])
def test_places_are_drawn_alike(kwargs):
    def define(fn, types):
        return fn.roi_random_crop(**kwargs)
    draws = {}
    for lib in ("stoker", "dali"):
        out = run(lib, define, 64, iterations=10)
        draws[lib] = [tuple(s.tolist()) for it in out for s in it[0]]
        assert out[0][0][0].dtype == np.int64
    assert set(draws["stoker"]) == set(draws["dali"])
    places = sorted(set(draws["dali"]))
    for lib in draws:
        freq = np.array([draws[lib].count(p) for p in places]) / len(draws[lib])
        # 640 draws: about 3 standard deviations of a place's frequency
        np.testing.assert_allclose(freq, 1 / len(places), atol=0.03, err_msg=lib)
