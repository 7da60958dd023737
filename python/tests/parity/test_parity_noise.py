"""noise.gaussian, noise.salt_and_pepper and noise.shot against DALI 2.4 running the same
pipelines. The libraries draw from different generators, so the noise is compared by its
statistics; the deterministic parts are compared exactly: shapes, types, layouts, and the edge
settings (stddev 0, prob 0 and 1, salt and pepper values, factor 0, saturation)."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, _lib, assert_same, dali, has_gpu, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "noise.gaussian": "distribution: mean and stddev of out - in; exact at stddev 0 (rounding, "
                      "saturation)",
    "noise.salt_and_pepper": "distribution: corrupted, salt and pepper fractions, per_channel; "
                             "exact at prob 0 and 1 and for the values' conversion",
    "noise.shot": "distribution: mean, variance = mean * factor, quantisation; exact at factor 0",
}

_RNG = np.random.default_rng(5)


def _images(shapes, dtype=np.uint8, lo=20, hi=230):
    return [(_RNG.random(s) * (hi - lo) + lo).astype(dtype) for s in shapes]


def _source(fn, data, layout="HWC"):
    return fn.external_source(source=lambda: [np.copy(a) for a in data], batch=True,
                              layout=layout)


def _both(op, data, layout="HWC", **kwargs):
    def define(fn, types):
        return getattr(fn.noise, op)(_source(fn, data, layout), **kwargs)
    out = run_both(define, len(data))
    return out["stoker"][0][0], out["dali"][0][0]


def _layouts(op, data, layout, **kwargs):
    """The output layout of each library."""
    got = {}
    for lib in ("stoker", "dali"):
        pipeline_def, fn, _, extra = _lib(lib)

        @pipeline_def(batch_size=len(data), num_threads=1, seed=3, **extra)
        def pipe():
            return getattr(fn.noise, op)(_source(fn, data, layout), **kwargs)
        p = pipe()
        p.build()
        (b,) = p.run()
        got[lib] = b.layout()
    return got


@pytest.mark.parametrize("op", ["gaussian", "salt_and_pepper", "shot"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32])
def test_shapes_types_and_layouts_match(op, dtype):
    data = _images([(30, 41, 3), (7, 9, 3), (0, 5, 3)], dtype)
    ours, theirs = _both(op, data)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
    assert all(x == "HWC" for x in _layouts(op, data, "HWC").values())
    clip = _images([(3, 10, 12, 3)], dtype)
    ours, theirs = _both(op, clip, "FHWC")
    assert ours[0].shape == theirs[0].shape and ours[0].dtype == theirs[0].dtype


@pytest.mark.parametrize("dtype,mean,stddev", [(np.uint8, 2.0, 10.0), (np.float32, -1.0, 3.0),
                                               (np.int32, 0.0, 50.0)])
def test_gaussian_noise_statistics_match(dtype, mean, stddev):
    data = _images([(200, 150, 3)] * 2, dtype, lo=60, hi=190)
    ours, theirs = _both("gaussian", data, mean=mean, stddev=stddev)
    for lib, out in (("stoker", ours), ("dali", theirs)):
        d = np.concatenate([(o.astype(np.float64) - x).ravel() for o, x in zip(out, data)])
        assert abs(d.mean() - mean) < 0.05 * stddev + 0.02, lib
        assert abs(d.std() - stddev) < 0.02 * stddev + 0.3, lib  # integer rounding adds 1/12
        assert not np.array_equal(out[0] - data[0], out[1] - data[1]), lib


@pytest.mark.parametrize("dtype,mean", [(np.uint8, 0.0), (np.uint8, 0.5), (np.uint8, -0.5),
                                        (np.uint8, 200.0), (np.int8, -300.0),
                                        (np.float32, 0.3), (np.uint16, 1.5), (np.int64, 2.5)])
def test_gaussian_without_deviation_equals_dali(dtype, mean):
    """stddev 0: the input plus the mean, rounded half away from zero and saturated as DALI."""
    data = _images([(20, 30, 3), (5, 5, 1)], dtype, lo=0, hi=120)
    data[0][0, 0] = 100
    ours, theirs = _both("gaussian", data, mean=mean, stddev=0.0)
    assert_same(ours, theirs, what=f"gaussian stddev 0 mean {mean}")


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("layout", ["HWC", "CHW", ""])
def test_salt_and_pepper_statistics_match(per_channel, layout):
    shape = (3, 120, 100) if layout == "CHW" else (120, 100, 3)
    data = [np.full(shape, 100, np.uint8) for _ in range(2)]
    ours, theirs = _both("salt_and_pepper", data, layout, prob=0.3, salt_vs_pepper=0.2,
                         per_channel=per_channel)
    axis = 0 if layout == "CHW" else -1
    for lib, out in (("stoker", ours), ("dali", theirs)):
        v = np.concatenate([o.ravel() for o in out])
        assert set(np.unique(v).tolist()) <= {0, 100, 255}, lib
        assert abs(np.mean(v != 100) - 0.3) < 0.01, lib
        assert abs(np.mean(v == 255) - 0.06) < 0.006, lib
        same = np.mean(np.take(out[0], 0, axis) == np.take(out[0], 1, axis))
        if per_channel:
            assert abs(same - (0.7 ** 2 + 0.06 ** 2 + 0.24 ** 2)) < 0.03, lib
        else:
            assert same == 1.0, lib


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint32, np.int64, np.float32])
@pytest.mark.parametrize("kwargs", [dict(prob=0.0), dict(prob=1.0, salt_vs_pepper=1.0),
                                    dict(prob=1.0, salt_vs_pepper=0.0),
                                    dict(prob=1.0, salt_val=100.7, pepper_val=-7.0,
                                         salt_vs_pepper=0.5)])
def test_salt_and_pepper_deterministic_settings_equal_dali(dtype, kwargs):
    data = _images([(16, 20, 3), (4, 4, 3)], dtype, lo=0, hi=100)
    ours, theirs = _both("salt_and_pepper", data, **kwargs)
    if kwargs.get("salt_vs_pepper") == 0.5:  # which of the two: random; the two values: exact
        for a, b in zip(ours, theirs):
            assert set(np.unique(a).tolist()) == set(np.unique(b).tolist())
    else:
        assert_same(ours, theirs, what=f"salt_and_pepper {kwargs}")


@pytest.mark.parametrize("dtype,factor", [(np.uint8, 4.0), (np.float32, 0.5), (np.int32, 20.0),
                                          (np.uint8, None)])
def test_shot_noise_statistics_match(dtype, factor):
    """Poisson: the mean is the input's, the variance the mean times the factor, and values are
    multiples of the factor (DALI 2.4 uses 12 when factor is not given)."""
    data = [np.full((200, 200), 100, dtype)]
    kwargs = {} if factor is None else {"factor": factor}
    ours, theirs = _both("shot", data, "HW", **kwargs)
    f = 12.0 if factor is None else factor
    for lib, out in (("stoker", ours), ("dali", theirs)):
        v = out[0].astype(np.float64)
        assert abs(v.mean() - 100) < 5 * np.sqrt(100 * f / v.size) + 0.3, lib
        assert abs(v.var() / (100 * f) - 1) < 0.05, lib
        if np.dtype(dtype).kind == "f" or float(f).is_integer():
            kept = v[v != np.iinfo(dtype).max] if np.dtype(dtype).kind != "f" else v
            np.testing.assert_allclose(np.fmod(kept, f), 0, err_msg=lib)  # saturated aside


@pytest.mark.parametrize("dtype,factor,value", [(np.uint8, 0.0, 100), (np.float32, 0.0, 7.3),
                                                (np.float32, 1.0, -5.0), (np.uint8, -2.0, 100)])
def test_shot_noise_edges_equal_dali(dtype, factor, value):
    data = [np.full((10, 12), value, dtype)]
    ours, theirs = _both("shot", data, "HW", factor=factor)
    assert_same(ours, theirs, what=f"shot factor {factor} on {value}")


def test_saturation_at_the_type_maximum_matches():
    data = [np.full((100, 100, 3), 250, np.uint8)]
    for op, kwargs in (("gaussian", dict(stddev=20.0)), ("shot", dict(factor=30.0))):
        ours, theirs = _both(op, data, **kwargs)
        for lib, out in (("stoker", ours), ("dali", theirs)):
            assert out[0].max() == 255, (op, lib)
        share = [np.mean(o[0] == 255) for o in (ours, theirs)]
        assert abs(share[0] - share[1]) < 0.03, (op, share)


@pytest.mark.parametrize("kwargs", [dict(prob=1.5), dict(prob=-0.1), dict(salt_vs_pepper=2.0)])
def test_bad_probabilities_fail_in_both(kwargs):
    data = [np.full((4, 4, 3), 100, np.uint8)]
    for lib in ("stoker", "dali"):
        with pytest.raises(Exception, match="prob|pepper"):
            pipeline_def, fn, _, extra = _lib(lib)

            @pipeline_def(batch_size=1, num_threads=1, seed=1, **extra)
            def pipe():
                return fn.noise.salt_and_pepper(_source(fn, data), **kwargs)
            p = pipe()
            p.build()
            p.run()


def test_gpu_backends_statistics_match_dali():
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    data = [np.full((100, 100, 3), 100, np.uint8)]

    def define(fn, types):
        x = _source(fn, data).gpu()
        return (fn.noise.gaussian(x, stddev=5.0), fn.noise.salt_and_pepper(x, prob=0.2),
                fn.noise.shot(x, factor=4.0))
    out = run_both(define, 1, device_id=0)
    for lib in ("stoker", "dali"):
        g, s, sh = (o[0].astype(np.float64) for o in out[lib][0])
        assert abs(g.std() - 5.0) < 0.2 and abs(g.mean() - 100) < 0.2, lib
        assert abs(np.mean(s != 100) - 0.2) < 0.02, lib
        assert abs(sh.var() / 400 - 1) < 0.08, lib
