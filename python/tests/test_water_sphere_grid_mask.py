"""water, sphere and grid_mask: NumPy references written from DALI's formulas (float32 arithmetic
step by step), the mask argument, fill values stored as DALI stores them, errors naming the
operator and sample, and the GPU backends against their CPU twins (skipped without a device)."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types
from op_util import run_op

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")
f32 = np.float32


def _images(seed=3, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    out = [rng.integers(0, 256, (h, w, 3)) for h, w in ((21, 34), (1, 1), (40, 9), (2, 2))]
    return [a.astype(dtype) for a in out]


def _grid_ref(img, tile, ratio, angle, shift_x, shift_y):
    h, w = img.shape[:2]
    sx, sy = shift_x, shift_y
    ca = f32(np.cos(f32(angle)) / f32(tile))
    sa = f32(np.sin(f32(angle)) / f32(tile))
    sx, sy = f32(f32(sx) / f32(tile)), f32(f32(sy) / f32(tile))
    y = np.arange(h, dtype=f32)[:, None]
    x = np.arange(w, dtype=f32)[None, :]
    fx = (-sx + y * -sa) + x * ca
    fy = (-sy + y * ca) + x * sa
    keep = (fx - np.floor(fx) >= f32(ratio)) | (fy - np.floor(fy) >= f32(ratio))
    return np.where(keep[..., None], img, 0).astype(img.dtype)


def _water_nn_ref(img, ax, fx, px, ay, fy, py, fill):
    h, w = img.shape[:2]
    dx = f32(ax) * np.sin(f32(fx) * np.arange(h, dtype=f32) + f32(px))
    dy = f32(ay) * np.cos(f32(fy) * np.arange(w, dtype=f32) + f32(py))
    sx = np.floor(np.arange(w, dtype=f32)[None, :] + dx[:, None]).astype(np.int64)
    sy = np.floor(np.arange(h, dtype=f32)[:, None] + dy[None, :]).astype(np.int64)
    inside = (sx >= 0) & (sy >= 0) & (sx < w) & (sy < h)
    out = np.full_like(img, fill)
    out[inside] = img[sy[inside], sx[inside]]
    return out


def _sphere_nn_ref(img, fill):
    h, w = img.shape[:2]
    mx, my = f32(w) * f32(0.5), f32(h) * f32(0.5)
    d = f32(int(max(mx, my)))
    ty = (np.arange(h, dtype=f32)[:, None] + f32(0.5)) - my
    tx = (np.arange(w, dtype=f32)[None, :] + f32(0.5)) - mx
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.sqrt(tx * tx + ty * ty) / d
        sx, sy = mx + r * tx, my + r * ty
        inside = (sx >= 0) & (sy >= 0) & (sx < w) & (sy < h)
    out = np.full_like(img, fill)
    ix, iy = np.floor(sx[inside]).astype(np.int64), np.floor(sy[inside]).astype(np.int64)
    out[inside] = img[iy, ix]
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32])
def test_grid_mask_matches_numpy(dtype):
    imgs = _images(dtype=dtype)
    for args in [dict(), dict(tile=7, ratio=0.3, angle=0.9, shift_x=2.5, shift_y=-11.0),
                 dict(tile=1, ratio=0.0), dict(tile=4, ratio=1.0, angle=-2.0)]:
        got = run_op("grid_mask", imgs, **args)
        full = dict(tile=100, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0) | args
        for g, img in zip(got, imgs):
            np.testing.assert_array_equal(g, _grid_ref(img, **full), err_msg=str(args))
    # ratio 0 keeps everything, ratio 1 zeroes everything
    assert all((g == i).all() for g, i in zip(run_op("grid_mask", imgs, ratio=0.0), imgs))
    assert all((g == 0).all() for g, i in zip(run_op("grid_mask", imgs, ratio=1.0), imgs))


def test_water_and_sphere_nearest_match_numpy():
    imgs = _images()
    args = dict(ampl_x=4.5, freq_x=0.31, phase_x=0.2, ampl_y=-3.0, freq_y=0.12, phase_y=1.0)
    got = run_op("water", imgs, fill_value=9, **args)
    for g, img in zip(got, imgs):
        np.testing.assert_array_equal(g, _water_nn_ref(
            img, args["ampl_x"], args["freq_x"], args["phase_x"], args["ampl_y"],
            args["freq_y"], args["phase_y"], 9))
    for g, img in zip(run_op("sphere", imgs, fill_value=5), imgs):
        np.testing.assert_array_equal(g, _sphere_nn_ref(img, 5))


def test_linear_water_without_waves_averages_corner_neighbours():
    """DALI samples water at integer (corner-origin) points: linear interpolation of a still
    surface averages each pixel with its up-left neighbours (fill outside)."""
    img = np.random.default_rng(2).uniform(0, 100, (6, 7, 1)).astype(np.float32)
    (got,) = run_op("water", [img], ampl_x=0.0, ampl_y=0.0, interp_type=types.INTERP_LINEAR,
                    fill_value=4.0)
    p = np.pad(img[..., 0], ((1, 0), (1, 0)), constant_values=4.0)
    ref = (p[:-1, :-1] + p[:-1, 1:] + p[1:, :-1] + p[1:, 1:]) / 4
    np.testing.assert_allclose(got[..., 0], ref, rtol=1e-6)
    (same,) = run_op("water", [img], ampl_x=0.0, ampl_y=0.0)
    np.testing.assert_array_equal(same, img)


def test_mask_passes_samples_through_and_fill_is_stored_as_dali_does():
    imgs = _images()
    pipe = stoker.Pipeline(batch_size=len(imgs), num_threads=2, seed=0)
    with pipe:
        x = fn.external_source(lambda: imgs, layout="HWC")
        m = fn.external_source(lambda: [np.array(v, np.int32) for v in (0, 1, 0, 1)])
        pipe.set_outputs(fn.water(x, mask=m, ampl_x=100.0, fill_value=300.7),
                         fn.sphere(x, mask=m, fill_value=-1.0))
    water, sphere = pipe.run()
    np.testing.assert_array_equal(water[0].numpy(), imgs[0])
    np.testing.assert_array_equal(sphere[2].numpy(), imgs[2])
    # 300.7 truncates to 300, stored in uint8 as 300 mod 256 = 44 (DALI's conversion)
    assert (water[1].numpy() == 44).all()
    assert (sphere[1].numpy() == 255).all()  # a 1x1 sphere: fill (-1 -> 255)


def _expect_error(match, op, images, layout="HWC", **kwargs):
    with pytest.raises(Exception, match=match):
        run_op(op, images, layout=layout, **kwargs)


def test_errors_name_the_operator():
    img = [np.zeros((4, 5, 3), np.uint8)]
    _expect_error(r"water: expected uint8 or float32 images, got int16", "water",
                  [np.zeros((4, 5, 3), np.int16)])
    _expect_error(r"sphere: interp_type", "sphere", img, interp_type=types.INTERP_CUBIC)
    _expect_error(r"sphere: expected images in HWC layout, got layout 'HW'", "sphere", [np.zeros((4, 5), np.uint8)],
                  layout="HW")
    _expect_error(r"grid_mask: sample 0: tile must be positive, got 0", "grid_mask", img, tile=0)
    _expect_error(r"grid_mask: expected uint8, int16, int32 or float32 input, got uint16",
                  "grid_mask", [np.zeros((4, 5, 3), np.uint16)])
    _expect_error(r"grid_mask: sample 0: expected an HWC image \(3 dimensions\)", "grid_mask",
                  [np.zeros((4, 5), np.uint8)], layout="HW")
    # a per-sample tile names the sample
    pipe = stoker.Pipeline(batch_size=3, num_threads=1, seed=0)
    with pipe:
        x = fn.external_source(lambda: img * 3, layout="HWC")
        t = fn.external_source(lambda: [np.array(v, np.int32) for v in (3, 5, -2)])
        pipe.set_outputs(fn.grid_mask(x, tile=t))
    with pytest.raises(Exception, match=r"grid_mask: sample 2: tile must be positive, got -2"):
        pipe.run()


def _twins(build, images):
    outs = []
    for device in ("cpu", "gpu"):
        pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=7,
                               device_id=0 if device == "gpu" else None)
        with pipe:
            data = fn.external_source(lambda: images, layout="HWC")
            pipe.set_outputs(*build(data.gpu() if device == "gpu" else data))
        res = pipe.run()
        assert [b.device for b in res] == [device] * len(res), device
        outs.append([[t.numpy().copy() for t in b.as_cpu()] for b in res])
    return outs


@needs_gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_gpu_matches_cpu(dtype):
    imgs = _images(5, dtype) + [np.random.default_rng(1).integers(0, 255, (300, 200, 3))
                                .astype(dtype)]
    mask = lambda: fn.external_source(lambda: [np.array(v, np.int32) for v in (1, 0, 1, 1, 1)])
    tile = lambda: fn.external_source(lambda: [np.array(v, np.int32) for v in (3, 8, 1, 40, 13)])

    def build(x):
        return (fn.water(x, interp_type=types.INTERP_NN, fill_value=3, mask=mask()),
                fn.water(x, interp_type=types.INTERP_LINEAR, ampl_x=2.5, freq_y=0.3),
                fn.sphere(x, interp_type=types.INTERP_NN),
                fn.sphere(x, interp_type=types.INTERP_LINEAR, fill_value=9),
                fn.grid_mask(x, tile=tile(), ratio=0.4, angle=0.6, shift_x=3.0))

    cpu, gpu = _twins(build, imgs)
    for k, (c, g) in enumerate(zip(cpu, gpu)):
        for i, (a, b) in enumerate(zip(c, g)):
            np.testing.assert_array_equal(b, a, err_msg=f"output {k} sample {i}")
