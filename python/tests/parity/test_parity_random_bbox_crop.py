"""random_bbox_crop against DALI 2.4: exactly where the window is not random (the whole image:
scaling [1, 1], or crop_shape = input_shape) - box layouts, centre and area pruning, labels of
any shape, kept indices, empty samples - and by distribution in SSD's setting (windows' areas
and aspect ratios, how often each threshold's window is chosen, how many boxes survive)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"random_bbox_crop": "distribution: windows by distribution; the whole-image case "
                              "exactly"}

_BOXES = [np.float32([[0.1, 0.1, 0.5, 0.5], [0.8, 0.8, 1.0, 0.95], [0.0, 0.3, 0.4, 0.9]]),
          np.float32([[0.2, 0.2, 0.3, 0.3]]), np.zeros((0, 4), np.float32)]
_LABELS = [np.int32([[1], [2], [3]]), np.int32([[4]]), np.zeros((0, 1), np.int32)]


def _define(boxes, labels, **kwargs):
    def define(fn, types):
        b = fn.external_source(source=lambda: boxes, batch=True)
        inputs = [b]
        if labels is not None:
            inputs.append(fn.external_source(source=lambda: labels, batch=True))
        return tuple(fn.random_bbox_crop(*inputs, **kwargs))
    return define


@pytest.mark.parametrize("kwargs", [
    {},
    {"allow_no_crop": False, "output_bbox_indices": True},
    {"allow_no_crop": False, "bbox_prune_threshold": 0.0},
    {"allow_no_crop": False, "bbox_prune_threshold": 0.5, "threshold_type": "overlap"},
    {"crop_shape": [10, 8], "input_shape": [10, 8]},
    {"crop_shape": [8, 10], "input_shape": [8, 10], "shape_layout": "HW", "bbox_layout": "yxYX"},
], ids=lambda k: ",".join(k) or "defaults")
def test_whole_image_windows_equal_dali(kwargs):
    for labels in (_LABELS, None):
        ours, theirs = (run(lib, _define(_BOXES, labels, **kwargs), 3, iterations=2)
                        for lib in ("stoker", "dali"))
        for a, b in zip(ours, theirs):
            assert len(a) == len(b)
            for k in range(len(a)):
                assert_same(a[k], b[k], what=f"output {k}")


def test_xywh_boxes_equal_dali():
    boxes = [np.float32([[0.1, 0.1, 0.4, 0.4], [0.5, 0.6, 0.5, 0.3]])]
    ours, theirs = (run(lib, _define(boxes, None, bbox_layout="xyWH", allow_no_crop=False), 1)
                    for lib in ("stoker", "dali"))
    for k in range(3):
        assert_same(ours[0][k], theirs[0][k])


def _ssd_statistics(lib):
    rng = np.random.default_rng(3)
    boxes = []
    for _ in range(64):
        lo = rng.uniform(0, 0.7, (3, 2))
        hi = lo + rng.uniform(0.05, 0.3, (3, 2))
        boxes.append(np.float32(np.concatenate([lo, hi], 1)))
    define = _define(boxes, None, aspect_ratio=[0.5, 2.0], thresholds=[0, 0.1, 0.3, 0.5, 0.7, 0.9],
                     scaling=[0.3, 1.0], num_attempts=50)
    out = run(lib, define, 64, iterations=30)
    shapes = np.array([s for it in out for s in it[1]], np.float64)
    kept = np.array([len(s) for it in out for s in it[2]])
    whole = np.all(shapes == 1.0, axis=1)
    area = shapes[~whole].prod(1)
    aspect = shapes[~whole, 0] / shapes[~whole, 1]
    return whole.mean(), area.mean(), np.median(aspect), kept.mean()


def test_ssd_windows_are_drawn_alike():
    (w0, a0, r0, k0), (w1, a1, r1, k1) = (_ssd_statistics(lib) for lib in ("stoker", "dali"))
    assert abs(w0 - w1) < 0.05, (w0, w1)   # the 'no crop' pick: about 1 in 7
    assert abs(a0 - a1) < 0.05, (a0, a1)
    assert abs(r0 - r1) < 0.1, (r0, r1)
    assert abs(k0 - k1) < 0.2, (k0, k1)
