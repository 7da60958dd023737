"""jitter (replayed exactly from the Philox stream) and paste against numpy."""

import numpy as np
import pytest

import stoker
from stoker import fn
from op_util import run_op
from reference import RandomStream


def _run(op, images, seed=3, **kwargs):
    return run_op(op, images, seed=seed, **kwargs)


def test_jitter_replays_and_masks():
    rng = np.random.default_rng(1)
    imgs = [rng.integers(0, 255, (5, 7, 3), dtype=np.uint8) for _ in range(2)]
    got = _run("jitter", imgs, nDegree=3, fill_value=[255, 0, 9])
    for i, (img, g) in enumerate(zip(imgs, got)):
        r = RandomStream(3, 1, i)  # instance 1: the external source is 0
        ref = np.empty_like(img)
        for y in range(5):
            for x in range(7):
                sy = y + r.below(3) - 1
                sx = x + r.below(3) - 1
                ref[y, x] = img[sy, sx] if 0 <= sy < 5 and 0 <= sx < 7 else [255, 0, 9]
        np.testing.assert_array_equal(g, ref)
    masks = [np.int32(0), np.int32(1)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=3)
    with pipe:
        x = fn.external_source(lambda: imgs, layout="HWC")
        m = fn.external_source(lambda: masks)
        pipe.set_outputs(fn.jitter(x, mask=m))
    (out,) = pipe.run()
    np.testing.assert_array_equal(out[0].numpy(), imgs[0])
    np.testing.assert_array_equal(_run("jitter", imgs, nDegree=1)[0], imgs[0])  # offsets 0


def test_paste():
    img = np.arange(2 * 4 * 1, dtype=np.uint8).reshape(2, 4, 1) + 1
    (g,) = _run("paste", [img], ratio=2.0, paste_x=1.0, paste_y=0.0, fill_value=0)
    ref = np.zeros((4, 8, 1), np.uint8)  # (as DALI) each side ratio times the image's
    ref[0:2, 4:8] = img
    np.testing.assert_array_equal(g, ref)
    (g,) = _run("paste", [img], ratio=1.0, min_canvas_size=5)
    assert g.shape == (5, 5, 1)
    np.testing.assert_array_equal(g[1:3, 0:4], img)  # floor(0.5 * 3) = 1, floor(0.5 * 1) = 0
    with pytest.raises(ValueError, match="ratio must be >= 1, got 0.5"):
        _run("paste", [img], ratio=0.5)
