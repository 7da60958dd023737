"""resize with every interp_type against PIL's resampling (which torchvision's antialiased
resize follows): float32 images to 1e-3, uint8 within PIL's 8-bit fixed-point error."""

import numpy as np
import pytest

import stoker
from stoker import fn, types

PIL = pytest.importorskip("PIL.Image")

FILTERS = {types.INTERP_NN: "NEAREST", types.INTERP_LINEAR: "BILINEAR",
           types.INTERP_CUBIC: "BICUBIC", types.INTERP_LANCZOS3: "LANCZOS"}


def _resize(images, size, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=0)
    with pipe:
        data = fn.external_source(lambda: images, layout="HWC")
        pipe.set_outputs(fn.resize(data, size=size, **kwargs))
    (out,) = pipe.run()
    return [out[i].numpy() for i in range(len(images))]


def _pil_float(img, size, flt):
    """PIL resamples float ('F') images channel by channel with double weights."""
    chans = [np.asarray(PIL.fromarray(img[..., c], "F").resize(
        (size[1], size[0]), getattr(PIL.Resampling, flt))) for c in range(img.shape[2])]
    return np.stack(chans, 2)


@pytest.mark.parametrize("interp", list(FILTERS))
@pytest.mark.parametrize("src,size", [((37, 53), (11, 17)), ((20, 30), (41, 45)),
                                      ((64, 48), (23, 61)), ((9, 9), (9, 9))])
def test_filters_match_pil(interp, src, size):
    rng = np.random.default_rng(sum(src))
    f = rng.uniform(0, 255, src + (3,)).astype(np.float32)
    (got,) = _resize([f], size, interp_type=interp)
    if interp == types.INTERP_NN:
        # floor((i + 0.5) * scale) exactly (PIL's float arithmetic lands one pixel lower
        # where that product is an integer).
        ys = np.minimum(np.floor((np.arange(size[0]) + 0.5) * src[0] / size[0]).astype(int),
                        src[0] - 1)
        xs = np.minimum(np.floor((np.arange(size[1]) + 0.5) * src[1] / size[1]).astype(int),
                        src[1] - 1)
        np.testing.assert_array_equal(got, f[ys][:, xs])
        return
    ref = _pil_float(f, size, FILTERS[interp])
    np.testing.assert_allclose(got, ref, atol=2e-3, rtol=1e-5)
    u = rng.integers(0, 256, src + (3,), dtype=np.uint8)
    (got,) = _resize([u], size, interp_type=interp)
    overshoot = interp != types.INTERP_LINEAR and (size[0] > src[0] or size[1] > src[1])
    if overshoot:
        # PIL clips its intermediate (horizontal) pass to 8 bits, which cuts the lobes of
        # cubic and lanczos when upscaling; stoker keeps it in float: compare with the float
        # result rounded instead.
        ref = np.clip(np.floor(_pil_float(u.astype(np.float32), size, FILTERS[interp]) + 0.5),
                      0, 255)
    else:
        ref = np.asarray(PIL.fromarray(u).resize((size[1], size[0]),
                                                 getattr(PIL.Resampling, FILTERS[interp])))
    assert np.abs(got.astype(int) - ref.astype(int)).max() <= 1, interp


def test_gaussian_and_triangular():
    rng = np.random.default_rng(3)
    img = rng.uniform(0, 255, (40, 40, 1)).astype(np.float32)
    (g,) = _resize([img], (20, 20), interp_type=types.INTERP_GAUSSIAN)
    # A gaussian of sigma 0.5 source pixels, stretched by the scale 2: weights from the formula.
    centre = (np.arange(20) + 0.5) * 2
    x = np.arange(40) + 0.5
    w = np.exp(-((x[None] - centre[:, None]) / 2) ** 2 / (2 * 0.25))
    w[np.abs(x[None] - centre[:, None]) / 2 >= 1.5] = 0
    w /= w.sum(1, keepdims=True)
    np.testing.assert_allclose(g[..., 0], w @ img[..., 0] @ w.T, rtol=1e-4, atol=1e-3)
    (t,) = _resize([img], (13, 13), interp_type=types.INTERP_TRIANGULAR, antialias=False)
    (l,) = _resize([img], (13, 13), interp_type=types.INTERP_LINEAR, antialias=True)
    np.testing.assert_array_equal(t, l)  # triangular is always antialiased
