"""The gpu backends of spectrogram, audio_resample (and its old name experimental.audio_resample)
and nonsilent_region against their cpu backends, for the argument combinations the cpu tests
cover (test_spectral.py, test_audio_resample.py): audio_resample and nonsilent_region bit for
bit, spectrogram within 5e-6 of each sample's largest value (cuFFT against KissFFT); the same
errors; a clear error when cuFFT is missing. Skipped without a device."""
import os
import subprocess
import sys

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")
pytestmark = needs_gpu

# spectrogram's gpu backend against its cpu backend: the largest difference over the largest
# value of a sample (the operator's documented tolerance; measured on an H200: about 1e-6).
SPECTRUM_RTOL = 5e-6

_RNG = np.random.default_rng(23)


def _run(samples, build, device, layout=None, batch_size=None):
    """Outputs ([output][sample] numpy arrays) and their layouts of build(x) on `device`."""
    pipe = stoker.Pipeline(batch_size=batch_size or len(samples), num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: [np.copy(s) for s in samples], layout=layout,
                               device=device)
        out = build(x)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    outs = pipe.run()
    return [[np.array(s) for s in b.as_cpu()] for b in outs], [b.layout() for b in outs]


def _both(samples, build, layout=None):
    return _run(samples, build, "cpu", layout), _run(samples, build, "gpu", layout)


def _assert_equal(cpu, gpu, what):
    (c_outs, c_lays), (g_outs, g_lays) = cpu, gpu
    assert c_lays == g_lays, what
    for k, (c, g) in enumerate(zip(c_outs, g_outs)):
        assert len(c) == len(g), what
        for i, (a, b) in enumerate(zip(c, g)):
            assert a.shape == b.shape and a.dtype == b.dtype, (what, k, i, a.shape, b.shape)
            # Bit patterns: a float's sign of zero counts too.
            assert a.tobytes() == b.tobytes(), (
                f"{what} output {k} sample {i}: max difference "
                f"{np.abs(a.astype(np.float64) - b.astype(np.float64)).max()}")


def _assert_relative(cpu, gpu, what):
    (c_outs, c_lays), (g_outs, g_lays) = cpu, gpu
    assert c_lays == g_lays, what
    for i, (a, b) in enumerate(zip(c_outs[0], g_outs[0])):
        assert a.shape == b.shape and a.dtype == b.dtype, (what, i, a.shape, b.shape)
        scale = max(float(np.abs(a).max()), 1e-30)
        err = float(np.abs(a.astype(np.float64) - b).max()) / scale
        assert err <= SPECTRUM_RTOL, f"{what} sample {i}: {err:.3g} of the largest value"


# -- spectrogram ----------------------------------------------------------------------------------
def _chirp(n, f0=0.001, f1=0.4):
    t = np.arange(n)
    return np.sin(2 * np.pi * (f0 + (f1 - f0) * t / (2 * n)) * t).astype(np.float32)


_SIGNALS = [_chirp(4000), _RNG.standard_normal(1234).astype(np.float32),
            _chirp(300, 0.05, 0.2) + 0.1 * _RNG.standard_normal(300).astype(np.float32),
            _RNG.standard_normal(70).astype(np.float32),
            np.sin(np.arange(2000) * 0.05).astype(np.float32)]


@pytest.mark.parametrize("kwargs", [
    dict(nfft=512, window_length=400, window_step=160),
    dict(window_length=256, window_step=64, power=1),
    dict(window_length=256, window_step=100, power=1),
    dict(nfft=300, window_length=255, window_step=100, layout="tf"),
    dict(nfft=64, window_length=64, window_step=16, center_windows=False),
    dict(nfft=128, window_length=100, window_step=50, reflect_padding=False),
    dict(nfft=97, window_length=64, window_step=20, reflect_padding=False),  # prime: Bluestein
    dict(nfft=97, window_length=50, window_step=25),
    dict(nfft=16, window_length=7, window_step=3, window_fn=[0.1, 0.5, 1.0, 1.0, 0.7, 0.3, 0.2]),
    dict(nfft=8, window_length=3, window_step=2, window_fn=[0.5, 1.0, 0.25]),
    dict(window_length=64, window_step=1),  # thousands of windows: several cuFFT plans
], ids=str)
def test_spectrogram_gpu_equals_cpu(kwargs):
    cpu, gpu = _both(_SIGNALS, lambda d: fn.spectrogram(d, **kwargs))
    _assert_relative(cpu, gpu, f"spectrogram {kwargs}")


def test_spectrogram_gpu_of_short_and_2d_signals_and_repeated_runs():
    x = _SIGNALS[1]
    for batch in ([x[:5], x[:1], x[:64], x[:33]],
                  [x[:40].reshape(1, 40), x[:33].reshape(33, 1), x[:500].reshape(500, 1)]):
        for layout in ("ft", "tf"):
            kw = dict(nfft=64, window_length=64, window_step=32, layout=layout)
            cpu, gpu = _both(batch, lambda d: fn.spectrogram(d, **kw))
            _assert_relative(cpu, gpu, f"short signals {layout}")
    kw = dict(nfft=64, window_length=64, window_step=32, center_windows=False)
    cpu, gpu = _both([s[:40] for s in _SIGNALS], lambda d: fn.spectrogram(d, **kw))
    _assert_relative(cpu, gpu, "one zero-padded window")
    # The operator keeps its plans: batches of other sizes through one pipeline.
    sizes = [[3000, 17, 64], [64, 64, 64], [5000, 4000, 100], [3000, 17, 64]]
    it = iter(sizes)
    kw = dict(nfft=256, window_length=200, window_step=80)
    pipe = stoker.Pipeline(batch_size=3, num_threads=2, device_id=0)
    with pipe:
        data = fn.external_source(lambda: [np.resize(_SIGNALS[0], n) for n in next(it)],
                                  device="gpu")
        pipe.set_outputs(fn.spectrogram(data, **kw))
    for n in sizes:
        (out,) = pipe.run()
        got = [np.array(s) for s in out.as_cpu()]
        (want,), _ = _run([np.resize(_SIGNALS[0], k) for k in n],
                          lambda d: fn.spectrogram(d, **kw), "cpu")
        _assert_relative(([want], []), ([got], []), f"batch {n}")


def test_spectrogram_gpu_errors_are_the_cpus():
    cases = [
        ([np.zeros(10)], dict(window_length=4), TypeError,
         "spectrogram: the signal must be float32, got float64"),
        ([np.zeros((10, 100), np.float32)], {}, ValueError,
         r"spectrogram: sample 0 must be 1-D \(or have every extent but one 1\), got \(10, 100\)"),
        ([np.zeros(5, np.float32), np.zeros(0, np.float32)], dict(window_length=4), ValueError,
         "spectrogram: sample 1 is empty"),
        ([np.zeros(20, np.float32)], dict(window_length=64, window_step=32, center_windows=False),
         ValueError, r"spectrogram: sample 0 has 20 values, too few for one window of 64 "
                     r"\(center_windows=False\)"),
        ([np.zeros(100, np.float32)], dict(nfft=32, window_length=64), ValueError,
         r"spectrogram: window_length \(64\) must not be larger than nfft \(32\)"),
    ]
    for data, kwargs, kind, message in cases:
        with pytest.raises(kind, match=message):
            _run(data, lambda d: fn.spectrogram(d, **kwargs), "gpu")


def test_spectrogram_gpu_without_cufft_says_so():
    code = """
import numpy as np
import stoker
from stoker import fn
pipe = stoker.Pipeline(batch_size=1, num_threads=1, device_id=0)
with pipe:
    x = fn.external_source(lambda: [np.zeros(100, np.float32)], device="gpu")
    pipe.set_outputs(fn.spectrogram(x, window_length=16, window_step=8))
try:
    pipe.run()
except RuntimeError as e:
    print(str(e))
"""
    env = dict(os.environ, STOKER_DISABLE_CUFFT="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert ("spectrogram (gpu): cuFFT cannot be used: disabled by STOKER_DISABLE_CUFFT"
            in r.stdout), r.stdout


# -- audio_resample -------------------------------------------------------------------------------
def _signal(n, c, dtype):
    x = _RNG.standard_normal((n, c) if c else (n,)) * 0.4
    if dtype == np.float32:
        return x.astype(np.float32)
    info = np.iinfo(dtype)
    if info.min == 0:
        return ((np.clip(x, -1, 1) + 1) / 2 * info.max).astype(dtype)
    return (np.clip(x, -1, 1) * info.max).astype(dtype)


RESAMPLE_CASES = [dict(scale=1.0), dict(scale=1.37), dict(scale=0.31, quality=0.0),
                  dict(in_rate=44100.0, out_rate=16000.0, quality=100.0),
                  dict(in_rate=16000.0, out_rate=22050.0), dict(scale=2.5, quality=75.0),
                  dict(out_length=500), dict(scale=0.0)]


_OUT_TYPES = (None, types.FLOAT, types.INT16, types.UINT8, types.INT32, types.UINT32, types.INT8,
              types.UINT16)


@pytest.mark.parametrize("in_type", [np.float32, np.int16, np.uint8, np.int8, np.uint16,
                                     np.int32, np.uint32], ids=lambda t: t.__name__)
def test_audio_resample_gpu_equals_cpu_bit_for_bit(in_type):
    mono = [_signal(n, 0, in_type) for n in (1000, 777, 10, 1, 3000, 3)]
    multi = [_signal(n, c, in_type) for n, c in ((1000, 2), (777, 3), (10, 1), (600, 9),
                                                   (300, 17), (50, 40))]
    for batch, layout in ((mono, "t"), (multi, "tc")):
        for case in RESAMPLE_CASES:
            # Every output type at once: one pipeline, an output per type.
            cpu, gpu = _both(batch, lambda d: tuple(
                fn.audio_resample(d, **case, **({"dtype": t} if t is not None else {}))
                for t in _OUT_TYPES), layout)
            _assert_equal(cpu, gpu, f"{in_type.__name__} {layout} {case}")


def test_audio_resample_gpu_empty_signals_and_the_old_name():
    batch = [np.zeros(0, np.float32), _signal(100, 0, np.float32), np.zeros(0, np.float32)]
    cpu, gpu = _both(batch, lambda d: fn.audio_resample(d, scale=1.5))
    _assert_equal(cpu, gpu, "empty signals")
    assert [a.shape for a in gpu[0][0]] == [(0,), (150,), (0,)]
    with pytest.warns(DeprecationWarning, match="audio_resample"):
        cpu, gpu = _both(batch, lambda d: fn.experimental.audio_resample(
            d, in_rate=16000.0, out_rate=8000.0, dtype=types.INT16))
    _assert_equal(cpu, gpu, "experimental.audio_resample")


def test_audio_resample_gpu_per_sample_arguments():
    batch = [_signal(n, 2, np.float32) for n in (500, 301, 64)]

    def outputs(device):
        pipe = stoker.Pipeline(batch_size=3, num_threads=2, device_id=0)
        with pipe:
            x = fn.external_source(lambda: batch, layout="tc", device=device)
            rates = fn.external_source(lambda: [np.float32(v) for v in (8000, 11025, 48000)])
            lengths = fn.external_source(lambda: [np.int64(v) for v in (123, 700, 64)])
            scales = fn.external_source(lambda: [np.float32(v) for v in (0.5, 1.9, 3.3)])
            pipe.set_outputs(fn.audio_resample(x, in_rate=16000.0, out_rate=rates),
                             fn.audio_resample(x, out_length=lengths, dtype=types.INT16),
                             fn.audio_resample(x, scale=scales, quality=10.0))
        return [[np.array(s) for s in b.as_cpu()] for b in pipe.run()], [""] * 3

    _assert_equal(outputs("cpu"), outputs("gpu"), "per-sample arguments")


def test_audio_resample_gpu_errors_are_the_cpus():
    x = [np.zeros(10, np.float32)]
    cases = [
        (x, dict(scale=2.0, quality=101.0), ValueError,
         r"audio_resample: quality must be in \[0, 100\], got 101"),
        ([np.zeros(10)], dict(scale=2.0), TypeError,
         "audio_resample: the input must be int8, uint8, int16, uint16, int32, uint32 or "
         "float32, got float64"),
        ([np.zeros((2, 2, 2), np.float32)], dict(scale=2.0), ValueError,
         r"audio_resample: expected a signal of shape \(samples\) or \(samples, channels\), got "
         r"3 dimensions"),
        ([np.zeros(0, np.float32)], dict(out_length=3), ValueError,
         "audio_resample: cannot make a signal of 3 samples from an empty input"),
        (x, dict(scale=-1.0), ValueError, "audio_resample: scale must be non-negative, got -1"),
    ]
    for data, kwargs, kind, message in cases:
        with pytest.raises(kind, match=message):
            _run(data, lambda d: fn.audio_resample(d, **kwargs), "gpu")


# -- nonsilent_region -----------------------------------------------------------------------------
def _silence_around(n, lo, hi, amp=1.0, noise=1e-4):
    x = (_RNG.standard_normal(n) * noise).astype(np.float32)
    x[lo:hi] += (amp * np.sin(np.arange(hi - lo) * 0.3)).astype(np.float32)
    return x


_NONSILENT = [_silence_around(10000, 3000, 6000), _silence_around(10000, 0, 6000),
              _silence_around(20000, 1500, 2500), _silence_around(20000, 9000, 9300),
              _silence_around(5000, 100, 200), _silence_around(70000, 1000, 60000, noise=0.1),
              np.zeros(100, np.float32), _silence_around(500, 100, 200),
              np.zeros(0, np.float32), _silence_around(30, 10, 20),
              np.array([1.0, np.nan, 2.0], np.float32)]


@pytest.mark.parametrize("kwargs", [
    dict(), dict(window_length=128), dict(window_length=256, cutoff_db=-30),
    dict(window_length=50, reset_interval=100), dict(window_length=64, reference_power=0.001),
    dict(window_length=64, reference_power=1e6), dict(window_length=8192),
    dict(window_length=16, reset_interval=-1), dict(window_length=128, reference_power=0.1),
    dict(window_length=64, cutoff_db=-20),
    # Thresholds below the float drift a loud passage leaves: the running sum's order and its
    # restarts decide the region's end.
    dict(window_length=64, reference_power=0.001, reset_interval=1024),
    dict(window_length=64, reference_power=0.001, reset_interval=-1)], ids=str)
def test_nonsilent_region_gpu_equals_cpu(kwargs):
    cpu, gpu = _both(_NONSILENT, lambda d: tuple(fn.nonsilent_region(d, **kwargs)))
    _assert_equal(cpu, gpu, f"nonsilent_region {kwargs}")
    assert gpu[1] == ["", ""] and gpu[0][0][0].dtype == np.int32 and gpu[0][0][0].shape == ()


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.int8, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64], ids=lambda t: t.__name__)
def test_nonsilent_region_gpu_of_integer_signals_equals_cpu(dtype):
    info = np.iinfo(dtype)
    scale = min(1000.0, info.max / 4)
    offset = 0.0 if info.min < 0 else scale * 2
    data = [(_silence_around(3000, 1000, 2000) * scale + offset).astype(dtype),
            (_silence_around(20000, 500, 15000, noise=0.05) * scale + offset).astype(dtype),
            np.zeros(0, dtype)]
    for kwargs in (dict(window_length=64, cutoff_db=-1 if offset else -60),
                   dict(window_length=10, reset_interval=100),
                   dict(window_length=2048, reset_interval=-1, reference_power=100.0)):
        cpu, gpu = _both(data, lambda d: tuple(fn.nonsilent_region(d, **kwargs)))
        _assert_equal(cpu, gpu, f"nonsilent_region {dtype.__name__} {kwargs}")


def test_nonsilent_region_gpu_errors_are_the_cpus():
    with pytest.raises(ValueError, match=r"nonsilent_region: reset_interval \(100\) must be a "
                                         r"multiple of window_length \(30\)"):
        _run([np.zeros(50, np.float32)],
             lambda d: fn.nonsilent_region(d, window_length=30, reset_interval=100), "gpu")
    with pytest.raises(ValueError, match=r"nonsilent_region: sample 0 must be 1-D, got \(3, 4\)"):
        _run([np.zeros((3, 4), np.float32)], lambda d: fn.nonsilent_region(d), "gpu")
    with pytest.raises(TypeError, match="nonsilent_region input: unsupported dtype float64"):
        _run([np.zeros(4)], lambda d: fn.nonsilent_region(d), "gpu")
