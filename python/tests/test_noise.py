"""noise.gaussian, noise.salt_and_pepper and noise.shot: their statistics, their exact edge cases,
the per-sample arguments, stoker's seed rule (same seed, same noise, whatever the threads), the
errors, DALI's class names, and the GPU twin (equal to the CPU bit for bit)."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, ops
from op_util import run_op

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: the GPU backend is tested on the GPU machine")


def _image(shape=(64, 80, 3), dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(0, 200, shape).astype(dtype)
    return rng.integers(20, 200, shape).astype(dtype)


def _pipe_outputs(define, batch_size=3, seed=7, num_threads=2, iterations=1, **kwargs):
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=num_threads, seed=seed, **kwargs)
    with pipe:
        outs = define()
        pipe.set_outputs(*(outs if isinstance(outs, tuple) else (outs,)))
    res = []
    for _ in range(iterations):
        res.append([[np.asarray(b.as_cpu()[i] if hasattr(b, "as_cpu") else b[i]).copy()
                     for i in range(len(b))] for b in pipe.run()])
    return res


def test_gaussian_adds_normal_noise_of_mean_and_stddev():
    img = np.full((200, 300), 50.0, np.float32)
    out = run_op("noise.gaussian", [img] * 2, layout="HW", mean=2.0, stddev=3.0)
    for o in out:
        assert o.dtype == np.float32 and o.shape == img.shape
        d = o.astype(np.float64) - 50
        assert abs(d.mean() - 2.0) < 0.05 and abs(d.std() - 3.0) < 0.05
        assert abs(np.mean(np.abs(d - 2) > 6) - 0.0455) < 0.004  # beyond 2 sigma: normal tails
    assert not np.array_equal(out[0], out[1])  # each sample its own noise


def test_gaussian_edges_identity_rounding_and_saturation():
    for dtype in (np.uint8, np.int16, np.int32, np.uint64, np.float32):
        img = _image(dtype=dtype)
        np.testing.assert_array_equal(run_op("noise.gaussian", [img], stddev=0.0)[0], img)
    img = np.full((8, 8, 3), 100, np.uint8)
    assert np.unique(run_op("noise.gaussian", [img], stddev=0.0, mean=0.5)[0]).tolist() == [101]
    assert np.unique(run_op("noise.gaussian", [img], stddev=0.0, mean=-0.5)[0]).tolist() == [100]
    assert np.unique(run_op("noise.gaussian", [img], stddev=0.0, mean=200)[0]).tolist() == [255]
    i8 = np.full((8, 8, 3), 100, np.int8)
    assert np.unique(run_op("noise.gaussian", [i8], stddev=0.0, mean=-300)[0]).tolist() == [-128]
    noisy = run_op("noise.gaussian", [np.full((100, 100, 3), 250, np.uint8)], stddev=20.0)[0]
    assert noisy.max() == 255 and np.mean(noisy == 255) > 0.3  # saturated, not wrapped
    assert noisy.min() > 150


def test_gaussian_per_sample_mean_and_stddev():
    imgs = [np.zeros((100, 100), np.float32) for _ in range(3)]
    means = [np.float32(m) for m in (0.0, 10.0, -5.0)]
    stds = [np.float32(s) for s in (1.0, 0.0, 4.0)]

    def define():
        x = fn.external_source(lambda: imgs, layout="HW")
        return fn.noise.gaussian(x, mean=fn.external_source(lambda: means),
                                 stddev=fn.external_source(lambda: stds))
    (out,) = _pipe_outputs(define)[0]
    for o, m, s in zip(out, means, stds):
        assert abs(o.mean() - m) < 0.1 and abs(o.std() - s) < 0.1


def test_salt_and_pepper_fractions_values_and_defaults():
    for dtype, salt, pepper in ((np.uint8, 255, 0), (np.int16, 32767, -32768),
                                (np.float32, 1.0, -1.0), (np.uint32, 2**32 - 1, 0)):
        img = np.full((200, 200, 3), 100, dtype)
        o = run_op("noise.salt_and_pepper", [img], prob=0.2, salt_vs_pepper=0.25)[0]
        assert o.dtype == dtype and o.shape == img.shape
        assert set(np.unique(o).tolist()) <= {100, salt, pepper}
        px = o[..., 0]
        assert abs(np.mean(px != 100) - 0.2) < 0.01, dtype
        assert abs(np.mean(px == salt) - 0.05) < 0.006, dtype
        assert abs(np.mean(px == pepper) - 0.15) < 0.01, dtype
    img = _image()
    np.testing.assert_array_equal(run_op("noise.salt_and_pepper", [img], prob=0.0)[0], img)
    assert set(np.unique(run_op("noise.salt_and_pepper", [img], prob=1.0)[0])) == {0, 255}
    only_salt = run_op("noise.salt_and_pepper", [img], prob=1.0, salt_vs_pepper=1.0)[0]
    assert np.unique(only_salt).tolist() == [255]


def test_salt_and_pepper_values_convert_as_dali():
    """salt_val/pepper_val are floats cast to the input type as DALI's C++ does: truncated,
    wrapping out of range (DALI 2.4: 100.7 -> 100, 300 -> 44, -7 -> 249, -0.7 -> 0)."""
    img = np.full((20, 20, 3), 100, np.uint8)
    for salt, pepper, want in ((100.7, 0.0, {100, 0}), (300.0, -7.0, {44, 249}),
                               (-0.7, 255.6, {0, 255})):
        o = run_op("noise.salt_and_pepper", [img], prob=1.0, salt_val=salt, pepper_val=pepper)[0]
        assert set(np.unique(o).tolist()) == want, (salt, pepper)
    f = run_op("noise.salt_and_pepper", [img.astype(np.float32)], prob=1.0, salt_val=0.25,
               salt_vs_pepper=1.0)[0]
    assert np.unique(f).tolist() == [0.25]


def test_salt_and_pepper_per_channel_and_layouts():
    img = np.full((100, 100, 3), 100, np.uint8)
    shared = run_op("noise.salt_and_pepper", [img], prob=0.5)[0]
    assert (shared[..., 0] == shared[..., 1]).all() and (shared[..., 0] == shared[..., 2]).all()
    own = run_op("noise.salt_and_pepper", [img], prob=0.5, per_channel=True)[0]
    assert 0.3 < np.mean(own[..., 0] == own[..., 1]) < 0.45  # independent: 0.5^2 + 2 * 0.25^2
    chw = run_op("noise.salt_and_pepper", [img.transpose(2, 0, 1).copy()], layout="CHW",
                 prob=0.5)[0]
    assert (chw[0] == chw[1]).all() and (chw[0] == chw[2]).all() and np.mean(chw[0] != 100) > 0.4
    flat = run_op("noise.salt_and_pepper", [img], layout="", prob=0.5)[0]  # no layout: C last
    assert (flat[..., 0] == flat[..., 2]).all()
    gray = run_op("noise.salt_and_pepper", [img[..., 0].copy()], layout="HW", prob=0.5)[0]
    assert 0.4 < np.mean(gray != 100) < 0.6  # no C axis: each element its own draw
    clip = np.full((4, 30, 30, 3), 100, np.uint8)
    frames = run_op("noise.salt_and_pepper", [clip], layout="FHWC", prob=0.5)[0]
    assert (frames[..., 0] == frames[..., 1]).all()
    assert not np.array_equal(frames[0], frames[1])  # frames get their own noise, as DALI's


def test_shot_noise_is_poisson_of_input_over_factor():
    img = np.full((300, 300), 100.0, np.float32)
    for factor in (0.5, 4.0, 25.0):
        o = run_op("noise.shot", [img], layout="HW", factor=factor)[0].astype(np.float64)
        assert abs(o.mean() - 100) < 0.2 + 3 * np.sqrt(100 * factor / o.size)
        assert abs(o.var() / (100 * factor) - 1) < 0.03, factor  # variance = mean * factor
        np.testing.assert_array_equal(np.fmod(o, factor), 0)  # multiples of the factor
    u8 = np.full((100, 100, 3), 100, np.uint8)
    unset = run_op("noise.shot", [u8])[0]  # DALI 2.4 uses 12 when factor is not given
    assert set(np.unique(unset).tolist()) <= set(range(0, 256, 12)) | {255}
    explicit = run_op("noise.shot", [u8], factor=20.0)[0]
    assert set(np.unique(explicit).tolist()) <= set(range(0, 256, 20)) | {255}
    assert run_op("noise.shot", [u8], factor=0.0)[0].max() == 0  # DALI 2.4: zeros
    neg = np.full((10, 10), -5.0, np.float32)
    assert run_op("noise.shot", [neg], layout="HW", factor=1.0)[0].max() == 0
    sat = run_op("noise.shot", [np.full((50, 50, 3), 250, np.uint8)], factor=30.0)[0]
    assert sat.max() == 255 and np.mean(sat == 255) > 0.2  # saturated at 255


def test_per_sample_prob_and_factor():
    imgs = [np.full((100, 100, 3), 100, np.uint8) for _ in range(3)]
    probs = [np.float32(p) for p in (0.0, 0.5, 1.0)]
    factors = [np.float32(f) for f in (0.0, 1.0, 10.0)]
    salts = [np.float32(v) for v in (1.0, 2.0, 3.0)]
    peppers = [np.float32(v) for v in (7.0, 8.0, 9.0)]
    svp = [np.float32(v) for v in (1.0, 0.0, 0.5)]

    def define():
        x = fn.external_source(lambda: imgs, layout="HWC")
        return (fn.noise.salt_and_pepper(x, prob=fn.external_source(lambda: probs)),
                fn.noise.shot(x, factor=fn.external_source(lambda: factors)),
                fn.noise.salt_and_pepper(x, prob=1.0, salt_val=fn.external_source(lambda: salts),
                                         pepper_val=fn.external_source(lambda: peppers),
                                         salt_vs_pepper=fn.external_source(lambda: svp)))
    snp, shot, values = _pipe_outputs(define)[0]
    for o, p in zip(snp, probs):
        assert abs(np.mean(o != 100) - p) < 0.02
    assert [sorted(np.unique(v).tolist()) for v in values] == [[1], [8], [3, 9]]
    assert shot[0].max() == 0
    for o, f in zip(shot[1:], factors[1:]):
        assert abs(o.astype(np.float64).var() / (100 * f) - 1) < 0.06


@pytest.mark.parametrize("op,kwargs", [("gaussian", dict(stddev=5.0)),
                                       ("salt_and_pepper", dict(prob=0.3)),
                                       ("shot", dict(factor=3.0))])
def test_seed_rule(op, kwargs):
    imgs = [_image(seed=i) for i in range(3)]

    def run(seed, threads=2, op_seed=-1):
        def define():
            x = fn.external_source(lambda: imgs, layout="HWC")
            return getattr(fn.noise, op)(x, seed=op_seed, **kwargs)
        return _pipe_outputs(define, seed=seed, num_threads=threads, iterations=2)

    a, b, c = run(1), run(1, threads=1), run(2)
    for it in range(2):
        for x, y in zip(a[it][0], b[it][0]):
            np.testing.assert_array_equal(x, y)  # same seed: same noise, whatever the threads
    assert not np.array_equal(a[0][0][0], c[0][0][0])  # another seed: other noise
    assert not np.array_equal(a[0][0][0], a[1][0][0])  # the next iteration: other noise
    s1, s2 = run(1, op_seed=9), run(2, op_seed=9)
    np.testing.assert_array_equal(s1[0][0][1], s2[0][0][1])  # the operator's own seed decides


def test_errors_name_the_operator_and_sample():
    img = [_image()]
    with pytest.raises(ValueError, match=r"noise\.gaussian.*sample 0.*stddev must be >= 0, got -1"):
        run_op("noise.gaussian", img, stddev=-1.0)
    with pytest.raises(ValueError, match=r"noise\.salt_and_pepper.*sample 0.*prob must be in "
                                         r"\[0, 1\], got 1\.5"):
        run_op("noise.salt_and_pepper", img, prob=1.5)
    with pytest.raises(ValueError, match=r"salt_vs_pepper must be in \[0, 1\], got -0\.1"):
        run_op("noise.salt_and_pepper", img, salt_vs_pepper=-0.1)
    with pytest.raises(ValueError, match=r"'C' must be the first or the last axis of the "
                                         r"layout, got 'HCW'"):
        run_op("noise.salt_and_pepper", [_image((4, 3, 5))], layout="HCW")
    with pytest.raises(TypeError, match=r"noise\.shot: input type float64 is not supported"):
        run_op("noise.shot", [np.ones((4, 4), np.float64)], layout="HW")


def test_dali_class_names():
    img = _image()

    class Pipe(stoker.Pipeline):
        def __init__(self):
            super().__init__(batch_size=1, num_threads=1, device_id=None, seed=3)
            self.src = ops.ExternalSource(source=lambda: [img], layout="HWC")
            self.gauss = ops.noise.Gaussian(stddev=0.0)
            self.snp = ops.noise.SaltAndPepper(prob=0.0)
            self.shot = ops.noise.Shot(factor=2.0)

        def define_graph(self):
            x = self.src()
            return self.gauss(x), self.snp(x), self.shot(x)

    pipe = Pipe()
    pipe.build()
    g, s, sh = pipe.run()
    np.testing.assert_array_equal(np.asarray(g[0]), img)
    np.testing.assert_array_equal(np.asarray(s[0]), img)
    assert np.asarray(sh[0]).shape == img.shape


@needs_gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32])
def test_gpu_equals_cpu_bit_for_bit(dtype):
    imgs = [_image((40 + 7 * i, 33, 3), dtype, seed=i) for i in range(4)]

    def run(device):
        def define():
            x = fn.external_source(lambda: imgs, layout="HWC")
            x = x.gpu() if device == "gpu" else x
            # Own seeds: the copy to the GPU must not move the operators' instance numbers.
            return (fn.noise.gaussian(x, stddev=7.0, mean=0.5, device=device, seed=1),
                    fn.noise.salt_and_pepper(x, prob=0.3, device=device, seed=2),
                    fn.noise.salt_and_pepper(x, prob=0.3, per_channel=True, device=device,
                                             seed=3),
                    fn.noise.shot(x, factor=3.0, device=device, seed=4))
        return _pipe_outputs(define, batch_size=4, device_id=0)[0]

    for k, (cpu, gpu) in enumerate(zip(run("cpu"), run("gpu"))):
        for a, b in zip(cpu, gpu):
            np.testing.assert_array_equal(a, b, err_msg=f"output {k}")
