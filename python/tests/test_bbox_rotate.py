"""bbox_rotate follows rotate: a filled rectangle drawn in an image, turned by rotate, lies inside
the box bbox_rotate gives for it (and fills it to within a pixel, mode 'expand'), for rotate's
own canvas, keep_size and size; bad arguments are refused with their reason."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _rotate_both(image, box, angle, **canvas):
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=1)
    with pipe:
        img = fn.external_source(source=lambda: [image], batch=True, layout="HWC")
        b = fn.external_source(source=lambda: [np.array([box], np.float32)], batch=True)
        turned = fn.rotate(img, angle=angle, interp_type="nn", fill_value=[0], **canvas)
        boxes = fn.bbox_rotate(b, angle=angle, input_shape=list(image.shape), shape_layout="HWC",
                               bbox_normalized=False, **canvas)
        pipe.set_outputs(turned, boxes)
    t, bx = pipe.run()
    return np.asarray(t[0])[..., 0], np.asarray(bx[0])


@pytest.mark.parametrize("angle", [0.0, 17.0, 45.0, 90.0, -120.0, 200.0])
@pytest.mark.parametrize("canvas", [{}, {"keep_size": True}, {"size": [90, 70]}], ids=repr)
def test_the_box_follows_the_rotated_image(angle, canvas):
    image = np.zeros((60, 80, 1), np.uint8)
    box = (22.0, 14.0, 47.0, 31.0)  # l, t, r, b in pixels
    image[14:31, 22:47] = 255
    turned, boxes = _rotate_both(image, box, angle, **canvas)
    ys, xs = np.nonzero(turned)
    assert len(boxes) == 1 and len(ys) > 0
    l, t, r, b = boxes[0]
    # Every pixel of the turned rectangle is inside the box (pixel centres at +0.5) ...
    assert xs.min() + 0.5 >= l - 1 and xs.max() + 0.5 <= r + 1
    assert ys.min() + 0.5 >= t - 1 and ys.max() + 0.5 <= b + 1
    # ... and the box is no larger than the rectangle's extent (within a pixel and a half).
    assert xs.min() <= l + 1.5 and xs.max() + 1 >= r - 1.5, (xs.min(), xs.max(), l, r)
    assert ys.min() <= t + 1.5 and ys.max() + 1 >= b - 1.5, (ys.min(), ys.max(), t, b)


def test_fixed_keeps_the_box_extents_and_halfway_is_between():
    def run(mode, angle):
        pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=1)
        with pipe:
            b = fn.external_source(source=lambda: [np.array([[0.4, 0.3, 0.6, 0.5]], np.float32)],
                                   batch=True)
            pipe.set_outputs(fn.bbox_rotate(b, angle=angle, input_shape=[100, 100],
                                            keep_size=True, mode=mode))
        (out,) = pipe.run()
        return np.asarray(out[0])[0]

    fixed, expand, halfway = (run(m, 30.0) for m in ("fixed", "expand", "halfway"))
    np.testing.assert_allclose(fixed[2:] - fixed[:2], [0.2, 0.2], atol=1e-6)
    np.testing.assert_allclose((expand[2:] - expand[:2] + fixed[2:] - fixed[:2]) / 2,
                               halfway[2:] - halfway[:2], atol=1e-6)
    np.testing.assert_allclose((fixed[:2] + fixed[2:]) / 2, (expand[:2] + expand[2:]) / 2,
                               atol=1e-6)
    # A quarter turn swaps a box's extents.
    quarter = run("fixed", 90.0)
    np.testing.assert_allclose(quarter[2:] - quarter[:2], [0.2, 0.2], atol=1e-6)


@pytest.mark.parametrize("kw, message", [
    (dict(mode="grow"), "mode must be 'expand', 'fixed' or 'halfway'"),
    (dict(bbox_layout="xyzXYZ"), "bbox_layout must be 'xyXY' or 'xyWH'"),
    (dict(keep_size=True, size=[3, 3]), "keep_size and size cannot be given together"),
    (dict(shape_layout="CD"), "shape_layout must name H and W"),
    (dict(input_shape=[5]), "input_shape has 1 values, fewer than shape_layout 'HW' needs"),
])
def test_bad_arguments(kw, message):
    args = {"angle": 10.0, "input_shape": [10, 10], **kw}
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=1)
    with pytest.raises((ValueError, RuntimeError), match=message):
        with pipe:
            b = fn.external_source(source=lambda: [np.zeros((1, 4), np.float32)], batch=True)
            pipe.set_outputs(fn.bbox_rotate(b, **args))
        pipe.run()


def test_bad_boxes_and_labels():
    def run(boxes, labels):
        pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=1)
        with pipe:
            b = fn.external_source(source=lambda: [boxes], batch=True)
            lab = fn.external_source(source=lambda: [labels], batch=True)
            pipe.set_outputs(*fn.bbox_rotate(b, lab, angle=5.0, input_shape=[8, 8]))
        return pipe.run()

    with pytest.raises((ValueError, RuntimeError), match=r"sample 0.*boxes must be \[N, 4\]"):
        run(np.zeros((2, 3), np.float32), np.zeros(2, np.int32))
    with pytest.raises((ValueError, RuntimeError), match=r"labels must be \[N\] or \[N, 1\]"):
        run(np.zeros((2, 4), np.float32), np.zeros(3, np.int32))
    with pytest.raises((TypeError, RuntimeError), match="boxes must be float32"):
        run(np.zeros((2, 4), np.float64), np.zeros(2, np.int32))
