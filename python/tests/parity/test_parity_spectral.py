"""The spectral and signal operators against DALI 2.4 on the CPU: synthetic float signals (chirps,
noise, silence around tones), every argument that changes the computation. The FFTs differ
(KissFFT against DALI's FFTS, both in float): spectrogram and power_spectrum agree within float
rounding relative to each sample's largest bin; everything computed without an FFT matches bit
for bit on the same inputs."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "preemphasis_filter": "exact: every border, per-sample coefficients, integer and float "
                          "types in and out (gpu backend too, against DALI's cpu one)",
    "spectrogram": "tolerance: 2e-6 of each sample's largest bin (KissFFT vs FFTS, float); the "
                   "gpu backend (cuFFT) 5e-6, against DALI's cpu and gpu backends",
    "power_spectrum": "tolerance: 2e-6 of each sample's largest bin (KissFFT vs FFTS, float)",
    "mel_filter_bank": "exact: slaney and htk, normalised or not, ft/tf/f and 3-D layouts "
                       "(gpu backend too, against DALI's cpu one)",
    "to_decibels": "exact: the cpu backend; the gpu backend within 2 ulp (log2 in double)",
    "mfcc": "exact: DCT types 1 to 4, orthonormal, lifter, any axis (gpu backend too, "
            "against DALI's cpu one)",
    "nonsilent_region": "exact: float and integer signals, reset intervals, references (gpu "
                        "backend too, against DALI's cpu one, and its gpu one on exact sums)",
}

def _have_fft():
    """Whether this stoker has KissFFT (spectrogram's and power_spectrum's FFT: optional)."""
    try:
        run("stoker", lambda fn, types: fn.power_spectrum(fn.constant(fdata=[1.0, 2.0])), 1)
    except RuntimeError as e:
        if "built without KissFFT" in str(e):
            return False
        raise
    return True


needs_fft = pytest.mark.skipif(not _have_fft(), reason="this stoker was built without KissFFT")
_RNG = np.random.default_rng(21)


def _chirp(n, f0=0.001, f1=0.4, amp=1.0):
    t = np.arange(n)
    return (amp * np.sin(2 * np.pi * (f0 + (f1 - f0) * t / (2 * n)) * t)).astype(np.float32)


def _signals():
    return [_chirp(4000), _RNG.standard_normal(1234).astype(np.float32),
            _chirp(300, 0.05, 0.2) + 0.1 * _RNG.standard_normal(300).astype(np.float32),
            _RNG.standard_normal(70).astype(np.float32)]


_SIGNALS = _signals()


def _feed(fn, samples, layout=None):
    return fn.external_source(source=lambda: [s.copy() for s in samples], batch=True,
                              layout=layout)


def _relative(ours, theirs, rtol, what):
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, (what, i, a.shape, b.shape)
        scale = max(float(np.abs(b).max()), 1e-30)
        err = float(np.abs(a.astype(np.float64) - b).max()) / scale
        assert err <= rtol, f"{what} sample {i}: {err:.3g} of the largest bin"


@needs_fft
@pytest.mark.parametrize("kwargs", [
    dict(nfft=512, window_length=400, window_step=160),
    dict(window_length=256, window_step=64, power=1),
    dict(nfft=300, window_length=255, window_step=100, layout="tf"),
    dict(nfft=64, window_length=64, window_step=16, center_windows=False),
    dict(nfft=128, window_length=100, window_step=50, reflect_padding=False),
    dict(nfft=97, window_length=50, window_step=25),  # a prime FFT size (Bluestein)
    dict(nfft=16, window_length=7, window_step=3, window_fn=[0.1, 0.5, 1.0, 1.0, 0.7, 0.3, 0.2]),
], ids=str)
def test_spectrogram_equals_dali(kwargs):
    out = run_both(lambda fn, types: fn.spectrogram(_feed(fn, _SIGNALS), **kwargs), 4)
    _relative(out["stoker"][0][0], out["dali"][0][0], 2e-6, f"spectrogram {kwargs}")


@needs_fft
def test_spectrogram_of_short_and_2d_signals_equals_dali():
    for short in ([_SIGNALS[0][:5], _SIGNALS[1][:1], _SIGNALS[2][:64]],
                  [_SIGNALS[1][:40].reshape(1, 40), _SIGNALS[2][:33].reshape(33, 1)]):
        out = run_both(lambda fn, types: fn.spectrogram(_feed(fn, short), nfft=64,
                                                        window_length=64, window_step=32),
                       len(short))
        _relative(out["stoker"][0][0], out["dali"][0][0], 2e-6, "short signals")
    out = run_both(lambda fn, types: fn.spectrogram(
        _feed(fn, [s[:40] for s in _SIGNALS]), nfft=64, window_length=64, window_step=32,
        center_windows=False), 4)
    _relative(out["stoker"][0][0], out["dali"][0][0], 2e-6, "one zero-padded window")


@needs_fft
@pytest.mark.parametrize("kwargs", [dict(), dict(nfft=64), dict(nfft=20, power=1), dict(axis=0),
                                    dict(axis=0, nfft=7), dict(nfft=101)], ids=str)
def test_power_spectrum_equals_dali(kwargs):
    data = [_RNG.standard_normal((3, 40)).astype(np.float32),
            _RNG.standard_normal((5, 17)).astype(np.float32)]
    out = run_both(lambda fn, types: fn.power_spectrum(_feed(fn, data, "ab"), **kwargs), 2)
    _relative(out["stoker"][0][0], out["dali"][0][0], 2e-6, f"power_spectrum {kwargs}")
    data3 = [_RNG.standard_normal((2, 3, 30)).astype(np.float32)]
    out = run_both(lambda fn, types: fn.power_spectrum(_feed(fn, data3)), 1)
    _relative(out["stoker"][0][0], out["dali"][0][0], 2e-6, "power_spectrum 3-D")


def _spectra(bins=129, windows=(7, 1, 12)):
    return [(_RNG.random((bins, w)) ** 3).astype(np.float32) for w in windows]


@pytest.mark.parametrize("kwargs", [
    dict(nfilter=40, sample_rate=16000),
    dict(nfilter=40, sample_rate=16000, mel_formula="htk"),
    dict(nfilter=20, sample_rate=8000, normalize=False),
    dict(nfilter=8, sample_rate=22050, freq_low=300, freq_high=5000),
    dict(nfilter=64, sample_rate=16000, freq_high=8000, mel_formula="htk", normalize=False),
    dict(),
], ids=str)
@pytest.mark.parametrize("layout", ["ft", "tf", "", "f"])
def test_mel_filter_bank_equals_dali(kwargs, layout):
    data = _spectra()
    if layout == "tf":
        data = [d.T.copy() for d in data]
    elif layout == "f":
        data = [d[:, 0].copy() for d in data]
    out = run_both(lambda fn, types: fn.mel_filter_bank(_feed(fn, data, layout or None), **kwargs),
                   3)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what=f"mel_filter_bank {layout}")


def test_mel_filter_bank_of_3d_spectrograms_equals_dali():
    for layout, shape in [("cft", (2, 65, 9)), ("tfc", (9, 65, 2)), ("", (2, 65, 9))]:
        data = [_RNG.random(shape).astype(np.float32)]
        out = run_both(lambda fn, types: fn.mel_filter_bank(_feed(fn, data, layout or None),
                                                            nfilter=16, sample_rate=16000), 1)
        assert_same(out["stoker"][0][0], out["dali"][0][0], what=f"mel_filter_bank {layout}")


@pytest.mark.parametrize("kwargs", [dict(), dict(multiplier=20.0), dict(reference=0.5),
                                    dict(cutoff_db=-80), dict(cutoff_db=-20, multiplier=20,
                                                              reference=2.0)], ids=str)
def test_to_decibels_equals_dali(kwargs):
    data = [d.ravel() for d in _spectra()] + [np.zeros(5, np.float32),
                                              np.array([np.nan, 1, 2], np.float32)]
    out = run_both(lambda fn, types: fn.to_decibels(_feed(fn, data), **kwargs), 5)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what=f"to_decibels {kwargs}")


@pytest.mark.parametrize("kwargs", [
    dict(), dict(n_mfcc=5), dict(dct_type=1), dict(dct_type=3, n_mfcc=4), dict(dct_type=4),
    dict(normalize=True), dict(normalize=True, dct_type=3), dict(normalize=True, dct_type=4),
    dict(lifter=22.0), dict(axis=1, n_mfcc=3), dict(lifter=3.0, n_mfcc=8, dct_type=4),
    dict(n_mfcc=100)], ids=str)
def test_mfcc_equals_dali(kwargs):
    data = [_RNG.standard_normal((40, 7)).astype(np.float32),
            _RNG.standard_normal((12, 3)).astype(np.float32)]
    out = run_both(lambda fn, types: fn.mfcc(_feed(fn, data, "ft"), **kwargs), 2)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what=f"mfcc {kwargs}")
    data = [_RNG.standard_normal((2, 20, 5)).astype(np.float32)]
    out = run_both(lambda fn, types: fn.mfcc(_feed(fn, data), axis=1), 1)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="mfcc 3-D")


def _silence_around(n, lo, hi, amp=1.0, noise=1e-4):
    x = (_RNG.standard_normal(n) * noise).astype(np.float32)
    x[lo:hi] += (amp * np.sin(np.arange(hi - lo) * 0.3)).astype(np.float32)
    return x


@pytest.mark.parametrize("kwargs", [
    dict(), dict(window_length=128), dict(window_length=256, cutoff_db=-30),
    dict(window_length=50, reset_interval=100), dict(window_length=64, reference_power=0.001),
    dict(window_length=64, reference_power=1e6), dict(window_length=8192),
    dict(window_length=16, reset_interval=-1),
    # Thresholds below the float drift a loud passage leaves: the running sum's order and its
    # restarts decide the region's end.
    dict(window_length=64, reference_power=0.001, reset_interval=1024),
    dict(window_length=64, reference_power=0.001, reset_interval=-1)], ids=str)
def test_nonsilent_region_equals_dali(kwargs):
    data = [_silence_around(10000, 3000, 6000), _silence_around(10000, 0, 6000),
            _silence_around(20000, 1500, 2500), _silence_around(20000, 9000, 9300),
            _silence_around(5000, 100, 200), _silence_around(70000, 1000, 60000, noise=0.1),
            np.zeros(100, np.float32), _silence_around(500, 100, 200)]
    out = run_both(lambda fn, types: tuple(fn.nonsilent_region(_feed(fn, data), **kwargs)), 8)
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"nonsilent_region {kwargs}")


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.uint8, np.int64])
def test_nonsilent_region_of_integer_signals_equals_dali(dtype):
    scale, offset = (100, 100) if dtype == np.uint8 else (1000, 0)
    data = [(_silence_around(3000, 1000, 2000) * scale + offset).astype(dtype)]
    out = run_both(lambda fn, types: tuple(fn.nonsilent_region(
        _feed(fn, data), window_length=64, cutoff_db=-1 if offset else -60)), 1)
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"nonsilent_region {dtype}")


_PREEMPH_TYPES = [np.uint8, np.int16, np.int32, np.uint64, np.float32, np.float64]


@pytest.mark.parametrize("border", ["clamp", "reflect", "zero"])
@pytest.mark.parametrize("in_type", _PREEMPH_TYPES, ids=lambda t: t.__name__)
def test_preemphasis_filter_equals_dali(border, in_type):
    hi = 250 if in_type in (np.uint8, np.uint64) else 3000
    lo = 0 if in_type in (np.uint8, np.uint64) else -3000
    data = [_RNG.integers(lo, hi, size=n).astype(in_type) for n in (50, 2, 17, 6)]
    coeffs = [np.float32(c) for c in (0.97, 0.5, 0.0, -0.3)]

    def define(fn, types):
        x = _feed(fn, data)
        c = fn.external_source(source=lambda: coeffs, batch=True)
        return tuple(fn.preemphasis_filter(x, border=border, preemph_coeff=c, dtype=t)
                     for t in (types.FLOAT, types.INT16, types.UINT8, types.FLOAT64))
    out = run_both(define, 4)
    for k in range(4):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"preemphasis output {k}")


# -- gpu backends of preemphasis_filter, mel_filter_bank, to_decibels and mfcc ------------------
# stoker's gpu backends compute as its cpu ones (test_spectral_gpu.py), so they are held to
# DALI's cpu backend bit for bit (to_decibels: within 2 ulp, its logarithm being taken in double).
# DALI's gpu backends fuse products into sums (and preemphasis_filter's truncates integer
# outputs: docs/dali_differences.md), so against them the float outputs agree within rounding.

def _on_gpu(define_on, batch_size):
    """{"stoker": ours on the GPU, "dali": DALI on the GPU, "dali_cpu": DALI on the CPU}, each
    the first iteration's outputs; define_on(fn, types, gpu) builds the pipeline."""
    from parity_util import has_gpu, run_both_or_skip
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    out = run_both_or_skip(lambda fn, types: define_on(fn, types, True), batch_size,
                           device_id=0)
    cpu = run("dali", lambda fn, types: define_on(fn, types, False), batch_size)
    return {"stoker": out["stoker"][0], "dali": out["dali"][0], "dali_cpu": cpu[0]}


def _ulps32(a, b):
    def key(x):
        i = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-2**31) - i, i)
    return np.abs(key(a) - key(b))


@pytest.mark.parametrize("border", ["clamp", "reflect", "zero"])
@pytest.mark.parametrize("in_type", [np.int16, np.uint8, np.float32, np.float64],
                         ids=lambda t: t.__name__)
def test_preemphasis_filter_gpu_equals_dali(border, in_type):
    lo, hi = (0, 250) if in_type == np.uint8 else (-3000, 3000)
    data = [_RNG.integers(lo, hi, size=n).astype(in_type) for n in (50, 2, 17, 6)]
    coeffs = [np.float32(c) for c in (0.97, 0.5, 0.0, -0.3)]
    out_types = ("FLOAT", "INT16", "UINT8", "FLOAT64")

    def define(fn, types, gpu):
        x = _feed(fn, data)
        c = fn.external_source(source=lambda: coeffs, batch=True)
        return tuple(fn.preemphasis_filter(x.gpu() if gpu else x, border=border,
                                           preemph_coeff=c, dtype=getattr(types, t))
                     for t in out_types)
    out = _on_gpu(define, 4)
    for k, t in enumerate(out_types):
        assert_same(out["stoker"][k], out["dali_cpu"][k], what=f"preemphasis {t} (gpu vs cpu)")
        if t.startswith("FLOAT"):
            _relative(out["stoker"][k], out["dali"][k], 1e-6, f"preemphasis {t} (gpu)")


@pytest.mark.parametrize("kwargs", [
    dict(nfilter=40, sample_rate=16000), dict(nfilter=40, sample_rate=16000, mel_formula="htk"),
    dict(nfilter=8, sample_rate=22050, freq_low=300, freq_high=5000, normalize=False)], ids=str)
@pytest.mark.parametrize("layout", ["ft", "tf"])
def test_mel_filter_bank_gpu_equals_dali(kwargs, layout):
    data = _spectra()  # one spectrum size: DALI's gpu backend takes no other
    if layout == "tf":
        data = [d.T.copy() for d in data]

    def define(fn, types, gpu):
        x = _feed(fn, data, layout)
        return fn.mel_filter_bank(x.gpu() if gpu else x, **kwargs)
    out = _on_gpu(define, 3)
    assert_same(out["stoker"][0], out["dali_cpu"][0], what=f"mel_filter_bank {layout} (gpu)")
    _relative(out["stoker"][0], out["dali"][0], 1e-5, f"mel_filter_bank {layout} (gpu)")


@pytest.mark.parametrize("kwargs", [dict(), dict(multiplier=20.0), dict(reference=0.5),
                                    dict(cutoff_db=-20, multiplier=20, reference=2.0)], ids=str)
def test_to_decibels_gpu_equals_dali(kwargs):
    data = [d.ravel() for d in _spectra()] + [np.zeros(5, np.float32)]

    def define(fn, types, gpu):
        x = _feed(fn, data)
        return fn.to_decibels(x.gpu() if gpu else x, **kwargs)
    out = _on_gpu(define, 4)
    for i, (ours, cpu, gpu) in enumerate(zip(out["stoker"][0], out["dali_cpu"][0],
                                             out["dali"][0])):
        assert ours.shape == cpu.shape == gpu.shape and ours.dtype == cpu.dtype
        assert _ulps32(ours, cpu).max() <= 2, f"to_decibels {kwargs} sample {i} (vs DALI's cpu)"
        if cpu.max() > -200:  # DALI's gpu backend is not held to its value for silence
            assert _ulps32(ours, gpu).max() <= 4, f"to_decibels {kwargs} sample {i} (vs DALI's gpu)"


@pytest.mark.parametrize("kwargs", [
    dict(), dict(dct_type=1), dict(dct_type=3, n_mfcc=4), dict(normalize=True, dct_type=4),
    dict(lifter=22.0), dict(axis=1, n_mfcc=3)], ids=str)
def test_mfcc_gpu_equals_dali(kwargs):
    data = [_RNG.standard_normal((40, 7)).astype(np.float32),
            _RNG.standard_normal((40, 3)).astype(np.float32)]

    def define(fn, types, gpu):
        x = _feed(fn, data, "ft")
        return fn.mfcc(x.gpu() if gpu else x, **kwargs)
    out = _on_gpu(define, 2)
    assert_same(out["stoker"][0], out["dali_cpu"][0], what=f"mfcc {kwargs} (gpu)")
    _relative(out["stoker"][0], out["dali"][0], 1e-5, f"mfcc {kwargs} (gpu)")


# -- gpu backends of spectrogram and nonsilent_region ---------------------------------------------
# spectrogram's gpu backend takes its FFTs with cuFFT (test_signal_gpu.py: within 5e-6 of its cpu
# backend), so it is held to DALI's cpu (FFTS) and gpu (cuFFT) backends within 5e-6 of each
# sample's largest bin. nonsilent_region's gpu backend computes as its cpu one, so it is held to
# DALI's cpu backend bit for bit; DALI's gpu backend sums the powers in a float prefix scan (other
# roundings), so against it the signals are square bursts in digital silence, whose powers are
# exact in float, starting more than a window in.

@pytest.mark.parametrize("kwargs", [
    dict(nfft=512, window_length=400, window_step=160),
    dict(window_length=256, window_step=64, power=1),
    dict(nfft=300, window_length=255, window_step=100, layout="tf"),
    dict(nfft=64, window_length=64, window_step=16, center_windows=False),
    dict(nfft=128, window_length=100, window_step=50, reflect_padding=False),
    dict(nfft=97, window_length=50, window_step=25)], ids=str)
def test_spectrogram_gpu_equals_dali(kwargs):
    def define(fn, types, gpu):
        x = _feed(fn, _SIGNALS)
        return fn.spectrogram(x.gpu() if gpu else x, **kwargs)
    out = _on_gpu(define, 4)
    _relative(out["stoker"][0], out["dali_cpu"][0], 5e-6, f"spectrogram {kwargs} (gpu vs cpu)")
    _relative(out["stoker"][0], out["dali"][0], 5e-6, f"spectrogram {kwargs} (gpu)")


def _square_bursts(n, spans, amp, dtype):
    x = np.zeros(n, np.float64)
    for lo, hi in spans:
        x[lo:hi] = amp * (1 - 2 * (np.arange(hi - lo) % 2))
    return x.astype(dtype)


@pytest.mark.parametrize("kwargs", [
    dict(), dict(window_length=128), dict(window_length=256, cutoff_db=-30),
    dict(window_length=64, reference_power=0.001), dict(window_length=50, reset_interval=100)],
    ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int16], ids=lambda t: t.__name__)
def test_nonsilent_region_gpu_equals_dali(kwargs, dtype):
    amp = 0.5 if dtype == np.float32 else 2000
    data = [_square_bursts(12000, [(4000, 7000)], amp, dtype),
            _square_bursts(20000, [(9000, 9300)], amp, dtype),
            _square_bursts(12000, [(5000, 5300), (8000, 8100)], amp / 2, dtype)]

    def define(fn, types, gpu):
        x = _feed(fn, data)
        return tuple(fn.nonsilent_region(x.gpu() if gpu else x, **kwargs))
    out = _on_gpu(define, 3)
    for k in range(2):
        assert_same(out["stoker"][k], out["dali_cpu"][k], what=f"nonsilent_region {kwargs} (gpu "
                                                                f"vs cpu)")
        assert_same(out["stoker"][k], out["dali"][k], what=f"nonsilent_region {kwargs} (gpu)")
