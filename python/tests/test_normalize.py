"""normalize against numpy: per-sample and batch statistics over axes, given mean/stddev,
epsilon, ddof, scale/shift and output dtypes."""

import numpy as np
import pytest

import stoker
from stoker import fn


def _run(data, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2, seed=0)
    with pipe:
        x = fn.external_source(lambda: data)
        pipe.set_outputs(fn.normalize(x, **kwargs))
    (out,) = pipe.run()
    return [out[i].numpy() for i in range(len(data))]


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    return [rng.normal(5, 3, (4, 6, 3)).astype(np.float32) for _ in range(3)]


@pytest.mark.parametrize("axes", [[], [0, 1], [2], [0]])
def test_per_sample_statistics(data, axes):
    ax = tuple(axes) if axes else None
    for x, got in zip(data, _run(data, axes=axes, epsilon=1e-3, scale=2.0, shift=0.5, ddof=1)):
        mean = x.astype(np.float64).mean(axis=ax, keepdims=True)
        var = x.astype(np.float64).var(axis=ax, keepdims=True, ddof=1)
        np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3) * 2 + 0.5, rtol=1e-5,
                                   atol=1e-5)


def test_batch_statistics_and_given_values(data):
    allx = np.stack(data).astype(np.float64)
    mean = allx.mean(axis=(0, 1, 2), keepdims=True)[0]
    std = allx.std(axis=(0, 1, 2), keepdims=True)[0]
    for x, got in zip(data, _run(data, axes=[0, 1], batch=True)):
        np.testing.assert_allclose(got, (x - mean) / std, rtol=1e-5, atol=1e-5)
    for x, got in zip(data, _run(data, mean=5.0, stddev=2.0, dtype=stoker.types.INT16,
                                 scale=10.0)):
        ref = (x.astype(np.float64) - 5) / 2 * 10
        np.testing.assert_array_equal(got, np.sign(ref) * np.floor(np.abs(ref) + 0.5))
    const = [np.full((3, 3), 7, np.float32)]
    assert (_run(const)[0] == 0).all()  # zero variance: 0, not NaN
    with pytest.raises(ValueError, match="normalize: axis 3 of a 3-D sample"):
        _run(data, axes=[3])
