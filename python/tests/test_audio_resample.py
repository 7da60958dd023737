"""audio_resample: output lengths for each way of giving the ratio (rates, scale, out_length,
per-sample too), a resampled sine against the analytic sine at the new rate, a float64
reference of the windowed-sinc definition, channels resampled alike, the type conversions DALI
documents, layouts kept, and every error message. Bit-for-bit agreement with DALI 2.4 is
python/tests/parity/test_parity_audio_decode.py's."""
import re

import numpy as np
import pytest

import stoker
from stoker import fn, types


def _run(samples, layout=None, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(samples), num_threads=2)
    with pipe:
        x = fn.external_source(lambda: samples, layout=layout)
        pipe.set_outputs(fn.audio_resample(x, **kwargs))
    (out,) = pipe.run()
    return [np.array(s) for s in out], out.layout()


def _raises(kind, message, samples, **kwargs):
    with pytest.raises(kind, match=re.escape(message)):
        _run(samples, **kwargs)


def _lobes(quality):
    return int(np.floor(0.007 * quality * quality - 0.09 * quality + 3 + 0.5))


def _reference(x, in_rate, out_rate, quality):
    """The definition in float64: out[o] = sum_i x[i] * w(i - pos(o)), w the table of
    64 * lobes + 1 samples of sinc(t) * Hann(t / lobes) over [-lobes, lobes] read with linear
    interpolation, inputs outside the signal taken as 0. The positions are DALI's: o * in_rate /
    out_rate in double every 256th output, float32 steps between (their drift, up to ~1e-4 of a
    sample, is part of what DALI computes)."""
    lobes = _lobes(quality)
    coeffs = 64 * lobes + 1
    center = (coeffs - 1) // 2
    k = np.arange(coeffs)
    t = (k - center) * 2.0 * lobes / (coeffs - 1)
    table = np.sinc(t) * 0.5 * (1 + np.cos(np.pi * (k - center) * 2.0 / coeffs))
    table = np.concatenate([table, [0.0]])
    n = len(x)
    out = np.zeros(int(np.ceil(n * out_rate / in_rate)))
    step = np.float32(in_rate / out_rate)
    for o in range(len(out)):
        if o % 256 == 0:
            start = o * (in_rate / out_rate)
            base = np.floor(start)
            frac = np.float32(start - base)
        else:
            frac = np.float32(frac + step)
        pos = base + float(frac)
        i = np.arange(int(np.ceil(pos)) - lobes, int(np.ceil(pos)) + lobes)
        i = i[(i >= 0) & (i < n)]
        fi = (i - pos) * (coeffs - 1) / (2.0 * lobes) + center
        j = np.floor(fi).astype(int)
        w = table[j] + (fi - j) * (table[j + 1] - table[j])
        out[o] = np.dot(x[i], w)
    return out


@pytest.mark.parametrize("quality", [0.0, 50.0, 100.0])
def test_values_match_the_definition(quality):
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, 600).astype(np.float32)
    (out,), _ = _run([x], in_rate=16000.0, out_rate=22050.0, quality=quality)
    np.testing.assert_allclose(out, _reference(x.astype(np.float64), 16000, 22050, quality),
                               atol=3e-5)


def test_a_sine_comes_out_at_the_new_rate():
    t = np.arange(16000) / 16000.0
    x = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    (out,), _ = _run([x], in_rate=16000.0, out_rate=44100.0)
    assert out.shape == (44100,) and out.dtype == np.float32
    want = 0.5 * np.sin(2 * np.pi * 440 * np.arange(44100) / 44100.0)
    np.testing.assert_allclose(out[500:-500], want[500:-500], atol=2e-3)  # away from the ends


def test_lengths_for_each_way_of_giving_the_ratio_and_per_sample():
    x = [np.zeros(1000, np.float32), np.zeros(7, np.float32), np.zeros(0, np.float32)]
    out, _ = _run(x, in_rate=44100.0, out_rate=16000.0)
    assert [o.shape for o in out] == [(363,), (3,), (0,)]  # ceil(n * 16000 / 44100)
    out, _ = _run(x, scale=1.5)
    assert [o.shape for o in out] == [(1500,), (11,), (0,)]
    out, _ = _run(x[:2], out_length=10)
    assert [o.shape for o in out] == [(10,), (10,)]
    out, _ = _run(x, scale=0.0)
    assert [o.shape for o in out] == [(0,), (0,), (0,)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2)
    with pipe:
        data = fn.external_source(lambda: x[:2])
        rates = fn.external_source(lambda: [np.float32(8000), np.float32(32000)])
        lengths = fn.external_source(lambda: [np.int64(5), np.int64(9)])
        pipe.set_outputs(fn.audio_resample(data, in_rate=16000.0, out_rate=rates),
                         fn.audio_resample(data, out_length=lengths))
    a, b = pipe.run()
    assert [np.array(s).shape for s in a] == [(500,), (14,)]
    assert [np.array(s).shape for s in b] == [(5,), (9,)]


def test_channels_are_resampled_alike_and_the_layout_kept():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (400, 3)).astype(np.float32)
    (multi,), layout = _run([x], layout="tc", scale=0.75)
    assert multi.shape == (300, 3) and layout == "tc"
    for c in range(3):
        (mono,), _ = _run([np.ascontiguousarray(x[:, c])], scale=0.75)
        # The mono path sums four products at a time (DALI's SSE loop): the last bits differ.
        np.testing.assert_allclose(multi[:, c], mono, atol=1e-6)


def test_type_conversions_are_dalis():
    # DALI's documented examples, at scale 1 (the window is 1 at each input and ~0 elsewhere).
    (out,), _ = _run([np.array([0, 127, 128, 255], np.uint8)], scale=1.0, dtype=types.INT16)
    np.testing.assert_array_equal(out, [-32767, -128, 128, 32767])
    # 0 -> 127.5 exactly, less the window's leakage from the -1 before it: 127 (DALI 2.4 gives
    # 127 too, where its documentation says 128).
    (out,), _ = _run([np.array([-1.0, 0.0, 1.0], np.float32)], scale=1.0, dtype=types.UINT8)
    np.testing.assert_array_equal(out, [0, 127, 255])
    (out,), _ = _run([np.array([-32767, 0, 32767], np.int16)], scale=1.0, dtype=types.FLOAT)
    np.testing.assert_allclose(out, [-1, 0, 1], atol=1e-6)
    # Without dtype the input's type is kept; floats are not clamped.
    (out,), _ = _run([np.array([-3.0, 5.0], np.float32)], scale=1.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [-3, 5], atol=1e-5)
    (out,), _ = _run([np.array([-0.9, 3.0], np.float32)], scale=1.0, dtype=types.INT16)
    np.testing.assert_array_equal(out, [-29490, 32767])  # saturated


def test_errors():
    x = [np.zeros(10, np.float32)]
    _raises(ValueError, "audio_resample: no resampling factor given; give scale, out_length, or "
            "in_rate and out_rate", x)
    _raises(ValueError, "audio_resample: in_rate and out_rate must be given together", x,
            in_rate=1.0)
    _raises(ValueError, "audio_resample: the sampling rates, scale and out_length cannot be used "
            "together", x, scale=2.0, out_length=4)
    _raises(ValueError, "audio_resample: quality must be in [0, 100], got 101", x, scale=2.0,
            quality=101.0)
    _raises(TypeError, "audio_resample: dtype must be int8, uint8, int16, uint16, int32, uint32 "
            "or float32, got float64", x, scale=2.0, dtype=types.FLOAT64)
    _raises(TypeError, "audio_resample: the input must be int8, uint8, int16, uint16, int32, "
            "uint32 or float32, got float64", [np.zeros(10)], scale=2.0)
    _raises(ValueError, "audio_resample: expected a signal of shape (samples) or (samples, "
            "channels), got 3 dimensions", [np.zeros((2, 2, 2), np.float32)], scale=2.0)
    _raises(ValueError, "audio_resample: cannot make a signal of 3 samples from an empty input",
            [np.zeros(0, np.float32)], out_length=3)
    _raises(ValueError, "audio_resample: scale must be non-negative, got -1", x, scale=-1.0)
    _raises(ValueError, "audio_resample: scale must be non-negative, got nan", x,
            scale=float("nan"))
    _raises(ValueError, "audio_resample: in_rate must be positive, got 0", x, in_rate=0.0,
            out_rate=1.0)
    _raises(ValueError, "audio_resample: out_rate must be non-negative, got -1", x, in_rate=1.0,
            out_rate=-1.0)
    _raises(ValueError, "audio_resample: out_length must be non-negative, got -3", x,
            out_length=-3)
    _raises(ValueError, "audio_resample: scale would make an output of 10000000000 (1e+10 "
            "elements in sample 0); arguments may ask for at most 2147483647 elements per "
            "sample (or as many as the input sample holds)", x, scale=1e9)


def test_the_experimental_name_warns():
    with pytest.warns(DeprecationWarning, match="audio_resample"):
        pipe = stoker.Pipeline(batch_size=1, num_threads=1)
        with pipe:
            pipe.set_outputs(fn.experimental.audio_resample(
                fn.external_source(lambda: [np.zeros(10, np.float32)]), scale=2.0))
    (out,) = pipe.run()
    assert np.array(out[0]).shape == (20,)
