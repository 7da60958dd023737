"""equalize and filter: against numpy definitions (OpenCV's equalizeHist; filter2D's float
arithmetic, fused multiply-adds where DALI's OpenCV uses them), layouts and sequences, per-sample
arguments and inputs, every error naming what is wrong, DALI's older names, and the GPU backends
against the CPU ones."""
import warnings

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _pipe(device="cpu", batch_size=1):
    return stoker.Pipeline(batch_size=batch_size, num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)


def _equalize(images, layout="HWC", device="cpu", op=None):
    pipe = _pipe(device, len(images))
    with pipe:
        x = fn.external_source(lambda: images, layout=layout, device=device)
        pipe.set_outputs((op or fn.equalize)(x))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out.as_cpu()], out.layout()


def _filter(images, filters, fills=None, layout="HWC", device="cpu", filter_layout="",
            fill_layout="", **kwargs):
    pipe = _pipe(device, len(images))
    with pipe:
        x = fn.external_source(lambda: images, layout=layout, device=device)
        f = fn.external_source(lambda: filters, layout=filter_layout)
        inputs = [x, f]
        if fills is not None:
            inputs.append(fn.external_source(lambda: fills, layout=fill_layout))
        pipe.set_outputs(fn.filter(*inputs, **kwargs))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out.as_cpu()]


# ---------------------------------------------------------------- equalize

def _equalize_channel(ch):
    """OpenCV's equalizeHist: counts past the lowest value times 255 / (N - h[lowest]), float32,
    rounded half to even; a channel of one value is kept."""
    h = np.bincount(ch.ravel(), minlength=256)
    lo = int(np.nonzero(h)[0][0])
    if h[lo] == ch.size:
        return ch.copy()
    scale = np.float32(255) / np.float32(ch.size - h[lo])
    cum = (np.cumsum(h) - h[lo]).astype(np.float32)
    lut = np.clip(np.rint(cum * scale), 0, 255).astype(np.uint8)
    lut[:lo + 1] = 0
    return lut[ch]


def _equalize_hwc(img):
    if img.ndim == 2:
        return _equalize_channel(img)
    return np.stack([_equalize_channel(img[..., c]) for c in range(img.shape[2])], -1)


def _images(seed, shapes):
    rng = np.random.default_rng(seed)
    return [rng.normal(100, 30, s).clip(0, 255).astype(np.uint8) for s in shapes]


def test_equalize_matches_opencv_definition():
    imgs = _images(1, [(31, 47, 3), (8, 8, 1), (1, 1, 3), (64, 20, 5)])
    imgs.append(np.full((4, 6, 3), 9, np.uint8))  # one value: kept
    got, layout = _equalize(imgs)
    assert layout == "HWC"
    for img, out in zip(imgs, got):
        np.testing.assert_array_equal(out, _equalize_hwc(img))
    # Ties round half to even: 0, 10, 20 -> 0, 127.5 -> 128, 255.
    (out,), _ = _equalize([np.array([[0, 10, 20]], np.uint8)], layout="HW")
    np.testing.assert_array_equal(out, [[0, 128, 255]])


def test_equalize_layouts_and_sequences():
    hw = _images(2, [(13, 17)])
    got, layout = _equalize(hw, layout="")  # no layout: HW (DALI names it so)
    assert layout == "HW"
    np.testing.assert_array_equal(got[0], _equalize_channel(hw[0]))
    chw = _images(3, [(3, 9, 11)])
    got, layout = _equalize(chw, layout="CHW")
    assert layout == "CHW"
    np.testing.assert_array_equal(got[0], np.stack([_equalize_channel(p) for p in chw[0]]))
    # Sequences: every frame on its own.
    clips = _images(4, [(3, 10, 12, 3), (1, 5, 5, 3)])
    got, layout = _equalize(clips, layout="FHWC")
    assert layout == "FHWC"
    for clip, out in zip(clips, got):
        np.testing.assert_array_equal(out, np.stack([_equalize_hwc(f) for f in clip]))
    clips = _images(5, [(2, 3, 6, 7)])
    got, _ = _equalize(clips, layout="FCHW")
    np.testing.assert_array_equal(
        got[0], np.stack([np.stack([_equalize_channel(p) for p in f]) for f in clips[0]]))


def test_equalize_older_name_warns_and_runs():
    imgs = _images(6, [(9, 9, 3)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, _ = _equalize(imgs, op=fn.experimental.equalize)
    assert any("`stoker.fn.experimental.equalize` is now deprecated. Use `stoker.fn.equalize`"
               in str(w.message) for w in caught)
    np.testing.assert_array_equal(got[0], _equalize_hwc(imgs[0]))


def test_equalize_empty_sample():
    got, _ = _equalize([np.zeros((0, 4, 3), np.uint8)])
    assert got[0].shape == (0, 4, 3)


@pytest.mark.parametrize("data,layout,error,message", [
    (np.zeros((4, 5, 3), np.float32), "HWC", TypeError,
     "equalize: expects uint8 samples, got float32"),
    (np.zeros((2, 3, 4, 5), np.uint8), "", ValueError,
     r"equalize: sample 0 has shape \(2, 3, 4, 5\) and no layout; expected HW or HWC images "
     r"\(or give a layout\)"),
    (np.zeros((2, 3, 4), np.uint8), "DHW", ValueError,
     r"equalize: expects layout HW, HWC or CHW \(FHW, FHWC or FCHW for sequences\), got 'DHW'"),
])
def test_equalize_errors(data, layout, error, message):
    with pytest.raises(error, match=message):
        _equalize([data], layout=layout)


# ---------------------------------------------------------------- filter

def _index(idx, n, border):
    if border == "reflect_101":
        if n == 1:
            return np.zeros_like(idx)
        p = 2 * n - 2
        idx = np.mod(idx, p)
        return np.where(idx < n, idx, p - idx)
    if border in ("reflect_1001", "reflect"):
        idx = np.mod(idx, 2 * n)
        return np.where(idx < n, idx, 2 * n - 1 - idx)
    if border == "wrap":
        return np.mod(idx, n)
    if border == "clamp":
        return np.clip(idx, 0, n - 1)
    return np.where((idx >= 0) & (idx < n), idx, -1)  # constant


def _fused(in_dtype, out_dtype, row):
    """How many values of a row DALI's OpenCV accumulates with fused multiply-adds."""
    if in_dtype != out_dtype:
        return 0
    if in_dtype in (np.uint8, np.uint16, np.int16):
        return row - row % 4
    return row - row % 8 if in_dtype == np.float32 else 0


def _filter_ref(img, k, anchor=-1, border="reflect_101", mode="same", fill=0, out_dtype=None,
                axes=2):
    """The correlation of a sample (spatial axes first, then channels) with k, as DALI's CPU
    operator computes it: float32, the non-zero taps in row-major order, fused or not by place
    in the row (float64 sums stand in for the fused ones: their double rounding almost never
    matters), rounded half to even and saturated for integers."""
    img = np.asarray(img)
    out_dtype = np.dtype(out_dtype or img.dtype)
    x = img.astype(np.float32).reshape(img.shape[:axes] + (-1,))
    ext, ch = x.shape[:axes], x.shape[axes]
    anchors = anchor if isinstance(anchor, (list, tuple)) else [anchor] * axes
    if mode == "valid":
        out_ext, anchors = [e - t + 1 for e, t in zip(ext, k.shape)], [0] * axes
    else:
        out_ext = list(ext)
        anchors = [t // 2 if a < 0 else a for a, t in zip(anchors, k.shape)]
    row = out_ext[-1] * ch
    fused = (np.arange(row) < _fused(img.dtype.type, out_dtype.type, row)).reshape(out_ext[-1], ch)
    acc = np.zeros(out_ext + [ch], np.float32)
    for tap in np.ndindex(*k.shape):
        w = np.float32(k[tap])
        if w == 0:
            continue
        idx = [_index(np.arange(o) + t - a, e, border)
               for o, t, a, e in zip(out_ext, tap, anchors, ext)]
        grid = np.ix_(*idx)
        src = x[tuple(np.maximum(g, 0) for g in grid)]
        inside = np.ones(out_ext, bool)
        for g in grid:
            inside &= g >= 0
        src = np.where(inside[..., None], src, np.float32(fill))
        fma = (src.astype(np.float64) * np.float64(w) + acc).astype(np.float32)
        acc = np.where(fused, fma, (src * w).astype(np.float32) + acc)
    if out_dtype.kind in "ui":
        info = np.iinfo(out_dtype)
        acc = np.clip(np.rint(acc), info.min, info.max)
    return acc.astype(out_dtype).reshape(out_ext + list(img.shape[axes:]))


def _kernels(seed, shapes, zeros=True):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        k = ((rng.random(s) - 0.2) / 3).astype(np.float32)
        if zeros:
            k[rng.random(s) < 0.2] = 0
        out.append(k)
    return out


@pytest.mark.parametrize("border", ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"])
def test_filter_borders_anchors_and_modes(border):
    imgs = _images(7, [(17, 23, 3), (5, 4, 1), (9, 37, 2)])
    ks = _kernels(8, [(3, 5), (7, 6), (2, 2)])  # the second larger than its image
    for kwargs in [{}, {"anchor": [0, 1]}, {"anchor": -1}]:
        got = _filter(imgs, ks, border=border, **kwargs)
        for img, k, out in zip(imgs, ks, got):
            ref = _filter_ref(img, k, anchor=kwargs.get("anchor", -1), border=border)
            np.testing.assert_array_equal(out, ref, err_msg=f"{border} {kwargs}")
    valid_imgs, valid_ks = imgs[::2], ks[::2]
    for out, img, k in zip(_filter(valid_imgs, valid_ks, border=border, mode="valid",
                                   anchor=[0, 0]), valid_imgs, valid_ks):
        np.testing.assert_array_equal(out, _filter_ref(img, k, mode="valid"))
    assert _filter(imgs[:1], [np.ones((17, 23), np.float32)], mode="VALID")[0].shape == (1, 1, 3)


def test_filter_types_and_float_output():
    rng = np.random.default_rng(9)
    k = _kernels(10, [(3, 3)])[0]
    for dtype, lo, hi in [(np.uint8, 0, 256), (np.uint16, 0, 65536), (np.int16, -30000, 30000),
                          (np.int8, -128, 128), (np.float32, -500, 500)]:
        img = (rng.random((11, 29, 3)) * (hi - lo) + lo).astype(dtype)
        np.testing.assert_array_equal(_filter([img], [k])[0], _filter_ref(img, k), str(dtype))
        np.testing.assert_array_equal(_filter([img], [k], dtype=types.FLOAT)[0],
                                      _filter_ref(img, k, out_dtype=np.float32), str(dtype))
    # Half to even and saturation: 0.5 * (1 + 2) = 1.5 -> 2, 0.5 * (3 + 2) = 2.5 -> 2.
    img = np.array([[1, 2, 3, 250]], np.uint8)
    out = _filter([img], [np.array([[0.5, 0.5, 0]], np.float32)], layout="HW", border="clamp")
    np.testing.assert_array_equal(out[0], [[1, 2, 2, 126]])
    out = _filter([img], [np.array([[0, 2]], np.float32)], layout="HW", border="clamp")
    np.testing.assert_array_equal(out[0], [[2, 4, 6, 255]])


def test_filter_fill_values_per_sample():
    imgs = _images(11, [(6, 7, 3), (5, 5, 4)])
    ks = _kernels(12, [(3, 3), (5, 3)], zeros=False)
    fills = [np.uint8(200), np.uint8(7)]
    for out, img, k, fill in zip(_filter(imgs, ks, fills, border="constant"), imgs, ks, fills):
        np.testing.assert_array_equal(out, _filter_ref(img, k, border="constant", fill=fill))
    # Fill values matter only with border="constant".
    for out, img, k in zip(_filter(imgs, ks, fills, border="wrap"), imgs, ks):
        np.testing.assert_array_equal(out, _filter_ref(img, k, border="wrap"))


def test_filter_per_sample_anchor():
    imgs = _images(13, [(8, 9, 3), (8, 9, 3)])
    ks = _kernels(14, [(3, 3), (4, 2)])
    anchors = [np.array([0, 2], np.int32), np.array([3, 1], np.int32)]
    pipe = _pipe(batch_size=2)
    with pipe:
        x = fn.external_source(lambda: imgs, layout="HWC")
        f = fn.external_source(lambda: ks)
        a = fn.external_source(lambda: anchors)
        pipe.set_outputs(fn.filter(x, f, anchor=a, border="reflect_1001"))
    (out,) = pipe.run()
    for i in range(2):
        np.testing.assert_array_equal(
            out[i].numpy(), _filter_ref(imgs[i], ks[i], list(anchors[i]), "reflect_1001"))


def test_filter_layouts_volumes_and_sequences():
    chw = _images(15, [(3, 10, 11)])
    k = _kernels(16, [(3, 4)])
    got = _filter(chw, k, layout="CHW", border="wrap")
    np.testing.assert_array_equal(
        got[0], np.stack([_filter_ref(p, k[0], border="wrap") for p in chw[0]]))
    # No layout: every axis is spatial (a volume with a 3-D filter).
    vol = _images(17, [(5, 6, 7)])
    k3 = _kernels(18, [(3, 2, 3)])
    np.testing.assert_array_equal(_filter(vol, k3, layout="")[0],
                                  _filter_ref(vol[0], k3[0], axes=3))
    dhwc = _images(19, [(4, 5, 6, 2)])
    np.testing.assert_array_equal(_filter(dhwc, k3, layout="DHWC", border="clamp")[0],
                                  _filter_ref(dhwc[0], k3[0], border="clamp", axes=3))
    # Sequences: one filter for every frame, or one per frame (per_frame), and fill values per
    # frame.
    clips = _images(20, [(3, 7, 8, 3), (2, 5, 5, 3)])
    ks = _kernels(21, [(3, 3), (2, 3)])
    got = _filter(clips, ks, layout="FHWC")
    for clip, kk, out in zip(clips, ks, got):
        np.testing.assert_array_equal(out, np.stack([_filter_ref(f, kk) for f in clip]))
    per_frame = _kernels(22, [(3, 3, 3), (2, 2, 2)])
    fills = [np.array([1, 100, 200], np.uint8), np.array([50, 60], np.uint8)]
    got = _filter(clips, per_frame, fills, layout="FHWC", filter_layout="FHW", fill_layout="F",
                  border="constant")
    for clip, kk, fill, out in zip(clips, per_frame, fills, got):
        ref = [_filter_ref(f, kf, border="constant", fill=v) for f, kf, v in zip(clip, kk, fill)]
        np.testing.assert_array_equal(out, np.stack(ref))
    fchw = _images(23, [(2, 3, 6, 6)])
    got = _filter(fchw, ks[:1], layout="FCHW")
    np.testing.assert_array_equal(
        got[0], np.stack([np.stack([_filter_ref(p, ks[0]) for p in f]) for f in fchw[0]]))


def test_filter_older_name_warns_and_runs():
    img = _images(24, [(6, 6, 3)])
    k = _kernels(25, [(3, 3)])
    pipe = _pipe()
    with pipe:
        x = fn.external_source(lambda: img, layout="HWC")
        f = fn.external_source(lambda: k)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe.set_outputs(fn.experimental.filter(x, f))
    assert any("`stoker.fn.experimental.filter` is now deprecated. Use `stoker.fn.filter`"
               in str(w.message) for w in caught)
    (out,) = pipe.run()
    np.testing.assert_array_equal(out[0].numpy(), _filter_ref(img[0], k[0]))


_IMG = np.zeros((6, 7, 3), np.uint8)
_K = np.ones((3, 3), np.float32)


@pytest.mark.parametrize("data,layout,k,fill,kwargs,error,message", [
    (_IMG, "HWC", _K, None, {"border": "mirror"}, ValueError,
     "filter: border must be reflect_101, reflect_1001, wrap, clamp or constant, got 'mirror'"),
    (_IMG, "HWC", _K, None, {"mode": "full"}, ValueError,
     "filter: mode must be 'same' or 'valid', got 'full'"),
    (_IMG[None], "", _K, None, {}, ValueError,
     r"filter: samples without a layout must be 2-D or 3-D \(every axis spatial\), got 4 "
     r"dimensions; give a layout naming the channels or frames \(HWC, CHW, FHWC\)"),
    (_IMG, "HWF", _K, None, {}, ValueError,
     "filter: frames \\(F\\) must be the outermost dimension, got layout 'HWF'"),
    (_IMG, "HCW", _K, None, {}, ValueError,
     r"filter: unsupported layout 'HCW'; expected spatial axes with channels first or last "
     r"\(HW, HWC, CHW, DHWC, ...\)"),
    (_IMG[0, :, 0].copy(), "W", _K, None, {}, ValueError,
     "filter: layout 'W' has 1 spatial axes; 2-D and 3-D filtering are supported"),
    (_IMG, "HWC", np.ones((3, 3, 3), np.float32), None, {}, ValueError,
     r"filter: the filter of sample 0 must have 2 dimensions, as the sample has spatial axes; "
     r"got shape \(3, 3, 3\)"),
    (_IMG, "HWC", np.ones((0, 3), np.float32), None, {}, ValueError,
     r"filter: the filter of sample 0 is empty \(shape \(0, 3\)\)"),
    (_IMG, "HWC", _K, np.array([1, 2], np.uint8), {"border": "constant"}, ValueError,
     r"filter: fill_value of sample 0 must be a scalar, got shape \(2,\)"),
    (_IMG, "HWC", _K, None, {"anchor": [0, 0, 0]}, ValueError,
     "filter: anchor needs 1 or 2 values, got 3"),
    (_IMG, "HWC", _K, None, {"anchor": [3, 0]}, ValueError,
     r"filter: the anchor of sample 0 must lie within its filter of shape \(3, 3\) \(or be -1: "
     r"the centre\), got \[3, 0\]"),
    (_IMG, "HWC", _K, None, {"anchor": [-2, 0]}, ValueError,
     r"must lie within its filter of shape \(3, 3\) \(or be -1: the centre\), got \[-2, 0\]"),
    (_IMG, "HWC", np.ones((7, 3), np.float32), None, {"mode": "valid"}, ValueError,
     r"filter: the filter of sample 0 \(shape \(7, 3\)\) is larger than the sample \(shape "
     r"\(6, 7, 3\)\), which mode='valid' does not allow"),
    (_IMG.astype(np.int32), "HWC", _K, None, {}, TypeError,
     "filter: unsupported input type int32; expected uint8, int8, uint16, int16, float16 or "
     "float32"),
    (_IMG, "HWC", _K, None, {"dtype": types.INT16}, TypeError,
     r"filter: dtype must be the input's \(uint8\) or float32, got int16"),
    (_IMG, "HWC", _K.astype(np.float64), None, {}, TypeError,
     "filter: the filters must be float32, got float64"),
    (_IMG, "HWC", _K, np.int32(3), {"border": "constant"}, TypeError,
     r"filter: fill_value must have the input's type \(uint8\), got int32"),
])
def test_filter_errors(data, layout, k, fill, kwargs, error, message):
    with pytest.raises(error, match=message):
        _filter([data], [k], None if fill is None else [fill], layout=layout, **kwargs)


@needs_gpu
def test_gpu_equals_cpu():
    imgs = _images(26, [(31, 47, 3), (8, 8, 1), (0, 4, 3), (300, 200, 3)])
    for cpu, gpu in zip(_equalize(imgs)[0], _equalize(imgs, device="gpu")[0]):
        np.testing.assert_array_equal(gpu, cpu)
    clips = _images(27, [(3, 3, 9, 10)])
    np.testing.assert_array_equal(_equalize(clips, "FCHW", "gpu")[0][0],
                                  _equalize(clips, "FCHW")[0][0])
    imgs = _images(28, [(17, 23, 3), (5, 4, 1), (9, 37, 2), (0, 5, 3)])
    ks = _kernels(29, [(3, 5), (7, 6), (2, 2), (3, 3)])
    fills = [np.uint8(v) for v in (3, 100, 250, 9)]
    for border in ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"]:
        for kwargs in [{}, {"anchor": [0, 1]}, {"dtype": types.FLOAT}]:
            cpu = _filter(imgs, ks, fills, border=border, **kwargs)
            gpu = _filter(imgs, ks, fills, border=border, device="gpu", **kwargs)
            for c, g in zip(cpu, gpu):
                np.testing.assert_array_equal(g, c, err_msg=f"{border} {kwargs}")
    for dtype in (np.int8, np.uint16, np.int16, np.float16, np.float32):
        data = [i.astype(dtype) for i in imgs]
        np.testing.assert_array_equal(_filter(data[:1], ks[:1], device="gpu")[0],
                                      _filter(data[:1], ks[:1])[0])
    vol = _images(30, [(5, 6, 7, 2)])
    k3 = _kernels(31, [(3, 2, 3)])
    np.testing.assert_array_equal(_filter(vol, k3, layout="DHWC", device="gpu")[0],
                                  _filter(vol, k3, layout="DHWC")[0])
