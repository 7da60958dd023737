"""random.uniform (and random.normal) with dtype=: every draw replayed in numpy from the Philox
stream — float32 draws for 8/16-bit integers and float32, 53-bit double draws for 32/64-bit
integers and float64, converted rounding half away from zero and saturating — the `values`
choice converted alike, identical results for 1 and 4 threads, the refused types."""

import math

import numpy as np
import pytest

import stoker
from stoker import fn, types
from reference import RandomStream


def _round_sat(x, dtype):
    info = np.iinfo(dtype)
    r = math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)  # half away from zero
    return dtype(min(max(r, info.min), info.max))


def _u53(rng):
    hi, lo = rng.next_u32() >> 5, rng.next_u32() >> 6
    return ((hi << 26) | lo) / 9007199254740992.0


def _run(build, batch_size=2, num_threads=2, seed=5):
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=num_threads, seed=seed)
    with pipe:
        pipe.set_outputs(*build())
    return [[o[i].numpy() for i in range(batch_size)] for o in pipe.run()]


def test_integer_and_float64_draws_replay_exactly():
    outs = _run(lambda: [fn.random.uniform(range=[-2.5, 300], shape=[50], dtype=types.UINT8),
                         fn.random.uniform(range=[-1e10, 1e10], shape=[50], dtype=types.INT32),
                         fn.random.uniform(range=[0, 1], shape=[50], dtype=types.FLOAT64),
                         fn.random.uniform(shape=[50])])
    u8, i32, f64, f32 = outs
    for i in range(2):
        rng = RandomStream(5, 0, i)
        lo, hi = np.float32(-2.5), np.float32(300)
        expect = [_round_sat(float(lo + (hi - lo) * np.float32(rng.uniform())), np.uint8)
                  for _ in range(50)]
        assert u8[i].dtype == np.uint8 and u8[i].tolist() == expect
        rng = RandomStream(5, 1, i)
        lo, hi = float(np.float32(-1e10)), float(np.float32(1e10))
        expect = [_round_sat(lo + (hi - lo) * _u53(rng), np.int32) for _ in range(50)]
        assert i32[i].dtype == np.int32 and i32[i].tolist() == expect  # saturated at the ends
        rng = RandomStream(5, 2, i)
        assert f64[i].dtype == np.float64 and f64[i].tolist() == [_u53(rng) for _ in range(50)]
        rng = RandomStream(5, 3, i)  # float32, the default: unchanged
        expect = [np.float32(-1) + np.float32(2) * np.float32(rng.uniform()) for _ in range(50)]
        np.testing.assert_array_equal(f32[i], np.array(expect, np.float32))


def test_values_convert_as_float32_numbers():
    values = [1.7, 2.5, -3.5, 300.0, 0.5, -0.5, 0.1]
    outs = _run(lambda: [fn.random.uniform(values=values, shape=[400], dtype=types.UINT8),
                         fn.random.uniform(values=values, shape=[400], dtype=types.INT32),
                         fn.random.uniform(values=values, shape=[400], dtype=types.FLOAT64)])
    u8, i32, f64 = (np.concatenate(o) for o in outs)
    assert set(u8.tolist()) == {2, 3, 0, 255, 1}
    assert set(i32.tolist()) == {2, 3, -4, 300, 1, -1, 0}
    assert set(f64.tolist()) == {float(np.float32(v)) for v in values}
    rng = RandomStream(5, 1, 0)
    assert i32[:400].tolist() == [_round_sat(values[rng.below(7)], np.int32) for _ in range(400)]


def test_integer_ranges_round_the_continuous_draws():
    (ints,) = _run(lambda: [fn.random.uniform(range=[0, 3], shape=[40000], dtype=types.INT64)])
    x = np.concatenate(ints)
    assert x.dtype == np.int64
    np.testing.assert_allclose(np.bincount(x) / x.size, [1 / 6, 1 / 3, 1 / 3, 1 / 6], atol=0.01)


def test_normal_dtypes():
    outs = _run(lambda: [fn.random.normal(mean=3.0, stddev=2.0, shape=[20000], dtype=types.INT16),
                         fn.random.normal(mean=0.5, stddev=0.1, shape=[20000],
                                          dtype=types.FLOAT64),
                         fn.random.normal(shape=[20000], dtype=types.UINT8)])
    i16, f64, u8 = (np.concatenate(o) for o in outs)
    assert i16.dtype == np.int16 and abs(i16.mean() - 3) < 0.05 and np.all(i16 == np.round(i16))
    assert f64.dtype == np.float64 and abs(f64.mean() - 0.5) < 0.005
    assert abs(f64.std() - 0.1) < 0.005 and np.unique(f64).size == f64.size
    assert u8.dtype == np.uint8 and u8.min() == 0  # negative draws saturate to 0
    assert abs(np.mean(u8 == 0) - 0.5 - 0.5 * 0.383) < 0.02  # P(x < 0.5) of N(0, 1): 0.691


def test_threads_do_not_change_the_draws():
    def build():
        return [fn.random.uniform(range=[0, 100], shape=[300], dtype=types.INT32),
                fn.random.normal(shape=[300], dtype=types.FLOAT64)]
    one = _run(build, batch_size=8, num_threads=1)
    four = _run(build, batch_size=8, num_threads=4)
    for a, b in zip(one, four):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", [types.BOOL, types.FLOAT16])
@pytest.mark.parametrize("op", ["uniform", "normal"])
def test_refused_types(op, dtype):
    with pytest.raises(TypeError, match=f"random.{op}: dtype {dtype.value} is not supported "
                                        r"\(uint8, int8, .* float32 or float64\)"):
        _run(lambda: [getattr(fn.random, op)(dtype=dtype)], batch_size=1)
