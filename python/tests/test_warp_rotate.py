"""warp_affine and rotate: exact cases (identity, integer shifts, quarter turns, mirroring),
PIL's affine transform as a reference for bilinear sampling, fill and border handling, and
rotate's output sizes."""

import numpy as np
import pytest

import stoker
from stoker import fn
from op_util import run_op

PIL = pytest.importorskip("PIL.Image")


def _run(op, images, **kwargs):
    return run_op(op, images, **kwargs)


@pytest.fixture
def img():
    return np.random.default_rng(1).integers(0, 256, (9, 14, 3), dtype=np.uint8)


def test_exact_maps(img):
    (same,) = _run("warp_affine", [img], matrix=[1, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(same, img)
    (shifted,) = _run("warp_affine", [img], matrix=[1, 0, 3, 0, 1, -2], fill_value=[7])
    ref = np.full_like(img, 7)
    ref[2:, :-3] = img[:-2, 3:]  # output (x, y) reads input (x + 3, y - 2)
    np.testing.assert_array_equal(shifted, ref)
    (mirrored,) = _run("warp_affine", [img], matrix=[-1, 0, 14, 0, 1, 0], interp_type="nn")
    np.testing.assert_array_equal(mirrored, img[:, ::-1])
    # Input-to-output map: the same shift given forwards.
    (fwd,) = _run("warp_affine", [img], matrix=[1, 0, -3, 0, 1, 2], inverse_map=False,
                  fill_value=[7])
    np.testing.assert_array_equal(fwd, ref)
    for angle, k in [(90, 1), (180, 2), (270, 3), (-90, 3)]:
        (r,) = _run("rotate", [img], angle=angle)
        np.testing.assert_array_equal(r, np.rot90(img, k))  # counter-clockwise


def test_bilinear_matches_pil():
    rng = np.random.default_rng(2)
    f = rng.uniform(0, 255, (23, 31)).astype(np.float32)
    m = [0.9, 0.2, 1.3, -0.15, 1.1, 2.7]
    (got,) = _run("warp_affine", [f[..., None]], matrix=m, size=[19, 27], fill_value=[0])
    # PIL's AFFINE evaluates (a x + b y + c, d x + e y + f) at output pixel centres and
    # samples with centres at +0.5 too: the same convention, the same matrix.
    ref = np.asarray(PIL.fromarray(f, "F").transform((27, 19), PIL.Transform.AFFINE, m,
                                                     PIL.Resampling.BILINEAR, fillcolor=0))
    # Compare where all four taps are inside (PIL and stoker treat a border straddle
    # differently: PIL repeats the edge, stoker blends in fill_value).
    y, x = np.mgrid[0:19, 0:27] + 0.5
    sx = m[0] * x + m[1] * y + m[2] - 0.5
    sy = m[3] * x + m[4] * y + m[5] - 0.5
    inside = (sx >= 0) & (sx <= 30) & (sy >= 0) & (sy <= 22)
    assert inside.sum() > 300
    np.testing.assert_allclose(got[..., 0][inside], ref[inside], atol=1e-2)
    far = (sx < -1) | (sx > 31) | (sy < -1) | (sy > 23)  # every tap outside: the fill
    assert (got[..., 0][far] == 0).all()


def test_rotate_sizes_fill_and_errors(img):
    (r,) = _run("rotate", [img], angle=30)
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    w, h = int(np.ceil(14 * c + 9 * s - 0.01)), int(np.ceil(14 * s + 9 * c - 0.01))
    # DALI's canvas: the bounding box, one more where that keeps the input extent's parity
    # (under 45 degrees width follows width: 14 even; height follows height: 9 odd).
    w, h = w + (w % 2 != 0), h + (h % 2 != 1)
    assert r.shape == (h, w, 3)
    (k,) = _run("rotate", [img], angle=30, keep_size=True, fill_value=[255, 0, 0])
    assert k.shape == img.shape
    assert (k[0, 0] == [255, 0, 0]).all()  # the corner came from outside the image
    angles = [np.float32(a) for a in (90, 0)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=0)
    with pipe:
        data = fn.external_source(lambda: [img, img], layout="HWC")
        a = fn.external_source(lambda: angles)
        pipe.set_outputs(fn.rotate(data, angle=a))
    (out,) = pipe.run()
    assert out[0].numpy().shape == (14, 9, 3) and out[1].numpy().shape == (9, 14, 3)
    with pytest.raises(ValueError, match="interp_type must be 'linear' or 'nn', got 'cubic'"):
        _run("rotate", [img], angle=10, interp_type="cubic")
    with pytest.raises(ValueError, match="matrix needs 6 values \\(2x3\\), got 4"):
        _run("warp_affine", [img], matrix=[1, 0, 0, 1])


def _warp_both(op, images, **kwargs):
    """`op` on the CPU and, where a GPU is, on the GPU: [cpu samples, gpu samples or None]."""
    outs = []
    for device in ("cpu", "gpu"):
        if device == "gpu" and not stoker._stoker.cuda_available():
            outs.append(None)
            continue
        pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=0,
                               device_id=0 if device == "gpu" else None)
        with pipe:
            x = fn.external_source(lambda: images, layout="HWC")
            pipe.set_outputs(getattr(fn, op)(x.gpu() if device == "gpu" else x, **kwargs))
        (out,) = pipe.run()
        out = out.as_cpu() if device == "gpu" else out
        outs.append([np.asarray(out[i]) for i in range(len(images))])
    return outs


@pytest.mark.parametrize("op, kwargs", [
    ("rotate", dict(angle=30)),
    ("warp_affine", dict(matrix=[0.9, 0.1, 2.0, -0.1, 1.1, -3.0])),
])
def test_dtype_float32_keeps_the_interpolated_values(img, op, kwargs):
    # uint8 in, float32 out: the same sampling as float32 in (no rounding); the fill is taken
    # as the input's type first (DALI's): 3.7 is 4 for uint8 input.
    (want,), _ = _warp_both(op, [img.astype(np.float32)], fill_value=4.0, **kwargs)
    for got in _warp_both(op, [img], dtype=stoker.types.FLOAT, fill_value=3.7, **kwargs):
        if got is None:
            continue
        assert got[0].dtype == np.float32
        np.testing.assert_allclose(got[0], want, atol=1e-3)
        assert (got[0] == 4.0).any() and (got[0] % 1 != 0).any()


@pytest.mark.parametrize("dtype, lo, hi", [("uint8", 0, 255), ("int16", -32768, 32767),
                                           ("uint16", 0, 65535), ("int32", -2**31, 2**31 - 1)])
def test_integer_dtype_from_float_rounds_and_saturates(img, dtype, lo, hi):
    x = (img.astype(np.float32) - 128) * 300  # beyond int16's range both ways
    # The fill as the output's type: -9.6 is -10, or 0 in an unsigned type.
    (ref,), _ = _warp_both("rotate", [x], angle=-25, fill_value=float(np.clip(-10, lo, hi)))
    want = np.clip(np.sign(ref) * np.floor(np.abs(ref) + 0.5), lo, hi)  # half away from zero
    for got in _warp_both("rotate", [x], angle=-25, fill_value=-9.6, dtype=dtype):
        if got is None:
            continue
        assert got[0].dtype == np.dtype(dtype)
        # A float's rounding tie may fall either way of the GPU's fused arithmetic: 1 level.
        assert np.abs(got[0].astype(np.float64) - want).max() <= 1


def test_dtype_pairs_outside_the_warps_are_refused_and_output_dtype_is_dalis_old_name(img):
    with pytest.raises(TypeError, match="rotate: dtype int16 is not supported for uint8 input "
                                        "\\(the input's type or float32; from float32 input: "
                                        "uint8, int16, uint16, int32 or float32\\)"):
        _run("rotate", [img], angle=10, dtype=stoker.types.INT16)
    with pytest.raises(TypeError, match="warp_affine: dtype float16 is not supported"):
        _run("warp_affine", [img.astype(np.float32)], matrix=[1, 0, 0, 0, 1, 0],
             dtype=stoker.types.FLOAT16)
    with pytest.raises(TypeError, match="rotate input: unsupported dtype int8 \\(uint8, int16, "
                                        "uint16, int32 or float32\\)"):
        _run("rotate", [img.astype(np.int8)], angle=10)
    with pytest.warns(DeprecationWarning, match="output_dtype"):
        (out,) = _run("rotate", [img], angle=10, output_dtype=stoker.types.FLOAT)
    assert out.dtype == np.float32
