"""The spectral and signal operators (preemphasis_filter, spectrogram, power_spectrum,
mel_filter_bank, to_decibels, mfcc, nonsilent_region) through Python: values against references
written here from the formulas (numpy's FFT, the triangles of the mel scale, the DCT sums, the
windowed mean square), per-sample coefficients, shapes, dtypes and layouts, and every error's
text."""
import numpy as np
import pytest

import stoker
from stoker import fn, types

_RNG = np.random.default_rng(17)


def _have_fft():
    """Whether this build has KissFFT (spectrogram's and power_spectrum's FFT: optional)."""
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.power_spectrum(fn.constant(fdata=[1.0, 2.0])))
    try:
        pipe.run()
    except RuntimeError as e:
        if "built without KissFFT" in str(e):
            return False
        raise
    return True


needs_fft = pytest.mark.skipif(not _have_fft(), reason="this stoker was built without KissFFT")


def _run(samples, build, layout=None, batch=None):
    pipe = stoker.Pipeline(batch_size=batch or len(samples), num_threads=2, seed=1,
                           device_id=None)
    with pipe:
        x = fn.external_source(lambda: [s.copy() for s in samples], layout=layout)
        out = build(x)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    outs = pipe.run()
    return [[np.array(b.at(i)) for i in range(len(b))] for b in outs], [b.layout() for b in outs]


def _one(samples, build, layout=None):
    (out,), (lay,) = _run(samples, build, layout)
    return out, lay


# -- preemphasis_filter -------------------------------------------------------------------------
def _preemph(x, c, border):
    x = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    c = np.asarray(c, x.dtype)
    edge = {"zero": 0, "clamp": x[0], "reflect": x[1] if len(x) > 1 else x[0]}[border]
    prev = np.concatenate([[edge], x[:-1]]).astype(x.dtype)
    return x - c * prev


@pytest.mark.parametrize("border", ["clamp", "reflect", "zero"])
def test_preemphasis_is_the_recurrence(border):
    x = [_RNG.standard_normal(n).astype(np.float32) for n in (30, 2, 1)]
    out, lay = _one(x, lambda d: fn.preemphasis_filter(d, border=border, preemph_coeff=0.9))
    for a, g in zip(x, out):
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, _preemph(a, 0.9, border))


def test_preemphasis_per_sample_coefficients_dtypes_and_layout():
    x = [np.array([1, 3, -1, -4], np.int32)] * 3
    coeffs = [np.float32(0.5), np.float32(0.0), np.float32(2.0)]

    def build(d):
        c = fn.external_source(lambda: coeffs)
        return (fn.preemphasis_filter(d, preemph_coeff=c, dtype=types.INT32),
                fn.preemphasis_filter(d, preemph_coeff=c, dtype=types.UINT8),
                fn.preemphasis_filter(fn.reshape(d, shape=[2, 2], layout="ab")))
    (i32, u8, f32), lays = _run(x, build)
    # Halves round away from zero; uint8 saturates; coeff 0 converts as it is.
    np.testing.assert_array_equal(i32[0], [1, 3, -3, -4])
    np.testing.assert_array_equal(i32[1], [1, 3, -1, -4])
    np.testing.assert_array_equal(i32[2], [-1, 1, -7, -2])
    np.testing.assert_array_equal(u8[0], [1, 3, 0, 0])
    assert f32[0].shape == (2, 2) and f32[0].dtype == np.float32 and lays[2] == "ab"
    np.testing.assert_allclose(f32[0].ravel(), _preemph(x[0], 0.97, "clamp"), rtol=1e-6)


def test_preemphasis_of_float64_is_in_double_and_empty_samples_are_empty():
    x = [np.array([1e10 + 1, 3.3, 7.7]), np.zeros(0)]
    out, _ = _one(x, lambda d: fn.preemphasis_filter(d, dtype=types.FLOAT64))
    np.testing.assert_array_equal(out[0], _preemph(x[0], np.float32(0.97), "clamp"))
    assert out[1].shape == (0,)


def test_preemphasis_errors():
    x = [np.zeros(3, np.float32)]
    with pytest.raises(ValueError,
                       match="preemphasis_filter: border must be 'zero', 'clamp' or 'reflect', "
                             "got 'wrap'"):
        _one(x, lambda d: fn.preemphasis_filter(d, border="wrap"))
    with pytest.raises(TypeError, match="preemphasis_filter output: unsupported dtype float16"):
        _one(x, lambda d: fn.preemphasis_filter(d, dtype=types.FLOAT16))
    with pytest.raises(TypeError, match="preemphasis_filter input: unsupported dtype bool"):
        _one([np.zeros(3, bool)], lambda d: fn.preemphasis_filter(d))


# -- spectrogram and power_spectrum -------------------------------------------------------------
def _hann(n):
    return (0.5 * (1 - np.cos(2 * np.pi * (np.arange(n) + 0.5) / n))).astype(np.float32)


def _stft(x, nfft, wl, step, power=2, center=True, reflect=True, window=None):
    window = _hann(wl) if window is None else np.asarray(window, np.float32)
    n = len(x)
    if center:
        count, start0 = n // step + 1, -(wl // 2)
        padded = np.pad(x.astype(np.float64), wl, mode="reflect" if reflect else "constant")
    else:
        count, start0 = int((n - wl) / step) + 1, 0
        padded = np.pad(x.astype(np.float64), wl)
    frames = [padded[wl + start0 + w * step: wl + start0 + w * step + wl] * window
              for w in range(count)]
    spec = np.abs(np.fft.rfft(np.array(frames), nfft, axis=1))
    return (spec ** 2 if power == 2 else spec).T


def _assert_relative(got, want, rtol=2e-6):
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.abs(got - want).max() <= rtol * np.abs(want).max()


@needs_fft
@pytest.mark.parametrize("kwargs", [
    dict(nfft=512, window_length=400, window_step=160),
    dict(window_length=256, window_step=100, power=1),
    dict(nfft=97, window_length=64, window_step=20, reflect_padding=False),
    dict(nfft=64, window_length=64, window_step=16, center_windows=False),
    dict(nfft=8, window_length=3, window_step=2, window_fn=[0.5, 1.0, 0.25]),
], ids=str)
def test_spectrogram_is_the_windowed_fft(kwargs):
    x = [np.sin(np.arange(n) * 0.05 * (1 + np.arange(n) / n)).astype(np.float32)
         for n in (2000, 333)]
    out, lay = _one(x, lambda d: fn.spectrogram(d, **kwargs))
    assert lay == "ft"
    wl = kwargs.get("window_length", 512)
    for a, g in zip(x, out):
        want = _stft(a, kwargs.get("nfft", wl), wl, kwargs["window_step"], kwargs.get("power", 2),
                     kwargs.get("center_windows", True), kwargs.get("reflect_padding", True),
                     kwargs.get("window_fn"))
        assert g.dtype == np.float32
        _assert_relative(g, want)


@needs_fft
def test_spectrogram_time_major_and_degenerate_shapes():
    x = _RNG.standard_normal(500).astype(np.float32)
    (ft,), _ = _one([x], lambda d: fn.spectrogram(d, nfft=64, window_length=64, window_step=32))
    for shaped in (x.reshape(1, 500), x.reshape(500, 1)):
        (tf,), lay = _one([shaped], lambda d: fn.spectrogram(d, nfft=64, window_length=64,
                                                             window_step=32, layout="tf"))
        assert lay == "tf"
        np.testing.assert_array_equal(tf, ft.T)
    # A signal shorter than half a window is mirrored many times over; one sample repeats.
    for n in (5, 1):
        (g,), _ = _one([x[:n]], lambda d: fn.spectrogram(d, nfft=64, window_length=64,
                                                         window_step=32))
        assert g.shape == (33, 1)
        frame = x[[_reflect_101(i, n) for i in range(-32, 32)]]
        _assert_relative(g[:, 0], np.abs(np.fft.rfft(frame * _hann(64), 64)) ** 2)


def _reflect_101(i, n):
    """Index i of a signal of n samples mirrored about its end samples."""
    if n == 1:
        return 0
    while not 0 <= i < n:
        i = -i if i < 0 else 2 * n - 2 - i
    return i


def test_spectrogram_errors():
    x = [np.zeros(100, np.float32)]
    cases = [
        (dict(window_length=0), "spectrogram: window_length must be positive, got 0"),
        (dict(window_step=0), "spectrogram: window_step must be positive, got 0"),
        (dict(nfft=32, window_length=64), r"spectrogram: window_length \(64\) must not be larger "
                                          r"than nfft \(32\)"),
        (dict(power=3), r"spectrogram: power must be 1 \(magnitude\) or 2 \(power\), got 3"),
        (dict(layout="tt"), "spectrogram: layout must be 'ft' or 'tf', got 'tt'"),
        (dict(window_length=4, window_fn=[1.0, 2.0]),
         r"spectrogram: window_fn must hold window_length \(4\) values, got 2"),
        (dict(nfft=2**20 + 1), "spectrogram: nfft must be at most 1048576, got 1048577"),
        (dict(window_length=2**30), r"spectrogram: window_length \(the FFT's size when nfft is "
                                    r"not given\) must be at most 1048576, got 1073741824"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            _one(x, lambda d: fn.spectrogram(d, **kwargs))
    with pytest.raises(TypeError, match="spectrogram: the signal must be float32, got float64"):
        _one([np.zeros(10)], lambda d: fn.spectrogram(d, window_length=4))
    with pytest.raises(ValueError, match=r"spectrogram: sample 0 must be 1-D \(or have every "
                                         r"extent but one 1\), got \(10, 100\)"):
        _one([np.zeros((10, 100), np.float32)], lambda d: fn.spectrogram(d))
    with pytest.raises(ValueError, match="spectrogram: sample 1 is empty"):
        _one([np.zeros(5, np.float32), np.zeros(0, np.float32)],
             lambda d: fn.spectrogram(d, window_length=4))
    with pytest.raises(ValueError, match=r"spectrogram: sample 0 has 20 values, too few for one "
                                         r"window of 64 \(center_windows=False\)"):
        _one([np.zeros(20, np.float32)],
             lambda d: fn.spectrogram(d, window_length=64, window_step=32, center_windows=False))
    # An output past 2^31 - 1 elements is refused before anything is allocated.
    with pytest.raises(ValueError, match=r"spectrogram: nfft, window_length and window_step would "
                                         r"make an output of 524289x4097"):
        _one([np.zeros(4096, np.float32)],
             lambda d: fn.spectrogram(d, nfft=2**20, window_length=4, window_step=1))


@needs_fft
@pytest.mark.parametrize("kwargs", [dict(), dict(nfft=64), dict(nfft=10, power=1), dict(axis=0),
                                    dict(axis=-2), dict(nfft=31, axis=1)], ids=str)
def test_power_spectrum_is_the_fft(kwargs):
    x = [_RNG.standard_normal((3, 40)).astype(np.float32),
         _RNG.standard_normal((2, 21)).astype(np.float32)]
    out, lay = _one(x, lambda d: fn.power_spectrum(d, **kwargs), layout="ab")
    assert lay == "ab"
    for a, g in zip(x, out):
        axis = kwargs.get("axis", -1)
        axis = a.ndim - 1 if axis < 0 else axis  # DALI: every negative axis is the last
        nfft = kwargs.get("nfft", a.shape[axis])
        spec = np.abs(np.fft.rfft(a.astype(np.float64), nfft, axis=axis))
        _assert_relative(g, spec ** 2 if kwargs.get("power", 2) == 2 else spec)


@needs_fft
def test_power_spectrum_errors():
    x = [np.zeros((2, 8), np.float32)]
    with pytest.raises(ValueError, match=r"power_spectrum: power must be 1 \(magnitude\) or 2 "
                                         r"\(power\), got 0"):
        _one(x, lambda d: fn.power_spectrum(d, power=0))
    with pytest.raises(ValueError, match=r"power_spectrum: axis 2 is out of range for sample 0 "
                                         r"of shape \(2, 8\)"):
        _one(x, lambda d: fn.power_spectrum(d, axis=2))
    with pytest.raises(ValueError, match="power_spectrum: nfft must be at most 1048576, got "
                                         "1048577"):
        _one(x, lambda d: fn.power_spectrum(d, nfft=2**20 + 1))
    with pytest.raises(ValueError, match="power_spectrum: sample 0 has no values along axis 1 "
                                         "and no nfft is given"):
        _one([np.zeros((2, 0), np.float32)], lambda d: fn.power_spectrum(d))
    with pytest.raises(TypeError, match="power_spectrum: the input must be float32, got int16"):
        _one([np.zeros(4, np.int16)], lambda d: fn.power_spectrum(d))
    # An empty axis with nfft given is zero-padded: all zeros.
    (g,), _ = _one([np.zeros((2, 0), np.float32)], lambda d: fn.power_spectrum(d, nfft=6))
    np.testing.assert_array_equal(g, np.zeros((2, 4), np.float32))


# -- mel_filter_bank -----------------------------------------------------------------------------
def _mel_weights(bins, nfilter, sr, lo, hi, htk, normalize):
    if htk:
        to_mel, to_hz = (lambda f: 2595 * np.log10(1 + f / 700),
                         lambda m: 700 * (10 ** (m / 2595) - 1))
    else:
        step = np.log(6.4) / 27
        to_mel = lambda f: f / (200 / 3) if f < 1000 else 15 + np.log(f / 1000) / step  # noqa
        to_hz = lambda m: m * 200 / 3 if m < 15 else 1000 * np.exp((m - 15) * step)  # noqa
    corners = [to_hz(to_mel(lo) + (to_mel(hi) - to_mel(lo)) * k / (nfilter + 1))
               for k in range(nfilter + 2)]
    freqs = np.arange(bins) * sr / (2 * (bins - 1))
    w = np.zeros((nfilter, bins))
    for m in range(nfilter):
        f0, f1, f2 = corners[m:m + 3]
        rise = (freqs - f0) / (f1 - f0)
        fall = (f2 - freqs) / (f2 - f1)
        w[m] = np.clip(np.minimum(rise, fall), 0, None) * ((freqs >= lo) & (freqs <= hi))
        if normalize:
            w[m] *= 2 / (f2 - f0)
    return w


@pytest.mark.parametrize("kwargs", [
    dict(nfilter=40, sample_rate=16000), dict(nfilter=20, sample_rate=16000, mel_formula="htk"),
    dict(nfilter=10, sample_rate=22050, freq_low=300, freq_high=5000, normalize=False)], ids=str)
def test_mel_filter_bank_is_the_triangles(kwargs):
    spec = (_RNG.random((257, 6)) ** 2).astype(np.float32)
    w = _mel_weights(257, kwargs["nfilter"], kwargs["sample_rate"], kwargs.get("freq_low", 0),
                     kwargs.get("freq_high", kwargs["sample_rate"] / 2),
                     kwargs.get("mel_formula") == "htk", kwargs.get("normalize", True))
    want = w @ spec.astype(np.float64)
    (ft,), lay = _one([spec], lambda d: fn.mel_filter_bank(d, **kwargs), layout="ft")
    assert lay == "ft" and ft.shape == (kwargs["nfilter"], 6) and ft.dtype == np.float32
    np.testing.assert_allclose(ft, want, rtol=1e-4, atol=1e-6 * want.max())
    (tf,), lay = _one([spec.T.copy()], lambda d: fn.mel_filter_bank(d, **kwargs), layout="tf")
    assert lay == "tf"
    np.testing.assert_allclose(tf.T, want, rtol=1e-4, atol=1e-6 * want.max())
    (f,), lay = _one([spec[:, 0].copy()], lambda d: fn.mel_filter_bank(d, **kwargs), layout="f")
    np.testing.assert_allclose(f, want[:, 0], rtol=1e-4, atol=1e-6 * want.max())


def test_mel_filter_bank_layouts_and_errors():
    spec = [_RNG.random((2, 33, 4)).astype(np.float32)]
    (g,), _ = _one(spec, lambda d: fn.mel_filter_bank(d, nfilter=5, sample_rate=8000))
    assert g.shape == (2, 5, 4)  # no layout: "...ft"
    (g,), lay = _one(spec, lambda d: fn.mel_filter_bank(d, nfilter=5, sample_rate=8000),
                     layout="fct")
    assert g.shape == (5, 33, 4) and lay == "fct"
    (g,), _ = _one([np.ones((1, 3), np.float32)], lambda d: fn.mel_filter_bank(d, nfilter=2),
                   layout="ft")
    np.testing.assert_array_equal(g, np.zeros((2, 3), np.float32))  # one bin: nothing to filter
    x = [np.zeros((9, 2), np.float32)]
    cases = [(dict(nfilter=0), "mel_filter_bank: nfilter must be positive, got 0"),
             (dict(sample_rate=0), "mel_filter_bank: sample_rate must be positive, got 0"),
             (dict(freq_low=-1), "mel_filter_bank: freq_low must not be negative, got -1"),
             (dict(sample_rate=16000, freq_high=16001),
              r"mel_filter_bank: freq_high must be in \(freq_low, sample_rate\], got 16001 "
              r"\(freq_low 0, sample_rate 16000\)"),
             (dict(freq_low=5000, freq_high=4000), r"freq_high must be in \(freq_low, "
                                                   r"sample_rate\], got 4000"),
             (dict(mel_formula="bark"), "mel_filter_bank: mel_formula must be 'slaney' or 'htk', "
                                        "got 'bark'")]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            _one(x, lambda d: fn.mel_filter_bank(d, **kwargs))
    with pytest.raises(ValueError, match="mel_filter_bank: the layout 'ab' has no 'f' "
                                         r"\(frequency\) axis"):
        _one(x, lambda d: fn.mel_filter_bank(d), layout="ab")
    with pytest.raises(TypeError, match="mel_filter_bank: the spectrogram must be float32, got "
                                        "float64"):
        _one([np.zeros((9, 2))], lambda d: fn.mel_filter_bank(d))
    with pytest.raises(ValueError, match=r"mel_filter_bank: nfilter would make an output of "
                                         r"3000000000x2"):
        _one(x, lambda d: fn.mel_filter_bank(d, nfilter=3 * 10**9))


# -- to_decibels ---------------------------------------------------------------------------------
def test_to_decibels_is_the_formula():
    x = [(_RNG.random(50) ** 6).astype(np.float32), np.zeros(3, np.float32)]
    (a, b), _ = _run(x, lambda d: (fn.to_decibels(d),
                                   fn.to_decibels(d, multiplier=20, reference=0.5, cutoff_db=-40)))
    want = 10 * np.log10(np.maximum(1e-20, x[0] / x[0].max()))
    np.testing.assert_allclose(a[0], want, atol=2e-4)
    np.testing.assert_allclose(a[1], [-200] * 3, atol=2e-4)  # silence: the cut-off
    want = 20 * np.log10(np.maximum(1e-2, x[0] / 0.5))
    np.testing.assert_allclose(b[0], want, atol=2e-4)
    with pytest.raises(ValueError, match=r"to_decibels: reference must not be 0 \(leave it unset "
                                         r"for each sample's maximum\)"):
        _one(x, lambda d: fn.to_decibels(d, reference=0.0))
    with pytest.raises(TypeError, match="to_decibels: the input must be float32, got float64"):
        _one([np.ones(2)], lambda d: fn.to_decibels(d))


# -- mfcc ----------------------------------------------------------------------------------------
def _dct(x, n_out, kind, normalize, axis):
    x = np.moveaxis(x.astype(np.float64), axis, 0)
    n = x.shape[0]
    j = np.arange(n)[None, :]
    k = np.arange(min(n_out, n))[:, None]
    if kind == 1:
        t = np.cos(np.pi * k * j / (n - 1))
        t[:, 0] = 0.5
        t[:, -1] = 0.5 * (-1.0) ** k[:, 0]
    elif kind == 2:
        t = np.cos(np.pi / n * (j + 0.5) * k)
        if normalize:
            t *= np.where(k == 0, 1 / np.sqrt(n), np.sqrt(2 / n))
    elif kind == 3:
        t = np.cos(np.pi / n * j * (k + 0.5))
        t[:, 0] = 1 / np.sqrt(n) if normalize else 0.5
        if normalize:
            t[:, 1:] *= np.sqrt(2 / n)
    else:
        t = np.cos(np.pi / n * (j + 0.5) * (k + 0.5)) * (np.sqrt(2 / n) if normalize else 1)
    return np.moveaxis(np.tensordot(t, x, axes=(1, 0)), 0, axis)


@pytest.mark.parametrize("kwargs", [dict(), dict(dct_type=1, n_mfcc=6), dict(dct_type=3),
                                    dict(dct_type=4, normalize=True), dict(normalize=True),
                                    dict(axis=1, n_mfcc=3), dict(n_mfcc=500)], ids=str)
def test_mfcc_is_the_dct(kwargs):
    x = [_RNG.standard_normal((24, 5)).astype(np.float32),
         _RNG.standard_normal((9, 2)).astype(np.float32)]
    out, lay = _one(x, lambda d: fn.mfcc(d, **kwargs), layout="ft")
    assert lay == "ft"
    for a, g in zip(x, out):
        want = _dct(a, kwargs.get("n_mfcc", 20), kwargs.get("dct_type", 2),
                    kwargs.get("normalize", False), kwargs.get("axis", 0))
        assert g.shape == want.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, want, atol=2e-5 * np.abs(want).max())


def test_mfcc_lifter_and_errors():
    x = [_RNG.standard_normal((12, 3)).astype(np.float32)]
    (g,), _ = _one(x, lambda d: fn.mfcc(d, n_mfcc=8, lifter=22.0))
    lift = 1 + 11 * np.sin(np.pi * np.arange(1, 9) / 22)
    np.testing.assert_allclose(g, _dct(x[0], 8, 2, False, 0) * lift[:, None], rtol=1e-4,
                               atol=1e-5)
    cases = [(dict(n_mfcc=0), "mfcc: n_mfcc must be positive, got 0"),
             (dict(dct_type=5), "mfcc: dct_type must be 1, 2, 3 or 4, got 5"),
             (dict(dct_type=1, normalize=True), "mfcc: normalize is not supported for dct_type 1"),
             (dict(axis=-1), "mfcc: axis must not be negative, got -1"),
             (dict(axis=2), r"mfcc: axis 2 is out of range for sample 0 of shape \(12, 3\)")]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            _one(x, lambda d: fn.mfcc(d, **kwargs))
    with pytest.raises(ValueError,
                       match=r"mfcc: sample 0 must have 2 to 4 dimensions, got \(12,\)"):
        _one([np.zeros(12, np.float32)], lambda d: fn.mfcc(d))
    with pytest.raises(ValueError, match="mfcc: dct_type 1 needs more than one value along axis "
                                         "0, sample 0 has 1"):
        _one([np.zeros((1, 3), np.float32)], lambda d: fn.mfcc(d, dct_type=1))
    # The DCT's table (coefficients x the axis' length) is refused before it is allocated.
    with pytest.raises(ValueError, match=r"mfcc: n_mfcc \(the DCT table: coefficients x the "
                                         r"axis' length\) would make an output of 70000x70000"):
        _one([np.zeros((70000, 1), np.float32)], lambda d: fn.mfcc(d, n_mfcc=10**9))
    with pytest.raises(TypeError, match="mfcc: the mel spectrogram must be float32, got float64"):
        _one([np.zeros((2, 2))], lambda d: fn.mfcc(d))


# -- nonsilent_region ----------------------------------------------------------------------------
def _nonsilent(x, cutoff_db=-60.0, window=2048, reference=None):
    window = min(window, len(x))
    sq = x.astype(np.float64) ** 2
    c = np.concatenate([[0], np.cumsum(sq)])
    idx = np.arange(len(x))
    power = (c[idx + 1] - c[np.maximum(idx + 1 - window, 0)]) / window
    ref = power.max() if reference is None else reference
    loud = np.nonzero(power >= ref * 10 ** (cutoff_db / 10))[0]
    if len(loud) == 0:
        return 0, 0
    begin, end = loud[0], loud[-1]
    if begin:
        begin = max(begin - window + 1, 0)
    return begin, end - begin + 1


def test_nonsilent_region_is_the_thresholded_mean_square():
    # Its own draws: with others a window's power can sit within rounding of the threshold,
    # where the float32 running sum and this float64 reference may fall on either side.
    rng = np.random.default_rng(29)

    def tone(n, lo, hi):
        x = (rng.standard_normal(n) * 1e-3).astype(np.float32)
        x[lo:hi] += np.sin(np.arange(hi - lo) * 0.2).astype(np.float32)
        return x
    x = [tone(8000, 2000, 5000), tone(3000, 0, 1000), np.zeros(50, np.float32),
         tone(100, 40, 60), np.zeros(0, np.float32)]
    for kwargs in (dict(window_length=256), dict(window_length=64, cutoff_db=-20),
                   dict(window_length=128, reference_power=0.1)):
        (begin, length), lays = _run(x, lambda d: fn.nonsilent_region(d, **kwargs))
        assert lays == ["", ""]
        for k, a in enumerate(x):
            assert begin[k].dtype == np.int32 and begin[k].shape == ()
            want = _nonsilent(a, kwargs.get("cutoff_db", -60.0), kwargs["window_length"],
                              kwargs.get("reference_power")) if len(a) else (0, 0)
            assert (int(begin[k]), int(length[k])) == want, (kwargs, k)


def test_nonsilent_region_of_integers_and_errors():
    x = np.zeros(1000, np.int16)
    x[300:400] = 1000
    (b, n), _ = _run([x], lambda d: fn.nonsilent_region(d, window_length=10))
    assert (int(b[0]), int(n[0])) == _nonsilent(x, window=10) == (291, 118)
    cases = [(dict(window_length=0), "nonsilent_region: window_length must be positive, got 0"),
             (dict(reset_interval=0), r"nonsilent_region: reset_interval must be -1 \(never\) or "
                                      r"positive, got 0"),
             (dict(reference_power=-1.0), r"nonsilent_region: reference_power must be positive "
                                          r"\(leave it unset for the signal's maximum power\), "
                                          r"got -1"),
             (dict(window_length=30, reset_interval=100),
              r"nonsilent_region: reset_interval \(100\) must be a multiple of window_length "
              r"\(30\)")]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            _run([np.zeros(50, np.float32)], lambda d: fn.nonsilent_region(d, **kwargs))
    # Integer signals are never reset: no multiple needed (as DALI).
    _run([np.zeros(50, np.int16)], lambda d: fn.nonsilent_region(d, window_length=30,
                                                                 reset_interval=100))
    with pytest.raises(ValueError, match=r"nonsilent_region: sample 0 must be 1-D, got \(3, 4\)"):
        _run([np.zeros((3, 4), np.float32)], lambda d: fn.nonsilent_region(d))
    with pytest.raises(TypeError, match="nonsilent_region input: unsupported dtype float64"):
        _run([np.zeros(4)], lambda d: fn.nonsilent_region(d))
