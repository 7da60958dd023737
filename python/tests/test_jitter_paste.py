"""jitter (replayed exactly from the Philox stream) and paste against numpy."""

import numpy as np
import pytest

import stoker
from stoker import fn
from op_util import run_op
from reference import RandomStream


def _run(op, images, seed=3, **kwargs):
    return run_op(op, images, seed=seed, **kwargs)


def _jitter_reference(img, degree, stream):
    """DALI 2.4's jitter: each component draws dx then dy from the nDegree integers starting at
    -(nDegree // 2), its source clamped to the image."""
    h, w, c = img.shape
    ref = np.empty_like(img)
    low = -(degree // 2)
    for y in range(h):
        for x in range(w):
            for ch in range(c):
                sx = min(max(x + low + stream.below(degree), 0), w - 1)
                sy = min(max(y + low + stream.below(degree), 0), h - 1)
                ref[y, x, ch] = img[sy, sx, ch]
    return ref


@pytest.mark.parametrize("degree", [2, 3, 4])
def test_jitter_replays_every_component(degree):
    rng = np.random.default_rng(1)
    imgs = [rng.integers(0, 255, (5, 7, 3), dtype=np.uint8),
            rng.random((4, 6, 2), dtype=np.float32)]
    for k, img in enumerate(imgs):
        (g,) = _run("jitter", [img], nDegree=degree, fill_value=[255, 0, 9][:img.shape[2]],
                    interp_type=types_interp(k))
        # stream of sample 0, instance 1 (the external source is instance 0)
        np.testing.assert_array_equal(g, _jitter_reference(img, degree, RandomStream(3, 1, 0)))


def types_interp(k):  # nn and linear sample alike: the moves are whole pixels
    return stoker.types.INTERP_LINEAR if k else stoker.types.INTERP_NN


def test_jitter_offsets_as_dali_draws_them():
    """Coordinates as values: the moves seen are exactly DALI's set, every value about equally
    often, the channels of a pixel moving apart, and the edges repeating (no fill)."""
    h = w = 15
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.repeat((yy * w + xx)[..., None], 3, axis=2).astype(np.uint8)
    for degree, moves in ((2, [-1, 0]), (3, [-1, 0, 1]), (4, [-2, -1, 0, 1]), (5, [-2, -1, 0, 1, 2])):
        outs = np.stack(_run("jitter", [img] * 8, nDegree=degree, fill_value=255)).astype(int)
        inner = outs[:, 3:-3, 3:-3]
        dy = inner // w - yy[3:-3, 3:-3, None]
        dx = inner % w - xx[3:-3, 3:-3, None]
        for d in (dy, dx):
            values, counts = np.unique(d, return_counts=True)
            assert values.tolist() == moves, (degree, values)
            assert counts.min() > 0.8 * d.size / degree, (degree, counts)
        assert np.mean(np.any(inner != inner[..., :1], axis=-1)) > 0.85
        assert outs.max() < h * w  # never the fill value: edges repeat
        left = outs[:, 3:-3, 0] % w  # column 0: moves to the left clamp to 0
        assert left.min() == 0 and left.max() == degree - 1 - degree // 2
        share = np.mean(left == 0)
        assert abs(share - (degree // 2 + 1) / degree) < 0.1, (degree, share)


def test_jitter_masks_and_validates():
    rng = np.random.default_rng(1)
    imgs = [rng.integers(0, 255, (5, 7, 3), dtype=np.uint8) for _ in range(2)]
    masks = [np.int32(0), np.int32(1)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=3)
    with pipe:
        x = fn.external_source(lambda: imgs, layout="HWC")
        m = fn.external_source(lambda: masks)
        pipe.set_outputs(fn.jitter(x, mask=m))
    (out,) = pipe.run()
    np.testing.assert_array_equal(out[0].numpy(), imgs[0])
    assert not np.array_equal(out[1].numpy(), imgs[1])
    np.testing.assert_array_equal(_run("jitter", imgs, nDegree=1)[0], imgs[0])  # offsets 0
    with pytest.raises(ValueError, match="jitter: nDegree must be >= 1, got 0"):
        _run("jitter", imgs, nDegree=0)
    with pytest.raises(ValueError, match="jitter: interp_type must be 'linear' or 'nn', got 'cubic'"):
        _run("jitter", imgs, interp_type="cubic")


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
