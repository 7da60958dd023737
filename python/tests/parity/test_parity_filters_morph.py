"""laplacian, experimental.median_blur, experimental.dilate and experimental.erode against DALI 2.4.

laplacian: DALI's CPU operator, bit for bit (every type, layout, window and smoothing size up to
31, scales, normalized_kernel, per-sample and per-frame arguments), and on a GPU machine stoker's
GPU backend against DALI's CPU one (DALI's GPU backend rounds half to even; stoker's two backends
round alike, half away from zero, as DALI's CPU backend).
median_blur, dilate, erode: DALI has only GPU backends (CV-CUDA). Here stoker's CPU backend is
held exactly to a NumPy reference written from CV-CUDA's kernels; on a GPU machine both stoker
backends are held exactly to DALI's GPU operators (skipped here, saying so)."""

import re

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "laplacian": "exact",
    "experimental.median_blur": "exact: against DALI's GPU operator on a GPU machine (DALI has "
                                "no CPU backend); here against a NumPy reference of CV-CUDA",
    "experimental.dilate": "exact: against DALI's GPU operator on a GPU machine (DALI has no "
                           "CPU backend); here against a NumPy reference of CV-CUDA",
    "experimental.erode": "exact: against DALI's GPU operator on a GPU machine (DALI has no CPU "
                          "backend); here against a NumPy reference of CV-CUDA",
}

_RNG = np.random.default_rng(47)


def _images(shapes, dtype=np.uint8, lo=0, hi=256):
    return [(_RNG.random(s) * (hi - lo) + lo).astype(dtype) for s in shapes]


def _source(fn, data, layout=""):
    return fn.external_source(source=lambda: [np.copy(a) for a in data], batch=True,
                              layout=layout)


def _same(out, count, what):
    for k in range(count):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"{what} output {k}")


# ---------------------------------------------------------------------------------- laplacian


def test_laplacian_windows_scales_equal_dali():
    data = _images([(17, 23, 3), (5, 4, 1), (1, 7, 2), (40, 3, 3), (33, 35, 1)])

    def define(fn, types):
        x = _source(fn, data, "HWC")
        return (fn.laplacian(x),
                fn.laplacian(x, window_size=5, dtype=types.FLOAT),
                fn.laplacian(x, window_size=[3, 7], smoothing_size=[1, 5],
                             normalized_kernel=True),
                fn.laplacian(x, window_size=31, smoothing_size=29, dtype=types.FLOAT),
                fn.laplacian(x, window_size=[9, 3], scale=[0.5, 0.25]),
                fn.laplacian(x, smoothing_size=1, scale=-1.5, dtype=types.FLOAT),
                fn.laplacian(x, window_size=[13, 11], normalized_kernel=True))

    _same(run_both(define, len(data)), 7, "laplacian windows")


@pytest.mark.parametrize("dtype,lo,hi", [
    (np.int8, -128, 128), (np.uint16, 0, 65536), (np.int16, -32768, 32768),
    (np.uint32, 0, 2 ** 32), (np.int32, -2 ** 31, 2 ** 31), (np.int64, -2 ** 40, 2 ** 40),
    (np.uint64, 0, 2 ** 40), (np.float16, -100, 100), (np.float32, -300, 300)])
def test_laplacian_types_equal_dali(dtype, lo, hi):
    """float16 too: DALI's CPU kernel rounds every product and its float16 buffers to half
    precision (its float16 op float gives float16), which stoker reproduces."""
    data = _images([(11, 13, 3), (9, 20, 1)], dtype, lo, hi)
    vol = _images([(4, 5, 6)], dtype, lo, hi)

    def define(fn, types):
        x = _source(fn, data, "HWC")
        return (fn.laplacian(x), fn.laplacian(x, window_size=5, smoothing_size=3,
                                              dtype=types.FLOAT),
                fn.laplacian(x, normalized_kernel=True, window_size=7),
                fn.laplacian(x, smoothing_size=1, window_size=[3, 5], dtype=types.FLOAT),
                fn.laplacian(x, smoothing_size=[3, 1], scale=[0.5, 3]))

    _same(run_both(define, len(data)), 5, f"laplacian {np.dtype(dtype).name}")

    def define_vol(fn, types):
        x = _source(fn, vol, "DHW")
        return (fn.laplacian(x), fn.laplacian(x, smoothing_size=[1, 3, 1], dtype=types.FLOAT),
                fn.laplacian(_source(fn, [v[0, 0] for v in vol], "W"), dtype=types.FLOAT),
                fn.laplacian(_source(fn, [v[0, 0] for v in vol], "W"), window_size=5))

    _same(run_both(define_vol, len(vol)), 4, f"laplacian {np.dtype(dtype).name} 3-D and 1-D")


@pytest.mark.parametrize("layout,shapes", [
    ("HW", [(13, 17), (40, 3)]),
    ("", [(13, 17), (9, 11)]),
    ("", [(6, 7, 8)]),             # no layout: a volume
    ("", [(30,), (4,)]),           # and 1-D
    ("W", [(25,), (2,)]),
    ("CHW", [(3, 9, 11), (1, 30, 30)]),
    ("DHW", [(5, 9, 11), (3, 4, 6)]),
    ("DHWC", [(5, 9, 11, 2), (4, 3, 3, 1)]),
    ("CDHW", [(2, 5, 6, 7)]),
    ("FHWC", [(3, 10, 12, 3), (1, 5, 5, 3)]),
    ("FCHW", [(2, 3, 6, 7)]),
    ("CFHW", [(3, 2, 6, 7)]),
    ("FW", [(3, 11)]),
    ("FDHWC", [(2, 4, 5, 6, 1)]),
])
def test_laplacian_layouts_equal_dali(layout, shapes):
    data = _images(shapes, np.float32, -50, 200)
    axes = len(shapes[0]) - sum(c in "FC" for c in layout) if layout else len(shapes[0])

    def define(fn, types):
        x = _source(fn, data, layout)
        return (fn.laplacian(x), fn.laplacian(x, window_size=[5] * axes,
                                              smoothing_size=[1] + [3] * (axes - 1)),
                fn.laplacian(x, window_size=7, normalized_kernel=True))

    _same(run_both(define, len(data)), 3, f"laplacian {layout or 'no layout'}")


def test_laplacian_per_sample_and_per_frame_arguments_equal_dali():
    data = _images([(12, 14, 3), (20, 9, 3), (7, 7, 3)])
    clips = _images([(3, 10, 12, 3), (2, 8, 8, 3)])
    # One value (all axes) or one per axis, sample by sample.
    wins = [np.array([3, 5], np.int32), np.array([7], np.int32), np.array([9, 3], np.int32)]
    smooth = [np.array([1], np.int32), np.array([3, 5], np.int32), np.array([5, 1], np.int32)]
    scales = [np.array([1.0, 2.0], np.float32), np.array([0.5], np.float32),
              np.array([-1.0, 0.125], np.float32)]
    frame_wins = [np.array([3, 5, 7], np.int32), np.array([9, 3], np.int32)]

    def define(fn, types):
        x = _source(fn, data, "HWC")
        return (fn.laplacian(x, window_size=_source(fn, wins)),
                fn.laplacian(x, window_size=_source(fn, wins),
                             smoothing_size=_source(fn, smooth), scale=_source(fn, scales)),
                fn.laplacian(x, smoothing_size=_source(fn, smooth), normalized_kernel=True,
                             dtype=types.FLOAT),
                fn.laplacian(x, scale=_source(fn, scales), window_size=[5, 3]))

    _same(run_both(define, len(data)), 4, "laplacian per-sample")

    def define_frames(fn, types):
        return fn.laplacian(_source(fn, clips, "FHWC"),
                            window_size=fn.per_frame(_source(fn, frame_wins, "F")))

    _same(run_both(define_frames, len(clips)), 1, "laplacian per-frame")


@pytest.mark.parametrize("kwargs,match", [
    (dict(window_size=4), "window_size must be an odd integer between 3 and 31, got 4"),
    (dict(window_size=1), "window_size must be an odd integer between 3 and 31, got 1"),
    (dict(window_size=33), "window_size must be an odd integer between 3 and 31, got 33"),
    (dict(smoothing_size=2), "smoothing_size must be an odd integer between 1 and 31, got 2"),
    (dict(smoothing_size=33), "smoothing_size must be an odd integer between 1 and 31"),
    (dict(window_size=[3, 5, 7]), "window_size of sample 0 needs 1 or 2 values"),
    (dict(scale=[1, 2, 3]), "scale of sample 0 needs 1 or 2 values"),
    (dict(normalized_kernel=True, scale=2.0), "scale cannot be given when normalized_kernel"),
])
def test_laplacian_bad_arguments_fail_in_both(kwargs, match):
    data = _images([(8, 9, 3)])
    for lib in ("stoker", "dali"):
        def define(fn, types):
            return fn.laplacian(_source(fn, data, "HWC"), **kwargs)
        with pytest.raises(Exception) as err:
            run(lib, define, 1)
        if lib == "stoker":
            assert "laplacian" in str(err.value) and match in str(err.value), str(err.value)


@pytest.mark.parametrize("layout,shape,match", [
    ("HWF", (4, 5, 2), "frames \\(F\\) must lead the layout"),
    ("HCW", (4, 2, 5), "channels must come first or last"),
    ("XYZW", (2, 2, 2, 2), "4 spatial axes; 1 to 3 are supported"),
])
def test_laplacian_bad_layouts_fail_in_both(layout, shape, match):
    data = _images([shape])
    for lib in ("stoker", "dali"):
        def define(fn, types):
            return fn.laplacian(_source(fn, data, layout))
        with pytest.raises(Exception) as err:
            run(lib, define, 1)
        if lib == "stoker":
            assert "laplacian" in str(err.value), str(err.value)
            assert re.search(match, str(err.value)), str(err.value)


def test_laplacian_gpu_equals_dali_cpu():
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backend is compared on the GPU machine")
    data = _images([(17, 23, 3), (40, 3, 1), (1, 1, 3)])
    vol = _images([(5, 6, 7, 2), (3, 3, 3, 2), (4, 9, 2, 2)], np.float32, -9, 9)

    def define(fn, types, gpu):
        x = _source(fn, data, "HWC")
        v = _source(fn, vol, "DHWC")
        x, v = (x.gpu(), v.gpu()) if gpu else (x, v)
        return (fn.laplacian(x, window_size=[5, 9], smoothing_size=[3, 1]),
                fn.laplacian(x, normalized_kernel=True, dtype=types.FLOAT),
                fn.laplacian(v, window_size=5))

    ours = run("stoker", lambda fn, types: define(fn, types, True), len(data), device_id=0)
    theirs = run("dali", lambda fn, types: define(fn, types, False), len(data))
    for k in range(3):
        assert_same(ours[0][k], theirs[0][k], what=f"laplacian gpu output {k}")


# ------------------------------------------------------------- median_blur, dilate, erode

_PAD = {"constant": "constant", "replicate": "edge", "reflect": "symmetric",
        "reflect_101": "reflect", "wrap": "wrap"}


def _rank_ref(img, op, kw, kh, ax, ay, border="replicate", iterations=1):
    """CV-CUDA's kernels in NumPy: the window placed with its (ax, ay) element over the pixel;
    the maximum (minimum) starts from, and constant borders read, the neutral value (the type's min for dilate, its max for erode;
    float's min is the smallest positive normal, 1.18e-38)."""
    hwc = img if img.ndim == 3 else img[:, :, None]
    info = np.finfo if hwc.dtype.kind == "f" else np.iinfo
    fill = info(hwc.dtype).tiny if hwc.dtype.kind == "f" and op == "dilate" else (
        info(hwc.dtype).min if op == "dilate" else info(hwc.dtype).max)
    h, w = hwc.shape[:2]
    for _ in range(iterations):
        pads = ((ay, kh - 1 - ay), (ax, kw - 1 - ax), (0, 0))
        if border == "constant":
            p = np.pad(hwc, pads, mode="constant", constant_values=fill)
        else:
            p = np.pad(hwc, pads, mode=_PAD[border])
        stack = np.stack([p[i:i + h, j:j + w] for i in range(kh) for j in range(kw)])
        if op == "median":
            hwc = np.sort(stack, axis=0, kind="stable")[stack.shape[0] // 2]
        else:  # CV-CUDA starts from the neutral value: float dilate gives 1.18e-38 at least
            hwc = (np.maximum(stack.max(0), fill) if op == "dilate"
                   else np.minimum(stack.min(0), fill))
    return hwc if img.ndim == 3 else hwc[:, :, 0]


def _run_stoker(data, layout, op, **kwargs):
    def define(fn, types):
        return getattr(fn.experimental, op)(_source(fn, data, layout), **kwargs)
    return run("stoker", define, len(data))[0][0]


@pytest.mark.parametrize("dtype,lo,hi", [(np.uint8, 0, 256), (np.uint16, 0, 65536),
                                         (np.float32, -100, 100)])
def test_median_blur_cpu_equals_reference(dtype, lo, hi):
    data = _images([(17, 23, 3), (5, 4, 1), (9, 30, 4)], dtype, lo, hi)
    for window, (kw, kh) in [(3, (3, 3)), ([5, 3], (5, 3)), ([1, 7], (1, 7)), (11, (11, 11))]:
        got = _run_stoker(data, "HWC", "median_blur", window_size=window)
        for img, g in zip(data, got):
            np.testing.assert_array_equal(g, _rank_ref(img, "median", kw, kh, kw // 2, kh // 2))


@pytest.mark.parametrize("op", ["dilate", "erode"])
@pytest.mark.parametrize("border", list(_PAD))
def test_morphology_cpu_equals_reference(op, border):
    for dtype, lo, hi in [(np.uint8, 0, 256), (np.float32, -100, 100)]:
        data = _images([(17, 23, 3), (5, 4, 1), (3, 2, 4)], dtype, lo, hi)
        for kwargs, (kw, kh, ax, ay, it) in [
                (dict(), (3, 3, 1, 1, 1)),
                (dict(mask_size=[5, 2], anchor=[0, 1]), (5, 2, 0, 1, 1)),
                (dict(mask_size=4, iterations=3), (4, 4, 2, 2, 3)),
                (dict(mask_size=[1, 9], anchor=[-1, 8], iterations=2), (1, 9, 0, 8, 2))]:
            got = _run_stoker(data, "HWC", op, border_mode=border, **kwargs)
            for img, g in zip(data, got):
                np.testing.assert_array_equal(
                    g, _rank_ref(img, op, kw, kh, ax, ay, border, it), err_msg=str(kwargs))


def test_rank_filters_layouts_and_per_sample_arguments():
    chw = _images([(3, 9, 11), (2, 6, 6)])
    clips = _images([(3, 7, 8, 3), (2, 5, 5, 3)])
    hw = _images([(13, 17), (6, 5)])
    masks = [np.array([3, 5], np.int32), np.array([2], np.int32)]
    got = _run_stoker(chw, "CHW", "erode", mask_size=[3, 5])
    for img, g in zip(chw, got):
        ref = _rank_ref(img.transpose(1, 2, 0), "erode", 3, 5, 1, 2, "constant")
        np.testing.assert_array_equal(g, ref.transpose(2, 0, 1))
    got = _run_stoker(clips, "FHWC", "median_blur", window_size=5)
    for clip, g in zip(clips, got):
        np.testing.assert_array_equal(g, np.stack([_rank_ref(f, "median", 5, 5, 2, 2)
                                                   for f in clip]))
    got = _run_stoker(hw, "HW", "dilate", border_mode="reflect_101")
    for img, g in zip(hw, got):
        np.testing.assert_array_equal(g, _rank_ref(img, "dilate", 3, 3, 1, 1, "reflect_101"))

    def define(fn, types):
        return fn.experimental.dilate(_source(fn, hw, "HW"), mask_size=_source(fn, masks))
    got = run("stoker", define, 2)[0][0]
    for img, g, (kw, kh) in zip(hw, got, [(3, 5), (2, 2)]):
        np.testing.assert_array_equal(g, _rank_ref(img, "dilate", kw, kh, kw // 2, kh // 2,
                                                   "constant"))


@pytest.mark.parametrize("op,kwargs,match", [
    ("median_blur", dict(window_size=4), "median_blur: window_size must be odd and between 1 "
                                         "and 255, got 4, 4 for sample 0"),
    ("median_blur", dict(window_size=[3, 257]), "median_blur: window_size must be odd"),
    ("median_blur", dict(window_size=[3, 3, 3]), "median_blur: window_size of sample 0 needs 1 "
                                                 "or 2 values"),
    ("dilate", dict(mask_size=0), "dilate: mask_size must be between 1 and 255, got 0, 0"),
    ("erode", dict(mask_size=300), "erode: mask_size must be between 1 and 255"),
    ("erode", dict(anchor=[3, 0]), "erode: anchor must lie within the mask"),
    ("dilate", dict(iterations=0), "dilate: iterations must be between 1 and 255, got 0"),
    ("dilate", dict(border_mode="clamp"), "dilate: border_mode must be constant, replicate"),
])
def test_rank_filters_bad_arguments(op, kwargs, match):
    with pytest.raises(ValueError, match=match):
        _run_stoker(_images([(8, 9, 3)]), "HWC", op, **kwargs)


def test_rank_filters_bad_layouts_and_types():
    with pytest.raises(ValueError, match="median_blur: expected images in HW, HWC or CHW"):
        _run_stoker(_images([(4, 5, 6)]), "DHW", "median_blur")
    with pytest.raises(TypeError, match="erode input: unsupported dtype int16"):
        _run_stoker(_images([(4, 5, 3)], np.int16, 0, 100), "HWC", "erode")


def _both_gpu(define, n):
    if not has_gpu():
        pytest.skip("no CUDA device: DALI's median_blur, dilate and erode (GPU only) are "
                    "compared on the GPU machine")
    return {"stoker": run("stoker", define, n, device_id=0),
            "dali": run("dali", define, n, device_id=0)}


@pytest.mark.parametrize("dtype,lo,hi", [(np.uint8, 0, 256), (np.uint16, 0, 65536),
                                         (np.float32, -100, 100)])
def test_median_blur_gpu_equals_dali(dtype, lo, hi):
    clips = _images([(3, 7, 8, 3), (2, 5, 5, 3)], dtype, lo, hi)
    # One channel count per batch: CV-CUDA's batches need one image format (DALI's median_blur
    # returns garbage for the others, its dilate/erode refuse); a mixed batch is stoker's GPU
    # against its CPU twin in test_laplacian_morph.py.
    for c in (1, 3, 4):
        data = _images([(17, 23, c), (5, 4, c), (30, 9, c)], dtype, lo, hi)

        def define(fn, types):
            x = _source(fn, data, "HWC").gpu()
            return (fn.experimental.median_blur(x), fn.experimental.median_blur(x, window_size=5),
                    fn.experimental.median_blur(x, window_size=[5, 3]),
                    fn.experimental.median_blur(x, window_size=[1, 9]))

        _same(_both_gpu(define, len(data)), 4, f"median_blur {c} channels")

    def define_clips(fn, types):
        return fn.experimental.median_blur(_source(fn, clips, "FHWC").gpu(), window_size=3)

    _same(_both_gpu(define_clips, len(clips)), 1, "median_blur sequences")


@pytest.mark.parametrize("op", ["dilate", "erode"])
@pytest.mark.parametrize("border", list(_PAD))
@pytest.mark.parametrize("dtype,lo,hi", [(np.uint8, 0, 256), (np.float32, -100, 100)])
def test_morphology_gpu_equals_dali(op, border, dtype, lo, hi):
    # float32 with a constant border: CV-CUDA's neutral value for dilate is FLT_MIN (1.18e-38),
    # which the negative values near the edges show.
    # One channel count per batch (CV-CUDA's batches need one image format: DALI refuses others).
    for c in (1, 3, 4):
        data = _images([(17, 23, c), (5, 4, c), (30, 9, c)], dtype, lo, hi)
        chw = _images([(c, 9, 11), (c, 6, 6), (c, 4, 4)], dtype, lo, hi)

        def define(fn, types):
            f = getattr(fn.experimental, op)
            x = _source(fn, data, "HWC").gpu()
            return (f(x, border_mode=border), f(x, mask_size=[5, 2], anchor=[0, 1],
                                                border_mode=border),
                    f(x, mask_size=4, iterations=3, border_mode=border),
                    f(_source(fn, chw, "CHW").gpu(), mask_size=[3, 5], border_mode=border))

        _same(_both_gpu(define, len(data)), 4, f"{op} {border} {c} channels")
