"""segmentation.random_object_bbox against DALI 2.4: the same boxes (face-connected blobs) drawn
about equally often, in the same formats, dtypes and shapes, with the same class and background
rules and the same whole-input fallback."""
import collections

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"segmentation.random_object_bbox": "distribution"}

MASK = np.zeros((10, 12), np.uint8)
MASK[0, 0] = MASK[1, 1] = 1      # diagonal neighbours: two blobs
MASK[0, 5:8] = 1
MASK[5:9, 5:9] = 2
MASK[3, 10:12] = 3
MASK[4, 10] = 3                  # an L: one blob


def _draws(lib, iterations=4, batch=100, **kw):
    def define(fn, types):
        m = fn.external_source(source=lambda: [MASK] * batch, batch=True)
        out = fn.segmentation.random_object_bbox(m, format="box", output_class=True, **kw)
        return tuple(out)

    res = run(lib, define, batch, iterations=iterations)
    draws = []
    for it in res:
        boxes, classes = it
        for b, c in zip(boxes, classes):
            assert b.dtype == np.int32 and b.shape == (4,) and c.dtype == np.int32 and c.shape == ()
            draws.append((tuple(b.tolist()), int(c)))
    return draws


def _freq(draws):
    n = len(draws)
    return {k: v / n for k, v in collections.Counter(draws).items()}


@pytest.mark.parametrize("kw", [
    {},
    {"k_largest": 1},
    {"threshold": [2, 2]},
    {"classes": [0, 3]},
    {"class_weights": [3.0, 1.0, 0.0]},
    {"foreground_prob": 0.5, "classes": [1, 2]},
    {"background": 1},
], ids=repr)
def test_same_boxes_about_as_often(kw):
    ours, theirs = _freq(_draws("stoker", **kw)), _freq(_draws("dali", **kw))
    assert set(ours) == set(theirs), (sorted(ours), sorted(theirs))
    for k in theirs:
        assert ours[k] == pytest.approx(theirs[k], abs=0.07), k


def test_ignore_class_alike():
    def define(fn, types):
        m = fn.external_source(source=lambda: [MASK] * 100, batch=True)
        return tuple(fn.segmentation.random_object_bbox(m, ignore_class=True,
                                                        format="start_end"))

    freq = {}
    for lib in ("stoker", "dali"):
        draws = [(tuple(s.tolist()), tuple(e.tolist()))
                 for it in run(lib, define, 100, iterations=4) for s, e in zip(*it)]
        freq[lib] = _freq(draws)
    assert set(freq["stoker"]) == set(freq["dali"])
    assert len(freq["dali"]) == 5
    for k, v in freq["dali"].items():
        assert freq["stoker"][k] == pytest.approx(v, abs=0.07)


def test_no_objects_whole_input_alike():
    def define(fn, types):
        m = fn.external_source(source=lambda: [np.zeros((3, 4, 2), np.int16),
                                               np.zeros((0, 4, 2), np.int16)], batch=True)
        return tuple(fn.segmentation.random_object_bbox(m, output_class=True))

    ours, theirs = run("stoker", define, 2), run("dali", define, 2)
    for a, b in zip(ours[0], theirs[0]):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
