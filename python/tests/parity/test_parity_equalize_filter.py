"""equalize and filter against DALI 2.4's CPU operators, bit for bit: images, channel planes,
sequences; every border mode, anchors, 'valid' mode, fill values (per sample and per frame),
output types, the four input types of DALI's CPU filter; the calls of DALI's auto_aug
(fn.experimental.equalize, fn.experimental.filter with a subscripted constant filter)."""
import warnings

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "equalize": "exact",
    "filter": "exact: filters under 130 taps (uint8, float32) or 50 (other types), where DALI's "
              "OpenCV does not switch to a DFT (docs/dali_differences.md)",
}

_RNG = np.random.default_rng(31)


def _images(shapes, dtype=np.uint8, lo=0, hi=256):
    return [(_RNG.random(s) * (hi - lo) + lo).astype(dtype) for s in shapes]


def _normal(shapes):
    return [_RNG.normal(110, 35, s).clip(0, 255).astype(np.uint8) for s in shapes]


def _kernels(shapes):
    out = []
    for s in shapes:
        k = ((_RNG.random(s) - 0.25) / 2.5).astype(np.float32)
        k[_RNG.random(s) < 0.15] = 0
        out.append(k)
    return out


def _source(fn, data, layout=""):
    return fn.external_source(source=lambda: [np.copy(a) for a in data], batch=True,
                              layout=layout)


@pytest.mark.parametrize("layout,shapes", [
    ("HWC", [(37, 53, 3), (8, 8, 1), (1, 1, 3), (64, 20, 5), (16, 16, 3)]),
    ("HW", [(13, 17), (40, 3)]),
    ("", [(13, 17), (9, 11)]),
    ("", [(13, 17, 3), (9, 11, 2)]),
    ("CHW", [(3, 9, 11), (1, 30, 30)]),
    ("FHWC", [(3, 10, 12, 3), (1, 5, 5, 3)]),
    ("FHW", [(2, 10, 12)]),
    ("FCHW", [(2, 3, 6, 7)]),
])
def test_equalize_equals_dali(layout, shapes):
    data = _normal(shapes)
    if layout == "HWC":
        data[-1][:] = 77  # one value: kept

    def define(fn, types):
        x = _source(fn, data, layout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn.equalize(x), fn.experimental.equalize(x)

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"equalize {layout} output {k}")


_BORDERS = ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"]


@pytest.mark.parametrize("border", _BORDERS)
def test_filter_borders_anchors_modes_equal_dali(border):
    # Widths that leave every remainder of the row's fused part (filter.hpp's fused_prefix).
    data = _images([(17, 23, 3), (5, 4, 1), (9, 37, 2), (12, 53, 3), (6, 7, 4)])
    ks = _kernels([(3, 5), (7, 6), (2, 2), (5, 5), (1, 3)])
    fills = [np.uint8(v) for v in (0, 100, 250, 7, 0)]

    def define(fn, types):
        x, f = _source(fn, data, "HWC"), _source(fn, ks)
        fill = _source(fn, fills)
        return (fn.filter(x, f, border=border),
                fn.filter(x, f, fill, border=border, anchor=[0, 1]),
                fn.filter(x, f, border=border, anchor=0, dtype=types.FLOAT),
                fn.filter(x, f, border=border.upper(), anchor=[-1, 0]))

    out = run_both(define, len(data))
    for k in range(4):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"filter {border} output {k}")


def test_filter_valid_mode_equals_dali():
    data = _images([(17, 23, 3), (9, 37, 2), (6, 7, 3)])
    ks = _kernels([(3, 5), (2, 2), (6, 7)])

    def define(fn, types):
        x, f = _source(fn, data, "HWC"), _source(fn, ks)
        return fn.filter(x, f, mode="valid"), fn.filter(x, f, mode="valid", anchor=[1, 1])

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"filter valid output {k}")


@pytest.mark.parametrize("dtype,lo,hi", [(np.uint16, 0, 65536), (np.int16, -32768, 32768),
                                         (np.float32, -300, 300)])
def test_filter_types_equal_dali(dtype, lo, hi):
    data = _images([(17, 23, 3), (9, 37, 1), (8, 29, 2)], dtype, lo, hi)
    ks = _kernels([(3, 3), (5, 4), (2, 7)])

    def define(fn, types):
        x, f = _source(fn, data, "HWC"), _source(fn, ks)
        return (fn.filter(x, f, border="reflect_1001"),
                fn.filter(x, f, border="clamp", dtype=types.FLOAT))

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"filter {dtype} output {k}")


def test_filter_layouts_and_sequences_equal_dali():
    chw = _images([(3, 10, 11), (2, 6, 6)])
    clips = _images([(3, 7, 8, 3), (2, 5, 5, 3)])
    fchw = _images([(2, 3, 6, 6), (1, 2, 5, 9)])
    ks = _kernels([(3, 4), (2, 3)])
    per_frame = _kernels([(3, 3, 3), (2, 2, 2)])
    fills = [np.array([1, 100, 200], np.uint8), np.array([50, 60], np.uint8)]

    def define(fn, types):
        f = _source(fn, ks)
        return (fn.filter(_source(fn, chw, "CHW"), f, border="wrap"),
                fn.filter(_source(fn, clips, "FHWC"), f),
                fn.filter(_source(fn, clips, "FHWC"), fn.per_frame(_source(fn, per_frame)),
                          fn.per_frame(_source(fn, fills)), border="constant"),
                fn.filter(_source(fn, fchw, "FCHW"), f, border="clamp"))

    out = run_both(define, 2)
    for k in range(4):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"filter layouts output {k}")


def test_auto_aug_calls_equal_dali():
    """What DALI's auto_aug.augmentations does: fn.experimental.equalize(data) and
    fn.experimental.filter(data, kernel), the kernel a subscripted constant of 3x3 filters."""
    data = _images([(30, 40, 3), (17, 9, 3), (8, 8, 3)])
    blur = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / 13
    ident = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], np.float32)
    kernels = np.stack([-m * blur + (1 + m) * ident for m in np.linspace(-0.9, 0.9, 7)])
    kernels = kernels.astype(np.float32)
    idx = [np.int32(i) for i in (0, 3, 6)]

    def define(fn, types):
        x = _source(fn, data, "HWC")
        k = types.Constant(kernels)[_source(fn, idx)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn.experimental.equalize(x), fn.experimental.filter(x, k)

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"auto_aug call {k}")
