"""gaussian_blur against a numpy convolution with reflect-101 borders (numpy's 'reflect')."""

import numpy as np
import pytest

import stoker
from stoker import fn
from op_util import run_op


def _window(sigma, size=0):
    r = size // 2 if size else int(np.ceil(3 * sigma))
    if sigma == 0:
        sigma = (r - 1) * 0.3 + 0.8
    k = np.exp(-np.arange(-r, r + 1) ** 2 / (2 * sigma * sigma))
    return k / k.sum()


def _ref(img, ky, kx):
    ry, rx = len(ky) // 2, len(kx) // 2
    p = np.pad(img.astype(np.float64), ((ry, ry), (rx, rx), (0, 0)), mode="reflect")
    h, w = img.shape[:2]
    tmp = sum(kx[k] * p[:, k:k + w] for k in range(len(kx)))
    return sum(ky[k] * tmp[k:k + h] for k in range(len(ky)))


def _blur(images, **kwargs):
    return run_op("gaussian_blur", images, **kwargs)


def test_matches_numpy_reference():
    rng = np.random.default_rng(4)
    imgs = [rng.integers(0, 256, s, dtype=np.uint8) for s in [(20, 31, 3), (8, 8, 1)]]
    for kwargs, (ky, kx) in [(dict(sigma=1.5), (_window(1.5), _window(1.5))),
                             (dict(sigma=[0.5, 2.0]), (_window(0.5), _window(2.0))),
                             (dict(window_size=5), (_window(0, 5), _window(0, 5)))]:
        for img, got in zip(imgs, _blur(imgs, **kwargs)):
            ref = np.clip(np.floor(_ref(img, ky, kx) + 0.5), 0, 255)
            assert np.abs(got.astype(int) - ref).max() <= 1, kwargs
    f = [img.astype(np.float32) for img in imgs]
    for img, got in zip(f, _blur(f, sigma=1.0)):
        np.testing.assert_allclose(got, _ref(img, _window(1.0), _window(1.0)), atol=1e-3)


def test_per_sample_sigma_and_errors():
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 256, (12, 12, 3), dtype=np.uint8) for _ in range(2)]
    sig = [np.array([0.8], np.float32), np.array([2.0], np.float32)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=0)
    with pipe:
        data = fn.external_source(lambda: imgs, layout="HWC")
        s = fn.external_source(lambda: sig)
        pipe.set_outputs(fn.gaussian_blur(data, sigma=s, dtype=stoker.types.FLOAT))
    (out,) = pipe.run()
    for i in range(2):
        w = _window(float(sig[i][0]))
        np.testing.assert_allclose(out[i].numpy(), _ref(imgs[i], w, w), atol=1e-3)
    with pytest.raises(ValueError, match="give sigma or window_size"):
        _blur(imgs)
    with pytest.raises(ValueError, match="window_size odd \\(or 0\\), got sigma 0 and "
                                         "window_size 4"):
        _blur(imgs, window_size=4)
