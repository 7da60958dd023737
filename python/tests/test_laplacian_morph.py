"""laplacian, experimental.median_blur, experimental.dilate and experimental.erode: against
NumPy/SciPy definitions (scipy's mode='mirror' is reflect-101), layouts and sequences,
per-sample arguments, every error naming the operator, and the GPU backends against the CPU
ones (bit for bit)."""

import numpy as np
import pytest
from scipy import ndimage

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _images(seed, shapes, dtype=np.uint8, lo=0, hi=256):
    rng = np.random.default_rng(seed)
    return [(rng.random(s) * (hi - lo) + lo).astype(dtype) for s in shapes]


def _run(op, images, layout="HWC", device="cpu", **kwargs):
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: images, layout=layout, device=device)
        target = fn
        for part in op.split("."):
            target = getattr(target, part)
        pipe.set_outputs(target(x, **kwargs))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out.as_cpu()]


def _binomial(n):
    w = np.array([1.0])
    for _ in range(n - 1):
        w = np.convolve(w, [1.0, 1.0])
    return w


def _deriv(n):
    return np.convolve(_binomial(n - 2), [1.0, -2.0, 1.0])


def _laplacian_ref(img, axes, window, smoothing=None, scale=None):
    """Sum over spatial axes i of scale[i] * the separable correlation with the derivative
    window along i and smoothing windows along the others, mirrored borders, in float64."""
    x = img.astype(np.float64)
    out = np.zeros_like(x)
    for i in range(axes):
        d = x
        for a in range(axes):
            w = _deriv(window[i]) if a == i else _binomial(
                window[i] if smoothing is None else smoothing[a])
            d = ndimage.correlate1d(d, w, axis=a, mode="mirror")
        out += (1.0 if scale is None else scale[i]) * d
    return out


def test_laplacian_matches_scipy():
    imgs = _images(1, [(19, 23, 3), (6, 5, 1), (1, 9, 2)])
    for kwargs, (window, smoothing, scale) in [
            (dict(), ((3, 3), None, None)),
            (dict(window_size=[5, 7]), ((5, 7), None, None)),
            (dict(window_size=5, smoothing_size=[1, 3]), ((5, 5), (1, 3), None)),
            (dict(scale=[0.5, -2.0]), ((3, 3), None, (0.5, -2.0)))]:
        got = _run("laplacian", imgs, dtype=types.FLOAT, **kwargs)
        for img, g in zip(imgs, got):
            np.testing.assert_allclose(g, _laplacian_ref(img, 2, window, smoothing, scale),
                                       rtol=1e-6, atol=1e-3, err_msg=str(kwargs))
    # Integer outputs: the exact sums, saturated.
    for img, g in zip(imgs, _run("laplacian", imgs)):
        np.testing.assert_array_equal(g, np.clip(_laplacian_ref(img, 2, (3, 3)), 0, 255))
    # normalized_kernel: partial i scaled by 2^-(sum of its window sizes - axes - 2).
    got = _run("laplacian", imgs, window_size=[5, 3], smoothing_size=[3, 7],
               normalized_kernel=True, dtype=types.FLOAT)
    for img, g in zip(imgs, got):
        ref = _laplacian_ref(img, 2, (5, 3), (3, 7), (2.0 ** -(5 + 7 - 4), 2.0 ** -(3 + 3 - 4)))
        np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-4)


def test_laplacian_volumes_lines_and_sequences():
    vol = _images(2, [(5, 7, 9), (3, 4, 4)], np.float32, -5, 5)
    for img, g in zip(vol, _run("laplacian", vol, "DHW", window_size=[3, 5, 3])):
        np.testing.assert_allclose(g, _laplacian_ref(img, 3, (3, 5, 3)), rtol=1e-5, atol=1e-3)
    lines = _images(3, [(40,), (3,)], np.float32, -5, 5)
    for img, g in zip(lines, _run("laplacian", lines, "W", window_size=7)):
        np.testing.assert_allclose(g, _laplacian_ref(img, 1, (7,)), rtol=1e-5, atol=1e-3)
    clips = _images(4, [(3, 8, 9, 2)], np.float32, 0, 10)
    got = _run("laplacian", clips, "FHWC", dtype=types.FLOAT)[0]
    for f in range(3):
        np.testing.assert_allclose(got[f], _laplacian_ref(clips[0][f], 2, (3, 3)), atol=1e-3)
    chw = _images(5, [(2, 6, 7)], np.float32, 0, 10)
    got = _run("laplacian", chw, "CHW")[0]
    for c in range(2):
        np.testing.assert_allclose(got[c], _laplacian_ref(chw[0][c], 2, (3, 3)), atol=1e-3)


def test_laplacian_errors_name_the_operator():
    imgs = _images(6, [(8, 9, 3)])
    cases = [(dict(window_size=4), ValueError,
              "laplacian: window_size must be an odd integer between 3 and 31, got 4 for "
              "sample 0"),
             (dict(smoothing_size=0), ValueError,
              "laplacian: smoothing_size must be an odd integer between 1 and 31, got 0"),
             (dict(window_size=[3, 3, 3]), ValueError,
              "laplacian: window_size of sample 0 needs 1 or 2 values"),
             (dict(normalized_kernel=True, scale=1.0), ValueError,
              "laplacian: scale cannot be given when normalized_kernel is True"),
             (dict(dtype=types.INT16), TypeError,
              "laplacian: dtype must be the input's \\(uint8\\) or float32, got int16")]
    for kwargs, kind, match in cases:
        with pytest.raises(kind, match=match):
            _run("laplacian", imgs, **kwargs)
    with pytest.raises(ValueError, match="laplacian: channels must come first or last"):
        _run("laplacian", imgs, "HCW")
    with pytest.raises(ValueError, match="laplacian: layout 'XYZW' has 4 spatial axes"):
        _run("laplacian", _images(7, [(2, 2, 2, 2)]), "XYZW")
    with pytest.raises(TypeError, match="laplacian input: unsupported dtype float64"):
        _run("laplacian", _images(8, [(4, 4)], np.float64), "HW")


def _rank_ref(img, op, kw, kh, ax=None, ay=None, mode="nearest"):
    hwc = img if img.ndim == 3 else img[:, :, None]
    ax = kw // 2 if ax is None else ax
    ay = kh // 2 if ay is None else ay
    h, w = hwc.shape[:2]
    pads = ((ay, kh - 1 - ay), (ax, kw - 1 - ax), (0, 0))
    # CV-CUDA's neutral values: where the maximum (minimum) starts and what a constant border reads
    info = np.finfo if hwc.dtype.kind == "f" else np.iinfo
    fill = (info(hwc.dtype).tiny if hwc.dtype.kind == "f" else info(hwc.dtype).min) \
        if op == "dilate" else info(hwc.dtype).max
    if mode == "constant":
        p = np.pad(hwc, pads, mode="constant", constant_values=fill)
    else:
        p = np.pad(hwc, pads, mode={"nearest": "edge", "reflect_101": "reflect"}[mode])
    stack = np.stack([p[i:i + h, j:j + w] for i in range(kh) for j in range(kw)])
    out = {"median": lambda s: np.sort(s, 0)[s.shape[0] // 2],
           "dilate": lambda s: np.maximum(s.max(0), fill),
           "erode": lambda s: np.minimum(s.min(0), fill)}[op](stack)
    return out if img.ndim == 3 else out[:, :, 0]


def test_float_morphology_starts_from_cv_cudas_neutral_values():
    """As DALI (CV-CUDA): a float dilate starts from 1.18e-38 (numeric_limits<float>::min()), so
    a window of negative values gives 1.18e-38; a float erode starts from FLT_MAX, so +inf gives
    FLT_MAX. Every border mode, both backends."""
    neg = [np.full((4, 5, 1), -3.0, np.float32), np.full((2, 3, 3), -0.5, np.float32)]
    inf = [np.full((3, 3, 1), np.inf, np.float32)]
    tiny, big = np.finfo(np.float32).tiny, np.finfo(np.float32).max
    for device in ["cpu"] + (["gpu"] if _stoker.cuda_available() else []):
        for border in ("constant", "replicate", "reflect", "reflect_101", "wrap"):
            for g in _run("experimental.dilate", neg, device=device, border_mode=border):
                np.testing.assert_array_equal(g, np.full_like(g, tiny), err_msg=device + border)
            for g in _run("experimental.erode", inf, device=device, border_mode=border):
                np.testing.assert_array_equal(g, np.full_like(g, big), err_msg=device + border)


def test_median_blur_matches_scipy():
    imgs = _images(9, [(17, 23, 3), (5, 4, 1), (1, 1, 2)])
    for kwargs, (kw, kh) in [(dict(), (3, 3)), (dict(window_size=5), (5, 5)),
                             (dict(window_size=[7, 3]), (7, 3))]:
        got = _run("experimental.median_blur", imgs, **kwargs)
        for img, g in zip(imgs, got):
            ref = ndimage.median_filter(img, size=(kh, kw, 1), mode="nearest")
            np.testing.assert_array_equal(g, ref, err_msg=str(kwargs))


def test_morphology_matches_numpy():
    imgs = _images(10, [(17, 23, 3), (5, 4, 1)])
    for op in ("dilate", "erode"):
        for img, g in zip(imgs, _run(f"experimental.{op}", imgs)):
            np.testing.assert_array_equal(g, _rank_ref(img, op, 3, 3, mode="constant"))
        got = _run(f"experimental.{op}", imgs, mask_size=[4, 2], anchor=[1, 0],
                   border_mode="reflect_101", iterations=2)
        for img, g in zip(imgs, got):
            ref = _rank_ref(_rank_ref(img, op, 4, 2, 1, 0, "reflect_101"), op, 4, 2, 1, 0,
                            "reflect_101")
            np.testing.assert_array_equal(g, ref)


def test_rank_filter_errors_name_the_operator():
    imgs = _images(11, [(8, 9, 3)])
    with pytest.raises(ValueError, match="median_blur: window_size must be odd and between 1 and "
                                         "255, got 2, 2 for sample 0"):
        _run("experimental.median_blur", imgs, window_size=2)
    with pytest.raises(ValueError, match="erode: anchor must lie within the mask \\(3 x 3\\) or be "
                                         "-1 \\(its centre\\), got 3, 0 for sample 0"):
        _run("experimental.erode", imgs, anchor=[3, 0])
    with pytest.raises(ValueError, match="dilate: border_mode must be constant, replicate, "
                                         "reflect, reflect_101 or wrap, got 'mirror'"):
        _run("experimental.dilate", imgs, border_mode="mirror")
    with pytest.raises(ValueError, match="dilate: expected images in HW, HWC or CHW layout"):
        _run("experimental.dilate", _images(12, [(3, 4, 5)]), "DHW")
    with pytest.raises(TypeError, match="median_blur input: unsupported dtype int32"):
        _run("experimental.median_blur", _images(13, [(4, 4, 1)], np.int32))


@needs_gpu
def test_gpu_equals_cpu():
    imgs = _images(14, [(17, 23, 3), (40, 3, 1), (1, 1, 3), (0, 4, 3)])
    for kwargs in [dict(), dict(window_size=[5, 9], smoothing_size=[3, 1]),
                   dict(normalized_kernel=True, dtype=types.FLOAT), dict(scale=[0.5, -1])]:
        for c, g in zip(_run("laplacian", imgs, **kwargs),
                        _run("laplacian", imgs, device="gpu", **kwargs)):
            np.testing.assert_array_equal(g, c, err_msg=str(kwargs))
    for dtype, lo, hi in [(np.int32, -10 ** 6, 10 ** 6), (np.float16, -50, 50),
                          (np.float32, -300, 300), (np.uint64, 0, 2 ** 40)]:
        data = _images(15, [(9, 11, 2), (3, 30, 1)], dtype, lo, hi)
        np.testing.assert_array_equal(_run("laplacian", data, device="gpu")[0],
                                      _run("laplacian", data)[0])
    vol = _images(16, [(5, 6, 7, 2), (3, 3, 3, 1)], np.float32, -9, 9)
    for c, g in zip(_run("laplacian", vol, "DHWC", window_size=5),
                    _run("laplacian", vol, "DHWC", device="gpu", window_size=5)):
        np.testing.assert_array_equal(g, c)
    for dtype, lo, hi in [(np.uint8, 0, 256), (np.uint16, 0, 65536), (np.float32, -50, 50)]:
        data = _images(17, [(17, 23, 3), (5, 4, 1), (0, 3, 3)], dtype, lo, hi)
        for op, kwargs in [("median_blur", dict(window_size=[5, 3])),
                           ("median_blur", dict(window_size=15)),
                           ("dilate", dict(mask_size=[4, 2], iterations=3)),
                           ("erode", dict(border_mode="wrap", anchor=[0, 2])),
                           ("dilate", dict(border_mode="constant"))]:
            for c, g in zip(_run(f"experimental.{op}", data, **kwargs),
                            _run(f"experimental.{op}", data, device="gpu", **kwargs)):
                np.testing.assert_array_equal(g, c, err_msg=f"{op} {kwargs}")
