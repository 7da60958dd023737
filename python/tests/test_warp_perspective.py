"""experimental.warp_perspective: exact maps against NumPy (identity, integer shifts under every
border mode), errors naming the operator and sample, and the GPU backend against its CPU twin
(skipped without a device)."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types
from op_util import run_op

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")
OP = "experimental.warp_perspective"
NP_BORDER = {"replicate": "edge", "reflect": "symmetric", "reflect_101": "reflect",
             "wrap": "wrap"}


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("border", list(NP_BORDER) + ["constant"])
@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
def test_integer_shifts_match_numpy(dtype, border, interp):
    rng = np.random.default_rng(4)
    img = rng.integers(0, 200, (9, 13, 3)).astype(dtype)
    dx, dy = 5, -3  # output (x, y) reads input (x + 5, y - 3)
    (got,) = run_op(OP, [img], matrix=[1, 0, dx, 0, 1, dy, 0, 0, 1], border_mode=border,
                    interp_type=interp, fill_value=[4, 5, 6])
    pad = 20
    if border == "constant":
        p = np.stack([np.pad(img[..., c], pad, constant_values=v)
                      for c, v in enumerate((4, 5, 6))], -1)
    else:
        p = np.pad(img, ((pad, pad), (pad, pad), (0, 0)), mode=NP_BORDER[border])
    ref = p[pad + dy:pad + dy + 9, pad + dx:pad + dx + 13]
    np.testing.assert_array_equal(got, ref)
    (same,) = run_op(OP, [img], matrix=[1, 0, 0, 0, 1, 0, 0, 0, 1], interp_type=interp)
    np.testing.assert_array_equal(same, img)


@pytest.mark.parametrize("border", list(NP_BORDER))
def test_cubic_of_a_single_pixel_is_that_pixel(border):
    """Every tap of a 1x1 image is its pixel under the non-constant borders (DALI hangs on
    reflect_101 here: docs/dali_differences.md)."""
    img = np.array([[[10, 200, 77]]], np.uint8)
    (got,) = run_op(OP, [img], matrix=[1.2, 0.3, -5, 0.2, 0.8, 4, 0.004, 0.003, 1.1],
                    border_mode=border, interp_type=types.INTERP_CUBIC, size=[3, 4])
    np.testing.assert_array_equal(got, np.broadcast_to(img, (3, 4, 3)))


def test_forward_matrix_and_size():
    img = np.random.default_rng(1).integers(0, 255, (8, 10, 1)).astype(np.uint8)
    # input-to-output map of a 2x upscale: output (x, y) reads input (x / 2, y / 2)
    (got,) = run_op(OP, [img], matrix=[2, 0, 0, 0, 2, 0, 0, 0, 1], inverse_map=False,
                    size=[16, 20], interp_type=types.INTERP_NN)
    assert got.shape == (16, 20, 1)
    np.testing.assert_array_equal(got[1::2, 1::2], img)  # centres that land on input centres


def _expect(match, images=None, layout="HWC", **kwargs):
    images = images or [np.zeros((4, 5, 3), np.uint8)]
    with pytest.raises(Exception, match=match):
        run_op(OP, images, layout=layout, **kwargs)


def test_errors_name_the_operator():
    eye = [1, 0, 0, 0, 1, 0, 0, 0, 1]
    _expect(r"experimental.warp_perspective: give the matrix")
    _expect(r"border_mode must be 'constant', 'replicate', 'reflect', 'reflect_101' or 'wrap', "
            r"got 'mirror'", matrix=eye, border_mode="mirror")
    _expect(r"experimental.warp_perspective: interp_type must be 'nn', 'linear' or 'cubic', "
            r"got 'lanczos3'", matrix=eye, interp_type=types.INTERP_LANCZOS3)
    _expect(r"pixel_origin must be 'corner' or 'center', got 'middle'", matrix=eye,
            pixel_origin="middle")
    _expect(r"sample 0: matrix needs 9 values \(3x3\), got 6", matrix=[1, 0, 0, 0, 1, 0])
    _expect(r"sample 0: the matrix is singular", matrix=[0] * 9, inverse_map=False)
    _expect(r"fill_value needs 1 or 3 values \(one per channel\), got 2", matrix=eye,
            fill_value=[1, 2])
    _expect(r"expected uint8, uint16, int16 or float32 images, got int32", matrix=eye,
            images=[np.zeros((4, 5, 3), np.int32)])
    _expect(r"images with 1 to 4 channels, got 5", matrix=eye,
            images=[np.zeros((4, 5, 5), np.uint8)])
    _expect(r"sample 0: expected HW or HWC images", matrix=eye, layout="CHW")
    _expect(r"sample 0: size must be \[height, width\], got 3 values", matrix=eye, size=[1, 2, 3])


@needs_gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
def test_gpu_matches_cpu(dtype):
    rng = np.random.default_rng(6)
    imgs = [rng.integers(0, 250, (h, w, 3)).astype(dtype)
            for h, w in ((37, 53), (1, 1), (300, 200), (2, 9))]
    m = [1.2, 0.3, -5, 0.2, 0.8, 4, 0.004, 0.003, 1.1]
    outs = {}
    for device in ("cpu", "gpu"):
        pipe = stoker.Pipeline(batch_size=len(imgs), num_threads=2, seed=0,
                               device_id=0 if device == "gpu" else None)
        with pipe:
            x = fn.external_source(lambda: imgs, layout="HWC")
            x = x.gpu() if device == "gpu" else x
            pipe.set_outputs(*[fn.experimental.warp_perspective(
                x, matrix=m, interp_type=i, border_mode=b, fill_value=[9])
                for i in (types.INTERP_NN, types.INTERP_LINEAR)
                for b in ("constant", "reflect_101", "wrap")])
        outs[device] = [[t.numpy().copy() for t in b.as_cpu()] for b in pipe.run()]
    for k, (c, g) in enumerate(zip(outs["cpu"], outs["gpu"])):
        for i, (a, b) in enumerate(zip(c, g)):
            np.testing.assert_array_equal(b, a, err_msg=f"output {k} sample {i}")
