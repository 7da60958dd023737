"""coord_flip: against the definition (numpy), per-sample arguments, every error naming what is
wrong, and the GPU backend against the CPU one."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _points(seed, dims=2, counts=(5, 0, 17, 1)):
    rng = np.random.default_rng(seed)
    return [rng.random((n, dims), dtype=np.float32) for n in counts]


def _run(points, device="cpu", **kwargs):
    pipe = stoker.Pipeline(batch_size=len(points), num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        data = fn.external_source(lambda: points, device=device)
        pipe.set_outputs(fn.coord_flip(data, **kwargs))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out.as_cpu()]


def _reference(p, layout, flips, centers):
    out = p.copy()
    for d, axis in enumerate(layout):
        if flips.get(axis, axis == "x"):
            out[:, d] = np.float32(2 * np.float32(centers.get(axis, 0.5))) - p[:, d]
    return out


@pytest.mark.parametrize("dims,layout", [(1, ""), (2, ""), (3, ""), (2, "yx"), (3, "zxy")])
def test_flips_about_the_centre(dims, layout):
    points = _points(dims, dims)
    kwargs = dict(flip_x=1, flip_y=1, flip_z=0, center_x=0.25, center_y=0.5, center_z=0.75)
    got = _run(points, layout=layout, **kwargs)
    order = layout or "xyz"[:dims]
    for p, g in zip(points, got):
        ref = _reference(p, order, {"x": 1, "y": 1, "z": 0},
                         {"x": 0.25, "y": 0.5, "z": 0.75})
        assert g.dtype == np.float32 and g.shape == p.shape
        np.testing.assert_array_equal(g, ref)


def test_default_flips_x_about_one_half():
    (p,) = _points(1, 2, counts=(4,))
    (g,) = _run([p])
    np.testing.assert_array_equal(g[:, 0], np.float32(1.0) - p[:, 0])
    np.testing.assert_array_equal(g[:, 1], p[:, 1])


def test_per_sample_flips_and_centres():
    points = _points(2, 2, counts=(3, 3, 3, 3))
    flips = [np.int32(k % 2) for k in range(4)]
    centers = [np.float32(0.1 * k) for k in range(4)]
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3)
    with pipe:
        data = fn.external_source(lambda: points)
        flip = fn.external_source(lambda: flips)
        centre = fn.external_source(lambda: centers)
        pipe.set_outputs(fn.coord_flip(data, flip_x=0, flip_y=flip, center_y=centre))
    (out,) = pipe.run()
    for k, (p, g) in enumerate(zip(points, out)):
        ref = _reference(p, "xy", {"x": 0, "y": k % 2}, {"y": 0.1 * k})
        np.testing.assert_array_equal(g.numpy(), ref)


def test_bad_input_is_refused_by_name():
    with pytest.raises(TypeError, match="coord_flip: the coordinates must be float32, got uint8"):
        _run([np.zeros((2, 2), np.uint8)])
    with pytest.raises(ValueError, match=r"sample 0 must be \[points, dimensions\], got \(2, 2, 2\)"):
        _run([np.zeros((2, 2, 2), np.float32)])
    with pytest.raises(ValueError, match="1 to 3 coordinates per point, got 4"):
        _run([np.zeros((2, 4), np.float32)])
    with pytest.raises(ValueError, match="sample 1 has 3 coordinates per point, sample 0 has 2"):
        _run([np.zeros((2, 2), np.float32), np.zeros((2, 3), np.float32)])
    with pytest.raises(ValueError, match="layout 'xyz' names 3 coordinates, the points have 2"):
        _run([np.zeros((2, 2), np.float32)], layout="xyz")
    with pytest.raises(ValueError, match="layout must be made of x, y and z, each once, got 'xx'"):
        _run([np.zeros((2, 2), np.float32)], layout="xx")


@needs_gpu
def test_gpu_equals_cpu():
    points = _points(4, 3, counts=(5, 0, 1000, 1))
    kwargs = dict(layout="yzx", flip_x=1, flip_y=0, flip_z=1, center_x=0.3, center_z=0.9)
    for cpu, gpu in zip(_run(points, **kwargs), _run(points, device="gpu", **kwargs)):
        np.testing.assert_array_equal(gpu, cpu)
