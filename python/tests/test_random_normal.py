"""random.normal: every draw replayed in numpy from the Philox stream (Box-Muller on its words in
order, evaluated in double), per-sample mean/stddev from another operator, the sample moments of
many draws, and the GPU backend equal to the CPU's."""

import math

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn
from reference import RandomStream


def _normals(rng, count):
    """Float draws: each pair of words (w0, w1) gives r cos(a), r sin(a), r = sqrt(-2 ln u),
    u = ((w0 >> 8) + 1) / 2^24, a = 2 pi (w1 >> 8) / 2^24."""
    z = []
    while len(z) < count:
        w0, w1 = rng.next_u32(), rng.next_u32()
        r = math.sqrt(-2.0 * math.log(((w0 >> 8) + 1) / 16777216.0))
        a = 2.0 * math.pi * (w1 >> 8) / 16777216.0
        z += [r * math.cos(a), r * math.sin(a)]
    return np.array(z[:count])


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
            expect = float(means[i]) + 2.0 * _normals(rng, 20)
            np.testing.assert_allclose(out[i].numpy().ravel(), expect, rtol=1e-6, atol=4e-6)


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


@pytest.mark.skipif(not _stoker.cuda_available(), reason="no CUDA device: GPU test skipped")
def test_the_gpu_backend_draws_the_cpu_values():
    # shape_like from GPU data (DALI's dithering: audio + random.normal(audio) * 1e-5), ragged
    # sizes off the blocks of four, per-sample arguments, float and double draws.
    sizes = [0, 1, 7, 33, 4099, 100003]

    def definition(device):
        pipe = stoker.Pipeline(batch_size=len(sizes), num_threads=2, seed=3,
                               device_id=0 if device == "gpu" else None)
        with pipe:
            x = fn.external_source(lambda: [np.zeros(n, np.float32) for n in sizes])
            m = fn.external_source(lambda: [np.float32(i) for i in range(len(sizes))])
            x = x.gpu() if device == "gpu" else x
            pipe.set_outputs(fn.random.normal(x, mean=m, stddev=0.5),
                             fn.random.normal(x, dtype=stoker.types.FLOAT64),
                             fn.random.normal(x, stddev=300.0, dtype=stoker.types.UINT8),
                             fn.random.normal(device=device, shape=[5]))
        return pipe
    cpu, gpu = definition("cpu"), definition("gpu")
    for _ in range(2):
        for c, g in zip(cpu.run(), gpu.run()):
            assert g.device == "gpu"
            g = g.as_cpu()
            for i in range(len(sizes)):
                np.testing.assert_array_equal(np.asarray(g[i]), np.asarray(c[i]))
