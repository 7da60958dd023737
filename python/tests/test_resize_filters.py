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
        # floor(c) of the pixel centre c in float32 as DALI computes it: columns
        # (x + 0.5) * scale, rows accumulated from scale / 2 (a centre on a pixel boundary
        # then goes where DALI's goes; the parity suite compares with DALI itself).
        f32 = np.float32
        sy, sx = f32(src[0]) / f32(size[0]), f32(src[1]) / f32(size[1])
        acc, rows = f32(0.5) * sy, []
        for _ in range(size[0]):
            rows.append(int(np.floor(acc)))
            acc = f32(acc + sy)
        ys = np.minimum(rows, src[0] - 1)
        xs = np.minimum(np.floor((np.arange(size[1], dtype=f32) + f32(0.5)) * sx).astype(int),
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


def _dali_gaussian(n_in, n_out, antialias):
    """DALI's Gaussian weights from its description: exp(-x^2) over x in [-2, 2] spread over 2R
    source pixels (sigma = R / (2 sqrt 2); R the scale when antialiasing a shrink, else 1),
    ceil(2R) taps from the first pixel at or after the window's start, taps past the image on
    its edge pixel (stoker reads DALI's 65-entry table of the curve: ~1e-3 off it; past x = 2
    the table ramps to 0 over 1/16)."""
    step = n_in / n_out
    r = step if antialias and step > 1 else 1.0
    taps = int(np.ceil(2 * r))
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        c = (i + 0.5) * step
        first = int(np.ceil(c - r - 0.5))
        for k in range(taps):
            x = abs(2 * (first + k + 0.5 - c) / r)
            f = np.exp(-x * x) if x <= 2 else max(0.0, 1 - (x - 2) * 16) * np.exp(-4.0)
            w[i, min(max(first + k, 0), n_in - 1)] += f
    return w / w.sum(1, keepdims=True)


def test_gaussian_and_triangular():
    rng = np.random.default_rng(3)
    img = rng.uniform(0, 255, (40, 40, 1)).astype(np.float32)
    # (Sizes whose windows start off whole pixels: there DALI's float arithmetic decides,
    # which test_parity_image_ops.py compares with DALI itself.)
    for size, aa in (((20, 20), True), ((20, 20), False), ((30, 90), True)):
        (g,) = _resize([img], size, interp_type=types.INTERP_GAUSSIAN, antialias=aa)
        wy, wx = _dali_gaussian(40, size[0], aa), _dali_gaussian(40, size[1], aa)
        np.testing.assert_allclose(g[..., 0], wy @ img[..., 0] @ wx.T, atol=0.25)
    for aa in (False, True):  # triangular is linear, antialiased as `antialias` says (DALI's)
        (t,) = _resize([img], (13, 13), interp_type=types.INTERP_TRIANGULAR, antialias=aa)
        (l,) = _resize([img], (13, 13), interp_type=types.INTERP_LINEAR, antialias=aa)
        np.testing.assert_array_equal(t, l)


def _pil_float_box(img, size, flt, box):
    chans = [np.asarray(PIL.fromarray(img[..., c], "F").resize(
        (size[1], size[0]), getattr(PIL.Resampling, flt), box=box)) for c in range(img.shape[2])]
    return np.stack(chans, 2)


@pytest.mark.parametrize("interp", [types.INTERP_LINEAR, types.INTERP_CUBIC,
                                    types.INTERP_LANCZOS3])
@pytest.mark.parametrize("roi,size", [(((3.5, 7.25), (30.0, 41.0)), (13, 17)),
                                      (((0, 0), (10, 12)), (31, 29)),
                                      (((5, 2), (36, 50)), (36, 48))])
def test_roi_matches_pil_box(interp, roi, size):
    """resize's roi_start/roi_end is PIL's resize `box`: a sampling grid over the region whose
    filter reads the pixels around it too (not crop-then-resize)."""
    rng = np.random.default_rng(3)
    f = rng.uniform(0, 255, (37, 53, 3)).astype(np.float32)
    (start, end) = roi
    (got,) = _resize([f], size, interp_type=interp, roi_start=start, roi_end=end)
    box = (start[1], start[0], end[1], end[0])
    np.testing.assert_allclose(got, _pil_float_box(f, size, FILTERS[interp], box), atol=2e-3,
                               rtol=1e-5)
    # Relative coordinates name the same region.
    (rel,) = _resize([f], size, interp_type=interp, roi_relative=True,
                     roi_start=(start[0] / 37, start[1] / 53), roi_end=(end[0] / 37, end[1] / 53))
    np.testing.assert_allclose(rel, got, atol=1e-3)


def test_roi_sets_the_default_size_and_flips():
    rng = np.random.default_rng(4)
    f = rng.uniform(0, 255, (20, 30, 1)).astype(np.float32)
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        data = fn.external_source(lambda: [f], layout="HWC")
        # No size: the region's extent (rounded); resize_shorter scales the region's.
        whole = fn.resize(data, roi_start=(2, 5), roi_end=(12, 25))
        shorter = fn.resize(data, roi_start=(2, 5), roi_end=(12, 25), resize_shorter=5)
        flipped = fn.resize(data, roi_start=(20, 0), roi_end=(0, 30), size=(7, 11))
        plain = fn.resize(data, size=(7, 11))
        nn = fn.resize(data, roi_start=(2, 5), roi_end=(12, 25), interp_type=types.INTERP_NN)
        pipe.set_outputs(whole, shorter, flipped, plain, nn)
    outs = [o[0].numpy() for o in pipe.run()]
    assert outs[0].shape == (10, 20, 1) and outs[1].shape == (5, 10, 1)
    np.testing.assert_allclose(outs[2], outs[3][::-1], atol=1e-3)  # y flipped
    np.testing.assert_array_equal(outs[4], f[2:12, 5:25])  # nearest at unit scale: the crop


def test_roi_errors_name_the_problem():
    f = np.zeros((8, 8, 3), np.uint8)
    for kwargs, msg in [
            (dict(roi_start=(1, 1), roi_end=(1, 5)), "region of interest of sample 0 is empty"),
            (dict(roi_start=(1,), roi_end=(4, 4)), "roi_start and roi_end need 2 values")]:
        with pytest.raises(ValueError, match=msg):
            _resize([f], (4, 4), **kwargs)


def test_min_and_mag_filters_choose_per_axis():
    """min_filter for an axis that shrinks, mag_filter for one that grows or keeps its size
    (DALI's), each replacing interp_type's filter there."""
    rng = np.random.default_rng(5)
    img = rng.uniform(0, 255, (37, 53, 3)).astype(np.float32)
    nn, lin, cub = types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC
    # Both axes shrink: min_filter alone decides; both grow: mag_filter; the same size: mag.
    for size, same_as in [((11, 17), lin), ((60, 70), nn), ((37, 53), nn)]:
        (got,) = _resize([img], size, interp_type=cub, min_filter=lin, mag_filter=nn)
        (want,) = _resize([img], size, interp_type=same_as)
        np.testing.assert_array_equal(got, want, err_msg=str(size))
    # Only one given: interp_type's filter for the other direction.
    (got,) = _resize([img], (11, 17), interp_type=cub, mag_filter=nn)
    np.testing.assert_array_equal(got, _resize([img], (11, 17), interp_type=cub)[0])
    # Mixed: rows shrink through nearest neighbour, columns grow linearly; a column of a
    # vertical-only shrink (width kept: mag) is a column of the NN-shrunk image.
    (mixed,) = _resize([img], (11, 53), min_filter=nn, mag_filter=lin)
    np.testing.assert_array_equal(mixed, _resize([img], (11, 53), interp_type=nn)[0])
    with pytest.raises(ValueError, match="resize: min_filter 'bogus' is not supported"):
        _resize([img], (11, 17), min_filter="bogus")
