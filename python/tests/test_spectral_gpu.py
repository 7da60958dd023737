"""The gpu backends of preemphasis_filter, mel_filter_bank, to_decibels and mfcc against their
cpu backends, for every argument combination test_spectral.py covers: bit for bit, but
to_decibels within 2 ulp (its logarithm is taken in double on the GPU, by log2f on the CPU).
Ragged batches with empty samples; per-sample coefficients; the same errors."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

pytestmark = pytest.mark.skipif(not _stoker.cuda_available(),
                                reason="no CUDA device: GPU test skipped")

_RNG = np.random.default_rng(23)


def _run(samples, build, device, layout=None, extra=None):
    """build(data, device) on `samples` fed to `device`: [output] -> list of numpy samples, and
    the outputs' layouts. `extra`: more per-sample CPU inputs handed to build."""
    pipe = stoker.Pipeline(batch_size=len(samples), num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: [s.copy() for s in samples], layout=layout, device=device)
        args = [fn.external_source((lambda e: lambda: e)(e)) for e in (extra or [])]
        out = build(x, *args)
        out = out if isinstance(out, (list, tuple)) else [out]
        pipe.set_outputs(*out)
    outs = pipe.run()
    host = [b.as_cpu() if device == "gpu" else b for b in outs]
    return [[np.array(b.at(i)) for i in range(len(b))] for b in host], [b.layout() for b in outs]


def _same_bits(gpu, cpu, what):
    assert len(gpu) == len(cpu), what
    for i, (g, c) in enumerate(zip(gpu, cpu)):
        assert g.shape == c.shape and g.dtype == c.dtype, (what, i, g.shape, c.shape, g.dtype)
        if g.dtype.kind == "f":
            nan = np.isnan(c)
            np.testing.assert_array_equal(np.isnan(g), nan, err_msg=f"{what} sample {i}: NaNs")
            g, c = g[~nan], c[~nan]
            bits = np.dtype(f"u{g.dtype.itemsize}")
            g, c = g.view(bits), c.view(bits)
        np.testing.assert_array_equal(g, c, err_msg=f"{what} sample {i}")


def _ulps(a, b):
    """Distance in float32 steps, element by element (finite or infinite values)."""
    def key(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-2**31) - i, i)
    return np.abs(key(a) - key(b))


def _both(samples, build, layout=None, extra=None):
    cpu, cpu_lay = _run(samples, build, "cpu", layout, extra)
    gpu, gpu_lay = _run(samples, build, "gpu", layout, extra)
    assert gpu_lay == cpu_lay
    return cpu, gpu


# -- preemphasis_filter -------------------------------------------------------------------------
_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
          np.float32, np.float64]
_OUT_TYPES = [types.UINT8, types.INT8, types.UINT16, types.INT16, types.UINT32, types.INT32,
              types.UINT64, types.INT64, types.FLOAT, types.FLOAT64]


def _signal(dtype, n):
    if np.dtype(dtype).kind == "f":
        x = _RNG.standard_normal(n) * 3000
        x[::7] = np.round(x[::7]) + 0.5  # halves: the rounding of integer outputs
        if n > 10:
            x[3], x[8] = np.inf, np.nan
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return _RNG.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("border", ["clamp", "reflect", "zero"])
@pytest.mark.parametrize("in_type", _TYPES, ids=lambda t: t.__name__)
def test_preemphasis_every_type_and_border_equals_the_cpu(in_type, border):
    data = [_signal(in_type, n) for n in (1000, 2, 1, 0, 37)]
    coeffs = [np.float32(c) for c in (0.97, -0.5, 0.0, 0.3, 2.0)]

    def build(d, c):
        return tuple(fn.preemphasis_filter(d, border=border, preemph_coeff=c, dtype=t)
                     for t in _OUT_TYPES)
    cpu, gpu = _both(data, build, extra=[coeffs])
    for k, t in enumerate(_OUT_TYPES):
        _same_bits(gpu[k], cpu[k], f"{in_type.__name__} -> {t} ({border})")


def test_preemphasis_defaults_layouts_and_empty_batches_equal_the_cpu():
    x = [_RNG.standard_normal(n).astype(np.float32) for n in (30, 2, 1, 100000)]
    cpu, gpu = _both(x, lambda d: (fn.preemphasis_filter(d),
                                   fn.preemphasis_filter(d, preemph_coeff=0.5, border="zero")))
    for k in range(2):
        _same_bits(gpu[k], cpu[k], f"output {k}")
    x = [np.arange(12, dtype=np.int32).reshape(3, 4)] * 2
    cpu, gpu = _both(x, lambda d: fn.preemphasis_filter(d, dtype=types.INT32), layout="ab")
    _same_bits(gpu[0], cpu[0], "2-D")
    (g,), (lay,) = _run([np.zeros(0, np.float32)] * 3, lambda d: fn.preemphasis_filter(d), "gpu")
    assert [s.shape for s in g] == [(0,)] * 3


def test_preemphasis_errors_on_the_gpu():
    x = [np.zeros(3, np.float32)]
    with pytest.raises(ValueError,
                       match="preemphasis_filter: border must be 'zero', 'clamp' or 'reflect', "
                             "got 'wrap'"):
        _run(x, lambda d: fn.preemphasis_filter(d, border="wrap"), "gpu")
    with pytest.raises(TypeError, match="preemphasis_filter output: unsupported dtype float16"):
        _run(x, lambda d: fn.preemphasis_filter(d, dtype=types.FLOAT16), "gpu")
    with pytest.raises(TypeError, match="preemphasis_filter input: unsupported dtype bool"):
        _run([np.zeros(3, bool)], lambda d: fn.preemphasis_filter(d), "gpu")


# -- mel_filter_bank -----------------------------------------------------------------------------
_MEL_ARGS = [
    dict(nfilter=40, sample_rate=16000), dict(nfilter=20, sample_rate=16000, mel_formula="htk"),
    dict(nfilter=10, sample_rate=22050, freq_low=300, freq_high=5000, normalize=False),
    dict(nfilter=64, sample_rate=16000, freq_high=8000, mel_formula="htk", normalize=False),
    dict(nfilter=20, sample_rate=16000, freq_high=16000),  # above the Nyquist frequency
    dict()]


def _spectra(bins, windows):
    return [(_RNG.random((bins, w)) ** 3).astype(np.float32) for w in windows]


@pytest.mark.parametrize("kwargs", _MEL_ARGS, ids=str)
@pytest.mark.parametrize("layout", ["ft", "tf", "", "f"])
def test_mel_filter_bank_equals_the_cpu(kwargs, layout):
    # Two spectrum sizes in one batch (two banks) and a spectrum without windows.
    data = _spectra(257, (31, 1, 0, 400)) + _spectra(129, (7,))
    if layout == "tf":
        data = [d.T.copy() for d in data]
    elif layout == "f":
        data = [d[:, 0].copy() for d in data if d.shape[1]]
    cpu, gpu = _both(data, lambda d: fn.mel_filter_bank(d, **kwargs), layout=layout or None)
    _same_bits(gpu[0], cpu[0], f"mel_filter_bank {layout}")


@pytest.mark.parametrize("layout,shape", [("cft", (2, 65, 9)), ("tfc", (9, 65, 2)),
                                          ("", (2, 65, 9)), ("fct", (33, 2, 4)),
                                          ("ft", (1, 3))])
def test_mel_filter_bank_of_other_shapes_equals_the_cpu(layout, shape):
    data = [_RNG.random(shape).astype(np.float32) for _ in range(3)]
    cpu, gpu = _both(data, lambda d: fn.mel_filter_bank(d, nfilter=16, sample_rate=16000),
                     layout=layout or None)
    _same_bits(gpu[0], cpu[0], f"mel_filter_bank {layout} {shape}")


def test_mel_filter_bank_errors_on_the_gpu():
    x = [np.zeros((9, 2), np.float32)]
    with pytest.raises(ValueError, match="mel_filter_bank: nfilter must be positive, got 0"):
        _run(x, lambda d: fn.mel_filter_bank(d, nfilter=0), "gpu")
    with pytest.raises(ValueError, match="mel_filter_bank: the layout 'ab' has no 'f' "
                                         r"\(frequency\) axis"):
        _run(x, lambda d: fn.mel_filter_bank(d), "gpu", layout="ab")
    with pytest.raises(TypeError, match="mel_filter_bank: the spectrogram must be float32, got "
                                        "float64"):
        _run([np.zeros((9, 2))], lambda d: fn.mel_filter_bank(d), "gpu")
    with pytest.raises(ValueError, match=r"mel_filter_bank: nfilter would make an output of "
                                         r"3000000000x2"):
        _run(x, lambda d: fn.mel_filter_bank(d, nfilter=3 * 10**9), "gpu")


# -- to_decibels ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(), dict(multiplier=20.0), dict(reference=0.5),
                                    dict(reference=1.0), dict(cutoff_db=-80),
                                    dict(cutoff_db=-20, multiplier=20, reference=2.0),
                                    dict(cutoff_db=-1000)], ids=str)
def test_to_decibels_is_within_two_ulp_of_the_cpu(kwargs):
    data = [(_RNG.random(n) ** 6 * 7).astype(np.float32) for n in (5000, 1, 0, 250000)]
    data += [np.zeros(5, np.float32), np.array([np.nan, 1, 2, -3, 1e-40], np.float32),
             np.array([np.inf, 4, 0], np.float32), _RNG.random((7, 9)).astype(np.float32)]
    cpu, gpu = _both(data, lambda d: fn.to_decibels(d, **kwargs))
    values = differ = 0
    for i, (g, c) in enumerate(zip(gpu[0], cpu[0])):
        assert g.shape == c.shape and g.dtype == c.dtype == np.float32
        nan = np.isnan(c)
        np.testing.assert_array_equal(np.isnan(g), nan, err_msg=f"sample {i}: NaNs")
        d = _ulps(g[~nan], c[~nan])
        assert d.size == 0 or d.max() <= 2, f"sample {i}: {d.max()} ulp"
        values, differ = values + d.size, differ + int(np.count_nonzero(d))
    # Only where the C library's log2f misrounds: rarely.
    assert differ <= values // 100, f"{differ} of {values} values differ"


def test_to_decibels_errors_on_the_gpu():
    with pytest.raises(ValueError, match=r"to_decibels: reference must not be 0 \(leave it unset "
                                         r"for each sample's maximum\)"):
        _run([np.ones(2, np.float32)], lambda d: fn.to_decibels(d, reference=0.0), "gpu")
    with pytest.raises(TypeError, match="to_decibels: the input must be float32, got float64"):
        _run([np.ones(2)], lambda d: fn.to_decibels(d), "gpu")


# -- mfcc ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [
    dict(), dict(n_mfcc=5), dict(dct_type=1), dict(dct_type=1, n_mfcc=6), dict(dct_type=3),
    dict(dct_type=3, n_mfcc=4), dict(dct_type=4), dict(normalize=True),
    dict(normalize=True, dct_type=3), dict(dct_type=4, normalize=True), dict(lifter=22.0),
    dict(n_mfcc=8, lifter=22.0), dict(axis=1, n_mfcc=3), dict(lifter=3.0, n_mfcc=8, dct_type=4),
    dict(n_mfcc=100), dict(n_mfcc=500)], ids=str)
def test_mfcc_equals_the_cpu(kwargs):
    data = [_RNG.standard_normal((40, 7)).astype(np.float32),
            _RNG.standard_normal((12, 3)).astype(np.float32),
            _RNG.standard_normal((24, 0)).astype(np.float32),
            _RNG.standard_normal((128, 300)).astype(np.float32),
            _RNG.standard_normal((9, 2)).astype(np.float32)]
    cpu, gpu = _both(data, lambda d: fn.mfcc(d, **kwargs), layout="ft")
    _same_bits(gpu[0], cpu[0], f"mfcc {kwargs}")


@pytest.mark.parametrize("shape,axis", [((2, 20, 5), 1), ((20, 2, 5), 0), ((3, 4, 20), 2),
                                        ((2, 3, 16, 4), 2)])
def test_mfcc_of_3d_and_4d_samples_equals_the_cpu(shape, axis):
    data = [_RNG.standard_normal(shape).astype(np.float32) for _ in range(2)]
    cpu, gpu = _both(data, lambda d: fn.mfcc(d, axis=axis, n_mfcc=6, lifter=5.0))
    _same_bits(gpu[0], cpu[0], f"mfcc {shape} axis {axis}")


def test_mfcc_errors_on_the_gpu():
    x = [_RNG.standard_normal((12, 3)).astype(np.float32)]
    with pytest.raises(ValueError, match=r"mfcc: axis 2 is out of range for sample 0 of shape "
                                         r"\(12, 3\)"):
        _run(x, lambda d: fn.mfcc(d, axis=2), "gpu")
    with pytest.raises(ValueError,
                       match=r"mfcc: sample 0 must have 2 to 4 dimensions, got \(12,\)"):
        _run([np.zeros(12, np.float32)], lambda d: fn.mfcc(d), "gpu")
    with pytest.raises(ValueError, match="mfcc: dct_type 1 needs more than one value along axis "
                                         "0, sample 0 has 1"):
        _run([np.zeros((1, 3), np.float32)], lambda d: fn.mfcc(d, dct_type=1), "gpu")
    with pytest.raises(TypeError, match="mfcc: the mel spectrogram must be float32, got float64"):
        _run([np.zeros((2, 2))], lambda d: fn.mfcc(d), "gpu")


def test_a_gpu_chain_equals_the_cpu_chain():
    """mel_filter_bank -> to_decibels -> mfcc on the GPU, from a spectrogram made here."""
    spec = [(_RNG.random((201, w)) ** 2).astype(np.float32) for w in (50, 3, 120)]

    def build(d):
        mel = fn.mel_filter_bank(d, nfilter=40, sample_rate=16000)
        return mel, fn.mfcc(fn.to_decibels(mel), n_mfcc=13, lifter=22.0)
    cpu, gpu = _both(spec, build, layout="ft")
    _same_bits(gpu[0], cpu[0], "mel")
    # The decibels may differ in their last bit, which the DCT carries on.
    for g, c in zip(gpu[1], cpu[1]):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-4)
