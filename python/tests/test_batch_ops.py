"""get_property, permute_batch, batch_permutation and random.beta: values against their
definitions, per-sample arguments, errors with their text, distributions and independence from
threads for the random ones, and the GPU backends against the CPU ones."""
import math
import os
import re

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")

DATA = [np.full((2, i + 1), i, np.int16) for i in range(4)]


def _run(define, batch_size=4, iterations=1, threads=2, seed=3, device_id=None):
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=threads, seed=seed,
                           device_id=device_id)
    with pipe:
        out = define()
        pipe.set_outputs(*(out if isinstance(out, tuple) else (out,)))
    runs = []
    for _ in range(iterations):
        outs = [b.as_cpu() if b.device == "gpu" else b for b in pipe.run()]
        runs.append([[np.array(b.at(i)) for i in range(len(b))] for b in outs])
    return runs


def _feed(layout="AB", device="cpu"):
    x = fn.external_source(lambda: DATA, layout=layout)
    return x.gpu() if device == "gpu" else x


def _text(samples):
    return [bytes(s).decode() for s in samples]


def _error(define, batch_size=4):
    with pytest.raises(Exception) as e:
        _run(define, batch_size)
    return e.type, re.sub(r"\(defined at [^)]*\)", "(defined at ...)", str(e.value))


# -- get_property --------------------------------------------------------------------------

def test_get_property_layout_and_source_info(ten_files):
    files = sorted(os.path.join(ten_files, d, "x.jpg") for d in os.listdir(ten_files))[:4]

    def define():
        data, _ = fn.readers.file(files=files)
        return (fn.get_property(data, key="source_info"),
                fn.get_property(_feed(), key="layout"), fn.get_property(_feed(""), key="layout"),
                fn.get_property(_feed(), key="source_info"))
    (info, layout, no_layout, fed), = _run(define)
    assert _text(info) == files
    for s in info + layout:
        assert s.dtype == np.uint8 and s.ndim == 1
    assert _text(layout) == ["AB"] * 4
    assert [s.shape for s in no_layout] == [(0,)] * 4
    assert [s.shape for s in fed] == [(0,)] * 4  # external sources have no source_info


def test_get_property_rejects_unknown_keys():
    assert _error(lambda: fn.get_property(_feed(), key="foo")) == (
        ValueError, "get_property (defined at ...): get_property: unsupported key 'foo' "
                    "(supported: 'source_info', 'layout')")


@needs_gpu
def test_get_property_gpu_equals_cpu(ten_files):
    files = sorted(os.path.join(ten_files, d, "x.jpg") for d in os.listdir(ten_files))[:4]

    def define(device):
        def f():
            data, _ = fn.readers.file(files=files)
            data = data.gpu() if device == "gpu" else data
            return (fn.get_property(data, key="source_info", device=device),
                    fn.get_property(_feed(device=device), key="layout", device=device))
        return f
    cpu = _run(define("cpu"))
    gpu = _run(define("gpu"), device_id=0)
    for c, g in zip(cpu[0], gpu[0]):
        assert _text(c) == _text(g)


# -- permute_batch -------------------------------------------------------------------------

def test_permute_batch_with_a_list_and_a_datanode(ten_files):
    files = sorted(os.path.join(ten_files, d, "x.jpg") for d in os.listdir(ten_files))[:4]
    order = [np.int32(v) for v in (2, 0, 0, 3)]

    def define():
        data, _ = fn.readers.file(files=files)
        moved = fn.permute_batch(data, indices=[3, 3, 0, 1])
        return (fn.permute_batch(_feed(), indices=[3, 3, 0, 1]),
                fn.permute_batch(_feed(), indices=fn.external_source(lambda: order)),
                fn.get_property(moved, key="source_info"))
    (listed, by_node, info), = _run(define)
    for got, idx in ((listed, [3, 3, 0, 1]), (by_node, [2, 0, 0, 3])):
        assert len(got) == 4
        for g, i in zip(got, idx):
            np.testing.assert_array_equal(g, DATA[i])
    assert _text(info) == [files[i] for i in (3, 3, 0, 1)]  # each keeps its source_info


def test_permute_batch_errors():
    prefix = "Error in operator permute_batch (defined at ...), iteration 0, permute_batch: "
    assert _error(lambda: fn.permute_batch(_feed(), indices=[3, 3, 0, 4])) == (
        IndexError, prefix + "indices[3] = 4 is not a sample of a batch of 4 (valid: 0 to 3)")
    assert _error(lambda: fn.permute_batch(_feed(), indices=[0, -1, 0, 1])) == (
        IndexError, prefix + "indices[1] = -1 is not a sample of a batch of 4 (valid: 0 to 3)")
    assert _error(lambda: fn.permute_batch(_feed(), indices=[3, 3, 0])) == (
        ValueError, prefix + "3 indices for a batch of 4 samples (one index per sample)")
    floats = [np.float32(0)] * 4
    assert _error(lambda: fn.permute_batch(_feed(), indices=fn.external_source(
        lambda: floats))) == (TypeError, prefix + "`indices` must be integers, got float32")


@needs_gpu
def test_permute_batch_gpu_equals_cpu():
    def define(device):
        return lambda: fn.permute_batch(_feed(device=device), indices=fn.batch_permutation())
    for c, g in zip(_run(define("cpu"), iterations=3), _run(define("gpu"), iterations=3,
                                                             device_id=0)):
        for a, b in zip(c[0], g[0]):
            np.testing.assert_array_equal(a, b)


# -- batch_permutation ---------------------------------------------------------------------

def _permutations(batch_size, iterations, threads=2, **kwargs):
    runs = _run(lambda: fn.batch_permutation(**kwargs), batch_size, iterations, threads)
    return [tuple(int(v) for v in it[0]) for it in runs]


def test_batch_permutation_is_a_uniform_permutation():
    draws = _permutations(4, 1200)
    for p in draws:
        assert sorted(p) == [0, 1, 2, 3]
    counts = {p: draws.count(p) for p in set(draws)}
    assert len(counts) == 24
    assert all(abs(c - 50) < 5 * math.sqrt(50) for c in counts.values()), counts


def test_batch_permutation_without_fixed_points_is_one_cycle():
    """As DALI's (Sattolo's algorithm): a uniformly chosen cycle through every sample."""
    draws = _permutations(4, 600, no_fixed_points=True)
    for p in draws:
        assert sorted(p) == [0, 1, 2, 3] and all(p[i] != i for i in range(4))
        at, steps = p[0], 1
        while at != 0:
            at, steps = p[at], steps + 1
        assert steps == 4
    counts = {p: draws.count(p) for p in set(draws)}
    assert len(counts) == 6
    assert all(abs(c - 100) < 5 * 10 for c in counts.values()), counts
    assert _permutations(1, 3, no_fixed_points=True) == [(0,)] * 3  # ignored for one sample


def test_batch_permutation_with_repetitions():
    draws = np.array(_permutations(5, 800, allow_repetitions=True))
    freq = np.array([np.bincount(draws[:, i], minlength=5) for i in range(5)]) / 800
    np.testing.assert_allclose(freq, 0.2, atol=0.06)
    assert any(len(set(p)) < 5 for p in draws.tolist())
    draws = np.array(_permutations(5, 800, allow_repetitions=True, no_fixed_points=True))
    freq = np.array([np.bincount(draws[:, i], minlength=5) for i in range(5)]) / 800
    np.testing.assert_allclose(freq, 0.25 * (1 - np.eye(5)), atol=0.06)


def test_batch_permutation_does_not_depend_on_threads():
    for kwargs in ({}, {"no_fixed_points": True}, {"allow_repetitions": True}):
        assert _permutations(8, 5, threads=1, **kwargs) == _permutations(8, 5, threads=4,
                                                                        **kwargs)


# -- random.beta ---------------------------------------------------------------------------

def _beta_cdf(a, b, x, steps=20000):
    """The Beta CDF by the midpoint rule in t = x^a (no singularity at 0)."""
    t = (np.arange(steps) + 0.5) * x ** a / steps
    log_b = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return float(np.sum((1 - t ** (1 / a)) ** (b - 1) / a) * x ** a / steps / math.exp(log_b))


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (2.0, 5.0), (0.5, 3.0), (0.3, 0.6)])
def test_beta_distribution(a, b):
    (out,), = _run(lambda: fn.random.beta(alpha=a, beta=b, shape=[20000]))
    x = np.concatenate(out).astype(np.float64)
    assert out[0].dtype == np.float32 and x.min() >= 0 and x.max() <= 1
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / x.size)
    assert abs(x.var() - var) < 0.03 * var
    for q in (0.1, 0.5, 0.9):
        assert abs(np.mean(x < q) - _beta_cdf(a, b, q)) < 2 / math.sqrt(x.size)


def test_beta_per_sample_arguments_shapes_and_dtype():
    alphas = [np.float32(v) for v in (0.5, 2.0, 8.0, 1.0)]
    shapes = [np.array(s, np.int32) for s in ([3], [2, 2], [], [0])]

    def define():
        a = fn.external_source(lambda: alphas)
        return (fn.random.beta(alpha=a, beta=2.0, shape=[4000]),
                fn.random.beta(shape=fn.external_source(lambda: shapes)),
                fn.random.beta(_feed()), fn.random.beta(dtype=types.FLOAT64),
                fn.random.beta())
    (per_alpha, shaped, like, f64, scalar), = _run(define)
    for x, a in zip(per_alpha, alphas):
        assert abs(x.mean() - a / (a + 2)) < 0.02
    assert [s.shape for s in shaped] == [(3,), (2, 2), (), (0,)]
    assert [s.shape for s in like] == [d.shape for d in DATA]
    assert all(s.dtype == np.float64 and s.shape == () for s in f64)
    assert all(s.dtype == np.float32 and s.shape == () for s in scalar)


def test_beta_does_not_depend_on_threads():
    def define():
        return fn.random.beta(alpha=0.4, beta=0.7, shape=[50])
    one = _run(define, 8, 2, threads=1)
    four = _run(define, 8, 2, threads=4)
    for x, y in zip(one, four):
        for a, b in zip(x[0], y[0]):
            np.testing.assert_array_equal(a, b)


def test_beta_errors():
    assert _error(lambda: fn.random.beta(alpha=0.0)) == (
        ValueError, "Error in operator random.beta (defined at ...), iteration 0, sample 0: "
                    "random.beta: `alpha` must be a positive finite number, got 0")
    betas = [np.float32(v) for v in (1, -1, 1, 1)]
    assert _error(lambda: fn.random.beta(beta=fn.external_source(lambda: betas))) == (
        ValueError, "Error in operator random.beta (defined at ...), iteration 0, sample 1: "
                    "random.beta: `beta` must be a positive finite number, got -1")
    assert _error(lambda: fn.random.beta(dtype=types.FLOAT16)) == (
        TypeError, "random.beta (defined at ...): random.beta: dtype float16 is not supported "
                   "(float32 or float64)")
    assert _error(lambda: fn.random.beta(_feed(), shape=[2])) == (
        ValueError, "random.beta (defined at ...): random.beta: give `shape` or a shape_like "
                    "input, not both")
