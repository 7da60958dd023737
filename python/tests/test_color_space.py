"""color_space_conversion against the BT.601 formulas."""

import numpy as np
import pytest

from op_util import run_op


def _run(images, **kwargs):
    return run_op("color_space_conversion", images, **kwargs)


def _round(x):
    return np.clip(np.floor(x + 0.5), 0, 255).astype(np.uint8)


def test_conversions():
    rgb = np.random.default_rng(1).integers(0, 256, (7, 9, 3), dtype=np.uint8)
    r, g, b = (rgb[..., k].astype(np.float64) for k in range(3))
    ycc = np.stack([16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255,
                    128 + (-37.797 * r - 74.203 * g + 112 * b) / 255,
                    128 + (112 * r - 93.786 * g - 18.214 * b) / 255], 2)
    (got,) = _run([rgb], image_type="RGB", output_type="YCbCr")
    assert np.abs(got.astype(int) - _round(ycc).astype(int)).max() <= 1
    (back,) = _run([got], image_type="YCbCr", output_type="RGB")
    assert np.abs(back.astype(int) - rgb.astype(int)).max() <= 2  # 8-bit YCbCr loses a little
    (gray,) = _run([rgb], image_type="RGB", output_type="GRAY")
    np.testing.assert_array_equal(gray[..., 0], _round(0.299 * r + 0.587 * g + 0.114 * b))
    (bgr,) = _run([rgb], image_type="RGB", output_type="BGR")
    np.testing.assert_array_equal(bgr, rgb[..., ::-1])
    (rep,) = _run([gray], image_type="GRAY", output_type="RGB")
    np.testing.assert_array_equal(rep, np.repeat(gray, 3, 2))
    (f,) = _run([rgb.astype(np.float32) / 255], image_type="RGB", output_type="YCbCr")
    np.testing.assert_allclose(f, ycc / 255, atol=1e-5)
    with pytest.raises(ValueError, match="unknown colour space 'HSL'"):
        _run([rgb], image_type="RGB", output_type="HSL")
    with pytest.raises(ValueError, match="image_type needs 1 channels, sample 0 has 3"):
        _run([rgb], image_type="GRAY", output_type="RGB")
