"""random.choice: draws replayed from the Philox stream, lists, integers, probabilities,
per-sample value lists, errors."""

import numpy as np
import pytest

import stoker
from stoker import fn
from reference import RandomStream


def _run(seed=4, batch=3, **kwargs):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=seed)
    with pipe:
        pipe.set_outputs(fn.random.choice(**kwargs))
    (out,) = pipe.run()
    return [out[i].numpy() for i in range(batch)]


def _replay(values, p, count, index, seed=4):
    r = RandomStream(seed, 0, index)
    out = []
    for _ in range(count):
        u = float(np.float32(r.uniform())) * sum(p)
        acc, pick = p[0], 0
        while pick + 1 < len(p) and u >= acc:
            pick += 1
            acc += p[pick]
        out.append(values[pick])
    return out


def test_draws_replay():
    got = _run(a=[10, 20, 30], p=[0.5, 0.25, 0.25], shape=[7])
    for i, g in enumerate(got):
        assert g.dtype == np.int32
        assert g.tolist() == _replay([10, 20, 30], [0.5, 0.25, 0.25], 7, i)
    got = _run(a=5, shape=[4])
    for i, g in enumerate(got):
        assert g.tolist() == _replay(list(range(5)), [0.2] * 5, 4, i)
    got = _run(a=[0.5, 1.5], shape=[3])
    assert got[0].dtype == np.float32


def test_per_sample_lists_and_frequencies():
    values = [np.array([1.0, 2.0], np.float32), np.array([7.0], np.float32)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=1)
    with pipe:
        a = fn.external_source(lambda: values)
        pipe.set_outputs(fn.random.choice(a, shape=[50]))
    (out,) = pipe.run()
    assert set(out[0].numpy().tolist()) <= {1.0, 2.0} and set(out[1].numpy().tolist()) == {7.0}
    x = np.concatenate(_run(a=3, p=[0.7, 0.2, 0.1], shape=[20000]))
    freq = np.bincount(x, minlength=3) / len(x)
    np.testing.assert_allclose(freq, [0.7, 0.2, 0.1], atol=0.01)
    with pytest.raises(ValueError, match="p has 2 probabilities for 3 values"):
        _run(a=[1, 2, 3], p=[0.5, 0.5])
    with pytest.raises(ValueError, match="probabilities sum to 0.9, not 1"):
        _run(a=[1, 2], p=[0.5, 0.4])
