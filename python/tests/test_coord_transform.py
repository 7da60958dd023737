"""coord_transform: against numpy (float32 products summed, then T), matrices of other shapes
(projections), per-sample matrices, rounded integer outputs, and errors."""
import numpy as np
import pytest

import stoker
from stoker import fn, types


def _run(points, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(points), num_threads=2, seed=1)
    with pipe:
        p = fn.external_source(lambda: points)
        pipe.set_outputs(fn.coord_transform(p, **kwargs))
    (out,) = pipe.run()
    return [np.array(s) for s in out]


def test_affine_maps_and_projections_match_numpy():
    rng = np.random.default_rng(1)
    pts = [np.float32(rng.random((n, 3)) * 10) for n in (4, 0, 11)]
    m = np.float32([[0.5, 0.1, -0.2], [0.3, 1.5, 0.25]])  # 3-D to 2-D
    t = np.float32([1.0, -2.0])
    for p, g in zip(pts, _run(pts, M=m.ravel().tolist(), T=t.tolist())):
        assert g.shape == (len(p), 2) and g.dtype == np.float32
        np.testing.assert_allclose(g, p @ m.T + t, rtol=1e-6, atol=1e-5)
    for p, g in zip(pts, _run(pts, M=2.0)):
        np.testing.assert_array_equal(g, p * np.float32(2))
    rounded = _run([np.uint8([[10, 20], [250, 3]])], M=[1.5, 0, 0, 1.5], T=[0.2, 0.0],
                   dtype=types.UINT8)[0]
    assert rounded.tolist() == [[15, 30], [255, 5]]  # 375.2 saturates, 4.5 rounds away


def test_per_sample_matrices():
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    pts = [np.float32([[1.0, 2.0]]), np.float32([[3.0, 4.0]])]
    mts = [np.float32([[1, 0, 5], [0, 1, 6]]), np.float32([[0, -1, 0], [1, 0, 0]])]
    with pipe:
        p = fn.external_source(lambda: pts)
        mt = fn.external_source(lambda: mts)
        pipe.set_outputs(fn.coord_transform(p, MT=mt))
    (out,) = pipe.run()
    assert np.array(out[0]).tolist() == [[6.0, 8.0]]
    assert np.array(out[1]).tolist() == [[-4.0, 3.0]]


def test_errors_name_what_is_wrong():
    pts = [np.float32([[1.0, 2.0]])]
    with pytest.raises(ValueError, match="give MT, or M and T, not both"):
        _run(pts, MT=[1, 0, 0, 0, 1, 0], M=[1.0])
    with pytest.raises(ValueError, match="M has 3 values, not rows of 2"):
        _run(pts, M=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="T has 3 values for 2 output components"):
        _run(pts, T=[1.0, 2.0, 3.0])


@pytest.mark.skipif(not stoker._stoker.cuda_available(), reason="no CUDA device: GPU test skipped")
@pytest.mark.parametrize("src, dst", [("float32", "FLOAT"), ("int16", "FLOAT"),
                                      ("float32", "UINT8"), ("uint8", "INT32"),
                                      ("float64", "FLOAT64")])
def test_gpu_equals_cpu(src, dst):
    rng = np.random.default_rng(4)
    pts = [(rng.random((n, 3)) * 300 - 100).astype(src) for n in (0, 1, 5000, 37)]
    mts = [np.float32(rng.normal(size=(2, 4))) for _ in pts]

    def run(device):
        pipe = stoker.Pipeline(batch_size=len(pts), num_threads=2, seed=1,
                               device_id=0 if device == "gpu" else None)
        with pipe:
            p = fn.external_source(lambda: pts, device=device)
            mt = fn.external_source(lambda: mts)
            pipe.set_outputs(fn.coord_transform(p, MT=mt, dtype=getattr(types, dst)))
        (out,) = pipe.run()
        return [s.numpy().copy() for s in out.as_cpu()]

    for c, g in zip(run("cpu"), run("gpu")):
        assert c.dtype == g.dtype and c.shape == g.shape
        np.testing.assert_array_equal(g, c)
