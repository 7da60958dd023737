"""segmentation.select_masks against DALI 2.4 where each mask has one polygon (exact), and the
documented difference where a mask has several (DALI keeps only the last of them)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"segmentation.select_masks": "exact: one polygon per mask; documented: several"}


def _define(ids, polygons, vertices, **kwargs):
    def define(fn, types):
        m = fn.external_source(source=lambda: ids, batch=True)
        p = fn.external_source(source=lambda: polygons, batch=True)
        v = fn.external_source(source=lambda: vertices, batch=True)
        return tuple(fn.segmentation.select_masks(m, p, v, **kwargs))
    return define


@pytest.mark.parametrize("reindex", [False, True])
def test_one_polygon_per_mask_equals_dali(reindex):
    polygons = [np.int32([[0, 0, 3], [1, 3, 7], [2, 7, 10]]), np.int32([[7, 0, 3], [3, 3, 6]])]
    vertices = [np.float32(np.arange(20).reshape(10, 2)), np.float32(np.arange(18).reshape(6, 3))]
    ids = [np.int32([2, 0]), np.int32([3])]
    ours, theirs = (run(lib, _define(ids, polygons, vertices, reindex_masks=reindex), 2)[0]
                    for lib in ("stoker", "dali"))
    for k in range(2):
        assert_same(ours[k], theirs[k], what=f"output {k}")


def test_masks_of_several_polygons_differ_as_documented():
    polygons = [np.int32([[0, 0, 3], [0, 3, 6]])]
    vertices = [np.float32(np.arange(12).reshape(6, 2))]
    ours, theirs = (run(lib, _define([np.int32([0])], polygons, vertices), 1)[0]
                    for lib in ("stoker", "dali"))
    assert ours[0][0].tolist() == [[0, 0, 3], [0, 3, 6]]
    assert theirs[0][0].tolist() == [[0, 0, 3]]  # DALI: the last polygon only
    np.testing.assert_array_equal(theirs[1][0], vertices[0][3:6])
