"""bbox_rotate against DALI 2.4, exactly: every mode, both layouts, normalised and pixel boxes,
rotate's own canvas, keep_size and size, per-sample angles, boxes leaving the canvas dropped
with their labels ([N] and [N, 1])."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"bbox_rotate": "exact"}

RNG = np.random.default_rng(5)


def _boxes(n, normalized, ltrb):
    lo = RNG.uniform(0, 0.8, (n, 2))
    ext = RNG.uniform(0.02, 0.6, (n, 2))
    b = np.concatenate([lo, lo + ext if ltrb else ext], 1)
    if not normalized:
        b *= [64, 48, 64, 48]
    return b.astype(np.float32)


@pytest.mark.parametrize("mode", ["expand", "fixed", "halfway"])
@pytest.mark.parametrize("ltrb, normalized", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("canvas", [{}, {"keep_size": True}, {"size": [50.7, 70.2]}], ids=repr)
def test_boxes_and_labels_alike(mode, ltrb, normalized, canvas):
    boxes = [_boxes(n, normalized, ltrb) for n in (5, 1, 0, 12)]
    labels = [np.arange(len(b), dtype=np.int32).reshape(-1, 1) for b in boxes]
    angles = [np.float32(a) for a in (30.0, -95.5, 10.0, 181.0)]

    def define(fn, types):
        b = fn.external_source(source=lambda: boxes, batch=True)
        lab = fn.external_source(source=lambda: labels, batch=True)
        ang = fn.external_source(source=lambda: angles, batch=True)
        return tuple(fn.bbox_rotate(b, lab, angle=ang, input_shape=[48, 64, 3],
                                    shape_layout="HWC", bbox_layout="xyXY" if ltrb else "xyWH",
                                    bbox_normalized=normalized, mode=mode, remove_threshold=0.3,
                                    **canvas))

    out = run_both(define, 4)
    for k, what in enumerate(("boxes", "labels")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=what)


def test_boxes_leaving_the_canvas_are_dropped_alike():
    # keep_size, 45 degrees: a corner box leaves the canvas, a central one stays.
    boxes = [np.array([[0.0, 0.0, 0.1, 0.1], [0.4, 0.4, 0.6, 0.6], [0.85, 0.0, 1.0, 0.2]],
                      np.float32)]
    labels = [np.array([7, 8, 9], np.int32)]

    def define(fn, types):
        b = fn.external_source(source=lambda: boxes, batch=True)
        lab = fn.external_source(source=lambda: labels, batch=True)
        return tuple(fn.bbox_rotate(b, lab, angle=45.0, input_shape=[40, 40], keep_size=True))

    out = run_both(define, 1)
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"output {k}")
    assert out["dali"][0][1][0].tolist() == [8, 9]  # the top-left box left the canvas


def test_one_dimensional_labels_and_no_labels():
    boxes = [_boxes(6, True, True) for _ in range(3)]
    labels = [np.arange(6, dtype=np.int32) for _ in range(3)]

    def define(fn, types):
        b = fn.external_source(source=lambda: boxes, batch=True)
        lab = fn.external_source(source=lambda: labels, batch=True)
        with_labels = fn.bbox_rotate(b, lab, angle=40.0, input_shape=[30, 90], keep_size=True)
        return (*with_labels, fn.bbox_rotate(b, angle=-20.0, input_shape=[90, 30]))

    out = run_both(define, 3)
    for k in range(3):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"output {k}")
