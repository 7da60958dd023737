"""experimental.remap: the CPU backend against a slow NumPy reference of NPP's remap rule (which
DALI's GPU-only operator calls): points outside the image give 0; nearest takes the pixel at the
rounded point (halves up); linear weighs the 2x2 pixels from the point's integer part; cubic is
the Lagrange cubic through 4x4 pixels; taps past the last row or column take the edge pixel;
'corner' maps are moved by half a pixel. The reference evaluates the same float32 products and
sums, so the comparison is exact. Also sequences, defaults, errors naming the operator and
sample, and the GPU backend against its CPU twin (skipped without a device)."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")
F32 = np.float32
INTERPS = {"nn": types.INTERP_NN, "linear": types.INTERP_LINEAR, "cubic": types.INTERP_CUBIC}


def _store(v, dtype):
    """The float32 result as `dtype`: rounded to nearest, halves away from zero, saturated."""
    if dtype == np.float32:
        return v.astype(np.float32)
    info = np.iinfo(dtype)
    r = np.sign(v) * np.floor(np.abs(v.astype(np.float64)) + 0.5)
    return np.clip(r, info.min, info.max).astype(dtype)


def _cubic_weights(t):
    """The Lagrange weights of taps int(p) - 1 ... int(p) + 2 at fraction t (float32)."""
    a, c, d = t + F32(1), t - F32(1), t - F32(2)
    sixth = F32(1) / F32(6)
    return [t * c * d * -sixth, a * c * d * F32(0.5), a * t * d * F32(-0.5), a * t * c * sixth]


def reference(img, mapx, mapy, interp, origin):
    """NPP's remap of one HWC image, point by point (vectorised over the pixels)."""
    h, w, ch = img.shape
    shift = F32(-0.5) if origin == "corner" else F32(0)
    px = mapx.reshape(h, w).astype(F32) + shift
    py = mapy.reshape(h, w).astype(F32) + shift
    with np.errstate(invalid="ignore"):
        inside = (px >= 0) & (px < w) & (py >= 0) & (py < h)
    px, py = np.where(inside, px, F32(0)), np.where(inside, py, F32(0))
    src = img.astype(F32)
    if interp == "nn":
        ix = np.minimum(np.floor(px.astype(np.float64) + 0.5).astype(np.int64), w - 1)
        iy = np.minimum(np.floor(py.astype(np.float64) + 0.5).astype(np.int64), h - 1)
        out = img[iy, ix]
    else:
        x0, y0 = px.astype(np.int64), py.astype(np.int64)
        fx, fy = (px - x0.astype(F32))[..., None], (py - y0.astype(F32))[..., None]
        if interp == "linear":
            x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
            gx, gy = F32(1) - fx, F32(1) - fy
            top = src[y0, x0] * gx + src[y0, x1] * fx
            bottom = src[y1, x0] * gx + src[y1, x1] * fx
            v = top * gy + bottom * fy
        else:
            wx, wy = _cubic_weights(fx), _cubic_weights(fy)
            v = np.zeros(fx.shape[:2] + (ch,), F32)
            for i in range(4):
                row = np.zeros_like(v)
                yy = np.clip(y0 - 1 + i, 0, h - 1)
                for j in range(4):
                    row = row + src[yy, np.clip(x0 - 1 + j, 0, w - 1)] * wx[j]
                v = v + row * wy[i]
        out = _store(v, img.dtype)
    return np.where(inside[..., None], out, np.zeros_like(out))


def _run(images, mapsx, mapsy, device="cpu", layouts=("HWC", "HW", "HW"), **kwargs):
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=0,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        ins = [fn.external_source((lambda d: lambda: d)(data), layout=layout)
               for data, layout in zip((images, mapsx, mapsy), layouts)]
        if device == "gpu":
            ins = [x.gpu() for x in ins]
        pipe.set_outputs(fn.experimental.remap(*ins, device=device, **kwargs))
    (out,) = pipe.run()
    out = out.as_cpu() if device == "gpu" else out
    return [np.array(out[i].numpy()) for i in range(len(images))]


def _batch(dtype, channels, seed=3):
    """A ragged batch (a 1x1 image among them) with maps reaching past every edge: random
    points, whole and half pixels (ties of nearest), a NaN."""
    rng = np.random.default_rng(seed)
    lo, hi = (-300, 300) if dtype == np.int16 else (0, 256 if dtype == np.uint8 else 60000)
    images, mapsx, mapsy = [], [], []
    for h, w in ((23, 31), (1, 1), (40, 12), (2, 9)):
        img = rng.integers(lo, hi, (h, w, channels)).astype(dtype)
        if dtype == np.float32:
            img = img + rng.random(img.shape).astype(F32)
        mx = rng.uniform(-1.5, w + 1.5, (h, w)).astype(F32)
        my = rng.uniform(-1.5, h + 1.5, (h, w)).astype(F32)
        halves = rng.random((h, w)) < 0.3
        mx[halves] = np.round(mx[halves] * 2) / 2
        my[halves] = np.round(my[halves] * 2) / 2
        mx[0, 0] = np.nan
        images.append(img), mapsx.append(mx), mapsy.append(my)
    return images, mapsx, mapsy


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("interp", list(INTERPS))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
def test_matches_numpy_reference(dtype, interp, origin, channels):
    images, mapsx, mapsy = _batch(dtype, channels)
    got = _run(images, mapsx, mapsy, interp=INTERPS[interp], pixel_origin=origin)
    for i, (img, mx, my) in enumerate(zip(images, mapsx, mapsy)):
        ref = reference(img, mx, my, interp, origin)
        assert got[i].dtype == img.dtype and got[i].shape == img.shape
        np.testing.assert_array_equal(got[i], ref, err_msg=f"sample {i}")


def test_defaults_are_linear_and_corner():
    images, mapsx, mapsy = _batch(np.uint8, 3, seed=9)
    got = _run(images, mapsx, mapsy)
    for i, (img, mx, my) in enumerate(zip(images, mapsx, mapsy)):
        np.testing.assert_array_equal(got[i], reference(img, mx, my, "linear", "corner"))


@pytest.mark.parametrize("interp", list(INTERPS))
def test_identity_maps_keep_the_image(interp):
    """'center' maps of the pixels' own coordinates, and 'corner' maps of their centres."""
    img = np.random.default_rng(2).integers(0, 256, (7, 11, 3)).astype(np.uint8)
    ys, xs = np.mgrid[0:7, 0:11].astype(F32)
    (same,) = _run([img], [xs], [ys], interp=INTERPS[interp], pixel_origin="center")
    np.testing.assert_array_equal(same, img)
    (same,) = _run([img], [xs + 0.5], [ys + 0.5], interp=INTERPS[interp])
    np.testing.assert_array_equal(same, img)


def test_sequences_take_per_frame_or_shared_maps():
    rng = np.random.default_rng(5)
    clips = [rng.integers(0, 256, (f, 9, 14, 3)).astype(np.uint8) for f in (3, 1)]
    per_frame_x = [rng.uniform(-1, 15, (f, 9, 14)).astype(F32) for f in (3, 1)]
    per_frame_y = [rng.uniform(-1, 10, (f, 9, 14)).astype(F32) for f in (3, 1)]
    got = _run(clips, per_frame_x, per_frame_y, layouts=("FHWC", "FHW", "FHW"),
               interp=types.INTERP_CUBIC)
    for clip, mx, my, out in zip(clips, per_frame_x, per_frame_y, got):
        ref = np.stack([reference(clip[f], mx[f], my[f], "cubic", "corner")
                        for f in range(len(clip))])
        np.testing.assert_array_equal(out, ref)
    shared_x, shared_y = [m[0] for m in per_frame_x], [m[0] for m in per_frame_y]
    got = _run(clips, shared_x, shared_y, layouts=("FHWC", "HW", "HW"),
               interp=types.INTERP_NN, pixel_origin="center")
    for clip, mx, my, out in zip(clips, shared_x, shared_y, got):
        ref = np.stack([reference(frame, mx, my, "nn", "center") for frame in clip])
        np.testing.assert_array_equal(out, ref)


def test_hwc_maps_with_one_channel():
    images, mapsx, mapsy = _batch(np.float32, 1, seed=4)
    got = _run(images, [m[..., None] for m in mapsx], [m[..., None] for m in mapsy],
               layouts=("HWC", "HWC", "HWC"), interp=types.INTERP_NN)
    for i, (img, mx, my) in enumerate(zip(images, mapsx, mapsy)):
        np.testing.assert_array_equal(got[i], reference(img, mx, my, "nn", "corner"))


def _expect(match, images=None, mapsx=None, mapsy=None, layouts=("HWC", "HW", "HW"), **kwargs):
    images = images or [np.zeros((4, 5, 3), np.uint8), np.zeros((6, 2, 3), np.uint8)]
    shapes = [im.shape[:2] for im in images]
    mapsx = mapsx or [np.zeros(s, F32) for s in shapes]
    mapsy = mapsy or [np.zeros(s, F32) for s in shapes]
    with pytest.raises(Exception, match=match):
        _run(images, mapsx, mapsy, layouts=layouts, **kwargs)


def test_errors_name_the_operator_and_sample():
    op = r"experimental\.remap: "
    _expect(op + r"sample 1: mapx has shape \(6, 3\); the image is 6x2, so the maps must be 6x2",
            mapsx=[np.zeros((4, 5), F32), np.zeros((6, 3), F32)])
    _expect(op + r"sample 0: mapy has shape \(5, 4\); the image is 4x5",
            mapsy=[np.zeros((5, 4), F32), np.zeros((6, 2), F32)])
    _expect(op + r"sample 1: mapx has shape \(6, 2, 2\)",
            mapsx=[np.zeros((4, 5, 1), F32), np.zeros((6, 2, 2), F32)],
            layouts=("HWC", "HWC", "HW"))
    _expect(op + r"mapx must be float32, got float64",
            mapsx=[np.zeros((4, 5)), np.zeros((6, 2))])
    _expect(op + r"mapy must be float32, got int32",
            mapsy=[np.zeros((4, 5), np.int32), np.zeros((6, 2), np.int32)])
    _expect(op + r"expected uint8, uint16, int16 or float32 images, got int32",
            images=[np.zeros((4, 5, 3), np.int32)])
    _expect(op + r"sample 0: expected an HWC image \(sequences: FHWC\), got shape \(3, 4, 5\) "
            r"and layout 'CHW'", images=[np.zeros((3, 4, 5), np.uint8)],
            mapsx=[np.zeros((4, 5), F32)], mapsy=[np.zeros((4, 5), F32)],
            layouts=("CHW", "HW", "HW"))
    _expect(op + r"sample 0: expected an HWC image \(sequences: FHWC\), got shape \(4, 5\)",
            images=[np.zeros((4, 5), np.uint8)], layouts=("HW", "HW", "HW"))
    _expect(op + r"sample 1 has 4 channels: 1 or 3",
            images=[np.zeros((4, 5, 3), np.uint8), np.zeros((6, 2, 4), np.uint8)])
    _expect(op + r"interp must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC .*got 'lanczos3'",
            interp=types.INTERP_LANCZOS3)
    _expect(op + r"interp must be .*got 'triangular'", interp=types.INTERP_TRIANGULAR)
    _expect(op + r"pixel_origin must be 'corner' or 'center', got 'middle'",
            pixel_origin="middle")


@needs_gpu
@pytest.mark.parametrize("interp", list(INTERPS))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
def test_gpu_matches_cpu(dtype, interp):
    for channels, origin in ((1, "corner"), (3, "center")):
        images, mapsx, mapsy = _batch(dtype, channels, seed=11)
        kwargs = dict(interp=INTERPS[interp], pixel_origin=origin)
        cpu = _run(images, mapsx, mapsy, **kwargs)
        gpu = _run(images, mapsx, mapsy, device="gpu", **kwargs)
        for i, (a, b) in enumerate(zip(cpu, gpu)):
            np.testing.assert_array_equal(b, a, err_msg=f"sample {i} {channels} {origin}")
