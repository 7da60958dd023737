"""bbox_paste: against the formula (numpy, float32 as DALI computes it), per-sample ratios and
places, boxes kept inside [0, 1] at the canvas's edge, and errors naming what is wrong."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _run(boxes, ratios, xs=None, ys=None, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(boxes), num_threads=2, seed=1)
    with pipe:
        b = fn.external_source(lambda: boxes)
        args = {"ratio": fn.external_source(lambda: ratios)}
        if xs is not None:
            args["paste_x"] = fn.external_source(lambda: xs)
            args["paste_y"] = fn.external_source(lambda: ys)
        pipe.set_outputs(fn.bbox_paste(b, **args, **kwargs))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out]


def _reference(b, ratio, px, py, ltrb):
    f = np.float32
    scale = f(1) / f(ratio)
    mul = (f(ratio) - f(1)) / f(ratio)
    off = [f(px) * mul, f(py) * mul]
    for d in range(2):
        if scale + off[d] > 1:
            off[d] = f(1) - scale
            while scale + off[d] > 1:
                off[d] = np.nextafter(off[d], f(-1))
    out = b.copy()
    out[:, 0] = b[:, 0] * scale + off[0]
    out[:, 1] = b[:, 1] * scale + off[1]
    out[:, 2] = b[:, 2] * scale + (off[0] if ltrb else f(0))
    out[:, 3] = b[:, 3] * scale + (off[1] if ltrb else f(0))
    return out


@pytest.mark.parametrize("ltrb", [False, True])
def test_boxes_follow_the_paste(ltrb):
    rng = np.random.default_rng(2)
    boxes = [np.float32(rng.random((n, 4)) * 0.5) for n in (3, 0, 5, 1)]
    ratios = [np.float32(r) for r in (1.0, 2.0, 3.7, 1.25)]
    xs = [np.float32(x) for x in (0.0, 0.5, 1.0, 0.3)]
    ys = [np.float32(y) for y in (1.0, 0.25, 0.0, 0.9)]
    for b, r, x, y, g in zip(boxes, ratios, xs, ys, _run(boxes, ratios, xs, ys, ltrb=ltrb)):
        np.testing.assert_array_equal(g, _reference(b, r, x, y, ltrb))
    # a box covering the image still ends inside the canvas when pasted at its far corner
    (g,) = _run([np.float32([[0, 0, 1, 1]])], [np.float32(3.0)], [np.float32(1)],
                [np.float32(1)], ltrb=True)
    assert g.max() <= 1.0


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="ratio .* must be at least 1, got 0.5"):
        _run([np.float32([[0, 0, 1, 1]])], [np.float32(0.5)])
    with pytest.raises(ValueError, match=r"sample 0 is \(3,\): boxes are 4 coordinates"):
        _run([np.float32([0, 0, 1])], [np.float32(2)])
