"""brightness, contrast, brightness_contrast, hsv, hue, saturation and color_twist through a
pipeline, against numpy references of their documented formulas; per-sample arguments from
other operators; dtypes; error messages."""

import numpy as np
import pytest

import stoker
from stoker import fn
from op_util import run_op

YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])


def _hsv_ref(x, hue, sat, val):
    h = np.deg2rad(hue)
    adjust = np.array([[val, 0, 0],  # DALI's direction of the hue turn
                       [0, sat * val * np.cos(h), sat * val * np.sin(h)],
                       [0, -sat * val * np.sin(h), sat * val * np.cos(h)]])
    m = np.linalg.inv(YIQ) @ adjust @ YIQ
    return x.astype(np.float64) @ m.T


def _to(x, dtype):
    if np.dtype(dtype).kind == "f":
        return x.astype(dtype)
    info = np.iinfo(dtype)
    r = np.sign(x) * np.floor(np.abs(x) + 0.5)  # half away from zero
    return np.clip(r, info.min, info.max).astype(dtype)


def _run(op, images, **kwargs):
    return run_op(op, images, **kwargs)


@pytest.fixture
def images():
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(5, 7), (1, 1), (9, 2)]]


def test_brightness_contrast_matches_formula(images):
    for op, kwargs in [("brightness", dict(brightness=1.7, brightness_shift=-0.1)),
                       ("contrast", dict(contrast=0.4)),
                       ("contrast", dict(contrast=2.5, contrast_center=50)),
                       ("brightness_contrast", dict(brightness=0.8, brightness_shift=0.05,
                                                    contrast=1.3))]:
        b = kwargs.get("brightness", 1.0)
        s = kwargs.get("brightness_shift", 0.0)
        k = kwargs.get("contrast", 1.0)
        c = kwargs.get("contrast_center", 128.0)
        for x, got in zip(images, _run(op, images, **kwargs)):
            ref = s * 255 + b * (c + k * (x.astype(np.float64) - c))
            assert got.dtype == np.uint8
            assert np.abs(got.astype(int) - _to(ref, np.uint8).astype(int)).max() <= 1, op


def test_float_output_range_and_center(images):
    x = [im.astype(np.float32) / 255 for im in images]
    got = _run("brightness_contrast", x, brightness=2.0, brightness_shift=0.25, contrast=0.5)
    for a, g in zip(x, got):  # floats: range 1, centre 0.5
        np.testing.assert_allclose(g, 0.25 + 2 * (0.5 + 0.5 * (a - 0.5)), rtol=1e-6, atol=1e-6)
    got = _run("brightness", images, brightness=0.5, dtype=stoker.types.FLOAT)
    for a, g in zip(images, got):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, a * 0.5, rtol=1e-6)


@pytest.mark.parametrize("op,kwargs", [("hsv", dict(hue=30, saturation=1.4, value=0.9)),
                                       ("hue", dict(hue=-75)),
                                       ("saturation", dict(saturation=0.3))])
def test_hsv_family_matches_yiq_reference(images, op, kwargs):
    hue, sat, val = kwargs.get("hue", 0), kwargs.get("saturation", 1), kwargs.get("value", 1)
    for x, got in zip(images, _run(op, images, **kwargs)):
        ref = _to(_hsv_ref(x, hue, sat, val), np.uint8)
        assert np.abs(got.astype(int) - ref.astype(int)).max() <= 1


def test_saturation_zero_is_gray_and_identity_is_identity(images):
    for x, g in zip(images, _run("saturation", images, saturation=0.0)):
        assert (np.abs(g[..., 0].astype(int) - g[..., 1]) <= 1).all()
        assert (np.abs(g[..., 1].astype(int) - g[..., 2]) <= 1).all()
    for op in ("hsv", "color_twist", "brightness_contrast", "hue"):
        for x, g in zip(images, _run(op, images)):
            np.testing.assert_array_equal(g, x)


def test_color_twist_with_per_sample_arguments(images):
    hues = [np.float32(v) for v in (10, -40, 200)]
    bright = [np.float32(v) for v in (0.5, 1.0, 1.5)]

    pipe = stoker.Pipeline(batch_size=3, num_threads=2, seed=0)
    with pipe:
        data = fn.external_source(lambda: images, layout="HWC")
        h = fn.external_source(lambda: hues)
        b = fn.external_source(lambda: bright)
        pipe.set_outputs(fn.color_twist(data, hue=h, brightness=b, contrast=0.7,
                                        saturation=1.2))
    (out,) = pipe.run()
    for i, x in enumerate(images):
        hsv = _hsv_ref(x, float(hues[i]), 1.2, 1.0)
        ref = float(bright[i]) * (128 + 0.7 * (hsv - 128))
        assert np.abs(out[i].numpy().astype(int) - _to(ref, np.uint8).astype(int)).max() <= 1


def test_errors():
    gray = [np.zeros((4, 4, 1), np.uint8)]
    with pytest.raises(ValueError, match="hsv: expects RGB data \\(3 channels, channels last\\), "
                                         "got shape \\(4, 4, 1\\) for sample 0"):
        _run("hsv", gray)
    with pytest.raises(TypeError, match="brightness input: unsupported dtype int64"):
        _run("brightness", [np.zeros((2, 2, 3), np.int64)])
