"""random.normal: every draw replayed in numpy from the Philox stream (Box-Muller), per-sample
mean/stddev from another operator, and the sample moments of many draws."""

import math

import numpy as np
import pytest

import stoker
from stoker import fn
from reference import RandomStream


def _normal(rng):
    u1 = 1.0 - float(np.float32(rng.uniform()))
    u2 = float(np.float32(rng.uniform()))
    return np.float32(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))


def test_draws_replay_exactly_with_per_sample_arguments():
    means = [np.float32(v) for v in (0.0, 10.0, -3.5)]
    pipe = stoker.Pipeline(batch_size=3, num_threads=2, seed=77)
    with pipe:
        m = fn.external_source(lambda: means)
        pipe.set_outputs(fn.random.normal(mean=m, stddev=2.0, shape=[4, 5]))
    for it in range(2):
        (out,) = pipe.run()
        for i in range(3):
            rng = RandomStream(77, 1, it * 3 + i)  # instance 1: the external source is 0
            expect = [np.float32(float(means[i]) + 2.0 * float(_normal(rng))) for _ in range(20)]
            np.testing.assert_array_equal(out[i].numpy().ravel(), expect)


def test_moments_and_errors():
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=1)
    with pipe:
        pipe.set_outputs(fn.random.normal(mean=5.0, stddev=0.5, shape=[20000]))
    x = np.concatenate([pipe.run()[0][i].numpy() for i in range(4)])
    assert abs(x.mean() - 5.0) < 0.01 and abs(x.std() - 0.5) < 0.01
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        pipe.set_outputs(fn.random.normal(stddev=-1.0))
    with pytest.raises(ValueError, match="stddev must be >= 0, got -1"):
        pipe.run()
